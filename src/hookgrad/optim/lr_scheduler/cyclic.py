"""Schedules that cycle: CyclicLR (triangular waves), OneCycleLR (one warm-up and anneal) and
CosineAnnealingWarmRestarts (SGDR), with the momentum cycled opposite to the lr where asked."""
from __future__ import annotations

import math
import types
from functools import partial
from typing import Any, Callable, Optional, Union

from ..optimizer import Optimizer
from .base import (LRScheduler, _group_values, _set_group_value, check_momentum, per_group,
                   set_momentum)

__all__ = ["CosineAnnealingWarmRestarts", "CyclicLR", "OneCycleLR"]

Number = Union[float, "list[float]"]


class CyclicLR(LRScheduler):
    """The lr moves between ``base_lr`` and ``max_lr`` in triangles of ``step_size_up`` rising
    and ``step_size_down`` falling steps; the height is scaled per cycle (``triangular2``: halved
    each cycle) or per iteration (``exp_range``: ``gamma**iteration``), or by ``scale_fn``.
    Meant to be stepped after every batch."""

    def __init__(self, optimizer: Optimizer, base_lr: Number, max_lr: Number,
                 step_size_up: int = 2000, step_size_down: Optional[int] = None,
                 mode: str = "triangular", gamma: float = 1.0,
                 scale_fn: Optional[Callable[[float], float]] = None,
                 scale_mode: str = "cycle", cycle_momentum: bool = True,
                 base_momentum: Number = 0.8, max_momentum: Number = 0.9,
                 last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        base_lrs = per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                _set_group_value(group, "lr", lr)
        self.max_lrs = per_group("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode, self.gamma, self.scale_mode = mode, gamma, scale_mode
        self._scale_fn_custom = scale_fn
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            check_momentum(optimizer)
            self.use_beta1 = "betas" in optimizer.defaults
            self.base_momentums = per_group("base_momentum", optimizer, base_momentum)
            self.max_momentums = per_group("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                # The lr starts low, so the momentum starts at the top of its range.
                pairs = zip(self.base_momentums, self.max_momentums)
                for group, (low, high) in zip(optimizer.param_groups, pairs):
                    set_momentum(optimizer, group, high)
                    group.update(max_momentum=high, base_momentum=low)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self) -> None:
        # A custom scale_fn keeps the caller's scale_mode; each built-in shape fixes its own.
        if self._scale_fn_custom is not None:
            return
        if self.mode in ("triangular", "triangular2"):
            halving = self.mode == "triangular2"
            self._scale_fn_ref = _halving_scale if halving else _constant_scale
            self.scale_mode = "cycle"
        elif self.mode == "exp_range":
            self._scale_fn_ref, self.scale_mode = partial(_power_scale, self.gamma), "iterations"

    def scale_fn(self, x: float) -> float:
        """The height factor for cycle (or iteration) ``x``."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        return self._scale_fn_ref(x)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            fraction = x / self.step_ratio
        else:
            fraction = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [base + ((high - base) * fraction) * scale
               for base, high in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for low, high, group in zip(self.base_momentums, self.max_momentums,
                                        self.optimizer.param_groups):
                set_momentum(self.optimizer, group, high - ((high - low) * fraction) * scale)
        return lrs

    def state_dict(self) -> dict:
        """A custom ``scale_fn`` is not saved unless it is a callable object (its ``__dict__``)."""
        state = super().state_dict()
        state.pop("_scale_fn_ref", None)
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = (fn.__dict__.copy()
                                     if fn is not None and not isinstance(fn, types.FunctionType)
                                     else None)
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        """Restores the scheduler; the scale function comes back from the saved mode."""
        saved = state_dict.pop("_scale_fn_custom")
        super().load_state_dict(state_dict)
        # Only a callable object's attributes were saved; a plain function stays as given.
        if saved is not None:
            self._scale_fn_custom.__dict__.update(saved)
        self._init_scale_fn()


def _constant_scale(x: float) -> float:
    return 1.0


def _halving_scale(x: float) -> float:
    return 1 / (2.0 ** (x - 1))


def _power_scale(gamma: float, x: float) -> float:
    return gamma ** x


class OneCycleLR(LRScheduler):
    """One cycle over ``total_steps`` batches: the lr warms up from ``max_lr/div_factor`` to
    ``max_lr`` over the first ``pct_start`` of the steps, then anneals (cosine or linear) to
    ``initial_lr/final_div_factor``; ``three_phase`` comes back down symmetrically before the
    final anneal. The momentum moves the opposite way."""

    def __init__(self, optimizer: Optimizer, max_lr: Number, total_steps: Optional[int] = None,
                 epochs: Optional[int] = None, steps_per_epoch: Optional[int] = None,
                 pct_start: float = 0.3, anneal_strategy: str = "cos",
                 cycle_momentum: bool = True, base_momentum: Number = 0.85,
                 max_momentum: Number = 0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, three_phase: bool = False,
                 last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        self.total_steps = _total_steps(total_steps, epochs, steps_per_epoch)
        warm = float(pct_start * self.total_steps) - 1
        if three_phase:
            self._schedule_phases = [
                _phase(warm, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                _phase(float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr",
                       "base_momentum", "max_momentum"),
                _phase(self.total_steps - 1, "initial_lr", "min_lr", "max_momentum",
                       "max_momentum")]
        else:
            self._schedule_phases = [
                _phase(warm, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                _phase(self.total_steps - 1, "max_lr", "min_lr", "base_momentum",
                       "max_momentum")]
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._anneal_func_type = anneal_strategy
        max_lrs = per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for high, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = high / div_factor
                group["max_lr"] = high
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            check_momentum(optimizer)
            self.use_beta1 = "betas" in optimizer.defaults
            highs = per_group("max_momentum", optimizer, max_momentum)
            lows = per_group("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for high, low, group in zip(highs, lows, optimizer.param_groups):
                    set_momentum(optimizer, group, high)
                    group["max_momentum"] = high
                    group["base_momentum"] = low
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start: float, end: float, fraction: float) -> float:
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * fraction) + 1)
        return (end - start) * fraction + start

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total steps "
                             f"is {self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end = phase["end_step"]
                if step <= end or i == len(self._schedule_phases) - 1:
                    fraction = (step - start) / (end - start)
                    lrs.append(self._anneal(group[phase["start_lr"]], group[phase["end_lr"]],
                                            fraction))
                    if self.cycle_momentum:
                        momentum = self._anneal(group[phase["start_momentum"]],
                                                group[phase["end_momentum"]], fraction)
                        set_momentum(self.optimizer, group, momentum)
                    break
                start = end
        return lrs


def _phase(end_step: float, start_lr: str, end_lr: str, start_momentum: str,
           end_momentum: str) -> dict:
    """One stretch of OneCycleLR: where it ends and which group keys it runs between."""
    return {"end_step": end_step, "start_lr": start_lr, "end_lr": end_lr,
            "start_momentum": start_momentum, "end_momentum": end_momentum}


def _total_steps(total_steps: Optional[int], epochs: Optional[int],
                 steps_per_epoch: Optional[int]) -> int:
    if total_steps is not None:
        if total_steps <= 0 or not isinstance(total_steps, int):
            raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
        return total_steps
    if epochs is not None and steps_per_epoch is not None:
        if not isinstance(epochs, int) or epochs <= 0:
            raise ValueError(f"Expected positive integer epochs, but got {epochs}")
        if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
            raise ValueError("Expected positive integer steps_per_epoch, but got "
                             f"{steps_per_epoch}")
        return epochs * steps_per_epoch
    raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")


def _refuse(bad: bool, message: str) -> None:
    if bad:
        raise ValueError(message)


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from ``initial_lr`` to ``eta_min`` over ``T_i`` epochs, then a restart
    with ``T_i *= T_mult``. ``step(epoch)`` may take fractional epochs (per-batch stepping)."""

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:
        # Checked one after another, in torch's order, so the first bad argument is named.
        _refuse(T_0 <= 0 or not isinstance(T_0, int),
                f"Expected positive integer T_0, but got {T_0}")
        _refuse(T_mult < 1 or not isinstance(T_mult, int),
                f"Expected integer T_mult >= 1, but got {T_mult}")
        _refuse(not isinstance(eta_min, (float, int)),
                f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}")
        self.T_0 = self.T_i = T_0
        self.T_mult, self.eta_min = T_mult, eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        return [self.eta_min + (base_lr - self.eta_min)
                * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for base_lr in self.base_lrs]

    def step(self, epoch: Any = None) -> None:  # type: ignore[override]
        if epoch is None:
            # The constructor's own step (last_epoch still -1) lands on epoch 0.
            if self.last_epoch < 0:
                epoch = 0
                self._jump_to(0)
            else:
                epoch = self.last_epoch + 1
                self._advance_one()
        else:
            self._jump_to(epoch)
        self.last_epoch = math.floor(epoch)
        self._get_lr_called_within_step = True
        try:
            values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            _set_group_value(group, "lr", lr)
        self._last_lr = _group_values(self.optimizer, "lr")

    def _advance_one(self) -> None:
        # One epoch further into this period; running past its end restarts with a longer one.
        self.T_cur += 1
        if self.T_cur >= self.T_i:
            self.T_cur %= self.T_i
            self.T_i *= self.T_mult

    def _jump_to(self, epoch: Any) -> None:
        if epoch < 0:
            raise ValueError(f"Expected non-negative epoch, but got {epoch}")
        if epoch < self.T_0:
            self.T_i, self.T_cur = self.T_0, epoch
        elif self.T_mult == 1:
            self.T_cur = epoch % self.T_0
        else:
            # Period k lasts T_0 * T_mult**k, so the first k periods end at
            # T_0 * (T_mult**k - 1) / (T_mult - 1); solve that for the k holding ``epoch``.
            restarts = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
            elapsed = self.T_0 * (self.T_mult ** restarts - 1) / (self.T_mult - 1)
            self.T_cur, self.T_i = epoch - elapsed, self.T_0 * self.T_mult ** restarts
