"""Convolution (torch's ``convolution``: conv1d/2d/3d and their transposes) on strided views.

Three NumPy kernels do all the work, for any number of spatial dims:

* ``correlate``: the window of every output position is a strided view of the padded input
  (no copy); one copy lays the windows out as columns and a batched GEMM applies the weight.
* ``correlate_input_grad`` (also conv_transpose's forward): with stride 1 a correlation with the
  flipped kernel; otherwise GEMM back to columns, then one strided add per kernel offset (a loop
  over kernel terms, never over pixels).
* ``correlate_weight_grad``: the columns again (laid out for one GEMM) times the output gradient.

A convolution's gradients are themselves convolutions, so ``backward`` calls ``Convolution`` and
``ConvolutionWeight`` again: double backward comes out of the same three kernels.

A large batch runs in slices bounded by ``WORKSPACE_BYTES``; with several intra-op threads the
slices run on the pool, each GEMM on one BLAS thread (see ``_batch_parts``).
"""
from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import as_strided
from ... import _blas, _parallel
from ...autograd import grad_mode
from ...ops import _layout
from ...tensor import Tensor
from ...ops._base import _ARRAY_DTYPES, HALF_TYPES, Op


Ints = tuple


def output_size(size: Ints, kernel: Ints, stride: Ints, padding: Ints, dilation: Ints) -> Ints:
    """Positions a window fits in: floor((S + 2p - d(k-1) - 1) / s) + 1 per spatial dim."""
    return tuple((s + 2 * p - d * (k - 1) - 1) // st + 1
                 for s, k, st, p, d in zip(size, kernel, stride, padding, dilation))


def transposed_size(size: Ints, kernel: Ints, stride: Ints, padding: Ints, dilation: Ints,
                    output_padding: Ints) -> Ints:
    """conv_transpose's output: (S - 1) s - 2p + d(k-1) + output_padding + 1."""
    return tuple((s - 1) * st - 2 * p + d * (k - 1) + op + 1
                 for s, k, st, p, d, op in zip(size, kernel, stride, padding, dilation,
                                               output_padding))


def _pad(x: np.ndarray, padding: Ints) -> np.ndarray:
    if not any(padding):
        return x
    shape = x.shape[:2] + tuple(s + 2 * p for s, p in zip(x.shape[2:], padding))
    out = np.zeros(shape, x.dtype)
    out[(slice(None), slice(None)) + tuple(slice(p, p + s) for p, s in
                                           zip(padding, x.shape[2:]))] = x
    return out


def windows(x: np.ndarray, out: Ints, kernel: Ints, stride: Ints, dilation: Ints) -> np.ndarray:
    """A read-only (N, C, *out, *kernel) view of ``x``: the window seen by each output position."""
    spatial = x.strides[2:]
    strides = (x.strides[:2] + tuple(s * st for s, st in zip(spatial, stride))
               + tuple(s * d for s, d in zip(spatial, dilation)))
    return as_strided(x, x.shape[:2] + tuple(out) + tuple(kernel), strides, writeable=False)


def _columns(x: np.ndarray, kernel: Ints, out: Ints, stride: Ints, padding: Ints,
             dilation: Ints, groups: int) -> np.ndarray:
    """im2col: (N, groups, C/groups * prod(kernel), prod(out)), one copy of the windows."""
    nd = len(kernel)
    view = windows(_pad(x, padding), out, kernel, stride, dilation)
    order = (0, 1) + tuple(range(2 + nd, 2 + 2 * nd)) + tuple(range(2, 2 + nd))
    columns = np.ascontiguousarray(view.transpose(order))
    return columns.reshape(x.shape[0], groups, -1, math.prod(out))


def _batch_columns(x: np.ndarray, kernel: Ints, out: Ints, stride: Ints, padding: Ints,
                   dilation: Ints, groups: int) -> np.ndarray:
    """im2col with the batch folded into the columns: (groups, C/groups * prod(kernel),
    N * prod(out)), so one GEMM per group covers the whole batch."""
    nd = len(kernel)
    view = windows(_pad(x, padding), out, kernel, stride, dilation)
    order = (1,) + tuple(range(2 + nd, 2 + 2 * nd)) + (0,) + tuple(range(2, 2 + nd))
    columns = np.ascontiguousarray(view.transpose(order))
    return columns.reshape(groups, -1, x.shape[0] * math.prod(out))


# OpenBLAS runs a GEMM on one thread when M * N * K is at most 4 * 65536 (its
# GEMM_MULTITHREAD_THRESHOLD times SMP_THRESHOLD_MIN). A stack of GEMMs above that size hands
# each one to the threads in turn, which with 2 threads was up to 10x slower than 1 on a busy
# machine; one GEMM over the whole batch pays that hand-off once.
SINGLE_THREAD_GEMM = 4 * 65536

# The most bytes one im2col / col2im workspace may take. A layer whose columns for the whole
# batch would be larger runs on slices of the batch, so the step's peak does not grow with a
# transient many times the layer's own output (a 3x3 kernel makes columns 9x its input). Each
# sample's columns, GEMM and scatter are the same as in one pass, so results do not change.
WORKSPACE_BYTES = 4 << 20


# Below this many bytes of workspace for the whole batch a layer stays on the calling thread
# (and BLAS keeps its own threads): each part handed to the pool costs a few GIL hand-overs.
# At 256 KiB the demo's digits CNN (a 295 KiB second layer cut into 4 slices) took 9.0 ms a
# step at 2 threads against 5.2 ms unsplit; at 1 MiB it takes 4.2 ms.
PARALLEL_BYTES = 1 << 20


def _batch_chunk(n: int, bytes_per_sample: int) -> int:
    """How many samples one workspace of at most ``WORKSPACE_BYTES`` holds (at least one)."""
    return max(1, min(n, WORKSPACE_BYTES // max(1, bytes_per_sample)))


def _batch_parts(n: int, bytes_per_sample: int) -> tuple[list[int], bool]:
    """Bounds of the slices of the batch, and whether they run on the pool.

    On one thread a slice is as large as one workspace allows. On several, each thread has a
    workspace of its own, so ``WORKSPACE_BYTES`` is shared among them (the peak stays bounded),
    and there are at least two slices a thread, so one slowed by another process leaves its
    share to the others; each slice's GEMM then runs on one BLAS thread."""
    threads = _parallel.get_num_threads()
    if (threads > 1 and n > 1 and n * bytes_per_sample >= PARALLEL_BYTES
            and _blas.available()):
        share = max(1, WORKSPACE_BYTES // threads // max(1, bytes_per_sample))
        chunk = max(1, min(share, -(-n // (2 * threads))))
        return list(range(0, n, chunk)) + [n], True
    chunk = _batch_chunk(n, bytes_per_sample)
    return list(range(0, n, chunk)) + [n], False


def _run_parts(bounds: list[int], body) -> None:
    """``body(start, stop)`` for each slice of ``bounds``, on the pool with one BLAS thread."""
    def run(first: int, last: int) -> None:
        for index in range(first, last):
            body(bounds[index], bounds[index + 1])

    with _blas.one_blas_thread():
        _parallel.parallel_for(len(bounds) - 1, 1, run, pieces_per_thread=len(bounds))


def _chunked(n: int, bytes_per_sample: int, compute, shape: Ints,
             dtype) -> "np.ndarray | None":
    """``compute(start, stop)`` over slices of the batch, stacked along it into an array of
    ``shape``; None when the whole batch is one slice on one thread (the caller then runs in
    one pass). Each sample's result does not depend on the slicing."""
    bounds, parallel = _batch_parts(n, bytes_per_sample)
    if len(bounds) == 2:
        return None
    result = np.empty(shape, dtype)

    def body(start: int, stop: int) -> None:
        result[start:stop] = compute(start, stop)  # the slice's workspace goes right after

    if parallel:
        _run_parts(bounds, body)
    else:
        for start, stop in zip(bounds[:-1], bounds[1:]):
            body(start, stop)
    return result


def correlate(x: np.ndarray, weight: np.ndarray, stride: Ints, padding: Ints, dilation: Ints,
              groups: int) -> np.ndarray:
    """y[n, o] = sum_{c, k} x_pad[n, c, s*i + d*k] w[o, c, k]  (torch's conv forward). The
    result may be a view in another memory order (the batch-wide GEMM's): callers lay it out."""
    kernel = weight.shape[2:]
    out = output_size(x.shape[2:], kernel, stride, padding, dilation)
    columns = x.shape[1] * math.prod(kernel) * math.prod(out) * x.itemsize
    chunked = _chunked(x.shape[0], columns, lambda start, stop: _correlate(
        x[start:stop], weight, stride, padding, dilation, groups),
        (x.shape[0], weight.shape[0]) + out, np.result_type(x, weight))
    if chunked is not None:
        return chunked
    return _correlate(x, weight, stride, padding, dilation, groups)


def _correlate(x: np.ndarray, weight: np.ndarray, stride: Ints, padding: Ints, dilation: Ints,
               groups: int) -> np.ndarray:
    kernel = weight.shape[2:]
    out = output_size(x.shape[2:], kernel, stride, padding, dilation)
    matrix = weight.reshape(groups, weight.shape[0] // groups, -1)
    if matrix.shape[1] * matrix.shape[2] * math.prod(out) > SINGLE_THREAD_GEMM:
        columns = _batch_columns(x, kernel, out, stride, padding, dilation, groups)
        result = np.matmul(matrix, columns)
        # (N, out channels, *out) as a view of the (out channels, N, *out) product: its one copy
        # is made where it is stored (a slice of the batch's result, or the caller's layout)
        result = result.reshape((weight.shape[0], x.shape[0]) + out)
        return result.swapaxes(0, 1)
    columns = _columns(x, kernel, out, stride, padding, dilation, groups)
    if groups == 1:
        result = np.matmul(matrix[0], columns[:, 0])
    else:
        result = np.matmul(matrix, columns)
    return result.reshape((x.shape[0], weight.shape[0]) + out)


def correlate_input_grad(grad: np.ndarray, weight: np.ndarray, size: Ints, stride: Ints,
                         padding: Ints, dilation: Ints, groups: int) -> np.ndarray:
    """The adjoint of ``correlate`` in x; ``size`` is the spatial size of x (conv_transpose's
    output size). With stride 1 it is itself a correlation (flipped kernel, in and out channels
    swapped); otherwise each output position sends w^T grad back to its window (col2im)."""
    kernel = weight.shape[2:]
    reach = tuple(d * (k - 1) - p for k, d, p in zip(kernel, dilation, padding))
    natural = transposed_size(grad.shape[2:], kernel, stride, padding, dilation,
                              (0,) * len(kernel))
    if all(s == 1 for s in stride) and min(reach) >= 0 and tuple(size) == natural:
        return correlate(grad, _flipped(weight, groups), stride, reach, dilation, groups)
    return _col2im(grad, weight, size, stride, padding, dilation, groups)


def _flipped(weight: np.ndarray, groups: int) -> np.ndarray:
    """(out, in/g, *k) -> (in, out/g, *k) per group, every kernel dim reversed."""
    out_channels, in_per_group = weight.shape[:2]
    kernel = weight.shape[2:]
    grouped = weight.reshape((groups, out_channels // groups, in_per_group) + kernel)
    swapped = grouped.swapaxes(1, 2).reshape((in_per_group * groups, out_channels // groups)
                                             + kernel)
    reverse = (slice(None), slice(None)) + (slice(None, None, -1),) * len(kernel)
    return np.ascontiguousarray(swapped[reverse])


def _col2im(grad, weight, size, stride, padding, dilation, groups) -> np.ndarray:
    columns = weight.shape[1] * groups * math.prod(weight.shape[2:]) * math.prod(grad.shape[2:])
    chunked = _chunked(grad.shape[0], columns * grad.itemsize, lambda start, stop: _col2im_all(
        grad[start:stop], weight, size, stride, padding, dilation, groups),
        (grad.shape[0], weight.shape[1] * groups) + tuple(size), grad.dtype)
    if chunked is not None:
        return chunked
    return _col2im_all(grad, weight, size, stride, padding, dilation, groups)


def _col2im_all(grad, weight, size, stride, padding, dilation, groups) -> np.ndarray:
    n, out_channels = grad.shape[:2]
    out = grad.shape[2:]
    kernel = weight.shape[2:]
    channels = weight.shape[1] * groups
    matrix = weight.reshape(groups, out_channels // groups, -1)
    if matrix.shape[1] * matrix.shape[2] * math.prod(out) > SINGLE_THREAD_GEMM:
        # one GEMM per group over the whole batch; the columns come out as (C, *k, N, *out)
        flat = np.ascontiguousarray(grad.reshape(n, groups, out_channels // groups, -1)
                                    .transpose(1, 2, 0, 3)).reshape(groups, -1, n * math.prod(out))
        columns = np.matmul(matrix.transpose(0, 2, 1), flat)
        columns = columns.reshape((channels,) + tuple(kernel) + (n,) + tuple(out))
        columns = np.moveaxis(columns, 1 + len(kernel), 0)
    else:
        flat = grad.reshape(n, groups, out_channels // groups, math.prod(out))
        if groups == 1:
            columns = np.matmul(matrix[0].T, flat[:, 0])
        else:
            columns = np.matmul(matrix.transpose(0, 2, 1), flat)
        columns = columns.reshape((n, channels) + tuple(kernel) + tuple(out))
    padded = np.zeros((n, channels) + tuple(s + 2 * p for s, p in zip(size, padding)),
                      grad.dtype)
    every = (slice(None), slice(None))
    for offset in np.ndindex(*kernel):
        target = tuple(slice(k * d, k * d + st * (o - 1) + 1, st)
                       for k, d, st, o in zip(offset, dilation, stride, out))
        padded[every + target] += columns[every + offset]
    return padded[every + tuple(slice(p, p + s) for p, s in zip(padding, size))]


def correlate_weight_grad(x: np.ndarray, grad: np.ndarray, kernel: Ints, stride: Ints,
                          padding: Ints, dilation: Ints, groups: int) -> np.ndarray:
    """The adjoint of ``correlate`` in w: gw[o, c, k] = sum_{n,i} grad[n, o, i] x_pad[n, c, ..];
    one GEMM per group over columns laid out (group, C/g * k, N * out); a batch whose columns
    and laid-out grad exceed ``WORKSPACE_BYTES`` is summed over slices of it."""
    n, out_channels = grad.shape[:2]
    out = grad.shape[2:]
    # per sample: its columns and its slice of grad laid out for the GEMM (a copy)
    bounds, parallel = _batch_parts(n, (x.shape[1] * math.prod(kernel) + out_channels)
                                    * math.prod(out) * x.itemsize)
    if len(bounds) == 2:
        return _weight_grad_all(x, grad, kernel, stride, padding, dilation, groups)
    slices = list(zip(bounds[:-1], bounds[1:]))
    if not parallel:  # one slice at a time, each summed in before the next is made
        total = None
        for start, stop in slices:
            part = _weight_grad_all(x[start:stop], grad[start:stop], kernel, stride, padding,
                                    dilation, groups)
            total = part if total is None else np.add(total, part, out=total)
        return total
    parts = {}

    def body(start: int, stop: int) -> None:
        parts[start] = _weight_grad_all(x[start:stop], grad[start:stop], kernel, stride,
                                        padding, dilation, groups)

    _run_parts(bounds, body)
    total = parts[0]
    for start, _ in slices[1:]:  # summed in batch order, whichever slice finished first
        np.add(total, parts[start], out=total)
    return total


# A weight gradient with at most this many elements per group is summed from one GEMM per
# sample instead of one GEMM over the whole batch. Its output is then too small for BLAS to
# block well (a K of N * positions against a few hundred outputs), and laying the incoming
# gradient out for that GEMM copies more than the GEMM computes per element (depth C * k is
# small). Measured on one thread and two: the CNN's first layer (1 -> 32 channels, 3x3, 28x28,
# batch 64) took 0.30-0.32 of the time, RGB 3x3 layers 0.28-0.51; gradients from 4608 elements
# up (16 -> 32 channels, 3x3) were as fast or up to 11 % slower this way.
PER_SAMPLE_WEIGHT_GRAD = 4096


def _weight_grad_all(x, grad, kernel, stride, padding, dilation, groups) -> np.ndarray:
    n, out_channels = grad.shape[:2]
    out = grad.shape[2:]
    per_group, depth = out_channels // groups, x.shape[1] // groups * math.prod(kernel)
    if per_group * depth <= PER_SAMPLE_WEIGHT_GRAD:
        columns = _columns(x, kernel, out, stride, padding, dilation, groups)  # (N, g, depth, P)
        products = np.matmul(grad.reshape(n, groups, per_group, -1),
                             columns.transpose(0, 1, 3, 2))  # (N, g, per_group, depth)
        return products.sum(0).reshape((out_channels, x.shape[1] // groups) + tuple(kernel))
    columns = _batch_columns(x, kernel, out, stride, padding, dilation, groups)
    flat = np.ascontiguousarray(grad.reshape(n, groups, out_channels // groups, -1)
                                .transpose(1, 2, 0, 3)).reshape(groups, out_channels // groups, -1)
    # columns times grad^T, then transposed (a few hundred elements): OpenBLAS runs the product
    # with the depth as rows 0.79-0.89 of the time of grad times columns^T (the CNN's second
    # layer, 3x3 layers of 16-64 channels, 1 and 2 threads), with the same sums in the same order
    result = np.matmul(columns, flat.transpose(0, 2, 1)).transpose(0, 2, 1)
    return np.ascontiguousarray(result).reshape((out_channels, x.shape[1] // groups)
                                                + tuple(kernel))


def _wide(array: np.ndarray) -> np.ndarray:
    return array.astype(np.float32)


class Convolution(Op):
    """torch.convolution: y = x (*) w + b, or its transpose; d/dx and d/dw are convolutions."""

    node_name = "ConvolutionBackward0"
    saved_names = ("input", "weight")
    # the settings torch's node keeps; bias_sym_sizes_opt is (0,) without a bias
    saved_values = {"stride": "stride", "padding": "padding", "dilation": "dilation",
                    "transposed": "transposed", "output_padding": "output_padding",
                    "groups": "groups", "bias_sym_sizes_opt": "bias_sizes"}
    _wrapped_scalars = (2,)  # a missing bias keeps its edge, (None, 0), as in torch's node

    @staticmethod
    def forward(ctx, input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
        ctx.stride, ctx.padding, ctx.dilation = stride, padding, dilation
        ctx.transposed, ctx.groups = transposed, groups
        ctx.output_padding = output_padding
        ctx.bias_sizes = (0,) if bias is None else bias.shape
        ctx.input_size = input.shape[2:]
        ctx.save_for_backward(input, weight)
        low = input.dtype if input.dtype in HALF_TYPES else None
        if low is not None:  # accumulated in float32 and rounded once, as torch's CPU kernel
            input, weight = _wide(input), _wide(weight)
            bias = None if bias is None else _wide(bias)
        if transposed:
            size = transposed_size(input.shape[2:], weight.shape[2:], stride, padding, dilation,
                                   output_padding)
            result = correlate_input_grad(input, weight, size, stride, padding, dilation, groups)
        else:
            result = correlate(input, weight, stride, padding, dilation, groups)
        if bias is not None:
            result = result + bias.reshape((-1,) + (1,) * (input.ndim - 2))
        if low is not None:
            result = result.astype(low)
        # channels-last when the input or the weight is, as torch's CPU convolutions
        return _layout.suggested(result, input if _layout.suggests_channels_last(input)
                                 else weight)

    @staticmethod
    def backward(ctx, grad):
        input, weight = ctx.saved_tensors
        stride, padding, dilation = ctx.stride, ctx.padding, ctx.dilation
        groups = ctx.groups
        zeros = (0,) * len(stride)
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[1]:
            first, second = (grad, input) if ctx.transposed else (input, grad)
            grad_weight = ConvolutionWeight.apply(first, second, weight.shape[2:], stride,
                                                  padding, dilation, groups)
            first = second = None
        # the input is read by the weight's gradient only: a saver's decoded copy goes before the
        # input's gradient and its workspace are made
        input = None
        if ctx.needs_input_grad[0]:
            if ctx.transposed:
                grad_input = _crop(GradConvolution.apply(grad, weight, None, stride, padding,
                                                         dilation, False, zeros, groups),
                                   ctx.input_size)
            else:
                natural = transposed_size(grad.shape[2:], weight.shape[2:], stride, padding,
                                          dilation, zeros)
                extra = tuple(s - m for s, m in zip(ctx.input_size, natural))
                grad_input = GradConvolution.apply(grad, weight, None, stride, padding,
                                                   dilation, True, extra, groups)
        if ctx.needs_input_grad[2]:
            grad_bias = _bias_grad(grad)
        return grad_input, grad_weight, grad_bias


def _bias_grad(grad: Tensor) -> Tensor:
    """grad summed over the batch and the positions. Without a graph of it, a float32/64
    C-ordered gradient is summed per (sample, channel) row by BLAS, then over the batch: NumPy's
    sum over axes (0, 2, 3) took 2.6-3.3x as long (the CNN's two layers, one thread)."""
    data = grad._data
    if (grad_mode.is_grad_enabled() or data.dtype not in _ARRAY_DTYPES
            or not data.flags.c_contiguous or data.size == 0 or type(grad) is not Tensor):
        return grad.sum((0,) + tuple(range(2, grad.ndim)))
    batch, channels = data.shape[:2]
    rows = data.reshape(batch * channels, -1)
    per_row = _blas.matvec(rows, np.ones(rows.shape[1], data.dtype))
    return Tensor._make(per_row.reshape(batch, channels).sum(0))



class GradConvolution(Convolution):
    """A convolution computing a gradient (the node torch names ConvolutionBackwardBackward0)."""

    node_name = "ConvolutionBackwardBackward0"


class ConvolutionWeight(Op):
    """The weight gradient of a correlation, bilinear in (x, grad): its own gradients are a
    transposed convolution (for x) and a convolution (for grad) with the incoming weight-grad."""

    node_name = "ConvolutionBackwardBackward0"
    saved_names = ("input", "grad_output")

    @staticmethod
    def forward(ctx, input, grad_output, kernel, stride, padding, dilation, groups):
        ctx.stride, ctx.padding, ctx.dilation, ctx.groups = stride, padding, dilation, groups
        ctx.input_size = input.shape[2:]
        ctx.save_for_backward(input, grad_output)
        if input.dtype in HALF_TYPES:
            return correlate_weight_grad(_wide(input), _wide(grad_output), kernel, stride,
                                         padding, dilation, groups).astype(input.dtype)
        return correlate_weight_grad(input, grad_output, kernel, stride, padding, dilation,
                                     groups)

    @staticmethod
    def backward(ctx, grad):
        input, grad_output = ctx.saved_tensors
        stride, padding, dilation, groups = ctx.stride, ctx.padding, ctx.dilation, ctx.groups
        grad_input = grad_grad_output = None
        if ctx.needs_input_grad[0]:
            natural = transposed_size(grad_output.shape[2:], grad.shape[2:], stride, padding,
                                      dilation, (0,) * len(stride))
            extra = tuple(s - m for s, m in zip(ctx.input_size, natural))
            grad_input = Convolution.apply(grad_output, grad, None, stride, padding, dilation,
                                           True, extra, groups)
        if ctx.needs_input_grad[1]:
            grad_grad_output = _crop(Convolution.apply(input, grad, None, stride, padding,
                                                       dilation, False, (0,) * len(stride),
                                                       groups), grad_output.shape[2:])
        return grad_input, grad_grad_output


def _crop(tensor, size: Ints):
    """The leading ``size`` of each spatial dim: an output_padding of at least the stride (legal
    when it is below the dilation) adds positions whose windows start past the input's end."""
    for axis, length in enumerate(size):
        if tensor.shape[2 + axis] != length:
            tensor = tensor.narrow(2 + axis, 0, length)
    return tensor


def _type_name(tensor: Tensor) -> str:
    return {"float64": "Double", "float32": "Float", "float16": "Half", "int64": "Long",
            "int32": "Int"}.get(tensor._data.dtype.name, tensor._data.dtype.name)


def check_args(name, input, weight, bias, nd, stride, padding, dilation, groups, transposed):
    """torch's argument checks of a convolution, with its messages, before any work is done."""
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(input.shape)}")
    if weight._data.dtype != input._data.dtype:
        raise RuntimeError(f"expected scalar type {_type_name(input)} but found "
                           f"{_type_name(weight)}")
    if bias is not None and bias._data.dtype != input._data.dtype:
        raise RuntimeError(f"Input type ({_type_name(input).lower()}) and bias type "
                           f"({_type_name(bias).lower()}) should be the same")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    shape = list(weight.shape)
    if weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{shape}] instead")
    channels = weight.shape[0] if transposed else weight.shape[1] * groups
    if input.shape[1] != channels:
        flag = "transposed=1, " if transposed else f"groups={groups}, "
        raise RuntimeError(f"Given {flag}weight of size {shape}, expected input"
                           f"{list(input.shape)} to have {channels} channels, but got "
                           f"{input.shape[1]} channels instead")
    outputs = weight.shape[1] * groups if transposed else weight.shape[0]
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != outputs):
        raise RuntimeError(f"Given weight of size {shape}, expected bias to be 1-dimensional "
                           f"with {outputs} elements, but got bias of size {list(bias.shape)} "
                           "instead")
    if not transposed:
        padded = [s + 2 * p for s, p in zip(input.shape[2:], padding)]
        kernel = [d * (k - 1) + 1 for k, d in zip(weight.shape[2:], dilation)]
        if any(k > s for k, s in zip(kernel, padded)):
            raise RuntimeError(f"Calculated padded input size per channel: "
                               f"({' x '.join(map(str, padded))}). Kernel size: "
                               f"({' x '.join(map(str, kernel))}). Kernel size can't be greater "
                               "than actual input size")
