"""Binary arithmetic: add, sub, rsub, mul, div (and its rounding modes), remainder, floor_divide
and pow, each forward next to its backward. Their in-place forms live in ``inplace.py``; the torch
functions that pick the class and promote the operands in ``math.py``.
"""
from __future__ import annotations

import numpy as np

from .. import _dtype
from ..tensor import Tensor
from . import _layout
from ._util import quiet, quiet_errors
from ._base import (arithmetic, cast, _check_alpha, _check_sub, compute, finish, not_implemented,
                    Op, _pair, _scaled, work_dtype, HALF_TYPES)


# ---------------------------------------------------------------------------------------------
# Arithmetic
# ---------------------------------------------------------------------------------------------
def _add_scaled(ctx, op_name: str, fn, self, other, dtype, alpha, inplace: bool = False):
    """``fn(self, alpha * other)`` for add and sub: ``alpha * other`` is rounded to the work
    dtype before the sum, as torch computes it."""
    _check_alpha(alpha, dtype)
    ctx.alpha = alpha
    if work_dtype(dtype) is not dtype and not isinstance(other, np.ndarray):
        other = cast(other, dtype)  # torch's add kernel rounds a number to half precision first
    if alpha == 1:
        return arithmetic(op_name, fn, self, other, dtype, inplace)
    work = work_dtype(dtype)
    result = arithmetic(op_name, fn, self, _scaled(cast(other, work), alpha, work), dtype, inplace)
    # laid out over the operands torch sees (the scaled copy of other is ours alone)
    return result if inplace else _layout.pointwise(result, self, other, common=dtype)


class Add(Op):
    """out = self + alpha * other;  d self = grad, d other = alpha * grad"""

    node_name = "AddBackward0"
    saved_values = {"alpha": "alpha"}
    _wrapped_scalars = (1,)

    @staticmethod
    def forward(ctx, self, other, dtype, number, alpha=1):
        return _add_scaled(ctx, "add", np.add, self, other, dtype, alpha)

    @staticmethod
    def backward(ctx, grad):
        return grad, (grad if ctx.alpha == 1 else grad * ctx.alpha)


class Sub(Op):
    """out = self - alpha * other;  d self = grad, d other = -alpha * grad"""

    node_name = "SubBackward0"
    array_formula = True
    saved_values = {"alpha": "alpha"}
    _wrapped_scalars = (1,)

    @staticmethod
    def forward(ctx, self, other, dtype, number, alpha=1):
        _check_sub(self, other, number)
        return _add_scaled(ctx, "sub", np.subtract, self, other, dtype, alpha)

    @staticmethod
    def backward(ctx, grad):
        return grad, (-grad if ctx.alpha == 1 else -grad * ctx.alpha)


class Rsub(Op):
    """out = other - alpha * self (two tensors: RsubBackward0)"""

    node_name = "RsubBackward0"
    array_formula = True
    saved_values = {"alpha": "alpha"}

    @staticmethod
    def forward(ctx, self, other, dtype, number, alpha=1):
        _check_sub(self, other, number)
        _check_alpha(alpha, dtype)
        ctx.alpha = alpha
        a, b = _pair(self, other, dtype)  # torch computes sub(other, self, alpha)
        return _layout.pointwise(finish(compute("rsub", np.subtract, b, _scaled(a, alpha, a.dtype)),
                                        dtype), other, self, common=dtype)

    @staticmethod
    def backward(ctx, grad):
        return (-grad if ctx.alpha == 1 else -grad * ctx.alpha), grad


def _subtract_from(self: np.ndarray, other: np.ndarray) -> np.ndarray:
    return np.subtract(other, self)


class RsubScalar(Op):
    """out = other - alpha * self for a number ``other`` (no edge for it: RsubBackward1)"""

    node_name = "RsubBackward1"
    array_formula = True
    saved_values = {"alpha": "alpha"}

    @staticmethod
    def forward(ctx, self, other, dtype, alpha=1):
        _check_sub(self, self, other)
        _check_alpha(alpha, dtype)
        ctx.alpha = alpha
        if dtype in HALF_TYPES and not isinstance(other, np.ndarray):
            other = cast(other, dtype)  # rounded to half precision first, as in add
        if alpha == 1:
            return arithmetic("rsub", _subtract_from, self, other, dtype)
        work = work_dtype(dtype)
        return _layout.pointwise(finish(compute("rsub", np.subtract, cast(other, work),
                                                _scaled(cast(self, work), alpha, work)), dtype),
                                 other, self, common=dtype)

    @staticmethod
    def backward(ctx, grad):
        return (-grad if ctx.alpha == 1 else -grad * ctx.alpha), None


class Mul(Op):
    """out = self * other;  d self = grad * other, d other = grad * self"""

    node_name = "MulBackward0"
    array_formula = True
    saved_names = ("other", "self")
    _wrapped_scalars = (1,)

    @staticmethod
    def forward(ctx, self, other, dtype, number):
        ctx.number = number
        if number is None:
            need_self, need_other = ctx.needs_input_grad[:2]
            ctx.save_for_backward(other if need_self else None, self if need_other else None)
        return arithmetic("mul", np.multiply, self, other, dtype)

    @staticmethod
    def backward(ctx, grad):
        if ctx.number is not None:
            return grad * ctx.saved_number(), None
        other, self = ctx.saved_tensors
        return (None if other is None else grad * other,
                None if self is None else grad * self)


def _true_dtype(dtype: np.dtype) -> np.dtype:
    return dtype if dtype.kind in "fV" else _dtype.get_default_dtype().numpy


class Div(Op):
    """out = self / other;  d self = grad / other, d other = -grad * self / other^2"""

    node_name = "DivBackward0"
    array_formula = True
    saved_names = ("other", "self")
    _wrapped_scalars = (1,)

    @staticmethod
    def forward(ctx, self, other, dtype, number):
        ctx.number = number
        if number is None:
            need_self, need_other = ctx.needs_input_grad[:2]
            ctx.save_for_backward(other if need_self or need_other else None,
                                  self if need_other else None)
        return arithmetic("div", np.true_divide, self, other, _true_dtype(dtype))

    @staticmethod
    def backward(ctx, grad):
        if ctx.number is not None:
            return grad / ctx.saved_number(), None
        other, self = ctx.saved_tensors
        grad_self = grad / other if ctx.needs_input_grad[0] else None
        grad_other = None if self is None else -grad * ((self / other) / other)
        return grad_self, grad_other


def _int_div_check(a: np.ndarray, b: np.ndarray) -> None:
    """torch's error for an integer divisor with a zero, raised only when some element is
    computed: an empty result never divides."""
    if b.dtype.kind in "iub" and not np.all(b) and np.size(a) and \
            0 not in np.broadcast_shapes(np.shape(a), np.shape(b)):
        raise RuntimeError("ZeroDivisionError")


def divide_rounded(a: np.ndarray, b: np.ndarray, mode: str, op_name: str = "div"):
    """Floor or truncating division of arrays of one dtype (Python's floor for floats too)."""
    if a.dtype == np.bool_:
        raise not_implemented(f"div_{mode}_cpu", a.dtype)
    if a.dtype.kind in "iu":
        _int_div_check(a, b)
        floor = compute(op_name, np.floor_divide, a, b)
        if mode == "floor":
            return floor
        inexact = compute(op_name, np.remainder, a, b) != 0
        return np.where(inexact & ((a < 0) != (b < 0)), floor + 1, floor)
    if mode == "floor":
        return compute(op_name, np.floor_divide, a, b)
    return np.trunc(compute(op_name, np.true_divide, a, b))


class DivMode(Op):
    """out = floor or trunc of self / other: zero gradient almost everywhere"""

    node_name = "DivBackward2"
    saved_names = ("other", "self")
    saved_values = {"rounding_mode": "rounding_mode"}
    _wrapped_scalars = (1,)

    @staticmethod
    def forward(ctx, self, other, dtype, number, rounding_mode):
        if rounding_mode not in ("floor", "trunc"):
            raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or "
                               f"'floor' but found '{rounding_mode}'")
        ctx.number, ctx.rounding_mode = number, rounding_mode
        if number is None:
            need_self, need_other = ctx.needs_input_grad[:2]
            ctx.save_for_backward(other if need_self or need_other else None,
                                  self if need_other else None)
        a, b = _pair(self, other, dtype)
        return _layout.pointwise(finish(divide_rounded(a, b, rounding_mode), dtype), self, other,
                                 common=dtype)

    @staticmethod
    def backward(ctx, grad):
        ctx.saved_tensors  # unpacked as torch's node does: hooks run, versions are checked
        zeros = Tensor._make(np.zeros_like(grad._data))
        return zeros, zeros if ctx.needs_input_grad[1] else None


class Remainder(Op):
    """out = self - floor(self / other) * other;  d other = -grad * floor(self / other)"""

    node_name = "RemainderBackward1"
    saved_names = ("other", "self")
    _rounding_mode = "floor"  # fmod: the same gradient with the quotient truncated

    @staticmethod
    def forward(ctx, self, other, dtype, number):
        if number is None:
            ctx.save_for_backward(other if ctx.needs_input_grad[1] else None,
                                  self if ctx.needs_input_grad[1] else None)
        a, b = _pair(self, other, dtype)
        if a.dtype == np.bool_:
            raise not_implemented("remainder_cpu", a.dtype)
        if a.dtype.kind in "iu":
            _int_div_check(a, b)
        return _layout.pointwise(finish(compute("remainder", np.remainder, a, b), dtype), self,
                                 other, common=dtype)

    @classmethod
    def backward(cls, ctx, grad):
        if not ctx.needs_input_grad[1]:
            return grad, None
        other, self = ctx.saved_tensors
        return grad, -grad * self.div(other, rounding_mode=cls._rounding_mode)


class RemainderScalar(Remainder):
    node_name = "RemainderBackward0"
    saved_names = ()  # torch keeps nothing when other is a number

    @staticmethod
    def forward(ctx, self, other, dtype):
        return Remainder.forward(ctx, self, cast(other, dtype), dtype, other)

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class FloorDivide(Op):
    """torch has no derivative for floor_divide: backward raises, as it does there."""

    node_name = "torch::autograd::NotImplemented"

    @staticmethod
    def forward(ctx, self, other, dtype, number):
        a, b = _pair(self, other, dtype)
        return _layout.pointwise(finish(divide_rounded(a, b, "floor", "floor_divide"), dtype),
                                 self, other, common=dtype)

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("the derivative for 'floor_divide' is not implemented.")


class FloorDivideScalar(FloorDivide):
    node_name = "torch::autograd::NotImplemented"

    @staticmethod
    def forward(ctx, self, other, dtype):
        return FloorDivide.forward(ctx, self, cast(other, dtype), dtype, other)


# ---------------------------------------------------------------------------------------------
# Powers
# ---------------------------------------------------------------------------------------------
def _check_int_power(dtype: np.dtype, exponent, tensor_exponent: bool = True) -> None:
    """torch refuses a negative number exponent of an integer tensor; a tensor of exponents
    may hold negatives (see ``_power``)."""
    if dtype.kind == "b" and tensor_exponent:
        raise not_implemented("pow", dtype)
    if dtype.kind in "iu" and not tensor_exponent and np.any(np.asarray(exponent) < 0):
        raise RuntimeError("Integers to negative integer powers are not allowed.")


def _power(base: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    """``np.power``, with torch's integer answer for a negative integer exponent (NumPy
    refuses one): 1 for base 1, +-1 for base -1 by the exponent's parity, 0 otherwise."""
    base, exponent = np.asarray(base), np.asarray(exponent)
    if base.dtype.kind in "iu" and exponent.dtype.kind == "i" and (exponent < 0).any():
        negative = exponent < 0
        with quiet_errors():
            result = np.power(base, np.where(negative, 0, exponent).astype(exponent.dtype))
        reciprocal = np.where(base == 1, 1, np.where(base == -1, 1 - 2 * (exponent & 1), 0))
        return np.where(negative, reciprocal, result).astype(result.dtype)
    with quiet_errors():
        return np.power(base, exponent)


def _scalar_power(base: np.ndarray, exponent: np.ndarray, out=None,
                  rsqrt: bool = True) -> np.ndarray:
    """``np.power`` for a number exponent, with the exponents torch computes by multiplication
    done the same way: 2 as x*x, 3 as x*x*x, -1 as 1/x, -2 as 1/(x*x) and, for float32/64 only
    (``rsqrt``), -0.5 as 1/sqrt(x). Besides matching torch's rounding, this avoids NumPy's float
    power, which is tens of times slower than a multiplication for negative bases. 0.5 stays a
    power: torch does not round it as sqrt."""
    if base.dtype.kind == "f" and exponent.ndim == 0:
        e = exponent.item()
        if e == 2:
            return np.multiply(base, base, out=out)
        if e == 3:
            return np.multiply(base * base, base, out=out)
        if e == -1:
            return np.divide(1, base, out=out)
        if e == -2:
            return np.divide(1, base * base, out=out)
        if e == -0.5 and rsqrt:
            return np.divide(1, np.sqrt(base), out=out)
    return np.power(base, exponent, out=out)


def _half_power(base: np.ndarray, exponent: np.ndarray, out=None) -> np.ndarray:
    return _scalar_power(base, exponent, out, rsqrt=False)


class Pow(Op):
    """out = self ** exponent for a number exponent;  d self = grad * e * self^(e-1)"""

    node_name = "PowBackward0"
    saved_names = ("self",)
    saved_values = {"exponent": "exponent"}

    @staticmethod
    def forward(ctx, self, exponent, dtype):
        _check_int_power(dtype, exponent, tensor_exponent=False)
        ctx.exponent = exponent
        ctx.save_for_backward(self)
        if dtype.kind == "b":  # bool ** number is computed in int64 and cast back
            work = np.dtype(np.int64)
            return _layout.pointwise(finish(_power(cast(self, work), cast(exponent, work)),
                                            dtype), self)
        kernel = _scalar_power if dtype != np.float16 else _half_power
        return arithmetic("pow", kernel, self, exponent, dtype, unary=True)

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        exponent = ctx.exponent
        if exponent == 0:
            return Tensor._make(np.zeros_like(grad._data)), None
        return grad * (exponent * self.pow(exponent - 1)), None


class PowTensor(Op):
    """out = self ** exponent for a tensor exponent;  d exponent = grad * out * log(self)"""

    node_name = "PowBackward1"
    saved_names = ("exponent", "self", "result")

    @staticmethod
    def forward(ctx, self, exponent, dtype, number):
        _check_int_power(dtype, exponent)
        a, b = _pair(self, exponent, dtype)
        result = _layout.pointwise(finish(compute("pow", _power, a, b), dtype), self, exponent,
                                   common=dtype)
        ctx.save_for_backward(exponent, self, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        exponent, self, result = ctx.saved_tensors
        grad_self = grad_exponent = None
        # torch's where(exponent == 0, 0, ...) and grad * where(self == 0 & exponent >= 0, 0,
        # result * log(self)): laid out by their conditions, as torch's
        if ctx.needs_input_grad[0]:
            grad_self = (grad * (exponent * self.pow(exponent - 1))).where(
                exponent._data != 0, 0.0)
        if ctx.needs_input_grad[1]:
            undefined = _layout.pointwise((self._data == 0) & (exponent._data >= 0),
                                          self._data, exponent._data)
            grad_exponent = grad * (result * self.log()).where(~undefined, 0.0)
        return grad_self, grad_exponent


class RPow(Op):
    """out = base ** self for a number ``base``;  d self = grad * out * log(base)"""

    node_name = "PowBackward2"
    saved_names = ("exponent", "result")
    saved_values = {"self": "base"}

    @staticmethod
    def forward(ctx, exponent, base, dtype):
        _check_int_power(dtype, exponent)
        ctx.base = base
        work = work_dtype(dtype)
        # torch's result is row-major whatever the exponent's layout
        result = _layout.contiguous(finish(_power(cast(base, work), cast(exponent, work)), dtype))
        ctx.save_for_backward(exponent, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        exponent, result = ctx.saved_tensors
        if ctx.base == 0:
            log_base = Tensor._make(np.where(exponent._data >= 0, 0.0, -np.inf).astype(
                result._data.dtype))
            return grad * (result * log_base).masked_fill(exponent._data >= 0, 0.0), None
        return grad * (result * float(quiet(np.log, ctx.base))), None
