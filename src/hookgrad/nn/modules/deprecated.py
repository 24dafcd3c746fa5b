"""Names torch keeps for old code: ``nn.Container`` and ``nn.NLLLoss2d``, each warning with
torch's FutureWarning when built."""
from __future__ import annotations

from typing import Optional

from ..._warnings import warn
from ...tensor import Tensor
from .loss import NLLLoss
from .module import Module


class Container(Module):
    """A module holding the submodules given as keywords (deprecated: subclass Module)."""

    def __init__(self, **kwargs: Module) -> None:
        warn("`nn.Container` is deprecated. All of its functionality is now implemented in "
             "`nn.Module`. Subclass that instead.", FutureWarning)
        super().__init__()
        for name, module in kwargs.items():
            self.add_module(name, module)


class NLLLoss2d(NLLLoss):
    """``NLLLoss`` under its old name for per-pixel targets (deprecated: use NLLLoss)."""

    def __init__(self, weight: Optional[Tensor] = None, size_average=None,
                 ignore_index: int = -100, reduce=None, reduction: str = "mean") -> None:
        warn("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a drop-in "
             "replacement and see https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for "
             "more details.", FutureWarning)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)
