"""The helpers every fuzzed program may call: custom Functions, hook factories, small modules.

They are kept as source text, not as Python objects, because the same text is executed once
with ``torch`` bound to hookgrad and once with ``torch`` bound to torch itself, and because a
shrunk failing program is printed together with it so a developer can paste and run it.
``note(label, *values)`` is how hooks report what they saw; the interpreter records each call
(in order) so hook firing order and hook arguments are compared between the two libraries.
"""

PRELUDE = '''
once_differentiable = torch.autograd.function.once_differentiable


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 2 * x


class SquareOnce(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 2 * x


class WithCount(torch.autograd.Function):
    """Returns a tensor and a plain int; the int's gradient arrives as None."""
    @staticmethod
    def forward(ctx, x):
        return x * 2, 7

    @staticmethod
    def backward(ctx, grad, grad_count):
        note("WithCount.backward", grad_count is None)
        return grad * 2


class DoubleInPlace(torch.autograd.Function):
    """Doubles its input in place and says so with mark_dirty."""
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


class WithMask(torch.autograd.Function):
    """A differentiable output and a mask marked non-differentiable."""
    @staticmethod
    def forward(ctx, x):
        mask = (x > 0).to(x.dtype)
        ctx.mark_non_differentiable(mask)
        ctx.save_for_backward(mask)
        return x * 3, mask

    @staticmethod
    def backward(ctx, grad, grad_mask):
        (mask,) = ctx.saved_tensors
        return grad * 3 + grad * mask


class Lazy(torch.autograd.Function):
    """Two outputs with set_materialize_grads(False): unused outputs' gradients stay None."""
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, grad_a, grad_b):
        note("Lazy.backward", grad_a is None, grad_b is None)
        result = None
        if grad_a is not None:
            result = grad_a * 2
        if grad_b is not None:
            result = grad_b * 3 if result is None else result + grad_b * 3
        return result


def tensor_hook(label, scale):
    def hook(grad):
        note(label, grad)
        return None if scale is None else grad * scale
    return hook


def post_hook(label):
    def hook(tensor):
        note(label, tensor.grad)
    return hook


def node_hook(label):
    def hook(grad_inputs, grad_outputs):
        note(label, grad_inputs, grad_outputs)
    return hook


def node_prehook(label, scale):
    def hook(grad_outputs):
        note(label, grad_outputs)
        if scale is None:
            return None
        return tuple(None if g is None else g * scale for g in grad_outputs)
    return hook


def forward_hook(label):
    def hook(module, args, output):
        note(label, args, output)
    return hook


def forward_prehook(label):
    def hook(module, args):
        note(label, args)
    return hook


def backward_hook(label):
    def hook(module, grad_input, grad_output):
        note(label, grad_input, grad_output)
    return hook


def backward_prehook(label):
    def hook(module, grad_output):
        note(label, grad_output)
    return hook


def pack_same(tensor):
    note("pack", tensor.shape)
    return tensor


def pack_copy(tensor):
    note("pack copy", tensor.shape)
    return tensor.clone()


def unpack(packed):
    return packed


def make_linear(inputs, outputs, seed, dtype):
    layer = torch.nn.Linear(inputs, outputs, dtype=dtype)
    values = numpy.random.default_rng(seed).standard_normal(inputs * outputs + outputs).round(3)
    with torch.no_grad():
        layer.weight.copy_(torch.tensor(values[:-outputs].reshape(outputs, inputs), dtype=dtype))
        layer.bias.copy_(torch.tensor(values[-outputs:], dtype=dtype))
    return layer
'''

# What a pasted program uses in place of the interpreter's recorder.
PASTE_HEADER = '''import numpy
import torch  # or: import hookgrad as torch


def note(label, *values):
    print(label, *values)
'''
