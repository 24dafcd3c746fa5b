"""ASGD (averaged SGD with a decaying step) and Rprop (sign-based steps whose sizes grow and
shrink per coordinate), as torch's for-loop path computes them."""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from .. import _dtype
from .._blas import axpy
from ..tensor import Tensor
from .optimizer import (Optimizer, ParamsT, _bump, _check_nonnegative, _check_tensor_lr,
                        _increment_step, _new_step, _reject_differentiable, _scalar_dtype,
                        _value, _zeros_like)

__all__ = ["ASGD", "Rprop"]


def _scalar_state(value: float) -> Tensor:
    """A 0-dim state tensor in the optimizer's scalar dtype (``eta`` and ``mu``, as torch's)."""
    return Tensor._make(np.asarray(value, _scalar_dtype()))


class ASGD(Optimizer):
    """Averaged SGD: ``p *= 1 - lambd*eta``; ``p -= eta*g``; ``ax`` follows ``p`` with weight
    ``mu``. After step ``t``: ``eta = lr / (1 + lambd*lr*t)^alpha`` and
    ``mu = 1 / max(1, t - t0)``, so the average starts once ``t`` passes ``t0``.

    ``state['ax']`` holds the averaged parameter; ``eta``, ``mu`` and ``step`` are 0-dim tensors
    as in torch, so state dicts load both ways.
    """

    def __init__(self, params: ParamsT, lr: float = 1e-2, lambd: float = 1e-4,
                 alpha: float = 0.75, t0: float = 1e6, weight_decay: float = 0,
                 foreach: Optional[bool] = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        _check_tensor_lr(lr)
        _check_nonnegative("learning rate", lr)
        _check_nonnegative("weight_decay value", weight_decay)
        _reject_differentiable(differentiable)
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        self._upgrade_state(foreach=None, maximize=False, differentiable=False,
                            capturable=False)
        for param_state in self.state.values():
            for key in ("eta", "mu"):
                if key in param_state and not isinstance(param_state[key], Tensor):
                    param_state[key] = _scalar_state(float(param_state[key]))

    def step(self, closure: Optional[Callable[[], Any]] = None) -> Any:
        return self._step_each(closure, _asgd_options, _asgd_state, _asgd_update)


def _asgd_options(group: dict) -> tuple:
    return (_value(group["lr"]), group["lambd"], group["alpha"], group["t0"],
            _value(group["weight_decay"]), group["maximize"])


def _asgd_state(param: Tensor, state: dict, group: dict) -> None:
    state["step"] = _new_step()
    state["eta"] = _scalar_state(_value(group["lr"]))
    state["mu"] = _scalar_state(1.0)
    state["ax"] = _zeros_like(param)


def _asgd_update(param: Tensor, state: dict, lr: float, lambd: float, alpha: float, t0: float,
                 weight_decay: float, maximize: bool) -> None:
    p = param._data
    kind = p.dtype.type
    grad = -param.grad._data if maximize else param.grad._data
    step = _increment_step(state)
    if weight_decay != 0:  # grad.add(p, alpha=weight_decay)
        grad = np.array(grad, copy=True)
        axpy(weight_decay, p, grad)
    eta = float(state["eta"]._data)  # the stored (scalar-dtype) value, as torch reads it
    p *= kind(1 - lambd * eta)
    axpy(-eta, grad, p)
    _bump(param, param)
    ax, mu = state["ax"], state["mu"]
    if float(mu._data) != 1:
        difference = p - ax._data
        difference *= kind(mu._data)
        ax._data += difference
    else:
        ax._data[...] = p
    _bump(ax)
    # torch makes each new value a default-dtype tensor first, so it is rounded there even
    # when the state tensor (cast on loading) is wider
    rounded = _dtype.get_default_dtype().numpy.type
    state["eta"]._data[...] = rounded(lr / ((1 + lambd * lr * step) ** alpha))
    mu._data[...] = rounded(1 / max(1, step - t0))
    _bump(state["eta"], mu)


class Rprop(Optimizer):
    """Resilient backpropagation: each coordinate's step size is multiplied by ``etaplus``
    while its gradient keeps its sign and by ``etaminus`` when it flips (then that step is
    skipped), clamped to ``step_sizes``; ``p -= sign(g) * step_size``."""

    def __init__(self, params: ParamsT, lr: float = 1e-2, etas: tuple = (0.5, 1.2),
                 step_sizes: tuple = (1e-6, 50), *, capturable: bool = False,
                 foreach: Optional[bool] = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _check_tensor_lr(lr)
        _check_nonnegative("learning rate", lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        _reject_differentiable(differentiable)
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        self._upgrade_state(foreach=None, maximize=False, differentiable=False,
                            capturable=False)

    def step(self, closure: Optional[Callable[[], Any]] = None) -> Any:
        return self._step_each(closure, _rprop_options, _rprop_state, _rprop_update)


def _rprop_options(group: dict) -> tuple:
    etaminus, etaplus = group["etas"]
    step_size_min, step_size_max = group["step_sizes"]
    return etaminus, etaplus, step_size_min, step_size_max, group["maximize"]


def _rprop_state(param: Tensor, state: dict, group: dict) -> None:
    state["step"] = _new_step()
    state["prev"] = _zeros_like(param)
    state["step_size"] = Tensor._make(np.full_like(param._data, _value(group["lr"])))


def _rprop_update(param: Tensor, state: dict, etaminus: float, etaplus: float,
                  step_size_min: float, step_size_max: float, maximize: bool) -> None:
    p = param._data
    kind = p.dtype.type
    grad = -param.grad._data if maximize else param.grad._data
    _increment_step(state)
    prev, step_size = state["prev"], state["step_size"]
    sign = np.sign(grad * prev._data)  # NaN stays NaN, as torch's sign
    factor = np.where(sign > 0, kind(etaplus),
                      np.where(sign < 0, kind(etaminus), np.where(sign == 0, kind(1), sign)))
    step_size._data *= factor
    np.clip(step_size._data, kind(step_size_min), kind(step_size_max), out=step_size._data)
    _bump(step_size, step_size)
    # after a sign flip: no step now, and no flip seen next time
    grad = np.where(factor == kind(etaminus), kind(0), grad)
    p -= np.sign(grad) * step_size._data
    _bump(param)
    prev._data[...] = grad
    _bump(prev)

