"""``skip_init``: build a module without running its parameter initialization."""
from __future__ import annotations

import inspect
from typing import Any

import hookgrad
from ..modules.module import Module

__all__ = ["skip_init"]


def skip_init(module_cls: type, *args: Any, **kwargs: Any) -> Module:
    """An instance of ``module_cls(*args, **kwargs)`` whose parameters and buffers are left
    uninitialized (``empty``), for code that fills them afterwards anyway.

    torch builds the module on the ``meta`` device and then allocates it empty; hookgrad has no
    meta device, so it builds the module for real and restores the default generator's state,
    leaving the same random stream torch leaves (no draws), then empties every tensor. Like
    torch it needs a ``device`` argument in the module's constructor.
    """
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    state = hookgrad.get_rng_state()
    try:
        module = module_cls(*args, **kwargs)
    finally:
        hookgrad.set_rng_state(state)
    with hookgrad.no_grad():
        for tensor in (*module.parameters(), *module.buffers()):
            tensor.data = hookgrad.empty_like(tensor)
    return module
