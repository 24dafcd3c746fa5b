"""The strong-Wolfe line search L-BFGS uses: bracket a step length, then zoom in with cubic
interpolation, as torch's port of minFunc does (so the same losses are evaluated at the same
step lengths, and L-BFGS follows torch's path).

Scalars stay NumPy scalars of the parameters' dtype wherever torch keeps 0-dim tensors, so
float32 runs round where torch's do.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Tuple

import numpy as np

Evaluate = Callable[[Any, Any, np.ndarray], Tuple[float, np.ndarray]]


def cubic_minimum(x1: Any, f1: Any, g1: Any, x2: Any, f2: Any, g2: Any,
                  bounds: Optional[tuple] = None) -> Any:
    """The minimiser of the cubic through two points with values ``f`` and slopes ``g``,
    clamped to ``bounds`` (default: between the points); their midpoint when the cubic has no
    real minimum."""
    low, high = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square < 0:
        return (low + high) / 2.0
    d2 = np.sqrt(d2_square)
    if x1 <= x2:
        at = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        at = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(at, low), high)


class _Bracket:
    """Two trial steps with their losses, gradients and slopes along the search direction."""

    def __init__(self, steps: list, losses: list, grads: list, slopes: list) -> None:
        self.steps, self.losses, self.grads, self.slopes = steps, losses, grads, slopes

    def replace(self, index: int, step: Any, loss: Any, grad: np.ndarray, slope: Any) -> None:
        self.steps[index], self.losses[index] = step, loss
        self.grads[index], self.slopes[index] = grad, slope


def strong_wolfe(evaluate: Evaluate, x: Any, step: Any, direction: np.ndarray, loss: float,
                 grad: np.ndarray, slope: Any, c1: float = 1e-4, c2: float = 0.9,
                 tolerance_change: float = 1e-9, max_ls: int = 25) -> tuple:
    """Search along ``direction`` from ``x`` for a step meeting the strong Wolfe conditions.

    ``evaluate(x, t, d)`` returns the loss and flat gradient at ``x + t*d``. Returns
    ``(loss, grad, step, evaluations)`` at the accepted step.
    """
    direction_size = np.abs(direction).max()
    grad = grad.copy()
    new_loss, new_grad = evaluate(x, step, direction)
    evaluations = 1
    new_slope = new_grad.dot(direction)
    prev_step, prev_loss, prev_grad, prev_slope = 0, loss, grad, slope
    done = False
    iteration = 0
    bracket: Optional[_Bracket] = None
    # phase 1: grow the step until an interval is known to hold an acceptable one
    while iteration < max_ls:
        if new_loss > loss + c1 * step * slope or (iteration > 1 and new_loss >= prev_loss):
            bracket = _Bracket([prev_step, step], [prev_loss, new_loss],
                               [prev_grad, new_grad.copy()], [prev_slope, new_slope])
            break
        if abs(new_slope) <= -c2 * slope:
            bracket = _Bracket([step], [new_loss], [new_grad], [new_slope])
            done = True
            break
        if new_slope >= 0:
            bracket = _Bracket([prev_step, step], [prev_loss, new_loss],
                               [prev_grad, new_grad.copy()], [prev_slope, new_slope])
            break
        shortest, longest = step + 0.01 * (step - prev_step), step * 10
        previous = step
        step = cubic_minimum(prev_step, prev_loss, prev_slope, step, new_loss, new_slope,
                             bounds=(shortest, longest))
        prev_step, prev_loss, prev_grad, prev_slope = previous, new_loss, new_grad.copy(), new_slope
        new_loss, new_grad = evaluate(x, step, direction)
        evaluations += 1
        new_slope = new_grad.dot(direction)
        iteration += 1
    if iteration == max_ls:
        bracket = _Bracket([0, step], [loss, new_loss], [grad, new_grad], [None, None])
    assert bracket is not None
    # phase 2: zoom into the interval until a step satisfies both conditions
    stalled = False
    low, high = (0, 1) if bracket.losses[0] <= bracket.losses[-1] else (1, 0)
    while not done and iteration < max_ls:
        steps = bracket.steps
        if abs(steps[1] - steps[0]) * direction_size < tolerance_change:
            break
        step = cubic_minimum(steps[0], bracket.losses[0], bracket.slopes[0],
                             steps[1], bracket.losses[1], bracket.slopes[1])
        # keep away from the interval's ends, or the search stalls there
        margin = 0.1 * (max(steps) - min(steps))
        if min(max(steps) - step, step - min(steps)) < margin:
            if stalled or step >= max(steps) or step <= min(steps):
                if abs(step - max(steps)) < abs(step - min(steps)):
                    step = max(steps) - margin
                else:
                    step = min(steps) + margin
                stalled = False
            else:
                stalled = True
        else:
            stalled = False
        new_loss, new_grad = evaluate(x, step, direction)
        evaluations += 1
        new_slope = new_grad.dot(direction)
        iteration += 1
        if new_loss > loss + c1 * step * slope or new_loss >= bracket.losses[low]:
            bracket.replace(high, step, new_loss, new_grad.copy(), new_slope)
            low, high = (0, 1) if bracket.losses[0] <= bracket.losses[1] else (1, 0)
        else:
            if abs(new_slope) <= -c2 * slope:
                done = True
            elif new_slope * (bracket.steps[high] - bracket.steps[low]) >= 0:
                bracket.replace(high, bracket.steps[low], bracket.losses[low],
                                bracket.grads[low], bracket.slopes[low])
            bracket.replace(low, step, new_loss, new_grad.copy(), new_slope)
    return bracket.losses[low], bracket.grads[low], bracket.steps[low], evaluations
