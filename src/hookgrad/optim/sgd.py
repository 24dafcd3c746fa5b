"""SGD with momentum, dampening, L2 weight decay, Nesterov and maximize (torch's for-loop path)."""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from ..autograd import grad_mode
from ..tensor import Tensor
from .optimizer import Optimizer, ParamsT, _bump, _reject_differentiable, _value

__all__ = ["SGD"]


class SGD(Optimizer):
    """``buf = momentum*buf + (1 - dampening)*g`` (the first step copies g);
    ``p -= lr * (g + momentum*buf if nesterov else buf)``, with ``g = ±grad + wd*p``."""

    def __init__(self, params: ParamsT, lr: float = 1e-3, momentum: float = 0,
                 dampening: float = 0, weight_decay: float = 0, nesterov: bool = False, *,
                 maximize: bool = False, foreach: Optional[bool] = None,
                 differentiable: bool = False, fused: Optional[bool] = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        _reject_differentiable(differentiable)
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    "foreach": foreach, "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    def step(self, closure: Optional[Callable[[], Any]] = None) -> Any:
        loss = self._evaluate(closure)
        with grad_mode.no_grad():
            for group in self.param_groups:
                options = (_value(group["lr"]), group["momentum"], group["dampening"],
                           _value(group["weight_decay"]), group["nesterov"], group["maximize"])
                for param in self._params_with_grad(group):
                    _sgd_update(param, self.state[param], *options)
        return loss


def _sgd_update(param: Tensor, state: dict, lr: float, momentum: float, dampening: float,
                weight_decay: float, nesterov: bool, maximize: bool) -> None:
    p = param._data
    kind = p.dtype.type
    grad = param.grad._data
    if maximize:
        grad = -grad
    if weight_decay != 0:
        grad = grad + kind(weight_decay) * p
    if momentum != 0:
        buffer = state.get("momentum_buffer")
        if buffer is None:
            # the first step starts the buffer at the gradient itself (no dampening)
            buffer = Tensor._make(np.array(grad, copy=True))
            state["momentum_buffer"] = buffer
        else:
            buffer._data *= kind(momentum)
            buffer._data += kind(1 - dampening) * grad
            _bump(buffer, buffer)
        grad = grad + kind(momentum) * buffer._data if nesterov else buffer._data
    p += kind(-lr) * grad
    _bump(param)
