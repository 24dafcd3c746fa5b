"""Window functions for spectral work: hann, hamming, blackman, bartlett and kaiser windows.

A periodic window of length N is the symmetric window of length N + 1 without its last point
(the form a DFT of length N expects). Each is computed as torch computes it, in the requested
floating dtype: a ramp ``n * step`` then the window's cosines, so float32 and float64 results
agree with torch's to the last place or two (kaiser's Bessel function is evaluated in float64
and rounded once; float16 and bfloat16 windows are computed in float32 and rounded once).
"""
from __future__ import annotations

import math

import numpy as np

from .. import _device, _dtype
from ..tensor import Tensor
from .creation import _finish


# the C++ type names torch's error prints for a dtype a window cannot have
_CPP_NAMES = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char", "bool": "bool"}


def _length_and_dtype(name: str, window_length, periodic: bool, dtype) -> tuple:
    np_dtype = _dtype.get_default_dtype().numpy if dtype is None else _dtype.to_numpy_dtype(dtype)
    if np_dtype.kind not in "fV":
        raise RuntimeError(
            f"{name} expects floating point dtypes, got: TensorOptions(dtype="
            f"{_CPP_NAMES.get(np_dtype.name, np_dtype.name)}, device=cpu, layout=Strided "
            "(default), requires_grad=false (default), pinned_memory=false, "
            "memory_format=(nullopt))")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={window_length}")
    return window_length + 1 if periodic and window_length > 1 else window_length, np_dtype


def _window(name: str, window_length: int, periodic: bool, dtype, device, requires_grad,
            shape) -> Tensor:
    _device.check(device)
    length, np_dtype = _length_and_dtype(name, int(window_length), periodic, dtype)
    # 16-bit dtypes are computed in float32 and rounded once (torch rounds after each step, so
    # its values can differ from these in the last place or two)
    work = np.float32 if np_dtype.kind == "V" or np_dtype.itemsize < 4 else np_dtype.type
    if length <= 1:
        values = np.ones(length, work)
    else:
        values = shape(np.arange(length, dtype=work), length, work)
        if periodic:
            values = values[:-1]
    return _finish(np.ascontiguousarray(values.astype(np_dtype, copy=False)), requires_grad)


def _cosine_sum(alpha: float, beta: float):
    def shape(ramp: np.ndarray, length: int, work) -> np.ndarray:
        angles = ramp * work(2 * math.pi / (length - 1))
        return np.cos(angles) * work(-beta) + work(alpha)
    return shape


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54,
                   beta: float = 0.46, *, dtype=None, layout=None, device=None,
                   requires_grad: bool = False) -> Tensor:
    """``alpha - beta cos(2 pi n / (N - 1))``; periodic (the default) drops the last point of
    the length N + 1 window."""
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum(alpha, beta))


def hann_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                device=None, requires_grad: bool = False) -> Tensor:
    """The Hamming window with alpha = beta = 1/2: a raised cosine that reaches zero at both
    ends."""
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum(0.5, 0.5))


def _blackman(ramp: np.ndarray, length: int, work) -> np.ndarray:
    angles = ramp * work(math.pi / (length - 1))
    return (np.cos(angles * work(4)) * work(0.08) - np.cos(angles * work(2)) * work(0.5)
            + work(0.42))


def blackman_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                    device=None, requires_grad: bool = False) -> Tensor:
    """``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))``."""
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   _blackman)


def _bartlett(ramp: np.ndarray, length: int, work) -> np.ndarray:
    values = ramp * work(2 / (length - 1))
    first_half = ((length - 1) >> 1) + 1
    values[first_half:] = work(2) - values[first_half:]
    return values


def bartlett_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                    device=None, requires_grad: bool = False) -> Tensor:
    """The triangle rising from 0 to 1 at the middle and back to 0."""
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   _bartlett)


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *,
                  dtype=None, layout=None, device=None, requires_grad: bool = False) -> Tensor:
    """``I0(beta sqrt(1 - ((n - m) / m)^2)) / I0(beta)`` with m = (N - 1) / 2 and I0 the
    modified Bessel function of the first kind, order zero; larger ``beta`` narrows it."""
    def shape(ramp: np.ndarray, length: int, work) -> np.ndarray:
        middle = (length - 1) / 2
        offsets = (ramp.astype(np.float64) - middle) / middle
        return np.i0(beta * np.sqrt(np.maximum(1 - offsets * offsets, 0))) / np.i0(beta)

    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, shape)
