"""Module hooks (PyTorch's "Modules" note, "Module Hooks", and the torch.nn.Module docs).

Forward pre-hooks change a module's input, forward hooks its output, full backward hooks the
gradient flowing to its inputs; global hooks see every module; handles remove hooks.
"""
import hookgrad as torch
from hookgrad import nn

torch.manual_seed(1)


def forward_pre_hook(m, inputs):
    # Allows for examination and modification of the input before the forward pass.
    # Note that inputs are always wrapped in a tuple.
    input = inputs[0]
    return input + 1.


def forward_hook(m, inputs, output):
    # Allows for examination of inputs / outputs and modification of the outputs
    # after the forward pass. Note that inputs are always wrapped in a tuple while outputs
    # are passed as-is.

    # Residual computation a la ResNet.
    return output + inputs[0]


def backward_hook(m, grad_inputs, grad_outputs):
    # Allows for examination of grad_inputs / grad_outputs and modification of
    # grad_inputs used in the rest of the backwards pass. Note that grad_inputs and
    # grad_outputs are always wrapped in tuples.
    new_grad_inputs = [torch.ones_like(gi) * 42. for gi in grad_inputs]
    return new_grad_inputs


# Create sample module & input.
m = nn.Linear(3, 3)
x = torch.randn(2, 3, requires_grad=True)

# ==== Demonstrate forward hooks. ====
# Run input through module before and after adding hooks.
print('output with no forward hooks: {}'.format(m(x)))

# Note that the modified input results in a different output.
forward_pre_hook_handle = m.register_forward_pre_hook(forward_pre_hook)
print('output with forward pre hook: {}'.format(m(x)))

# Note the modified output.
forward_hook_handle = m.register_forward_hook(forward_hook)
print('output with both forward hooks: {}'.format(m(x)))

# Remove hooks; note that the output here matches the output before adding hooks.
forward_pre_hook_handle.remove()
forward_hook_handle.remove()
print('output after removing forward hooks: {}'.format(m(x)))

# ==== Demonstrate backward hooks. ====
m(x).sum().backward()
print('x.grad with no backwards hook: {}'.format(x.grad))

# Clear gradients before running backward pass again.
m.zero_grad()
x.grad.zero_()

m.register_full_backward_hook(backward_hook)
m(x).sum().backward()
print('x.grad with backwards hook: {}'.format(x.grad))


# ==== Hooks that only look: recording activations and gradients. ====
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.act = nn.Tanh()
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


net = Net()
events = []
activations = {}
handles = []


def save_activation(name):
    def hook(module, inputs, output):
        events.append(f"forward {name}")
        activations[name] = output.detach()
    return hook


def log_backward_pre(name):
    def hook(module, grad_output):
        events.append(f"backward pre {name}: {tuple(grad_output[0].shape)}")
    return hook


def log_backward(name):
    def hook(module, grad_input, grad_output):
        shapes = [None if g is None else tuple(g.shape) for g in grad_input]
        events.append(f"backward {name}: grad_input {shapes}")
    return hook


for name, module in net.named_children():
    handles.append(module.register_forward_hook(save_activation(name)))
    handles.append(module.register_full_backward_pre_hook(log_backward_pre(name)))
    handles.append(module.register_full_backward_hook(log_backward(name)))

inp = torch.randn(5, 4, requires_grad=True)
out = net(inp)
out.pow(2).mean().backward()
print("\n".join(events))
print({name: tuple(value.shape) for name, value in activations.items()})
print(activations["act"].abs().max() <= 1)
print(out.grad_fn)
for handle in handles:
    handle.remove()


# ==== Forward hooks with keyword arguments ====
def pre_hook_with_kwargs(module, args, kwargs):
    print("pre hook sees", [tuple(a.shape) for a in args], sorted(kwargs))
    return args, kwargs


def hook_with_kwargs(module, args, kwargs, output):
    print("forward hook sees", sorted(kwargs), output.grad_fn.name())
    return output * 2


class Scale(nn.Module):
    def forward(self, x, scale=1.0):
        return x * scale


scale = Scale()
scale.register_forward_pre_hook(pre_hook_with_kwargs, with_kwargs=True)
scale.register_forward_hook(hook_with_kwargs, with_kwargs=True)
print(scale(torch.ones(2, requires_grad=True), scale=3.0))

# ==== Global module hooks: they see every module's call ====
calls = []


def global_forward_hook(module, inputs, output):
    calls.append(type(module).__name__)


global_handle = nn.modules.module.register_module_forward_hook(global_forward_hook)
net(torch.randn(1, 4))
global_handle.remove()
net(torch.randn(1, 4))
print(calls)

# A global pre-hook runs before the module's own pre-hooks.
order = []
own = net.fc1.register_forward_pre_hook(lambda module, args: order.append("own pre-hook"))
global_pre = nn.modules.module.register_module_forward_pre_hook(
    lambda module, args: order.append(f"global pre-hook {type(module).__name__}"))
net.fc1(torch.randn(1, 4))
global_pre.remove()
own.remove()
print(order)

# The state of the module's hook dictionaries after removal
print(len(net.fc1._forward_hooks), len(net.fc1._forward_pre_hooks), len(m._backward_hooks))
