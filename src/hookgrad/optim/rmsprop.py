"""RMSprop, optionally centered and with momentum (torch's for-loop path)."""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from ..tensor import Tensor
from .optimizer import (Optimizer, ParamsT, _bump, _check_nonnegative, _check_tensor_lr,
                        _increment_step, _lerp_, _new_step, _reject_differentiable,
                        _value, _zeros_like)

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """``v = alpha*v + (1-alpha)*g*g``; ``avg = sqrt(v - gbar^2 if centered else v) + eps``
    (``gbar = lerp(gbar, g, 1-alpha)``); ``p -= lr*g/avg``, or through a momentum buffer
    ``buf = momentum*buf + g/avg``."""

    def __init__(self, params: ParamsT, lr: float = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0, momentum: float = 0,
                 centered: bool = False, capturable: bool = False,
                 foreach: Optional[bool] = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _check_tensor_lr(lr)
        _check_nonnegative("learning rate", lr)
        _check_nonnegative("epsilon value", eps)
        _check_nonnegative("momentum value", momentum)
        _check_nonnegative("weight_decay value", weight_decay)
        _check_nonnegative("alpha value", alpha)
        _reject_differentiable(differentiable)
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay,
                    "capturable": capturable, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        self._upgrade_state(momentum=0, centered=False, foreach=None, maximize=False,
                            differentiable=False, capturable=False)

    def step(self, closure: Optional[Callable[[], Any]] = None) -> Any:
        return self._step_each(closure, _rmsprop_options, _rmsprop_state, _rmsprop_update)


def _rmsprop_options(group: dict) -> tuple:
    return (_value(group["lr"]), group["alpha"], group["eps"], _value(group["weight_decay"]),
            group["momentum"], group["centered"], group["maximize"])


def _rmsprop_state(param: Tensor, state: dict, group: dict) -> None:
    state["step"] = _new_step()
    state["square_avg"] = _zeros_like(param)
    if group["momentum"] > 0:
        state["momentum_buffer"] = _zeros_like(param)
    if group["centered"]:
        state["grad_avg"] = _zeros_like(param)


def _rmsprop_update(param: Tensor, state: dict, lr: float, alpha: float, eps: float,
                    weight_decay: float, momentum: float, centered: bool,
                    maximize: bool) -> None:
    p = param._data
    kind = p.dtype.type
    grad = param.grad._data
    if maximize:
        grad = -grad
    _increment_step(state)
    if weight_decay != 0:
        grad = grad + kind(weight_decay) * p
    square_avg = state["square_avg"]
    square_avg._data *= kind(alpha)
    square_avg._data += kind(1 - alpha) * (grad * grad)
    _bump(square_avg, square_avg)
    if centered:
        grad_avg = state["grad_avg"]
        _lerp_(grad_avg._data, grad, 1 - alpha)
        _bump(grad_avg)
        with np.errstate(invalid="ignore"):  # a negative rounding residue gives nan, as in torch
            avg = np.sqrt(_minus_square(square_avg._data, grad_avg._data))
    else:
        avg = np.sqrt(square_avg._data)
    avg += kind(eps)
    if momentum > 0:
        buffer = state["momentum_buffer"]
        buffer._data *= kind(momentum)
        buffer._data += grad / avg
        _bump(buffer, buffer)
        p += kind(-lr) * buffer._data
    else:
        p += (kind(-lr) * grad) / avg
    _bump(param)


def _minus_square(c: np.ndarray, a: np.ndarray) -> np.ndarray:
    """``c - a*a`` rounded once, as torch's fused ``addcmul(a, a, value=-1)`` computes it.

    It matters where ``c`` and ``a*a`` nearly cancel (a centered variance that has gone to 0):
    the plain two-rounding form would give 0 where torch gives the product's rounding residue.
    Narrow floats are exact in float64; float64 uses Dekker's split product ``a*a = p + e``.
    """
    if c.dtype != np.float64:
        wide = a.astype(np.float64)
        return (c.astype(np.float64) - wide * wide).astype(c.dtype)
    product = a * a
    scaled = 134217729.0 * a  # 2**27 + 1: splits a into two 26-bit halves
    high = scaled - (scaled - a)
    low = a - high
    residue = ((high * high - product) + 2.0 * high * low) + low * low
    return (c - product) - residue
