"""View ops: outputs share memory and the version counter with their input (NumPy views), and
``copy_slices``, which gives in-place ops on views torch's gradients (its CopySlices node)."""
from __future__ import annotations

import numpy as np

from ..autograd import grad_mode
from ..autograd.graph import Node, _grad_edge
from ..tensor import Tensor
from .elementwise import _Op
from ._util import normalize_dim


def infer_shape(shape, numel: int) -> tuple:
    shape = tuple(int(s) for s in shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if -1 in shape:
        known = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    if int(np.prod(shape, dtype=np.int64)) != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def view_array(x: np.ndarray, shape: tuple) -> np.ndarray:
    """``x`` reshaped without a copy, or None when the strides do not allow it."""
    out = x.view()
    try:
        out.shape = shape
    except AttributeError:
        return None
    return out


class _View(_Op):
    _view_of = 0


class View(_View):
    node_name = "ViewBackward0"

    @staticmethod
    def forward(ctx, self, shape):
        shape = infer_shape(shape, self.size)
        ctx.self_shape = self.shape
        out = view_array(self, shape)
        if out is None:
            raise RuntimeError("view size is not compatible with input tensor's size and stride "
                               "(at least one dimension spans across two contiguous subspaces). "
                               "Use .reshape(...) instead.")
        return out

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.self_shape), None


class UnsafeView(_Op):
    """reshape of a fresh copy: same gradient as view, but not a view of its input"""

    node_name = "UnsafeViewBackward0"

    @staticmethod
    def forward(ctx, self, shape):
        ctx.self_shape = self.shape
        return self.reshape(shape)

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.self_shape), None


def reshape(input: Tensor, *shape) -> Tensor:
    shape = _shape_args(shape)
    shape = infer_shape(shape, input._data.size)
    if view_array(input._data, shape) is not None:
        return View.apply(input, shape)
    return UnsafeView.apply(Clone.apply(input), shape)


def view(input: Tensor, *shape) -> Tensor:
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer, tuple, list)):
        return input.to(shape[0])  # view(dtype) on same-size types is not supported: copy
    return View.apply(input, _shape_args(shape))


def _shape_args(shape) -> tuple:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(shape[0])
    return tuple(shape)


class Clone(_Op):
    node_name = "CloneBackward0"

    @staticmethod
    def forward(ctx, self, memory_format=None):
        return np.array(self, copy=True)

    @staticmethod
    def backward(ctx, grad):
        return grad


class ToCopy(_Op):
    node_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, self, dtype):
        ctx.self_dtype = self.dtype
        return self.astype(dtype)

    @staticmethod
    def backward(ctx, grad):
        return grad.to(ctx.self_dtype), None


class Select(_View):
    node_name = "SelectBackward0"

    @staticmethod
    def forward(ctx, self, dim, index):
        dim = normalize_dim(dim, self.ndim)
        size = self.shape[dim]
        if not -size <= index < size:
            raise IndexError(f"index {index} is out of bounds for dimension {dim} with size "
                             f"{size}")
        ctx.key = (slice(None),) * dim + (index % size, Ellipsis)
        ctx.self_shape = self.shape
        return self[ctx.key]

    @staticmethod
    def backward(ctx, grad):
        return Embed.apply(grad, ctx.self_shape, ctx.key), None, None


class Slice(_View):
    node_name = "SliceBackward0"

    @staticmethod
    def forward(ctx, self, dim, start, end, step):
        if step <= 0:
            raise ValueError("step must be greater than zero")
        dim = normalize_dim(dim, self.ndim)
        ctx.key = (slice(None),) * dim + (slice(start, end, step), Ellipsis)
        ctx.self_shape = self.shape
        return self[ctx.key]

    @staticmethod
    def backward(ctx, grad):
        return Embed.apply(grad, ctx.self_shape, ctx.key), None, None, None, None


class Embed(_Op):
    """zeros of ``shape`` with ``grad`` written at ``key`` (the backward of select/slice/index);
    with ``accumulate`` repeated indices add up."""

    node_name = "EmbedBackward0"

    @staticmethod
    def forward(ctx, grad, shape, key, accumulate=False):
        ctx.key = key
        out = np.zeros(shape, dtype=grad.dtype)
        if accumulate:
            np.add.at(out, key, grad)
        else:
            out[key] = grad
        return out

    @staticmethod
    def backward(ctx, grad):
        return Index.apply(grad, ctx.key), None, None, None


class Index(_Op):
    """advanced indexing (a copy); the indices are saved as torch saves them"""

    node_name = "IndexBackward0"
    saved_names = ("indices",)

    @staticmethod
    def forward(ctx, self, key):
        ctx.key = key
        ctx.self_shape = self.shape
        arrays = [k for k in (key if isinstance(key, tuple) else (key,))
                  if isinstance(k, np.ndarray)]
        ctx.save_for_backward(*[a if a.dtype != np.bool_ else np.stack(np.nonzero(a))
                                for a in arrays])
        try:
            return np.array(self[key], copy=True)
        except IndexError as error:
            raise IndexError(str(error)) from None

    @staticmethod
    def backward(ctx, grad):
        return Embed.apply(grad, ctx.self_shape, ctx.key, True), None


class Expand(_View):
    node_name = "ExpandBackward0"

    @staticmethod
    def forward(ctx, self, shape):
        ctx.self_shape = self.shape
        lead = len(shape) - self.ndim
        if lead < 0:
            raise RuntimeError(f"expand(torch.FloatTensor{{{list(self.shape)}}}, size="
                               f"{list(shape)}): the number of sizes provided ({len(shape)}) must "
                               f"be greater or equal to the number of dimensions in the tensor "
                               f"({self.ndim})")
        target = tuple(self.shape[i - lead] if s == -1 else s for i, s in enumerate(shape))
        for i, size in enumerate(self.shape):
            if size != 1 and size != target[i + lead]:
                raise RuntimeError(
                    f"The expanded size of the tensor ({target[i + lead]}) must match the "
                    f"existing size ({size}) at non-singleton dimension {i + lead}.  Target "
                    f"sizes: {list(shape)}.  Tensor sizes: {list(self.shape)}")
        return np.broadcast_to(self, target)

    @staticmethod
    def backward(ctx, grad):
        return grad.sum_to_size(ctx.self_shape), None


class Permute(_View):
    node_name = "PermuteBackward0"

    @staticmethod
    def forward(ctx, self, dims):
        dims = tuple(normalize_dim(d, self.ndim) for d in dims)
        if len(dims) != self.ndim or len(set(dims)) != len(dims):
            raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input "
                               f"does not match the length of the desired ordering of dimensions "
                               f"i.e. input.dim() = {self.ndim} is not equal to len(dims) = "
                               f"{len(dims)}")
        ctx.inverse = tuple(np.argsort(dims))
        return np.transpose(self, dims)

    @staticmethod
    def backward(ctx, grad):
        return grad.permute(ctx.inverse), None


class Transpose(_View):
    node_name = "TransposeBackward0"

    @staticmethod
    def forward(ctx, self, dim0, dim1):
        if self.ndim == 0:
            return self.view()
        ctx.dims = (normalize_dim(dim0, self.ndim), normalize_dim(dim1, self.ndim))
        return np.swapaxes(self, *ctx.dims)

    @staticmethod
    def backward(ctx, grad):
        if grad.ndim == 0:
            return grad, None, None
        return grad.transpose(*ctx.dims), None, None


class T(_View):
    node_name = "TBackward0"

    @staticmethod
    def forward(ctx, self):
        if self.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                               f"{self.ndim}D")
        return self.T

    @staticmethod
    def backward(ctx, grad):
        return grad.t()


class Squeeze(_View):
    node_name = "SqueezeBackward0"

    @staticmethod
    def forward(ctx, self, dims=None):
        ctx.self_shape = self.shape
        if dims is None:
            return np.squeeze(self)
        dims = tuple(d for d in (normalize_dim(d, self.ndim) for d in dims)
                     if self.ndim and self.shape[d] == 1)
        return np.squeeze(self, dims) if dims else self.view()

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.self_shape), None


class SqueezeDim(Squeeze):
    node_name = "SqueezeBackward1"


class SqueezeDims(Squeeze):
    node_name = "SqueezeBackward2"


def squeeze(input: Tensor, dim=None) -> Tensor:
    if dim is None:
        return Squeeze.apply(input)
    if isinstance(dim, (tuple, list)):
        return SqueezeDims.apply(input, tuple(dim))
    return SqueezeDim.apply(input, (dim,))


class Unsqueeze(_View):
    node_name = "UnsqueezeBackward0"

    @staticmethod
    def forward(ctx, self, dim):
        dim = normalize_dim(dim, self.ndim + 1)
        ctx.dim = dim
        return np.expand_dims(self, dim)

    @staticmethod
    def backward(ctx, grad):
        return grad.squeeze(ctx.dim), None


class Alias(_View):
    node_name = "AliasBackward0"

    @staticmethod
    def forward(ctx, self):
        return self.view()

    @staticmethod
    def backward(ctx, grad):
        return grad


class Split(_Op):
    """split / chunk / unbind: several views; modifying one in place is refused (as torch)."""

    node_name = "SplitBackward0"
    _view_of = 0
    _multi_view = True

    @staticmethod
    def forward(ctx, self, sizes, dim, squeeze=False):
        dim = normalize_dim(dim, self.ndim)
        if sum(sizes) != self.shape[dim]:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to "
                               f"{self.shape[dim]} (input tensor's size at dimension {dim}), "
                               f"but got split_sizes={list(sizes)}")
        ctx.dim, ctx.squeeze = dim, squeeze
        offsets = np.cumsum((0,) + tuple(sizes))
        lead = (slice(None),) * dim
        if squeeze:
            return tuple(self[lead + (int(o), Ellipsis)] for o in offsets[:-1])
        return tuple(self[lead + (slice(int(a), int(b)), Ellipsis)]
                     for a, b in zip(offsets[:-1], offsets[1:]))

    @staticmethod
    def backward(ctx, *grads):
        from .shape import cat, stack

        if ctx.squeeze:
            return stack(grads, ctx.dim), None, None, None
        return cat(grads, ctx.dim), None, None, None


class SplitWithSizes(Split):
    node_name = "SplitWithSizesBackward0"


class Unbind(Split):
    node_name = "UnbindBackward0"


def split(input: Tensor, split_size_or_sections, dim: int = 0) -> tuple:
    size = input._data.shape[normalize_dim(dim, input.ndim)]
    if isinstance(split_size_or_sections, (list, tuple)):
        return SplitWithSizes.apply(input, tuple(split_size_or_sections), dim)
    step = int(split_size_or_sections)
    sizes = tuple(min(step, size - start) for start in range(0, size, step)) or (0,)
    return Split.apply(input, sizes, dim)


def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    size = input._data.shape[normalize_dim(dim, input.ndim)]
    step = -(-size // chunks)
    return split(input, max(step, 1), dim)


def unbind(input: Tensor, dim: int = 0) -> tuple:
    size = input._data.shape[normalize_dim(dim, input.ndim)]
    return Unbind.apply(input, (1,) * size, dim, True)


# ---------------------------------------------------------------------------------------------
# In-place ops on views: CopySlices
# ---------------------------------------------------------------------------------------------
class CopySlices(Node):
    """The base's new history after an in-place op ``fn`` on one of its views.

    Backward: the gradient of the base passes unchanged outside the view's region; inside it
    goes through ``fn``'s backward, whose gradient for the view's old value lands back in the
    region. Other inputs of ``fn`` get their gradients directly.
    """

    __slots__ = ("fn", "view_fn", "__dict__")

    def __init__(self, base_edge, fn, view_fn, base_meta):
        self._init_node()
        self.fn = fn
        self.view_fn = view_fn
        self.next_functions = (base_edge or (None, 0),) + tuple(fn.next_functions[1:])
        self._input_meta = (base_meta,) + tuple(fn._input_meta[1:])
        self._output_meta = (base_meta,)

    def name(self) -> str:
        return "CopySlices"

    def apply(self, grad_outputs: tuple) -> tuple:
        (grad,) = grad_outputs
        if grad is None:
            return (None,) * len(self.next_functions)
        result = grad.clone()
        with grad_mode.no_grad():
            region = self.view_fn(result)
        fn_grads = self.fn.apply((region.clone(),))
        fn_grads = tuple(fn_grads) + (None,) * (len(self.fn.next_functions) - len(fn_grads))
        with grad_mode.no_grad():
            if fn_grads[0] is None:
                region._data[...] = 0
            else:
                region._data[...] = np.broadcast_to(fn_grads[0]._data, region._data.shape)
        return (result,) + fn_grads[1:]

    def release_variables(self) -> None:
        self.fn.release_variables()


def copy_slices(view: Tensor, node, index: int) -> None:
    base = view._base
    base_edge = _grad_edge(base)
    copy_node = CopySlices(base_edge, node, view._view_fn,
                           (base._data.shape, base._data.dtype))
    base._grad_fn = copy_node
    base._output_nr = 0
    base._requires_grad = False
    view._view_version = -1  # regenerate this view's grad_fn from the base on next access
