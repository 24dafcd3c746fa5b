"""torch.cpu.amp: deprecated spellings of ``hookgrad.amp``'s autocast and GradScaler for the
CPU; each warns (FutureWarning) and then acts as the ``"cpu"`` form."""
from __future__ import annotations

from ... import _dtype
from ..._warnings import warn
from ...amp import autocast_mode as _autocast_mode
from ...amp import grad_scaler as _grad_scaler

__all__ = ["GradScaler", "autocast"]


class autocast(_autocast_mode.autocast):
    """``hookgrad.autocast("cpu", ...)`` under its old name (bfloat16 by default)."""

    def __init__(self, enabled: bool = True, dtype: _dtype.dtype = _dtype.bfloat16,
                 cache_enabled: bool = True):
        warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
             "`torch.amp.autocast('cpu', args...)` instead.", FutureWarning)
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_grad_scaler.GradScaler):
    """``hookgrad.amp.GradScaler("cpu", ...)`` under its old name."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        warn("`torch.cpu.amp.GradScaler(args...)` is deprecated. Please use "
             "`torch.amp.GradScaler('cpu', args...)` instead.", FutureWarning)
        super().__init__("cpu", init_scale, growth_factor, backoff_factor, growth_interval,
                         enabled)
