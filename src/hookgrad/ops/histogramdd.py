"""``histogramdd``: the histogram of points in D dimensions (the innermost dim of ``input``
holds each point's D coordinates), over one set of bin edges per dimension.

A point falls in bin i of a dimension when edges[i] <= x < edges[i + 1] (the last bin also
takes its right edge); a point outside any dimension's edges is left out. The result is a
count, so, as in torch, its node refuses backward.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..tensor import Tensor
from ._base import Op, not_implemented
from .creation import linspace
from .histogram import _name
from .minmax import return_types


class HistogramddResult(tuple):
    """torch.return_types.histogramdd: the pair (hist, bin_edges), bin_edges a tuple of
    tensors, one per dimension."""

    __slots__ = ()
    n_fields = n_sequence_fields = 2

    def __new__(cls, hist: Tensor, bin_edges: Sequence[Tensor]):
        return super().__new__(cls, (hist, tuple(bin_edges)))

    @property
    def hist(self) -> Tensor:
        return self[0]

    @property
    def bin_edges(self) -> tuple:
        return self[1]

    def __repr__(self) -> str:
        return f"torch.return_types.histogramdd(\nhist={self[0]!r},\nbin_edges={self[1]!r})"


return_types.histogramdd = HistogramddResult


class Histogramdd(Op):
    """(hist, *bin_edges); no derivative: torch's node for histogramdd raises in backward"""

    node_name = "torch::autograd::NotImplemented"

    @staticmethod
    def forward(ctx, self, edges, weight, density):
        points = self.reshape(-1, self.shape[-1])
        bins = tuple(e.shape[0] - 1 for e in edges)
        inside = np.ones(points.shape[0], bool)
        positions = []
        for dim, edge in enumerate(edges):
            coordinate = points[:, dim]
            inside &= (coordinate >= edge[0]) & (coordinate <= edge[-1])
            found = np.searchsorted(edge, coordinate, side="right") - 1
            positions.append(np.clip(found, 0, max(bins[dim] - 1, 0)))
        flat = np.ravel_multi_index([p[inside] for p in positions], bins) if all(bins) \
            else np.zeros(0, np.int64)
        weights = None if weight is None else weight.reshape(-1)[inside]
        size = int(np.prod(bins))
        hist = np.bincount(flat, weights, minlength=size)[:size].reshape(bins)
        if density:
            volume = np.ones(bins)
            for dim, edge in enumerate(edges):
                shape = [1] * len(bins)
                shape[dim] = bins[dim]
                volume = volume * np.diff(edge.astype(np.float64)).reshape(shape)
            with np.errstate(all="ignore"):
                hist = hist / hist.sum() / volume
        return (hist.astype(self.dtype),) + tuple(edge.copy() for edge in edges)

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("derivative for aten::_histogramdd_from_bin_cts is not implemented")


def _uniform_edges(input: Tensor, dim: int, bins: int, range) -> Tensor:
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension "
                           f"{dim}")
    coordinates = input._data.reshape(-1, input.shape[-1])[:, dim]
    if range is not None:
        low, high = float(range[2 * dim]), float(range[2 * dim + 1])
    elif coordinates.size:
        low, high = float(coordinates.min()), float(coordinates.max())
    else:
        low, high = 0.0, 1.0
    if low > high:
        raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {low:g} "
                           f"max {high:g} for dimension {dim}")
    if not (np.isfinite(low) and np.isfinite(high)):
        raise RuntimeError(f"torch.histogramdd: dimension {dim}'s range [{low:g}, {high:g}] is "
                           "not finite")
    if low == high:
        low, high = low - 0.5, high + 0.5
    return linspace(low, high, bins + 1, dtype=input.dtype)


def histogramdd(input: Tensor, bins, *, range=None, weight: Tensor = None,
                density: bool = False) -> HistogramddResult:
    """``(hist, bin_edges)`` of the points in ``input`` (shape ``(..., D)``): ``bins`` is one
    count for every dimension, a count per dimension, or a tensor of increasing edges per
    dimension; ``range`` gives (min, max) for each dimension in turn (``2 * D`` numbers)."""
    data = input._data
    if data.dtype.kind != "f":
        raise not_implemented("histogramdd", data.dtype)
    if data.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    count = data.shape[-1]
    per_dim = [bins] * count if isinstance(bins, int) else list(bins)
    if len(per_dim) != count:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                           "dimension of the input.")
    if range is not None and len(range) != 2 * count:
        raise RuntimeError(f"torch.histogramdd: for a {count}-dimensional histogram range "
                           f"should have {2 * count} elements, but got {len(range)}")
    edges = []
    for dim, spec in enumerate(per_dim):
        if isinstance(spec, Tensor):
            if spec._data.dtype != data.dtype:
                raise RuntimeError(
                    f"torch.histogramdd: input tensor and bins tensors should have the same "
                    f"dtype, but got input with dtype {_name(data.dtype)} and bins for "
                    f"dimension {dim} with dtype {_name(spec._data.dtype)}")
            edges.append(spec)
        else:
            edges.append(_uniform_edges(input, dim, int(spec), range))
    if weight is not None and tuple(weight.shape) != tuple(data.shape[:-1]):
        raise RuntimeError(
            "torch.histogramdd: if weight tensor is provided it should have the same shape as "
            f"the input tensor excluding its innermost dimension, but got input with shape "
            f"{list(data.shape)} and weight with shape {list(weight.shape)}")
    hist, *computed = Histogramdd.apply(input, tuple(e._data for e in edges),
                                        None if weight is None else weight._data, bool(density))
    # edges given as tensors come back as they are; computed ones from the recorded op
    edges = [spec if isinstance(spec, Tensor) else made
             for spec, made in zip(per_dim, computed)]
    return HistogramddResult(hist, edges)
