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
        "numpy",
    )

    def __init__(self, name: str, numpy_dtype, category: int):
        self.name = name
        self.numpy = np.dtype(numpy_dtype)
        self.is_floating_point = category == 2
        self.is_complex = False
        self.is_signed = category != 0 and self.numpy.kind != "u"
        self.itemsize = self.numpy.itemsize
        self._category = category  # 0 bool, 1 integer, 2 floating

    def __repr__(self) -> str:
        return "torch." + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))

    def to_real(self) -> dtype:
        return self


float32 = dtype("float32", np.float32, 2)
float64 = dtype("float64", np.float64, 2)
float16 = dtype("float16", np.float16, 2)
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

_ALL = (float32, float64, float16, int64, int32, int16, int8, uint8, bool_)
_FROM_NUMPY = {d.numpy: d for d in _ALL}


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
    return _default


def set_default_dtype(d: dtype) -> None:
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
    return from_numpy_dtype(np.promote_types(a.numpy, b.numpy))


def can_cast(from_: dtype, to: dtype) -> bool:
    """torch's same-kind rule: never to a lower category (float to int, int to bool)."""
    return from_._category <= to._category


_SCALAR_TYPE = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
                "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def scalar_type_name(d) -> str:
    """torch's C++ name for a dtype, as its error messages print it ('Float', 'Long')."""
    name = d.name if isinstance(d, dtype) else np.dtype(d).name
    return _SCALAR_TYPE.get(name, name)


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
                "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def legacy_type_name(array: np.ndarray) -> str:
    """torch's ``Tensor.type()`` string, used in its error messages."""
    return f"torch.{_LEGACY_TYPE.get(array.dtype.name, array.dtype.name)}Tensor"
