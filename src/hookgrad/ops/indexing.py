"""``tensor[key]`` and ``tensor[key] = value`` in torch's terms.

Integers, slices, ``None`` and ``...`` are views (select / slice / unsqueeze), applied one dim at
a time exactly as torch does, so the grad_fn chain is torch's. Whatever is left (integer
sequences and tensors, boolean masks) is one ``index`` call: a copy whose gradient accumulates
over repeated indices. Assignment is ``copy_`` / ``fill_`` into the view, or ``index_put_`` on
it when the key has advanced parts (an in-place op on a view, so the base gets CopySlices).
"""
from __future__ import annotations


import operator

import numpy as np

from .._warnings import warn
from ..autograd.graph import legacy_type_name
from ..autograd.saved import array_for_forward
from ..tensor import Tensor
from . import _layout
from .alias import Alias
from .views import Expand, Select, Slice, Unsqueeze, View
from ._base import Op, _check_writable, check_number_fits, warn_expanded_write
from .clone import copy_, fill_

_INTEGER = (int, np.integer)
_SCALAR = (bool, int, float, complex, np.number, np.bool_)


# ---------------------------------------------------------------------------------------------
# parsing a key
# ---------------------------------------------------------------------------------------------
def _treat_as_tuple(key) -> bool:
    """torch's (and old NumPy's) rule: a short list holding a sequence, slice, tensor, None or
    ``...`` is a tuple of indices, not one index (``a[[0, slice(None)]]`` is ``a[0, :]``)."""
    if isinstance(key, tuple):
        return True
    if not isinstance(key, list) or len(key) >= 32:
        return False
    return any(isinstance(k, (list, tuple, slice, Tensor, np.ndarray)) or k is None
               or k is Ellipsis for k in key)


def _index_array(values) -> np.ndarray:
    """A list (or nested list) used as one index: bools make a mask, anything else is long."""
    array = np.asarray([v._data if isinstance(v, Tensor) else v for v in values]
                       if isinstance(values, list) else values)
    if array.dtype == np.bool_:
        return array
    if array.size == 0 or array.dtype.kind in "iuf":
        return array.astype(np.int64)
    raise IndexError("tensors used as indices must be long, int, byte or bool tensors")


class _TensorInt(int):
    """The number of a 0-d integer index tensor: an int everywhere, but on a 0-d tensor torch
    reports it as one index too many rather than as a Python int it cannot take."""


def _convert(item):
    """One index item as int, bool, slice, None, Ellipsis or an index ndarray."""
    if item is None or item is Ellipsis or isinstance(item, slice):
        return item
    if isinstance(item, (bool, np.bool_)):
        return bool(item)
    if isinstance(item, _INTEGER):
        return int(item)
    if isinstance(item, (Tensor, np.ndarray)):
        array = array_for_forward(item) if isinstance(item, Tensor) else item
        kind = array.dtype.kind
        if kind == "b":
            return bool(array) if array.ndim == 0 else array
        if array.dtype == np.uint8:
            warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype "
                 "torch.bool instead.", UserWarning)
            # a mask, kept as uint8 (torch saves it so); 0-d, it is a lone bool
            return bool(array) if array.ndim == 0 else array
        if kind in "iu" and array.ndim == 0:  # any integer 0-d tensor reads as its number
            return _TensorInt(array)
        if array.dtype != np.int64 and array.dtype != np.int32:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return array
    if isinstance(item, (list, tuple, range)):  # torch reads any sequence as an index tensor
        return _index_array(list(item))
    if isinstance(item, str):  # torch tries to make a tensor of the sequence
        raise TypeError("new(): invalid data type 'str'")
    raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                     f"Variables are valid indices (got {type(item).__name__})")


def _parse(key) -> tuple:
    if isinstance(key, list) and _treat_as_tuple(key):
        warn("Using a non-tuple sequence for multidimensional indexing is deprecated and "
             "will be changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In "
             "pytorch 2.9 this will be interpreted as tensor index, x[torch.tensor(seq)]"
             ", which will result either in an error or a different result",
             UserWarning)
    items = tuple(key) if _treat_as_tuple(key) else (key,)
    return tuple(_convert(item) for item in items)


def _is_mask(array: np.ndarray) -> bool:
    return array.dtype == np.bool_ or array.dtype == np.uint8


def _consumed(item) -> int:
    """How many dims of the tensor an index item uses up."""
    if item is None or item is Ellipsis or isinstance(item, bool):
        return 0
    if isinstance(item, np.ndarray) and _is_mask(item):
        return item.ndim
    return 1


def _apply_basic(tensor: Tensor, items: tuple, lone_slice: bool = False):
    """Apply ints, slices, None and ``...`` as views, dim by dim (torch's applySlicing).
    Returns the view and the advanced items as ``(dim, array)`` pairs on that view."""
    ndim = tensor._data.ndim
    specified = sum(_consumed(item) for item in items)
    if ndim == 0 and any(isinstance(item, int) and not isinstance(item, (bool, _TensorInt))
                         for item in items):
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                         "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    if specified > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    result = tensor
    advanced = []
    dim = 0
    for item in items:
        if dim > result._data.ndim or (dim == result._data.ndim and _consumed(item)):
            raise IndexError(f"too many indices for tensor of dimension {ndim}")
        if item is Ellipsis:  # each one stands for all unspecified dims (torch allows several)
            dim += ndim - specified
        elif item is None:
            result = Unsqueeze.apply(result, dim)
            dim += 1
        elif isinstance(item, bool):  # a new dim of size 1, indexed by [0] (True) or [] (False)
            result = Unsqueeze.apply(result, dim)
            advanced.append((dim, np.zeros(int(item), np.int64)))
            dim += 1
        elif isinstance(item, int):
            size = result._data.shape[dim]
            if not -size <= item < size:
                raise IndexError(f"index {item} is out of bounds for dimension {dim} with size "
                                 f"{size}")
            result = Select.apply(result, dim, item)
        elif isinstance(item, slice):
            size = result._data.shape[dim]
            start, stop, step = item.indices(size)  # raises for a zero step, as Python does
            if step <= 0:
                raise ValueError("step must be greater than zero")
            stop = max(start, stop)
            if lone_slice or (start, stop, step) != (0, size, 1):
                result = Slice.apply(result, dim, start, stop, step, _slice_shown(item))
            dim += 1
        else:
            advanced.append((dim, item))
            dim += _consumed(item)
    return result, advanced



_INT64_MAX = 2 ** 63 - 1


def _slice_shown(item: slice) -> tuple:
    """An indexing slice's bounds as torch's SliceBackward0 shows them: as written, an open
    start 0 and an open end the largest int64, a negative bound read back unsigned."""
    start = 0 if item.start is None else operator.index(item.start)
    end = _INT64_MAX if item.stop is None else operator.index(item.stop)
    return start % 2 ** 64, end % 2 ** 64

def _advanced_key(shape: tuple, advanced: list):
    """The NumPy key for the advanced items (masks as their nonzero indices, which NumPy and
    torch treat alike) and the index arrays as given (what torch saves); checked with torch's
    messages first, so NumPy never reports an error in its own words."""
    key: list = []
    originals = []
    positions = []
    folded = 0  # torch's index list gives a mask one entry, however many dims it covers
    for dim, array in advanced:
        key.extend([slice(None)] * (dim - len(key)))  # dims between advanced items
        originals.append(array)
        positions.append(dim - folded)
        if _is_mask(array):
            folded += array.ndim - 1
            for j in range(array.ndim):
                if array.shape[j] != shape[dim + j]:
                    raise IndexError(f"The shape of the mask {list(array.shape)} at index {j} "
                                     f"does not match the shape of the indexed tensor "
                                     f"{list(shape)} at index {dim + j}")
            key.extend(np.nonzero(array))
        else:
            size = shape[dim]
            bad = (array < -size) | (array >= size)
            if bad.any():  # torch numbers the dimension among the index tensors
                position = sum(isinstance(k, np.ndarray) for k in key)
                raise IndexError(f"index {int(array[bad].flat[0])} is out of bounds for "
                                 f"dimension {position} with size {size}")
            key.append(array)
    arrays = [k for k in key if isinstance(k, np.ndarray)]
    try:
        np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with "
                         "shapes " + ", ".join(str(list(a.shape)) for a in arrays)) from None
    return tuple(key), (tuple(dim for dim, _ in advanced), tuple(originals), tuple(positions))


def _key_from(dims: tuple, originals) -> tuple:
    """The NumPy key again from the saved index arrays (what ``_advanced_key`` built): backward
    reads the indices only through ``ctx.saved_tensors``, so a saver may have replaced them."""
    key: list = []
    for dim, array in zip(dims, originals):
        key.extend([slice(None)] * (dim - len(key)))
        key.extend(np.nonzero(array) if _is_mask(array) else (array,))
    return tuple(key)


def _saved_indices(ctx) -> tuple:
    """The NumPy key and the ``(dims, originals, positions)`` of an indexing node, from its
    saved index tensors."""
    originals = tuple(saved._data for saved in ctx.saved_tensors)
    return _key_from(ctx.dims, originals), (ctx.dims, originals, ctx.positions)


def _index_list(node) -> tuple:
    """torch's index list of an indexing node: the saved index tensors at their positions
    (a dim's, a mask's first dim's), None at the dims before them left whole."""
    layout = [None] * (node.positions[-1] + 1 if node.positions else 0)
    for saved_position, position in enumerate(node.positions):
        layout[position] = saved_position
    return tuple(layout)


def _keep_indices(ctx, indices) -> None:
    dims, originals, ctx.positions = indices
    ctx.dims = dims
    ctx.save_for_backward(*originals)  # an index tensor's array is saved as that tensor


# ---------------------------------------------------------------------------------------------
# index (advanced getitem) and index_put
# ---------------------------------------------------------------------------------------------
class Index(Op):
    """self[indices] (a copy); gradient: zeros with grad added at the indices"""

    node_name = "IndexBackward0"
    saved_lists = {"indices": _index_list}
    saved_values = {"self_sym_sizes": "self_shape"}

    @staticmethod
    def forward(ctx, self, key, indices):
        ctx.self_shape = self.shape
        _keep_indices(ctx, indices)
        # NumPy lays the result out after the input (a transposed result for x[:, [2, 0]]);
        # torch's follows the input's order only for the dimensions not indexed
        return _layout.advanced_index(self[key], self, key)

    @staticmethod
    def backward(ctx, grad):
        key, indices = _saved_indices(ctx)
        return IndexPutImpl.apply(None, grad, ctx.self_shape, key, indices), None, None


class IndexPutImpl(Op):
    """zeros of ``shape`` with ``values`` added at ``key`` (index's backward)"""

    node_name = "IndexPutImplBackward0"
    saved_lists = {"indices": _index_list}
    saved_values = {"accumulate": lambda node: True}
    _wrapped_scalars = (0,)  # torch's node has an edge for the zeros it writes into: (None, 0)

    @staticmethod
    def forward(ctx, zeros, values, shape, key, indices):
        _keep_indices(ctx, indices)
        out = np.zeros(shape, values.dtype)
        np.add.at(out, key, values)
        return out

    @staticmethod
    def backward(ctx, grad):
        key, indices = _saved_indices(ctx)
        return None, Index.apply(grad, key, indices), None, None, None


def getitem(tensor: Tensor, key) -> Tensor:
    items = _parse(key)
    if len(items) == 0 or (len(items) == 1 and items[0] is Ellipsis):
        return Alias.apply(tensor)
    result, advanced = _apply_basic(tensor, items, lone_slice=isinstance(key, slice))
    if advanced:
        index_key, indices = _advanced_key(result._data.shape, advanced)
        return Index.apply(result, index_key, indices)
    if result is tensor:
        return Alias.apply(tensor)
    return result


class IndexPut(Op):
    """self[indices] = values in place; with ``accumulate`` repeated indices add up.
    Gradient: self's grad with the written positions zeroed (kept whole if accumulating);
    values get grad[indices]."""
    _operand_overlap = "any"  # torch refuses a source sharing any of self's memory

    node_name = "IndexPutBackward0"
    saved_lists = {"indices": _index_list}
    saved_values = {"accumulate": "accumulate"}
    _inplace = True
    _overlap_ok = True  # torch only warns

    @staticmethod
    def forward(ctx, self, values, key, indices, accumulate=False):
        warn_expanded_write(self, "index_put_", "tensor[indices] = tensor")
        ctx.accumulate = accumulate
        _keep_indices(ctx, indices)
        _index_put(self, values, key, accumulate)
        return self

    @staticmethod
    def backward(ctx, grad):
        key, indices = _saved_indices(ctx)
        grad_values = Index.apply(grad, key, indices)
        if ctx.accumulate:
            return grad, grad_values, None, None, None
        zero = Tensor._make(np.zeros((), grad._data.dtype))
        grad_self = IndexPutCopy.apply(grad, zero, key, indices, False)
        return grad_self, grad_values, None, None, None


class IndexPutCopy(IndexPut):
    """out-of-place index_put: the same formula on a copy of self"""

    node_name = "IndexPutBackward0"
    _inplace = False

    @staticmethod
    def forward(ctx, self, values, key, indices, accumulate=False):
        ctx.accumulate = accumulate
        _keep_indices(ctx, indices)
        out = _layout.preserve(np.array(self, copy=True), self)  # torch's clone of self
        _index_put(out, values, key, accumulate)
        return out


def _index_put(target: np.ndarray, values: np.ndarray, key: tuple, accumulate: bool) -> None:
    try:
        if accumulate:
            np.add.at(target, key, values)
        else:
            target[key] = values
    except ValueError:
        shape = np.empty(target.shape, np.bool_)[key].shape
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(np.shape(values))} "
                           f"cannot be broadcast to indexing result of shape {list(shape)}"
                           ) from None


def _put_args(self: Tensor, indices, values: Tensor):
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"index_put_(): argument 'indices' must be tuple of Tensors, not "
                        f"{type(indices).__name__}")
    items = []
    for position, index in enumerate(indices):
        if not isinstance(index, Tensor):
            raise TypeError(f"expected Tensor as element {position} in argument 0, but got "
                            f"{type(index).__name__}")
        item = _convert(index)
        if isinstance(item, (bool, int)):
            item = np.asarray(index._data)
        items.append(item)
    if sum(_consumed(item) for item in items) > self._data.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self._data.ndim} (got "
                         f"{len(items)})")
    dims = np.cumsum([0] + [_consumed(item) for item in items])
    try:
        key, indices = _advanced_key(self._data.shape, list(zip(dims[:-1], items)))
    except IndexError:
        _check_dtype(self, values)  # torch compares dtypes before it reads the indices
        raise
    _check_values_shape(self._data.shape, key, values._data.shape)  # torch: shape, then dtype
    _check_dtype(self, values)
    return key, indices


def _check_values_shape(shape: tuple, key: tuple, values_shape: tuple) -> None:
    # the indexing result's shape, read off a stand-in that holds one element
    picked = np.lib.stride_tricks.as_strided(np.zeros(1, np.bool_), shape, (0,) * len(shape))
    try:
        target = picked[key].shape
    except IndexError:
        return  # out-of-range indices are reported by the write itself
    try:
        np.broadcast_to(np.empty(values_shape, np.bool_), target)
    except ValueError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values_shape)} cannot "
                           f"be broadcast to indexing result of shape {list(target)}") from None


def _check_dtype(self: Tensor, values: Tensor) -> None:
    if values._data.dtype != self._data.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{_type_word(self)} for the destination and {_type_word(values)} "
                           "for the source.")


def _type_word(tensor: Tensor) -> str:
    return legacy_type_name(tensor._data)[len("torch."):-len("Tensor")]


class IndexPutMasked(IndexPut):
    """index_put_ of a 0-d value at a lone mask: torch runs it as masked_fill_, which reads the
    value before writing, so the value may be a view of self"""

    node_name = "IndexPutBackward0"
    _operand_overlap = None


def _put_class(indices: tuple, values: Tensor, accumulate: bool) -> type:
    _, originals, positions = indices
    if not accumulate and values._data.ndim == 0 and len(originals) == 1 and \
            _is_mask(originals[0]) and positions[0] == 0:
        return IndexPutMasked
    return IndexPut


def index_put_(self: Tensor, indices, values: Tensor, accumulate: bool = False) -> Tensor:
    """In place ``index_put``."""
    key, saved_indices = _put_args(self, indices, values)
    return _put_class(saved_indices, values, accumulate).apply(self, values, key, saved_indices,
                                                               accumulate)


def index_put(self: Tensor, indices, values: Tensor, accumulate: bool = False) -> Tensor:
    """A copy with ``values`` written (or added, with ``accumulate``) at the index tensors
    ``indices``."""
    key, saved_indices = _put_args(self, indices, values)
    return IndexPutCopy.apply(self, values, key, saved_indices, accumulate)


# ---------------------------------------------------------------------------------------------
# setitem
# ---------------------------------------------------------------------------------------------
def _copy_to(target: Tensor, value: Tensor) -> None:
    """torch's copy_to: copy_ when shapes agree, fill_ for a 0-dim value, else copy_ of the
    value with leading 1s dropped, expanded to the target."""
    if value._data.shape == target._data.shape:
        copy_(target, value)
    elif value._data.ndim == 0:
        # torch copies here (the number is expanded), so unlike a direct fill_ an
        # expanded target that reaches one element twice is refused
        _check_writable(target._data)
        fill_(target, value)
    else:
        shape = value._data.shape
        lead = next((i for i, s in enumerate(shape) if s != 1), len(shape))
        value = View.apply(value, shape[lead:])
        if value._data.shape != target._data.shape:
            value = Expand.apply(value, target._data.shape)
        copy_(target, value)


def _as_value(tensor: Tensor, value) -> Tensor:
    if isinstance(value, Tensor):
        return value
    if isinstance(value, _SCALAR):
        check_number_fits(value, tensor._data.dtype, halves=False)
        return Tensor._make(np.asarray(value).astype(tensor._data.dtype))
    kind = type(value)
    name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
    raise TypeError(f"can't assign a {name} to a {legacy_type_name(tensor._data)}")


def setitem(tensor: Tensor, key, value) -> None:
    value = _as_value(tensor, value)
    items = _parse(key)
    lone_bool = len(items) == 1 and isinstance(items[0], bool)
    if lone_bool and not items[0]:
        return
    target, advanced = _apply_basic(tensor, items)
    if not advanced:
        _copy_to(target, value)
        return
    if lone_bool:  # a lone ``True`` is a plain unsqueeze, no index
        _copy_to(target, value)
        return
    index_key, indices = _advanced_key(target._data.shape, advanced)
    _check_dtype(target, value)
    _put_class(indices, value, False).apply(target, value, index_key, indices, False)
