"""Utilities built on the public hook API (hooks, checkpoint, data) and safetensors files.

``hooks`` is imported by the core itself, so the other submodules load lazily on first use
(``hookgrad.utils.checkpoint.checkpoint(...)`` works without an explicit import).
"""
import importlib

from . import hooks

_LAZY = ("checkpoint", "data", "deterministic", "flop_counter", "safetensors")


def __getattr__(name: str):
    if name in _LAZY:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")
