"""Locally disabling gradient computation (PyTorch's "Autograd mechanics" note).

Setting requires_grad, grad mode and no-grad mode (as context managers and decorators),
set_grad_enabled, inference mode, and evaluation mode (which is not a grad mode at all).
"""
import hookgrad as torch
from hookgrad import nn

# Setting requires_grad: a frozen parameter gets no gradient, the rest still do
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
model[0].weight.requires_grad_(False)
out = model(torch.randn(2, 3)).sum()
out.backward()
for name, param in model.named_parameters():
    print(name, param.requires_grad, None if param.grad is None else tuple(param.grad.shape))

# Grad modes
x = torch.ones(2, requires_grad=True)
with torch.no_grad():
    y = x * 2
print(y.requires_grad, y.grad_fn, torch.is_grad_enabled())

with torch.no_grad():
    with torch.enable_grad():
        y = x * 2
print(y.requires_grad, y.grad_fn.name())

is_train = False
with torch.set_grad_enabled(is_train):
    y = x * 2
print(y.requires_grad)

torch.set_grad_enabled(True)
y = x * 2
print(y.requires_grad)


@torch.no_grad()
def doubler(x):
    return x * 2


z = doubler(x)
print(z.requires_grad)


@torch.enable_grad()
def tripler(x):
    return x * 3


with torch.no_grad():
    z = tripler(x)
print(z.requires_grad, z.grad_fn.name())

# Inference mode: like no_grad, and the results are inference tensors
with torch.inference_mode():
    y = x * x
    print(torch.is_inference_mode_enabled(), torch.is_grad_enabled())
print(y.requires_grad, y.grad_fn, torch.is_inference_mode_enabled())

# In-place updates of leaves are allowed under no_grad (how optimizers update parameters)
w = torch.tensor([1.0, 2.0], requires_grad=True)
(w * w).sum().backward()
with torch.no_grad():
    w -= 0.1 * w.grad
print(w, w.grad, w.is_leaf)

try:
    w -= 0.1 * w.grad
except RuntimeError as error:
    print(error)

# Evaluation mode is not a grad mode: gradients still flow through an eval-mode module
layer = nn.Linear(2, 2)
layer.eval()
print(layer.training, layer(torch.ones(1, 2)).requires_grad)
