"""Hooks for autograd saved tensors (PyTorch's intermediate tutorial and the autograd mechanics
note, "Saved tensors" and "Hooks for saved tensors").

What an operation saves for backward, how to look at it (grad_fn._saved_*), and how pack/unpack
hooks change how it is stored: for a whole region (saved_tensors_hooks), inside a module's forward,
and with the built-in save_on_cpu. (Hooks on one saved tensor: autograd_saved_tensor_hooks.py.)
"""
import hookgrad as torch
import hookgrad.nn as nn

# Saved tensors
x = torch.randn(5, requires_grad=True)
y = x.pow(2)
print(x.equal(y.grad_fn._saved_self))  # True
print(x is y.grad_fn._saved_self)  # True

x = torch.randn(5, requires_grad=True)
y = x.exp()
print(y.equal(y.grad_fn._saved_result))  # True
print(y is y.grad_fn._saved_result)  # False

a = torch.randn(5, requires_grad=True)
b = torch.ones(5, requires_grad=True)
y = a * b
print(y.grad_fn._saved_self.equal(a), y.grad_fn._saved_other.equal(b))
print(type(y.grad_fn._raw_saved_self).__name__)


def pack_hook(x):
    print("Packing", x)
    return x


def unpack_hook(x):
    print("Unpacking", x)
    return x


# Registering default hooks for saved tensors
a = torch.ones(5, requires_grad=True)
b = torch.ones(5, requires_grad=True) * 2
with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
    y = a * b

y.sum().backward()


# The unpacked tensor need not be the packed one: here what is stored is a scaled copy.
def pack(x):
    return x * 4


def unpack(x):
    return x / 4


x = torch.randn(5, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    y = torch.sin(x)
y.sum().backward()
print(torch.allclose(x.grad, torch.cos(x)))

# Saving to memory by id, as a stand-in for any external storage
storage = {}


def pack_to_storage(x):
    key = len(storage)
    storage[key] = x.detach().clone()
    print("stored", key, tuple(x.shape))
    return key


def unpack_from_storage(key):
    print("loaded", key)
    return storage[key]


x = torch.randn(3, 4, requires_grad=True)
w = torch.randn(4, 2, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack_to_storage, unpack_from_storage):
    y = (x @ w).tanh()
y.sum().backward()
print(x.grad.shape, w.grad.shape, len(storage))


# Hooks inside a module's forward
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 3)

    def forward(self, x):
        with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
            # ... compute output
            output = self.linear(x).relu()
        return output


model = Model()
out = model(torch.randn(2, 4))
out.sum().backward()
print(model.linear.weight.grad)

# save_on_cpu: every saved tensor goes to the CPU and comes back when backward needs it
x = torch.randn(4, requires_grad=True)
with torch.autograd.graph.save_on_cpu():
    y = x.sigmoid() * x
y.sum().backward()
print(x.grad)
