"""``finfo`` and ``iinfo``: the numeric limits of a dtype, with torch's attributes and repr.

The limits come from the format itself (bits of exponent and mantissa), so bfloat16 needs no
optional package here.
"""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

from . import _dtype

# (exponent bits, stored mantissa bits) of each binary floating format
_FLOAT_FORMATS = {"float16": (5, 10), "bfloat16": (8, 7), "float32": (8, 23),
                  "float64": (11, 52)}


def _g(value: float) -> str:
    return f"{value:g}"


class finfo:
    """Limits of a floating dtype (the default dtype when none is given): ``bits``, ``eps``,
    ``max``, ``min``, ``tiny`` (= ``smallest_normal``), ``resolution`` and the dtype's name.

    Same attributes, values and repr as torch's; a non-floating dtype raises torch's TypeError.
    """

    __slots__ = ("bits", "dtype", "eps", "max", "min", "resolution", "smallest_normal", "tiny")

    def __init__(self, type: Optional[_dtype.dtype] = None) -> None:  # noqa: A002 (torch's name)
        if type is None:
            type = _dtype.get_default_dtype()  # noqa: A001
        if not isinstance(type, _dtype.dtype):
            raise TypeError("finfo(): argument 'type' (position 1) must be torch.dtype, not "
                            f"{_type_name(type)}")
        if type.name not in _FLOAT_FORMATS:
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo "
                            "to handle 'torch.finfo'")
        exponent_bits, mantissa_bits = _FLOAT_FORMATS[type.name]
        bias = 2 ** (exponent_bits - 1) - 1
        self.bits = 1 + exponent_bits + mantissa_bits
        self.eps = 2.0 ** -mantissa_bits
        self.max = (2.0 - self.eps) * 2.0 ** bias
        self.min = -self.max
        self.tiny = self.smallest_normal = 2.0 ** (1 - bias)
        # 10 ** -(the number of decimal digits the format carries); parsed, not computed as a
        # power, so that it is the float nearest 1e-6 (as torch's) rather than 10.0 ** -6
        self.resolution = float(f"1e-{math.floor(-math.log10(self.eps))}")
        self.dtype = type.name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, finfo) and other.dtype == self.dtype

    __hash__ = None  # torch's finfo is unhashable too

    def __repr__(self) -> str:
        return (f"finfo(resolution={_g(self.resolution)}, min={_g(self.min)}, "
                f"max={_g(self.max)}, eps={_g(self.eps)}, "
                f"smallest_normal={_g(self.smallest_normal)}, tiny={_g(self.tiny)}, "
                f"dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype: ``bits``, ``min``, ``max`` (Python ints) and the dtype's name.

    Same attributes, values and repr as torch's; bool and floating dtypes raise torch's TypeError.
    """

    __slots__ = ("bits", "dtype", "max", "min")

    def __init__(self, type: _dtype.dtype) -> None:  # noqa: A002 (torch's name)
        if not isinstance(type, _dtype.dtype):
            raise TypeError("iinfo(): argument 'type' (position 1) must be torch.dtype, not "
                            f"{_type_name(type)}")
        if type.name == "bool":
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if type.is_floating_point or type.is_complex:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to "
                            "handle 'torch.iinfo'")
        info = np.iinfo(type.numpy)
        self.bits = int(info.bits)
        self.min = int(info.min)
        self.max = int(info.max)
        self.dtype = type.name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, iinfo) and other.dtype == self.dtype

    __hash__ = None

    def __repr__(self) -> str:
        return f"iinfo(min={_g(self.min)}, max={_g(self.max)}, dtype={self.dtype})"


def _type_name(value: object) -> str:
    return value.__class__.__name__
