"""L-BFGS: quasi-Newton steps from a short history of gradient differences, with an optional
strong-Wolfe line search; torch's algorithm, step for step (so losses match torch's)."""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from ..autograd import grad_mode
from ..tensor import Tensor
from ._line_search import strong_wolfe
from .optimizer import Optimizer, ParamsT, _bump, _check_nonnegative, _check_tensor_lr, _value

__all__ = ["LBFGS"]


class LBFGS(Optimizer):
    """``step(closure)`` runs up to ``max_iter`` L-BFGS iterations, re-evaluating the loss with
    ``closure`` (which must zero the gradients, compute the loss and call ``backward``).

    All parameters form one flat vector, so parameter groups are refused, as in torch. The
    history (directions, steps, curvature) lives in the state of the first parameter.
    """

    def __init__(self, params: ParamsT, lr: float = 1, max_iter: int = 20,
                 max_eval: Optional[int] = None, tolerance_grad: float = 1e-7,
                 tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: Optional[str] = None) -> None:
        _check_tensor_lr(lr)
        _check_nonnegative("learning rate", lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval,
                    "tolerance_grad": tolerance_grad, "tolerance_change": tolerance_change,
                    "history_size": history_size, "line_search_fn": line_search_fn}
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    # -- the parameters as one flat vector ------------------------------------------------------
    def _flat_grad(self) -> np.ndarray:
        parts = [np.zeros(p._data.size, p._data.dtype) if p.grad is None
                 else p.grad._data.reshape(-1) for p in self._params]
        return np.concatenate(parts)

    def _add_to_params(self, step: Any, update: np.ndarray) -> None:
        offset = 0
        for param in self._params:
            size = param._data.size
            kind = param._data.dtype.type
            param._data += kind(step) * update[offset:offset + size].reshape(param._data.shape)
            _bump(param)
            offset += size

    def _set_params(self, values: list) -> None:
        for param, value in zip(self._params, values):
            param._data[...] = value
            _bump(param)

    def _evaluate_at(self, closure: Callable[[], Any], x: list, step: Any,
                     direction: np.ndarray) -> tuple:
        """Loss and gradient at ``x + step*direction``; the parameters are put back at ``x``."""
        self._add_to_params(step, direction)
        loss = float(self._closure(closure))
        grad = self._flat_grad()
        self._set_params(x)
        return loss, grad

    # -- the step -----------------------------------------------------------------------------
    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        with grad_mode.no_grad():
            return self._run(closure)

    def _closure(self, closure: Callable[[], Any]) -> Any:
        with grad_mode.enable_grad():
            return closure()

    def _run(self, closure: Callable[[], Any]) -> Any:
        group = self.param_groups[0]
        lr = _value(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search, history_size = group["line_search_fn"], group["history_size"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = self._closure(closure)
        loss = float(orig_loss)
        evaluations = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if np.abs(flat_grad).max() <= tolerance_grad:
            return orig_loss

        direction = _array(state.get("d"))
        step = _array(state.get("t"))
        old_dirs = [_array(t) for t in state.get("old_dirs") or []]
        old_steps = [_array(t) for t in state.get("old_stps") or []]
        ro = [_array(r) for r in state.get("ro") or []]
        h_diag = _array(state.get("H_diag"))
        prev_flat_grad = _array(state.get("prev_flat_grad"))
        prev_loss = state.get("prev_loss")
        kind = flat_grad.dtype.type

        iteration = 0
        while iteration < max_iter:
            iteration += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                direction = -flat_grad
                old_dirs, old_steps, ro, h_diag = [], [], [], 1
            else:
                y = flat_grad - prev_flat_grad
                s = direction * kind(step)
                ys = y.dot(s)
                if ys > 1e-10:  # keep the pair only when the curvature is positive
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_steps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_steps.append(s)
                    ro.append(kind(1.0) / ys)
                    h_diag = ys / y.dot(y)
                # torch keeps the first loop's coefficients in the state, one slot per pair
                alphas = state.setdefault("al", [None] * history_size)
                direction = _two_loop(flat_grad, old_dirs, old_steps, ro, h_diag, alphas)
            prev_flat_grad = flat_grad.copy()
            prev_loss = loss
            if state["n_iter"] == 1:
                # a 0-d tensor when the gradient's size sets it, 1.0 * lr otherwise (as torch)
                scaled = kind(1.0) / np.abs(flat_grad).sum()
                step = np.asarray(scaled * kind(lr)) if scaled < 1.0 else 1.0 * lr
            else:
                step = lr
            slope = flat_grad.dot(direction)
            if slope > -tolerance_change:
                break

            spent = 0
            if line_search is not None:
                if line_search != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                start = [p._data.copy() for p in self._params]
                loss, flat_grad, step, spent = strong_wolfe(
                    lambda x, t, d: self._evaluate_at(closure, x, t, d), start, step,
                    direction, loss, flat_grad, slope, max_ls=max_eval - evaluations)
                self._add_to_params(step, direction)
                converged = np.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_to_params(step, direction)
                converged = False
                if iteration != max_iter:
                    loss = float(self._closure(closure))
                    flat_grad = self._flat_grad()
                    converged = np.abs(flat_grad).max() <= tolerance_grad
                    spent = 1
            evaluations += spent
            state["func_evals"] += spent

            if iteration == max_iter or evaluations >= max_eval or converged:
                break
            if np.abs(direction * kind(step)).max() <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state["d"] = _tensor(direction)
        state["t"] = _tensor(step)
        state["old_dirs"] = [_tensor(a) for a in old_dirs]
        state["old_stps"] = [_tensor(a) for a in old_steps]
        state["ro"] = [_tensor(r) for r in ro]
        state["H_diag"] = _tensor(h_diag)
        state["prev_flat_grad"] = _tensor(prev_flat_grad)
        state["prev_loss"] = prev_loss
        return orig_loss


def _two_loop(flat_grad: np.ndarray, old_dirs: list, old_steps: list, ro: list,
              h_diag: Any, alphas: list) -> np.ndarray:
    """The L-BFGS direction ``-H g`` from the stored pairs, by the two-loop recursion; the
    first loop's coefficients go into ``alphas`` (as 0-d tensors, the state torch keeps)."""
    q = -flat_grad
    found = [None] * len(old_dirs)
    for i in range(len(old_dirs) - 1, -1, -1):
        found[i] = old_steps[i].dot(q) * ro[i]
        q -= found[i] * old_dirs[i]
        alphas[i] = _tensor(np.asarray(found[i]))
    r = q * h_diag
    for i in range(len(old_dirs)):
        beta = old_dirs[i].dot(r) * ro[i]
        r += (found[i] - beta) * old_steps[i]
    return r


def _array(value: Any) -> Any:
    return value._data if isinstance(value, Tensor) else value


def _tensor(value: Any) -> Any:
    """Arrays and NumPy scalars as hookgrad tensors (0-d for scalars), other values as they
    are: the state holds what torch's holds, so it loads in torch with ``weights_only``."""
    if isinstance(value, np.generic):
        value = np.asarray(value)
    return Tensor._make(value) if isinstance(value, np.ndarray) else value
