"""More elementwise functions: erfc, logaddexp2, float_power, ldexp, frexp, nextafter, heaviside,
gcd, lcm, and the sign tests isposinf, isneginf, signbit."""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from .. import _dtype
from ..tensor import Tensor
from ._base import (Op, _binary_apply, as_operand, cast, compute, finish, laid_out_like,
                    not_implemented, promote, tensor_operand)
from . import _layout
from ._erf import erf
from .inplace import inplace
from ._util import broadcast_error
from .pointwise_binary import _float_pair
from .unary import _apply_float

_SQRT_PI = math.sqrt(math.pi)
_CONTINUED_FRACTION_FROM = 2.0  # below, 1 - erf(x) loses under 3 digits; above, it loses all
_CONTINUED_FRACTION_TERMS = 64  # enough for full float64 accuracy from x = 2 on


def _erfc(x: np.ndarray) -> np.ndarray:
    """erfc in float64 with relative accuracy in the tail: ``1 - erf(|x|)`` near 0, and for
    ``|x| >= 2`` Laplace's continued fraction ``exp(-x^2) / (sqrt(pi) (x + 1/2 / (x + 1 / (x +
    3/2 / ...))))`` evaluated from the bottom up; ``erfc(-x) = 2 - erfc(x)``."""
    x = np.asarray(x, np.float64)
    size = np.abs(x)
    result = np.asarray(1.0 - erf(size))  # an array even for 0-d input: assigned into below
    far = size >= _CONTINUED_FRACTION_FROM
    if far.any():
        t = np.minimum(size[far], 30.0)  # erfc(30) is below the smallest double already
        fraction = t.copy()
        for k in range(_CONTINUED_FRACTION_TERMS, 0, -1):
            fraction = t + (k / 2) / fraction
        high = t * 134217729.0 - (t * 134217729.0 - t)  # t's upper half: t*t without rounding
        low = t - high
        result[far] = np.exp(-high * high) * np.exp(-low * (t + high)) / (_SQRT_PI * fraction)
    return np.where(x < 0, 2.0 - result, result)


def _erfc_of(x: np.ndarray) -> np.ndarray:
    return _erfc(x).astype(x.dtype, copy=False) if x.dtype != np.float64 else _erfc(x)


class Erfc(Op):
    """d erfc(x) = -2/sqrt(pi) exp(-x^2)"""

    node_name = "ErfcBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self):
        ctx.save_for_backward(self)
        return _apply_float(_erfc_of, self)

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        return (-2 / _SQRT_PI) * (-self.pow(2)).exp() * grad  # torch's order: laid out by self


def erfc(input: Tensor, *, out=None) -> Tensor:
    """``1 - erf(input)``, accurate far into the tail (where erf rounds to 1)."""
    return Erfc.apply(input)


def _logaddexp2(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    larger = np.maximum(a, b)
    spread = -np.abs(a - b)
    result = larger + np.log1p(np.exp2(spread)) / math.log(2)
    return np.where(np.isinf(a) & (a == b), a, result)  # inf stays inf, -inf stays -inf


class Logaddexp2(Op):
    """log2(2^self + 2^other);  d self = 1 / (1 + 2^(other - self))"""

    node_name = "Logaddexp2Backward0"
    saved_names = ("other", "self")

    @staticmethod
    def forward(ctx, self, other, dtype, number):
        if dtype.kind not in "fV":
            raise not_implemented("logaddexp2_cpu", dtype)
        ctx.save_for_backward(other, self)
        a, b, out = _float_pair(self, other, dtype)
        return _layout.pointwise(finish(compute("logaddexp2", _logaddexp2, a, b), out), self,
                                 other, common=out)

    @staticmethod
    def backward(ctx, grad):
        other, self = ctx.saved_tensors
        # laid out as the incoming gradient (torch's formula, through pow(2, .)); row-major
        # when that is an expanded scalar
        return (laid_out_like(grad / (1 + (other - self).exp2()), grad),
                laid_out_like(grad / (1 + (self - other).exp2()), grad))


def logaddexp2(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """``log2(2**input + 2**other)`` computed without overflow."""
    return _binary_apply(Logaddexp2, "logaddexp2", input, as_operand(other, "logaddexp2"))


def float_power(input, exponent, *, out=None) -> Tensor:
    """``input ** exponent`` in double precision (both sides are cast to float64 first)."""
    double = _dtype.float64
    if isinstance(input, Tensor):
        base = input.to(double)
        return base.pow(exponent.to(double) if isinstance(exponent, Tensor) else exponent)
    return exponent.to(double).__rpow__(input)


def float_power_(input: Tensor, exponent) -> Tensor:
    """In place ``float_power``: only a float64 tensor can hold the result."""
    if input._data.dtype != np.float64:
        raise RuntimeError(f"the base given to float_power_ has dtype "
                           f"{_dtype.scalar_type_name(input._data.dtype)} but the operation's "
                           f"result requires dtype Double")
    return input.pow_(exponent.to(_dtype.float64) if isinstance(exponent, Tensor) else exponent)


class Ldexp(Op):
    """self * 2^other;  d self = grad * 2^other (other is an exponent: no gradient)"""

    node_name = "LdexpBackward0"
    saved_names = ("other",)

    @staticmethod
    def forward(ctx, self, other, dtype, number):
        if self.dtype.kind in "fV" and other.dtype == np.bool_:
            # torch's float kernel takes no bool exponent (shapes are checked before)
            try:
                np.broadcast_shapes(self.shape, other.shape)
            except ValueError:
                raise broadcast_error("ldexp", self.shape, other.shape) from None
            raise not_implemented("ldexp_cpu_exp", other.dtype)
        ctx.save_for_backward(other)
        a, b, out = _float_pair(self, other, dtype)
        result = finish(compute("ldexp", lambda x, e: x * np.exp2(e), a, b), out)
        return _layout.pointwise(result, self, other, common=out)

    @staticmethod
    def backward(ctx, grad):
        (other,) = ctx.saved_tensors
        if not ctx.needs_input_grad[0]:
            return None, None
        exponent = other._data
        if exponent.dtype.kind in "iub":  # torch's 2^other here is integer arithmetic
            exponent = exponent.astype(np.int64)
            factor = np.where(exponent >= 0, np.left_shift(1, np.clip(exponent, 0, 62)), 0)
            return grad * Tensor._make(np.ascontiguousarray(factor)), None
        # torch's 2^other here is row-major whatever other's layout, so an expanded incoming
        # gradient gives a row-major gradient
        return grad * other.exp2().contiguous(), None


def ldexp(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """``input * 2 ** other``: builds floats from mantissas and exponents."""
    if not isinstance(other, Tensor):
        raise TypeError(f"ldexp(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")
    return _binary_apply(Ldexp, "ldexp", input, other)


FrexpResult = namedtuple("frexp", ["mantissa", "exponent"])


class Frexp(Op):
    """input = mantissa * 2^exponent;  d mantissa / d input = 2^-exponent"""

    node_name = "FrexpBackward0"
    saved_names = ("exponent",)

    @staticmethod
    def forward(ctx, self):
        if self.dtype.kind not in "fV":
            raise RuntimeError("torch.frexp() only supports floating-point dtypes")
        work = self.astype(np.float32) if self.dtype.kind == "V" else self
        mantissa, exponent = np.frexp(work)
        exponent = exponent.astype(np.int32)
        ctx.save_for_backward(exponent)
        ctx.mark_non_differentiable(exponent)
        return mantissa.astype(self.dtype, copy=False), exponent

    @staticmethod
    def backward(ctx, grad, _grad_exponent=None):
        (exponent,) = ctx.saved_tensors
        return grad / exponent.to(grad.dtype).exp2()


def frexp(input: Tensor, *, out=None):
    """(mantissa, exponent) with ``|mantissa|`` in [0.5, 1) and an int32 exponent."""
    return FrexpResult(*Frexp.apply(input))


class Nextafter(Op):
    """the next representable value after self towards other;  d self = grad where self differs
    from other (0 where they are equal), d other = 0"""

    node_name = "NextafterBackward0"
    saved_names = ("self", "other")

    @staticmethod
    def forward(ctx, self, other, dtype, number):
        if dtype.kind not in "fV":
            raise not_implemented("nextafter_cpu", dtype)
        ctx.save_for_backward(self, other)
        # the step is one unit in the last place of the result dtype: no wider work dtype here
        a, b = cast(self, dtype), cast(other, dtype)
        return _layout.pointwise(finish(compute("nextafter", np.nextafter, a, b), dtype), self,
                                 other, common=dtype)

    @staticmethod
    def backward(ctx, grad):
        self, other = ctx.saved_tensors
        grad_self = grad.where(Tensor._make(self._data != other._data), 0.0) \
            if ctx.needs_input_grad[0] else None
        grad_other = Tensor._make(np.zeros(other.shape, other._data.dtype)) \
            if ctx.needs_input_grad[1] else None
        return grad_self, grad_other


def nextafter(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """The floating-point neighbour of ``input`` in the direction of ``other``, elementwise."""
    if not isinstance(other, Tensor):
        raise TypeError(f"nextafter(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")
    return _binary_apply(Nextafter, "nextafter", input, other)


def nextafter_(input: Tensor, other: Tensor) -> Tensor:
    """In place ``nextafter``: computed in the promoted dtype, stored in this tensor's."""
    if not isinstance(other, Tensor):
        raise TypeError(f"nextafter_(): argument 'other' (position 1) must be Tensor, not "
                        f"{type(other).__name__}")
    return inplace(Nextafter, input, other, promote(input, other), None)


class _NoDerivative(Op):
    """An op torch gives no derivative: its node raises on backward, as torch's does."""

    node_name = "torch::autograd::NotImplemented"
    _op = ""

    @classmethod
    def backward(cls, ctx, grad):
        raise RuntimeError(f"derivative for aten::{cls._op} is not implemented")


class Heaviside(_NoDerivative):
    _op = "heaviside"

    @staticmethod
    def forward(ctx, self, values):
        result = np.where(self == 0, values, (self > 0).astype(self.dtype))
        return _layout.pointwise(np.asarray(result, self.dtype), self, values)


class HeavisideInplace(Heaviside):
    _op = "heaviside_"


def heaviside(input: Tensor, values: Tensor, *, out=None) -> Tensor:
    """The step function: 0 below zero, 1 above, ``values`` at zero."""
    if not isinstance(values, Tensor):
        raise TypeError(f"heaviside(): argument 'values' (position 2) must be Tensor, not "
                        f"{type(values).__name__}")
    if input._data.dtype != values._data.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    try:
        np.broadcast_shapes(input.shape, values.shape)
    except ValueError:
        raise broadcast_error("heaviside", input.shape, values.shape) from None
    return Heaviside.apply(input, values)


def _integer_binary(name: str, fn):
    def op(input: Tensor, other: Tensor, *, out=None) -> Tensor:
        other = tensor_operand(other, name)
        if isinstance(other, Tensor):
            try:
                np.broadcast_shapes(input.shape, other.shape)
            except ValueError:
                raise broadcast_error(name, input.shape, other.shape) from None
        dtype = promote(input, other)
        if dtype.kind not in "iu":
            raise not_implemented(f"{name}_cpu", dtype)
        b = other._data if isinstance(other, Tensor) else other
        result = np.asarray(fn(cast(input._data, dtype), cast(b, dtype)))
        return Tensor._make(_layout.pointwise(result, input._data, b, common=dtype))

    op.__name__ = op.__qualname__ = name
    return op


gcd = _integer_binary("gcd", np.gcd)
gcd.__doc__ = "Greatest common divisor of integer tensors (non-negative; gcd(0, 0) = 0)."
lcm = _integer_binary("lcm", np.lcm)
lcm.__doc__ = "Least common multiple of integer tensors (non-negative)."


def isposinf(input: Tensor, *, out=None) -> Tensor:
    """Elementwise: plus infinity (a bool tensor)."""
    return Tensor._make(np.isposinf(input._data) if input._data.dtype.kind in "fV"
                        else np.zeros(input.shape, bool))


def isneginf(input: Tensor, *, out=None) -> Tensor:
    """Elementwise: minus infinity (a bool tensor)."""
    return Tensor._make(np.isneginf(input._data) if input._data.dtype.kind in "fV"
                        else np.zeros(input.shape, bool))


def signbit(input: Tensor, *, out=None) -> Tensor:
    """Elementwise: the sign bit is set (true for -0.0 too); a bool tensor."""
    data = input._data
    if data.dtype.kind == "b":
        return Tensor._make(np.zeros(data.shape, bool))
    if data.dtype.kind == "V":
        data = data.astype(np.float32)
    return Tensor._make(np.asarray(np.signbit(data)))


def _written(name: str, fn):
    """An in-place form that writes ``fn``'s answer into self (integer and step functions,
    which have no gradient to record)."""
    def op(self: Tensor, other) -> Tensor:
        result = fn(self, other)._data
        if result.dtype != self._data.dtype:
            raise RuntimeError(f"result type {_dtype.scalar_type_name(result.dtype)} can't be "
                               f"cast to the desired output type "
                               f"{_dtype.scalar_type_name(self._data.dtype)}")
        if result.shape != self._data.shape:
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the "
                               f"broadcast shape {list(result.shape)}")
        self._data[...] = result
        self._version_counter[0] += 1
        return self

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"In place ``{name[:-1]}``."
    return op


def heaviside_(input: Tensor, values: Tensor) -> Tensor:
    """In place ``heaviside`` (recorded like torch's: a node without a derivative)."""
    heaviside(input, values)  # the checks
    if tuple(np.broadcast_shapes(input.shape, values.shape)) != tuple(input.shape):
        raise RuntimeError(f"output with shape {list(input.shape)} doesn't match the broadcast "
                           f"shape {list(np.broadcast_shapes(input.shape, values.shape))}")
    return inplace(HeavisideInplace, input, values)


def erfc_(input: Tensor) -> Tensor:
    """In place ``erfc``."""
    return inplace(Erfc, input)


def ldexp_(input: Tensor, other: Tensor) -> Tensor:
    """In place ``ldexp``: ``self *= 2 ** other``."""
    if not isinstance(other, Tensor):
        raise TypeError(f"ldexp_(): argument 'other' (position 1) must be Tensor, not "
                        f"{type(other).__name__}")
    return inplace(Ldexp, input, other, promote(input, other), None)


METHODS = {
    "erfc": erfc, "erfc_": erfc_, "logaddexp2": logaddexp2, "float_power": float_power,
    "float_power_": float_power_, "ldexp": ldexp, "ldexp_": ldexp_, "frexp": frexp,
    "nextafter": nextafter, "nextafter_": nextafter_,
    "heaviside": heaviside, "heaviside_": heaviside_, "gcd": gcd,
    "gcd_": _written("gcd_", gcd), "lcm": lcm, "lcm_": _written("lcm_", lcm),
    "isposinf": isposinf, "isneginf": isneginf, "signbit": signbit,
}
