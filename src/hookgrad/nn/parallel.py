"""torch.nn.parallel's DataParallel as it behaves without accelerators: the wrapped module runs
the whole batch itself (hookgrad is CPU only, where torch's DataParallel does the same)."""
from __future__ import annotations

from typing import Any

from .modules.module import Module


class DataParallel(Module):
    """Wraps ``module`` (kept as ``self.module``, so state-dict keys gain the ``module.``
    prefix torch's have); ``forward`` calls it with the inputs unchanged. ``device_ids``,
    ``output_device`` and ``dim`` are accepted for torch's signature: with no accelerator
    there is nothing to scatter to, and ``device_ids`` is ``[]`` as in a CPU-only torch."""

    def __init__(self, module: Module, device_ids=None, output_device=None,
                 dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.device_ids = []

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)


__all__ = ["DataParallel"]
