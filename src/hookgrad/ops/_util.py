"""Small shared pieces for op definitions: quiet NumPy arithmetic, torch's messages, dims."""
from __future__ import annotations

import numpy as np

# NumPy warns on overflow, 0/0, log(-1) ...; torch computes inf and NaN silently. ``np.errstate``
# costs about 1.3 us per use (a Python object, a new error-state capsule each time), more than
# the arithmetic on a small tensor. It works by setting a context variable, so on NumPy 2 the ops
# set that variable themselves, to a capsule made once per error state the caller is in (so a
# caller's ``np.setbufsize`` or ``np.errstate(call=...)`` still holds inside the op).
try:
    from numpy._core._ufunc_config import _extobj_contextvar as _ERROR_STATE
except ImportError:  # NumPy 1.x: no context variable, use the public context manager
    _ERROR_STATE = None
_QUIET_STATES: dict = {}


def _quiet_state(current):
    with np.errstate(all="ignore"):
        quiet = _ERROR_STATE.get()
    if len(_QUIET_STATES) > 64:  # callers that make a new error state per call
        _QUIET_STATES.clear()
    _QUIET_STATES[current] = quiet
    return quiet


class quiet_errors:  # noqa: N801 - used like np.errstate, a context manager
    """``with quiet_errors():`` turns NumPy's floating-point warnings off for the block.

    Torch computes inf and NaN silently; NumPy warns. On NumPy 2 this sets the error-state
    context variable to a cached quiet capsule (no new ``np.errstate`` per use) and resets it
    on exit, even when the block raises. ``enter()`` / ``exit(token)`` are the same two halves
    for the one caller that runs once per arithmetic op (``_base.arithmetic``), where the
    with-statement's two method calls measured about 4% of a small op's forward.
    """

    __slots__ = ("_token",)

    if _ERROR_STATE is not None:
        @staticmethod
        def enter():
            current = _ERROR_STATE.get()
            quiet = _QUIET_STATES.get(current)
            return _ERROR_STATE.set(quiet if quiet is not None else _quiet_state(current))

        exit = staticmethod(_ERROR_STATE.reset)
    else:
        @staticmethod
        def enter():
            state = np.errstate(all="ignore")
            state.__enter__()
            return state

        @staticmethod
        def exit(token) -> None:
            token.__exit__(None, None, None)

    def __enter__(self) -> None:
        self._token = self.enter()

    def __exit__(self, kind, value, trace) -> None:
        self.exit(self._token)


def quiet(fn, *args):
    """``fn(*args)`` without NumPy's floating-point warnings (torch never gives them)."""
    with quiet_errors():
        return fn(*args)


def broadcast_error(op: str, a_shape: tuple, b_shape: tuple) -> RuntimeError:
    """torch's message for shapes that do not broadcast, plus the op and both shapes."""
    ndim = max(len(a_shape), len(b_shape))
    pa = (1,) * (ndim - len(a_shape)) + tuple(a_shape)
    pb = (1,) * (ndim - len(b_shape)) + tuple(b_shape)
    for dim in range(ndim - 1, -1, -1):
        if pa[dim] != pb[dim] and pa[dim] != 1 and pb[dim] != 1:
            return RuntimeError(
                f"The size of tensor a ({pa[dim]}) must match the size of tensor b ({pb[dim]}) at "
                f"non-singleton dimension {dim} (in {op}: shapes {list(a_shape)} and "
                f"{list(b_shape)})")
    return RuntimeError(f"{op}: shapes {list(a_shape)} and {list(b_shape)} do not broadcast")


def normalize_dim(dim: int, ndim: int, op: str = "") -> int:
    size = max(ndim, 1)
    if not -size <= dim < size:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-size}, "
                         f"{size - 1}], but got {dim})")
    return dim % size


def existing_dim(dim: int, ndim: int) -> int:
    """``normalize_dim`` for ops that need a real dim (roll, unique's dim): a 0-d tensor has
    none, where the reductions accept 0 and -1."""
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return normalize_dim(dim, ndim)


def ordered(x: np.ndarray) -> np.ndarray:
    """``x`` in a dtype NumPy sorts and tests for NaN as a float: bfloat16 (ml_dtypes' kind "V")
    widened exactly to float32, where ``np.sort`` puts NaN last and ``np.nansum``, ``np.unique``
    and ``np.finfo`` treat it as floating; any other array as it is."""
    return x.astype(np.float32) if x.dtype.kind == "V" else x


# the names torch's checked number conversion prints, and the largest finite floats
_CHECKED_NAME = {"int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t", "int32": "int",
                 "int64": "int64_t", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
                 "float32": "float"}
_FLOAT_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38,
              "float32": float(np.finfo(np.float32).max)}


def check_range(values: np.ndarray, np_dtype: np.dtype, type_name: str,
                floats: bool = False, halves: bool = False) -> None:
    """torch's checked conversion of numbers: integers must fit (unsigned types also take
    -max..-1, wrapping), NaN never converts to an integer; with ``floats``, float32 must not
    overflow, with ``halves`` neither may float16 or bfloat16 (infinities and NaN pass)."""
    if values.dtype.kind not in "biuf" or values.size == 0:
        return
    if np_dtype.kind in "iu":
        info = np.iinfo(np_dtype)
        low = -int(info.max) if np_dtype.kind == "u" else int(info.min)
        with np.errstate(invalid="ignore"):
            bad = (values < low) | (values > info.max)
            if values.dtype.kind in "fV":
                bad |= np.isnan(values)
                if np_dtype.kind == "u":
                    bad |= values < 0
    elif (floats and np_dtype == np.float32) or (halves and np_dtype.name in ("float16",
                                                                                "bfloat16")):
        with np.errstate(invalid="ignore"):
            bad = np.isfinite(values) & (np.abs(values) > _FLOAT_MAX[np_dtype.name])
    else:
        return
    if np.any(bad):
        raise RuntimeError(f"value cannot be converted to type {type_name} without overflow")


def check_number_fits(value, dtype: np.dtype, halves: bool = True) -> None:
    """A number argument (a fill value, a bound, alpha, a scalar exponent) is converted to the
    tensor's dtype with ``check_range`` (a number operand instead wraps, as a tensor does);
    ``halves=False`` for the ops whose conversion skips the 16-bit floats."""
    if isinstance(value, (bool, np.bool_)) or dtype.name not in _CHECKED_NAME:
        return
    check_range(np.asarray(value), dtype, _CHECKED_NAME[dtype.name], floats=True,
                halves=halves)
