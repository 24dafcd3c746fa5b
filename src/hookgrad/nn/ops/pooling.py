"""Pooling over the trailing spatial dims: max (with indices), average, adaptive average.

Windows are strided views of the padded input (as in ``conv.py``); gradients go back with one
strided add per kernel offset or one ``bincount`` over the saved indices. Each backward is a
Function whose own backward is the forward op again, so double backward is exact.
"""
from __future__ import annotations

import math

import numpy as np

from . import conv as _conv
from .conv import windows
from .pool_tiles import (_copy_where, _pays, _planes_view, _split_planes,  # noqa: F401
                         _tile_max, _tile_max_planes, _tile_origins, _tile_slices, _tiles)
from ...ops import _layout
from ...ops._base import Op, through_saved
from ...ops._reduce_util import show_as_given
from ...tensor import Tensor

Ints = tuple


def pooled_size(size: Ints, kernel: Ints, stride: Ints, padding: Ints, dilation: Ints,
                ceil_mode: bool) -> Ints:
    """torch's pooling output size; with ceil_mode a last window must start inside the input
    or its left padding."""
    out = []
    for s, k, st, p, d in zip(size, kernel, stride, padding, dilation):
        span = s + 2 * p - d * (k - 1) - 1
        n = (span + (st - 1 if ceil_mode else 0)) // st + 1
        if ceil_mode and (n - 1) * st >= s + p:
            n -= 1
        out.append(n)
    return tuple(out)


def _padded(x: np.ndarray, out: Ints, kernel: Ints, stride: Ints, padding: Ints,
            dilation: Ints, fill) -> np.ndarray:
    """x with ``padding`` on the left and enough on the right for every window (ceil_mode)."""
    nd = len(kernel)
    size = x.shape[-nd:]
    right = tuple(max((o - 1) * st + d * (k - 1) + 1 - s - p, 0)
                  for o, k, st, p, d, s in zip(out, kernel, stride, padding, dilation, size))
    if not any(padding) and not any(right):
        return x
    shape = x.shape[:-nd] + tuple(s + p + r for s, p, r in zip(size, padding, right))
    result = np.full(shape, fill, x.dtype)
    result[(Ellipsis,) + tuple(slice(p, p + s) for p, s in zip(padding, size))] = x
    return result


def _lowest(dtype: np.dtype):
    return -np.inf if dtype.kind in "fV" else np.iinfo(dtype).min


def _scatter_windows(values: np.ndarray, size: Ints, kernel: Ints, stride: Ints,
                     padding: Ints, dilation: Ints) -> np.ndarray:
    """The adjoint of taking windows: values (..., *out, *kernel) summed back into an array of
    spatial ``size`` (padding cropped), one strided add per kernel offset."""
    nd = len(kernel)
    lead = values.shape[:-2 * nd]
    out = values.shape[-2 * nd:-nd]
    reach = tuple(max((o - 1) * st + d * (k - 1) + 1, s + 2 * p)
                  for o, k, st, d, s, p in zip(out, kernel, stride, dilation, size, padding))
    padded = np.zeros(lead + reach, values.dtype)
    for offset in np.ndindex(*kernel):
        target = tuple(slice(k * d, k * d + st * (o - 1) + 1, st)
                       for k, d, st, o in zip(offset, dilation, stride, out))
        padded[(Ellipsis,) + target] += values[(Ellipsis,) + offset]
    return padded[(Ellipsis,) + tuple(slice(p, p + s) for p, s in zip(padding, size))]


# -- max pooling -------------------------------------------------------------------------------
class MaxPoolWithIndices(Op):
    """out = max over each window; indices = the flat (h * W + w) input position of that max"""

    node_name = "MaxPool2DWithIndicesBackward0"
    saved_names = ("self", "result1")

    @staticmethod
    def forward(ctx, self, kernel, stride, padding, dilation, ceil_mode, shown=None):
        show_as_given(ctx, shown or {"kernel_size": kernel, "stride": stride,
                                     "padding": padding, "dilation": dilation})
        ctx._saved_ceil_mode = ceil_mode
        nd = len(kernel)
        size = self.shape[-nd:]
        out = pooled_size(size, kernel, stride, padding, dilation, ceil_mode)
        ctx.self_shape = self.shape
        ctx.nd = nd
        ctx.kernel = kernel
        ctx.tiled = _tiles(self, out, kernel, stride, padding, dilation)
        if ctx.tiled:
            result, indices = _tile_max_planes(self, out, kernel)
            # in self's suggested memory format, as torch's (channels-last stays so)
            result, indices = _layout.suggested(result, self), _layout.suggested(indices, self)
            ctx.save_for_backward(self, indices)
            return result, indices
        lead = self.ndim - nd
        shape = self.shape[:lead] + out
        planes = self.reshape((-1, 1) + size)  # a view for a contiguous input
        result = np.empty(planes.shape[:2] + out, self.dtype)
        index = np.empty(planes.shape[:2] + out, np.int64)
        # the windows are copied to take their argmax: kernel-size times the output, so a large
        # batch of planes goes a slice at a time (see ``conv.WORKSPACE_BYTES``)
        window_bytes = math.prod(out) * math.prod(kernel) * (self.itemsize + 8)
        for start, stop in _plane_slices(planes.shape[0], window_bytes):
            result[start:stop], index[start:stop] = _window_max(
                planes[start:stop], out, kernel, stride, padding, dilation)
        result = _layout.suggested(result.reshape(shape), self)
        indices = _layout.suggested(index.reshape(shape), self)
        ctx.save_for_backward(self, indices)
        return result, indices

    @staticmethod
    def backward(ctx, grad, _grad_indices=None):
        self, indices = ctx.saved_tensors
        grad = through_saved(grad, self)  # torch's formula reads self
        del self  # a saver's decoded copy is freed before the input-sized result is made
        if ctx.tiled:
            scattered = MaxPoolTileScatter.apply(grad, indices._data, ctx.self_shape, ctx.kernel)
        else:
            scattered = MaxPoolScatter.apply(grad, indices._data, ctx.self_shape, ctx.nd)
        return scattered


def _plane_slices(planes: int, bytes_per_plane: int):
    """``(start, stop)`` slices of ``planes`` whose workspace stays within
    ``conv.WORKSPACE_BYTES`` (at least one plane each)."""
    chunk = max(1, min(planes, _conv.WORKSPACE_BYTES // max(1, bytes_per_plane)))
    for start in range(0, planes, chunk):
        yield start, min(planes, start + chunk)


def _window_max(planes: np.ndarray, out: Ints, kernel: Ints, stride: Ints, padding: Ints,
                dilation: Ints):
    """Values and in-plane flat indices of each window's max over ``planes`` (P, 1, *size)."""
    nd = len(kernel)
    size = planes.shape[2:]
    padded = _padded(planes, out, kernel, stride, padding, dilation, _lowest(planes.dtype))
    view = windows(padded, out, kernel, stride, dilation)
    flat = view.reshape(view.shape[:2 + nd] + (-1,))
    local = np.argmax(flat, axis=-1)  # the first maximum, as in torch
    result = np.take_along_axis(flat, local[..., None], axis=-1)[..., 0]
    if planes.dtype.kind in "fV" and np.isnan(result).any():
        # a NaN wins, and of several torch reports the last (it also takes `val != val`)
        nan = np.isnan(flat)
        last = flat.shape[-1] - 1 - np.argmax(nan[..., ::-1], axis=-1)
        local = np.where(nan.any(axis=-1), last, local)
    del flat, view, padded
    # local kernel index -> input coordinates -> flat index within one plane; a window
    # whose max is the padding value reports its first in-bounds position, as torch does
    offsets = np.unravel_index(local, kernel)
    index = np.zeros(local.shape, np.int64)
    first = np.zeros((), np.int64)
    for axis in range(nd):
        start = np.arange(out[axis]) * stride[axis] - padding[axis]
        inside = np.where(start < 0, start % dilation[axis], start)  # stepped in bounds
        shape = (-1,) + (1,) * (nd - 1 - axis)
        index = index * size[axis] + start.reshape(shape) + offsets[axis] * dilation[axis]
        first = first * size[axis] + inside.reshape(shape)
    return result, np.where(result == _lowest(planes.dtype), first, index)


# The common geometry (stride = kernel, no padding or dilation, every window inside the input,
# e.g. 2x2 stride 2) tiles the input, so the windows are the kernel's strided slices of a
# reshape: a max over prod(kernel) slices replaces the window copy and argmax of the general path.
class MaxPoolTileScatter(Op):
    """grad_input[window's max] = grad on tiling windows: one masked copy per kernel offset,
    the mask rebuilt from the saved indices (no bincount over the whole input)."""

    node_name = "MaxPool2DWithIndicesBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, indices, shape, kernel):
        nd = ctx.nd = len(kernel)
        ctx.save_for_backward(indices)
        out = indices.shape[-nd:]
        origins = _tile_origins(shape[-nd:], out, kernel)  # one plane's worth, not the batch's
        # every element of the tiles is written below (the gradient or +0), so only an input
        # with a remainder that no tile covers needs zeros first
        tiled = all(o * k == s for o, k, s in zip(out, kernel, shape[-nd:]))
        result = (np.empty if tiled else np.zeros)(shape, grad.dtype)
        # the winner's offset in its tile, in a type as narrow as the last offset allows
        plane = shape[-nd:]
        small = np.min_scalar_type(sum((k - 1) * math.prod(plane[axis + 1:])
                                       for axis, k in enumerate(kernel)))

        def scatter(result, grad, indices) -> None:
            # which offset won each tile, in a narrow integer type: one pass over the int64
            # indices instead of a comparison of them per offset
            won = np.empty(indices.shape, small)  # cast as it goes: no int64 temporary
            np.subtract(indices, origins, out=won, casting="unsafe")
            for where, target in _tile_slices(result, out, kernel):
                # target is a view of result: the cropped reshape of a fresh array never
                # copies; one boolean mask of the output's size at a time
                _copy_where(target, grad, won == where)

        planes = math.prod(shape[:-nd])
        flat = [_planes_view(a, nd) for a in (result, grad, indices)]
        if _pays(planes, math.prod(shape[-nd:]), *flat):
            _split_planes(planes, math.prod(shape[-nd:]), lambda start, stop: scatter(
                *(a[start:stop] for a in flat)))
        else:
            scatter(result, grad, indices)
        return result

    @staticmethod
    def backward(ctx, grad):
        (indices,) = ctx.saved_tensors
        return MaxPoolGather.apply(grad, indices._data, ctx.nd), None, None, None


def _plane_offsets(indices: np.ndarray, shape: Ints, nd: int):
    """``(start, stop, flat)`` per slice of planes: the saved per-plane indices as indices into
    the slice's planes flattened, in int64. A window of padding only reports an index past its
    plane; torch's kernel then writes into the next plane, and so do we, except past the last
    plane, where nothing is kept (flat = the size of what is left)."""
    planes = math.prod(shape[:-nd])
    plane = math.prod(shape[-nd:])
    per_plane = indices.reshape(planes, math.prod(indices.shape[-nd:]))
    # per plane of a slice: its flat indices, bincount's float64 weights and its float64 sums
    for start, stop in _plane_slices(planes, 16 * per_plane.shape[1] + 8 * plane):
        flat = per_plane[start:stop] + np.arange(stop - start, dtype=np.int64)[:, None] * plane
        np.minimum(flat, (planes - start) * plane, out=flat)
        yield start, stop, flat


class MaxPoolScatter(Op):
    """grad_input.flatten()[plane * P + index] += grad: the gradient of max pooling (linear in
    grad), one ``bincount`` per slice of planes so its workspace stays bounded"""

    node_name = "MaxPool2DWithIndicesBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, indices, shape, nd):
        ctx.nd = nd
        ctx.save_for_backward(indices)
        plane = math.prod(shape[-nd:])
        total = math.prod(shape)
        result = np.zeros(total, grad.dtype)
        weights = grad.reshape(total // plane, math.prod(grad.shape[-nd:]))
        for start, stop, flat in _plane_offsets(indices, shape, nd):
            sums = np.bincount(flat.ravel(), weights=weights[start:stop].ravel())
            sums = sums[:total - start * plane]  # the dropped index, past the last plane
            result[start * plane:start * plane + sums.size] += sums.astype(grad.dtype,
                                                                           copy=False)
        return result.reshape(shape)

    @staticmethod
    def backward(ctx, grad):
        (indices,) = ctx.saved_tensors
        return MaxPoolGather.apply(grad, indices._data, ctx.nd), None, None, None


class MaxPoolGather(Op):
    """out = values.flatten()[plane * P + index] (0 past the last plane): the adjoint of
    ``MaxPoolScatter``"""

    node_name = "MaxPoolGatherBackward0"

    @staticmethod
    def forward(ctx, values, indices, nd):
        ctx.nd = nd
        ctx.values_shape = values.shape
        ctx.save_for_backward(indices)
        plane = math.prod(values.shape[-nd:])
        flat_values = values.reshape(-1)
        result = np.empty(indices.shape, values.dtype)
        out = result.reshape(flat_values.size // plane, math.prod(indices.shape[-nd:]))
        for start, stop, flat in _plane_offsets(indices, values.shape, nd):
            inside = flat_values[start * plane:]
            out[start:stop] = np.where(flat < inside.size,
                                       inside[np.minimum(flat, inside.size - 1)], 0)
        return result

    @staticmethod
    def backward(ctx, grad):
        (indices,) = ctx.saved_tensors
        return MaxPoolScatter.apply(grad, indices._data, ctx.values_shape, ctx.nd), None, None


# -- average pooling ---------------------------------------------------------------------------
def _divisor(size: Ints, out: Ints, kernel: Ints, stride: Ints, padding: Ints,
             count_include_pad: bool, divisor_override) -> np.ndarray:
    """Per-output-position divisor, an outer product over dims (torch's window clipping)."""
    if divisor_override:
        return np.array(divisor_override)
    divisor = np.ones((), np.int64)
    for s, o, k, st, p in zip(size, out, kernel, stride, padding):
        start = np.arange(o) * st - p
        end = np.minimum(start + k, s + p)
        if count_include_pad:
            length = end - start
        else:
            length = np.minimum(end, s) - np.maximum(start, 0)
        divisor = np.multiply.outer(divisor, length)
    return divisor


def _window_means(x: np.ndarray, geometry: tuple) -> np.ndarray:
    """Window sums of x divided by the divisor: the average-pooling forward."""
    size, out, kernel, stride, padding, count_include_pad, divisor_override = geometry
    nd = len(kernel)
    ones = (1,) * nd
    divisor = _divisor(size, out, kernel, stride, padding, count_include_pad, divisor_override)
    padded = _padded(x, out, kernel, stride, padding, ones, 0)
    view = windows(padded.reshape((-1, 1) + padded.shape[-nd:]), out, kernel, stride, ones)
    summed = view.sum(axis=tuple(range(2 + nd, 2 + 2 * nd)))
    result = (summed / divisor.astype(x.dtype)).astype(x.dtype, copy=False)
    return result.reshape(x.shape[:-nd] + tuple(out))


def _window_spread(grad: np.ndarray, geometry: tuple) -> np.ndarray:
    """Each grad / divisor added to every input of its window: the adjoint of the above."""
    size, out, kernel, stride, padding, count_include_pad, divisor_override = geometry
    nd = len(kernel)
    divisor = _divisor(size, out, kernel, stride, padding, count_include_pad, divisor_override)
    share = grad / divisor.astype(grad.dtype)
    spread = np.broadcast_to(share.reshape(share.shape + (1,) * nd), share.shape + kernel)
    return _scatter_windows(spread, size, kernel, stride, padding, (1,) * nd)


class AvgPool(Op):
    """out = sum over each window / divisor"""

    node_name = "AvgPool2DBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self, kernel, stride, padding, ceil_mode, count_include_pad,
                divisor_override, shown=None):
        show_as_given(ctx, shown or {"kernel_size": kernel, "stride": stride,
                                     "padding": padding})
        ctx._saved_ceil_mode, ctx._saved_count_include_pad = ceil_mode, count_include_pad
        ctx._saved_divisor_override = divisor_override
        nd = len(kernel)
        size = self.shape[-nd:]
        out = pooled_size(size, kernel, stride, padding, (1,) * nd, ceil_mode)
        ctx.geometry = (size, out, kernel, stride, padding, count_include_pad, divisor_override)
        ctx.save_for_backward(self)
        return _layout.suggested(_window_means(self, ctx.geometry), self)

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        return _spread_class(ctx.geometry).apply(grad, self, ctx.geometry)


def _spread_class(geometry):
    return AvgPool3DSpread if len(geometry[2]) == 3 else AvgPoolSpread


class AvgPoolSpread(Op):
    """grad_input = each grad / divisor spread over its window: linear in grad, and, as
    torch's ``avg_pool2d_backward``, with an edge to the pooled input (whose gradient is
    zero), so the first gradient of a pool is differentiable with respect to its input."""

    node_name = "AvgPool2DBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, self, geometry):
        ctx.geometry = geometry
        ctx.self_meta = (self.shape, self.dtype)
        return _window_spread(grad, geometry)

    @staticmethod
    def backward(ctx, grad):
        means = AvgPool3DMeans if len(ctx.geometry[2]) == 3 else AvgPoolMeans
        return (means.apply(grad, ctx.geometry) if ctx.needs_input_grad[0] else None,
                _zeros(ctx.self_meta) if ctx.needs_input_grad[1] else None, None)


class AvgPoolMeans(Op):
    """The adjoint of ``AvgPoolSpread``: window means on the same geometry."""

    node_name = "AvgPool2DBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, values, geometry):
        ctx.geometry = geometry
        ctx.save_for_backward(values)
        return _window_means(values, geometry)

    @staticmethod
    def backward(ctx, grad):
        (values,) = ctx.saved_tensors
        return _spread_class(ctx.geometry).apply(grad, values, ctx.geometry), None


class AvgPool3DSpread(AvgPoolSpread):
    node_name = "AvgPool3DBackwardBackward0"


class AvgPool3DMeans(AvgPoolMeans):
    node_name = "AvgPool3DBackward0"


def _zeros(meta) -> Tensor:
    shape, dtype = meta
    return Tensor._make(np.zeros(shape, dtype))


# -- adaptive average pooling ------------------------------------------------------------------
def adaptive_matrix(size: int, out: int, dtype: np.dtype) -> np.ndarray:
    """(out, size) averaging matrix: row i averages [floor(i S / O), ceil((i + 1) S / O))."""
    index = np.arange(out)
    start = (index * size) // out
    end = -((-(index + 1) * size) // out)
    columns = np.arange(size)
    inside = (columns >= start[:, None]) & (columns < end[:, None])
    return (inside / (end - start)[:, None]).astype(dtype)


def _contract(x: np.ndarray, sizes: Ints, out: Ints, transpose: bool) -> np.ndarray:
    """Contract each trailing spatial dim of x with its averaging matrix (or its transpose)."""
    nd = len(out)
    for axis, (s, o) in enumerate(zip(sizes, out)):
        matrix = adaptive_matrix(s, o, x.dtype)
        if transpose:
            matrix = matrix.T
        position = x.ndim - nd + axis
        x = np.moveaxis(np.tensordot(x, matrix, axes=([position], [1])), -1, position)
    return np.ascontiguousarray(x)


class AdaptiveAvgPool(Op):
    """out = A_h x A_w^T with averaging matrices A (one per spatial dim)"""

    node_name = "AdaptiveAvgPool2DBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self, output_size):
        sizes = self.shape[-len(output_size):]
        ctx.sizes, ctx.out = sizes, tuple(output_size)
        ctx.save_for_backward(self)
        return _layout.suggested(_contract(self, sizes, ctx.out, False), self)

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        return _transposed_class(ctx.out).apply(grad, self, ctx.sizes, ctx.out), None


def _transposed_class(out):
    return AdaptiveAvgPool3DTransposed if len(out) == 3 else AdaptiveAvgPoolTransposed


class AdaptiveAvgPoolTransposed(Op):
    """The adjoint of adaptive average pooling; like ``AvgPoolSpread``, with a zero-gradient
    edge to the pooled input, as torch's ``adaptive_avg_pool2d_backward``."""

    node_name = "AdaptiveAvgPool2DBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, self, sizes, out):
        ctx.sizes, ctx.out = sizes, out
        ctx.self_meta = (self.shape, self.dtype)
        return _contract(grad, sizes, out, True)

    @staticmethod
    def backward(ctx, grad):
        again = _AdaptiveAvgPool3DAgain if len(ctx.out) == 3 else _AdaptiveAvgPoolAgain
        return (again.apply(grad, ctx.sizes, ctx.out) if ctx.needs_input_grad[0] else None,
                _zeros(ctx.self_meta) if ctx.needs_input_grad[1] else None, None, None)


class _AdaptiveAvgPoolAgain(Op):
    node_name = "AdaptiveAvgPool2DBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, values, sizes, out):
        ctx.sizes, ctx.out = sizes, out
        ctx.save_for_backward(values)
        return _contract(values, sizes, out, False)

    @staticmethod
    def backward(ctx, grad):
        (values,) = ctx.saved_tensors
        return _transposed_class(ctx.out).apply(grad, values, ctx.sizes, ctx.out), None, None


class AdaptiveAvgPool3DTransposed(AdaptiveAvgPoolTransposed):
    node_name = "AdaptiveAvgPool3DBackwardBackward0"


class _AdaptiveAvgPool3DAgain(_AdaptiveAvgPoolAgain):
    node_name = "AdaptiveAvgPool3DBackward0"


class ChannelsLastGlobalMean(Op):
    """torch's ``adaptive_avg_pool2d(x, 1)`` of a channels-last input: the mean, re-strided in
    place to channels-last strides ``(C, 1, C, C)`` (only size-1 dims change stride, so the
    values and the gradient map one to one)"""

    node_name = "AsStridedBackward1"

    @staticmethod
    def forward(ctx, self):
        return _layout.channels_last(np.array(self))

    @staticmethod
    def backward(ctx, grad):
        return grad
