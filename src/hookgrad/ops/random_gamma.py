"""Gamma, Dirichlet and binomial draws with torch's CPU stream, and their pathwise gradients.

``_standard_gamma(alpha)`` draws Gamma(alpha, 1); its gradient to alpha is the implicit
reparameterisation d x / d alpha = ``_standard_gamma_grad(alpha, x)``. ``_sample_dirichlet``
normalises gamma draws made in double over the last dimension, and ``_dirichlet_grad`` is the
per-coordinate Beta gradient the Dirichlet distribution builds its ``rsample`` gradient from.
``binomial(count, prob)`` draws counts; it has no derivative (torch's ``NotImplemented``).
"""
from __future__ import annotations

import numpy as np

from .._generator import resolve
from ..tensor import Tensor
from . import _binomial_draws, _gamma_draws, _gamma_grads
from ._base import Op, not_implemented
from ._util import broadcast_error


def _floating(array: np.ndarray, kernel: str) -> None:
    if array.dtype.kind != "f" or array.dtype == np.float16:
        raise not_implemented(kernel, array.dtype)


class StandardGamma(Op):
    """d x / d alpha = _standard_gamma_grad(alpha, x)"""

    node_name = "StandardGammaBackward0"
    saved_names = ("self", "result")

    @staticmethod
    def forward(ctx, self, generator):
        _floating(self, "gamma_cpu")
        result = _gamma_draws.standard_gamma(generator, self, self.dtype)
        ctx.save_for_backward(self, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        self, result = ctx.saved_tensors
        return grad * _standard_gamma_grad(self, result)


class _NoDerivative(Op):
    """torch records a ``NotImplemented`` node; its backward raises (a RuntimeError naming the
    aten op, except for _standard_gamma_grad, whose formula is declared not implemented)."""

    node_name = "torch::autograd::NotImplemented"

    @staticmethod
    def backward(ctx, *grads):
        if ctx.op_name == "_standard_gamma_grad":
            raise NotImplementedError("the derivative for '_standard_gamma_grad' is not "
                                      "implemented.")
        raise RuntimeError(f"derivative for aten::{ctx.op_name} is not implemented")


class StandardGammaGrad(_NoDerivative):
    node_name = "StandardGammaGradBackward0"  # a node of its own whose formula raises

    @staticmethod
    def forward(ctx, self, output):
        ctx.op_name = "_standard_gamma_grad"
        _floating(self, "_standard_gamma_grad_cpu")
        self, output = _broadcast("_standard_gamma_grad", self, output)
        return _gamma_grads.standard_gamma_grad(self, output.astype(self.dtype))


class SampleDirichlet(_NoDerivative):
    node_name = "torch::autograd::NotImplemented"

    @staticmethod
    def forward(ctx, self, generator):
        ctx.op_name = "_sample_dirichlet"
        _floating(self, "dirichlet")
        gammas = _gamma_draws.standard_gamma(generator, self.astype(np.float64), np.float64)
        with np.errstate(all="ignore"):
            ratios = (gammas / gammas.sum(-1, keepdims=True)).astype(self.dtype)
        top = np.nextafter(self.dtype.type(1), self.dtype.type(0))
        return np.minimum(top, np.maximum(np.finfo(self.dtype).tiny, ratios))


class DirichletGrad(_NoDerivative):
    node_name = "torch::autograd::NotImplemented"

    @staticmethod
    def forward(ctx, x, alpha, total):
        ctx.op_name = "_dirichlet_grad"
        _floating(x, "_dirichlet_grad_cpu")
        x, alpha, total = _broadcast("_dirichlet_grad", x, alpha, total)
        return _gamma_grads.dirichlet_grad(x, alpha, total).reshape(x.shape)


class Binomial(_NoDerivative):
    node_name = "torch::autograd::NotImplemented"

    @staticmethod
    def forward(ctx, count, prob, generator):
        ctx.op_name = "binomial"
        _floating(count, "binomial_cpu")
        counts, probs = _broadcast("binomial", count, prob)
        return _binomial_draws.binomial(generator, counts, probs.astype(count.dtype))


def _broadcast(name: str, *arrays: np.ndarray) -> list:
    """The operands broadcast together as torch's elementwise kernels take them (C-ordered
    copies, so the draws follow torch's order)."""
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        raise broadcast_error(name, *(a.shape for a in arrays[:2])) from None
    return [np.ascontiguousarray(np.broadcast_to(a, shape)) for a in arrays]


def _standard_gamma(input: Tensor, generator=None) -> Tensor:
    """One Gamma(alpha, 1) draw per element of ``input`` (torch's sampler and stream); the
    gradient to ``input`` is the implicit reparameterisation."""
    return StandardGamma.apply(input, resolve(generator))


def _standard_gamma_grad(input: Tensor, output: Tensor) -> Tensor:
    """d x / d alpha for gamma draws ``output`` with concentrations ``input``."""
    return StandardGammaGrad.apply(input, output)


def _sample_dirichlet(input: Tensor, generator=None) -> Tensor:
    """Dirichlet draws over the last dimension: gamma draws (in double) over their sum."""
    return SampleDirichlet.apply(input, resolve(generator))


def _dirichlet_grad(x: Tensor, alpha: Tensor, total: Tensor) -> Tensor:
    """The Beta(alpha, total - alpha) pathwise gradient at ``x``, divided by 1 - x."""
    return DirichletGrad.apply(x, alpha, total)


def binomial(count: Tensor, prob: Tensor, generator=None) -> Tensor:
    """Binomial(count, prob) draws (floating counts; prob broadcast to count's shape)."""
    for name, value in (("count", count), ("prob", prob)):
        if value._data.dtype.kind != "f":
            from .. import _dtype

            raise ValueError(f"binomial only supports floating-point dtypes for {name}, got: "
                             f"{_dtype.scalar_type_name(value._data.dtype)}")
    return Binomial.apply(count, prob, resolve(generator))
