"""The hook-based weight normalization (deprecated in torch in favour of
``parametrizations.weight_norm``): ``weight`` becomes two parameters, ``weight_g`` (magnitude)
and ``weight_v`` (direction), and a forward pre-hook rebuilds ``weight = g v / ||v||`` as a
plain attribute before every call.
"""
from __future__ import annotations

from typing import Any, TypeVar

import hookgrad
from ..._warnings import warn
from ...tensor import Tensor
from ..modules.module import Module
from ..parameter import Parameter, UninitializedParameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]

T_module = TypeVar("T_module", bound=Module)


class WeightNorm:
    """The forward pre-hook that recomputes ``module.<name>`` from ``<name>_g`` and
    ``<name>_v``; ``remove_weight_norm`` finds it in ``module._forward_pre_hooks`` by type."""

    name: str
    dim: int

    def __init__(self, name: str, dim: int) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Tensor:
        """``g v / ||v||`` from the module's current parameters (a graph to both)."""
        magnitude = getattr(module, self.name + "_g")
        direction = getattr(module, self.name + "_v")
        return hookgrad._weight_norm(direction, magnitude, self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int) -> "WeightNorm":
        """Split ``module.<name>`` into ``<name>_g`` and ``<name>_v`` and register the hook."""
        warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
             "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning)
        if _find_hook(module, name) is not None:
            raise RuntimeError(f"Cannot register two weight_norm hooks on the same "
                               f"parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError("The module passed to `WeightNorm` can't have uninitialized "
                             "parameters. Make sure to run the dummy forward before applying "
                             "weight normalization")
        magnitude = hookgrad.norm_except_dim(weight, 2, fn.dim).data
        del module._parameters[name]
        # g before v: the parameters' order (and so an optimizer's) is torch's
        for suffix, value in (("_g", magnitude), ("_v", weight.data)):
            module.register_parameter(name + suffix, Parameter(value))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        """Put back one plain parameter holding the current normalized value."""
        normalized = self.compute_weight(module).data
        delattr(module, self.name)
        for suffix in ("_g", "_v"):
            del module._parameters[self.name + suffix]
        setattr(module, self.name, Parameter(normalized))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: T_module, name: str = "weight", dim: int = 0) -> T_module:
    """Replace ``module.<name>`` by ``<name>_g * <name>_v / ||<name>_v||`` recomputed by a
    forward pre-hook (norm over every dim but ``dim``; ``None`` for the whole tensor).

    Deprecated as in torch (a ``FutureWarning``): prefer
    ``nn.utils.parametrizations.weight_norm``, whose loader accepts this one's checkpoints.
    Returns ``module``.
    """
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: T_module, name: str = "weight") -> T_module:
    """Undo :func:`weight_norm`: ``module.<name>`` is a plain parameter again, holding the
    normalized value, and the pre-hook is gone. Returns ``module``."""
    found = _find_hook(module, name)
    if found is None:
        raise ValueError(f"weight_norm of '{name}' not found in {module}")
    key, hook = found
    hook.remove(module)
    del module._forward_pre_hooks[key]
    return module


def _find_hook(module: Module, name: str):
    """The (key, hook) of the WeightNorm pre-hook on ``name``, or None."""
    return next(((key, hook) for key, hook in module._forward_pre_hooks.items()
                 if isinstance(hook, WeightNorm) and hook.name == name), None)
