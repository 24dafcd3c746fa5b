"""torch's comparison, logical and bitwise functions (``eq``, ``lt``, ``logical_and``,
``bitwise_xor``, ``isnan``, ``allclose`` ...): results that record no graph, since a boolean or
integer answer has no gradient."""
from __future__ import annotations

import numpy as np

from .. import _dtype
from ..tensor import Tensor
from . import _layout
from ._base import as_operand, cast, promote, tensor_operand, work_dtype
from ._util import broadcast_error
from .pointwise import _array, _first_tensor, _tensor


def _compare(name: str, fn, numbers: bool = True):
    """A comparison (``numbers``: a Python number may stand for ``other``, as for eq, not for
    the logical functions)."""
    def op(input, other) -> Tensor:
        if other is None or input is None:
            return name == "ne"
        input = _tensor(input, name)
        other = as_operand(other, name) if numbers else tensor_operand(other, name)
        return _apply_pair(name, fn, input, other, promote(input, other))

    op.__name__ = name
    op.__doc__ = _COMPARISON_DOCS[name]
    return op


_COMPARISON_DOCS = {
    "eq": "Elementwise ``input == other`` with broadcasting; a bool tensor, never differentiable.",
    "ne": "Elementwise ``input != other`` with broadcasting; a bool tensor, never differentiable.",
    "lt": "Elementwise ``input < other`` with broadcasting; a bool tensor, never differentiable.",
    "le": "Elementwise ``input <= other`` with broadcasting; a bool tensor, never differentiable.",
    "gt": "Elementwise ``input > other`` with broadcasting; a bool tensor, never differentiable.",
    "ge": "Elementwise ``input >= other`` with broadcasting; a bool tensor, never differentiable.",
    "logical_and": "Elementwise: both nonzero; a bool tensor.",
    "logical_or": "Elementwise: either nonzero; a bool tensor.",
    "logical_xor": "Elementwise: exactly one nonzero; a bool tensor.",
    "bitwise_and": "Elementwise bitwise AND of integer or bool tensors (floats raise, as torch).",
    "bitwise_or": "Elementwise bitwise OR of integer or bool tensors (floats raise, as torch).",
    "bitwise_xor": "Elementwise bitwise XOR of integer or bool tensors (floats raise, as torch).",
}


def _apply_pair(name: str, fn, input: Tensor, other, dtype) -> Tensor:
    """``fn`` on both operands promoted to ``dtype`` (computed in its work dtype); a result
    that records no graph, laid out as torch's elementwise results."""
    work = work_dtype(dtype)
    first, second = input._data, other._data if isinstance(other, Tensor) else other
    a, b = cast(first, work), cast(second, work)
    try:
        return Tensor._make(_layout.pointwise(np.asarray(fn(a, b)), first, second,
                                              common=dtype))
    except ValueError:
        raise broadcast_error(name, a.shape, b.shape) from None


eq = _compare("eq", np.equal)
ne = not_equal = _compare("ne", np.not_equal)
lt = less = _compare("lt", np.less)
le = less_equal = _compare("le", np.less_equal)
gt = greater = _compare("gt", np.greater)
ge = greater_equal = _compare("ge", np.greater_equal)
logical_and = _compare("logical_and", np.logical_and, numbers=False)
logical_or = _compare("logical_or", np.logical_or, numbers=False)
logical_xor = _compare("logical_xor", np.logical_xor, numbers=False)


def _bitwise(name: str, fn):
    def op(input, other) -> Tensor:
        input, other = _first_tensor(input, other, name)
        other = as_operand(other, name)
        dtype = promote(input, other)
        if dtype.kind in "fV":
            raise NotImplementedError(f"\"{name}_cpu\" not implemented for "
                                      f"'{_dtype.scalar_type_name(dtype)}'")
        return _apply_pair(name, fn, input, other, dtype)

    op.__name__ = name
    op.__doc__ = _COMPARISON_DOCS[name]
    return op


bitwise_and = _bitwise("bitwise_and", np.bitwise_and)
bitwise_or = _bitwise("bitwise_or", np.bitwise_or)
bitwise_xor = _bitwise("bitwise_xor", np.bitwise_xor)


def _shifted(a: np.ndarray, b: np.ndarray, left: bool) -> np.ndarray:
    """``a`` shifted by ``b`` bits as torch defines it for every count: a left shift by a count
    outside [0, bits) gives 0; a right shift by one gives 0, or -1 for a negative signed value
    (the sign fills every bit)."""
    bits = a.dtype.itemsize * 8
    counts = np.asarray(b).astype(a.dtype, copy=False)
    outside = (counts < 0) | (counts >= bits)
    inside = np.where(outside, 0, counts).astype(a.dtype, copy=False)
    if left:
        return np.where(outside, 0, np.left_shift(a, inside)).astype(a.dtype, copy=False)
    if a.dtype.kind == "i":  # the sign fill: a shift by bits - 1
        return np.right_shift(a, np.where(outside, bits - 1, inside).astype(a.dtype, copy=False))
    return np.where(outside, 0, np.right_shift(a, inside)).astype(a.dtype, copy=False)


def _shift(name: str, kernel: str, left: bool):
    def op(input, other) -> Tensor:
        input, other = _first_tensor(input, other, name)
        other = as_operand(other, name)
        dtype = promote(input, other)
        if dtype.kind not in "iu":
            raise NotImplementedError(f"\"{kernel}_cpu\" not implemented for "
                                      f"'{_dtype.scalar_type_name(dtype)}'")
        return _apply_pair(name, lambda a, b: _shifted(a, b, left), input, other, dtype)

    op.__name__ = name
    op.__doc__ = (f"Elementwise ``input {'<<' if left else '>>'} other`` on integer tensors "
                  "(floats and bools raise, as torch); counts outside the type's width give 0"
                  + ("." if left else ", or -1 for negative values."))
    return op


bitwise_left_shift = _shift("bitwise_left_shift", "lshift", True)
bitwise_right_shift = _shift("bitwise_right_shift", "rshift", False)


def logical_not(input: Tensor) -> Tensor:
    """Elementwise logical NOT; the result is a bool tensor."""
    return Tensor._make(_layout.pointwise(np.logical_not(input._data), input._data))


def bitwise_not(input: Tensor) -> Tensor:
    """Elementwise bitwise NOT of an integer tensor, logical NOT of a bool one."""
    if input._data.dtype.kind in "fV":
        raise NotImplementedError(f"\"bitwise_not_cpu\" not implemented for "
                                  f"'{_dtype.scalar_type_name(input._data.dtype)}'")
    return Tensor._make(_layout.pointwise(np.invert(input._data), input._data))


def isnan(input: Tensor) -> Tensor:
    """Elementwise: NaN (a bool tensor)."""
    return Tensor._make(_layout.pointwise(np.isnan(input._data), input._data))  # self != self


def isinf(input: Tensor) -> Tensor:
    """Elementwise: plus or minus infinity (a bool tensor)."""
    return Tensor._make(_finite_test(np.isinf(input._data), input._data))


def isfinite(input: Tensor) -> Tensor:
    """Elementwise: neither infinite nor NaN (a bool tensor)."""
    return Tensor._make(_finite_test(np.isfinite(input._data), input._data, finite=True))


def _finite_test(result: np.ndarray, array: np.ndarray, finite: bool = False) -> np.ndarray:
    """``result`` laid out as torch's ``isinf`` (``abs(x) == inf``) or ``isfinite``
    (``(x == x) * (abs(x) != inf)``) for floats: each step's layout in turn, a number being an
    operand; ``zeros_like``/``ones_like`` (``x``'s own layout) for the other dtypes."""
    if array.dtype.kind not in "fV":
        return _layout.preserve(result, array)
    magnitude = _layout.pointwise(result, array)  # abs(x), and x == x
    test = _layout.pointwise(magnitude, magnitude, float("inf"))
    return _layout.pointwise(test, magnitude, test) if finite else test


def equal(input: Tensor, other: Tensor) -> bool:
    """True when both tensors have the same shape and the same elements (a Python bool)."""
    input, other = tensor_operand(input, "equal", 1, "input"), tensor_operand(other, "equal")
    return input._data.shape == other._data.shape and bool(np.array_equal(input._data,
                                                                           other._data))


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """True when every pair of elements satisfies ``isclose`` (a Python bool)."""
    return bool(np.allclose(input._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan))


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """Elementwise ``|input - other| <= atol + rtol * |other|``; NaNs equal only with ``equal_nan``.
    """
    other = tensor_operand(other, "isclose")
    if input._data.dtype != other._data.dtype:
        raise RuntimeError(f"{_dtype.scalar_type_name(input._data.dtype)} did not match "
                           f"{_dtype.scalar_type_name(other._data.dtype)}")
    other = _array(other)
    close = np.asarray(np.isclose(input._data, other, rtol=rtol, atol=atol, equal_nan=equal_nan))
    return Tensor._make(_layout.pointwise(close, input._data, other))  # as self == other
