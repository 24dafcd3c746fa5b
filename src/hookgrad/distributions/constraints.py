"""The sets a distribution's parameters and samples live in, torch's ``distributions.constraints``.

A constraint answers one question, ``check(value)``: a boolean tensor saying, per event, whether
``value`` lies in the set. ``event_dim`` says how many rightmost dimensions make one event (a
simplex is judged a whole row at a time), ``is_discrete`` whether the set is countable. The
reprs are torch's (``GreaterThan(lower_bound=0.0)``) because validation errors print them.
"""
from __future__ import annotations

import hookgrad as torch

__all__ = [
    "Constraint", "boolean", "cat", "corr_cholesky", "dependent", "dependent_property",
    "greater_than", "greater_than_eq", "independent", "integer_interval", "interval",
    "half_open_interval", "is_dependent", "less_than", "lower_cholesky", "lower_triangular",
    "MixtureSameFamilyConstraint", "multinomial",
    "nonnegative", "nonnegative_integer", "one_hot", "positive",
    "positive_semidefinite", "positive_definite", "positive_integer", "real", "real_vector",
    "simplex", "square", "stack", "symmetric", "unit_interval",
]


class Constraint:
    """A region of real space; ``check(value)`` is True per event where ``value`` lies in it."""

    is_discrete = False
    event_dim = 0

    def check(self, value):
        """A boolean tensor of shape ``value.shape[:-event_dim]``: True where value is inside."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.__class__.__name__[1:] + "()"


class _Dependent(Constraint):
    """A placeholder for a set that depends on other parameters, so validation skips it."""

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        super().__init__()
        self._event_dim = event_dim
        self._is_discrete = is_discrete

    def _static(self, attr: str):
        # Either fact may be unknown until an instance exists; then asking for it is an error.
        known = getattr(self, "_" + attr)
        if known is NotImplemented:
            raise NotImplementedError(f".{attr} cannot be determined statically")
        return known

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        """Whether the set is countable, when it was given; else NotImplementedError."""
        return self._static("is_discrete")

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        """The event dimensions, when they were given; else NotImplementedError."""
        return self._static("event_dim")

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        """A dependent constraint with these static facts filled in."""
        def pick(given, own):
            return own if given is NotImplemented else given
        return _Dependent(event_dim=pick(event_dim, self._event_dim),
                          is_discrete=pick(is_discrete, self._is_discrete))

    def check(self, x):
        """Cannot be checked: the set is only known on an instance."""
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint) -> bool:
    """Whether ``constraint`` is a dependent placeholder (validation skips those)."""
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property whose value (on an instance) is a constraint and which, on the class, is a
    dependent placeholder: ``support`` of a Uniform depends on its ``low`` and ``high``."""

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        property.__init__(self, fn)
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    def __call__(self, fn):  # type: ignore[override]
        """Decorate ``fn``, keeping the static facts given."""
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """``base_constraint`` with ``reinterpreted_batch_ndims`` more dimensions in each event."""

    def __init__(self, base_constraint: Constraint, reinterpreted_batch_ndims: int):
        if not isinstance(base_constraint, Constraint):
            raise AssertionError("base_constraint must be a Constraint")
        if not isinstance(reinterpreted_batch_ndims, int) or reinterpreted_batch_ndims < 0:
            raise AssertionError("reinterpreted_batch_ndims must be a non-negative int")
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__()

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        """Discrete when the base set is."""
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        """The base's event dimensions plus the reinterpreted ones."""
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        """The base check, all-reduced over the reinterpreted dimensions."""
        result = self.base_constraint.check(value)
        if result.dim() < self.reinterpreted_batch_ndims:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.dim()}")
        kept = result.shape[:result.dim() - self.reinterpreted_batch_ndims]
        return result.reshape(tuple(kept) + (-1,)).all(-1)

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__[1:]}({self.base_constraint!r}, "
                f"{self.reinterpreted_batch_ndims})")


class MixtureSameFamilyConstraint(Constraint):
    """A mixture's support: the component's, checked after putting back the component
    dimension the mixture sums out."""

    def __init__(self, base_constraint):
        if not isinstance(base_constraint, Constraint):
            raise AssertionError("base_constraint must be a Constraint, got "
                                 f"{type(base_constraint).__name__}")
        self.base_constraint = base_constraint
        super().__init__()

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        """As the component's support."""
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        """As the component's support."""
        return self.base_constraint.event_dim

    def check(self, value):
        """The component check on ``value`` with a unit component dimension, reduced over it."""
        result = self.base_constraint.check(value.unsqueeze(-1 - self.event_dim))
        if value.dim() < self.event_dim:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.dim()}")
        kept = value.dim() - self.event_dim
        return result.reshape(tuple(result.shape[:kept]) + (-1,)).all(-1)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.base_constraint!r})"


class _Boolean(Constraint):
    """{0, 1}."""

    is_discrete = True

    def check(self, value):
        """0 or 1."""
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    """Rows of zeros with a single one."""

    is_discrete = True
    event_dim = 1

    def check(self, value):
        """Every entry 0 or 1 and the row sums to 1."""
        return ((value == 0) | (value == 1)).all(-1) & value.sum(-1).eq(1)


class _Bounded(Constraint):
    """Shared by the sets given by bounds: the repr lists them by name, in order, as torch's
    does (validation errors print it)."""

    _bound_names: tuple = ()

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)}" for name in self._bound_names)
        return f"{type(self).__name__[1:]}({shown})"


class _Above(_Bounded):
    _bound_names = ("lower_bound",)

    def __init__(self, lower_bound):
        super().__init__()
        self.lower_bound = lower_bound


class _Below(_Bounded):
    _bound_names = ("upper_bound",)

    def __init__(self, upper_bound):
        super().__init__()
        self.upper_bound = upper_bound


class _Between(_Bounded):
    _bound_names = ("lower_bound", "upper_bound")

    def __init__(self, lower_bound, upper_bound):
        super().__init__()
        self.lower_bound, self.upper_bound = lower_bound, upper_bound


def _whole(value):
    return value % 1 == 0


class _IntegerInterval(_Between):
    """Integers in [lower_bound, upper_bound]."""

    is_discrete = True

    def check(self, value):
        """Whole and inside both bounds."""
        inside = (value >= self.lower_bound) & (value <= self.upper_bound)
        return inside & _whole(value)


class _IntegerLessThan(_Below):
    """Integers at most upper_bound."""

    is_discrete = True

    def check(self, value):
        """Whole and at most the bound."""
        return _whole(value) & (value <= self.upper_bound)


class _IntegerGreaterThan(_Above):
    """Integers at least lower_bound."""

    is_discrete = True

    def check(self, value):
        """Whole and at least the bound."""
        return _whole(value) & (value >= self.lower_bound)


class _Real(Constraint):
    """The extended reals minus NaN."""

    def check(self, value):
        """False only for NaN (the one value unequal to itself)."""
        return value == value


class _GreaterThan(_Above):
    """(lower_bound, inf]."""

    def check(self, value):
        """Strictly above the bound."""
        return value > self.lower_bound


class _GreaterThanEq(_GreaterThan):
    """[lower_bound, inf]."""

    def check(self, value):
        """At or above the bound."""
        return value >= self.lower_bound


class _LessThan(_Below):
    """[-inf, upper_bound)."""

    def check(self, value):
        """Strictly below the bound."""
        return value < self.upper_bound


class _Interval(_Between):
    """[lower_bound, upper_bound]."""

    def check(self, value):
        """Inside both bounds, ends included."""
        return (value >= self.lower_bound) & (value <= self.upper_bound)


class _HalfOpenInterval(_Interval):
    """[lower_bound, upper_bound)."""

    def check(self, value):
        """At or above the lower bound, strictly below the upper."""
        return (value >= self.lower_bound) & (value < self.upper_bound)


class _Simplex(Constraint):
    """Non-negative rows summing to one (within 1e-6)."""

    event_dim = 1

    def check(self, value):
        """Every entry non-negative and the row sum within 1e-6 of one."""
        return torch.all(value >= 0, dim=-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _Multinomial(Constraint):
    """Non-negative integer rows whose sum is at most upper_bound."""

    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, x):
        """Non-negative entries, row sum at most the bound."""
        return (x >= 0).all(dim=-1) & (x.sum(dim=-1) <= self.upper_bound)


class _LowerTriangular(Constraint):
    """Square matrices with zeros above the diagonal."""

    event_dim = 2

    def check(self, value):
        """Equal to its own lower triangle."""
        return (value.tril() == value).reshape(tuple(value.shape[:-2]) + (-1,)).min(-1)[0]


class _LowerCholesky(Constraint):
    """Lower-triangular matrices with a positive diagonal."""

    event_dim = 2

    def check(self, value):
        """Lower triangular and every diagonal entry positive."""
        lower = (value.tril() == value).reshape(tuple(value.shape[:-2]) + (-1,)).min(-1)[0]
        positive_diagonal = (value.diagonal(dim1=-2, dim2=-1) > 0).min(-1)[0]
        return lower & positive_diagonal


class _CorrCholesky(Constraint):
    """Lower Cholesky factors of correlation matrices: rows of unit length."""

    event_dim = 2

    def check(self, value):
        """A lower Cholesky factor whose rows have norm one (to a few float eps)."""
        tol = torch.finfo(value.dtype).eps * value.size(-1) * 10
        row_norm = torch.linalg.norm(value.detach(), dim=-1)
        unit_rows = (row_norm - 1.0).abs().le(tol).all(dim=-1)
        return _LowerCholesky().check(value) & unit_rows


class _Square(Constraint):
    """Square matrices."""

    event_dim = 2

    def check(self, value):
        """True per matrix when the last two sizes agree."""
        return torch.full(tuple(value.shape[:-2]), value.shape[-2] == value.shape[-1],
                          dtype=torch.bool)


class _Symmetric(_Square):
    """Symmetric matrices (to an absolute 1e-6)."""

    def check(self, value):
        """Square and close to its transpose."""
        square = super().check(value)
        if not square.all():
            return square
        return torch.isclose(value, value.mT, atol=1e-6).all(-2).all(-1)


class _PositiveSemidefinite(_Symmetric):
    """Symmetric matrices with no negative eigenvalue."""

    def check(self, value):
        """Symmetric and every eigenvalue at least zero."""
        symmetric = super().check(value)
        if not symmetric.all():
            return symmetric
        return torch.linalg.eigvalsh(value).ge(0).all(-1)


class _PositiveDefinite(_Symmetric):
    """Symmetric matrices with a Cholesky factor."""

    def check(self, value):
        """Symmetric and the Cholesky factorisation succeeds."""
        symmetric = super().check(value)
        if not symmetric.all():
            return symmetric
        return torch.linalg.cholesky_ex(value).info.eq(0)


class _Cat(Constraint):
    """Several constraints on consecutive slices of one dimension (``torch.cat`` of sets)."""

    def __init__(self, cseq, dim: int = 0, lengths=None):
        self.cseq = list(cseq)
        self.lengths = [1] * len(self.cseq) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.cseq):
            raise AssertionError("lengths must match cseq")
        self.dim = dim
        super().__init__()

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        """Discrete when any part is."""
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        """The largest event dimension among the parts."""
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        """Each slice checked by its constraint, the answers joined along ``dim``."""
        checks, start = [], 0
        for constraint, length in zip(self.cseq, self.lengths):
            checks.append(constraint.check(value.narrow(self.dim, start, length)))
            start += length
        return torch.cat(checks, self.dim)


class _Stack(Constraint):
    """Several constraints on the entries of one dimension (``torch.stack`` of sets)."""

    def __init__(self, cseq, dim: int = 0):
        self.cseq = list(cseq)
        self.dim = dim
        super().__init__()

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        """Discrete when any part is."""
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        """The parts' largest event dimension, plus one if the stacked one is inside it."""
        dim = max(c.event_dim for c in self.cseq)
        return dim + 1 if self.dim + dim < 0 else dim

    def check(self, value):
        """Each entry along ``dim`` checked by its constraint, the answers stacked."""
        pieces = [value.select(self.dim, i) for i in range(value.size(self.dim))]
        return torch.stack([c.check(v) for v, c in zip(pieces, self.cseq)], self.dim)


# The public names: classes that take bounds or parts are exposed as factories, fixed sets as
# ready instances.  Grouped by what they constrain.

# Placeholders and wrappers.
dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
cat, stack = _Cat, _Stack

# Discrete sets.
boolean = _Boolean()
one_hot = _OneHot()
positive_integer, nonnegative_integer = _IntegerGreaterThan(1), _IntegerGreaterThan(0)
integer_interval = _IntegerInterval
multinomial = _Multinomial

# Sets of reals, fixed and parametrised.
real = _Real()
real_vector = independent(real, 1)
nonnegative, positive = _GreaterThanEq(0.0), _GreaterThan(0.0)
unit_interval = _Interval(0.0, 1.0)
greater_than, greater_than_eq, less_than = _GreaterThan, _GreaterThanEq, _LessThan
interval, half_open_interval = _Interval, _HalfOpenInterval
simplex = _Simplex()

# Sets of square matrices.
square, symmetric = _Square(), _Symmetric()
lower_triangular, lower_cholesky, corr_cholesky = (
    _LowerTriangular(), _LowerCholesky(), _CorrCholesky())
positive_semidefinite, positive_definite = _PositiveSemidefinite(), _PositiveDefinite()
