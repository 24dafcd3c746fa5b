"""Modules (PyTorch's "Modules" note).

A custom module, modules as building blocks (Sequential, children, named_modules, ModuleList,
ModuleDict), initialization, a short training loop, training/evaluation modes and module state
(buffers, state_dict).
"""
import hookgrad as torch
import hookgrad.nn.functional as F
from hookgrad import nn


# A Simple Custom Module
class MyLinear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_features, out_features))
        self.bias = nn.Parameter(torch.randn(out_features))

    def forward(self, input):
        return (input @ self.weight) + self.bias


m = MyLinear(4, 3)
sample_input = torch.randn(4)
print(m(sample_input))

for parameter in m.named_parameters():
    print(parameter)

# Modules as Building Blocks
net = nn.Sequential(
    MyLinear(4, 3),
    nn.ReLU(),
    MyLinear(3, 1)
)

sample_input = torch.randn(4)
print(net(sample_input))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.l0 = MyLinear(4, 3)
        self.l1 = MyLinear(3, 1)

    def forward(self, x):
        x = self.l0(x)
        x = F.relu(x)
        x = self.l1(x)
        return x


net = Net()
for child in net.named_children():
    print(child)


class BigNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = MyLinear(5, 4)
        self.net = Net()

    def forward(self, x):
        return self.net(self.l1(x))


big_net = BigNet()
for module in big_net.named_modules():
    print(module)


class DynamicNet(nn.Module):
    def __init__(self, num_layers):
        super().__init__()
        self.linears = nn.ModuleList(
            [MyLinear(4, 4) for _ in range(num_layers)])
        self.activations = nn.ModuleDict({
            'relu': nn.ReLU(),
            'lrelu': nn.LeakyReLU()
        })
        self.final = MyLinear(4, 1)

    def forward(self, x, act):
        for linear in self.linears:
            x = linear(x)
            x = self.activations[act](x)
        x = self.final(x)
        return x


dynamic_net = DynamicNet(3)
sample_input = torch.randn(4)
output = dynamic_net(sample_input, 'relu')
print(output)
print(dynamic_net(sample_input, 'lrelu'))

for parameter in dynamic_net.named_parameters():
    print(parameter[0], parameter[1].shape)

# Change precision of all parameters
dynamic_net = dynamic_net.to(dtype=torch.float64)
print(dynamic_net(torch.randn(4, dtype=torch.float64), 'relu'))

# Initialize weights with small random values
torch.nn.init.normal_(m.weight, mean=0.0, std=0.1)
torch.nn.init.constant_(m.bias, 0)
print(m.weight, m.bias)

# Neural Network Training with Modules
# Create the network (from previous section) and optimizer
net = Net()
optimizer = torch.optim.SGD(net.parameters(), lr=1e-4, weight_decay=1e-2, momentum=0.9)

# Run a sample training loop that "teaches" the network
# to output the constant zero function
for _ in range(1000):
    input = torch.randn(4)
    output = net(input)
    loss = torch.abs(output)
    net.zero_grad()
    loss.backward()
    optimizer.step()

# After training, switch the module to eval mode to do inference, compute performance metrics, etc.
# (see discussion below for a description of training and evaluation modes)
net.eval()
print(net.l1.weight)


# Module Training / Evaluation Mode
class ModalModule(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        if self.training:
            # Add a constant only in training mode.
            return x + 1.
        else:
            return x


m = ModalModule()
x = torch.randn(4)

print('training mode output: {}'.format(m(x)))

m.eval()
print('evaluation mode output: {}'.format(m(x)))


# Module State
class RunningMean(nn.Module):
    def __init__(self, num_features, momentum=0.9):
        super().__init__()
        self.momentum = momentum
        self.register_buffer('mean', torch.zeros(num_features))

    def forward(self, x):
        self.mean = self.momentum * self.mean + (1.0 - self.momentum) * x
        return self.mean


m = RunningMean(4)
for _ in range(10):
    input = torch.randn(4)
    m(input)

print(m)
print(m.mean)
print(m.state_dict())

m_loaded = RunningMean(4)
m_loaded.load_state_dict(m.state_dict())
print(m_loaded.mean)


class StatefulModule(nn.Module):
    def __init__(self):
        super().__init__()
        # Setting a nn.Parameter as an attribute of the module automatically registers the tensor
        # as a parameter of the module.
        self.param1 = nn.Parameter(torch.randn(2))

        # Alternative string-based way to register a parameter.
        self.register_parameter('param2', nn.Parameter(torch.randn(3)))

        # Reserves the "param3" attribute as a parameter, preventing it from being set to anything
        # except a parameter. "None" entries like this will not be present in the module's
        # state_dict.
        self.register_parameter('param3', None)

        # Registers a persistent buffer (one that appears in the module's state_dict).
        self.register_buffer('buffer1', torch.randn(4), persistent=True)

        # Registers a non-persistent buffer (one that does not appear in the module's state_dict).
        self.register_buffer('buffer2', torch.randn(5), persistent=False)

        # Reserves the "buffer3" attribute as a buffer, preventing it from being set to anything
        # except a buffer. "None" entries like this will not be present in the module's
        # state_dict.
        self.register_buffer('buffer3', None)

        # Adding a submodule registers its parameters as parameters of the module.
        self.linear = nn.Linear(2, 3)


m = StatefulModule()
m_loaded = StatefulModule()
m_loaded.load_state_dict(m.state_dict())

# Note that non-persistent buffer "buffer2" and reserved attributes "param3" and "buffer3" do
# not appear in the state_dict.
print(m_loaded.state_dict())
print([name for name, _ in m.named_buffers()], m.param3, m.buffer3)
