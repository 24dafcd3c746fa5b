"""``tensor[key]`` and ``tensor[key] = value`` in torch's terms: integers and slices are views
(select / slice, applied dim by dim as torch does), lists, arrays and masks are ``index``
(a copy); assignment is ``copy_`` into the view, or ``index_put_``."""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from .elementwise import _Op
from .views import Alias, Index, Select, Slice, Unsqueeze

_BASIC = (int, np.integer, slice, type(None), type(Ellipsis))


def _normalize_key(key) -> tuple:
    if not isinstance(key, tuple):
        key = (key,)
    normalized = []
    for k in key:
        if isinstance(k, Tensor):
            if k._data.dtype.kind in "iu" and k._data.ndim == 0:
                k = int(k._data)
            else:
                k = k._data
        elif isinstance(k, (list, tuple)):
            k = np.asarray([int(i) if isinstance(i, Tensor) else i for i in k])
        elif isinstance(k, np.ndarray) or isinstance(k, (bool, np.bool_)):
            k = np.asarray(k)
        elif not isinstance(k, _BASIC):
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                             "Variables are valid indices (got " + type(k).__name__ + ")")
        if isinstance(k, np.ndarray) and k.dtype.kind not in "biu":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        normalized.append(k)
    return tuple(normalized)


def _expand_ellipsis(key: tuple, ndim: int) -> tuple:
    consumed = sum(1 if not (k is None or k is Ellipsis) else 0 for k in key)
    consumed += sum(k.ndim - 1 for k in key if isinstance(k, np.ndarray) and k.dtype == np.bool_)
    if key.count(Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if Ellipsis in key:
        at = key.index(Ellipsis)
        key = key[:at] + (slice(None),) * (ndim - consumed) + key[at + 1:]
    if consumed > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    return key


def _is_full(k: slice, size: int) -> bool:
    return slice(k.start, k.stop, k.step).indices(size) == (0, size, 1)


def getitem(tensor: Tensor, key) -> Tensor:
    raw = key
    key = _normalize_key(key)
    advanced = any(isinstance(k, np.ndarray) for k in key)
    lone_slice = isinstance(raw, slice)
    if key == (Ellipsis,):
        return Alias.apply(tensor)
    key = _expand_ellipsis(key, tensor._data.ndim)
    result = tensor
    dim = 0
    remaining = []
    for k in key:
        if k is None:
            result = Unsqueeze.apply(result, dim)
            remaining.append(slice(None))
            dim += 1
        elif isinstance(k, (int, np.integer)):
            if result._data.ndim == 0:
                raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python "
                                 "or `tensor.item<T>()` in C++ to convert a 0-dim tensor to a "
                                 "number")
            result = Select.apply(result, dim, int(k))
        elif isinstance(k, slice):
            if lone_slice or not _is_full(k, result._data.shape[dim]):
                start, stop, step = k.indices(result._data.shape[dim])
                if (k.step or 1) <= 0:
                    raise ValueError("step must be greater than zero")
                result = Slice.apply(result, dim, start, max(stop, start), step)
            remaining.append(slice(None))
            dim += 1
        else:
            remaining.append(k)
            dim += k.ndim if k.dtype == np.bool_ else 1
    if advanced:
        return Index.apply(result, tuple(remaining))
    if result is tensor:
        return Alias.apply(tensor)
    return result


class Copy(_Op):
    """self.copy_(src): self's old value gets no gradient; src gets grad (summed, cast)"""

    node_name = "CopyBackwards"
    _inplace = True

    @staticmethod
    def forward(ctx, self, src):
        try:
            np.copyto(self, np.broadcast_to(src, self.shape), casting="unsafe")
        except ValueError:
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the "
                               f"broadcast shape {list(np.broadcast_shapes(self.shape, np.shape(src)))}"
                               ) from None
        return self

    @staticmethod
    def backward(ctx, grad):
        return grad * 0, grad


class Fill(_Op):
    node_name = "FillBackward0"
    _inplace = True

    @staticmethod
    def forward(ctx, self, value):
        self[...] = value
        return self

    @staticmethod
    def backward(ctx, grad):
        return grad * 0, None


class Zero(Fill):
    node_name = "ZeroBackward0"


class IndexPut(_Op):
    """self[indices] = values in place; with ``accumulate`` repeated indices add up"""

    node_name = "IndexPutBackward0"
    _inplace = True

    @staticmethod
    def forward(ctx, self, values, key, accumulate=False):
        ctx.key, ctx.accumulate = key, accumulate
        try:
            if accumulate:
                np.add.at(self, key, values)
            else:
                self[key] = values
        except ValueError as error:
            raise RuntimeError(f"shape mismatch: value tensor of shape {list(np.shape(values))} "
                               f"cannot be broadcast to indexing result ({error})") from None
        return self

    @staticmethod
    def backward(ctx, grad):
        grad_values = Index.apply(grad, ctx.key)
        if ctx.accumulate:
            return grad, grad_values, None, None
        from .views import Embed

        kept = grad - Embed.apply(grad_values, tuple(grad.shape), ctx.key)
        return kept, grad_values, None, None


def copy_(self: Tensor, src, non_blocking: bool = False) -> Tensor:
    if not isinstance(src, Tensor):
        src = Tensor._make(np.asarray(src, dtype=self._data.dtype))
    return Copy.apply(self, src)


def fill_(self: Tensor, value) -> Tensor:
    if isinstance(value, Tensor):
        if value.requires_grad:
            return copy_(self, value.expand_as(self))
        value = value.item()
    return Fill.apply(self, value)


def zero_(self: Tensor) -> Tensor:
    return Zero.apply(self, 0)


def setitem(tensor: Tensor, key, value) -> None:
    norm = _normalize_key(key)
    advanced = any(isinstance(k, np.ndarray) for k in norm)
    if not advanced:
        target = getitem(tensor, key)
        if isinstance(value, Tensor):
            copy_(target, value)
        else:
            fill_(target, value) if np.ndim(value) == 0 else copy_(target, value)
        return
    basic = tuple(k if not isinstance(k, np.ndarray) else slice(None) for k in norm)
    target = tensor
    if any(not (isinstance(k, slice) and k == slice(None)) for k in basic):
        target = None
    values = value if isinstance(value, Tensor) else Tensor._make(
        np.asarray(value, dtype=tensor._data.dtype))
    if values._data.dtype != tensor._data.dtype:
        values = values.to(tensor.dtype)
    if target is None:  # mixed basic and advanced: numpy applies the whole key at once
        IndexPut.apply(tensor, values, _expand_ellipsis(norm, tensor._data.ndim))
        return
    IndexPut.apply(tensor, values, _expand_ellipsis(norm, tensor._data.ndim))


def index_put_(self: Tensor, indices, values: Tensor, accumulate: bool = False) -> Tensor:
    key = _normalize_key(tuple(indices))
    return IndexPut.apply(self, values, key, accumulate)


def index_put(self: Tensor, indices, values: Tensor, accumulate: bool = False) -> Tensor:
    return index_put_(self.clone(), indices, values, accumulate)
