"""torch.gradient: derivatives of sampled values by finite differences, one tensor per dim.

Inside, second-order central differences (for unevenly spaced coordinates, the weighted
three-point formula); at the two ends, one-sided differences of first or second order
(``edge_order``). Everything is composed of tensor ops, so the result is differentiable and,
as torch's, ends in a ``cat`` of the two ends and the inside.
"""
from __future__ import annotations

import numbers

from ..tensor import Tensor
from ._util import normalize_dim
from .arithmetic_scalar import div_scalar, mul_scalar
from .join import cat


def _dims(input: Tensor, dim) -> list:
    if dim is None:
        return list(range(input.ndim))
    dims = [dim] if isinstance(dim, numbers.Integral) else list(dim)
    dims = [normalize_dim(d, input.ndim) for d in dims]
    for d in dims:
        if dims.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return dims


def _spacings(spacing, dims: list, given_dim: bool, ndim: int) -> list:
    if isinstance(spacing, Tensor) and spacing.ndim == 0:
        spacing = spacing.item()
    if not isinstance(spacing, (list, tuple)):
        return [spacing] * len(dims)
    if len(spacing) != len(dims):
        if given_dim:
            raise RuntimeError(
                "torch.gradient expected spacing to be unspecified, a scalar or it's spacing "
                "and dim arguments to have the same length, but got a spacing argument of "
                f"length {len(spacing)} and a dim argument of length {len(dims)}.")
        raise RuntimeError(
            "torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
            f"equal to 'self.dim() = {ndim}', since dim argument was not given, but got a list "
            f"of length {len(spacing)}")
    for step in spacing:
        if isinstance(step, Tensor) and step.ndim != 1:
            raise RuntimeError("torch.gradient expected each element of spacing to have one "
                               f"dimension, but got an element with {step.ndim} dimensions!")
    return list(spacing)


def _along(values: Tensor, dim: int, ndim: int) -> Tensor:
    """A 1-D tensor shaped to broadcast along ``dim`` of an ``ndim``-dim tensor."""
    return values.reshape([-1 if d == dim else 1 for d in range(ndim)])


def _uniform(x: Tensor, dim: int, step, edge_order: int) -> Tensor:
    n = x.shape[dim]
    pick = lambda start, length: x.narrow(dim, start, length)  # noqa: E731
    inside = div_scalar(pick(2, n - 2) - pick(0, n - 2), 2 * step)
    if edge_order == 1:
        first = div_scalar(pick(1, 1) - pick(0, 1), step)
        last = div_scalar(pick(n - 1, 1) - pick(n - 2, 1), step)
    else:
        first = div_scalar(mul_scalar(pick(0, 1), -1.5) + mul_scalar(pick(1, 1), 2)
                           - mul_scalar(pick(2, 1), 0.5), step)
        last = div_scalar(mul_scalar(pick(n - 3, 1), 0.5) - mul_scalar(pick(n - 2, 1), 2)
                          + mul_scalar(pick(n - 1, 1), 1.5), step)
    return cat([first, inside, last], dim)


def _coordinates(x: Tensor, dim: int, coords: Tensor, edge_order: int) -> Tensor:
    n, ndim = x.shape[dim], x.ndim
    pick = lambda start, length: x.narrow(dim, start, length)  # noqa: E731
    steps = coords[1:] - coords[:-1]
    before, after = _along(steps[:-1], dim, ndim), _along(steps[1:], dim, ndim)
    inside = (-after / (before * (before + after)) * pick(0, n - 2)
              + (after - before) / (before * after) * pick(1, n - 2)
              + before / (after * (before + after)) * pick(2, n - 2))
    if edge_order == 1:
        first = (pick(1, 1) - pick(0, 1)) / steps[0]
        last = (pick(n - 1, 1) - pick(n - 2, 1)) / steps[-1]
    else:
        h1, h2 = steps[0], steps[1]
        first = (-(2 * h1 + h2) / (h1 * (h1 + h2)) * pick(0, 1)
                 + (h1 + h2) / (h1 * h2) * pick(1, 1)
                 + -h1 / (h2 * (h1 + h2)) * pick(2, 1))
        h1, h2 = steps[-2], steps[-1]
        last = (h2 / (h1 * (h1 + h2)) * pick(n - 3, 1)
                + -(h2 + h1) / (h1 * h2) * pick(n - 2, 1)
                + (2 * h2 + h1) / (h2 * (h1 + h2)) * pick(n - 1, 1))
    return cat([first, inside, last], dim)


def gradient(input: Tensor, *, spacing=1, dim=None, edge_order: int = 1) -> tuple:
    """The derivative of ``input``'s values along each of ``dim`` (all dims by default), the
    samples ``spacing`` apart: one number for every dim, one per dim, or one tensor of
    coordinates per dim."""
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = _dims(input, dim)
    steps = _spacings(spacing, dims, dim is not None, input.ndim)
    results = []
    for d, step in zip(dims, steps):
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
        if isinstance(step, Tensor):
            results.append(_coordinates(input, d, step, edge_order))
        else:
            results.append(_uniform(input, d, step, edge_order))
    return tuple(results)
