"""Muon: momentum whose update is orthogonalised by a Newton-Schulz iteration, for 2-D weights.

Each step (torch's algorithm, as its documentation states it):
``B = lerp(B, g, 1 - momentum)``; the update ``U = lerp(g, B, momentum)`` under Nesterov, else
``B``; ``O = NS(U)``; decoupled weight decay ``p *= 1 - lr * weight_decay``; ``p -= lr' O`` with
``lr' = lr * sqrt(max(1, rows / cols))`` ("original") or ``0.2 * lr * sqrt(max(rows, cols))``
("match_rms_adamw").

NS runs in bfloat16, as torch's does: ``X = U / (|U|_F + eps)`` (on the transpose when there are
more rows than columns), then ``ns_steps`` times ``A = X X^T; B = b A + c A A; X = a X + B X``.
NumPy has no bfloat16, so each of those operations is computed in float32 and rounded to
bfloat16 once, which is how torch's CPU kernels round them; the parameter trajectories then
agree with torch's to the last bit in practice.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Optional

import numpy as np

from .._blas import axpy
from ..tensor import Tensor
from .optimizer import Optimizer, ParamsT, _bump, _check_tensor_lr, _lerp_, _value

__all__ = ["Muon"]

_ADJUSTMENTS = ("original", "match_rms_adamw")


def _check_at_least_zero(message: str, value: Any) -> None:
    if not 0.0 <= value:
        raise ValueError(f"{message} should be >= 0 but is: {value}")


class Muon(Optimizer):
    """Momentum orthogonalised by Newton-Schulz, with decoupled weight decay; only for 2-D
    parameters (see the module docstring for the update)."""

    def __init__(self, params: ParamsT, lr: float = 1e-3, weight_decay: float = 0.1,
                 momentum: float = 0.95, nesterov: bool = True,
                 ns_coefficients: tuple = (3.4445, -4.775, 2.0315), eps: float = 1e-7,
                 ns_steps: int = 5, adjust_lr_fn: Optional[str] = None) -> None:
        _check_tensor_lr(lr)
        _check_at_least_zero("Learning rate", lr)
        _check_at_least_zero("momentum", momentum)
        _check_at_least_zero("weight decay", weight_decay)
        if adjust_lr_fn is not None and adjust_lr_fn not in _ADJUSTMENTS:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {"lr": lr, "weight_decay": weight_decay, "momentum": momentum,
                    "nesterov": nesterov, "ns_coefficients": ns_coefficients, "eps": eps,
                    "ns_steps": ns_steps, "adjust_lr_fn": adjust_lr_fn}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for param in group["params"]:
                if param.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: torch.Size({list(param.shape)})")

    def step(self, closure: Optional[Callable[[], Any]] = None) -> Any:
        """One Muon update of every parameter that has a gradient; returns the closure's loss."""
        return self._step_each(closure, _muon_options, _muon_state, _muon_update)


def _muon_options(group: dict) -> tuple:
    return (_value(group["lr"]), group["weight_decay"], group["momentum"], group["nesterov"],
            tuple(group["ns_coefficients"]), group["eps"], group["ns_steps"],
            group["adjust_lr_fn"])


def _muon_state(param: Tensor, state: dict, group: dict) -> None:
    state["momentum_buffer"] = Tensor._make(np.zeros_like(param._data))


def _to_bfloat16(values: np.ndarray) -> np.ndarray:
    """float32 values rounded to the nearest bfloat16 (ties to even), kept as float32."""
    values = np.ascontiguousarray(values, np.float32)
    bits = values.view(np.uint32)
    tie_break = (bits >> np.uint32(16)) & np.uint32(1)
    rounded = ((bits + np.uint32(0x7FFF) + tie_break) & np.uint32(0xFFFF0000)).view(np.float32)
    return np.where(np.isnan(values), values, rounded)


def _orthogonalise(update: np.ndarray, coefficients: tuple, eps: float,
                   steps: int) -> np.ndarray:
    """The Newton-Schulz iteration on bfloat16 values (each operation rounded once)."""
    a, b, c = (np.float32(value) for value in coefficients)
    x = _to_bfloat16(update.astype(np.float32))
    tall = update.shape[0] > update.shape[1]
    if tall:
        x = x.T
    norm = _to_bfloat16(np.sqrt(np.sum(x * x, dtype=np.float32)))
    x = _to_bfloat16(x / _to_bfloat16(norm + np.float32(eps)))
    for _ in range(steps):
        gram = _to_bfloat16(x @ x.T)
        polynomial = _to_bfloat16(b * gram + c * (gram @ gram))
        x = _to_bfloat16(a * x + polynomial @ x)
    return x.T if tall else x


def _adjusted_lr(lr: float, shape: tuple, adjustment: Optional[str]) -> float:
    rows, cols = shape
    if adjustment == "match_rms_adamw":
        return 0.2 * math.sqrt(max(rows, cols)) * lr
    return lr * math.sqrt(max(1, rows / cols))


def _lerp_rounded(target: np.ndarray, end: np.ndarray, weight: float) -> None:
    """torch's lerp_, computed in float32 and rounded once for half types."""
    if target.dtype.itemsize >= 4:
        _lerp_(target, end, weight)
        return
    work = target.astype(np.float32)
    _lerp_(work, end.astype(np.float32), weight)
    target[...] = work


def _muon_update(param: Tensor, state: dict, lr: float, weight_decay: float, momentum: float,
                 nesterov: bool, coefficients: tuple, eps: float, steps: int,
                 adjustment: Optional[str]) -> None:
    p = param._data
    kind = p.dtype.type
    grad = param.grad._data
    buffer = state["momentum_buffer"]
    _lerp_rounded(buffer._data, grad, 1 - momentum)
    _bump(buffer)
    if nesterov:
        update = np.array(grad, copy=True)
        _lerp_rounded(update, buffer._data, momentum)
    else:
        update = buffer._data
    orthogonal = _orthogonalise(update, coefficients, eps, steps)
    adjusted = _adjusted_lr(lr, p.shape, adjustment)
    if p.dtype.itemsize < 4:  # half types: each in-place op computes in float32, rounds once
        p[...] = p.astype(np.float32) * np.float32(1 - lr * weight_decay)
        p[...] = (p.astype(np.float32)
                  - np.float32(adjusted) * orthogonal.astype(p.dtype).astype(np.float32))
    else:
        p *= kind(1 - lr * weight_decay)
        axpy(-adjusted, orthogonal.astype(p.dtype), p)  # torch's add_(O, alpha=-lr')
    _bump(param)
