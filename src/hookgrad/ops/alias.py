"""Aliases: a new tensor object on the same data, version counter and (through
``AliasBackward0``) the same history; ``Tensor.as_subclass`` is one, seen as a subclass."""
from __future__ import annotations

from ..tensor import Tensor
from ._base import Op


class Alias(Op):
    """grad (same data, new tensor object)"""

    _view_of = 0
    node_name = "AliasBackward0"

    @staticmethod
    def forward(ctx, self):
        return self.view()

    @staticmethod
    def backward(ctx, grad):
        return grad


_TENSOR_SLOTS = tuple(name for name in Tensor.__slots__ if name != "__weakref__")


def as_subclass(input: Tensor, cls: type) -> Tensor:
    """``input`` seen as an instance of the Tensor subclass ``cls`` (torch's ``as_subclass``).

    As in torch, the result is an alias of ``input``: the same data and version counter, and,
    when ``input`` is part of a graph, a view with ``AliasBackward0`` so gradients reach
    ``input``. This is how a wrapper type (``compat.paddle``'s Tensor) adopts a result
    without reaching into Tensor's private state.
    """
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from "
                        "Tensor is not possible. Make sure your class inherits from Tensor.")
    alias = Alias.apply(input)
    if type(alias) is cls:
        return alias
    result = object.__new__(cls)
    for name in _TENSOR_SLOTS:  # the alias is new and known to nothing else: move its state
        object.__setattr__(result, name, object.__getattribute__(alias, name))
    return result



def method_function(name: str):
    """``torch.<name>(input, ...)``: torch's top-level spelling of the Tensor method ``name``."""
    def function(input: Tensor, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"``input.{name}(...)`` called as a function."
    return function


# Tensor methods torch also exposes as ``torch.<name>``; the in-place ones mostly for old code
TOP_LEVEL_METHODS = (
    "abs_", "acos_", "arccos_", "arcsin_", "arctan_", "asin_", "atan_", "ceil_", "clamp_",
    "clamp_max_", "clamp_min_", "clip_", "cos_", "cosh_", "deg2rad_", "detach", "detach_",
    "erf_", "exp2_", "exp_", "expm1_", "fill_", "fix", "fix_", "floor_", "frac_", "index_put_",
    "log10_", "log1p_", "log2_", "log_", "logit_", "nan_to_num_", "neg_", "negative_", "rad2deg_",
    "reciprocal_", "relu_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_",
    "square_", "tan_", "tanh_", "trunc_", "zero_", "acosh_", "arccosh_", "arcsinh_", "arctanh_",
    "asinh_", "atanh_", "xlogy_", "erfc_", "gcd_", "lcm_", "ldexp_")
