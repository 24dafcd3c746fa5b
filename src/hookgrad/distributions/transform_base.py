"""``Transform``: an invertible map with a log-Jacobian, and the transforms that combine others
(inverse, composition, independent reinterpretation, reshape).

A transform maps ``domain`` to ``codomain`` (constraints); ``log_abs_det_jacobian(x, y)`` is
log |dy/dx| summed over nothing (``event_dim`` says how many rightmost dimensions one event
has). With ``cache_size=1`` the last (x, y) pair is remembered, so ``t.inv(t(x))`` returns the
very ``x`` (and keeps its graph) instead of recomputing it.
"""
from __future__ import annotations

import functools
import operator

import hookgrad as torch

from . import constraints
from .utils import _sum_rightmost, lazy_property

__all__ = ["Transform", "ComposeTransform", "IndependentTransform", "ReshapeTransform",
           "identity_transform"]

_EMPTY_PAIR = (None, None)


def _need_rank(value, rank: int) -> None:
    """Transforms over events cannot take a tensor with fewer dimensions than one event."""
    if rank > value.dim():
        raise ValueError("Too few dimensions on input")


class Transform:
    """The base of invertible transforms with computable log-det-Jacobians.

    Subclasses give ``domain``/``codomain`` and implement ``_call``, ``_inverse`` and
    ``log_abs_det_jacobian``; calling and inverting go through the one-pair cache here.
    """

    # Where values live on each side; subclasses set these (often as dependent properties).
    domain: constraints.Constraint
    codomain: constraints.Constraint
    # One-to-one maps (so the log-density formula applies) say so.
    bijective = False

    def __init__(self, cache_size: int = 0) -> None:
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._pair = _EMPTY_PAIR
        self._inv = None
        super().__init__()

    def __getstate__(self):
        # The inverse points back at us; pickling it would only duplicate the object.
        return {**self.__dict__, "_inv": None}

    @property
    def event_dim(self) -> int:
        """The event dimensions, when domain and codomain agree on them."""
        dims = {self.domain.event_dim, self.codomain.event_dim}
        if len(dims) != 1:
            raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")
        return dims.pop()

    @property
    def inv(self) -> "Transform":
        """The inverse transform (made once and kept)."""
        if self._inv is None:
            self._inv = _InverseTransform(self)
        return self._inv

    @property
    def sign(self):
        """The sign of the Jacobian determinant, for monotone maps."""
        raise NotImplementedError

    def with_cache(self, cache_size: int = 1):
        """This transform with the given cache size.

        A subclass whose constructor takes more than ``cache_size`` must override this.
        """
        if cache_size == self._cache_size:
            return self
        cls = type(self)
        if cls.__init__ is not Transform.__init__:
            raise NotImplementedError(f"{cls}.with_cache is not implemented")
        return cls(cache_size=cache_size)

    def __eq__(self, other):
        return other is self

    def __ne__(self, other):
        return not self == other

    __hash__ = object.__hash__

    def _through_cache(self, given, compute, given_is_x: bool):
        """``compute(given)``, or the remembered partner when ``given`` is the cached one."""
        if not self._cache_size:
            return compute(given)
        cached_x, cached_y = self._pair
        if given_is_x and given is cached_x:
            return cached_y
        if not given_is_x and given is cached_y:
            return cached_x
        result = compute(given)
        self._pair = (given, result) if given_is_x else (result, given)
        return result

    def __call__(self, x):
        return self._through_cache(x, self._call, True)

    def _inv_call(self, y):
        return self._through_cache(y, self._inverse, False)

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        """log |dy/dx| for the pair ``y = self(x)``."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def forward_shape(self, shape):
        """The output shape for an input of ``shape``."""
        return shape

    def inverse_shape(self, shape):
        """The input shape for an output of ``shape``."""
        return shape


class _InverseTransform(Transform):
    """The inverse of a transform: everything is read off the forward one, cache included."""

    def __init__(self, transform: Transform) -> None:
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @property
    def inv(self) -> Transform:
        """The forward transform."""
        return self._inv

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        """The forward transform's codomain."""
        return self.inv.codomain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        """The forward transform's domain."""
        return self.inv.domain

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        """As the forward transform."""
        return self.inv.bijective

    @property
    def sign(self):
        """As the forward transform."""
        return self.inv.sign

    def with_cache(self, cache_size: int = 1):
        """The inverse of the forward transform with that cache size."""
        recached = self.inv.with_cache(cache_size)
        return recached.inv

    def __eq__(self, other):
        if not isinstance(other, _InverseTransform):
            return False
        return self.inv == other.inv

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.inv!r})"

    def __call__(self, x):
        # Runs the forward transform's inverse through *its* cache, so t.inv(t(x)) is x.
        return self.inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        """Minus the forward log-det at the swapped pair."""
        return -self.inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        """The forward transform's inverse_shape."""
        return self.inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        """The forward transform's forward_shape."""
        return self.inv.forward_shape(shape)


def _at_least(constraint, event_dim: int):
    """``constraint`` made independent over extra dimensions until it has ``event_dim``."""
    extra = event_dim - constraint.event_dim
    return constraints.independent(constraint, extra) if extra > 0 else constraint


def _chain_event_dim(start: int, steps) -> int:
    """Event dimensions after walking ``(into, out_of)`` pairs of event_dims from ``start``.

    Each step changes the count by ``into - out_of`` and never leaves fewer than ``into``.
    """
    dim = start
    for into, out_of in steps:
        dim = max(dim + into - out_of, into)
    return dim


class ComposeTransform(Transform):
    """Apply ``parts`` in order; the log-det is the sum of the parts', each summed over the
    event dimensions it does not see."""

    def __init__(self, parts, cache_size: int = 0) -> None:
        parts = list(parts)
        if cache_size:
            parts = [p.with_cache(cache_size) for p in parts]
        super().__init__(cache_size=cache_size)
        self.parts = parts

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and other.parts == self.parts

    __hash__ = object.__hash__

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        """The first part's domain, widened to the composition's event dimensions."""
        parts = self.parts
        if not parts:
            return constraints.real
        # Walk back from the output: each part needs at least its own domain's event dims.
        need = _chain_event_dim(parts[-1].codomain.event_dim,
                                ((p.domain.event_dim, p.codomain.event_dim)
                                 for p in parts[::-1]))
        return _at_least(parts[0].domain, need)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        """The last part's codomain, widened to the composition's event dimensions."""
        parts = self.parts
        if not parts:
            return constraints.real
        need = _chain_event_dim(parts[0].domain.event_dim,
                                ((p.codomain.event_dim, p.domain.event_dim) for p in parts))
        return _at_least(parts[-1].codomain, need)

    @lazy_property
    def bijective(self) -> bool:  # type: ignore[override]
        """Whether every part is bijective."""
        return all(p.bijective for p in self.parts)

    @lazy_property
    def sign(self):  # type: ignore[override]
        """The product of the parts' signs."""
        return functools.reduce(operator.mul, (p.sign for p in self.parts), 1)

    @property
    def inv(self) -> Transform:
        """The composition of the parts' inverses in reverse order."""
        if self._inv is None:
            backwards = ComposeTransform([p.inv for p in self.parts[::-1]])
            backwards._inv = self
            self._inv = backwards
        return self._inv

    def with_cache(self, cache_size: int = 1):
        """The composition of the parts with that cache size."""
        if cache_size == self._cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        return functools.reduce(lambda value, part: part(value), self.parts, x)

    def log_abs_det_jacobian(self, x, y):
        """The parts' log-dets at the intermediate values, each summed to the event."""
        if not self.parts:
            return torch.zeros_like(x)
        terms = []
        dim = self.domain.event_dim
        here = x
        final = len(self.parts) - 1
        for i, part in enumerate(self.parts):
            there = y if i == final else part(here)
            ladj = part.log_abs_det_jacobian(here, there)
            terms.append(_sum_rightmost(ladj, dim - part.domain.event_dim))
            dim += part.codomain.event_dim - part.domain.event_dim
            here = there
        return functools.reduce(operator.add, terms)

    def forward_shape(self, shape):
        """Each part's forward_shape in turn."""
        return functools.reduce(lambda s, part: part.forward_shape(s), self.parts, shape)

    def inverse_shape(self, shape):
        """Each part's inverse_shape, last part first."""
        return functools.reduce(lambda s, part: part.inverse_shape(s), self.parts[::-1], shape)

    def __repr__(self) -> str:
        body = ",\n    ".join(map(repr, self.parts))
        return f"{type(self).__name__}(\n    {body}\n)"


identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """``base_transform`` with ``reinterpreted_batch_ndims`` more dimensions in each event: the
    values are the same, the log-det is summed over those dimensions."""

    def __init__(self, base_transform: Transform, reinterpreted_batch_ndims: int,
                 cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        self.base_transform = base_transform.with_cache(cache_size)

    def with_cache(self, cache_size: int = 1):
        """The same transform with that cache size."""
        if cache_size == self._cache_size:
            return self
        return type(self)(self.base_transform, self.reinterpreted_batch_ndims, cache_size)

    def _widened(self, constraint):
        return constraints.independent(constraint, self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        """The base domain, independent over the reinterpreted dimensions."""
        return self._widened(self.base_transform.domain)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        """The base codomain, independent over the reinterpreted dimensions."""
        return self._widened(self.base_transform.codomain)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        """As the base transform."""
        return self.base_transform.bijective

    @property
    def sign(self):
        """As the base transform."""
        return self.base_transform.sign

    def _call(self, x):
        _need_rank(x, self.domain.event_dim)
        return self.base_transform(x)

    def _inverse(self, y):
        _need_rank(y, self.codomain.event_dim)
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        """The base log-det summed over the reinterpreted dimensions."""
        per_base_event = self.base_transform.log_abs_det_jacobian(x, y)
        return _sum_rightmost(per_base_event, self.reinterpreted_batch_ndims)

    def __repr__(self) -> str:
        name = type(self).__name__
        return f"{name}({self.base_transform!r}, {self.reinterpreted_batch_ndims})"

    def forward_shape(self, shape):
        """As the base transform."""
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        """As the base transform."""
        return self.base_transform.inverse_shape(shape)


class ReshapeTransform(Transform):
    """Reshape the rightmost ``in_shape`` dimensions to ``out_shape`` (log-det zero)."""

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size: int = 0) -> None:
        before, after = torch.Size(in_shape), torch.Size(out_shape)
        if before.numel() != after.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        self.in_shape, self.out_shape = before, after
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self):
        """Reals with ``len(in_shape)`` event dimensions."""
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self):
        """Reals with ``len(out_shape)`` event dimensions."""
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size: int = 1):
        """The same reshape with that cache size."""
        if cache_size == self._cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    @staticmethod
    def _batch_of(t, event_ndim: int) -> tuple:
        return tuple(t.shape[:t.dim() - event_ndim])

    def _call(self, x):
        return x.reshape(self._batch_of(x, len(self.in_shape)) + tuple(self.out_shape))

    def _inverse(self, y):
        return y.reshape(self._batch_of(y, len(self.out_shape)) + tuple(self.in_shape))

    def log_abs_det_jacobian(self, x, y):
        """Zeros of the batch shape."""
        return x.new_zeros(self._batch_of(x, len(self.in_shape)))

    def _swap(self, shape, have, want):
        if len(shape) < len(have):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(have)
        if torch.Size(shape[cut:]) != have:
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {have}")
        return torch.Size(tuple(shape[:cut]) + tuple(want))

    def forward_shape(self, shape):
        """The batch part of ``shape`` followed by out_shape."""
        return self._swap(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        """The batch part of ``shape`` followed by in_shape."""
        return self._swap(shape, self.out_shape, self.in_shape)
