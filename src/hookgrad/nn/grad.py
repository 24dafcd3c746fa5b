"""torch.nn.grad: the gradients of a convolution with respect to its input or its weight, given
the gradient of its output (what a convolution's backward computes, as functions).

Each is the convolution's own backward, run by the engine on a stand-in for the missing
argument (zeros of the given size, on which the result does not depend), so the values are
exactly those ``backward()`` gives and, with grad mode on, the result is differentiable in the
tensors given.
"""
from __future__ import annotations

from ..autograd import grad_mode
from ..autograd.engine import grad as _grad
from ..ops.creation import zeros
from ..tensor import Tensor
from . import functional as F

_CONVOLUTIONS = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}


def _through_backward(nd: int, input: Tensor, weight: Tensor, grad_output: Tensor, stride,
                      padding, dilation, groups: int, wanted: Tensor) -> Tensor:
    given = [t for t in (input, weight, grad_output) if t is not wanted]
    differentiable = grad_mode.is_grad_enabled() and any(t.requires_grad for t in given)
    with grad_mode.enable_grad():
        output = _CONVOLUTIONS[nd](input, weight, None, stride, padding, dilation, groups)
        if tuple(output.shape) != tuple(grad_output.shape):
            raise RuntimeError(f"conv{nd}d gradient: grad_output has shape "
                               f"{list(grad_output.shape)}, but a convolution of the given "
                               f"sizes gives {list(output.shape)}")
        (result,) = _grad(output, wanted, grad_output, create_graph=differentiable)
    return result


def _input_gradient(nd: int):
    def conv_input(input_size, weight: Tensor, grad_output: Tensor, stride=1, padding=0,
                   dilation=1, groups: int = 1) -> Tensor:
        stand_in = zeros(tuple(input_size), dtype=grad_output.dtype, requires_grad=True)
        return _through_backward(nd, stand_in, weight, grad_output, stride, padding, dilation,
                                 groups, stand_in)
    conv_input.__name__ = conv_input.__qualname__ = f"conv{nd}d_input"
    conv_input.__doc__ = (f"The gradient of ``conv{nd}d(input, weight, ...)`` with respect to "
                          f"an input of size ``input_size``, given ``grad_output`` (a "
                          f"transposed convolution whose output size is pinned down).")
    return conv_input


def _weight_gradient(nd: int):
    def conv_weight(input: Tensor, weight_size, grad_output: Tensor, stride=1, padding=0,
                    dilation=1, groups: int = 1) -> Tensor:
        stand_in = zeros(tuple(weight_size), dtype=grad_output.dtype, requires_grad=True)
        return _through_backward(nd, input, stand_in, grad_output, stride, padding, dilation,
                                 groups, stand_in)
    conv_weight.__name__ = conv_weight.__qualname__ = f"conv{nd}d_weight"
    conv_weight.__doc__ = (f"The gradient of ``conv{nd}d(input, weight, ...)`` with respect "
                           f"to a weight of size ``weight_size``, given ``grad_output``.")
    return conv_weight


conv1d_input, conv2d_input, conv3d_input = (_input_gradient(nd) for nd in (1, 2, 3))
conv1d_weight, conv2d_weight, conv3d_weight = (_weight_gradient(nd) for nd in (1, 2, 3))

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input",
           "conv3d_weight"]
