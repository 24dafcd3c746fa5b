"""SyncBatchNorm: batch normalisation whose statistics torch would all-reduce across processes.

hookgrad runs in one process (there is no ``torch.distributed``), which is the case where
torch's module falls back to plain ``F.batch_norm`` over the local batch; so does this one,
with torch's input checks and ``convert_sync_batchnorm``.
"""
from __future__ import annotations

from typing import Any, Optional

from ...tensor import Tensor
from .module import Module
from .normalization import _BatchNorm


class SyncBatchNorm(_BatchNorm):
    """Batch normalisation over ``(N, C, ...)`` input of any rank >= 2 (see the module
    docstring for what "sync" means in a single process)."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: Optional[float] = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 process_group: Any = None, device=None, dtype=None, *,
                 bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats,
                         device=device, dtype=dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """``module`` with every batch-norm layer in it replaced by a SyncBatchNorm sharing its
        parameters, buffers and training flag."""
        converted = module
        if isinstance(module, _BatchNorm):
            converted = cls(module.num_features, module.eps, module.momentum, module.affine,
                            module.track_running_stats, process_group,
                            bias=module.bias is not None)
            if module.affine:
                converted.weight = module.weight
                converted.bias = module.bias
            converted.running_mean = module.running_mean
            converted.running_var = module.running_var
            converted.num_batches_tracked = module.num_batches_tracked
            converted.training = module.training
            if hasattr(module, "qconfig"):
                converted.qconfig = module.qconfig
        for name, child in module.named_children():
            converted.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return converted
