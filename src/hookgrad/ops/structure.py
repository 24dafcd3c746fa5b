"""Structure ops composed as torch composes them (so grad_fn names match): outer, kron, meshgrid,
cartesian_prod, tensor_split, repeat_interleave, tile, the stacks, atleast_Nd, broadcasting,
ravel; and the few with their own node: cross, rot90, block_diag, take.
"""
from __future__ import annotations

import operator
from itertools import pairwise

import numpy as np

from .._warnings import warn_once
from .. import _dtype
from ..autograd.saved import array_for_forward
from ..tensor import Size, Tensor
from ._reduce_util import _UNSET, shown_dim, shown_dims
from ._util import broadcast_error, normalize_dim
from .join import _promoted, cat, stack, vstack
from .shape import flipped, repeat
from .views import UnsafeView, expand, reshape, slice_dim
from ._base import Op


def _tensors(args, op: str) -> tuple:
    """f(a, b) or f([a, b]) -> (a, b)"""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        return tuple(args[0])
    return tuple(args)


# ---------------------------------------------------------------------------------------------
# products
# ---------------------------------------------------------------------------------------------
def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """input[:, None] * vec2 (a MulBackward0, as torch composes it)"""
    for name, tensor in (("self", input), ("vec2", vec2)):
        if tensor._data.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got "
                               f"{tensor._data.ndim}-D")
    return input.reshape(-1, 1) * vec2


ger = outer


def kron(input: Tensor, other: Tensor) -> Tensor:
    """every element of input times the whole of other, laid out blockwise"""
    ndim = max(input._data.ndim, other._data.ndim)
    a_shape = (1,) * (ndim - input._data.ndim) + input._data.shape
    b_shape = (1,) * (ndim - other._data.ndim) + other._data.shape
    a = UnsafeView.apply(input, tuple(s for n in a_shape for s in (n, 1)))
    b = UnsafeView.apply(other, tuple(s for n in b_shape for s in (1, n)))
    shape = tuple(m * n for m, n in zip(a_shape, b_shape))
    return UnsafeView.apply(a * b, shape)


class Cross(Op):
    """a x b along ``dim``;  d a = b x grad, d b = grad x a"""

    node_name = "LinalgCrossBackward0"
    saved_names = ("other", "self")

    @staticmethod
    def forward(ctx, self, other, dim, dtype, shown=_UNSET):
        ctx.dim, ctx._saved_dim = dim, shown_dim(dim) if shown is _UNSET else shown
        ctx.save_for_backward(other if ctx.needs_input_grad[0] else None,
                              self if ctx.needs_input_grad[1] else None)
        return np.cross(self.astype(dtype, copy=False), other.astype(dtype, copy=False),
                        axis=dim)

    @staticmethod
    def backward(ctx, grad):
        other, self = ctx.saved_tensors
        dim = ctx.dim
        grad_self = None if other is None else _cross(other, grad, dim)
        grad_other = None if self is None else _cross(grad, self, dim)
        return grad_self, grad_other, None, None


def _cross(a: Tensor, b: Tensor, dim: int) -> Tensor:
    return Cross.apply(a, b, dim, _dtype.result_type(a, b).numpy)


def _cross_args(input: Tensor, other: Tensor, dim: int):
    a, b = input._data, other._data
    if a.ndim != b.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if a.shape[dim] != 3 or b.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{a.shape[dim]} and {b.shape[dim]}")
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise broadcast_error("linalg.cross", a.shape, b.shape) from None
    if a.dtype != b.dtype:  # torch's kernel takes one dtype: no promotion
        raise RuntimeError(f"expected scalar type {_dtype.scalar_type_name(a.dtype)} but found "
                           f"{_dtype.scalar_type_name(b.dtype)}")
    return Cross.apply(input, other, normalize_dim(dim, a.ndim) - a.ndim,
                       _dtype.result_type(input, other).numpy, shown=shown_dim(dim))


def cross(input: Tensor, other: Tensor, dim=None, *, out=None) -> Tensor:
    """the cross product along ``dim`` (without it: the first dim of size 3, as torch)"""
    if dim is None:
        warn_once("Using torch.cross without specifying the dim arg is deprecated.\nPlease "
                  "either pass the dim explicitly or simply use torch.linalg.cross.\nThe "
                  "default value of dim will change to agree with that of linalg.cross in a "
                  "future release.", UserWarning)
        shape = np.broadcast_shapes(input._data.shape, other._data.shape)
        dim = next((d for d, n in enumerate(shape) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return _cross_args(input, other, dim)


def linalg_cross(input: Tensor, other: Tensor, *, dim: int = -1, out=None) -> Tensor:
    """Cross product of 3-vectors along ``dim`` (default the last), with broadcasting."""
    return _cross_args(input, other, dim)


# ---------------------------------------------------------------------------------------------
# grids
# ---------------------------------------------------------------------------------------------
def meshgrid(*tensors, indexing=None) -> tuple:
    """coordinate grids: tensor i varies along dim i ('ij'), or dims 0 and 1 swapped ('xy')"""
    tensors = _tensors(tensors, "meshgrid")
    if indexing is None:
        warn_once("torch.meshgrid: in an upcoming release, it will be required to pass the "
                  "indexing argument.", UserWarning)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           f"received: {indexing}")
    for tensor in tensors:
        if tensor._data.ndim > 1:
            raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               f"got: {tensor}")
    sizes = [max(t._data.size, 1) if t._data.ndim == 0 else t._data.shape[0] for t in tensors]
    where = list(range(len(tensors)))
    if indexing == "xy" and len(tensors) >= 2:
        where[0], where[1] = 1, 0
        sizes[0], sizes[1] = sizes[1], sizes[0]
    outputs = []
    for tensor, position in zip(tensors, where):
        shape = [1] * len(tensors)
        shape[position] = -1
        outputs.append(expand(tensor.reshape(shape), tuple(sizes)))
    return tuple(outputs)


def cartesian_prod(*tensors) -> Tensor:
    """every combination of elements, one row each"""
    tensors = _tensors(tensors, "cartesian_prod")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([grid.flatten() for grid in grids], 1)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """The length-``r`` combinations of a 1-D tensor's elements, one per row, in order (with
    repeated elements too when ``with_replacement``); built as torch builds it, from a grid of
    ``r`` copies masked to increasing positions, so its graph is torch's."""
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return Tensor._make(np.empty(0, input._data.dtype))
    positions = np.meshgrid(*[np.arange(input.shape[0])] * r, indexing="ij")
    keep = np.ones(positions[0].shape, bool)
    for lower, upper in pairwise(positions):
        keep &= (lower <= upper) if with_replacement else (lower < upper)
    mask = Tensor._make(keep)
    grids = meshgrid(*[input] * r, indexing="ij")
    return stack([grid.masked_select(mask) for grid in grids], 1)


class BlockDiag(Op):
    """inputs on the diagonal of a zero matrix; each gets its block of the gradient back"""

    node_name = "BlockDiagBackward0"
    _tensor_list = True

    @staticmethod
    def forward(ctx, dtype, *tensors):
        blocks = [t.reshape(1, -1) if t.ndim < 2 else t for t in tensors]
        blocks = [b.reshape(1, 1) if t.ndim == 0 else b for b, t in zip(blocks, tensors)]
        ctx.shapes = [t.shape for t in tensors]
        ctx.corners = []
        rows = sum(b.shape[0] for b in blocks)
        cols = sum(b.shape[1] for b in blocks)
        out = np.zeros((rows, cols), dtype)
        row = col = 0
        for block in blocks:  # one copy per input
            out[row:row + block.shape[0], col:col + block.shape[1]] = block
            ctx.corners.append((row, col, block.shape))
            row, col = row + block.shape[0], col + block.shape[1]
        return out

    @staticmethod
    def backward(ctx, grad):
        grads = []
        for (row, col, shape), original in zip(ctx.corners, ctx.shapes):
            block = grad[row:row + shape[0], col:col + shape[1]]
            grads.append(block.reshape(original))
        return (None, *grads)


def block_diag(*tensors) -> Tensor:
    """A block-diagonal matrix with the given matrices on its diagonal."""
    for position, tensor in enumerate(tensors):
        if tensor._data.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {position} has {tensor._data.ndim} "
                               f"dimensions")
    if not tensors:
        return Tensor._make(np.zeros((1, 0), _dtype.get_default_dtype().numpy))
    return BlockDiag.apply(_promoted(tensors), *tensors)


# ---------------------------------------------------------------------------------------------
# splitting and repeating
# ---------------------------------------------------------------------------------------------
def tensor_split(input: Tensor, indices_or_sections, dim: int = 0) -> tuple:
    """views between the given indices, or ``n`` nearly equal sections (the first ones longer)"""
    if input._data.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    dim = normalize_dim(dim, input._data.ndim)
    size = input._data.shape[dim]
    split = indices_or_sections
    if isinstance(split, Tensor):
        if split._data.dtype != np.int64:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype "
                               f"of long, but got {_dtype.scalar_type_name(split._data.dtype)}")
        if split._data.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a "
                               "zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {split._data.ndim} dims")
        split = int(split._data) if split._data.ndim == 0 else split._data.tolist()
    if isinstance(split, (int, np.integer)):
        sections = operator.index(split)
        if sections <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
        base, extra = divmod(size, sections)
        lengths = [base + 1] * extra + [base] * (sections - extra)
        bounds = np.cumsum([0] + lengths).tolist()
    else:
        bounds = [0] + [operator.index(i) for i in split] + [size]
    return tuple(slice_dim(input, dim, start, stop) for start, stop in zip(bounds[:-1], bounds[1:]))


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None) -> Tensor:
    """each element (or slice along ``dim``) repeated ``repeats`` times in place"""
    if repeats is None:  # repeat_interleave(repeats): the indices, each repeated
        counts = input._data
        if counts.ndim > 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        if counts.size and counts.min() < 0:
            raise RuntimeError("repeats can not be negative")
        return Tensor._make(np.repeat(np.arange(counts.size, dtype=np.int64), counts))
    if dim is None:
        input, dim = input.reshape(-1), 0
    dim = normalize_dim(dim, input._data.ndim)
    if input._data.ndim == 0:
        input = input.reshape(1)
    size = input._data.shape[dim]
    if isinstance(repeats, Tensor) and repeats._data.size != 1:
        counts = repeats._data
        if counts.ndim != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        if counts.shape[0] != size:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {counts.shape[0]} and input.size(0) = {size}")
        if counts.size and counts.min() < 0:
            raise RuntimeError("repeats can not be negative")
        index = np.repeat(np.arange(size, dtype=np.int64), counts)
        return input.index_select(dim, Tensor._make(index))
    count = int(repeats.item() if isinstance(repeats, Tensor) else repeats)
    if count < 0:
        raise RuntimeError("Repeats must be non-negative")
    shape = input._data.shape
    spread = shape[:dim + 1] + (count,) + shape[dim + 1:]
    copied = expand(input.unsqueeze(dim + 1), spread).clone()
    return reshape(copied, shape[:dim] + (size * count,) + shape[dim + 1:])


def tile(input: Tensor, dims) -> Tensor:
    """repeat with ``dims`` padded by leading ones to the input's rank"""
    dims = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
    dims = (1,) * (input._data.ndim - len(dims)) + dims
    return repeat(input, dims)


# ---------------------------------------------------------------------------------------------
# stacking and at-least-N-d
# ---------------------------------------------------------------------------------------------
def _atleast(ndim: int, args):
    tensors = _tensors(args, f"atleast_{ndim}d")
    results = []
    for tensor in tensors:
        rank = tensor._data.ndim
        if rank >= ndim:
            results.append(tensor)
        elif rank == 0:
            results.append(tensor.reshape((1,) * ndim))
        elif ndim == 3 and rank == 1:
            results.append(tensor.reshape(1, -1, 1))
        else:  # (n,) -> (1, n) and (m, n) -> (m, n, 1)
            results.append(tensor.unsqueeze(0 if ndim == 2 else -1))
    return results[0] if len(args) == 1 and isinstance(args[0], Tensor) else tuple(results)


def atleast_1d(*tensors):
    """Each input with at least one dimension (scalars become shape ``(1,)``)."""
    return _atleast(1, tensors)


def atleast_2d(*tensors):
    """Each input with at least two dimensions (size-1 dimensions added in front)."""
    return _atleast(2, tensors)


def atleast_3d(*tensors):
    """Each input with at least three dimensions, placed as torch places them."""
    return _atleast(3, tensors)


def dstack(tensors, *, out=None) -> Tensor:
    """cat along dim 2 after atleast_3d"""
    return cat([_atleast(3, (t,)) for t in tensors], 2, out=out)


def column_stack(tensors, *, out=None) -> Tensor:
    """vectors as columns (and scalars as 1x1), then cat along dim 1"""
    columns = [t.reshape(-1, 1) if t._data.ndim <= 1 else t for t in tensors]
    return cat(columns, 1, out=out)


row_stack = vstack


# ---------------------------------------------------------------------------------------------
# broadcasting, rotation, flat views and take
# ---------------------------------------------------------------------------------------------
def broadcast_shapes(*shapes) -> Size:
    """The shape that tensors of the given shapes broadcast to; raises if they do not."""
    shapes = [(s,) if isinstance(s, (int, np.integer)) else tuple(s) for s in shapes]
    result = []
    for index, shape in enumerate(shapes):
        for i in range(1, len(shape) + 1):
            if i > len(result):
                result.insert(0, shape[-i])
            elif result[-i] == 1:
                result[-i] = shape[-i]
            elif shape[-i] not in (1, result[-i]):
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {shape[-i]} at -{i}! "
                    f"Mismatching argument at index {index} had {shape}; but expected shape "
                    f"should be broadcastable to {result}")
    return Size(result)


def broadcast_to(input: Tensor, *size) -> Tensor:
    """``broadcast_to((2, 4))`` or, as torch's method, ``broadcast_to(2, 4)``."""
    return expand(input, *size)


def broadcast_tensors(*tensors) -> tuple:
    """each tensor expanded to the common shape (a tensor that has it already is returned)"""
    tensors = _tensors(tensors, "broadcast_tensors")
    shape = tensors[0]._data.shape
    for tensor in tensors[1:]:
        try:
            shape = np.broadcast_shapes(shape, tensor._data.shape)
        except ValueError:
            raise broadcast_error("broadcast_tensors", shape, tensor._data.shape) from None
    return tuple(t if t._data.shape == shape else expand(t, shape) for t in tensors)


class Rot90(Op):
    """a quarter turn k times in the plane of ``dims``; gradient: turned back"""

    node_name = "Rot90Backward0"

    @staticmethod
    def forward(ctx, self, k, dims, shown=None):
        ctx.k, ctx.dims = k, dims
        # k and dims as given, negative ones read back unsigned as torch's node shows them
        ctx._saved_k, ctx._saved_dims = shown_dim(k), shown_dims(dims if shown is None else shown)
        turns = k % 4
        if turns == 0:
            return np.array(self, order="C")
        if turns == 2:
            return flipped(self, dims)
        # torch flips one dim into a fresh tensor (laid out as self) and returns that flip
        # transposed, a view: so its strides are the flip's, swapped
        return np.swapaxes(flipped(self, (dims[1] if turns == 1 else dims[0],)), *dims)

    @staticmethod
    def backward(ctx, grad):
        return Rot90.apply(grad, -ctx.k, ctx.dims), None, None


def rot90(input: Tensor, k: int = 1, dims=(0, 1)) -> Tensor:
    """Rotates by 90 degrees ``k`` times in the plane of ``dims``."""
    dims = tuple(dims)
    ndim = input._data.ndim
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {ndim}")
    if dims[0] == dims[1] or abs(dims[0] - dims[1]) == ndim:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} "
                           f"and dim1 = {dims[1]}")
    normalized = tuple(normalize_dim(d, ndim) for d in dims)
    return Rot90.apply(input, int(k), normalized, shown=dims)


def ravel(input: Tensor) -> Tensor:
    """A view of a contiguous input, else a contiguous copy (never a strided view)."""
    return reshape(input.contiguous(), (-1,))


class Take(Op):
    """input's elements at flat indices; gradient: grad added at those indices"""

    node_name = "TakeBackward0"
    saved_names = ("index", "self")

    @staticmethod
    def forward(ctx, self, index):
        size = self.size
        if size == 0 and index.size:
            raise IndexError("take(): tried to take from an empty tensor")
        bad = (index < -size) | (index >= size)
        if bad.any():
            raise IndexError(f"out of range: tried to access index {int(index[bad].flat[0])} on "
                             f"a tensor of {size} elements.")
        ctx.save_for_backward(index, self)
        return self.reshape(-1)[index]

    @staticmethod
    def backward(ctx, grad):
        index, self = ctx.saved_tensors
        flat = Tensor._make(np.zeros(self._data.size, grad._data.dtype))
        positions = Tensor._make(index._data.reshape(-1) % max(self._data.size, 1))
        return flat.index_add(0, positions, grad.reshape(-1)).reshape(self.shape), None


def take(input: Tensor, index: Tensor) -> Tensor:
    """The elements at the given flat indices, as if the input were 1-d."""
    if index._data.dtype != np.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got "
                           f"{_dtype.scalar_type_name(index._data.dtype)}")
    return Take.apply(input, array_for_forward(index))
