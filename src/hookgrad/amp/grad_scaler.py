"""torch.amp.GradScaler: loss scaling for training in float16.

The loss is multiplied by a scale before backward, so small gradients survive a narrow dtype;
``unscale_`` divides the gradients back and notes whether any is inf or NaN; ``step`` skips the
optimizer's step when one was; ``update`` shrinks the scale after such a step and grows it after
``growth_interval`` clean steps in a row.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from .. import _device, _dtype
from .._warnings import warn
from ..autograd import grad_mode
from ..tensor import Tensor

__all__ = ["GradScaler"]

_READY, _UNSCALED, _STEPPED = 0, 1, 2


class GradScaler:
    """Scales a loss before backward and checks the gradients before the optimizer steps::

        scaler = hookgrad.amp.GradScaler("cpu")
        scaler.scale(loss).backward()
        scaler.step(optimizer)      # skipped when a gradient is inf or NaN
        scaler.update()             # backs off after a skipped step, grows after clean ones
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = _device.device(device).type
        if enabled and self._device == "cuda":
            warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                 "Disabling.")
            enabled = False
        self._enabled = enabled
        if enabled:
            assert growth_factor > 1.0, "The growth factor must be > 1.0."
            assert backoff_factor < 1.0, "The backoff factor must be < 1.0."
        self._init_scale = init_scale
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval
        self._init_growth_tracker = 0
        self._scale: Optional[Tensor] = None  # made on the first scale()
        self._growth_tracker: Optional[Tensor] = None
        self._per_optimizer_states: dict = {}

    # -- scaling ----------------------------------------------------------------------------------
    def _start(self) -> None:
        if self._scale is None:
            self._scale = Tensor._make(np.array(self._init_scale, np.float32))
            self._growth_tracker = Tensor._make(np.array(self._init_growth_tracker, np.int32))

    def scale(self, outputs: Any) -> Any:
        """``outputs`` (a tensor, or an iterable of them, nested) times the current scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            self._start()
            return outputs * self._scale
        if not isinstance(outputs, (list, tuple)) and not hasattr(outputs, "__iter__"):
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")
        scaled = [self.scale(item) for item in outputs]
        return type(outputs)(scaled) if isinstance(outputs, (list, tuple)) else scaled

    def _state(self, optimizer) -> dict:
        return self._per_optimizer_states.setdefault(
            id(optimizer), {"stage": _READY, "found_inf": False})

    def unscale_(self, optimizer) -> None:
        """Divide ``optimizer``'s gradients by the scale, in place, once per step."""
        if not self._enabled:
            return
        state = self._state(optimizer)
        if state["stage"] is _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        if state["stage"] is _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        assert self._scale is not None, "Attempted unscale_ but _scale is None.  This may " \
            "indicate your script did not use scaler.scale(loss or outputs) earlier in the " \
            "iteration."
        inverse = np.float32(1.0 / np.float64(self._scale._data))
        grads = [parameter.grad for group in optimizer.param_groups
                 for parameter in group["params"] if parameter.grad is not None]
        if any(grad.dtype is _dtype.float16 for grad in grads):
            # float16 master gradients would lose what scaling protected; checked before any
            # gradient changes
            raise ValueError("Attempting to unscale FP16 gradients.")
        found_inf = False
        with grad_mode.no_grad():
            for grad in grads:
                if not np.isfinite(grad._data.astype(np.float32)).all():
                    found_inf = True
                grad.mul_(float(inverse))
        # torch's step refuses an optimizer none of whose gradients it saw
        state["found_inf"], state["checked"] = found_inf, bool(grads)
        state["stage"] = _UNSCALED

    def step(self, optimizer, *args, **kwargs) -> Any:
        """Unscale (unless done), then ``optimizer.step()`` unless a gradient was inf or NaN;
        returns what the step returned, or None when it was skipped."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        state = self._state(optimizer)
        if state["stage"] is _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is _READY:
            self.unscale_(optimizer)
        assert state["checked"], "No inf checks were recorded for this optimizer."
        result = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = _STEPPED
        return result

    def update(self, new_scale: Any = None) -> None:
        """Set the scale for the next iteration: ``new_scale`` when given, else backed off
        after a skipped step or grown after ``growth_interval`` clean steps."""
        if not self._enabled:
            return
        assert self._scale is not None, "Attempted update but _scale is None.  This may " \
            "indicate your script did not use scaler.scale(loss or outputs) earlier in the " \
            "iteration."
        if new_scale is not None:
            if isinstance(new_scale, Tensor):
                assert new_scale.numel() == 1, "new_scale should be a single-element tensor."
                assert not new_scale.requires_grad, "new_scale should not require grad."
                value = np.float32(new_scale._data.reshape(()))
            else:
                value = np.float32(new_scale)
            self._scale._data[...] = value
        else:
            checked = [s for s in self._per_optimizer_states.values() if s["stage"] != _READY]
            assert checked, "No inf checks were recorded prior to update."
            tracker = self._growth_tracker._data
            if any(s["found_inf"] for s in checked):
                self._scale._data[...] = self._scale._data * np.float32(self._backoff_factor)
                tracker[...] = 0
            elif tracker + 1 == self._growth_interval:
                self._scale._data[...] = self._scale._data * np.float32(self._growth_factor)
                tracker[...] = 0
            else:
                tracker[...] = tracker + 1
        self._per_optimizer_states = {}

    # -- settings ---------------------------------------------------------------------------------
    def get_scale(self) -> float:
        """The current scale (1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale._data)

    def get_growth_factor(self) -> float:
        """The factor the scale grows by."""
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        """Set the factor the scale grows by."""
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        """The factor the scale shrinks by after a skipped step."""
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        """Set the factor the scale shrinks by after a skipped step."""
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        """Clean steps in a row before the scale grows."""
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        """Set the clean steps in a row before the scale grows."""
        self._growth_interval = new_interval

    def is_enabled(self) -> bool:
        """Whether scaling is on."""
        return self._enabled

    def _tracker_value(self) -> int:
        if self._growth_tracker is None:
            return self._init_growth_tracker
        return int(self._growth_tracker._data)

    def state_dict(self) -> dict:
        """scale, growth_factor, backoff_factor, growth_interval and _growth_tracker; empty when
        disabled."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._tracker_value()}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore what ``state_dict`` gave."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale._data[...] = np.float32(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker._data[...] = state_dict["_growth_tracker"]
