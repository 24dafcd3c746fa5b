"""torch.autograd: the engine's entry points, Function, grad modes and the graph API."""
from . import graph
from .engine import backward, grad
from .function import Function, FunctionCtx, InplaceFunction, NestedIOFunction, once_differentiable
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled,
                        no_grad, set_grad_enabled)

__all__ = [
    "Function", "FunctionCtx", "InplaceFunction", "NestedIOFunction", "backward",
    "enable_grad", "grad", "graph", "inference_mode", "is_grad_enabled",
    "is_inference_mode_enabled", "no_grad", "once_differentiable", "set_grad_enabled",
]
