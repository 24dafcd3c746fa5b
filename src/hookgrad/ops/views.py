"""View ops: outputs share memory and the version counter with their input (NumPy views), and
``copy_slices``, which gives in-place ops on views torch's gradients (its CopySlices node).

Every view op sets ``_view_of = 0`` so ``Tensor._make_view`` can replay it on the base when an
in-place op changes the base or a sibling view. The replay calls ``apply`` with the same
positional arguments, so a view op's arguments are all positional and already normalised.
"""
from __future__ import annotations

import operator
import warnings
from itertools import pairwise

import numpy as np

from ..autograd import grad_mode
from ..autograd.graph import Node, _grad_edge, legacy_type_name
from ..tensor import _NO_GRAD_VIEW_ERROR, Tensor
from ._util import normalize_dim
from .elementwise import _Op


# ---------------------------------------------------------------------------------------------
# shape arguments
# ---------------------------------------------------------------------------------------------
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
        known = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
        if known == 0:
            if numel == 0:
                raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} "
                                   "because the unspecified dimension size -1 can be any value "
                                   "and is ambiguous")
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        if numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    if int(np.prod(shape, dtype=np.int64)) != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def view_array(x: np.ndarray, shape: tuple):
    """``x`` reshaped without a copy, or None when its strides do not allow it."""
    try:
        return np.reshape(x, shape, copy=False)
    except ValueError:
        return None


class _View(_Op):
    _view_of = 0


# ---------------------------------------------------------------------------------------------
# view / reshape / flatten / unflatten
# ---------------------------------------------------------------------------------------------
class View(_View):
    """grad.reshape(self.shape)"""

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
    """reshape of a fresh copy: the gradient of view, but the output is not a view"""

    node_name = "UnsafeViewBackward0"

    @staticmethod
    def forward(ctx, self, shape):
        ctx.self_shape = self.shape
        return self.reshape(infer_shape(shape, self.size))

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.self_shape), None


class ViewDtype(_View):
    """Reinterpret the bits (torch's view(dtype)); not differentiable, so applied untracked."""

    @staticmethod
    def forward(ctx, self, dtype):
        if self.ndim == 0 and dtype.itemsize != self.dtype.itemsize:
            raise RuntimeError("self.dim() cannot be 0 to view " + str(self.dtype) + " as "
                               + str(dtype) + " (different element sizes)")
        return self.view(dtype)


class ReshapeAlias(View):
    """reshape's view of a non-contiguous input (torch's _reshape_alias)"""

    node_name = "ReshapeAliasBackward0"


def reshape(input: Tensor, *shape) -> Tensor:
    """A view when the strides allow one, else a copy (UnsafeView of Clone), as torch: a
    contiguous input gets ``view``, a non-contiguous one ``_reshape_alias``."""
    shape = infer_shape(_shape_args(shape, "reshape"), input._data.size)
    if input._data.flags.c_contiguous:
        return View.apply(input, shape)
    if view_array(input._data, shape) is not None:
        return ReshapeAlias.apply(input, shape)
    return UnsafeView.apply(Clone.apply(input), shape)


def view(input: Tensor, *shape) -> Tensor:
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer, tuple, list, Tensor)):
        from .._dtype import to_numpy_dtype

        with grad_mode.no_grad():
            return ViewDtype.apply(input, np.dtype(to_numpy_dtype(shape[0])))
    return View.apply(input, _shape_args(shape))


def view_as(input: Tensor, other: Tensor) -> Tensor:
    return View.apply(input, other._data.shape)


def reshape_as(input: Tensor, other: Tensor) -> Tensor:
    return reshape(input, other._data.shape)


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
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
# copies that live here because reshape and to() need them
# ---------------------------------------------------------------------------------------------
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


# ---------------------------------------------------------------------------------------------
# select / slice / narrow and their backwards (zeros with the gradient written in)
# ---------------------------------------------------------------------------------------------
class Select(_View):
    """grad written into zeros at ``index`` of ``dim``"""

    node_name = "SelectBackward0"

    @staticmethod
    def forward(ctx, self, dim, index):
        if self.ndim == 0:
            raise IndexError("select() cannot be applied to a 0-dim tensor.")
        dim = normalize_dim(dim, self.ndim)
        size = self.shape[dim]
        if not -size <= index < size:
            raise IndexError(f"select(): index {index} out of range for tensor of size "
                             f"{list(self.shape)} at dimension {dim}")
        ctx.self_shape, ctx.dim, ctx.index = self.shape, dim, index % size
        return self[(slice(None),) * dim + (index % size, Ellipsis)]  # ... keeps a 0-d view

    @staticmethod
    def backward(ctx, grad):
        return SelectBackward.apply(grad, ctx.self_shape, ctx.dim, ctx.index), None, None


class SelectBackward(_Op):
    node_name = "SelectBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, shape, dim, index):
        ctx.dim, ctx.index = dim, index
        out = np.zeros(shape, grad.dtype)
        out[(slice(None),) * dim + (index,)] = grad
        return out

    @staticmethod
    def backward(ctx, grad):
        return Select.apply(grad, ctx.dim, ctx.index), None, None, None


class Slice(_View):
    """grad written into zeros at ``start:end:step`` of ``dim``"""

    node_name = "SliceBackward0"

    @staticmethod
    def forward(ctx, self, dim, start, end, step):
        if step <= 0:
            raise ValueError("step must be greater than zero")
        dim = normalize_dim(dim, self.ndim)
        ctx.self_shape, ctx.dim = self.shape, dim
        ctx.start, ctx.end, ctx.step = start, end, step
        return self[(slice(None),) * dim + (slice(start, end, step),)]

    @staticmethod
    def backward(ctx, grad):
        return (SliceBackward.apply(grad, ctx.self_shape, ctx.dim, ctx.start, ctx.end, ctx.step),
                None, None, None, None)


class SliceBackward(_Op):
    node_name = "SliceBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, shape, dim, start, end, step):
        ctx.args = (dim, start, end, step)
        out = np.zeros(shape, grad.dtype)
        out[(slice(None),) * dim + (slice(start, end, step),)] = grad
        return out

    @staticmethod
    def backward(ctx, grad):
        return Slice.apply(grad, *ctx.args), None, None, None, None, None


def select(input: Tensor, dim: int, index) -> Tensor:
    return Select.apply(input, dim, operator.index(index))


def slice_dim(input: Tensor, dim: int, start, stop, step: int = 1) -> Tensor:
    """``input[..., start:stop:step]`` along ``dim`` with Python's clamping (torch's slice)."""
    size = input._data.shape[normalize_dim(dim, input._data.ndim)]
    if step is not None and step <= 0:
        raise ValueError("step must be greater than zero")
    begin, end, step = slice(start, stop, step).indices(size)
    return Slice.apply(input, dim, begin, max(begin, end), step)


def narrow(input: Tensor, dim: int, start, length: int) -> Tensor:
    if input._data.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    dim = normalize_dim(dim, input._data.ndim)
    start, length = operator.index(start), operator.index(length)
    size = input._data.shape[dim]
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but "
                         f"got {start})")
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    return Slice.apply(input, dim, start, start + length, 1)


# ---------------------------------------------------------------------------------------------
# expand / permute / transpose / squeeze / unsqueeze / alias
# ---------------------------------------------------------------------------------------------
class Expand(_View):
    """grad summed over the broadcast dims"""

    node_name = "ExpandBackward0"

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
        return np.broadcast_to(self, target)  # read-only: elements share memory

    @staticmethod
    def backward(ctx, grad):
        return grad.sum_to_size(ctx.self_shape), None


def expand(input: Tensor, *sizes) -> Tensor:
    return Expand.apply(input, _shape_args(sizes, "expand"))


def expand_as(input: Tensor, other: Tensor) -> Tensor:
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
        dims = tuple(normalize_dim(d, self.ndim) for d in dims)
        if len(set(dims)) != len(dims):
            raise RuntimeError("permute(): duplicate dims are not allowed.")
        ctx.inverse = tuple(int(i) for i in np.argsort(dims))
        return np.transpose(self, dims)

    @staticmethod
    def backward(ctx, grad):
        return Permute.apply(grad, ctx.inverse), None


def permute(input: Tensor, *dims) -> Tensor:
    return Permute.apply(input, _shape_args(dims, "permute"))


def movedim(input: Tensor, source, destination) -> Tensor:
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
        ctx.dims = (normalize_dim(dim0, self.ndim), normalize_dim(dim1, self.ndim))
        if self.ndim == 0:
            return self.view()
        return np.swapaxes(self, *ctx.dims)

    @staticmethod
    def backward(ctx, grad):
        return Transpose.apply(grad, *ctx.dims), None, None


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
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
        return T.apply(grad)


def t(input: Tensor) -> Tensor:
    return T.apply(input)


def numpy_T(input: Tensor) -> Tensor:
    """``x.T``: all dims reversed (torch warns that this is deprecated unless ndim is 2)."""
    ndim = input._data.ndim
    if ndim != 2:
        warnings.warn("The use of `x.T` on tensors of dimension other than 2 to reverse their "
                      "shape is deprecated and it will throw an error in a future release. "
                      "Consider `x.mT` to transpose batches of matrices or `x.permute(*torch."
                      "arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.",
                      UserWarning, stacklevel=3)
    return Permute.apply(input, tuple(range(ndim))[::-1])


def matrix_T(input: Tensor) -> Tensor:
    """``x.mT``: the last two dims swapped."""
    if input._data.ndim < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got "
                           f"{input._data.ndim}-D tensor.")
    return Transpose.apply(input, -2, -1)


class Squeeze(_View):
    """grad reshaped back to the input's shape"""

    node_name = "SqueezeBackward0"

    @staticmethod
    def forward(ctx, self, dims=None):
        ctx.self_shape = self.shape
        if dims is None:
            return np.squeeze(self)
        dims = tuple(normalize_dim(d, self.ndim) for d in dims)
        dims = tuple(d for d in set(dims) if self.ndim and self.shape[d] == 1)
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
        return SqueezeDims.apply(input, tuple(operator.index(d) for d in dim))
    return SqueezeDim.apply(input, (operator.index(dim),))


class Unsqueeze(_View):
    """grad.squeeze(dim)"""

    node_name = "UnsqueezeBackward0"

    @staticmethod
    def forward(ctx, self, dim):
        ctx.dim = normalize_dim(dim, self.ndim + 1)
        return np.expand_dims(self, ctx.dim)

    @staticmethod
    def backward(ctx, grad):
        return SqueezeDim.apply(grad, (ctx.dim,)), None


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    return Unsqueeze.apply(input, operator.index(dim))


class Alias(_View):
    node_name = "AliasBackward0"

    @staticmethod
    def forward(ctx, self):
        return self.view()

    @staticmethod
    def backward(ctx, grad):
        return grad


# ---------------------------------------------------------------------------------------------
# split / chunk / unbind: several views of one input
# ---------------------------------------------------------------------------------------------
class Split(_Op):
    """split / chunk / unbind: several views; modifying one in place is refused (as torch)."""

    node_name = "SplitBackward0"
    _view_of = 0
    _multi_view = True

    @staticmethod
    def forward(ctx, self, sizes, dim, squeeze=False):
        ctx.dim, ctx.squeeze = dim, squeeze
        offsets = np.cumsum((0,) + tuple(sizes))
        lead = (slice(None),) * dim
        if squeeze:
            return tuple(self[lead + (int(o), Ellipsis)] for o in offsets[:-1])
        return tuple(self[lead + (slice(int(a), int(b)),)] for a, b in pairwise(offsets))

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


_MULTI_VIEW_TAIL = ("This view is the output of a function that returns multiple views. Such "
                    "functions do not allow the output views to be modified inplace. You should "
                    "replace the inplace operation by an out-of-place one.")


class _MultiViewReplay:
    """Stands in for the replay of a split/unbind output: torch cannot rebuild such a view's
    history after its base changed in place, so asking for it raises torch's error (rather
    than keeping a stale grad_fn, which would give a wrong gradient)."""

    __slots__ = ("name", "output_nr")

    def __init__(self, name: str, output_nr: int):
        self.name, self.output_nr = name, output_nr

    def __call__(self, root):
        raise RuntimeError(f"Output {self.output_nr} of {self.name} is a view and its base or "
                             f"another view of its base has been modified inplace. "
                             + _MULTI_VIEW_TAIL)


def _mark_multi_view(cls, outputs: tuple, input_requires_grad: bool) -> tuple:
    for index, output in enumerate(outputs):
        output._view_fn = _MultiViewReplay(_forward_name(cls.node_name), index)
        if output._grad_fn is None and grad_mode.is_grad_enabled():
            # made with grad mode on but without history: torch's words for this case
            output._extras()["view_error"] = ("A view was created in no_grad mode and is being "
                                              "modified inplace with grad mode enabled. "
                                              + _MULTI_VIEW_TAIL)
        elif output._grad_fn is None and input_requires_grad:
            output._extras()["view_error"] = _NO_GRAD_VIEW_ERROR
    return outputs


def _forward_name(node_name: str) -> str:
    """torch names the op in view errors without the ``Backward0`` suffix."""
    head, _, _ = node_name.rpartition("Backward")
    return head or node_name


def split(input: Tensor, split_size_or_sections, dim: int = 0) -> tuple:
    if input._data.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    dim = normalize_dim(dim, input._data.ndim)
    size = input._data.shape[dim]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = tuple(operator.index(s) for s in split_size_or_sections)
        if any(s < 0 for s in sizes) or sum(sizes) != size:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} "
                               f"(input tensor's size at dimension {dim}), but got split_sizes="
                               f"{list(sizes)}")
        return _mark_multi_view(SplitWithSizes, SplitWithSizes.apply(input, sizes, dim),
                                input.requires_grad)
    step = operator.index(split_size_or_sections)
    if step < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={step}")
    if step == 0 and size != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension "
                           f"size of {size}")
    sizes = tuple(min(step, size - start) for start in range(0, size, step)) if size else (0,)
    return _mark_multi_view(Split, Split.apply(input, sizes, dim), input.requires_grad)


def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    """torch's rule: pieces of ceil(size / chunks), so there may be fewer than ``chunks``."""
    if input._data.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    chunks = operator.index(chunks)
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    dim = normalize_dim(dim, input._data.ndim)
    size = input._data.shape[dim]
    if size == 0:
        return _mark_multi_view(SplitWithSizes, SplitWithSizes.apply(input, (0,) * chunks, dim),
                                input.requires_grad)
    return split(input, -(-size // chunks), dim)


def unbind(input: Tensor, dim: int = 0) -> tuple:
    if input._data.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    dim = normalize_dim(dim, input._data.ndim)
    outputs = Unbind.apply(input, (1,) * input._data.shape[dim], dim, True)
    return _mark_multi_view(Unbind, outputs, input.requires_grad)


# ---------------------------------------------------------------------------------------------
# In-place ops on views: CopySlices
# ---------------------------------------------------------------------------------------------
class CopySlices(Node):
    """The base's new history after an in-place op ``fn`` on one of its views.

    Backward: the gradient of the base passes unchanged outside the view's region; inside it
    goes through ``fn``'s backward, whose gradient for the view's old value lands back in the
    region. Other inputs of ``fn`` get their gradients directly.
    """

    __slots__ = ("__dict__", "fn", "view_fn")

    def __init__(self, base_edge, fn, view_fn, base_meta):
        self._init_node()
        self.fn = fn
        self.view_fn = view_fn
        self.next_functions = (base_edge or (None, 0),) + tuple(fn.next_functions[1:])
        self._input_meta = (base_meta,) + tuple(fn._input_meta[1:])
        self._output_meta = (base_meta,)

    def name(self) -> str:
        return "torch::autograd::CopySlices"

    def apply(self, grad_outputs: tuple) -> tuple:
        (grad,) = grad_outputs
        if grad is None:
            return (None,) * len(self.next_functions)
        # tensor ops throughout, so that with create_graph this is differentiable (as torch's)
        result = Clone.apply(grad)
        region = self.view_fn(result)
        fn_grads = self.fn.apply((Clone.apply(region),))
        fn_grads = tuple(fn_grads) + (None,) * (len(self.fn.next_functions) - len(fn_grads))
        if fn_grads[0] is None:
            region.zero_()
        else:
            region.copy_(fn_grads[0])
        return (result,) + fn_grads[1:]

    def release_variables(self) -> None:
        self.fn.release_variables()


def copy_slices(view: Tensor, node, index: int) -> None:
    """Called by ``Tensor._rebase_history`` after in-place op ``node`` changed ``view``."""
    base = view._base
    _refuse_multi_view(view)
    base_edge = _grad_edge(base)
    copy_node = CopySlices(base_edge, node, view._view_fn,
                           (base._data.shape, base._data.dtype))
    base._grad_fn = copy_node
    base._output_nr = 0
    base._requires_grad = False
    # the view's own history is now a view of the base's: rebuild it right away, since
    # Function.apply reads ``_grad_fn`` directly and would otherwise use the stale one
    view._view_version = -1
    view._regenerate_view_grad_fn()


def _refuse_multi_view(view: Tensor) -> None:
    """torch forbids in-place changes to split/unbind outputs and to views of them."""
    replay = view._view_fn
    if isinstance(replay, _MultiViewReplay):
        names = [replay.name]
    else:
        try:
            with grad_mode.no_grad():
                replay(view._base)  # a view of a split output: the replay reaches the marker
            return
        except RuntimeError as error:
            if _MULTI_VIEW_TAIL not in str(error):
                raise
            names = [_forward_name(type(view._grad_fn).__name__)]
    if view._grad_fn is None:
        raise RuntimeError("A view was created in no_grad mode and is being modified inplace "
                           "with grad mode enabled. " + _MULTI_VIEW_TAIL)
    raise RuntimeError(f"Output {view._output_nr} of {names[0]} is a view and is being "
                       "modified inplace. " + _MULTI_VIEW_TAIL)
