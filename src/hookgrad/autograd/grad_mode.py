"""Grad mode: whether ops record a graph. Thread-local, like torch's."""
from __future__ import annotations

import functools
import threading


class _State(threading.local):
    def __init__(self):
        self.enabled = True
        self.inference = False


_state = _State()


def is_grad_enabled() -> bool:
    """Whether operations are being recorded for autograd in this thread."""
    return _state.enabled


def is_inference_mode_enabled() -> bool:
    """Whether an ``inference_mode`` block is active."""
    return _state.inference


class _DecoratorContextManager:
    """A context manager that also decorates functions (and generator-free callables)."""

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.__class__(*self._init_args):
                return func(*args, **kwargs)
        return wrapper

    _init_args: tuple = ()


class set_grad_enabled(_DecoratorContextManager):
    """Sets grad mode at construction (so it works as a plain call too) and restores it on exit."""

    def __init__(self, mode: bool):
        self.prev = _state.enabled
        self._init_args = (mode,)
        _state.enabled = bool(mode)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _state.enabled = self.prev
        return False

    def __call__(self, func):
        _state.enabled = self.prev  # used as a decorator: undo the set done by __init__
        return super().__call__(func)


class no_grad(_DecoratorContextManager):
    """Context manager and decorator that stops recording operations for gradients."""
    def __enter__(self):
        self.prev = _state.enabled
        _state.enabled = False

    def __exit__(self, *exc):
        _state.enabled = self.prev
        return False


class enable_grad(_DecoratorContextManager):
    """Context manager and decorator that turns recording of gradients back on."""
    def __enter__(self):
        self.prev = _state.enabled
        _state.enabled = True

    def __exit__(self, *exc):
        _state.enabled = self.prev
        return False


class inference_mode(_DecoratorContextManager):
    """No graph is recorded; tensors made inside are marked as inference tensors."""

    def __init__(self, mode: bool = True):
        self.mode = mode
        self._init_args = (mode,)

    def __enter__(self):
        self.prev = (_state.enabled, _state.inference)
        if self.mode:
            _state.enabled = False
            _state.inference = True

    def __exit__(self, *exc):
        _state.enabled, _state.inference = self.prev
        return False

    def __call__(self, func):
        if not callable(func) or isinstance(func, bool):
            return inference_mode(func)
        return super().__call__(func)
