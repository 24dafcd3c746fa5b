"""Flatten parameters into one vector and back (for optimisers that work on a flat vector)."""
from __future__ import annotations

from typing import Iterable

from ...ops.join import cat
from ...tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """One 1-D tensor of all parameters, in order (differentiable: a cat of views)."""
    return cat([param.view(-1) for param in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Point each parameter's data at its slice of ``vec`` (shares memory, as torch does)."""
    if not isinstance(vec, Tensor):
        name = type(vec).__qualname__
        module = type(vec).__module__
        raise TypeError("expected torch.Tensor, but got: "
                        + (name if module == "builtins" else f"{module}.{name}"))
    pointer = 0
    for param in parameters:
        count = param.numel()
        param.data = vec[pointer:pointer + count].view_as(param).data
        pointer += count
