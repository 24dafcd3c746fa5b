"""detect_anomaly / set_detect_anomaly: accepted for compatibility; hookgrad's errors already name
the op and the versions involved, so there is nothing extra to record."""
from __future__ import annotations

_enabled = False


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on."""
    return _enabled


class set_detect_anomaly:
    """Sets the anomaly-detection flag (as a call or for a ``with`` block).

    Differs from torch: the flag changes nothing else in hookgrad (see ``detect_anomaly``)."""
    def __init__(self, mode: bool, check_nan: bool = True):
        global _enabled
        self.prev = _enabled
        _enabled = bool(mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        global _enabled
        _enabled = self.prev
        return False


class detect_anomaly(set_detect_anomaly):
    """Context manager that switches anomaly detection on for its block.

    Differs from torch: only the flag is kept; no forward traceback is recorded and NaN
    gradients do not raise (hookgrad's backward errors already name the op and versions)."""
    def __init__(self, check_nan: bool = True):
        super().__init__(True, check_nan)
