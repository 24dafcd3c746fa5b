"""Adafactor: Adam-like steps whose second moment of a matrix is kept factored as a row and a
column average (memory ``O(rows + cols)`` instead of ``O(rows * cols)``), as torch's
for-loop path computes it."""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from .._blas import axpy
from ..autograd import grad_mode
from ..tensor import Tensor
from .optimizer import (Optimizer, ParamsT, _bump, _check_tensor_lr, _increment_step, _lerp_,
                        _new_step, _value, _zeros_like)

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """At step ``t``: ``beta2 = 1 - t^beta2_decay``; the squared gradient's row and column
    means (a vector's whole square) are averaged into the state with that weight; the update
    ``g / sqrt(v)`` (``v`` the outer product of row and column averages over the row
    average's mean, at least ``eps1^2``) is scaled down to RMS ``d`` at most, and
    ``p -= max(eps2, rms(p)) * min(lr, 1/sqrt(t)) * update``. Weight decay multiplies ``p``
    by ``1 - lr*wd``. ``eps1=None`` means the parameter dtype's machine epsilon.
    """

    def __init__(self, params: ParamsT, lr: float = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple = (None, 1e-3), d: float = 1.0, weight_decay: float = 0.0, *,
                 foreach: Optional[bool] = None, maximize: bool = False) -> None:
        _check_tensor_lr(lr)
        checks = ((not 0.0 <= lr, f"Learning rate should be >= 0 but is: {lr}"),
                  (not 0.0 >= beta2_decay, f"beta2_decay should be <= 0 but is: {beta2_decay}"),
                  (eps[0] is not None and not 0.0 <= eps[0],
                   f"epsilon1 should be >= 0 but is: {eps[0]}"),
                  (not 0.0 <= eps[1], f"epsilon2 should be >= 0 but is: {eps[1]}"),
                  (not 1.0 <= d, f"Clipping threshold d should be >= 1 but is: {d}"),
                  (not 0.0 <= weight_decay,
                   f"weight_decay should be >= 0 but is: {weight_decay}"))
        for refused, message in checks:
            if refused:
                raise ValueError(message)
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        self._upgrade_state(foreach=None)

    def step(self, closure: Optional[Callable[[], Any]] = None) -> Any:
        loss = self._evaluate(closure)
        with grad_mode.no_grad():
            for group in self.param_groups:
                eps1, eps2 = group["eps"]
                for param in self._params_with_grad(group):
                    state = self.state[param]
                    if len(state) == 0:
                        _adafactor_state(param, state)
                    if eps1 is None:  # torch fixes it from the group's first parameter
                        eps1 = float(np.finfo(param._data.dtype).eps)
                    _adafactor_update(param, state, _value(group["lr"]), group["beta2_decay"],
                                      eps1, eps2, group["d"], group["weight_decay"],
                                      group["maximize"])
        return loss


def _adafactor_state(param: Tensor, state: dict) -> None:
    state["step"] = _new_step()
    if param._data.ndim > 1:
        shape = param._data.shape
        state["row_var"] = Tensor._make(np.zeros(shape[:-1] + (1,), param._data.dtype))
        state["col_var"] = Tensor._make(np.zeros(shape[:-2] + (1,) + shape[-1:],
                                                 param._data.dtype))
    else:
        state["variance"] = _zeros_like(param)


def _mean_square(grad: np.ndarray, axis: int) -> np.ndarray:
    """torch's ``norm(g, dim).square_().div_(n)`` (the square of a rounded norm)."""
    norm = np.sqrt(np.sum(grad * grad, axis=axis, keepdims=True))
    return norm * norm / grad.dtype.type(grad.shape[axis])


def _adafactor_update(param: Tensor, state: dict, lr: float, beta2_decay: float, eps1: float,
                      eps2: float, d: float, weight_decay: float, maximize: bool) -> None:
    p = param._data
    kind = p.dtype.type
    grad = -param.grad._data if maximize else param.grad._data
    step = _increment_step(state)
    weight = step ** beta2_decay
    rho = min(lr, 1 / step ** 0.5)
    alpha = max(eps2, float(np.sqrt(np.sum(p * p))) / p.size ** 0.5) * rho
    if weight_decay != 0:
        p *= kind(1 - lr * weight_decay)
        _bump(param)
    if grad.ndim > 1:
        row_var, col_var = state["row_var"], state["col_var"]
        _lerp_(row_var._data, _mean_square(grad, -1), weight)
        _lerp_(col_var._data, _mean_square(grad, -2), weight)
        _bump(row_var, col_var)
        estimate = row_var._data @ col_var._data
        estimate /= np.maximum(row_var._data.mean(axis=-2, keepdims=True), kind(eps1))
    else:
        variance = state["variance"]
        _lerp_(variance._data, grad * grad, weight)
        _bump(variance)
        estimate = variance._data.copy()
    update = 1 / np.sqrt(np.maximum(estimate, kind(eps1 * eps1)))
    update *= grad
    denom = max(1.0, float(np.sqrt(np.sum(update * update))) / (update.size ** 0.5 * d))
    axpy(-alpha / denom, update, p)
    _bump(param)
