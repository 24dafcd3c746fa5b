"""The hooks of the post "saving memory and exporting intermediate variables with hooks", run with
only the import changed: a tensor hook that edits a gradient, a forward hook exporting a layer's
input and output, a forward pre-hook editing the input, and a (legacy) backward hook that reads
grad_output and rescales grad_input."""
import numpy as np

import hookgrad as torch
import hookgrad.nn as nn

# 1. Tensor.register_hook: export or modify a gradient
def grad_hook(grad):
    grad *= 2

x = torch.tensor([2., 2., 2., 2.], requires_grad=True)
y = torch.pow(x, 2)
z = torch.mean(y)
h = x.register_hook(grad_hook)
z.backward()
print(x.grad)
h.remove()    # removes the hook


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = nn.Linear(4, 3)
        self.layer2 = nn.Linear(3, 2)

    def forward(self, x):
        return self.layer2(torch.relu(self.layer1(x)))


torch.manual_seed(0)
net = Net()
with torch.no_grad():  # fixed weights, so both libraries print the same numbers
    for i, p in enumerate(net.parameters()):
        p.copy_(torch.tensor(np.linspace(-1, 1, p.numel()).reshape(tuple(p.shape)) * (i + 1),
                             dtype=torch.float32))
input = torch.tensor(np.arange(8, dtype=np.float32).reshape(2, 4) / 8, requires_grad=True)

# 2. register_forward_hook: export a layer's input and output
inps, outs = [], []
def layer_hook(module, inp, out):
    inps.append(inp[0].data.cpu().numpy())
    outs.append(out.data.cpu().numpy())
hook = net.layer1.register_forward_hook(layer_hook)
output = net(input)
hook.remove()
print(inps[0].shape, outs[0].shape)
print(np.round(outs[0], 4))

# 3. register_forward_pre_hook: modify a layer's input
def pre_hook(module, inp):
    inp0 = inp[0]
    inp0 = inp0 * 2
    inp = tuple([inp0])
    return inp
hook = net.layer1.register_forward_pre_hook(pre_hook)
output = net(input)
hook.remove()
print(output)

# 4. register_backward_hook: export grad_output, rescale grad_input
gouts = []
def backward_hook(module, gin, gout):
    print(len(gin), len(gout))
    gouts.append(gout[0].data.cpu().numpy())
    gin0, gin1, gin2 = gin
    gin1 = gin1 * 2
    gin2 = gin2 * 3
    gin = tuple([gin0, gin1, gin2])
    return gin
hook = net.layer1.register_backward_hook(backward_hook)
loss = net(input).sum()
loss.backward()
hook.remove()
print(gouts[0])
print(net.layer1.weight.grad)
print(net.layer1.bias.grad)
