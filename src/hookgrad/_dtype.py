"""Torch's dtype objects over NumPy dtypes, and torch's type-promotion rules."""
from __future__ import annotations

import builtins

import numpy as np


class dtype:
    """A tensor element type; prints like torch's (``torch.float32``)."""

    __slots__ = (
        "_category",
        "is_complex",
        "is_floating_point",
        "is_signed",
        "itemsize",
        "name",
        "_numpy",
    )

    def __init__(self, name: str, numpy_dtype, category: int, itemsize: int = 0):
        self.name = name
        # None when the NumPy type lives in an optional package that is not installed (bfloat16)
        self._numpy = None if numpy_dtype is None else np.dtype(numpy_dtype)
        self.is_floating_point = category == 2
        self.is_complex = False
        self.is_signed = category != 0 and (self._numpy is None or self._numpy.kind != "u")
        self.itemsize = itemsize or self._numpy.itemsize
        self._category = category  # 0 bool, 1 integer, 2 floating

    def __repr__(self) -> str:
        return "torch." + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))

    @property
    def numpy(self) -> np.dtype:
        """The NumPy dtype arrays of this type use; an ImportError names the extra that
        provides it when it comes from a package that is not installed."""
        if self._numpy is None:
            raise ImportError(f"{self!r} tensors need the ml_dtypes package: "
                              "pip install 'hookgrad[bfloat16]' (or pip install ml_dtypes)")
        return self._numpy

    def to_real(self) -> dtype:
        """The real dtype of the same precision: this dtype itself, since hookgrad has no complex
        dtypes."""
        return self


float32 = dtype("float32", np.float32, 2)
float64 = dtype("float64", np.float64, 2)
float16 = dtype("float16", np.float16, 2)


def _bfloat16_numpy():
    # NumPy has no bfloat16; ml_dtypes (extra ``hookgrad[bfloat16]``) registers one
    try:
        import ml_dtypes
    except ImportError:
        return None
    return ml_dtypes.bfloat16


bfloat16 = dtype("bfloat16", _bfloat16_numpy(), 2, itemsize=2)
# ml_dtypes' bfloat16 has NumPy kind "V", so the engine tests floating arrays with
# ``kind in "fV"`` (no other "V" dtype ever reaches a tensor: from_numpy_dtype refuses them)
int64 = dtype("int64", np.int64, 1)
int32 = dtype("int32", np.int32, 1)
int16 = dtype("int16", np.int16, 1)
int8 = dtype("int8", np.int8, 1)
uint8 = dtype("uint8", np.uint8, 1)
bool_ = dtype("bool", np.bool_, 0)
float = float32
double = float64
half = float16
long = int64
int = int32
short = int16

_ALL = (float32, float64, float16, bfloat16, int64, int32, int16, int8, uint8, bool_)
_FROM_NUMPY = {d._numpy: d for d in _ALL if d._numpy is not None}
BFLOAT16_NUMPY = bfloat16._numpy  # None without ml_dtypes

_HALF = np.dtype(np.float16)
_DOUBLE = np.dtype(np.float64)


def astype(array: np.ndarray, np_dtype: np.dtype) -> np.ndarray:
    """``array.astype(np_dtype)``, rounding as torch does: torch turns a double into a half by
    way of float (two roundings), where NumPy rounds once; the two differ when the double lies
    within a float's rounding of a half-way point between two halves."""
    if np_dtype == _HALF and array.dtype == _DOUBLE:
        with np.errstate(over="ignore"):  # torch overflows to inf without a word
            return array.astype(np.float32).astype(np_dtype)
    return array.astype(np_dtype)


def copyto(target: np.ndarray, source, **kwargs) -> None:
    """``np.copyto(target, source, casting="unsafe", ...)`` with ``astype``'s rounding."""
    if target.dtype == _HALF and getattr(source, "dtype", None) == _DOUBLE:
        with np.errstate(over="ignore"):
            np.copyto(target, source.astype(np.float32), casting="unsafe", **kwargs)
        return
    np.copyto(target, source, casting="unsafe", **kwargs)


def _by_name(name: str) -> dtype:
    return bool_ if name == "bool" else globals()[name]


def from_numpy_dtype(numpy_dtype) -> dtype:
    try:
        return _FROM_NUMPY[numpy_dtype]
    except KeyError:
        raise TypeError(f"hookgrad has no dtype for numpy.{np.dtype(numpy_dtype)}") from None


def to_numpy_dtype(d) -> np.dtype:
    """Accept a hookgrad dtype, a NumPy dtype, or a Python type, as torch's factories do."""
    if isinstance(d, dtype):
        return d.numpy
    if d is builtins_float:  # torch: dtype=float is float64, whatever the default
        return float64.numpy
    if d is builtins_int:
        return np.dtype(np.int64)
    if d is builtins_bool:
        return np.dtype(np.bool_)
    return from_numpy_dtype(np.dtype(d)).numpy


builtins_float, builtins_int, builtins_bool = builtins.float, builtins.int, builtins.bool
_default = float32


def get_default_dtype() -> dtype:
    """The floating dtype that new float tensors get (float32 unless changed)."""
    return _default


def set_default_dtype(d: dtype) -> None:
    """Sets the floating dtype that new float tensors get; a non-floating dtype raises TypeError."""
    global _default
    if not (isinstance(d, dtype) and d.is_floating_point):
        raise TypeError("only floating-point types are supported as the default type")
    _default = d


def promote_types(a: dtype, b: dtype) -> dtype:
    """The smallest dtype both ``a`` and ``b`` convert to; a higher category (bool < integer <
    floating) wins outright, so ``promote_types(int64, float16)`` is float16 as in torch."""
    if a is b:
        return a
    if a._category != b._category:
        return a if a._category > b._category else b
    if a is bfloat16 or b is bfloat16:
        # neither half type holds the other: bfloat16 with float16 meets at float32
        other = b if a is bfloat16 else a
        return float32 if other is float16 else other
    return from_numpy_dtype(np.promote_types(a.numpy, b.numpy))


def can_cast(from_: dtype, to: dtype) -> bool:
    """torch's same-kind rule: never to a lower category (float to int, int to bool)."""
    return from_._category <= to._category


_SCALAR_TYPE = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
                "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
                "bfloat16": "BFloat16"}


def scalar_type_name(d) -> str:
    """torch's C++ name for a dtype, as its error messages print it ('Float', 'Long')."""
    name = d.name if isinstance(d, dtype) else np.dtype(d).name
    return _SCALAR_TYPE.get(name, name)


_CPP_TYPE = {"float32": "float", "float64": "double", "float16": "c10::Half",
             "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int", "int16": "short int",
             "int8": "signed char", "uint8": "unsigned char", "bool": "bool"}


def cpp_type_name(d) -> str:
    """The C++ type torch's kernels print for a dtype ('float', 'long int', 'c10::Half')."""
    name = d.name if isinstance(d, dtype) else np.dtype(d).name
    return _CPP_TYPE.get(name, name)


def _combine(higher, lower):
    # torch's combine_categories: a lower-priority operand only matters when it is of a higher kind
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.is_floating_point:
        return higher
    if higher is bool_ or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher


def number_dtype(x) -> dtype:
    """The dtype torch gives a Python (or NumPy) number: bool, int64 or the default float."""
    if isinstance(x, builtins_bool):
        return bool_
    if isinstance(x, (builtins_int, np.integer)):
        return int64
    if isinstance(x, (builtins_float, np.floating, np.bool_)):  # torch reads np.bool_ as a float
        return _default
    raise TypeError(f"result_type() received an unsupported operand type {type(x).__name__}")


def result_type(*operands) -> dtype:
    """torch.result_type over tensors and numbers: dimensioned tensors (and NumPy arrays)
    outrank zero-dim tensors, which outrank numbers, unless a lower one is of a higher kind
    (``int32 tensor * 2.5`` is float32, ``float32 tensor + float64 0-dim tensor`` is float32)."""
    dim = zero = wrapped = None
    for x in operands:
        if isinstance(x, np.ndarray):
            d = from_numpy_dtype(x.dtype)
            dim = d if dim is None else promote_types(dim, d)
            continue
        d = getattr(x, "dtype", None)
        if isinstance(d, dtype):
            if x.ndim:
                dim = d if dim is None else promote_types(dim, d)
            else:
                zero = d if zero is None else promote_types(zero, d)
            continue
        d = number_dtype(x)
        wrapped = d if wrapped is None else promote_types(wrapped, d)
    return _combine(dim, _combine(zero, wrapped))


_LEGACY_TYPE = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
                "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
                "bfloat16": "BFloat16"}


def legacy_type_name(array: np.ndarray) -> str:
    """torch's ``Tensor.type()`` string, used in its error messages."""
    return f"torch.{_LEGACY_TYPE.get(array.dtype.name, array.dtype.name)}Tensor"
