"""Unary elementwise ops: math functions, activations and rounding.

Each saves what torch saves (``self`` or ``result``, so pack hooks see the same tensors) and states
its derivative in ``backward`` with differentiable tensor ops, so double backward comes free.
Integer inputs to float-only functions give the default float dtype; half precision is computed
in float32 and rounded once.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _dtype
from ..tensor import Tensor
from . import _layout
from ._util import quiet, quiet_errors
from ._erf import erf
from ._base import finish, HALF_TYPES, Op, work_dtype
from ._unary_backward import SigmoidBackward, TanhBackward



def _apply_float(fn, x: np.ndarray, can_warn: bool = True) -> np.ndarray:
    """``fn(x)`` for a float-valued function: integers give the default float dtype, half is
    computed in float32 and rounded once, and NumPy's warnings are off (torch has none).
    ``can_warn=False``: ``fn`` raises no floating-point flag for any float input, not even
    underflow (tanh), so float32 and float64 inputs skip switching NumPy's error state."""
    dtype = x.dtype
    if not can_warn and dtype.kind in "fV" and dtype not in HALF_TYPES:
        result = fn(x)
        return _layout.pointwise(result if type(result) is np.ndarray else np.asarray(result), x)
    source = x
    with quiet_errors():
        if dtype.kind not in "fV":
            dtype = _dtype.get_default_dtype().numpy
            x = x.astype(work_dtype(dtype))
        elif dtype in HALF_TYPES:
            x = x.astype(np.float32)
        result = fn(x)
        if type(result) is not np.ndarray:
            result = np.asarray(result)
        # the layout of an elementwise result follows the input (torch's TensorIterator)
        return _layout.pointwise(result if result.dtype == dtype else result.astype(dtype),
                                 source)


def _not_for_integers(x: np.ndarray, kernel: str) -> None:
    if x.dtype.kind not in "fV":
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{_dtype.scalar_type_name(x.dtype)}'")


def _zeros(grad: Tensor) -> Tensor:
    return Tensor._make(np.zeros_like(grad._data))


_ZERO = {}


def _zero(dtype: np.dtype) -> np.ndarray:
    """A shared read-only 0-dim zero of ``dtype`` (a ufunc takes a 0-dim array faster than a
    NumPy scalar)."""
    zero = _ZERO.get(dtype)
    if zero is None:
        zero = np.zeros((), dtype)
        zero.flags.writeable = False
        _ZERO[dtype] = zero
    return zero


class Neg(Op):
    """d -x = -1"""

    node_name = "NegBackward0"
    array_formula = True

    @staticmethod
    def forward(ctx, self):
        if self.dtype == np.bool_:
            raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                               "you are trying to invert a mask, use the `~` or `logical_not()` "
                               "operator instead.")
        return _layout.pointwise(finish(np.negative(self), self.dtype), self)

    @staticmethod
    def backward(ctx, grad):
        return -grad


class Exp(Op):
    """d exp(x) = exp(x)"""

    node_name = "ExpBackward0"
    array_formula = True
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, self):
        result = _apply_float(np.exp, self)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return grad * result


class Log(Op):
    """d log(x) = 1 / x"""

    node_name = "LogBackward0"
    array_formula = True
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self):
        ctx.save_for_backward(self)
        return _apply_float(np.log, self)

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        return grad / self


class Log1p(Op):
    """d log(1 + x) = 1 / (1 + x)"""

    node_name = "Log1PBackward0"
    array_formula = True
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self):
        ctx.save_for_backward(self)
        return _apply_float(np.log1p, self)

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        return grad / (self + 1)


class Sqrt(Op):
    """d sqrt(x) = 1 / (2 sqrt(x))"""

    node_name = "SqrtBackward0"
    array_formula = True
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, self):
        result = _apply_float(np.sqrt, self)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return grad / (2 * result)


class Rsqrt(Op):
    """d x^-1/2 = -1/2 x^-3/2"""

    node_name = "RsqrtBackward0"
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, self):
        result = _apply_float(lambda x: 1 / np.sqrt(x), self)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return -0.5 * grad * result.pow(3)


class Reciprocal(Op):
    """d 1/x = -1/x^2"""

    node_name = "ReciprocalBackward0"
    array_formula = True
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, self):
        result = _apply_float(np.reciprocal, self)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return -grad * (result * result)


class Abs(Op):
    """d |x| = sgn(x) (torch's formula: a graph of the gradient shows ``SgnBackward0``)"""

    node_name = "AbsBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self):
        if self.dtype == np.bool_:
            raise NotImplementedError("\"abs_cpu\" not implemented for 'Bool'")
        ctx.save_for_backward(self)
        return _layout.pointwise(finish(np.abs(self), self.dtype), self)

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        return grad * self.sgn()


class Sign(Op):
    """piecewise constant: zero gradient"""

    node_name = "SignBackward0"

    @staticmethod
    def forward(ctx, self):
        if self.dtype == np.bool_:
            return self.copy()
        # (x > 0) - (x < 0), so NaN has sign 0 as in torch
        return _layout.pointwise(finish((self > 0).astype(self.dtype)
                                        - (self < 0).astype(self.dtype), self.dtype), self)

    @staticmethod
    def backward(ctx, grad):
        return _zeros(grad)


class Sgn(Sign):
    """torch.sgn: sign for real tensors (x / |x| for complex ones, which hookgrad has not), with
    its own node, which keeps self and the result as torch's does; zero gradient."""

    node_name = "SgnBackward0"
    saved_names = ("self", "result")

    @staticmethod
    def forward(ctx, self):
        result = Sign.forward(ctx, self)
        ctx.save_for_backward(self, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        ctx.saved_tensors  # unpacked as torch's node does: hooks run, versions are checked
        return _zeros(grad)


class Sin(Op):
    """d sin(x) = cos(x)"""

    node_name = "SinBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self):
        ctx.save_for_backward(self)
        return _apply_float(np.sin, self)

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        return grad * self.cos()


class Cos(Op):
    """d cos(x) = -sin(x)"""

    node_name = "CosBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self):
        ctx.save_for_backward(self)
        return _apply_float(np.cos, self)

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        return grad * -self.sin()


class Tanh(Op):
    """d tanh(x) = 1 - tanh(x)^2, read from the result (torch's ``tanh_backward`` node)"""

    node_name = "TanhBackward0"
    array_formula = True
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, self):
        result = _apply_float(np.tanh, self, can_warn=False)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        if type(grad) is np.ndarray:  # the array lane: no graph of the gradient, same formula
            return grad * (1 - result * result)
        return TanhBackward.apply(grad, result)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    # exp of a non-positive number only, so neither side overflows: 1 / (1 + e) where x >= 0,
    # e / (1 + e) elsewhere, as one division of a selected numerator
    e = np.exp(-np.abs(x))
    return (np.where(x >= 0, 1, e) / (1 + e)).astype(x.dtype, copy=False)


class Sigmoid(Op):
    """d s(x) = s(x) (1 - s(x)), read from the result (torch's ``sigmoid_backward`` node)"""

    node_name = "SigmoidBackward0"
    array_formula = True
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, self):
        result = _apply_float(_sigmoid, self)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        if type(grad) is np.ndarray:  # the array lane: no graph of the gradient, same formula
            return grad * (1 - result) * result
        return SigmoidBackward.apply(grad, result)


# ---------------------------------------------------------------------------------------------
# erf and GELU
# ---------------------------------------------------------------------------------------------
_SQRT_PI = math.sqrt(math.pi)
_TWO_OVER_SQRT_PI = 2 / _SQRT_PI
_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_TANH_K = math.sqrt(2 / math.pi)
_KAPPA = 0.044715


class Erf(Op):
    """d erf(x) = 2/sqrt(pi) exp(-x^2)"""

    node_name = "ErfBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self):
        ctx.save_for_backward(self)
        return _apply_float(erf, self)

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        return _TWO_OVER_SQRT_PI * (-self.pow(2)).exp() * grad  # torch's order: laid out by self


# ---------------------------------------------------------------------------------------------
# Rounding: piecewise constant, zero gradient (integers pass through unchanged)
# ---------------------------------------------------------------------------------------------
class _Rounding(Op):
    _round = None

    @classmethod
    def forward(cls, ctx, self):
        if self.dtype.kind == "b":  # integers are already whole; torch has no bool kernel
            raise NotImplementedError(f"\"{cls.__name__.lower()}_vml_cpu\" not implemented for "
                                      f"'Bool'")
        if self.dtype.kind in "iu":
            return self.copy()
        return _layout.pointwise(finish(cls._round(self), self.dtype), self)

    @staticmethod
    def backward(ctx, grad):
        return _zeros(grad)


class Floor(_Rounding):
    """Largest integer not above each element (the dtype is kept); gradient zero."""

    node_name = "FloorBackward0"
    _round = staticmethod(np.floor)


class Ceil(_Rounding):
    """Smallest integer not below each element (the dtype is kept); gradient zero."""

    node_name = "CeilBackward0"
    _round = staticmethod(np.ceil)


class Trunc(_Rounding):
    """Each element rounded toward zero (the dtype is kept); gradient zero."""

    node_name = "TruncBackward0"
    _round = staticmethod(np.trunc)


class Round(_Rounding):
    """half to even, as torch rounds"""

    node_name = "RoundBackward0"
    _round = staticmethod(np.rint)


class RoundDecimals(Op):
    node_name = "RoundBackward1"

    @staticmethod
    def forward(ctx, self, decimals):
        if self.dtype.kind in "iub":
            raise NotImplementedError(f"\"round_cpu\" not implemented for "
                                      f"'{_dtype.scalar_type_name(self.dtype)}'")
        return _layout.pointwise(finish(quiet(np.round, self, decimals), self.dtype), self)

    @staticmethod
    def backward(ctx, grad):
        return _zeros(grad), None
