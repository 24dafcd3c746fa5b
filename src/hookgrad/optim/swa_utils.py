"""Weight averaging (torch.optim.swa_utils): a model whose parameters are a running average
(equal weights for SWA, exponential for EMA) of another's, a pass to refresh BatchNorm
statistics for the averaged weights, and the SWALR schedule that anneals to a fixed lr."""
from __future__ import annotations

import itertools
import math
from copy import deepcopy
from typing import Any, Callable, Iterable, Optional, Sequence

from .. import _dtype
from ..autograd import grad_mode
from ..nn.modules.instancenorm import _InstanceNorm
from ..nn.modules.module import Module
from ..nn.modules.normalization import _BatchNorm
from ..ops.creation import tensor
from ..tensor import Tensor
from .lr_scheduler.base import LRScheduler, per_group
from .optimizer import Optimizer, _lerp_

__all__ = ["AveragedModel", "SWALR", "get_ema_avg_fn", "get_ema_multi_avg_fn",
           "get_swa_avg_fn", "get_swa_multi_avg_fn", "update_bn"]

AvgFn = Callable[[Tensor, Tensor, Any], Tensor]
MultiAvgFn = Callable[[Sequence[Tensor], Sequence[Tensor], Any], None]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range.")


def get_ema_multi_avg_fn(decay: float = 0.999) -> MultiAvgFn:
    """An in-place exponential average for a list of tensors, for ``AveragedModel``'s
    ``multi_avg_fn``: ``ema = lerp(ema, current, 1 - decay)`` (integer tensors:
    ``ema*decay + current*(1 - decay)``)."""
    _check_decay(decay)

    def ema_update(ema_params: Sequence[Tensor], current_params: Sequence[Tensor], _) -> None:
        with grad_mode.no_grad():
            if ema_params[0].is_floating_point():
                for ema, current in zip(ema_params, current_params):
                    _lerp_(ema._data, current._data, 1 - decay)
                    ema._version_counter[0] += 1
            else:
                for ema, current in zip(ema_params, current_params):
                    ema.copy_(ema * decay + current * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> MultiAvgFn:
    """An in-place equal-weight running mean for a list of tensors, for ``multi_avg_fn``:
    ``avg = lerp(avg, current, 1 / (n + 1))`` after ``n`` models averaged."""

    def swa_update(averaged_params: Sequence[Tensor], current_params: Sequence[Tensor],
                   num_averaged: Any) -> None:
        with grad_mode.no_grad():
            if averaged_params[0].is_floating_point():
                weight = float(1 / (num_averaged + 1))
                for averaged, current in zip(averaged_params, current_params):
                    _lerp_(averaged._data, current._data, weight)
                    averaged._version_counter[0] += 1
            else:
                for averaged, current in zip(averaged_params, current_params):
                    difference = current - averaged
                    if isinstance(num_averaged, Tensor):
                        averaged.addcdiv_(difference, num_averaged + 1)
                    else:
                        averaged.add_(difference, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> AvgFn:
    """An exponential average of one tensor, for ``avg_fn``:
    ``decay * ema + (1 - decay) * current``."""
    _check_decay(decay)

    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        with grad_mode.no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> AvgFn:
    """An equal-weight running mean of one tensor, for ``avg_fn``:
    ``avg + (current - avg) / (n + 1)``."""

    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        with grad_mode.no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A deep copy of ``model`` whose parameters ``update_parameters(model)`` folds into a
    running average; ``n_averaged`` (an int64 buffer) counts the models averaged so far.

    The default average is SWA's equal-weight mean; pass ``avg_fn`` (one tensor at a time,
    returning the new average) or ``multi_avg_fn`` (lists, in place), e.g.
    ``multi_avg_fn=get_ema_multi_avg_fn(0.999)`` for an EMA. Buffers are copied from ``model``
    unless ``use_buffers=True``, which averages them with the parameters.

    Example::

        swa_model = AveragedModel(model)
        for epoch in range(epochs):
            train_one_epoch(model)
            swa_model.update_parameters(model)
        update_bn(loader, swa_model)
    """

    def __init__(self, model: Module, device: Any = None, avg_fn: Optional[AvgFn] = None,
                 multi_avg_fn: Optional[MultiAvgFn] = None, use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=_dtype.int64))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The averaged copy's forward."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s current parameters (and buffers if ``use_buffers``) into the
        average; the first call copies them."""
        if self.use_buffers:
            mine = list(itertools.chain(self.module.parameters(), self.module.buffers()))
            theirs = list(itertools.chain(model.parameters(), model.buffers()))
        else:
            mine, theirs = list(self.parameters()), list(model.parameters())
        pairs = [(a.detach(), m.detach()) for a, m in zip(mine, theirs)]
        with grad_mode.no_grad():
            if int(self.n_averaged) == 0:
                for averaged, current in pairs:
                    averaged.copy_(current)
            else:
                self._average(pairs)
            if not self.use_buffers:
                for own, source in zip(self.module.buffers(), model.buffers()):
                    own.detach().copy_(source.detach())
            self.n_averaged += 1

    def _average(self, pairs: list) -> None:
        if self.avg_fn is not None:
            for averaged, current in pairs:
                averaged.copy_(self.avg_fn(averaged, current, self.n_averaged))
            return
        if self.multi_avg_fn is None:  # on CPU torch takes the one-tensor SWA mean
            average = get_swa_avg_fn()
            for averaged, current in pairs:
                averaged.copy_(average(averaged, current, self.n_averaged))
            return
        groups: dict = {}  # torch hands multi_avg_fn one list per dtype
        for averaged, current in pairs:
            groups.setdefault(averaged.dtype, []).append((averaged, current))
        for group in groups.values():
            self.multi_avg_fn([a for a, _ in group], [c for _, c in group], self.n_averaged)


def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute every BatchNorm's running statistics with one pass over ``loader`` (each
    item, or its first element for a list or tuple, is fed to ``model``), as a cumulative
    average (momentum None); the momenta and the train/eval mode are restored afterwards."""
    layers = [layer for layer in model.modules()
              if isinstance(layer, _BatchNorm) and not isinstance(layer, _InstanceNorm)]
    if not layers:
        return
    with grad_mode.no_grad():
        kept_momenta = [layer.momentum for layer in layers]
        for layer in layers:
            layer.reset_running_stats()
            layer.momentum = None  # None: a plain average over every batch of the pass
        was_training = model.training
        model.train()
        for batch in loader:
            model(_model_input(batch, device))
        for layer, momentum in zip(layers, kept_momenta):
            layer.momentum = momentum
        model.train(was_training)


def _model_input(batch: Any, device: Any) -> Any:
    # a (input, target, ...) sequence feeds its first element
    if isinstance(batch, (list, tuple)):
        batch = batch[0]
    return batch if device is None else batch.to(device)


class SWALR(LRScheduler):
    """Anneals each group's lr from its value to ``swa_lr`` over ``anneal_epochs`` steps
    (``"cos"``: ``(1 - cos(pi t)) / 2`` of the way at fraction ``t``; ``"linear"``: ``t``),
    then holds it, computed step by step from the current lr as torch's."""

    def __init__(self, optimizer: Optimizer, swa_lr: Any, anneal_epochs: int = 10,
                 anneal_strategy: str = "cos", last_epoch: int = -1) -> None:
        for value, group in zip(per_group("swa_lr", optimizer, swa_lr),
                                optimizer.param_groups):
            group["swa_lr"] = value
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', "
                             f"instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        """The lr annealing started from, recovered from the lr at fraction ``alpha``."""
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = (self._cosine_anneal if anneal_strategy == "cos"
                            else self._linear_anneal)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        previous = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        starts = [self._get_initial_lr(group["lr"], group["swa_lr"], previous)
                  for group in self.optimizer.param_groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [group["swa_lr"] * alpha + start * (1 - alpha)
                for group, start in zip(self.optimizer.param_groups, starts)]

    def state_dict(self) -> dict:
        """Everything but the optimizer and the anneal function (restored from its name)."""
        return {key: value for key, value in self.__dict__.items()
                if key not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restores the scheduler from ``state_dict()``'s output."""
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)

