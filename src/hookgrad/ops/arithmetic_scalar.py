"""A tensor and a Python number, as torch's composite functions combine them inside: ``aten::
mul.Scalar``, ``div.Scalar``, ``add.Scalar`` and ``sub.Scalar`` record ``MulBackward1``,
``DivBackward1``, ``AddBackward1`` and ``SubBackward1``, each with one edge (the tensor's) and
the number kept on the node (``_saved_other`` for mul and div), where ``x * 2`` written by a user
wraps the number into a tensor and records ``MulBackward0`` with an empty second edge.

hookgrad's composites (losses, trapezoid, rms_norm, ...) call ``mul_scalar`` and its siblings
wherever torch's C++ calls the Scalar overload, so their graphs name the nodes torch's do."""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from ._base import Op, _check_sub, arithmetic, promote
from .arithmetic import Sub, _add_scaled, _true_dtype


class MulScalar(Op):
    """out = self * other for a number ``other``;  d self = grad * other"""

    node_name = "MulBackward1"
    array_formula = True
    saved_values = {"other": "other"}

    @staticmethod
    def forward(ctx, self, other, dtype):
        ctx.other = other
        return arithmetic("mul", np.multiply, self, other, dtype)

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.other


class DivScalar(Op):
    """out = self / other for a number ``other``;  d self = grad / other"""

    node_name = "DivBackward1"
    array_formula = True
    saved_values = {"other": "other"}

    @staticmethod
    def forward(ctx, self, other, dtype):
        ctx.other = other
        return arithmetic("div", np.true_divide, self, other, _true_dtype(dtype))

    @staticmethod
    def backward(ctx, grad):
        return grad / ctx.other


class AddScalar(Op):
    """out = self + other for a number ``other``;  d self = grad"""

    node_name = "AddBackward1"
    array_formula = True

    @staticmethod
    def forward(ctx, self, other, dtype):
        return _add_scaled(ctx, "add", np.add, self, other, dtype, 1)

    @staticmethod
    def backward(ctx, grad):
        return grad


class SubScalar(Op):
    """out = self - other for a number ``other``;  d self = grad"""

    node_name = "SubBackward1"
    array_formula = True

    @staticmethod
    def forward(ctx, self, other, dtype):
        _check_sub(self, self, other)
        return _add_scaled(ctx, "sub", np.subtract, self, other, dtype, 1)

    @staticmethod
    def backward(ctx, grad):
        return grad


def mul_scalar(input: Tensor, other) -> Tensor:
    """``input * other`` as torch's ``mul.Scalar`` (MulBackward1)."""
    return MulScalar.apply(input, other, promote(input, other))


def div_scalar(input: Tensor, other) -> Tensor:
    """``input / other`` as torch's ``div.Scalar`` (DivBackward1)."""
    return DivScalar.apply(input, other, promote(input, other))


def add_scalar(input: Tensor, other) -> Tensor:
    """``input + other`` as torch's ``add.Scalar`` (AddBackward1)."""
    return AddScalar.apply(input, other, promote(input, other))


def sub_scalar(input: Tensor, other) -> Tensor:
    """``input - other`` as torch's ``sub.Scalar`` (SubBackward1)."""
    return SubScalar.apply(input, other, promote(input, other))


def number_minus(number, input: Tensor) -> Tensor:
    """``number - input`` as torch's C++ writes it in composites: the number becomes a tensor
    that needs no grad, so ``SubBackward0`` gets an empty first edge (a user's ``2 - x`` is
    ``rsub``, ``RsubBackward1``)."""
    kind = input._data.dtype.kind
    constant = Tensor._make(np.asarray(number, dtype=input._data.dtype if kind in "fV" else None))
    return Sub.apply(constant, input, promote(constant, input), None)
