"""torch's function-interception seam: ``TorchFunctionMode``.

Every public ``hookgrad.*`` function, every ``hookgrad.nn.functional`` function and every Tensor
method and operator is bound through :func:`wrap` at the one place that builds it (``__init__``,
``nn/functional.py``, ``_tensor_methods.install``). A wrapped call checks one module-level list;
only when a mode is active does it go to the innermost mode's ``__torch_function__``, with that mode
taken off the stack while its handler runs, so ``func(*args, **kwargs)`` inside the handler reaches
the next mode down or, at the bottom, the real function, as in torch.

Example::

    class Log(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            print(func.__name__)
            return func(*args, **(kwargs or {}))

    with Log():
        torch.ones(2) + 1          # prints "ones", then "__add__"
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from . import _autocast_state as _autocast
from .tensor import Tensor

# innermost mode last; wrapped functions test this list and nothing else when it is empty
_mode_stack: list = []

__all__ = ["TorchFunctionMode", "handle_torch_function", "has_torch_function"]


class TorchFunctionMode:
    """Base class of a mode that sees every torch-level call made while it is active.

    Subclasses define ``__torch_function__(self, func, types, args=(), kwargs=None)``; whatever it
    returns is the call's result. Modes nest: the one entered last sees a call first.
    """

    def __torch_function__(self, func: Callable, types: tuple, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        return func(*args, **(kwargs or {}))

    def __enter__(self) -> "TorchFunctionMode":
        _mode_stack.append(self)
        return self

    def __exit__(self, exc_type, exc, traceback) -> None:
        # the mode may not be on top if a handler left the stack unbalanced; remove this one
        for index in range(len(_mode_stack) - 1, -1, -1):
            if _mode_stack[index] is self:
                del _mode_stack[index]
                break

    @classmethod
    def push(cls, *args, **kwargs) -> "TorchFunctionMode":
        instance = cls(*args, **kwargs)
        instance.__enter__()
        return instance


def _get_current_function_mode() -> TorchFunctionMode | None:
    return _mode_stack[-1] if _mode_stack else None


# torch's names for taking modes off the stack and back (a tool that must not be seen by the
# modes, such as capture copying a tensor, pops them all and pushes them back in order)
def _pop_mode() -> TorchFunctionMode:
    if not _mode_stack:
        raise RuntimeError("no TorchFunctionMode is active")
    return _mode_stack.pop()


def _push_mode(mode: TorchFunctionMode) -> None:
    _mode_stack.append(mode)


def _tensor_types(args: tuple, kwargs: dict) -> tuple:

    found = []
    for value in (*args, *kwargs.values()):
        items = value if isinstance(value, (list, tuple)) else (value,)
        for item in items:
            if isinstance(item, Tensor) and type(item) not in found:
                found.append(type(item))
    return tuple(found)


def _dispatch(public: Callable, args: tuple, kwargs: dict) -> Any:
    """Give the call to the innermost mode, popped while its handler runs (so calls made by the
    handler go one level down), and put it back afterwards."""
    mode = _mode_stack.pop()
    try:
        return mode.__torch_function__(public, _tensor_types(args, kwargs), args, kwargs)
    finally:
        _mode_stack.append(mode)


def wrap(fn: Callable, name: str | None = None, owner: str | None = None) -> Callable:
    """``fn`` made visible to modes; the same wrapper is what a handler receives as ``func``.
    ``name``/``owner`` rename it (``Tensor.__add__`` rather than the ``add`` it is bound to)."""
    if getattr(fn, "_torch_function_wrapped", False) or not callable(fn):
        return fn
    policy = _autocast.POLICIES.get(name or getattr(fn, "__name__", ""))
    if policy is not None:
        return _with_autocast(fn, policy, name, owner)

    @functools.wraps(fn)
    def public(*args, **kwargs):
        if _mode_stack:
            return _dispatch(public, args, kwargs)
        return fn(*args, **kwargs)

    return _named(public, name, owner)


def _with_autocast(fn: Callable, policy, name: str | None, owner: str | None) -> Callable:
    """``wrap`` for a function on one of autocast's lists: below the modes (as torch's autocast
    is), one more list test, true only while some thread has CPU autocast on."""
    threads_on, call = _autocast.threads_on, _autocast.call

    @functools.wraps(fn)
    def public(*args, **kwargs):
        if _mode_stack:
            return _dispatch(public, args, kwargs)
        if threads_on:
            return call(policy, fn, args, kwargs)
        return fn(*args, **kwargs)

    return _named(public, name, owner)


def _named(public: Callable, name: str | None, owner: str | None) -> Callable:
    public._torch_function_wrapped = True
    if name is not None:
        public.__name__ = name
        public.__qualname__ = f"{owner}.{name}" if owner else name
    return public


def has_torch_function(relevant_args) -> bool:
    """True when a call with these arguments would be intercepted (a mode is active)."""
    return bool(_mode_stack)


def handle_torch_function(public_api: Callable, relevant_args, *args, **kwargs) -> Any:
    """Route a call of ``public_api`` through the active modes, as a wrapped function does."""
    if not _mode_stack:
        return public_api(*args, **kwargs)
    return _dispatch(public_api, args, kwargs)
