"""More activations: logsigmoid, hardtanh / relu6, hardsigmoid, hardswish, mish, selu / celu
(torch's general elu), softshrink, hardshrink, and the composed softsign and tanhshrink.

Each saves ``self`` as torch does (``result`` for the in-place selu_ / celu_, whose input is
gone) and writes its derivative with tensor ops, so double backward comes free.
"""
from __future__ import annotations

import numpy as np

from .._dtype import scalar_type_name
from ..autograd import grad_mode
from ..tensor import Tensor
from .join import cat
from .unary import _apply_float, _not_for_integers, _sigmoid
from . import _layout
from . import inplace as _inplace
from ._activation_backward import EluBackward, HardswishBackward, LogSigmoidBackward
from ._base import HALF_TYPES, Op
from ._pattern_backward import (HardshrinkBackwardBackward, HardtanhBackwardBackward, in_float32,
                                SoftshrinkBackwardBackward, masked_where)
from ._reduce_util import _UNSET, shown_dim
from ._util import quiet_errors

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
_ONE_SIXTH = float(np.float32(1 / 6))  # torch's hardsigmoid backward uses the float constant


def _outside(x: np.ndarray, low, high) -> np.ndarray:
    """Where hardtanh's gradient is 0: torch compares half-precision inputs in float32."""
    x = in_float32(x)
    return (x <= low) | (x >= high)


def _inside(x: np.ndarray, lambd) -> np.ndarray:
    """Where a shrink's gradient is 0: torch compares with ``lambd`` rounded to the input's
    own dtype (an input that rounds onto it is inside), half precision included."""
    bound = x.dtype.type(lambd) if x.dtype.kind in "fV" else lambd
    return (x >= -bound) & (x <= bound)


class LogSigmoid(Op):
    """log(sigmoid(x));  d = sigmoid(-x)"""

    node_name = "LogSigmoidBackward0"
    saved_names = ("self", "buffer")

    @staticmethod
    def forward(ctx, self):
        _not_for_integers(self, "log_sigmoid_forward")
        buffer = _apply_float(lambda x: np.exp(-np.abs(x)), self)
        ctx.save_for_backward(self, buffer)
        # min(x, 0) - log(1 + exp(-|x|)): no overflow on either side
        result = _apply_float(lambda x: np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x))), self)
        return _layout.contiguous(result)  # torch's log_sigmoid_forward is row-major

    @staticmethod
    def backward(ctx, grad):
        self, buffer = ctx.saved_tensors
        return LogSigmoidBackward.apply(grad, self, buffer)


class Hardtanh(Op):
    """x clamped to [min_val, max_val]; the gradient passes strictly inside"""

    node_name = "HardtanhBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self, min_val, max_val):
        if self.dtype.kind == "b":
            raise RuntimeError("\"hardtanh_cpu\" not implemented for 'Bool'")
        ctx._saved_min_val, ctx._saved_max_val = min_val, max_val
        ctx.save_for_backward(self)
        # torch writes into empty_like(self): self's own layout, not the elementwise rule's
        return _layout.preserve(Hardtanh._clip(self, min_val, max_val), self)

    @staticmethod
    def _clip(x: np.ndarray, low, high) -> np.ndarray:
        if x.dtype.kind in "fV":
            return np.clip(x, x.dtype.type(low), x.dtype.type(high))
        return np.clip(x, low, high).astype(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        low, high = ctx._saved_min_val, ctx._saved_max_val
        pattern = masked_where(lambda x: _outside(x, low, high))
        return HardtanhBackwardBackward.apply(grad, self, pattern), None, None


class Hardsigmoid(Op):
    """clamp(x / 6 + 1/2, 0, 1);  d = 1/6 strictly between -3 and 3"""

    node_name = "HardsigmoidBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self):
        _not_for_integers(self, "hardsigmoid_cpu")
        ctx.save_for_backward(self)
        return _apply_float(lambda x: np.clip(x / x.dtype.type(6) + x.dtype.type(0.5), 0, 1),
                            self)

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        result = (grad * _ONE_SIXTH).where(~_outside(self._data, -3, 3), 0.0)  # laid out by self
        if not grad_mode.is_grad_enabled():
            return result
        # torch has no derivative of hardsigmoid_backward: the gradient depends on grad and
        # self, and differentiating it raises
        return NotImplementedDerivative.apply(result.detach()._data, grad, self,
                                              "hardsigmoid_backward")


class NotImplementedDerivative(Op):
    """A gradient whose own derivative torch does not implement: its value passes through,
    it depends on the tensors it was computed from, and backward through it raises."""

    node_name = "torch::autograd::NotImplemented"

    @staticmethod
    def forward(ctx, value, *inputs_and_name):
        ctx.op_name = inputs_and_name[-1]
        return value.copy()

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(f"derivative for aten::{ctx.op_name} is not implemented")


class Hardswish(Op):
    """x * hardsigmoid(x);  d = 0 up to -3, x/3 + 1/2 inside, 1 from 3 (torch's kinks)"""

    node_name = "HardswishBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self):
        _not_for_integers(self, "hardswish_cpu")
        ctx.save_for_backward(self)
        return _apply_float(
            lambda x: x * np.clip(x + x.dtype.type(3), 0, 6) / x.dtype.type(6), self)

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        return HardswishBackward.apply(grad, self)


class Mish(Op):
    """x tanh(softplus(x));  d = tanh(sp) + x sigmoid(x) (1 - tanh(sp)^2)"""

    node_name = "MishBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self):
        _not_for_integers(self, "mish_cpu")
        ctx.save_for_backward(self)
        return _apply_float(lambda x: x * np.tanh(np.logaddexp(0, x)), self)

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        tanh_sp = (1 + self.exp()).log().tanh()
        return grad * (tanh_sp + self * self.sigmoid() * (1 - tanh_sp * tanh_sp))


def _elu(x: np.ndarray, alpha, scale, input_scale) -> np.ndarray:
    t = x.dtype.type
    negative = t(alpha) * np.expm1(np.minimum(x, 0) * t(input_scale))
    return t(scale) * np.where(x > 0, x, negative)


class Elu(Op):
    """torch's general elu: scale * (x if x > 0 else alpha (exp(input_scale x) - 1))"""

    node_name = "EluBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self, alpha, scale, input_scale, celu=False):
        _not_for_integers(self, "elu_cpu")
        _show_elu(ctx, alpha, scale, input_scale, celu)
        ctx.save_for_backward(self)
        return _apply_float(lambda x: _elu(x, alpha, scale, input_scale), self)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        alpha, scale, input_scale = ctx.alpha, ctx.scale, ctx.backward_scale
        return EluBackward.apply(grad, x, alpha, scale, input_scale, False), None, None, None


def _show_elu(ctx, alpha, scale, input_scale, celu: bool = False) -> None:
    """Keeps elu's settings for the formula and shows them as torch's node does: celu's
    node shows only alpha."""
    ctx.alpha, ctx.scale, ctx.backward_scale = alpha, scale, input_scale
    ctx._saved_alpha = alpha
    if celu:  # its backward divides by alpha rounded to float32, as torch's formula does
        ctx.backward_scale = 1.0 / float(np.float32(alpha))
    else:
        ctx._saved_scale, ctx._saved_input_scale = scale, input_scale


class Celu(Elu):
    """celu(x, alpha) = elu(x, alpha, 1, 1 / alpha)"""

    node_name = "CeluBackward0"

    @staticmethod
    def forward(ctx, self, alpha, scale, input_scale):
        return Elu.forward(ctx, self, alpha, scale, input_scale, celu=True)


class EluResult(Op):
    """in place: the result is saved;  d = input_scale (result + alpha scale) where result <= 0"""

    node_name = "EluBackward1"
    saved_names = ("result",)
    _inplace = True

    @staticmethod
    def forward(ctx, self, alpha, scale, input_scale, celu=False):
        _not_for_integers(self, "elu_cpu")
        _show_elu(ctx, alpha, scale, input_scale, celu)
        np.copyto(self, _apply_float(lambda x: _elu(x, alpha, scale, input_scale), self))
        ctx.save_for_backward(self)
        return self

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        alpha, scale, input_scale = ctx.alpha, ctx.scale, ctx.backward_scale
        return EluBackward.apply(grad, result, alpha, scale, input_scale, True), None, None, None


class CeluResult(EluResult):
    """celu_'s backward divides by alpha rounded to float32, as torch's formula does"""

    node_name = "CeluBackward1"

    @staticmethod
    def forward(ctx, self, alpha, scale, input_scale):
        return EluResult.forward(ctx, self, alpha, scale, input_scale, celu=True)


class Softshrink(Op):
    """x - lambd above lambd, x + lambd below -lambd, else 0;  d = 1 outside [-lambd, lambd]"""

    node_name = "SoftshrinkBackward0"
    pattern_node = SoftshrinkBackwardBackward
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self, lambd):
        _not_for_integers(self, "softshrink_cpu")
        if lambd < 0:
            raise RuntimeError(f"lambda must be in range [0, {float(np.finfo(self.dtype).max):g}] "
                               f"for input dtype {scalar_type_name(self.dtype)}, but found "
                               f"{lambd:g}")
        ctx._saved_lambd = lambd
        ctx.save_for_backward(self)

        def shrink(x):
            t = x.dtype.type(lambd)
            return np.where(x > t, x - t, np.where(x < -t, x + t, np.zeros((), x.dtype)))

        return _apply_float(shrink, self)

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        lambd = ctx._saved_lambd
        pattern = masked_where(lambda x: _inside(x, lambd))
        return ctx._forward_cls.pattern_node.apply(grad, self, pattern), None


class Hardshrink(Softshrink):
    """x where |x| > lambd, else 0"""

    node_name = "HardshrinkBackward0"
    pattern_node = HardshrinkBackwardBackward

    @staticmethod
    def forward(ctx, self, lambd):
        _not_for_integers(self, "hardshrink_cpu")
        ctx._saved_lambd = lambd
        ctx.save_for_backward(self)
        t = self.dtype.type(lambd)
        return _layout.pointwise(np.where((self >= -t) & (self <= t), np.zeros((), self.dtype),
                                          self), self)


# ---------------------------------------------------------------------------------------------
# functions (torch.nn.functional's names; selu and celu are in torch too)
# ---------------------------------------------------------------------------------------------
class Glu(Op):
    """a * sigmoid(b) for the two halves a, b of ``self`` along ``dim``;
    d/da = sigmoid(b), d/db = a sigmoid(b) (1 - sigmoid(b))."""

    node_name = "GluBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self, dim, shown=_UNSET):
        _not_for_integers(self, "glu")
        ctx.dim, ctx._saved_dim = dim, dim if shown is _UNSET else shown
        ctx.save_for_backward(self)
        halves = np.split(self, 2, axis=dim)
        first, second = (h.astype(np.float32) if self.dtype in HALF_TYPES else h for h in halves)
        with quiet_errors():  # half is computed in float32 and rounded once, as torch does
            result = first * _sigmoid(second)
        # torch's kernel iterates over the two halves: the result is laid out as theirs
        return _layout.pointwise(result.astype(self.dtype, copy=False), *halves)

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        return GluBackward.apply(grad, self, ctx.dim), None


class GluBackward(Op):
    """torch's ``glu_backward``: cat(grad_output s, grad_output a s (1 - s)) for the halves
    a, b of ``self`` (s = sigmoid(b)), row-major as torch's kernel allocates it; one node that
    saves grad_output (g) and self. Its derivatives, for an incoming (G_a, G_b):
    G_a s + G_b a s (1 - s) for grad_output, and
    cat(G_b g s (1 - s), (G_a + G_b a (1 - 2 s)) g s (1 - s)) for self."""

    node_name = "GluBackwardBackward0"
    saved_names = ("grad_output", "self")
    saved_values = {"dim": "dim"}

    @staticmethod
    def forward(ctx, grad_output, self, dim):
        ctx.dim = dim
        ctx.save_for_backward(grad_output, self)
        work = np.float32 if self.dtype in HALF_TYPES else self.dtype  # rounded once
        first, second = (h.astype(work, copy=False) for h in np.split(self, 2, axis=dim))
        gradient = grad_output.astype(work, copy=False)
        gate = _sigmoid(second)
        result = np.concatenate([gradient * gate, gradient * first * gate * (1 - gate)], dim)
        return _layout.contiguous(result.astype(self.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        grad_output, self = ctx.saved_tensors
        dim = ctx.dim
        first, second = self.chunk(2, dim)
        grad_first, grad_second = grad.chunk(2, dim)
        gate = second.sigmoid()
        slope = gate * (1 - gate)
        for_grad_output = for_self = None
        if ctx.needs_input_grad[0]:
            for_grad_output = grad_first * gate + grad_second * first * slope
        if ctx.needs_input_grad[1]:
            scaled = grad_output * slope
            for_self = cat([grad_second * scaled,
                            (grad_first + grad_second * first * (1 - 2 * gate)) * scaled], dim)
        return for_grad_output, for_self, None


def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x))`` computed stably."""
    return LogSigmoid.apply(input)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    """``clamp(x, min_val, max_val)`` elementwise."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if inplace:
        return _inplace.inplace(Hardtanh, input, min_val, max_val)
    return Hardtanh.apply(input, min_val, max_val)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """In place ``hardtanh``."""
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """hardtanh(input, 0, 6), as torch computes it"""
    return hardtanh(input, 0, 6, inplace)


def _maybe_inplace(cls, input: Tensor, inplace: bool) -> Tensor:
    if inplace:
        return _inplace.inplace(cls, input)
    return cls.apply(input)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``clamp(x / 6 + 1 / 2, 0, 1)`` elementwise."""
    return _maybe_inplace(Hardsigmoid, input, inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * hardsigmoid(x)`` elementwise."""
    return _maybe_inplace(Hardswish, input, inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))`` elementwise."""
    return _maybe_inplace(Mish, input, inplace)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """scale * elu(input, alpha) with the self-normalising constants"""
    cls = EluResult if inplace else Elu
    return cls.apply(input, _SELU_ALPHA, _SELU_SCALE, 1)


def selu_(input: Tensor) -> Tensor:
    """In place ``selu``."""
    return selu(input, inplace=True)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """max(0, x) + min(0, alpha (exp(x / alpha) - 1))"""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    cls = CeluResult if inplace else Celu
    return cls.apply(input, alpha, 1.0, 1.0 / alpha)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In place ``celu``."""
    return celu(input, alpha, inplace=True)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0."""
    return Softshrink.apply(input, lambd)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x`` where ``|x| > lambd``, else 0."""
    return Hardshrink.apply(input, lambd)


def softsign(input: Tensor) -> Tensor:
    """input / (1 + |input|), composed as torch composes it"""
    return input / (input.abs() + 1)


def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)`` elementwise."""
    return input - input.tanh()



def glu(input: Tensor, dim: int = -1) -> Tensor:
    """Gated linear unit: the first half of ``input`` along ``dim`` times the sigmoid of the
    second half."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    axis = dim + input.ndim if dim < 0 else dim
    if not 0 <= axis < input.ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-input.ndim}, {input.ndim - 1}], but got {dim})")
    if input.shape[axis] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {axis} is size "
                           f"{input.shape[axis]}")
    return Glu.apply(input, axis, shown=shown_dim(dim))
