"""Shape ops that copy: cat, stack, repeat, flip, roll, pad, gather / scatter_add, index_select.

Index tensors are passed to ``apply`` as ndarrays (they get no gradient), checked first with
torch's messages so that NumPy never answers a bad index in its own words.
"""
from __future__ import annotations

import operator

import numpy as np

from .. import _dtype
from ..tensor import Tensor
from ._util import normalize_dim
from .elementwise import _Op
from .views import Slice, _shape_args

_SKIPPED = (0,)  # torch's legacy rule: 1-D empty tensors are left out of cat


def _promoted(tensors) -> np.dtype:
    for position, tensor in enumerate(tensors):
        if not isinstance(tensor, Tensor):
            raise TypeError(f"expected Tensor as element {position} in argument 0, but got "
                            f"{type(tensor).__name__}")
    dtype = tensors[0]._data.dtype
    for tensor in tensors[1:]:
        if tensor._data.dtype != dtype:
            dtype = _dtype.promote_types(_dtype.from_numpy_dtype(dtype), tensor.dtype).numpy
    return dtype


# ---------------------------------------------------------------------------------------------
# cat / stack
# ---------------------------------------------------------------------------------------------
class Cat(_Op):
    """gradient: the slice of grad that each input filled"""

    node_name = "CatBackward0"

    @staticmethod
    def forward(ctx, dim, dtype, *tensors):
        for position, t in enumerate(tensors):
            if t.ndim == 0:
                raise RuntimeError(f"zero-dimensional tensor (at position {position}) cannot be "
                                   "concatenated")
        kept = [(i, t) for i, t in enumerate(tensors) if t.shape != _SKIPPED]
        ctx.shapes = [t.shape for t in tensors]
        if not kept:
            ctx.dim = 0
            return np.zeros(_SKIPPED, dtype)
        first = kept[0][1]
        dim = normalize_dim(dim, first.ndim)
        ctx.dim = dim
        for position, t in kept[1:]:
            if t.ndim != first.ndim:
                raise RuntimeError(f"Tensors must have same number of dimensions: got "
                                   f"{first.ndim} and {t.ndim}")
            for d in range(first.ndim):
                if d != dim and t.shape[d] != first.shape[d]:
                    raise RuntimeError(f"Sizes of tensors must match except in dimension {dim}. "
                                       f"Expected size {first.shape[d]} but got size "
                                       f"{t.shape[d]} for tensor number {position} in the list.")
        return np.concatenate([t for _, t in kept], axis=dim, dtype=dtype)

    @staticmethod
    def backward(ctx, grad):
        grads = []
        offset = 0
        for shape in ctx.shapes:
            if shape == _SKIPPED:
                grads.append(Tensor._make(np.zeros(_SKIPPED, grad._data.dtype)))
                continue
            size = shape[ctx.dim]
            grads.append(Slice.apply(grad, ctx.dim, offset, offset + size, 1))
            offset += size
        return (None, None, *grads)


def cat(tensors, dim: int = 0, *, out=None) -> Tensor:
    tensors = tuple(tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    result = Cat.apply(operator.index(dim), _promoted(tensors), *tensors)
    return _to_out(result, out)


def concatenate(tensors, dim: int = 0, *, axis=None, out=None) -> Tensor:
    return cat(tensors, dim if axis is None else axis, out=out)


concat = cat


def _to_out(result: Tensor, out) -> Tensor:
    """``out=``: torch refuses it under autograd; otherwise out takes the result's values."""
    if out is None:
        return result
    from ..autograd import grad_mode

    if grad_mode.is_grad_enabled() and (result.requires_grad or out.requires_grad):
        raise RuntimeError("functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    if out._data.shape == result._data.shape:
        np.copyto(out._data, result._data, casting="unsafe")
    else:
        out._data = result._data.astype(out._data.dtype)
    out._version_counter[0] += 1
    return out


class Stack(_Op):
    """gradient: grad unbound along the new dim"""

    node_name = "StackBackward0"

    @staticmethod
    def forward(ctx, dim, dtype, *tensors):
        shape = tensors[0].shape
        for i, t in enumerate(tensors):
            if t.shape != shape:
                raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                                   f"{list(shape)} at entry 0 and {list(t.shape)} at entry {i}")
        ctx.dim = normalize_dim(dim, len(shape) + 1)
        return np.stack(tensors, axis=ctx.dim, dtype=dtype)

    @staticmethod
    def backward(ctx, grad):
        from .views import unbind

        return (None, None, *unbind(grad, ctx.dim))


def stack(tensors, dim: int = 0, *, out=None) -> Tensor:
    tensors = tuple(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    result = Stack.apply(operator.index(dim), _promoted(tensors), *tensors)
    return _to_out(result, out)


def _atleast(tensor: Tensor, ndim: int) -> Tensor:
    if tensor._data.ndim >= ndim:
        return tensor
    if tensor._data.ndim == 0:
        return tensor.reshape((1,) * ndim)
    return tensor.unsqueeze(0)


def hstack(tensors, *, out=None) -> Tensor:
    tensors = [_atleast(t, 1) for t in tensors]
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1, out=out)


def vstack(tensors, *, out=None) -> Tensor:
    return cat([_atleast(t, 2) for t in tensors], 0, out=out)


# ---------------------------------------------------------------------------------------------
# repeat / flip / roll
# ---------------------------------------------------------------------------------------------
class Repeat(_Op):
    """gradient: grad split into (repeat, size) pairs per dim, summed over the repeats"""

    node_name = "RepeatBackward0"

    @staticmethod
    def forward(ctx, self, repeats):
        if len(repeats) < self.ndim:
            raise RuntimeError("Number of dimensions of repeat dims can not be smaller than "
                               "number of dimensions of tensor")
        shape = (1,) * (len(repeats) - self.ndim) + self.shape
        target = [r * s for r, s in zip(repeats, shape)]
        if any(r < 0 for r in repeats):
            raise RuntimeError(f"Trying to create tensor with negative dimension "
                               f"{min(target)}: {target}")
        ctx.self_shape, ctx.shape, ctx.repeats = self.shape, shape, repeats
        return np.tile(self.reshape(shape), repeats)

    @staticmethod
    def backward(ctx, grad):
        if 0 in ctx.repeats:  # nothing of self reached the output (torch: constant zeros)
            return Tensor._make(np.zeros(ctx.self_shape, grad._data.dtype)), None
        pairs = tuple(x for r, s in zip(ctx.repeats, ctx.shape) for x in (r, s))
        summed = grad.reshape(pairs).sum(tuple(range(0, len(pairs), 2)))
        return summed.reshape(ctx.self_shape), None


def repeat(input: Tensor, *repeats) -> Tensor:
    return Repeat.apply(input, _shape_args(repeats, "repeat"))


class Flip(_Op):
    """gradient: grad flipped back (a copy; np.flip alone would be a view)"""

    node_name = "FlipBackward0"

    @staticmethod
    def forward(ctx, self, dims):
        ctx.dims = dims
        return np.flip(self, dims).copy() if dims else self.copy()

    @staticmethod
    def backward(ctx, grad):
        return Flip.apply(grad, ctx.dims), None


def flip(input: Tensor, *dims) -> Tensor:
    dims = _shape_args(dims, "flip")
    normalized = tuple(normalize_dim(d, input._data.ndim) for d in dims)
    for d in normalized:
        if normalized.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return Flip.apply(input, normalized if input._data.ndim else ())


class Roll(_Op):
    """gradient: grad rolled back"""

    node_name = "RollBackward0"

    @staticmethod
    def forward(ctx, self, shifts, dims):
        ctx.shifts, ctx.dims = shifts, dims
        if not dims:  # roll the flattened tensor
            return np.roll(self.reshape(-1), shifts[0]).reshape(self.shape)
        return np.roll(self, shifts, dims)

    @staticmethod
    def backward(ctx, grad):
        return Roll.apply(grad, tuple(-s for s in ctx.shifts), ctx.dims), None, None


def roll(input: Tensor, shifts, dims=None) -> Tensor:
    shifts = (shifts,) if isinstance(shifts, (int, np.integer)) else tuple(shifts)
    dims = () if dims is None else (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if not dims and len(shifts) != 1:
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
    if dims and len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    dims = tuple(normalize_dim(d, input._data.ndim) for d in dims)
    return Roll.apply(input, tuple(int(s) for s in shifts), dims)


# ---------------------------------------------------------------------------------------------
# pad (constant mode; ``nn.functional.pad`` is this function)
# ---------------------------------------------------------------------------------------------
class ConstantPadNd(_Op):
    """gradient: grad with the negated padding (crops what was added, pads what was cut)"""

    node_name = "ConstantPadNdBackward0"

    @staticmethod
    def forward(ctx, self, pad, value):
        ctx.pad = pad
        ndim = self.ndim
        crop = [slice(None)] * ndim
        widths = [(0, 0)] * ndim
        for i in range(len(pad) // 2):
            dim = ndim - 1 - i
            before, after = pad[2 * i], pad[2 * i + 1]
            start, stop = 0, self.shape[dim]
            if before < 0:  # torch narrows for negative pads first, with narrow's message
                start = -before
                _check_length(stop - start)
            if after < 0:
                stop += after
                _check_length(stop - start)
            crop[dim] = slice(start, stop)
            widths[dim] = (max(before, 0), max(after, 0))
        cropped = self[tuple(crop)]
        return np.pad(cropped, widths, mode="constant", constant_values=value)

    @staticmethod
    def backward(ctx, grad):
        return ConstantPadNd.apply(grad, tuple(-p for p in ctx.pad), 0), None, None


def _check_length(length: int) -> None:
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")


def pad(input: Tensor, pad, mode: str = "constant", value=None) -> Tensor:
    """torch.nn.functional.pad; ``pad`` lists (before, after) pairs from the last dim back."""
    pad = _shape_args((pad,), "pad")
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    ndim = input._data.ndim
    if len(pad) // 2 > ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{ndim}")
    if mode == "constant":
        fill = np.asarray(0 if value is None else value).astype(input._data.dtype)
        return ConstantPadNd.apply(input, pad, fill)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    count = len(pad) // 2
    if count not in (1, 2, 3) or ndim not in (count + 1, count + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if mode == "circular":
        return _pad_circular(input, pad)
    return _pad_by_index(input, pad, mode)


# reflect / replicate: every output position reads one input position along each padded dim
class _IndexPad(_Op):
    """gradient: grad added back onto the positions each output element was read from"""

    saved_names = ("self",)  # torch keeps the input (for its shape)

    @staticmethod
    def forward(ctx, self, reads):
        ctx.reads, ctx.self_shape = reads, self.shape
        ctx.save_for_backward(self)
        for dim, index in reads:
            self = np.take(self, index, axis=dim)
        return self

    @staticmethod
    def backward(ctx, grad):
        return _IndexPadBackward.apply(grad, ctx.reads, ctx.self_shape), None


class _IndexPadBackward(_Op):
    @staticmethod
    def forward(ctx, grad, reads, shape):
        ctx.reads = reads
        for dim, index in reversed(reads):
            out = np.zeros(grad.shape[:dim] + (shape[dim],) + grad.shape[dim + 1:], grad.dtype)
            np.add.at(out, (slice(None),) * dim + (index,), grad)
            grad = out
        return grad

    @staticmethod
    def backward(ctx, grad):
        return _IndexPad.apply(grad, ctx.reads), None, None


_PAD_OPS: dict = {}


def _pad_op(kind: str, count: int):
    """One class per torch node name (ReflectionPad2DBackward0, ...), made on first use."""
    key = (kind, count)
    if key not in _PAD_OPS:
        _PAD_OPS[key] = type(f"{kind}Pad{count}D", (_IndexPad,),
                             {"node_name": f"{kind}Pad{count}DBackward0"})
    return _PAD_OPS[key]


def _pad_by_index(input: Tensor, pad: tuple, mode: str) -> Tensor:
    shape = input._data.shape
    count = len(pad) // 2
    batch = len(shape) - count
    if any(n == 0 for n in shape[1 if batch == 2 else 0:]):
        raise RuntimeError(f"Expected {count + 1}D or {count + 2}D (batch mode) tensor with "
                           f"possibly 0 batch size and other non-zero dimensions for input, but "
                           f"got: {list(shape)}")
    reads = []
    for i in range(count):
        dim = len(shape) - 1 - i
        before, after = pad[2 * i], pad[2 * i + 1]
        size = shape[dim]
        if mode == "reflect" and (before >= size or after >= size):
            raise RuntimeError(f"Argument #{4 + 2 * i}: Padding size should be less than the "
                               f"corresponding input dimension, but got: padding ({before}, "
                               f"{after}) at dimension {dim} of input {list(shape)}")
        if count == 1 and size + before + after < 1:
            raise RuntimeError(f"input (W: {size}) is too small. Calculated output W: "
                               f"{size + before + after}")
        if size + before + after < 0:
            bad = list(shape[:dim]) + [size + before + after] + list(shape[dim + 1:])
            raise RuntimeError(f"Trying to create tensor with negative dimension "
                               f"{size + before + after}: {bad}")
        positions = np.arange(-before, size + after)
        if mode == "reflect":
            positions = np.abs(positions)
            positions = np.where(positions >= size, 2 * (size - 1) - positions, positions)
        else:
            positions = np.clip(positions, 0, size - 1)
        reads.append((dim, positions))
    kind = "Reflection" if mode == "reflect" else "Replication"
    return _pad_op(kind, count).apply(input, tuple(reads))


def _pad_circular(input: Tensor, pad: tuple) -> Tensor:
    """torch's recipe: copy the kept part into a new tensor, then copy its ends around the
    edges dim by dim (in-place copies into views, so the history is CopySlices, as torch's)."""
    from .indexing import copy_
    from .views import narrow

    shape = input._data.shape
    count = len(pad) // 2
    out_shape = list(shape)
    for i in range(count):
        dim = len(shape) - 1 - i
        before, after = pad[2 * i], pad[2 * i + 1]
        if before > shape[dim] or after > shape[dim]:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        out_shape[dim] = shape[dim] + before + after
        if out_shape[dim] < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
    out = Tensor._make(np.zeros(out_shape, input._data.dtype))
    target, source = out, input
    for i in range(count):
        dim = len(shape) - 1 - i
        before, after = pad[2 * i], pad[2 * i + 1]
        target = narrow(target, dim, max(before, 0), out_shape[dim] - max(before, 0)
                        - max(after, 0))
        source = narrow(source, dim, max(-before, 0), shape[dim] - max(-before, 0)
                        - max(-after, 0))
    copy_(target, source)
    for i in range(count):
        dim = len(shape) - 1 - i
        before, after = pad[2 * i], pad[2 * i + 1]
        if before > 0:
            copy_(narrow(out, dim, 0, before),
                  narrow(out, dim, out_shape[dim] - before - max(after, 0), before))
        if after > 0:
            copy_(narrow(out, dim, out_shape[dim] - after, after),
                  narrow(out, dim, max(before, 0), after))
    return out


# ---------------------------------------------------------------------------------------------
# gather / scatter_add / scatter / index_select / index_add
# ---------------------------------------------------------------------------------------------
def _index_data(index, op: str, allow_int32: bool = True) -> np.ndarray:
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}(): argument 'index' must be Tensor, not {type(index).__name__}")
    array = index._data
    if array.dtype != np.int64 and not (allow_int32 and array.dtype == np.int32):
        raise RuntimeError(f"{op}(): Expected dtype int64 for index")
    return array


def _along(index: np.ndarray, dim: int) -> tuple:
    """The NumPy key that addresses ``index``'s own positions, with ``index`` along ``dim``."""
    return tuple(index if d == dim else
                 np.arange(n).reshape((1,) * d + (n,) + (1,) * (index.ndim - d - 1))
                 for d, n in enumerate(index.shape))


def _check_index(self_shape: tuple, index: np.ndarray, dim: int, other=None) -> None:
    if index.ndim != max(len(self_shape), 1) and index.size:
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    if index.size == 0:
        return
    shape = self_shape if self_shape else (1,)
    index_shape = index.shape if index.ndim else (1,)
    for d, n in enumerate(index_shape):
        if other is None and d != dim and n > shape[d]:
            raise RuntimeError(f"Size does not match at dimension {d} expected index "
                               f"{list(index.shape)} to be no larger than self {list(self_shape)}"
                               f" apart from dimension {dim}")
        if other is not None and ((d != dim and n > shape[d]) or n > other[d]):
            raise RuntimeError(f"Expected index {list(index.shape)} to be no larger than self "
                               f"{list(self_shape)} apart from dimension {dim} and to be no "
                               f"larger size than src {list(other)}")
    size = shape[dim]
    bad = (index < 0) | (index >= size)
    if bad.any():
        raise RuntimeError(f"index {int(index[bad].flat[0])} is out of bounds for dimension "
                           f"{dim} with size {size}")


class Gather(_Op):
    """out[i][j][k] = self[i][index[i][j][k]][k] (dim 1); gradient: scatter_add into zeros"""

    node_name = "GatherBackward0"
    saved_names = ("index", "self")

    @staticmethod
    def forward(ctx, self, dim, index):
        _check_index(self.shape, index, dim)
        ctx.dim = dim
        ctx.save_for_backward(index, self)
        if index.size == 0:
            return np.zeros(index.shape, self.dtype)
        if self.ndim == 0:
            return self.reshape(index.shape).copy()
        return self[_along(index.astype(np.int64), dim)]

    @staticmethod
    def backward(ctx, grad):
        index, self = ctx.saved_tensors
        zeros = Tensor._make(np.zeros(self._data.shape, grad._data.dtype))
        return ScatterAdd.apply(zeros, ctx.dim, index._data, grad), None, None


def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False,
           out=None) -> Tensor:
    dim = normalize_dim(dim, input._data.ndim)
    return _to_out(Gather.apply(input, dim, _index_data(index, "gather")), out)


def take_along_dim(input: Tensor, indices: Tensor, dim=None) -> Tensor:
    """gather after broadcasting input and indices in every dim but ``dim`` (as torch)."""
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    from .views import expand

    dim = normalize_dim(dim, input._data.ndim)
    input_shape, index_shape = list(input._data.shape), list(indices._data.shape)
    input_shape[dim] = index_shape[dim] = 1
    shape = list(np.broadcast_shapes(tuple(input_shape), tuple(index_shape)))
    shape[dim] = input._data.shape[dim]
    input = expand(input, shape)
    shape[dim] = indices._data.shape[dim]
    return gather(input, dim, expand(indices, shape))


class ScatterAdd(_Op):
    """self with src added at index along dim; gradient: grad for self, grad gathered for src"""

    node_name = "ScatterAddBackward0"
    saved_names = ("index",)

    @staticmethod
    def forward(ctx, self, dim, index, src):
        _check_scatter(self, dim, index, src)
        ctx.dim = dim
        ctx.save_for_backward(index)
        out = np.array(self, copy=True)
        _scatter_into(out, dim, index, src, np.add.at)
        return out

    @staticmethod
    def backward(ctx, grad):
        (index,) = ctx.saved_tensors
        return grad, None, None, Gather.apply(grad, ctx.dim, index._data)


class ScatterAddInplace(ScatterAdd):
    node_name = "ScatterAddBackward0"
    _inplace = True

    @staticmethod
    def forward(ctx, self, dim, index, src):
        _check_scatter(self, dim, index, src)
        _check_writable(self)
        ctx.dim = dim
        ctx.save_for_backward(index)
        _scatter_into(self, dim, index, src, np.add.at)
        return self


def _check_writable(array: np.ndarray) -> None:
    from .indexing import _check_writable as check

    check(array)


def _check_scatter(self: np.ndarray, dim: int, index: np.ndarray, src) -> None:
    """``src`` is an array of src values, or a 0-d array holding the value to write."""
    if src.ndim == 0 and index.ndim != 0:
        _check_index(self.shape, index, dim)
        return
    if src.dtype != self.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    _check_index(self.shape, index, dim, other=src.shape or (1,))


def _scatter_into(out: np.ndarray, dim: int, index: np.ndarray, src, write) -> None:
    if index.size == 0:
        return
    if out.ndim == 0:
        write(out.reshape(1), index.reshape(-1), np.reshape(src, -1)[:1])
        return
    key = _along(index.astype(np.int64), dim)
    if src.ndim:  # only the index's extent of src is used
        src = src[tuple(slice(0, n) for n in index.shape)]
    write(out, key, src)


def _assign(out, key, src) -> None:
    out[key] = src


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    dim = normalize_dim(dim, input._data.ndim)
    return ScatterAdd.apply(input, dim, _index_data(index, "scatter_add", False), src)


def scatter_add_(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    dim = normalize_dim(dim, input._data.ndim)
    return ScatterAddInplace.apply(input, dim, _index_data(index, "scatter_add_", False), src)


class Scatter(_Op):
    """self with src written at index; gradient: grad with those positions zeroed for self,
    grad gathered at index for src"""

    node_name = "ScatterBackward0"
    saved_names = ("index",)

    @staticmethod
    def forward(ctx, self, dim, index, src):
        _check_scatter(self, dim, index, src)
        ctx.dim = dim
        ctx.save_for_backward(index)
        out = np.array(self, copy=True)
        _scatter_into(out, dim, index, src, _assign)
        return out

    @staticmethod
    def backward(ctx, grad):
        (index,) = ctx.saved_tensors
        zero = np.zeros((), grad._data.dtype)
        grad_self = ScatterValue.apply(grad, ctx.dim, index._data, zero)
        return grad_self, None, None, Gather.apply(grad, ctx.dim, index._data)


class ScatterValue(_Op):
    """self with a number written at index; gradient: grad with those positions zeroed"""

    node_name = "ScatterBackward1"
    saved_names = ("index",)

    @staticmethod
    def forward(ctx, self, dim, index, value):
        _check_scatter(self, dim, index, value)
        ctx.dim = dim
        ctx.save_for_backward(index)
        out = np.array(self, copy=True)
        _scatter_into(out, dim, index, value, _assign)
        return out

    @staticmethod
    def backward(ctx, grad):
        (index,) = ctx.saved_tensors
        zero = np.zeros((), grad._data.dtype)
        return ScatterValue.apply(grad, ctx.dim, index._data, zero), None, None, None


class ScatterInplace(Scatter):
    node_name = "ScatterBackward0"
    _inplace = True

    @staticmethod
    def forward(ctx, self, dim, index, src):
        _check_scatter(self, dim, index, src)
        _check_writable(self)
        ctx.dim = dim
        ctx.save_for_backward(index)
        _scatter_into(self, dim, index, src, _assign)
        return self


class ScatterValueInplace(ScatterValue):
    node_name = "ScatterBackward1"
    _inplace = True

    @staticmethod
    def forward(ctx, self, dim, index, value):
        _check_scatter(self, dim, index, value)
        _check_writable(self)
        ctx.dim = dim
        ctx.save_for_backward(index)
        _scatter_into(self, dim, index, value, _assign)
        return self


def scatter(input: Tensor, dim: int, index: Tensor, src=None, *, value=None) -> Tensor:
    dim = normalize_dim(dim, input._data.ndim)
    index = _index_data(index, "scatter", False)
    if isinstance(src, Tensor):
        return Scatter.apply(input, dim, index, src)
    fill = np.asarray(value if src is None else src).astype(input._data.dtype)
    return ScatterValue.apply(input, dim, index, fill)


def scatter_(input: Tensor, dim: int, index: Tensor, src=None, *, value=None) -> Tensor:
    dim = normalize_dim(dim, input._data.ndim)
    index = _index_data(index, "scatter_", False)
    if isinstance(src, Tensor):
        return ScatterInplace.apply(input, dim, index, src)
    fill = np.asarray(value if src is None else src).astype(input._data.dtype)
    return ScatterValueInplace.apply(input, dim, index, fill)


class IndexSelect(_Op):
    """self's slices at index along dim; gradient: index_add of grad into zeros"""

    node_name = "IndexSelectBackward0"
    saved_names = ("index",)

    @staticmethod
    def forward(ctx, self, dim, index):
        size = self.shape[dim] if self.ndim else 1
        bad = (index < 0) | (index >= size)
        if bad.any():
            raise RuntimeError(f"INDICES element is out of DATA bounds, id="
                               f"{int(index[bad].flat[0])} axis_dim={size}")
        ctx.dim, ctx.self_shape = dim, self.shape
        ctx.save_for_backward(index)
        if self.ndim == 0:
            return self.copy()
        return np.take(self, index.reshape(-1), axis=dim)

    @staticmethod
    def backward(ctx, grad):
        (index,) = ctx.saved_tensors
        zeros = Tensor._make(np.zeros(ctx.self_shape, grad._data.dtype))
        return IndexAdd.apply(zeros, ctx.dim, index._data, grad, 1), None, None


def index_select(input: Tensor, dim: int, index: Tensor, *, out=None) -> Tensor:
    dim = normalize_dim(dim, input._data.ndim)
    if not isinstance(index, Tensor):
        raise TypeError(f"index_select(): argument 'index' must be Tensor, not "
                        f"{type(index).__name__}")
    if index._data.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index._data.dtype not in (np.int64, np.int32):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    return _to_out(IndexSelect.apply(input, dim, index._data), out)


class IndexAdd(_Op):
    """self + alpha * source added at index along dim; gradient: grad for self,
    alpha * grad.index_select(dim, index) for source"""

    node_name = "IndexAddBackward0"
    saved_names = ("index", "source")

    @staticmethod
    def forward(ctx, self, dim, index, source, alpha):
        ctx.dim, ctx.alpha = dim, alpha
        ctx.save_for_backward(index, source)
        out = np.array(self, copy=True)
        _index_add_into(out, dim, index, source, alpha)
        return out

    @staticmethod
    def backward(ctx, grad):
        index, source = ctx.saved_tensors
        if grad._data.ndim == 0:
            grad_source = grad.reshape(source._data.shape)
        else:
            grad_source = IndexSelect.apply(grad, ctx.dim, index._data)
        if ctx.alpha != 1:
            grad_source = grad_source * ctx.alpha
        return grad, None, None, grad_source, None


class IndexAddInplace(IndexAdd):
    node_name = "IndexAddBackward0"
    _inplace = True

    @staticmethod
    def forward(ctx, self, dim, index, source, alpha):
        _check_writable(self)
        ctx.dim, ctx.alpha = dim, alpha
        ctx.save_for_backward(index, source)
        _index_add_into(self, dim, index, source, alpha)
        return self


def _index_add_into(out: np.ndarray, dim: int, index: np.ndarray, source: np.ndarray,
                    alpha) -> None:
    size = out.shape[dim] if out.ndim else 1
    bad = (index < -size) | (index >= size)
    if bad.any():
        raise IndexError("index out of range in self")
    values = source if alpha == 1 else source * np.asarray(alpha).astype(out.dtype)
    if out.ndim == 0:
        out[...] += np.sum(values)
        return
    key = (slice(None),) * dim + (index.reshape(-1),)
    np.add.at(out, key, values)


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    dim = normalize_dim(dim, input._data.ndim)
    return IndexAdd.apply(input, dim, _index_data(index, "index_add"), source, alpha)


def index_add_(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    dim = normalize_dim(dim, input._data.ndim)
    return IndexAddInplace.apply(input, dim, _index_data(index, "index_add_"), source, alpha)
