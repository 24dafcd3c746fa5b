"""``nn.utils.stateless.functional_call``: torch's pre-2.0 name for ``func.functional_call``,
kept (with torch's deprecation warning) so older code runs unchanged."""
from __future__ import annotations

from typing import Any, Dict, Optional

from ..._warnings import warn
from ...tensor import Tensor
from ..modules.module import Module

__all__ = ["functional_call"]


def functional_call(module: Module, parameters_and_buffers: Dict[str, Tensor],
                    args: Any = None, kwargs: Optional[dict] = None, *,
                    tie_weights: bool = True, strict: bool = False) -> Any:
    """Call ``module`` with some of its parameters and buffers replaced, for this call only, by
    the tensors in ``parameters_and_buffers`` (by dotted name); the module is unchanged after.

    Deprecated as in torch: this is :func:`hookgrad.func.functional_call`, which takes the same
    arguments.
    """
    warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will "
         "be removed in a future version of PyTorch. Please use `torch.func.functional_call` "
         "instead which is a drop-in replacement.", FutureWarning)
    from ...func import functional_call as call  # func imports nn: resolve at call time
    return call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights,
                strict=strict)
