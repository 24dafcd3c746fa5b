"""torch-level functions for elementwise math, comparisons and in-place updates."""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from . import elementwise as E
from ._util import broadcast_error, cast, default_float, promote


def _tensor_arg(name: str, value) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(value).__name__}")
    return value


def add(input, other, *, alpha=1, out=None) -> Tensor:
    if not isinstance(input, Tensor):
        input, other = other, input
    return E._binary(E.Add, "add", input, other, alpha=alpha)


def sub(input, other, *, alpha=1, out=None) -> Tensor:
    if not isinstance(input, Tensor):
        return rsub(other, input, alpha=alpha)
    return E._binary(E.Sub, "sub", input, other, alpha=alpha)


subtract = sub


def rsub(input: Tensor, other, *, alpha=1) -> Tensor:
    """other - alpha * input"""
    if isinstance(other, Tensor):
        return sub(other, input, alpha=alpha)
    dtype = promote(input, other)
    return E.Rsub.apply(input, other, dtype, alpha)


def mul(input, other, *, out=None) -> Tensor:
    if not isinstance(input, Tensor):
        input, other = other, input
    return E._binary(E.Mul, "mul", input, other)


multiply = mul


def div(input, other, *, rounding_mode=None, out=None) -> Tensor:
    if not isinstance(input, Tensor):
        return reciprocal(other) * input
    return E._binary(E.Div, "div", input, other, rounding_mode=rounding_mode)


divide = true_divide = div


def floor_divide(input, other) -> Tensor:
    return div(input, other, rounding_mode="floor")


def remainder(input, other) -> Tensor:
    return input - floor_divide(input, other) * other


def pow(input, exponent) -> Tensor:
    if not isinstance(input, Tensor):
        dtype = promote(exponent, input)
        return E.RPow.apply(exponent, input, dtype)
    if isinstance(exponent, Tensor):
        return E._binary(E.PowTensor, "pow", input, exponent)
    dtype = promote(input, exponent)
    return E.Pow.apply(input, exponent, dtype)


def maximum(input: Tensor, other: Tensor) -> Tensor:
    return E._binary(E.Maximum, "maximum", input, other)


def minimum(input: Tensor, other: Tensor) -> Tensor:
    return E._binary(E.Minimum, "minimum", input, other)


def where(condition, input=None, other=None) -> Tensor:
    if input is None and other is None:
        return tuple(Tensor._make(i) for i in np.nonzero(_array(condition)))
    cond = _array(condition)
    if cond.dtype != np.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {cond.dtype}")
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        dtype = promote(Tensor._make(np.asarray(input)), other)
        return Tensor._make(np.where(cond, input, other).astype(dtype))
    if not isinstance(input, Tensor):
        input = Tensor._make(np.asarray(input, dtype=promote(other, input)))
    if not isinstance(other, Tensor):
        other = Tensor._make(np.asarray(other, dtype=promote(input, other)))
    dtype = promote(input, other)
    return E.Where.apply(cond, input, other, dtype)


def masked_fill(input: Tensor, mask, value) -> Tensor:
    if isinstance(value, Tensor):
        if value.requires_grad:
            return where(mask, value.to(input.dtype).expand_as(input), input)
        value = value.item()
    return E.MaskedFill.apply(input, _array(mask), value)


def masked_fill_(input: Tensor, mask, value) -> Tensor:
    if isinstance(value, Tensor):
        value = value.item()
    return E.MaskedFillInplace.apply(input, _array(mask), value)


def _array(value) -> np.ndarray:
    return value._data if isinstance(value, Tensor) else np.asarray(value)


def _unary(cls):
    def op(input: Tensor) -> Tensor:
        return cls.apply(input)

    op.__name__ = cls.__name__.lower()
    op.__doc__ = cls.__doc__
    return op


neg = negative = _unary(E.Neg)
exp = _unary(E.Exp)
log = _unary(E.Log)
log1p = _unary(E.Log1p)
sqrt = _unary(E.Sqrt)
rsqrt = _unary(E.Rsqrt)
reciprocal = _unary(E.Reciprocal)
abs = absolute = _unary(E.Abs)
sign = sgn = _unary(E.Sign)
sin = _unary(E.Sin)
cos = _unary(E.Cos)
tanh = _unary(E.Tanh)
sigmoid = _unary(E.Sigmoid)
relu = _unary(E.Relu)
relu_ = _unary(E.ReluInplace)
silu = _unary(E.Silu)
erf = _unary(E.Erf)


def square(input: Tensor) -> Tensor:
    return pow(input, 2)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    return E.Gelu.apply(input, approximate)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    return E.Softplus.apply(input, beta, threshold)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    return E.LeakyRelu.apply(input, negative_slope)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return E.Elu.apply(input, alpha)


def clamp(input: Tensor, min=None, max=None) -> Tensor:
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        result = input
        if min is not None:
            result = maximum(result, min if isinstance(min, Tensor) else
                             Tensor._make(np.asarray(min, input._data.dtype)))
        if max is not None:
            result = minimum(result, max if isinstance(max, Tensor) else
                             Tensor._make(np.asarray(max, input._data.dtype)))
        return result
    return E.Clamp.apply(input, min, max)


clip = clamp


def clamp_(input: Tensor, min=None, max=None) -> Tensor:
    return E.ClampInplace.apply(input, min, max)


def clamp_min(input: Tensor, min) -> Tensor:
    return clamp(input, min=min)


def clamp_max(input: Tensor, max) -> Tensor:
    return clamp(input, max=max)


# in-place arithmetic -----------------------------------------------------------------------
def add_(input: Tensor, other, *, alpha=1) -> Tensor:
    return E.inplace_binary(input, other, "add", alpha)


def sub_(input: Tensor, other, *, alpha=1) -> Tensor:
    return E.inplace_binary(input, other, "sub", alpha)


def mul_(input: Tensor, other) -> Tensor:
    return E.inplace_binary(input, other, "mul")


def div_(input: Tensor, other) -> Tensor:
    return E.inplace_binary(input, other, "div")


# comparisons and logic: never differentiable --------------------------------------------------
def _compare(name: str, fn):
    def op(input, other) -> Tensor:
        if other is None or input is None:
            return name == "ne"
        a = _array(input)
        b = _array(other)
        if isinstance(input, Tensor) and not isinstance(other, Tensor):
            b = cast(other, promote(input, other)) if not isinstance(other, np.ndarray) else b
        try:
            return Tensor._make(np.asarray(fn(a, b)))
        except ValueError:
            raise broadcast_error(name, np.shape(a), np.shape(b)) from None

    op.__name__ = name
    return op


eq = _compare("eq", np.equal)
ne = not_equal = _compare("ne", np.not_equal)
lt = less = _compare("lt", np.less)
le = less_equal = _compare("le", np.less_equal)
gt = greater = _compare("gt", np.greater)
ge = greater_equal = _compare("ge", np.greater_equal)
logical_and = _compare("logical_and", np.logical_and)
logical_or = _compare("logical_or", np.logical_or)
logical_xor = _compare("logical_xor", np.logical_xor)


def _bitwise(name: str, fn):
    def op(input, other) -> Tensor:
        a, b = _array(input), _array(other)
        if a.dtype.kind == "f" or np.asarray(b).dtype.kind == "f":
            raise RuntimeError(f"\"{name}_cpu\" not implemented for 'Float'")
        return Tensor._make(np.asarray(fn(a, b)))

    op.__name__ = name
    return op


bitwise_and = _bitwise("bitwise_and", np.bitwise_and)
bitwise_or = _bitwise("bitwise_or", np.bitwise_or)
bitwise_xor = _bitwise("bitwise_xor", np.bitwise_xor)


def logical_not(input: Tensor) -> Tensor:
    return Tensor._make(np.logical_not(input._data))


def bitwise_not(input: Tensor) -> Tensor:
    if input._data.dtype.kind == "f":
        raise RuntimeError("\"bitwise_not_cpu\" not implemented for 'Float'")
    return Tensor._make(np.invert(input._data))


def isnan(input: Tensor) -> Tensor:
    return Tensor._make(np.isnan(input._data))


def isinf(input: Tensor) -> Tensor:
    return Tensor._make(np.isinf(input._data))


def isfinite(input: Tensor) -> Tensor:
    return Tensor._make(np.isfinite(input._data))


def equal(input: Tensor, other: Tensor) -> bool:
    return input._data.shape == other._data.shape and bool(np.array_equal(input._data,
                                                                           other._data))


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    return bool(np.allclose(input._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan))


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    return Tensor._make(np.isclose(input._data, _array(other), rtol=rtol, atol=atol,
                                   equal_nan=equal_nan))


def floor(input: Tensor) -> Tensor:
    return _no_grad_unary(input, np.floor)


def ceil(input: Tensor) -> Tensor:
    return _no_grad_unary(input, np.ceil)


def round(input: Tensor, decimals: int = 0) -> Tensor:
    return _no_grad_unary(input, lambda a: np.round(a, decimals))


def trunc(input: Tensor) -> Tensor:
    return _no_grad_unary(input, np.trunc)


def _no_grad_unary(input: Tensor, fn) -> Tensor:
    """Piecewise-constant functions: zero gradient, as torch gives."""
    result = input.detach().clone() if input.requires_grad else None
    if result is None:
        return Tensor._make(fn(input._data))
    return input - (input - Tensor._make(fn(input._data))).detach()


def default_dtype_float():
    return default_float()
