"""torch's process-wide switches: deterministic algorithms, float32 matmul precision,
inter-op threads, warn-always and flushing of denormal numbers.

hookgrad's CPU ops are deterministic already and compute float32 products in float32, so the
first two are state programs read back; ``set_flush_denormal`` really sets the x86 FTZ/DAZ
bits of the calling thread, which NumPy's loops obey as torch's kernels do.
"""
from __future__ import annotations

import ctypes
import os
import platform
import sys
from typing import Union

import numpy as np

from . import _warnings
from ._warnings import warn

# [enabled, warn_only]
_deterministic = [False, False]
# ``torch.utils.deterministic.fill_uninitialized_memory``: in deterministic mode, ``empty``
# and its kin fill their memory with NaN (floats) or the largest value (integers, bool True)
fill_uninitialized_memory = [True]
_matmul_precision = ["highest"]
_PRECISIONS = ("highest", "high", "medium")
_DEBUG_MODES = ("default", "warn", "error")


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Ask for deterministic algorithms (``warn_only``: nondeterministic ones warn instead of
    raising). Every hookgrad op is deterministic on the CPU, so only the setting is kept."""
    for name, value, where in (("mode", mode, " (position 1)"), ("warn_only", warn_only, "")):
        if not isinstance(value, bool):
            raise TypeError(f"_set_deterministic_algorithms(): argument '{name}'{where} must "
                            f"be bool, not {type(value).__name__}")
    _deterministic[:] = [mode, warn_only]


def are_deterministic_algorithms_enabled() -> bool:
    """Whether ``use_deterministic_algorithms(True)`` is in force."""
    return _deterministic[0]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Whether the last ``use_deterministic_algorithms`` call set ``warn_only``."""
    return _deterministic[1]


def filling_uninitialized() -> bool:
    """Whether ``empty`` and its kin write ``uninitialized_value`` into new memory (else they
    give zeros: hookgrad never hands out stale bytes)."""
    return _deterministic[0] and fill_uninitialized_memory[0]


def uninitialized_value(np_dtype):
    """NaN, or the dtype's largest value (True for bool): torch's fill in deterministic mode."""
    kind = np_dtype.kind
    if kind == "b":
        return True
    if kind in "iu":
        return np.iinfo(np_dtype).max
    return np.nan


def get_deterministic_debug_mode() -> int:
    """0 (default), 1 (warn) or 2 (error): the deterministic setting as one number."""
    if not _deterministic[0]:
        return 0
    return 1 if _deterministic[1] else 2


def set_deterministic_debug_mode(debug_mode: Union[str, int]) -> None:
    """The deterministic setting as one value: 0/"default" (off), 1/"warn" (on, warn only)
    or 2/"error" (on)."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = _DEBUG_MODES.index(debug_mode)
    elif not isinstance(debug_mode, int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError("invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    _deterministic[:] = [debug_mode != 0, debug_mode == 1]


def get_float32_matmul_precision() -> str:
    """The float32 matrix-product precision last set ("highest" until changed)."""
    return _matmul_precision[0]


def set_float32_matmul_precision(precision: str) -> None:
    """Record "highest", "high" or "medium"; any other string warns and changes nothing.
    hookgrad always multiplies float32 matrices in float32 (torch's "highest")."""
    if not isinstance(precision, str):
        raise RuntimeError("set_float32_matmul_precision expects a str, but got "
                           f"{type(precision).__name__}")
    if precision not in _PRECISIONS:
        warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
             "setFloat32MatmulPrecision call has no effect.")
        return
    _matmul_precision[0] = precision


_interop = {"threads": None, "set": False}


def get_num_interop_threads() -> int:
    """Threads for inter-op parallelism: the number of cores until set."""
    return _interop["threads"] or os.cpu_count() or 1


def set_num_interop_threads(n: int) -> None:
    """Set the inter-op thread count, once per process (a second call raises, as in torch).
    hookgrad runs ops one after another, so only the number is kept."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise RuntimeError(f"set_num_interop_threads expects an int, but got "
                           f"{type(n).__name__}")
    if n <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    if _interop["set"]:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work "
                           "has started or set_num_interop_threads called")
    _interop.update(threads=n, set=True)


def init_num_threads() -> None:
    """Prepare the intra-op thread settings of the calling thread (nothing to do here)."""
    return None


def set_warn_always(b: bool) -> None:
    """With True, warnings torch gives once per process are given every time."""
    if not isinstance(b, bool):
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")
    _warnings.warn_always[0] = b


def is_warn_always_enabled() -> bool:
    """Whether once-per-process warnings are given every time."""
    return _warnings.warn_always[0]


# the SSE control register's flush-to-zero (results) and denormals-are-zero (inputs) bits
_FTZ_DAZ = (1 << 15) | (1 << 6)


def _control_register_available() -> bool:
    return sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")


def set_flush_denormal(mode: bool) -> bool:
    """Flush denormal floats to zero (inputs and results) on this thread's CPU, or stop; True
    when the CPU supports it (x86-64 here), else False and nothing changes."""
    if not isinstance(mode, bool):
        raise RuntimeError(f"flush_denormal expects a bool, but got {type(mode).__name__}")
    if not _control_register_available():
        return False
    libc = ctypes.CDLL(None)
    # glibc's x86-64 fenv_t: 28 bytes of x87 state, then the 32-bit SSE control register
    environment = (ctypes.c_uint32 * 8)()
    if libc.fegetenv(environment) != 0:
        return False
    if mode:
        environment[7] |= _FTZ_DAZ
    else:
        environment[7] &= ~_FTZ_DAZ & 0xFFFFFFFF
    return libc.fesetenv(environment) == 0
