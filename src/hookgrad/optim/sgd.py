"""SGD with momentum, dampening, L2 weight decay, Nesterov and maximize (torch's for-loop path)."""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from .._blas import axpy
from ..tensor import Tensor
from .optimizer import (Optimizer, ParamsT, _bump, _check_nonnegative, _check_tensor_lr,
                        _reject_differentiable, _value)

__all__ = ["SGD"]


class SGD(Optimizer):
    """``buf = momentum*buf + (1 - dampening)*g`` (the first step copies g);
    ``p -= lr * (g + momentum*buf if nesterov else buf)``, with ``g = ±grad + wd*p``."""

    def __init__(self, params: ParamsT, lr: float = 1e-3, momentum: float = 0,
                 dampening: float = 0, weight_decay: float = 0, nesterov: bool = False, *,
                 maximize: bool = False, foreach: Optional[bool] = None,
                 differentiable: bool = False, fused: Optional[bool] = None) -> None:
        _check_tensor_lr(lr)
        for what, value in (("learning rate", lr), ("momentum value", momentum),
                            ("weight_decay value", weight_decay)):
            _check_nonnegative(what, value, nan_ok=True)
        _reject_differentiable(differentiable)
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    "foreach": foreach, "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        self._setdefault_groups(nesterov=False, maximize=False, foreach=None,
                                differentiable=False, fused=False)

    def step(self, closure: Optional[Callable[[], Any]] = None) -> Any:
        # no state to set up: the momentum buffer starts on the first step with momentum
        return self._step_each(closure, _sgd_options, None, _sgd_update)


def _sgd_options(group: dict) -> tuple:
    return (_value(group["lr"]), group["momentum"], group["dampening"],
            _value(group["weight_decay"]), group["nesterov"], group["maximize"])


def _sgd_update(param: Tensor, state: dict, lr: float, momentum: float, dampening: float,
                weight_decay: float, nesterov: bool, maximize: bool) -> None:
    p = param._data
    kind = p.dtype.type
    grad = param.grad._data
    if maximize:
        grad = -grad
    if weight_decay != 0:  # torch's grad.add(p, alpha=weight_decay), rounded as torch's
        grad = np.array(grad, copy=True)
        axpy(weight_decay, p, grad)
    if momentum != 0:
        buffer = state.get("momentum_buffer")
        if buffer is None:
            # the first step starts the buffer at the gradient itself (no dampening)
            buffer = Tensor._make(np.array(grad, copy=True))
            state["momentum_buffer"] = buffer
        else:
            buffer._data *= kind(momentum)
            axpy(1 - dampening, grad, buffer._data)
            _bump(buffer, buffer)
        if nesterov:  # grad.add(buffer, alpha=momentum)
            grad = np.array(grad, copy=True)
            axpy(momentum, buffer._data, grad)
        else:
            grad = buffer._data
    axpy(-lr, grad, p)  # torch's p.add_(grad, alpha=-lr), rounded as torch rounds it
    _bump(param)
