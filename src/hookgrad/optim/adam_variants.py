"""Adam's relatives: Adamax (infinity norm), NAdam (Nesterov momentum) and RAdam (rectified
variance), each as torch's for-loop path computes it."""
from __future__ import annotations

import math
from typing import Any, Callable, Optional

import numpy as np

from ..tensor import Tensor
from .adagrad import _signed_grad
from .optimizer import (Optimizer, ParamsT, _bump, _check_nonnegative, _check_tensor_lr,
                        _increment_step, _lerp_, _new_step, _reject_differentiable,
                        _scalar_dtype, _step_as_tensor, _value, _zeros_like)

__all__ = ["Adamax", "NAdam", "RAdam"]


def _check_adam_like(lr: Any, eps: float, betas: tuple, weight_decay: float) -> None:
    """The argument checks Adam and its relatives share, with torch's messages."""
    _check_tensor_lr(lr)
    _check_nonnegative("learning rate", lr)
    _check_nonnegative("epsilon value", eps)
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    _check_nonnegative("weight_decay value", weight_decay)


def _decay(param: Tensor, maximize: bool, weight_decay: float, decoupled: bool,
           lr: float) -> np.ndarray:
    """The followed gradient; decoupled decay shrinks ``p`` by ``1 - lr*wd`` instead (AdamW's
    rule), coupled decay adds ``wd*p`` to the gradient."""
    if weight_decay != 0 and decoupled:
        param._data *= param._data.dtype.type(1 - lr * weight_decay)
        _bump(param)
        return _signed_grad(param, maximize, 0)
    return _signed_grad(param, maximize, weight_decay)


def _moments(state: dict, grad: np.ndarray, beta1: float, beta2: float) -> None:
    """``m = lerp(m, g, 1-b1)``; ``v = b2*v + (1-b2)*g*g`` in place."""
    kind = grad.dtype.type
    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
    _lerp_(exp_avg._data, grad, 1 - beta1)
    exp_avg_sq._data *= kind(beta2)
    exp_avg_sq._data += kind(1 - beta2) * (grad * grad)
    _bump(exp_avg, exp_avg_sq, exp_avg_sq)


def _adam_like_state(param: Tensor, state: dict, group: dict) -> None:
    state["step"] = _new_step()
    state["exp_avg"] = _zeros_like(param)
    state["exp_avg_sq"] = _zeros_like(param)


class Adamax(Optimizer):
    """``m = lerp(m, g, 1-b1)``; ``u = max(b2*u, |g| + eps)``; ``p -= lr/(1-b1^t) * m/u``."""

    def __init__(self, params: ParamsT, lr: float = 2e-3, betas: tuple = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, foreach: Optional[bool] = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        _check_adam_like(lr, eps, betas, weight_decay)
        _reject_differentiable(differentiable)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        self._upgrade_state(foreach=None, maximize=False, differentiable=False,
                            capturable=False)

    def step(self, closure: Optional[Callable[[], Any]] = None) -> Any:
        return self._step_each(closure, _adamax_options, _adamax_state, _adamax_update)


def _adamax_options(group: dict) -> tuple:
    beta1, beta2 = (_value(b) for b in group["betas"])
    return (_value(group["lr"]), beta1, beta2, group["eps"], _value(group["weight_decay"]),
            group["maximize"])


def _adamax_state(param: Tensor, state: dict, group: dict) -> None:
    state["step"] = _new_step()
    state["exp_avg"] = _zeros_like(param)
    state["exp_inf"] = _zeros_like(param)


def _adamax_update(param: Tensor, state: dict, lr: float, beta1: float, beta2: float,
                   eps: float, weight_decay: float, maximize: bool) -> None:
    kind = param._data.dtype.type
    grad = _signed_grad(param, maximize, weight_decay)
    step = _increment_step(state)
    exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
    _lerp_(exp_avg._data, grad, 1 - beta1)
    exp_inf._data *= kind(beta2)
    np.maximum(exp_inf._data, np.abs(grad) + kind(eps), out=exp_inf._data)
    _bump(exp_avg, exp_inf, exp_inf)
    clr = lr / (1 - beta1 ** step)
    param._data += (kind(-clr) * exp_avg._data) / exp_inf._data  # addcdiv's order
    _bump(param)


class NAdam(Optimizer):
    """Adam with Nesterov momentum whose factor ``mu_t = b1 * (1 - 0.5 * 0.96^(t*psi))`` warms
    up over the steps; ``mu_product`` (a 0-dim tensor, as in torch) is the running product."""

    def __init__(self, params: ParamsT, lr: float = 2e-3, betas: tuple = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: Optional[bool] = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check_adam_like(lr, eps, betas, weight_decay)
        _check_nonnegative("momentum_decay value", momentum_decay)
        _reject_differentiable(differentiable)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        self._setdefault_groups(maximize=False, foreach=None, capturable=False,
                                differentiable=False, decoupled_weight_decay=False)
        for group in self.param_groups:
            for param in group["params"]:
                param_state = self.state.get(param)
                _step_as_tensor(param_state)
                if param_state and not isinstance(param_state.get("mu_product"), Tensor):
                    param_state["mu_product"] = Tensor._make(
                        np.asarray(float(param_state["mu_product"]), _scalar_dtype()))

    def step(self, closure: Optional[Callable[[], Any]] = None) -> Any:
        return self._step_each(closure, _nadam_options, _nadam_state, _nadam_update)


def _nadam_options(group: dict) -> tuple:
    beta1, beta2 = (_value(b) for b in group["betas"])
    return (_value(group["lr"]), beta1, beta2, group["eps"], _value(group["weight_decay"]),
            group["momentum_decay"], group["decoupled_weight_decay"], group["maximize"])


def _nadam_state(param: Tensor, state: dict, group: dict) -> None:
    state["step"] = _new_step()
    state["mu_product"] = Tensor._make(np.ones((), _scalar_dtype()))
    state["exp_avg"] = _zeros_like(param)
    state["exp_avg_sq"] = _zeros_like(param)


def _nadam_update(param: Tensor, state: dict, lr: float, beta1: float, beta2: float,
                  eps: float, weight_decay: float, momentum_decay: float, decoupled: bool,
                  maximize: bool) -> None:
    kind = param._data.dtype.type
    step = _increment_step(state)
    bias_correction2 = 1 - beta2 ** step
    grad = _decay(param, maximize, weight_decay, decoupled, lr)
    mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * momentum_decay))
    mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * momentum_decay))
    mu_product = state["mu_product"]
    # the product is a 0-dim tensor in the scalar dtype, so it rounds there at every step
    mu_product._data *= mu_product._data.dtype.type(mu)
    _bump(mu_product)
    _moments(state, grad, beta1, beta2)
    denom = np.sqrt(state["exp_avg_sq"]._data / kind(bias_correction2))
    denom += kind(eps)
    product = float(mu_product._data)
    product_next = product * mu_next
    # two addcdivs, each rounding as torch's kernel does: (value * t1) / t2
    param._data += (kind(-lr * (1.0 - mu) / (1.0 - product)) * grad) / denom
    param._data += (kind(-lr * mu_next / (1.0 - product_next)) * state["exp_avg"]._data) / denom
    _bump(param, param)


class RAdam(Optimizer):
    """Adam whose adaptive term is switched on only once the variance of its estimate is
    tractable (``rho_t > 5``) and then scaled by the rectification ``r_t``; before that the
    step is plain momentum SGD: ``p -= lr * m/(1-b1^t)``."""

    def __init__(self, params: ParamsT, lr: float = 1e-3, betas: tuple = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0,
                 decoupled_weight_decay: bool = False, *, foreach: Optional[bool] = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check_adam_like(lr, eps, betas, weight_decay)
        _reject_differentiable(differentiable)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        self._upgrade_state(foreach=None, maximize=False, differentiable=False,
                            decoupled_weight_decay=False, capturable=False)

    def step(self, closure: Optional[Callable[[], Any]] = None) -> Any:
        return self._step_each(closure, _radam_options, _adam_like_state, _radam_update)


def _radam_options(group: dict) -> tuple:
    beta1, beta2 = (_value(b) for b in group["betas"])
    return (_value(group["lr"]), beta1, beta2, group["eps"], _value(group["weight_decay"]),
            group["decoupled_weight_decay"], group["maximize"])


def _radam_update(param: Tensor, state: dict, lr: float, beta1: float, beta2: float,
                  eps: float, weight_decay: float, decoupled: bool, maximize: bool) -> None:
    kind = param._data.dtype.type
    step = _increment_step(state)
    grad = _decay(param, maximize, weight_decay, decoupled, lr)
    _moments(state, grad, beta1, beta2)
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    corrected = state["exp_avg"]._data / kind(bias_correction1)
    rho_inf = 2 / (1 - beta2) - 1
    rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
    if rho_t > 5.0:
        rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf
                         / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
        root = np.sqrt(state["exp_avg_sq"]._data)
        root += kind(eps)
        adaptive = kind(bias_correction2 ** 0.5) / root
        update = corrected * kind(lr) * adaptive * kind(rect)
    else:
        update = corrected * kind(lr)
    param._data -= update
    _bump(param)
