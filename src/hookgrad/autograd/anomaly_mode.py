"""detect_anomaly / set_detect_anomaly: accepted for compatibility; hookgrad's errors already name
the op and the versions involved, so there is nothing extra to record."""
from __future__ import annotations

_enabled = False


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on."""
    return _enabled


class set_detect_anomaly:
    """Context manager that turns anomaly detection on or off."""
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
    """Context manager: backward errors name the forward op that made the failing node, and NaN
    gradients raise."""
    def __init__(self, check_nan: bool = True):
        super().__init__(True, check_nan)
