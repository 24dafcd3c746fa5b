"""Adam and AdamW (decoupled weight decay), with amsgrad and maximize (torch's for-loop path)."""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from ..tensor import Tensor
from .optimizer import (Optimizer, ParamsT, _bump, _check_nonnegative, _check_tensor_lr,
                        _increment_step, _lerp_, _new_step, _reject_differentiable,
                        _value, _zeros_like)

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """``m = lerp(m, g, 1-b1)``; ``v = b2*v + (1-b2)*g*g``;
    ``p -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps)``, with ``v`` replaced by its running
    maximum under amsgrad. Weight decay adds ``wd*p`` to g, or (decoupled, AdamW) scales p by
    ``1 - lr*wd`` first."""

    def __init__(self, params: ParamsT, lr: float = 1e-3, betas: tuple = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *,
                 foreach: Optional[bool] = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False,
                 fused: Optional[bool] = None, decoupled_weight_decay: bool = False) -> None:
        _check_tensor_lr(lr)
        _check_nonnegative("learning rate", lr)
        _check_nonnegative("epsilon value", eps)
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        _check_nonnegative("weight_decay value", weight_decay)
        if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
                or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
            raise ValueError("betas must be either both floats or both Tensors")
        _reject_differentiable(differentiable)
        defaults = {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
                    "capturable": capturable, "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        self._upgrade_state(amsgrad=False, maximize=False, foreach=None, capturable=False,
                            differentiable=False, decoupled_weight_decay=False, fused=None)

    def step(self, closure: Optional[Callable[[], Any]] = None) -> Any:
        return self._step_each(closure, _adam_options, _adam_state, _adam_update)


class AdamW(Adam):
    """Adam whose weight decay shrinks the parameter directly (``p *= 1 - lr*wd``) instead of
    entering the moment estimates; torch's default ``weight_decay`` here is 0.01."""

    def __init__(self, params: ParamsT, lr: float = 1e-3, betas: tuple = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False, foreach: Optional[bool] = None,
                 capturable: bool = False, differentiable: bool = False,
                 fused: Optional[bool] = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True


def _adam_options(group: dict) -> tuple:
    beta1, beta2 = (_value(b) for b in group["betas"])
    return (_value(group["lr"]), beta1, beta2, group["eps"], _value(group["weight_decay"]),
            group["amsgrad"], group["maximize"], group["decoupled_weight_decay"])


def _adam_state(param: Tensor, state: dict, group: dict) -> None:
    state["step"] = _new_step()
    state["exp_avg"] = _zeros_like(param)
    state["exp_avg_sq"] = _zeros_like(param)
    if group["amsgrad"]:
        state["max_exp_avg_sq"] = _zeros_like(param)


def _adam_update(param: Tensor, state: dict, lr: float, beta1: float, beta2: float, eps: float,
                 weight_decay: float, amsgrad: bool, maximize: bool, decoupled: bool) -> None:
    p = param._data
    kind = p.dtype.type
    grad = param.grad._data
    if maximize:
        grad = -grad
    step = _increment_step(state)
    if weight_decay != 0:
        if decoupled:
            p *= kind(1 - lr * weight_decay)
            _bump(param)
        else:
            grad = grad + kind(weight_decay) * p
    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
    _lerp_(exp_avg._data, grad, 1 - beta1)
    exp_avg_sq._data *= kind(beta2)
    exp_avg_sq._data += kind(1 - beta2) * (grad * grad)
    _bump(exp_avg, exp_avg_sq, exp_avg_sq)

    bias_correction1 = 1 - beta1 ** step
    bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
    step_size = lr / bias_correction1
    if amsgrad:
        max_sq = state["max_exp_avg_sq"]
        np.maximum(max_sq._data, exp_avg_sq._data, out=max_sq._data)
        _bump(max_sq)
        second = max_sq._data
    else:
        second = exp_avg_sq._data
    denom = np.sqrt(second) / kind(bias_correction2_sqrt)
    denom += kind(eps)
    # addcdiv: p + (value * m) / denom, in that order (torch's rounding)
    p += (kind(-step_size) * exp_avg._data) / denom
    _bump(param)
