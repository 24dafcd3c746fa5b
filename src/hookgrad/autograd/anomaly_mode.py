"""Anomaly mode's two flags (on, and whether NaN gradients are checked), shared by
``detect_anomaly`` / ``set_detect_anomaly`` and the torch-level ``set_anomaly_enabled``,
``is_anomaly_enabled`` and ``is_anomaly_check_nan_enabled``.

With both on, the engine refuses a node that returns a NaN gradient, with torch's error. No
forward traceback is recorded: hookgrad's errors already name the op and the versions involved.
"""
from __future__ import annotations

from .._warnings import warn

# [enabled, check_nan]: torch starts with anomaly mode off and the NaN check on
_flags = [False, True]


def _require_bool(value, name: str, position: int) -> bool:
    if not isinstance(value, bool):
        where = f" (position {position})" if position else ""
        raise TypeError(f"set_anomaly_enabled(): argument '{name}'{where} must be bool, not "
                        f"{type(value).__name__}")
    return value


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on."""
    return _flags[0]


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection checks gradients for NaN (True until switched off)."""
    return _flags[1]


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Switch anomaly detection on or off and set its NaN check; both must be Python bools."""
    _flags[:] = [_require_bool(enabled, "enabled", 1),
                 _require_bool(check_nan, "check_nan", 2)]


class set_detect_anomaly:
    """Sets the anomaly-detection flags (as a call or for a ``with`` block, which restores the
    flags it found); see ``detect_anomaly`` for what they do."""
    def __init__(self, mode: bool, check_nan: bool = True):
        self.prev = list(_flags)
        _flags[:] = [bool(mode), bool(check_nan)]

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _flags[:] = self.prev
        return False


class detect_anomaly:
    """Context manager (not a decorator, as in torch) that switches anomaly detection on for
    its block.

    With ``check_nan`` a backward node that returns a NaN gradient raises torch's error.
    Differs from torch: no forward traceback is recorded (hookgrad's backward errors already
    name the op and versions)."""
    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan
        warn("Anomaly Detection has been enabled. This mode will increase the runtime and "
             "should only be enabled for debugging.")

    def __enter__(self):
        self.prev = list(_flags)
        _flags[:] = [True, bool(self.check_nan)]

    def __exit__(self, *exc):
        _flags[:] = self.prev
        return False
