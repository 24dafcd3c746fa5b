"""Which framework a tool is serving: hookgrad's own tensors and modules, or PyTorch's.

``hookgrad.memory`` and ``hookgrad.capture`` keep one implementation of each tool and ask a small
per-framework adapter for the few things that differ (how to register a hook, where a tensor's
bytes live, how to measure a step's peak). This module answers the question that comes first —
which framework? — and never imports torch unless a torch object is already in hand (so torch
must have been imported by the caller) or the caller asked for ``framework="torch"``.
"""
from __future__ import annotations

import sys
from types import ModuleType
from typing import Any, Optional

FRAMEWORKS = ("hookgrad", "torch")


def is_torch_object(obj: Any) -> bool:
    """True for a torch Tensor, Module, Optimizer or device; False without importing torch."""
    torch = sys.modules.get("torch")
    if torch is None:  # nobody imported torch, so nothing here can be one of its objects
        return False
    kinds = (torch.Tensor, torch.nn.Module, torch.optim.Optimizer, torch.device)
    return isinstance(obj, kinds)


def check_framework(framework: str) -> str:
    """Return ``framework`` if it is one we serve, else raise naming the choices."""
    if framework not in FRAMEWORKS:
        raise ValueError(f"framework must be one of {FRAMEWORKS}, got {framework!r}")
    return framework


def framework_of(*objects: Any, framework: Optional[str] = None) -> str:
    """The framework of the first torch object among ``objects`` ("torch"), else "hookgrad".

    An explicit ``framework`` wins; tools pass their ``framework=`` argument through here so a
    context manager used without a model can still be told to serve torch.
    """
    if framework is not None:
        return check_framework(framework)
    for obj in objects:
        if is_torch_object(obj):
            return "torch"
    return "hookgrad"


def import_torch() -> ModuleType:
    """Import torch for a tool that was given a torch object or ``framework="torch"``."""
    try:
        import torch
    except ImportError as error:  # pragma: no cover - torch is installed wherever tests run
        raise ImportError("this needs PyTorch: pip install 'hookgrad[torch]'") from error
    return torch
