"""``Transform``: an invertible map with a log-Jacobian, and the transforms that combine others
(inverse, composition, independent reinterpretation, reshape).

A transform maps ``domain`` to ``codomain`` (constraints); ``log_abs_det_jacobian(x, y)`` is
log |dy/dx| summed over nothing (``event_dim`` says how many rightmost dimensions one event
has). With ``cache_size=1`` the last (x, y) pair is remembered, so ``t.inv(t(x))`` returns the
very ``x`` (and keeps its graph) instead of recomputing it.
"""
from __future__ import annotations

import hookgrad as torch

from . import constraints
from .utils import _sum_rightmost, lazy_property

__all__ = ["Transform", "ComposeTransform", "IndependentTransform", "ReshapeTransform",
           "identity_transform"]


class Transform:
    """The base of invertible transforms with computable log-det-Jacobians."""

    bijective = False
    domain: constraints.Constraint
    codomain: constraints.Constraint

    def __init__(self, cache_size: int = 0) -> None:
        self._cache_size = cache_size
        self._inv = None
        if cache_size == 1:
            self._cached_x_y = None, None
        elif cache_size != 0:
            raise ValueError("cache_size must be 0 or 1")
        super().__init__()

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_inv"] = None
        return state

    @property
    def event_dim(self) -> int:
        """The event dimensions, when domain and codomain agree on them."""
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self) -> "Transform":
        """The inverse transform (made once and kept)."""
        inv = self._inv
        if inv is None:
            inv = _InverseTransform(self)
            self._inv = inv
        return inv

    @property
    def sign(self):
        """The sign of the Jacobian determinant, for monotone maps."""
        raise NotImplementedError

    def with_cache(self, cache_size: int = 1):
        """This transform with the given cache size."""
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x):
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y):
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        """log |dy/dx| for the pair ``y = self(x)``."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.__class__.__name__ + "()"

    def forward_shape(self, shape):
        """The output shape for an input of ``shape``."""
        return shape

    def inverse_shape(self, shape):
        """The input shape for an output of ``shape``."""
        return shape


class _InverseTransform(Transform):
    """The inverse of a transform, sharing its cache."""

    def __init__(self, transform: Transform) -> None:
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        """The forward transform's codomain."""
        return self._inv.codomain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        """The forward transform's domain."""
        return self._inv.domain

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        """As the forward transform."""
        return self._inv.bijective

    @property
    def sign(self):
        """As the forward transform."""
        return self._inv.sign

    @property
    def inv(self) -> Transform:
        """The forward transform."""
        return self._inv

    def with_cache(self, cache_size: int = 1):
        """The inverse of the forward transform with that cache size."""
        return self.inv.with_cache(cache_size).inv

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._inv!r})"

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        """Minus the forward log-det at the swapped pair."""
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        """The forward transform's inverse_shape."""
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        """The forward transform's forward_shape."""
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    """Apply ``parts`` in order; the log-det is the sum of the parts', each summed over the
    event dimensions it does not see."""

    def __init__(self, parts, cache_size: int = 0) -> None:
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        """The first part's domain, widened to the composition's event dimensions."""
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        """The last part's codomain, widened to the composition's event dimensions."""
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @lazy_property
    def bijective(self) -> bool:  # type: ignore[override]
        """Whether every part is bijective."""
        return all(p.bijective for p in self.parts)

    @lazy_property
    def sign(self):  # type: ignore[override]
        """The product of the parts' signs."""
        sign = 1
        for part in self.parts:
            sign = sign * part.sign
        return sign

    @property
    def inv(self) -> Transform:
        """The composition of the parts' inverses in reverse order."""
        inv = self._inv
        if inv is None:
            inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv = inv
            inv._inv = self
        return inv

    def with_cache(self, cache_size: int = 1):
        """The composition of the parts with that cache size."""
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        """The parts' log-dets at the intermediate values, each summed to the event."""
        if not self.parts:
            return torch.zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        total = None
        event_dim = self.domain.event_dim
        for part, x_in, y_out in zip(self.parts, xs[:-1], xs[1:]):
            term = _sum_rightmost(part.log_abs_det_jacobian(x_in, y_out),
                                  event_dim - part.domain.event_dim)
            total = term if total is None else total + term
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return total

    def forward_shape(self, shape):
        """Each part's forward_shape in turn."""
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        """Each part's inverse_shape, last part first."""
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self) -> str:
        return (self.__class__.__name__ + "(\n    "
                + ",\n    ".join(repr(p) for p in self.parts) + "\n)")


identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """``base_transform`` with ``reinterpreted_batch_ndims`` more dimensions in each event: the
    values are the same, the log-det is summed over those dimensions."""

    def __init__(self, base_transform: Transform, reinterpreted_batch_ndims: int,
                 cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size: int = 1):
        """The same transform with that cache size."""
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims,
                                    cache_size=cache_size)

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        """The base domain, independent over the reinterpreted dimensions."""
        return constraints.independent(self.base_transform.domain,
                                       self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        """The base codomain, independent over the reinterpreted dimensions."""
        return constraints.independent(self.base_transform.codomain,
                                       self.reinterpreted_batch_ndims)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        """As the base transform."""
        return self.base_transform.bijective

    @property
    def sign(self):
        """As the base transform."""
        return self.base_transform.sign

    def _call(self, x):
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        """The base log-det summed over the reinterpreted dimensions."""
        return _sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y),
                              self.reinterpreted_batch_ndims)

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}({self.base_transform!r}, "
                f"{self.reinterpreted_batch_ndims})")

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
        self.in_shape = torch.Size(in_shape)
        self.out_shape = torch.Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
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
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        batch = tuple(x.shape[:x.dim() - len(self.in_shape)])
        return x.reshape(batch + tuple(self.out_shape))

    def _inverse(self, y):
        batch = tuple(y.shape[:y.dim() - len(self.out_shape)])
        return y.reshape(batch + tuple(self.in_shape))

    def log_abs_det_jacobian(self, x, y):
        """Zeros of the batch shape."""
        return x.new_zeros(tuple(x.shape[:x.dim() - len(self.in_shape)]))

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
