"""Utilities built on the public hook API (hooks, checkpoint)."""
from . import hooks


def __getattr__(name: str):
    # data imports the ops, which import tensor.py, which imports utils.hooks: a lazy import
    # keeps ``hookgrad.utils.data`` reachable without that cycle.
    if name == "data":
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
