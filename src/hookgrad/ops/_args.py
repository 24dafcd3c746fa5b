"""Argument handling shared by the view, shape and index ops: size lists given as ``f(2, 3)`` or
``f((2, 3))``, a ``-1`` size inferred from the element count, and the ``out=`` argument."""
from __future__ import annotations

import math
import operator

import numpy as np

from ..autograd import grad_mode
from ..tensor import Tensor


def _shape_args(shape, op: str = "view") -> tuple:
    """``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])`` and ``f(torch.Size(...))`` as a tuple of ints."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    result = []
    for position, size in enumerate(shape):
        try:
            result.append(operator.index(size))
        except TypeError:
            raise TypeError(f"{op}(): argument 'size' (position 1) must be tuple of ints, but "
                            f"found element of type {type(size).__name__} at pos {position}"
                            ) from None
    return tuple(result)


def infer_shape(shape, numel: int) -> tuple:
    """``shape`` with its one ``-1`` filled in; torch's messages when that is impossible."""
    shape = tuple(int(s) for s in shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    for size in shape:
        if size < -1:
            raise RuntimeError(f"invalid shape dimension {size}")
    if -1 in shape:
        known = math.prod(s for s in shape if s != -1)  # Python ints: exact, and fast
        if known == 0:
            if numel == 0:
                raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} "
                                   "because the unspecified dimension size -1 can be any value "
                                   "and is ambiguous")
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        if numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    if math.prod(shape) != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def _to_out(result: Tensor, out) -> Tensor:
    """``out=``: torch refuses it under autograd; otherwise out takes the result's values."""
    if out is None:
        return result
    if grad_mode.is_grad_enabled() and (result.requires_grad or out.requires_grad):
        raise RuntimeError("functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    if out._data.shape == result._data.shape:
        np.copyto(out._data, result._data, casting="unsafe")
    else:
        out._data = result._data.astype(out._data.dtype)
    out._version_counter[0] += 1
    return out
