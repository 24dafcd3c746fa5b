"""What the reductions share: dim normalisation, the reduced dims restored for backward, the
accumulation dtype, torch's dtype names and its checks on floating and empty inputs."""
from __future__ import annotations

import numpy as np

from .. import _dtype
from ..tensor import Tensor
from ._base import work_dtype
from ._util import normalize_dim

_UNSET = object()  # ``x.sum()`` and ``x.sum(dim=None)`` are different overloads in torch
_TORCH_NAME = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
               "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
               "bfloat16": "BFloat16"}


def torch_type_name(array: np.ndarray) -> str:
    """torch's ScalarType name of an array's dtype (``Float``, ``Long`` ...)."""
    return _TORCH_NAME[array.dtype.name]


def reduce_dims(dim, ndim: int) -> tuple:
    """``dim`` (None, int or sequence) as sorted non-negative axes; None and an empty sequence
    mean every dim, as in torch. A 0-d tensor accepts dim 0/-1 and reduces over nothing."""
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
    if not dims:
        return tuple(range(ndim))
    wrapped = []
    for d in dims:
        if not isinstance(d, (int, np.integer)) or isinstance(d, bool):
            raise TypeError(f"dim must be an int or a tuple of ints, not {type(d).__name__}")
        d = normalize_dim(int(d), ndim)
        if d in wrapped:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        wrapped.append(d)
    return tuple(sorted(wrapped)) if ndim else ()


def shown_dims(dim):
    """An int-list ``dim`` as torch's node shows it (``grad_fn._saved_dim``): None when not
    given, else a tuple of the dims as given (``()`` too), each negative one read back as an
    unsigned 64-bit number as torch's saved ints read (-1 as 2**64 - 1). Formulas never read
    it: they keep the normalized dims under their own names."""
    if dim is None:
        return None
    dims = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
    return tuple(int(d) % 2 ** 64 for d in dims)


def shown_dim(dim):
    """A single int argument (a dim, a diagonal offset) as torch's node shows it: as given,
    a negative one read back unsigned (-1 as 2**64 - 1)."""
    return None if dim is None else int(dim) % 2 ** 64


def show_as_given(ctx, shown: dict) -> None:
    """Puts each ``name: value`` of ``shown`` on the node as ``_saved_<name>``: the arguments
    as the caller gave them, which torch's node shows (formulas read their own names)."""
    for name, value in shown.items():
        setattr(ctx, "_saved_" + name, value)


def _kept_shape(shape: tuple, dims: tuple) -> tuple:
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def _restore(grad: Tensor, shape: tuple, dims: tuple, keepdim: bool) -> Tensor:
    """A reduced tensor reshaped so it broadcasts against the input again."""
    if not keepdim and dims:
        return grad.reshape(_kept_shape(shape, dims))
    return grad


def _accumulator(dtype: np.dtype) -> np.dtype:
    """torch accumulates half precision (float16, bfloat16) in float32 on the CPU."""
    return work_dtype(dtype)


def _numpy_dtype(dtype) -> np.dtype | None:
    return None if dtype is None else _dtype.to_numpy_dtype(dtype)


def _const(array: np.ndarray) -> Tensor:
    return Tensor._make(np.asarray(array))


def as_dtype(tensor: Tensor, dtype: np.dtype) -> Tensor:
    """``tensor.to(dtype)`` for a NumPy dtype, recorded only when it changes something."""
    if tensor._data.dtype == dtype:
        return tensor
    return tensor.to(_dtype.from_numpy_dtype(dtype))


def _check_float(array: np.ndarray, op: str) -> None:
    if array.dtype.kind not in "fcV":
        raise RuntimeError(f"{op}(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {torch_type_name(array)}")


def _check_nonempty(array: np.ndarray, dims: tuple, op: str, all_dims: bool) -> None:
    """torch refuses max/amax/argmax over an empty slice: the reduction has no identity."""
    if all_dims and array.size == 0:
        raise RuntimeError(f"{op}(): Expected reduction dim to be specified for input.numel() "
                           f"== 0. Specify the reduction dim with the 'dim' argument.")
    for d in dims:
        if array.shape[d] == 0:
            raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size.")


def shown_window(nd: int, **given) -> dict:
    """A window op's arguments as torch's node shows them: an int stands for ``nd`` copies, a
    sequence stays as given, and no stride is ``()``."""
    return {name: () if value is None else (int(value),) * nd
            if isinstance(value, (int, np.integer)) else tuple(value)
            for name, value in given.items()}
