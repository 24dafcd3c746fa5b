"""The scheduler base class: one ``step()`` per epoch sets every group's lr from ``get_lr()``,
with torch's warnings about call order and torch's state_dict."""
from __future__ import annotations

import weakref
from functools import wraps
from typing import Any, Optional

from ..._warnings import warn
from ...tensor import Tensor
from ..optimizer import Optimizer

__all__ = ["LRScheduler"]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where "
    "possible. Please use `scheduler.step()` to step the scheduler. During the deprecation, if "
    "epoch is different from None, the closed form is used instead of the new chainable form, "
    "where available. Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose.")

def _group_values(optimizer: Optimizer, key: str) -> list:
    """Each group's ``key``, copying tensors so the list does not alias the groups."""
    return [g[key].clone() if isinstance(g[key], Tensor) else g[key]
            for g in optimizer.param_groups]


def _set_group_value(group: dict, key: str, value: Any) -> None:
    """A tensor lr is filled in place (whoever holds it sees the change); a float is replaced."""
    if isinstance(group[key], Tensor):
        group[key].fill_(value.item() if isinstance(value, Tensor) else value)
    else:
        group[key] = value


def _remember_initial_lrs(optimizer: Optimizer, resuming: bool) -> None:
    """Give every group an ``initial_lr``, the base that schedules scale from.

    A fresh schedule copies it from ``lr`` (a tensor lr is cloned so later steps cannot move
    it); a resumed one must find it already restored with the optimizer's state.
    """
    for index, group in enumerate(optimizer.param_groups):
        if not resuming:
            start = group["lr"]
            if "initial_lr" not in group:
                group["initial_lr"] = start.clone() if isinstance(start, Tensor) else start
        elif "initial_lr" not in group:
            raise KeyError(
                f"param 'initial_lr' is not specified in param_groups[{index}] when resuming "
                "scheduler with last_epoch >= 0.\nThis typically happens when:\n"
                "1. You're trying to resume training from a checkpoint but haven't "
                "properly loaded the optimizer state\n2. You're using last_epoch >= 0 "
                "for a fresh training run (not recommended)")


class LRScheduler:
    """Sets each group's ``lr`` once per ``step()``; ``last_epoch`` counts the steps taken.

    Construction takes step 0 (so ``get_last_lr()`` is the initial lr) and records
    ``initial_lr`` in each group; resuming (``last_epoch >= 0``) needs it already there.
    """

    _get_lr_called_within_step: bool = False
    _is_initial: bool = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        _remember_initial_lrs(optimizer, resuming=last_epoch != -1)
        self.base_lrs: list = _group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        _track_optimizer_step(optimizer)
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def state_dict(self) -> dict:
        """Everything but the optimizer (which has its own state_dict)."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restores the scheduler from ``state_dict()``'s output."""
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> list:
        """The lrs the last ``step()`` set, one per group."""
        return self._last_lr

    def get_lr(self) -> list:
        """The next lrs from the current ones (the chainable form); subclasses define it."""
        raise NotImplementedError

    def step(self, epoch: Optional[int] = None) -> None:
        """Advance one epoch (or jump to ``epoch``, deprecated: uses the closed form)."""
        if self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warn(
                    "Seems like `optimizer.step()` has been overridden after learning rate "
                    "scheduler initialization. Please, make sure to call `optimizer.step()` "
                    "before `lr_scheduler.step()`. See more details at "
                    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                    UserWarning)
            elif not getattr(self.optimizer, "_opt_called", False):
                warn(
                    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In "
                    "PyTorch 1.1.0 and later, you should call them in the opposite order: "
                    "`optimizer.step()` before `lr_scheduler.step()`.  Failure to do this will "
                    "result in PyTorch skipping the first value of the learning rate schedule. "
                    "See more details at "
                    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                    UserWarning)
        self._step_count += 1
        if epoch is not None:
            warn(EPOCH_DEPRECATION_WARNING, UserWarning)
        self._update_lr(epoch)

    def _update_lr(self, epoch: Optional[int] = None) -> None:
        """Set the groups' lrs for the next epoch, or for ``epoch`` by the closed form."""
        # Jumping to an explicit epoch needs the closed form where a schedule has one; the
        # chainable get_lr only knows how to go one step from the current lrs.
        compute = self.get_lr
        if epoch is not None:
            compute = getattr(self, "_get_closed_form_lr", None) or compute
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        self._get_lr_called_within_step = True
        try:
            values = compute()
        finally:
            self._get_lr_called_within_step = False
        if len(values) != len(self.optimizer.param_groups):
            raise ValueError(f"get_lr() gave {len(values)} values for "
                             f"{len(self.optimizer.param_groups)} parameter groups")
        for group, lr in zip(self.optimizer.param_groups, values):
            _set_group_value(group, "lr", lr)
        self._last_lr: list = _group_values(self.optimizer, "lr")

    def _warn_if_outside_step(self) -> None:
        if not self._get_lr_called_within_step:
            warn("To get the last learning rate computed by the scheduler, please use "
                 "`get_last_lr()`.", UserWarning)


def _track_optimizer_step(optimizer: Optimizer) -> None:
    """Mark the optimizer when it steps, so a scheduler stepped first can warn as torch does."""
    if hasattr(optimizer.step, "_wrapped_by_lr_sched"):
        return
    optimizer_ref = weakref.ref(optimizer)
    func = optimizer.step.__func__

    @wraps(func)
    def wrapper(*args, **kwargs):
        opt = optimizer_ref()
        opt._opt_called = True
        return func.__get__(opt, opt.__class__)(*args, **kwargs)

    wrapper._wrapped_by_lr_sched = True
    optimizer.step = wrapper




def per_group(name: str, optimizer: Optimizer, value: Any) -> list:
    """One value per parameter group: a list is checked against the group count, a single value
    repeated; tensors are copied so the scheduler does not alias the caller's."""
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. "
                             f"{name} has {len(value)} values, param_groups has "
                             f"{len(optimizer.param_groups)}.")
        values = list(value)
    else:
        values = [value] * len(optimizer.param_groups)
    return [v.clone() if isinstance(v, Tensor) else v for v in values]


def set_momentum(optimizer: Optimizer, group: dict, momentum: float) -> None:
    """Cycle the momentum: beta1 for Adam-like optimizers, ``momentum`` for the others."""
    if "betas" in optimizer.defaults:
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


def check_momentum(optimizer: Optimizer) -> None:
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` "
                         "option enabled")
