"""torch-level functions for elementwise math, clamping, masking and in-place updates: argument
handling and type promotion here; the differentiable ops in ``arithmetic.py``, ``unary.py``
and ``selection.py``. Comparisons and logic (never differentiable) are in ``comparison.py``."""
from __future__ import annotations

import numpy as np

from .. import _dtype
from ..autograd.saved import array_for_forward
from ..tensor import Tensor
from . import inplace as _inplace
from . import selection as S
from . import unary as U
from ._base import (Original, _binary_apply, as_operand, cast, check_inplace_cast,
                    check_number_fits, is_number, promote, python_number, wrap_number)
from .arithmetic import (Add, Div, DivMode, FloorDivide, FloorDivideScalar, Mul, Pow, PowTensor,
                         RPow, Remainder, RemainderScalar, Rsub, RsubScalar, Sub)
from ._out import write_out


def _tensor(value, op_name: str, name: str = "input", position: int = 1) -> Tensor:
    if isinstance(value, Tensor):
        return value
    if isinstance(value, np.ndarray):
        return as_operand(value, op_name)
    raise TypeError(f"{op_name}(): argument '{name}' (position {position}) must be Tensor, not "
                    f"{type(value).__name__}")


def _first_tensor(input, other, op_name: str):
    """(tensor, other): a number first operand is wrapped as torch wraps it."""
    if isinstance(input, (Tensor, np.ndarray)):
        return _tensor(input, op_name), other
    if is_number(input) and isinstance(other, Tensor):
        number = python_number(input)
        return Tensor._make(cast(number, promote(number, other))), other
    raise TypeError(f"{op_name}(): argument 'input' (position 1) must be Tensor, not "
                    f"{type(input).__name__}")


def _pointwise_out(out, result: Tensor, op_name: str) -> Tensor:
    """``out=`` of the arithmetic ops: torch's TensorIterator casts through a temporary."""
    return write_out(out, result, op_name, casts_through_temporary=True)


# arithmetic ----------------------------------------------------------------------------------
def add(input, other, *, alpha=1, out=None) -> Tensor:
    """input + alpha * other"""
    if out is None and isinstance(input, Tensor):
        return _binary_apply(Add, "add", input, other, alpha)
    input, other = _first_tensor(input, other, "add")
    return _pointwise_out(out, _binary_apply(Add, "add", input, other, alpha), "add")


def sub(input, other, *, alpha=1, out=None) -> Tensor:
    """input - alpha * other"""
    if out is None and isinstance(input, Tensor):
        return _binary_apply(Sub, "sub", input, other, alpha)
    input, other = _first_tensor(input, other, "sub")
    return _pointwise_out(out, _binary_apply(Sub, "sub", input, other, alpha), "sub")


subtract = sub


def rsub(input, other, *, alpha=1) -> Tensor:
    """other - alpha * input"""
    kind = type(other)
    if (kind is float or kind is int) and isinstance(input, Tensor) and \
            input._data.dtype.kind in "fV":  # a float tensor keeps its dtype
        return RsubScalar.apply(input, other, input._data.dtype, alpha)
    input = _tensor(input, "rsub")
    other = as_operand(other, "rsub")
    if isinstance(other, Tensor):
        return _binary_apply(Rsub, "rsub", input, other, alpha)
    return RsubScalar.apply(input, other, promote(input, other), alpha)


def mul(input, other, *, out=None) -> Tensor:
    """input * other"""
    if out is None and isinstance(input, Tensor):
        return _binary_apply(Mul, "mul", input, other)
    if not isinstance(input, (Tensor, np.ndarray)) and isinstance(other, Tensor):
        input, other = other, input
    return _pointwise_out(out, _binary_apply(Mul, "mul", _tensor(input, "mul"), other), "mul")


multiply = mul


def div(input, other, *, rounding_mode=None, out=None) -> Tensor:
    """input / other, optionally rounded ('trunc' or 'floor'); integers divide to floats"""
    if rounding_mode is None and out is None and isinstance(input, Tensor):
        return _binary_apply(Div, "div", input, other)
    if rounding_mode is None and not isinstance(input, (Tensor, np.ndarray)) and \
            isinstance(other, Tensor) and is_number(input):
        return _pointwise_out(out, mul(reciprocal(other), input), "div")  # torch's number / tensor
    input, other = _first_tensor(input, other, "div")
    if rounding_mode is None:
        result = _binary_apply(Div, "div", input, other)
    else:
        result = _binary_apply(DivMode, "div", input, other, rounding_mode)
    return _pointwise_out(out, result, "div")


divide = true_divide = div


def floor_divide(input, other) -> Tensor:
    """Elementwise ``floor(input / other)``, as torch's (rounds toward minus infinity)."""
    input, other = _first_tensor(input, other, "floor_divide")
    other = as_operand(other, "floor_divide")
    if isinstance(other, Tensor):
        return _binary_apply(FloorDivide, "floor_divide", input, other)
    return FloorDivideScalar.apply(input, other, promote(input, other))


def remainder(input, other) -> Tensor:
    """input - floor(input / other) * other (the sign of other, as Python's %)"""
    input, other = _first_tensor(input, other, "remainder")
    other = as_operand(other, "remainder")
    if isinstance(other, Tensor):
        return _binary_apply(Remainder, "remainder", input, other)
    return RemainderScalar.apply(input, other, promote(input, other))


def pow(input, exponent) -> Tensor:
    """input ** exponent for tensors or numbers on either side"""
    if not isinstance(input, (Tensor, np.ndarray)):
        base = as_operand(input, "pow", 1)
        exponent = _tensor(exponent, "pow", "exponent", 2)
        if isinstance(base, Tensor):
            return _binary_apply(PowTensor, "pow", base, exponent)
        return RPow.apply(exponent, base, promote(base, exponent))
    input = _tensor(input, "pow")
    exponent = as_operand(exponent, "pow")
    if isinstance(exponent, Tensor):
        return _binary_apply(PowTensor, "pow", input, exponent)
    dtype = promote(input, exponent)
    # float32's kernel takes the exponent as a double; a negative integer exponent of an
    # integer tensor is refused by pow itself
    if (dtype.kind in "iu" and not (isinstance(exponent, int) and exponent < 0)) or \
            dtype.name in ("float16", "bfloat16"):
        check_number_fits(exponent, dtype)
    return Pow.apply(input, exponent, dtype)


def square(input: Tensor) -> Tensor:
    """``input * input`` elementwise."""
    return pow(input, 2)


def maximum(input: Tensor, other: Tensor) -> Tensor:
    """elementwise max; ties split the gradient"""
    return _binary_apply(S.Maximum, "maximum", _tensor(input, "maximum"),
                           _tensor(other, "maximum", "other", 2))


def fmax(input: Tensor, other: Tensor) -> Tensor:
    """elementwise max ignoring NaN"""
    return _binary_apply(S.Fmax, "fmax", _tensor(input, "fmax"), _tensor(other, "fmax", "other", 2))


def fmin(input: Tensor, other: Tensor) -> Tensor:
    """elementwise min ignoring NaN"""
    return _binary_apply(S.Fmin, "fmin", _tensor(input, "fmin"), _tensor(other, "fmin", "other", 2))


def minimum(input: Tensor, other: Tensor) -> Tensor:
    """elementwise min; ties split the gradient"""
    return _binary_apply(S.Minimum, "minimum", _tensor(input, "minimum"),
                           _tensor(other, "minimum", "other", 2))


# selection -----------------------------------------------------------------------------------
def _bool_array(value, message: str) -> np.ndarray:
    # a mask tensor's array is saved as the tensor (its version checked in backward)
    array = array_for_forward(value) if isinstance(value, Tensor) else np.asarray(value)
    if array.dtype != np.bool_:
        raise RuntimeError(message.format(_dtype.scalar_type_name(array.dtype)))
    return array


def where(condition, input=None, other=None, *, out=None) -> Tensor:
    """input where condition else other; either branch may be a number (not with ``out``)"""
    if input is None and other is None:
        return tuple(Tensor._make(i) for i in np.nonzero(_array(condition)))
    if out is not None:  # only torch's all-tensor overload takes out
        for position, (name, value) in enumerate((("input", input), ("other", other)), 2):
            if not isinstance(value, Tensor):
                raise TypeError(f"where(): argument '{name}' (position {position}) must be "
                                f"Tensor, not {type(value).__name__}")
        return write_out(out, where(condition, input, other), "where",
                         same_dtype=_where_out_dtype)
    mask = _bool_array(condition, "where expected condition to be a boolean tensor, but got a "
                                  "tensor with dtype {}")
    input, other = as_operand(input, "where", 2), as_operand(other, "where", 3)
    dtype = promote(input, other)
    for number in (input, other):
        if not isinstance(number, Tensor):
            check_number_fits(number, dtype, halves=False)
    input = input if isinstance(input, Tensor) else wrap_number(input, dtype)
    other = other if isinstance(other, Tensor) else wrap_number(other, dtype)
    return S.Where.apply(mask, input, other, dtype)


def _masked_fill(input: Tensor, mask, value, scalar_cls, tensor_cls) -> Tensor:
    mask = _array(mask)
    if mask.dtype != np.bool_:
        raise S.mask_dtype_error(mask.dtype)
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value._data.ndim} dimension(s).")
        return tensor_cls.apply(input, mask, value)
    if isinstance(input, Tensor):
        check_number_fits(value, input._data.dtype)
    return scalar_cls.apply(input, mask, python_number(value))


def masked_fill(input: Tensor, mask, value) -> Tensor:
    """value where mask else input"""
    return _masked_fill(input, mask, value, S.MaskedFill, S.MaskedFillTensor)


def masked_fill_(input: Tensor, mask, value) -> Tensor:
    """In place: sets the elements where the bool ``mask`` is True to ``value``."""
    return _masked_fill(input, mask, value, S.MaskedFillInplace, S.MaskedFillTensorInplace)


def _array(value) -> np.ndarray:
    """A mask's array (a tensor's is saved as the tensor, its version checked in backward)."""
    return array_for_forward(value) if isinstance(value, Tensor) else np.asarray(value)


def _where_out_dtype(result: np.dtype, out: np.dtype) -> str:
    name = _dtype.scalar_type_name
    return f"Expected out type to be {name(result)} but got {name(out)}"


# clamp -----------------------------------------------------------------------------------------
_ABSENT = Tensor._make(np.zeros(0))  # an absent tensor bound: an edge without gradient


_PLAIN_BOUND = (float, int, type(None))


def _number_bounds(min, max, op_name: str):
    """A number and a tensor bound: torch's parser then takes the number overload, which
    reads a 0-d tensor that needs no grad as its number; any other tensor matches neither."""
    tensor, number = (min, max) if isinstance(min, Tensor) else (max, min)
    if not isinstance(tensor, Tensor) or isinstance(number, Tensor) or not is_number(number):
        return min, max
    if tensor._data.ndim or tensor.requires_grad:
        given = ", ".join(type(b).__name__ if not isinstance(b, Tensor) else "Tensor"
                          for b in (min, max))
        prefix = "" if op_name.endswith("_") else "Tensor, "
        raise TypeError(f"{op_name}() received an invalid combination of arguments - got "
                        f"({prefix}{given}), but expected one of: (Tensor min, Tensor max) or "
                        "(Number min, Number max)")
    value = tensor.item()
    return (value, max) if tensor is min else (min, value)


def _clamp_args(input, min, max, op_name: str):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if min is not None and max is not None:
        min, max = _number_bounds(min, max, op_name)
    if type(min) in _PLAIN_BOUND and type(max) in _PLAIN_BOUND and isinstance(input, Tensor) \
            and input._data.dtype.kind in "fV":  # number bounds keep a float tensor's dtype
        _check_bounds_fit(min, max, input._data.dtype)
        return input, min, max, input._data.dtype, False
    input = _tensor(input, op_name)
    min = None if min is None else as_operand(min, op_name)
    max = None if max is None else as_operand(max, op_name)
    tensors = [isinstance(b, Tensor) for b in (min, max) if b is not None]
    if any(tensors) and not all(tensors):
        raise TypeError(f"{op_name}() received an invalid combination of arguments: min and max "
                        "must both be tensors or both be numbers")
    dtype = _dtype.result_type(input, *[b for b in (min, max) if b is not None]).numpy
    if not any(tensors):
        _check_bounds_fit(min, max, dtype)
    return input, min, max, dtype, any(tensors)


def _check_bounds_fit(min, max, dtype: np.dtype) -> None:
    for bound in (min, max):
        if bound is not None:
            check_number_fits(bound, dtype)


def clamp(input: Tensor, min=None, max=None, *, out=None) -> Tensor:
    """min(max(input, min), max); the gradient passes where min <= input <= max"""
    input, min, max, dtype, tensor_bounds = _clamp_args(input, min, max, "clamp")
    if tensor_bounds:
        result = S.ClampTensor.apply(input, _ABSENT if min is None else min,
                                     _ABSENT if max is None else max, dtype,
                                     min is not None, max is not None)
    else:
        result = S.Clamp.apply(input, min, max, dtype)
    # with number bounds torch's kernel wants out in the result's dtype; tensor bounds cast
    return write_out(out, result, "clamp", same_dtype=not tensor_bounds and _clamp_out_dtype,
                     casts_through_temporary=True)


def _clamp_out_dtype(result: np.dtype, out: np.dtype) -> str:
    """clamp's error for an ``out`` of another dtype than its result's."""
    name = _dtype.scalar_type_name
    return f"Found dtype {name(out)} but expected {name(result)}"


clip = clamp


def clamp_(input: Tensor, min=None, max=None) -> Tensor:
    """In place ``clamp``: limits every element to ``[min, max]``."""
    input, min, max, dtype, tensor_bounds = _clamp_args(input, min, max, "clamp_")
    if tensor_bounds:  # torch's order: the shapes, then the cast (named as a ScalarType)
        for bound in (min, max):
            if bound is not None:
                S._check_inplace_shape(input._data.shape, bound._data.shape)
        check_inplace_cast(dtype, input._data.dtype)
    elif not _dtype.can_cast(_dtype.from_numpy_dtype(dtype), input.dtype):
        raise RuntimeError(f"result type {_dtype.scalar_type_name(dtype)} can't be cast to the "
                           f"desired output type {S._C_TYPE.get(input._data.dtype.name)}")
    original = Original(input) if Original.needed(input, min, max) else None
    if tensor_bounds:
        result = S.ClampTensorInplace.apply(input, _ABSENT if min is None else min,
                                            _ABSENT if max is None else max, dtype,
                                            min is not None, max is not None, original)
    else:
        result = S.ClampInplace.apply(input, min, max, dtype, original)
    return result


clip_ = clamp_


def clamp_min_(input: Tensor, min) -> Tensor:
    """In place ``clamp_min``."""
    input, min, _, dtype, tensor_bound = _clamp_args(input, min, None, "clamp_min_")
    if tensor_bound:
        return _inplace.inplace(S.ClampMinTensor, input, min, dtype)
    return _inplace.inplace(S.ClampMin, input, min, None, dtype)


def clamp_max_(input: Tensor, max) -> Tensor:
    """In place ``clamp_max``."""
    input, _, max, dtype, tensor_bound = _clamp_args(input, None, max, "clamp_max_")
    if tensor_bound:
        return _inplace.inplace(S.ClampMaxTensor, input, max, dtype)
    return _inplace.inplace(S.ClampMax, input, None, max, dtype)


def clamp_min(input: Tensor, min) -> Tensor:
    """``max(input, min)`` elementwise: a lower bound only."""
    input, min, _, dtype, tensor_bound = _clamp_args(input, min, None, "clamp_min")
    if tensor_bound:
        return S.ClampMinTensor.apply(input, min, dtype)
    return S.ClampMin.apply(input, min, None, dtype)


def clamp_max(input: Tensor, max) -> Tensor:
    """``min(input, max)`` elementwise: an upper bound only."""
    input, _, max, dtype, tensor_bound = _clamp_args(input, None, max, "clamp_max")
    if tensor_bound:
        return S.ClampMaxTensor.apply(input, max, dtype)
    return S.ClampMax.apply(input, None, max, dtype)


# in-place arithmetic -----------------------------------------------------------------------
def add_(input: Tensor, other, *, alpha=1) -> Tensor:
    """In place ``self += alpha * other``; ``other`` must broadcast to ``self``'s shape."""
    return _inplace.inplace_binary(_inplace.AddInplace, "add_", input, other, alpha)


def sub_(input: Tensor, other, *, alpha=1) -> Tensor:
    """In place ``self -= alpha * other``; ``other`` must broadcast to ``self``'s shape."""
    return _inplace.inplace_binary(_inplace.SubInplace, "sub_", input, other, alpha)


def mul_(input: Tensor, other) -> Tensor:
    """In place ``self *= other``; ``other`` must broadcast to ``self``'s shape."""
    return _inplace.inplace_binary(_inplace.MulInplace, "mul_", input, other)


def div_(input: Tensor, other) -> Tensor:
    """In place ``self /= other`` (``rounding_mode`` as in ``div``)."""
    return _inplace.inplace_binary(_inplace.DivInplace, "div_", input, other)


# reflected operators (``2 - x``, ``array / x``): an array operand is a tensor on its memory --
def _reflected(fn, number_first=None):
    """Tensor's ``__r<op>__``: ``other <op> self``. A number ``other`` goes through
    ``number_first(self, other)`` when given (``2 + x`` is ``x + 2`` in torch)."""
    def op(self: Tensor, other):
        if number_first is not None and (type(other) is float or type(other) is int):
            return number_first(self, other)
        other = as_operand(other, fn.__name__)
        if number_first is not None and not isinstance(other, Tensor):
            return number_first(self, other)
        return fn(other, self)

    return op


radd = _reflected(add, add)
rmul = _reflected(mul, mul)
rsub_operator = _reflected(sub, rsub)
rtruediv = _reflected(div)
rfloordiv = _reflected(floor_divide)
rmod = _reflected(remainder)
rpow = _reflected(pow)


# unary math and activations --------------------------------------------------------------------
def _unary(cls, name: str):
    def op(input: Tensor) -> Tensor:
        return cls.apply(input if isinstance(input, Tensor) else _tensor(input, name))

    op.__name__ = name
    op.__doc__ = cls.__doc__
    return op


neg = negative = _unary(U.Neg, "neg")
exp = _unary(U.Exp, "exp")
log = _unary(U.Log, "log")
log1p = _unary(U.Log1p, "log1p")
sqrt = _unary(U.Sqrt, "sqrt")
rsqrt = _unary(U.Rsqrt, "rsqrt")
reciprocal = _unary(U.Reciprocal, "reciprocal")
abs = absolute = _unary(U.Abs, "abs")
sign = _unary(U.Sign, "sign")
sgn = _unary(U.Sgn, "sgn")
sin = _unary(U.Sin, "sin")
cos = _unary(U.Cos, "cos")
tanh = _unary(U.Tanh, "tanh")
sigmoid = _unary(U.Sigmoid, "sigmoid")
erf = _unary(U.Erf, "erf")
floor = _unary(U.Floor, "floor")
ceil = _unary(U.Ceil, "ceil")
trunc = fix = _unary(U.Trunc, "trunc")


def round(input: Tensor, *, decimals: int = 0) -> Tensor:
    """to the nearest integer (half to even), or to ``decimals`` decimal places"""
    if decimals:
        return U.RoundDecimals.apply(input, decimals)
    return U.Round.apply(input)
