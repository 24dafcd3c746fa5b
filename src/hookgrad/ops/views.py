"""View ops: outputs share memory and the version counter with their input (NumPy views).

Every view op sets ``_view_of = 0`` so ``Tensor._make_view`` can replay it on the base when an
in-place op changes the base or a sibling view. The replay calls ``apply`` with the same
positional arguments, so a view op's arguments are all positional and already normalised.
Ops that return several views (split, chunk, unbind) live in ``join.py``; what an in-place op
on a view does to its base (CopySlices) lives in ``autograd/views.py``.
"""
from __future__ import annotations

import operator

import numpy as np

from ..autograd import grad_mode
from ..autograd.graph import legacy_type_name
from ..autograd.views import make_view
from ..overrides import _mode_stack
from ..tensor import Tensor, root_array
from .. import _memory_format as _mf
from .._dtype import scalar_type_name, to_numpy_dtype
from . import _layout
from ._args import _shape_args, infer_shape
from ._reduce_util import shown_dim, shown_dims
from ._util import normalize_dim
from ._view_strides import _with_view_strides, view_array
from .clone import Clone
from .slicing import (Select, SelectBackward, Slice, SliceBackward,  # noqa: F401
                      narrow, select, slice_dim)
from ._base import Op


class _View(Op):
    _view_of = 0


# ---------------------------------------------------------------------------------------------
# view / reshape / flatten / unflatten
# ---------------------------------------------------------------------------------------------
class View(_View):
    """grad.reshape(self.shape)"""

    node_name = "ViewBackward0"
    saved_values = {"self_sym_sizes": "self_shape"}

    @staticmethod
    def forward(ctx, self, shape):
        shape = infer_shape(shape, self.size)
        ctx.self_shape = self.shape
        out = view_array(self, shape)
        if out is None:
            raise RuntimeError("view size is not compatible with input tensor's size and stride "
                               "(at least one dimension spans across two contiguous subspaces). "
                               "Use .reshape(...) instead.")
        return _with_view_strides(self, out)

    @staticmethod
    def backward(ctx, grad):
        return _grad_reshaped(grad, ctx.self_shape), None


def _grad_reshaped(grad: Tensor, shape: tuple) -> Tensor:
    """``grad.reshape(shape)`` in a view's backward formula. When nothing is recorded (no
    create_graph), no mode intercepts calls and ``grad`` is row-major, this is the view that
    ``View.apply`` makes unrecorded, made without the public call's argument handling: every
    reshape, view and squeeze node runs it once per backward."""
    if not grad_mode._state.enabled and not _mode_stack and type(grad) is Tensor:
        array = grad._data
        if array.flags.c_contiguous:
            return make_view(_with_view_strides(array, array.reshape(shape)), grad, View,
                             (grad, shape), 0)
    return grad.reshape(shape)


class UnsafeView(Op):
    """reshape of a fresh copy: the gradient of view, but the output is not a view"""

    node_name = "UnsafeViewBackward0"
    saved_values = {"self_sym_sizes": "self_shape"}

    @staticmethod
    def forward(ctx, self, shape):
        ctx.self_shape = self.shape
        out = self.reshape(infer_shape(shape, self.size))
        # a view takes view's strides; a copy (NumPy's, when no view exists) is row-major
        return _with_view_strides(self, out) if np.may_share_memory(out, self) \
            else _layout.contiguous(out)

    @staticmethod
    def backward(ctx, grad):
        return _grad_reshaped(grad, ctx.self_shape), None


class ViewDtype(_View):
    """Reinterpret the bits (torch's view(dtype)); not differentiable, so applied untracked."""

    @staticmethod
    def forward(ctx, self, dtype):
        if dtype.itemsize != self.dtype.itemsize:
            _check_dtype_view(self, dtype)
        return self.view(dtype)


def _check_dtype_view(self: np.ndarray, dtype: np.dtype) -> None:
    """torch's checks (and words) for viewing ``self`` as a dtype of another element size: the
    last dim must be unit-stride, and when elements grow, its size and the offset must divide."""
    what = (f" to view {scalar_type_name(self.dtype)} as {scalar_type_name(dtype)} (different "
            f"element sizes)")
    if self.ndim == 0:
        raise RuntimeError("self.dim() cannot be 0" + what)
    ratio = dtype.itemsize // self.dtype.itemsize
    if ratio > 1:
        if self.shape[-1] % ratio:
            raise RuntimeError(f"self.size(-1) must be divisible by {ratio}{what}, but got "
                               f"{self.shape[-1]}")
        offset = (self.__array_interface__["data"][0]
                  - root_array(self).__array_interface__["data"][0]) // self.itemsize
        if offset % ratio:
            raise RuntimeError(f"self.storage_offset() must be divisible by {ratio}{what}, but "
                               f"got {offset}")
    stride = _layout.torch_strides(self)[-1]
    if stride != 1 and self.shape[-1] != 1:
        raise RuntimeError(f"self.stride(-1) must be 1{what}, but got {stride}")


class ReshapeAlias(View):
    """reshape's view of a non-contiguous input (torch's _reshape_alias)"""

    node_name = "ReshapeAliasBackward0"


def reshape(input: Tensor, *shape) -> Tensor:
    """A view when the strides allow one, else a copy (UnsafeView of Clone), as torch: a
    contiguous input gets ``view``, a non-contiguous one ``_reshape_alias``. The clone is
    row-major, as torch's (one copy: a clone keeping the input's strides would leave the
    reshape a second copy to make)."""
    shape = infer_shape(_shape_args(shape, "reshape"), input._data.size)
    if input._data.flags.c_contiguous:
        return View.apply(input, shape)
    if view_array(input._data, shape) is not None:
        return ReshapeAlias.apply(input, shape)
    return UnsafeView.apply(Clone.apply(input, _mf.contiguous_format), shape)


def view(input: Tensor, *shape) -> Tensor:
    """A view with a new shape over the same memory (or reinterpreted as another dtype); raises if
    the strides do not allow it."""
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer, tuple, list, Tensor)):
        with grad_mode.no_grad():
            viewed = ViewDtype.apply(input, np.dtype(to_numpy_dtype(shape[0])))
        # torch's view(dtype) is no differentiable view: it shares the memory and the version
        # counter, but has no base (so it never requires grad, and in place on it is allowed)
        return viewed.detach()
    return View.apply(input, _shape_args(shape))


def view_as(input: Tensor, other: Tensor) -> Tensor:
    """``view(other.size())``."""
    return View.apply(input, other._data.shape)


def reshape_as(input: Tensor, other: Tensor) -> Tensor:
    """``reshape(other.size())``."""
    return reshape(input, other._data.shape)


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merges dimensions ``start_dim..end_dim`` into one; a view when the layout allows, else a
    copy."""
    ndim = input._data.ndim
    if ndim == 0:
        return reshape(input, (1,))
    start, end = normalize_dim(start_dim, ndim), normalize_dim(end_dim, ndim)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return input
    shape = input._data.shape
    return reshape(input, shape[:start] + (-1,) + shape[end + 1:])


def unflatten(input: Tensor, dim: int, sizes) -> Tensor:
    """A view splitting dimension ``dim`` into ``sizes``."""
    shape = input._data.shape
    dim = normalize_dim(dim, input._data.ndim)
    sizes = _shape_args((sizes,), "unflatten")
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    try:
        sizes = infer_shape(sizes, shape[dim])
    except RuntimeError as error:
        if "only one" in str(error):
            raise RuntimeError("unflatten: only one dimension can be inferred") from None
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                           f"size of dim {dim} ({shape[dim]}) in the input tensor") from None
    return View.apply(input, shape[:dim] + sizes + shape[dim + 1:])


# ---------------------------------------------------------------------------------------------
# expand / permute / transpose / squeeze / unsqueeze / alias
# ---------------------------------------------------------------------------------------------
class Expand(_View):
    """grad summed over the broadcast dims"""

    node_name = "ExpandBackward0"
    saved_values = {"self_sym_sizes": "self_shape"}

    @staticmethod
    def forward(ctx, self, shape):
        ctx.self_shape = self.shape
        lead = len(shape) - self.ndim
        if lead < 0:
            raise RuntimeError(f"expand({legacy_type_name(self)}{{{list(self.shape)}}}, size="
                               f"{list(shape)}): the number of sizes provided ({len(shape)}) must "
                               f"be greater or equal to the number of dimensions in the tensor "
                               f"({self.ndim})")
        target = [0] * len(shape)
        for i in range(len(shape) - 1, -1, -1):  # torch checks from the last dim
            size = shape[i]
            if i < lead:
                if size < 0:
                    raise RuntimeError(f"The expanded size of the tensor ({size}) isn't allowed "
                                       f"in a leading, non-existing dimension {i}")
                target[i] = size
                continue
            existing = self.shape[i - lead]
            if size == -1:
                size = existing
            if existing != 1 and existing != size:
                raise RuntimeError(
                    f"The expanded size of the tensor ({size}) must match the existing size "
                    f"({existing}) at non-singleton dimension {i}.  Target sizes: "
                    f"{list(shape)}.  Tensor sizes: {list(self.shape)}")
            target[i] = size
        target = tuple(target)
        if target == (1,) * lead + self.shape:  # nothing repeats: keep it writable
            return self.reshape(target)
        expanded = np.broadcast_to(self, target)
        strides = _expand_strides(self, target)
        if expanded.strides != strides:  # size-1 dims that stay 1: torch keeps a real stride
            expanded = _layout.restrided(expanded, strides)
        # writable as its input, as torch: in-place ops refuse it only where an element is
        # really reached twice (has_internal_overlap), so a stride-1 slice of it is fine
        try:
            expanded.flags.writeable = self.flags.writeable
        except ValueError:  # restrided through NumPy's stand-in base: make it from self
            expanded = np.lib.stride_tricks.as_strided(self, target, expanded.strides,
                                                       writeable=self.flags.writeable)
        return expanded

    @staticmethod
    def backward(ctx, grad):
        return grad.sum_to_size(ctx.self_shape), None


def _expand_strides(array: np.ndarray, target: tuple) -> tuple:
    """torch's byte strides of ``array`` expanded to ``target``: 0 on a repeated dim, the
    input's own stride on a kept dim (NumPy gives 0 to a size-1 dim that stays 1), and for a
    new leading dim of size 1 the stride one step past the next dim."""
    strides = [0] * len(target)
    lead = len(target) - array.ndim
    for i in range(len(target) - 1, -1, -1):
        if i >= lead:
            size, stride = array.shape[i - lead], array.strides[i - lead]
        else:
            size = 1
            stride = array.itemsize if i == len(target) - 1 else \
                target[i + 1] * strides[i + 1]
        strides[i] = 0 if size != target[i] else stride
    return tuple(strides)


def expand(input: Tensor, *sizes) -> Tensor:
    """A view repeating size-1 dimensions to ``sizes`` without copying (``-1`` keeps a size)."""
    return Expand.apply(input, _shape_args(sizes, "expand"))


def expand_as(input: Tensor, other: Tensor) -> Tensor:
    """``expand(other.size())``."""
    return Expand.apply(input, other._data.shape)


class Permute(_View):
    """grad permuted back"""

    node_name = "PermuteBackward0"

    @staticmethod
    def forward(ctx, self, dims):
        if len(dims) != self.ndim:
            raise RuntimeError("permute(sparse_coo): number of dimensions in the tensor input "
                               "does not match the length of the desired ordering of dimensions "
                               f"i.e. input.dim() = {self.ndim} is not equal to len(dims) = "
                               f"{len(dims)}")
        ctx._saved_dims = shown_dims(dims)  # as given, a negative one read back unsigned
        dims = tuple(normalize_dim(d, self.ndim) for d in dims)
        if len(set(dims)) != len(dims):
            raise RuntimeError("permute(): duplicate dims are not allowed.")
        inverse = [0] * len(dims)  # the inverse permutation (argsort of ``dims``)
        for position, dim in enumerate(dims):
            inverse[dim] = position
        ctx.inverse = tuple(inverse)
        return self.transpose(dims)

    @staticmethod
    def backward(ctx, grad):
        return Permute.apply(grad, ctx.inverse), None


def permute(input: Tensor, *dims) -> Tensor:
    """A view with the dimensions reordered as ``dims``."""
    return Permute.apply(input, _shape_args(dims, "permute"))


def movedim(input: Tensor, source, destination) -> Tensor:
    """A view with dimensions ``source`` moved to positions ``destination``."""
    ndim = input._data.ndim
    source = (source,) if isinstance(source, int) else tuple(source)
    destination = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(source) != len(destination):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(source)} "
                           f"dims) should contain the same number of dims as destination "
                           f"({list(destination)} dims)")
    source = tuple(normalize_dim(d, ndim) for d in source)
    destination = tuple(normalize_dim(d, ndim) for d in destination)
    order = [None] * ndim
    for s, d in zip(source, destination):
        order[d] = s
    rest = iter(d for d in range(ndim) if d not in source)
    order = tuple(next(rest) if o is None else o for o in order)
    return Permute.apply(input, order)


moveaxis = movedim


class Transpose(_View):
    """grad transposed back"""

    node_name = "TransposeBackward0"

    @staticmethod
    def forward(ctx, self, dim0, dim1):
        ctx._saved_dim0, ctx._saved_dim1 = shown_dim(dim0), shown_dim(dim1)  # as given
        ctx.dims = (normalize_dim(dim0, self.ndim), normalize_dim(dim1, self.ndim))
        if self.ndim == 0:
            return self.view()
        return self.swapaxes(*ctx.dims)

    @staticmethod
    def backward(ctx, grad):
        return Transpose.apply(grad, *ctx.dims), None, None


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """A view with dimensions ``dim0`` and ``dim1`` swapped."""
    return Transpose.apply(input, dim0, dim1)


swapaxes = swapdims = transpose


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
        if not grad_mode._state.enabled and type(grad) is Tensor and grad._data.ndim <= 2:
            # what T.apply gives when nothing is recorded, without its generic steps: the
            # weight gradient of every Linear passes here
            return make_view(grad._data.T, grad, T, (grad,), 0)
        return T.apply(grad)


def t(input: Tensor) -> Tensor:
    """Transpose of a tensor of at most two dimensions (a view)."""
    return T.apply(input)


class Squeeze(_View):
    """grad with each removed dimension put back by ``unsqueeze``, lowest first (torch's
    ``unsqueeze_to``, so a graph of the gradient shows ``UnsqueezeBackward0`` nodes)"""

    node_name = "SqueezeBackward0"
    saved_values = {"self_sym_sizes": "self_shape"}

    @staticmethod
    def forward(ctx, self, dims=None, shown=None):
        ctx.self_shape = self.shape
        if shown is not None:  # squeeze(dim): torch's node shows the dim(s) as given
            ctx._saved_dim = shown
        if dims is None:
            ctx.removed = tuple(d for d, size in enumerate(self.shape) if size == 1)
            return self.squeeze()  # (the methods: no Python wrapper around them)
        dims = tuple(normalize_dim(d, self.ndim) for d in dims)
        dims = tuple(sorted(d for d in set(dims) if self.ndim and self.shape[d] == 1))
        ctx.removed = dims
        return self.squeeze(dims) if dims else self.view()

    @staticmethod
    def backward(ctx, grad):
        if not grad_mode._state.enabled:  # no graph of it to show: one reshaped view
            return _grad_reshaped(grad, ctx.self_shape), None
        for dim in ctx.removed:  # one unsqueeze per removed dim, as torch's formula
            grad = grad.unsqueeze(dim)
        return grad, None


class SqueezeDim(Squeeze):
    node_name = "SqueezeBackward1"


class SqueezeDims(Squeeze):
    node_name = "SqueezeBackward2"


def squeezer(classes: tuple):
    """``squeeze`` through ``classes`` (for no dim, one dim, a list of dims): the views', or
    ``squeeze_copy``'s copying twins (made once, so squeeze pays no extra call)."""
    no_dim, one_dim, dims_given = classes

    def squeeze(input: Tensor, dim=None) -> Tensor:
        """A view without size-1 dimensions (all of them, or only those in ``dim``)."""
        if dim is None:
            return no_dim.apply(input)
        if isinstance(dim, (tuple, list)):
            dims = tuple(operator.index(d) for d in dim)
            return dims_given.apply(input, dims, shown_dims(dims))
        return one_dim.apply(input, (operator.index(dim),), shown_dim(operator.index(dim)))
    return squeeze


squeeze = squeezer((Squeeze, SqueezeDim, SqueezeDims))


class Unsqueeze(_View):
    """grad.squeeze(dim)"""

    node_name = "UnsqueezeBackward0"

    @staticmethod
    def forward(ctx, self, dim):
        ctx._saved_dim = shown_dim(dim)  # as given, a negative one read back unsigned
        ctx.dim = dim = normalize_dim(dim, self.ndim + 1)
        result = self.reshape(self.shape[:dim] + (1,) + self.shape[dim:])  # expand_dims's
        # torch's stride for the new dim: 1 at the end, else what the next dim spans
        kept = self.strides
        if self.size == 0:  # (as Tensor.stride() reads an empty array's zero strides)
            kept = tuple(s * self.itemsize for s in _layout.torch_strides(self))
        wanted = self.itemsize if dim == self.ndim else self.shape[dim] * kept[dim]
        # the other dims keep the input's strides (NumPy may rewrite a size-1 dim's)
        strides = kept[:dim] + (wanted,) + kept[dim:]
        if result.strides == strides:
            return result
        return _layout.restrided(result, strides)

    @staticmethod
    def backward(ctx, grad):
        return SqueezeDim.apply(grad, (ctx.dim,), ctx.dim), None


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """A view with a new size-1 dimension at ``dim``."""
    return Unsqueeze.apply(input, operator.index(dim))
