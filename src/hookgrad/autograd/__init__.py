"""torch.autograd: the engine's entry points, Function, grad modes and the graph API."""
from . import functional, graph
from .anomaly_mode import detect_anomaly, is_anomaly_enabled, set_detect_anomaly
from .engine import backward, grad
from .function import Function, FunctionCtx, InplaceFunction, NestedIOFunction, once_differentiable
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled,
                        no_grad, set_grad_enabled)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck


def Variable(tensor, requires_grad: bool = False):  # noqa: N802 - torch's deprecated name
    """Deprecated in torch: a Variable is a Tensor. Kept so old code runs."""
    if requires_grad:
        tensor.requires_grad_(True)
    return tensor


__all__ = [
    "Function", "FunctionCtx", "GradcheckError", "InplaceFunction", "NestedIOFunction",
    "Variable", "backward", "detect_anomaly", "enable_grad", "functional", "grad", "gradcheck",
    "gradgradcheck", "graph", "inference_mode", "is_anomaly_enabled", "is_grad_enabled",
    "is_inference_mode_enabled", "no_grad", "once_differentiable", "set_detect_anomaly",
    "set_grad_enabled",
]
