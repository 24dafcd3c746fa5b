"""Transforms that apply different transforms to different slices of one dimension:
``CatTransform`` (consecutive runs of given lengths) and ``StackTransform`` (one per entry)."""
from __future__ import annotations

import hookgrad as torch

from . import constraints
from .transform_base import Transform
from .utils import _sum_rightmost, lazy_property

__all__ = ["CatTransform", "StackTransform"]


def _check_parts(tseq) -> list:
    if not all(isinstance(t, Transform) for t in tseq):
        raise AssertionError("All elements of tseq must be Transform instances")
    return list(tseq)


def _check_dim(dim: int, tensor, what: str) -> None:
    if not -tensor.dim() <= dim < tensor.dim():
        raise AssertionError(f"dim {dim} out of range for {what} with {tensor.dim()} dimensions")


class CatTransform(Transform):
    """``tseq[i]`` on the i-th run of ``lengths[i]`` entries along ``dim``, results joined
    with ``torch.cat`` (the transform of ``constraints.cat``)."""

    def __init__(self, tseq, dim: int = 0, lengths=None, cache_size: int = 0) -> None:
        tseq = _check_parts(tseq)
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = tseq
        self.lengths = [1] * len(tseq) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match transforms "
                                 f"({len(self.transforms)})")
        self.dim = dim

    @lazy_property
    def event_dim(self) -> int:  # type: ignore[override]
        """The largest event dimension among the parts."""
        return max(t.event_dim for t in self.transforms)

    @lazy_property
    def length(self) -> int:
        """The total length along ``dim``."""
        return sum(self.lengths)

    def with_cache(self, cache_size: int = 1):
        """The same parts with that cache size."""
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _check(self, tensor, name: str, what: str) -> None:
        _check_dim(self.dim, tensor, what)
        if tensor.size(self.dim) != self.length:
            raise AssertionError(f"{name}.size({self.dim}) = {tensor.size(self.dim)} must equal "
                                 f"length {self.length}")

    def _runs(self, tensor):
        start = 0
        for transform, length in zip(self.transforms, self.lengths):
            yield transform, tensor.narrow(self.dim, start, length)
            start = start + length

    def _call(self, x):
        self._check(x, "x", "tensor")
        return torch.cat([t(piece) for t, piece in self._runs(x)], dim=self.dim)

    def _inverse(self, y):
        self._check(y, "y", "tensor")
        return torch.cat([t.inv(piece) for t, piece in self._runs(y)], dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        """Each part's log-det on its run, joined along ``dim`` (or summed when ``dim`` lies
        inside the event)."""
        self._check(x, "x", "x")
        self._check(y, "y", "y")
        terms = []
        for (transform, x_piece), (_, y_piece) in zip(self._runs(x), self._runs(y)):
            term = transform.log_abs_det_jacobian(x_piece, y_piece)
            if transform.event_dim < self.event_dim:
                term = _sum_rightmost(term, self.event_dim - transform.event_dim)
            terms.append(term)
        dim = (self.dim - x.dim() if self.dim >= 0 else self.dim) + self.event_dim
        return torch.cat(terms, dim=dim) if dim < 0 else sum(terms)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        """Whether every part is."""
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        """The parts' domains joined with ``constraints.cat``."""
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        """The parts' codomains joined with ``constraints.cat``."""
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """``tseq[i]`` on the i-th entry along ``dim``, results joined with ``torch.stack`` (the
    transform of ``constraints.stack``)."""

    def __init__(self, tseq, dim: int = 0, cache_size: int = 0) -> None:
        tseq = _check_parts(tseq)
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = tseq
        self.dim = dim

    def with_cache(self, cache_size: int = 1):
        """The same parts with that cache size."""
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slice(self, z):
        return [z.select(self.dim, i) for i in range(z.size(self.dim))]

    def _check(self, tensor, name: str, what: str) -> None:
        _check_dim(self.dim, tensor, what)
        if tensor.size(self.dim) != len(self.transforms):
            raise AssertionError(f"{name}.size({self.dim}) = {tensor.size(self.dim)} must equal "
                                 f"len(transforms) {len(self.transforms)}")

    def _call(self, x):
        self._check(x, "x", "tensor")
        return torch.stack([t(piece) for piece, t in zip(self._slice(x), self.transforms)],
                           dim=self.dim)

    def _inverse(self, y):
        self._check(y, "y", "tensor")
        return torch.stack([t.inv(piece) for piece, t in zip(self._slice(y), self.transforms)],
                           dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        """Each part's log-det on its entry, stacked along ``dim``."""
        self._check(x, "x", "x")
        self._check(y, "y", "y")
        terms = [t.log_abs_det_jacobian(x_piece, y_piece) for x_piece, y_piece, t
                 in zip(self._slice(x), self._slice(y), self.transforms)]
        return torch.stack(terms, dim=self.dim)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        """Whether every part is."""
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        """The parts' domains joined with ``constraints.stack``."""
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        """The parts' codomains joined with ``constraints.stack``."""
        return constraints.stack([t.codomain for t in self.transforms], self.dim)
