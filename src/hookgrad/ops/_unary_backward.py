"""The gradients of sigmoid and tanh as torch records them under ``create_graph``: one node
each (``SigmoidBackwardBackward0``, ``TanhBackwardBackward0``) that saves the incoming gradient
and the activation's result through ``save_for_backward``, so an in-place write to either makes
a later backward through the gradient refuse, as torch's does. Both are read from the result,
so they also serve ``sigmoid_``/``tanh_`` and the composed ``tanhshrink``."""
from __future__ import annotations

import numpy as np

from . import _layout
from ._base import HALF_TYPES, Op


def _from_result(formula, grad_output: np.ndarray, output: np.ndarray) -> np.ndarray:
    """``formula(grad_output, output, one)`` as torch's kernels compute it: half precision in
    float32 and rounded once, laid out as an elementwise result of both operands."""
    dtype = np.result_type(grad_output, output)
    if dtype in HALF_TYPES:
        work = np.float32
        result = formula(grad_output.astype(work), output.astype(work), work(1)).astype(dtype)
    else:
        result = formula(grad_output.astype(dtype, copy=False), output.astype(dtype, copy=False),
                         dtype.type(1))
    return _layout.pointwise(result, grad_output, output)


class _ResultBackward(Op):
    """A gradient read from an activation's result y: ``formula(grad_output, y, one)``, saving
    grad_output and y. Its own derivatives are the same node again for grad_output (the
    formula is linear in it) and ``output_grad`` for y."""

    saved_names = ("grad_output", "output")

    @staticmethod
    def formula(g, y, one):
        raise NotImplementedError

    @staticmethod
    def output_grad(grad, grad_output, output):
        raise NotImplementedError

    @classmethod
    def forward(cls, ctx, grad_output, output):
        ctx.save_for_backward(grad_output, output)
        return _from_result(cls.formula, grad_output, output)

    @classmethod
    def backward(cls, ctx, grad):
        grad_output, output = ctx.saved_tensors
        need_grad_output, need_output = ctx.needs_input_grad[:2]
        return (cls.apply(grad, output) if need_grad_output else None,
                cls.output_grad(grad, grad_output, output) if need_output else None)


class SigmoidBackward(_ResultBackward):
    """grad_output (1 - y) y from sigmoid's result y: torch's ``sigmoid_backward``; its
    derivative for y is ``grad grad_output (1 - 2 y)``."""

    node_name = "SigmoidBackwardBackward0"

    @staticmethod
    def formula(g, y, one):
        return g * (one - y) * y

    @staticmethod
    def output_grad(grad, grad_output, output):
        return grad * grad_output * (output * -2 + 1)


class TanhBackward(_ResultBackward):
    """grad_output (1 - y^2) from tanh's result y: torch's ``tanh_backward``; its derivative
    for y is ``grad (-2 y grad_output)``."""

    node_name = "TanhBackwardBackward0"

    @staticmethod
    def formula(g, y, one):
        return g * (one - y * y)

    @staticmethod
    def output_grad(grad, grad_output, output):
        return grad * (output * -2 * grad_output)
