"""torch.autograd: the engine's entry points, Function, grad modes and the graph API."""
from . import functional, graph
from .anomaly_mode import (detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled,
                           set_detect_anomaly)
from .engine import backward, grad
from .function import Function, FunctionCtx, InplaceFunction, NestedIOFunction, once_differentiable
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled,
                        no_grad, set_grad_enabled)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .thread_flags import (_force_original_view_tracking, is_multithreading_enabled,
                           is_view_replay_enabled, set_multithreading_enabled)


def Variable(tensor, requires_grad: bool = False):  # noqa: N802 - torch's deprecated name
    """Deprecated in torch: a Variable is a Tensor. Kept so old code runs."""
    if requires_grad:
        tensor.requires_grad_(True)
    return tensor


def variable(*args, **kwargs):
    """Removed in torch: always raises, pointing at ``torch.tensor``."""
    raise RuntimeError("torch.autograd.variable(...) is deprecated, use torch.tensor(...) "
                       "instead")


__all__ = [
    "Function", "FunctionCtx", "GradcheckError", "InplaceFunction", "NestedIOFunction",
    "Variable", "backward", "detect_anomaly", "enable_grad", "functional", "grad", "gradcheck",
    "gradgradcheck", "graph", "inference_mode", "is_anomaly_check_nan_enabled",
    "is_anomaly_enabled", "is_grad_enabled", "is_inference_mode_enabled",
    "is_multithreading_enabled", "is_view_replay_enabled", "no_grad", "once_differentiable",
    "set_detect_anomaly", "set_grad_enabled", "set_multithreading_enabled", "variable",
]
