"""torch.histogram: counts (or summed weights, or a density) of a floating tensor's elements in
bins given as a number of equal-width bins or as the bin edges themselves.

An element x falls in bin i when edges[i] <= x < edges[i + 1]; the last bin also takes its
right edge, and elements outside the edges are left out. The result is a count, so, as in
torch, its node refuses backward.
"""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from ._base import Op, not_implemented
from .creation import linspace
from .minmax import return_types


class HistogramResult(tuple):
    """torch.return_types.histogram: the pair (hist, bin_edges), printed as torch prints it."""

    __slots__ = ()
    n_fields = n_sequence_fields = 2

    def __new__(cls, hist: Tensor, bin_edges: Tensor):
        return super().__new__(cls, (hist, bin_edges))

    @property
    def hist(self) -> Tensor:
        return self[0]

    @property
    def bin_edges(self) -> Tensor:
        return self[1]

    def __repr__(self) -> str:
        return f"torch.return_types.histogram(\nhist={self[0]!r},\nbin_edges={self[1]!r})"


return_types.histogram = HistogramResult


class Histogram(Op):
    """no derivative: torch's node for histogram raises in backward"""

    node_name = "torch::autograd::NotImplemented"

    @staticmethod
    def forward(ctx, self, edges, weight, density):
        flat = self.reshape(-1)
        inside = (flat >= edges[0]) & (flat <= edges[-1])
        bins = edges.shape[0] - 1
        position = np.minimum(np.searchsorted(edges, flat[inside], side="right") - 1, bins - 1)
        weights = None if weight is None else weight.reshape(-1)[inside]
        hist = np.bincount(position, weights, minlength=bins)[:bins].astype(self.dtype)
        if density:
            with np.errstate(all="ignore"):
                hist = (hist / (hist.sum() * np.diff(edges))).astype(self.dtype)
        return hist, edges.copy()

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("derivative for aten::histogram is not implemented")


def _name(dtype: np.dtype) -> str:
    return {"float32": "float", "float64": "double"}.get(dtype.name, dtype.name)


def _edges(input: Tensor, bins: int, range) -> Tensor:
    data = input._data
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if range is not None:
        low, high = float(range[0]), float(range[1])
    elif data.size:
        low, high = float(data.min()), float(data.max())
    else:
        low, high = 0.0, 1.0
    if low > high:
        raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {low:g} "
                           f"max {high:g} for dimension 0")
    if not (np.isfinite(low) and np.isfinite(high)):
        raise RuntimeError(f"torch.histogramdd: dimension 0's range [{low:g}, {high:g}] is not "
                           f"finite")
    if low == high:
        low, high = low - 0.5, high + 0.5
    return linspace(low, high, bins + 1, dtype=input.dtype)


def histogram(input: Tensor, bins, *, range=None, weight: Tensor = None, density: bool = False,
              out=None) -> tuple:
    """``(hist, bin_edges)`` of ``input``'s elements: ``bins`` equal-width bins over ``range``
    (the data's min and max by default) or the given 1-D tensor of increasing edges; with
    ``weight`` each element adds its weight, with ``density`` the counts become a density."""
    data = input._data
    if data.dtype.kind != "f":
        raise not_implemented("histogramdd", data.dtype)
    if isinstance(bins, Tensor):
        if bins._data.dtype != data.dtype:
            raise RuntimeError(
                f"torch.histogramdd: input tensor and bins tensors should have the same dtype, "
                f"but got input with dtype {_name(data.dtype)} and bins for dimension 0 with "
                f"dtype {_name(bins._data.dtype)}")
        edges = bins
    else:
        edges = _edges(input, int(bins), range)
    if weight is not None:
        if weight._data.shape != data.shape:
            raise RuntimeError(
                f"torch.histogramdd: if weight tensor is provided it should have the same shape "
                f"as the input tensor excluding its innermost dimension, but got input with "
                f"shape {list(data.reshape(-1, 1).shape)} and weight with shape "
                f"{list(weight._data.shape)}")
        if weight._data.dtype != data.dtype:
            raise RuntimeError(
                f"torch.histogramdd: if weight tensor is provided, input tensor and weight "
                f"tensor should have the same dtype, but got input({_name(data.dtype)}), and "
                f"weight({_name(weight._data.dtype)})")
    hist, bin_edges = Histogram.apply(input, edges._data, None if weight is None else
                                      weight._data, bool(density))
    return HistogramResult(hist, bin_edges)


METHODS = {"histogram": histogram}
