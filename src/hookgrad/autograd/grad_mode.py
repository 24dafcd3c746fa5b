"""Grad mode: whether ops record a graph. Thread-local, like torch's."""
from __future__ import annotations

import functools
import inspect
import sys

from .._grad_state import _state
from ..tensor import mark_inference_tensors


def is_grad_enabled() -> bool:
    """Whether operations are being recorded for autograd in this thread."""
    return _state.enabled


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
        self.prev = (_state.enabled, _state.inference)
        _state.enabled, _state.inference = not self.mode, self.mode
        if self.mode:
            mark_inference_tensors(True)

    def __exit__(self, *exc):
        if self.mode:
            mark_inference_tensors(False)
        _state.enabled, _state.inference = self.prev
        return False
