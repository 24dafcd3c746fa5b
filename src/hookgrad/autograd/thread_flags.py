"""Two thread-local switches of torch's engine that change nothing in hookgrad's (one thread,
views always rebuilt by replaying their chain) but that programs read and set:
multithreaded backward and forced view replay."""
from __future__ import annotations

import threading

from .grad_mode import _DecoratorContextManager


class _Switches(threading.local):
    def __init__(self):
        self.multithreading = True
        self.view_replay = False


_switches = _Switches()


def _bool_argument(value, op: str, name: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{op}(): argument '{name}' (position 1) must be bool, not "
                        f"{type(value).__name__}")
    return value


def is_multithreading_enabled() -> bool:
    """Whether multithreaded backward is on in this thread (True unless switched off)."""
    return _switches.multithreading


def is_view_replay_enabled() -> bool:
    """Whether this thread forces autograd to rebuild changed views by replaying them."""
    return _switches.view_replay


class set_multithreading_enabled(_DecoratorContextManager):
    """Switch multithreaded backward on or off for this thread, as a call (the switch stays)
    or for a ``with`` block (the state found at construction comes back on exit). hookgrad's
    backward always runs on the calling thread; only the flag is kept."""

    def __init__(self, mode: bool) -> None:
        self._init_args = (mode,)
        self.prev = _switches.multithreading
        _switches.multithreading = _bool_argument(mode, "set_multithreading_enabled", "enabled")

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> None:
        _switches.multithreading = self.prev


class _force_original_view_tracking(_DecoratorContextManager):
    """Force view replay on or off for this thread, as a call or for a ``with`` block.
    hookgrad always replays a changed view's chain; only the flag is kept."""

    def __init__(self, mode: bool) -> None:
        self._init_args = (mode,)
        self.prev = _switches.view_replay
        _switches.view_replay = _bool_argument(mode, "set_view_replay_enabled", "enabled")

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> None:
        _switches.view_replay = self.prev

    def __call__(self, func):
        _switches.view_replay = self.prev  # as a decorator: the switch applies inside only
        return super().__call__(func)
