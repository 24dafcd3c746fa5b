"""Schedulers built from others (SequentialLR, ChainedScheduler) and the one driven by a metric
rather than the epoch count (ReduceLROnPlateau)."""
from __future__ import annotations

from bisect import bisect_right
from math import inf
from typing import Any, Optional, Sequence

from ..._warnings import warn
from ..optimizer import Optimizer
from .base import (EPOCH_DEPRECATION_WARNING, LRScheduler, _group_values, _set_group_value,
                   per_group)

__all__ = ["ChainedScheduler", "ReduceLROnPlateau", "SequentialLR"]


def _check_children(owner: str, optimizer: Optimizer, schedulers: Sequence[Any],
                    empty_message: str) -> None:
    """torch's checks for a composite: at least one child, all on ``optimizer``, none a
    ReduceLROnPlateau (whose ``step`` needs a metric)."""
    if len(schedulers) < 1:
        raise ValueError(f"{owner} expects {empty_message}, but got no scheduler.")
    for index, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(f"{owner} at index {index} should have `optimizer` as its attribute.")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(f"{owner} does not support `ReduceLROnPlateau` scheduler as it "
                             "requires additional kwargs to be specified when calling `step`, "
                             f"but got one at index {index} in the given schedulers sequence.")
        if optimizer != scheduler.optimizer:
            raise ValueError(f"{owner} expects all schedulers to belong to the same optimizer, "
                             f"but got scheduler {scheduler.__class__.__name__} at index "
                             f"{index} has {scheduler.optimizer}, which is different from "
                             f"{optimizer.__class__.__name__}.")


class _Composite(LRScheduler):
    """state_dict of a scheduler made of others: its own fields plus each child's dict."""

    _schedulers: list

    def state_dict(self) -> dict:
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        children = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        state_dict["_schedulers"] = children
        for scheduler, saved in zip(self._schedulers, children):
            scheduler.load_state_dict(saved)


class SequentialLR(_Composite):
    """Hand the schedule from one scheduler to the next at each milestone epoch (e.g. a linear
    warm-up, then cosine decay); each child restarts from its own first epoch there."""

    def __init__(self, optimizer: Optimizer, schedulers: list, milestones: list,
                 last_epoch: int = -1) -> None:
        owner = type(self).__name__
        _check_children(owner, optimizer, schedulers, "at least one scheduler")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError("Sequential Schedulers expects number of schedulers provided to be "
                             "one more than the number of milestone points, but got number of "
                             f"schedulers {len(schedulers)} and the number of milestones to be "
                             f"equal to {len(milestones)}")
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # the children each took a step when built: undo those, then start the first one
        for group in optimizer.param_groups:
            _set_group_value(group, "lr", group["initial_lr"])
        self.recursive_undo()
        first = self._schedulers[bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def recursive_undo(self, sched: Optional[Any] = None) -> None:
        """Take back the construction step of every (nested) child."""
        target = self if sched is None else sched
        if hasattr(target, "_schedulers"):
            for child in target._schedulers:
                self.recursive_undo(child)
        elif hasattr(target, "last_epoch"):
            target.last_epoch -= 1

    def step(self) -> None:  # type: ignore[override]
        self.last_epoch += 1
        index = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[index]
        if index > 0 and self._milestones[index - 1] == self.last_epoch:
            scheduler._update_lr(0)  # a child starts over at its epoch 0
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_Composite):
    """Step several schedulers together each epoch, so their factors multiply."""

    def __init__(self, schedulers: Sequence[LRScheduler],
                 optimizer: Optional[Optimizer] = None) -> None:
        owner = type(self).__name__
        if len(schedulers) < 1:
            raise ValueError(f"{owner} expects at least one scheduler to be chained, but got no "
                             "scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        _check_children(owner, optimizer, schedulers, "at least one scheduler to be chained")
        self._schedulers = list(schedulers)
        self.optimizer = optimizer
        self._last_lr = _group_values(self._schedulers[-1].optimizer, "lr")

    def step(self) -> None:  # type: ignore[override]
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = _group_values(self._schedulers[-1].optimizer, "lr")


class ReduceLROnPlateau(LRScheduler):
    """Multiply the lr by ``factor`` once the metric passed to ``step(metric)`` has not improved
    (by ``threshold``, relative or absolute) for more than ``patience`` epochs; then wait
    ``cooldown`` epochs before counting again. Never below ``min_lr``."""

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1,
                 patience: int = 10, threshold: float = 1e-4, threshold_mode: str = "rel",
                 cooldown: int = 0, min_lr: Any = 0, eps: float = 1e-8) -> None:
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer, self.factor = optimizer, factor
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, got "
                                 f"{len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = per_group("min_lr", optimizer, min_lr)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _group_values(optimizer, "lr")
        self._init_is_better(mode=mode, threshold=threshold, threshold_mode=threshold_mode)
        self._reset()

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics: Any, epoch: Optional[int] = None) -> None:  # type: ignore[override]
        current = float(metrics)
        if epoch is not None:
            warn(EPOCH_DEPRECATION_WARNING, UserWarning)
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        improved = self._is_better(current, self.best)
        if improved:
            self.best = current
        self.num_bad_epochs = 0 if improved else self.num_bad_epochs + 1
        # While cooling down after a cut, no epoch counts against patience.
        if self.in_cooldown:
            self.num_bad_epochs = 0
            self.cooldown_counter -= 1
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.num_bad_epochs, self.cooldown_counter = 0, self.cooldown
        self._last_lr = _group_values(self.optimizer, "lr")

    def _reduce_lr(self) -> None:
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` ({len(groups)}) differs "
                    f"from when `ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), "
                    "usually due to a new param group being added to the optimizer. Please "
                    "modify the `min_lrs` field to match the length of the `optimizer` param "
                    "groups.")
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, min_lr in zip(groups, self.min_lrs):
            old = float(group["lr"])
            new = max(old * self.factor, min_lr)
            if old - new > self.eps:  # changes smaller than eps are ignored
                _set_group_value(group, "lr", new)

    @property
    def in_cooldown(self) -> bool:
        """True while the scheduler waits out ``cooldown`` epochs after a reduction."""
        return self.cooldown_counter > 0

    def _is_better(self, a: float, best: float) -> bool:
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min":
            return a < best - self.threshold
        if self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode: str, threshold: float, threshold_mode: str) -> None:
        if mode not in {"min", "max"}:
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in {"rel", "abs"}:
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = inf if mode == "min" else -inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict: dict) -> None:
        """Restores the scheduler from ``state_dict()``'s output."""
        self.__dict__.update(state_dict)
        self._init_is_better(mode=self.mode, threshold=self.threshold,
                             threshold_mode=self.threshold_mode)
