"""Adagrad and Adadelta: per-coordinate step sizes from accumulated squared gradients
(torch's for-loop path)."""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from ..tensor import Tensor
from .optimizer import (Optimizer, ParamsT, _bump, _check_nonnegative, _check_tensor_lr,
                        _increment_step, _new_step, _reject_differentiable, _value, _zeros_like)

__all__ = ["Adadelta", "Adagrad"]


def _signed_grad(param: Tensor, maximize: bool, weight_decay: float) -> np.ndarray:
    """The gradient a step follows: negated to maximize, plus ``wd * p`` (L2 decay)."""
    grad = param.grad._data
    if maximize:
        grad = -grad
    if weight_decay != 0:
        grad = grad + param._data.dtype.type(weight_decay) * param._data
    return grad


class Adagrad(Optimizer):
    """``sum += g*g``; ``p -= clr * g / (sqrt(sum) + eps)``, ``clr = lr / (1 + (t-1)*lr_decay)``.

    As in torch, every parameter's state (``step`` and ``sum``, filled with
    ``initial_accumulator_value``) exists from construction, not from its first step.
    """

    def __init__(self, params: ParamsT, lr: float = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0,
                 eps: float = 1e-10, foreach: Optional[bool] = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: Optional[bool] = None) -> None:
        _check_tensor_lr(lr)
        _check_nonnegative("learning rate", lr)
        _check_nonnegative("lr_decay value", lr_decay)
        _check_nonnegative("weight_decay value", weight_decay)
        _check_nonnegative("initial_accumulator_value value", initial_accumulator_value)
        _check_nonnegative("epsilon value", eps)
        _reject_differentiable(differentiable)
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for param in group["params"]:
                self._init_state(param, self.state[param])

    def _init_state(self, param: Tensor, state: dict, group: Optional[dict] = None) -> None:
        state["step"] = _new_step()
        value = self.defaults["initial_accumulator_value"]
        state["sum"] = Tensor._make(np.full_like(param._data, value))

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        self._upgrade_state(foreach=None, maximize=False, differentiable=False, fused=None)

    def share_memory(self) -> None:
        """torch moves the sums to shared memory for multiprocessing; NumPy arrays need no move."""

    def step(self, closure: Optional[Callable[[], Any]] = None) -> Any:
        return self._step_each(closure, _adagrad_options, self._init_state, _adagrad_update)


def _adagrad_options(group: dict) -> tuple:
    return (_value(group["lr"]), group["lr_decay"], _value(group["weight_decay"]), group["eps"],
            group["maximize"])


def _adagrad_update(param: Tensor, state: dict, lr: float, lr_decay: float,
                    weight_decay: float, eps: float, maximize: bool) -> None:
    kind = param._data.dtype.type
    step = _increment_step(state)
    grad = _signed_grad(param, maximize, weight_decay)
    clr = lr / (1 + (step - 1) * lr_decay)
    total = state["sum"]
    total._data += grad * grad
    _bump(total)
    std = np.sqrt(total._data)
    std += kind(eps)
    param._data += (kind(-clr) * grad) / std  # addcdiv's order: (value * t1) / t2
    _bump(param)


class Adadelta(Optimizer):
    """``v = rho*v + (1-rho)*g*g``; ``delta = sqrt(u + eps) / sqrt(v + eps) * g``;
    ``u = rho*u + (1-rho)*delta*delta``; ``p -= lr * delta``."""

    def __init__(self, params: ParamsT, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach: Optional[bool] = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _check_tensor_lr(lr)
        _check_nonnegative("learning rate", lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _check_nonnegative("epsilon value", eps)
        _check_nonnegative("weight_decay value", weight_decay)
        _reject_differentiable(differentiable)
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "capturable": capturable, "foreach": foreach,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        self._upgrade_state(foreach=None, maximize=False, differentiable=False,
                            capturable=False)

    def step(self, closure: Optional[Callable[[], Any]] = None) -> Any:
        return self._step_each(closure, _adadelta_options, _adadelta_state, _adadelta_update)


def _adadelta_options(group: dict) -> tuple:
    return (_value(group["lr"]), group["rho"], group["eps"], _value(group["weight_decay"]),
            group["maximize"])


def _adadelta_state(param: Tensor, state: dict, group: dict) -> None:
    state["step"] = _new_step()
    state["square_avg"] = _zeros_like(param)
    state["acc_delta"] = _zeros_like(param)


def _adadelta_update(param: Tensor, state: dict, lr: float, rho: float, eps: float,
                     weight_decay: float, maximize: bool) -> None:
    kind = param._data.dtype.type
    _increment_step(state)
    grad = _signed_grad(param, maximize, weight_decay)
    square_avg, acc_delta = state["square_avg"], state["acc_delta"]
    square_avg._data *= kind(rho)
    square_avg._data += kind(1 - rho) * (grad * grad)
    std = np.sqrt(square_avg._data + kind(eps))
    delta = np.sqrt(acc_delta._data + kind(eps))
    delta /= std
    delta *= grad
    acc_delta._data *= kind(rho)
    acc_delta._data += kind(1 - rho) * (delta * delta)
    _bump(square_avg, square_avg, acc_delta, acc_delta)
    param._data += kind(-lr) * delta
    _bump(param)
