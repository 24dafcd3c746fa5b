"""``torch.compile`` without a compiler: the arguments torch checks are checked, and the result
runs the function or module unchanged (hookgrad executes eagerly, op by op, which is what a
compiled program is required to reproduce).

A compiled module is an ``OptimizedModule`` holding the original as ``_orig_mod``, as torch's
is: its state-dict keys carry that prefix, and attributes read or set on it reach the original.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Optional

from .nn.modules.module import Module

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
_BACKENDS = ("aot_eager", "aot_eager_decomp_partition", "aot_eager_default_partitioner",
             "aot_ts", "cudagraphs", "eager", "eager_debug", "eager_noexcept", "inductor",
             "invoke_subgraph", "openxla", "openxla_eval", "pre_dispatch_eager", "ts", "tvm")


class InvalidBackend(RuntimeError):
    """A ``backend`` name torch does not know (torch's ``torch._dynamo.exc.InvalidBackend``,
    a RuntimeError too)."""


class OptimizedModule(Module):
    """A module "compiled" by ``compile``: calls, attributes and training mode go to the
    original module, kept as the child ``_orig_mod``."""

    def __init__(self, mod: Module) -> None:
        super().__init__()
        Module.__setattr__(self, "_orig_mod", mod)

    @property
    def training(self) -> bool:  # type: ignore[override]
        original = self.__dict__.get("_modules", {}).get("_orig_mod")
        return True if original is None else original.training

    @training.setter
    def training(self, mode: bool) -> None:
        original = self.__dict__.get("_modules", {}).get("_orig_mod")
        if original is not None:
            original.training = mode

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self._orig_mod(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name == "_orig_mod":
                raise
            return getattr(self._orig_mod, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "training":
            object.__setattr__(self, name, value)
        else:
            setattr(self._orig_mod, name, value)


def _check_options(backend: Any, mode: Optional[str], options: Optional[dict]) -> None:
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if isinstance(backend, str) and backend not in _BACKENDS:
        raise InvalidBackend(f"Invalid backend: {backend!r}, see `torch._dynamo.list_backends()` "
                           "for available backends.")


def compile(model: Optional[Callable] = None, *, fullgraph: bool = False,
            dynamic: Optional[bool] = None, backend: Any = "inductor",
            mode: Optional[str] = None, options: Optional[dict] = None,
            disable: bool = False, **kwargs: Any) -> Any:  # noqa: A001 - torch's name
    """``model`` as torch would compile it, run eagerly: a function comes back wrapped
    (``__wrapped__`` is the original), a module as an ``OptimizedModule``; without ``model``,
    a decorator. ``mode``, ``options`` and a named ``backend`` are checked as torch checks
    them; ``disable=True`` returns ``model`` itself."""
    if model is None:
        def decorate(function: Callable) -> Any:
            return compile(function, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                           mode=mode, options=options, disable=disable, **kwargs)
        return decorate
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is "
                             "provided.")
    _check_options(backend, mode, options)
    if disable:
        return model
    if isinstance(model, Module):
        return OptimizedModule(model)

    @functools.wraps(model)
    def compiled(*args: Any, **kwargs: Any) -> Any:
        return model(*args, **kwargs)

    return compiled
