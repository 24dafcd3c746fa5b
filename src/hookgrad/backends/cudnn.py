"""cuDNN's switches: settable as in torch (scripts set them at the top), with no effect."""
from __future__ import annotations

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    return False


def version() -> None:
    return None
