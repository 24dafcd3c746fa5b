"""tensordot, inner and vdot: contractions composed of permute, reshape and mm (as torch
composes tensordot and inner), and vdot, the dot product under its own node."""
from __future__ import annotations

import math

from ..tensor import Tensor
from .linalg import Dot, _tensor_args, mm


class Vdot(Dot):
    """d(a . b) = grad b, grad a (real tensors: no conjugation)"""

    node_name = "VdotBackward0"


def vdot(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """Dot product of two 1-D tensors (torch conjugates the first; hookgrad is real-only)."""
    _tensor_args("vdot", input, other)
    return Vdot.apply(input, other)


def _dims_lists(dims, ndim_a: int, ndim_b: int):
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(ndim_a, ndim_b):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        return list(range(ndim_a - dims, ndim_a)), list(range(dims))
    first, second = dims
    first = [first] if isinstance(first, int) else list(first)
    second = [second] if isinstance(second, int) else list(second)
    return first, second


def tensordot(a: Tensor, b: Tensor, dims=2, out=None) -> Tensor:
    """Sums the products of ``a`` and ``b`` over the given dims: the last ``dims`` of ``a``
    with the first ``dims`` of ``b``, or the two lists ``(dims_a, dims_b)`` paired in order."""
    dims_a, dims_b = _dims_lists(dims, a.ndim, b.ndim)
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    dims_a = [d % a.ndim if a.ndim else d for d in dims_a]
    dims_b = [d % b.ndim if b.ndim else d for d in dims_b]
    for da, db in zip(dims_a, dims_b):
        if a.shape[da] != b.shape[db]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.shape[da]} in dim {da} and second has size {b.shape[db]} in "
                               f"dim {db}")
    free_a = [d for d in range(a.ndim) if d not in dims_a]
    free_b = [d for d in range(b.ndim) if d not in dims_b]
    size = math.prod(a.shape[d] for d in dims_a)
    left = a.permute(free_a + dims_a).reshape(-1, size)
    right = b.permute(dims_b + free_b).reshape(size, -1)
    shape = [a.shape[d] for d in free_a] + [b.shape[d] for d in free_b]
    return mm(left, right).reshape(shape)


def inner(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """Sums over the last dims of both (a plain product when either is 0-dim)."""
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(input.shape)} and {list(other.shape)}")
    return tensordot(input, other, ([-1], [-1]))


METHODS = {"inner": inner, "vdot": vdot}
