"""Hooks for autograd saved tensors: registering hooks for one saved tensor (PyTorch's
intermediate tutorial).

grad_fn._raw_saved_<name> is the saved tensor itself; register_hooks packs it at once with the
pack hook (which receives it detached) and unpacks it with the unpack hook whenever autograd reads
it: through grad_fn._saved_<name> and in backward.
"""
import hookgrad as torch


def pack_hook(x):
    print("Packing", x)
    return x


def unpack_hook(x):
    print("Unpacking", x)
    return x


x = torch.randn(5, requires_grad=True)
y = x.pow(2)
y.grad_fn._raw_saved_self.register_hooks(pack_hook, unpack_hook)
print(y.grad_fn._saved_self.equal(x))
y.sum().backward()
print(x.grad.equal(2 * x))

# Only one pair of hooks per saved tensor, and not after it was freed
try:
    y.grad_fn._raw_saved_self.register_hooks(pack_hook, unpack_hook)
except RuntimeError as error:
    print(str(error).split(".")[0])
