"""``biject_to`` and ``transform_to``: from a constraint to a transform that reaches it.

``transform_to(c)`` maps the unconstrained reals onto the set ``c`` (for optimising a
constrained parameter through an unconstrained one); ``biject_to(c)`` does the same with a
bijection (for changes of variables, where the log-Jacobian must be exact). Both dispatch on the
constraint's type; ``register`` adds a factory for a new type.
"""
from __future__ import annotations

from numbers import Number

from . import constraints
from .transform_join import CatTransform, StackTransform
from .transform_base import ComposeTransform, IndependentTransform, identity_transform
from .transform_pointwise import AffineTransform, ExpTransform, SigmoidTransform
from .transform_vector import (CorrCholeskyTransform, LowerCholeskyTransform,
                               PositiveDefiniteTransform, SoftmaxTransform,
                               StickBreakingTransform)

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """A table from constraint types to factories ``factory(constraint) -> Transform``."""

    def __init__(self):
        self._registry = {}
        super().__init__()

    def register(self, constraint, factory=None):
        """Register ``factory`` for a constraint type (or an instance's type); usable as a
        decorator when ``factory`` is omitted."""
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint, constraints.Constraint):
            raise TypeError("Expected constraint to be either a Constraint subclass or "
                            f"instance, but got {constraint}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint):
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(
                f"Cannot transform {type(constraint).__name__} constraints") from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _both(*kinds):
    """Register a factory in both registries for every constraint kind given."""
    def decorator(factory):
        for kind in kinds:
            biject_to.register(kind, factory)
            transform_to.register(kind, factory)
        return factory
    return decorator


@_both(constraints.real)
def _to_real(constraint):
    return identity_transform


@biject_to.register(constraints.independent)
def _biject_to_independent(constraint):
    return IndependentTransform(biject_to(constraint.base_constraint),
                                constraint.reinterpreted_batch_ndims)


@transform_to.register(constraints.independent)
def _transform_to_independent(constraint):
    return IndependentTransform(transform_to(constraint.base_constraint),
                                constraint.reinterpreted_batch_ndims)


@_both(constraints.positive, constraints.nonnegative)
def _to_positive(constraint):
    return ExpTransform()


@_both(constraints.greater_than, constraints.greater_than_eq)
def _to_greater_than(constraint):
    return ComposeTransform([ExpTransform(), AffineTransform(constraint.lower_bound, 1)])


@_both(constraints.less_than)
def _to_less_than(constraint):
    return ComposeTransform([ExpTransform(), AffineTransform(constraint.upper_bound, -1)])


@_both(constraints.interval, constraints.half_open_interval)
def _to_interval(constraint):
    lower_is_0 = isinstance(constraint.lower_bound, Number) and constraint.lower_bound == 0
    upper_is_1 = isinstance(constraint.upper_bound, Number) and constraint.upper_bound == 1
    if lower_is_0 and upper_is_1:
        return SigmoidTransform()
    scale = constraint.upper_bound - constraint.lower_bound
    return ComposeTransform([SigmoidTransform(), AffineTransform(constraint.lower_bound, scale)])


@biject_to.register(constraints.simplex)
def _biject_to_simplex(constraint):
    return StickBreakingTransform()


@transform_to.register(constraints.simplex)
def _transform_to_simplex(constraint):
    return SoftmaxTransform()


@transform_to.register(constraints.lower_cholesky)
def _transform_to_lower_cholesky(constraint):
    return LowerCholeskyTransform()


@transform_to.register(constraints.positive_definite)
@transform_to.register(constraints.positive_semidefinite)
def _transform_to_positive_definite(constraint):
    return PositiveDefiniteTransform()


@biject_to.register(constraints.cat)
def _biject_to_cat(constraint):
    return CatTransform([biject_to(c) for c in constraint.cseq], constraint.dim,
                        constraint.lengths)


@transform_to.register(constraints.cat)
def _transform_to_cat(constraint):
    return CatTransform([transform_to(c) for c in constraint.cseq], constraint.dim,
                        constraint.lengths)


@biject_to.register(constraints.stack)
def _biject_to_stack(constraint):
    return StackTransform([biject_to(c) for c in constraint.cseq], constraint.dim)


@transform_to.register(constraints.stack)
def _transform_to_stack(constraint):
    return StackTransform([transform_to(c) for c in constraint.cseq], constraint.dim)


@_both(constraints.corr_cholesky)
def _to_corr_cholesky(constraint):
    return CorrCholeskyTransform()
