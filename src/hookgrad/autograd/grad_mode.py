"""Grad mode: whether ops record a graph. Thread-local, like torch's."""
from __future__ import annotations

import functools
import inspect
import sys

from .._grad_state import _state
from ..tensor import mark_inference_tensors


def is_grad_enabled() -> bool:
    """Whether grad mode is on in this thread: operations are recorded for autograd (except
    inside ``inference_mode``, which records nothing even where grad mode is turned on)."""
    return _state.enabled or _state.requested


def is_inference_mode_enabled() -> bool:
    """Whether an ``inference_mode`` block is active."""
    return _state.inference


class _DecoratorContextManager:
    """A context manager that also decorates functions and generator functions (a generator
    runs inside the context each time it is resumed, and outside it between)."""

    def __call__(self, func):
        if inspect.isgeneratorfunction(func):
            return self._wrap_generator(func)

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper

    _init_args: tuple = ()

    def clone(self):
        """A fresh context manager like this one (each use enters its own)."""
        return self.__class__(*self._init_args)

    def _wrap_generator(self, func):
        @functools.wraps(func)
        def generator(*args, **kwargs):
            inner = func(*args, **kwargs)
            step, value = inner.send, None
            while True:
                try:
                    with self.clone():
                        result = step(value)
                except StopIteration as stop:
                    return stop.value
                try:
                    step, value = inner.send, (yield result)
                except GeneratorExit:
                    with self.clone():
                        inner.close()
                    raise
                except BaseException:  # thrown in by the caller: into the inner generator
                    step, value = _throw(inner), sys.exc_info()[1]
        return generator


def _throw(generator):
    return lambda error: generator.throw(error)


def _set_grad(mode: bool) -> tuple:
    """Sets grad mode and returns what to restore: inside inference mode only the mode that
    ``is_grad_enabled`` reports changes, as nothing is recorded there."""
    previous = (_state.enabled, _state.requested)
    if _state.inference:
        _state.requested = mode
    else:
        _state.enabled, _state.requested = mode, False
    return previous


def _restore(previous: tuple) -> None:
    _state.enabled, _state.requested = previous


class set_grad_enabled(_DecoratorContextManager):
    """Sets grad mode at construction (so it works as a plain call too) and restores it on exit."""

    def __init__(self, mode: bool):
        self._init_args = (mode,)
        self.prev = _set_grad(bool(mode))

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _restore(self.prev)
        return False

    def __call__(self, func):
        _restore(self.prev)  # used as a decorator: undo the set done by __init__
        return super().__call__(func)


class no_grad(_DecoratorContextManager):
    """Context manager and decorator that stops recording operations for gradients."""
    def __enter__(self):
        # ``_set_grad(False)``, inline: every optimizer step enters one
        self.prev = (_state.enabled, _state.requested)
        _state.enabled = _state.requested = False

    def __exit__(self, *exc):
        _state.enabled, _state.requested = self.prev
        return False


class enable_grad(_DecoratorContextManager):
    """Context manager and decorator that turns recording of gradients back on."""
    def __enter__(self):
        self.prev = _set_grad(True)

    def __exit__(self, *exc):
        _state.enabled, _state.requested = self.prev
        return False


class inference_mode(_DecoratorContextManager):
    """Context manager and decorator for code that will never need gradients: nothing is
    recorded, and tensors made inside are inference tensors (``Tensor.is_inference()``),
    which later may not be saved for backward, changed in place outside inference mode, or
    set to require grad. ``inference_mode(False)`` turns it off (and grad mode on) inside an
    enclosing one. Also usable bare as a decorator (``@inference_mode``).
    """

    def __new__(cls, mode=True):
        if callable(mode) and not isinstance(mode, bool):  # ``@inference_mode``, no call
            return super().__new__(cls)(mode)
        return super().__new__(cls)

    def __init__(self, mode: bool = True):
        self.mode = bool(mode)
        self._init_args = (self.mode,)

    def __enter__(self):
        self.prev = (_state.enabled, _state.inference, _state.requested)
        _state.enabled, _state.inference, _state.requested = not self.mode, self.mode, False
        if self.mode:
            mark_inference_tensors(True)

    def __exit__(self, *exc):
        if self.mode:
            mark_inference_tensors(False)
        _state.enabled, _state.inference, _state.requested = self.prev
        return False
