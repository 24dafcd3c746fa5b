"""fractional_max_pool2d/3d: max pooling whose window starts step by a random, non-integer
stride (Graham, "Fractional Max-Pooling", 2014).

Each plane draws one number u in [0, 1) per pooled dim (``_random_samples``, shape
(N, C, nd)); along a dim of size L pooled to O windows of size k the starts are
``int((i + u) a) - int(u a)`` with ``a = (L - k) / (O - 1)``, worked in the input's dtype as
torch's kernel does (so a float32 sample gives float32 rounding), and the last start is
``L - k``. The 2-D kernel reads a plane's samples as (W, H), the 3-D one as (T, H, W).
A window's result is its first largest value, or its last NaN, with the in-plane flat index.
"""
from __future__ import annotations

import math

import numpy as np

from ...ops._base import Op, through_saved
from ...tensor import Tensor
from .pooling import MaxPoolScatter

_DIM_NAMES = {2: ("height", "width"), 3: ("time", "height", "width")}


def _starts(samples: np.ndarray, size: int, out: int, kernel: int) -> np.ndarray:
    """(P, out) window starts along one dim for P planes' samples, in the samples' dtype."""
    dtype = samples.dtype.type
    starts = np.empty((samples.shape[0], out), np.int64)
    if out > 1:
        alpha = dtype(size - kernel) / dtype(out - 1)
        steps = np.arange(out - 1).astype(samples.dtype)
        with np.errstate(invalid="ignore"):
            ahead = ((steps + samples[:, None]) * alpha).astype(np.int64)
            offset = (samples * alpha).astype(np.int64)
        starts[:, :-1] = ahead - offset[:, None]
    if out > 0:
        starts[:, -1] = size - kernel
    return starts


def _pool(planes: np.ndarray, samples: np.ndarray, kernel: tuple, output_size: tuple):
    """Values and in-plane flat indices of the windows of ``planes`` (P, *sizes)."""
    nd = len(kernel)
    count, sizes = planes.shape[0], planes.shape[1:]
    starts = [_starts(samples[:, d], sizes[d], output_size[d], kernel[d]) for d in range(nd)]
    # window positions along dim d, shaped (P, 1.., O_d, 1.., K_d, 1..) to broadcast into
    # (P, O_1, ..., O_nd, K_1, ..., K_nd)
    rows = []
    for d in range(nd):
        shape = [count] + [1] * (2 * nd)
        shape[1 + d], shape[1 + nd + d] = output_size[d], max(kernel[d], 0)
        rows.append((starts[d][:, :, None] + np.arange(max(kernel[d], 0))).reshape(shape))
    plane_index = np.arange(count).reshape([count] + [1] * (2 * nd))
    windows = planes[(plane_index,) + tuple(rows)]
    window = math.prod(max(k, 0) for k in kernel)
    flat = windows.reshape((count,) + tuple(output_size) + (window,))
    head = tuple(starts[d].reshape([count] + [output_size[d] if e == d else 1
                                              for e in range(nd)]) for d in range(nd))
    if window == 0:  # an empty window: -inf at its start, as torch's loop leaves it
        offsets = [0] * nd
        values = np.full(flat.shape[:-1], -np.inf, planes.dtype)
    else:
        nan = np.isnan(flat)
        first_max = np.argmax(np.where(nan, -np.inf, flat), axis=-1)
        last_nan = window - 1 - np.argmax(nan[..., ::-1], axis=-1)
        best = np.where(nan.any(axis=-1), last_nan, first_max)
        values = np.take_along_axis(flat, best[..., None], -1)[..., 0]
        offsets = np.unravel_index(best, kernel)
    position = np.zeros(flat.shape[:-1], np.int64)
    for d in range(nd):
        position = position * sizes[d] + head[d] + offsets[d]
    return values, position


class FractionalMaxPool2D(Op):
    """out = max over each fractional window; backward scatters grad to the argmax positions"""

    node_name = "FractionalMaxPool2DBackward0"
    saved_names = ("self", "result1")

    @staticmethod
    def forward(ctx, self, kernel_size, output_size, samples):
        nd = len(kernel_size)
        lead = self.shape[:-nd]
        planes = self.reshape((-1,) + self.shape[-nd:])
        samples = samples.reshape(-1, nd)
        if nd == 2:  # the 2-D kernel keeps a plane's samples as (W, H)
            samples = samples[:, ::-1]
        values, indices = _pool(planes, np.ascontiguousarray(samples), kernel_size, output_size)
        shape = lead + tuple(output_size)
        indices = indices.reshape(shape)
        ctx._saved_kernel_size, ctx._saved_output_size = kernel_size, output_size
        ctx.self_shape, ctx.nd = self.shape, nd
        ctx.save_for_backward(self, indices)
        return values.reshape(shape), indices

    @staticmethod
    def backward(ctx, grad, _grad_indices=None):
        self, indices = ctx.saved_tensors
        grad = through_saved(grad, self)
        scatter = _FractionalScatter2D if ctx.nd == 2 else _FractionalScatter3D
        return scatter.apply(grad, indices._data, ctx.self_shape, ctx.nd), None, None, None


class FractionalMaxPool3D(FractionalMaxPool2D):
    node_name = "FractionalMaxPool3DBackward0"


class _FractionalScatter2D(MaxPoolScatter):
    """The gradient of fractional max pooling: grad added at the argmax positions."""

    node_name = "FractionalMaxPool2DBackwardBackward0"
    saved_names = ("indices",)


class _FractionalScatter3D(_FractionalScatter2D):
    node_name = "FractionalMaxPool3DBackwardBackward0"


def _sizes(value, nd: int) -> tuple:
    return (int(value),) * nd if isinstance(value, (int, np.integer)) else tuple(value)


def _check(nd: int, input: Tensor, kernel: tuple, output_size: tuple, samples: Tensor) -> None:
    """torch's checks of the native op, in its order and words."""
    name = f"fractional_max_pool{nd}d"
    words = "tuple of Ints" if nd == 2 else "tuple of three Ints"
    if len(kernel) != nd:
        raise RuntimeError(f"{name}: kernel_size must either be a single Int or {words}")
    if len(output_size) != nd:
        raise RuntimeError(f"{name}: output_size must either be a single Int or {words}")
    prefix = f"{name}()" if nd == 2 else f"{name}_out()"
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{prefix}: Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    for dim in range(input.ndim - nd - 1, input.ndim):
        if input.shape[dim] == 0 and dim > 0:
            raise RuntimeError(f"{prefix}: Expected input to have non-zero size for non-batch "
                               f"dimensions, but got{list(input.shape)} with dimension {dim} "
                               "being empty.")
    # the 2-D check allows the windows to reach the last element, the 3-D one stops short
    reach = 0 if nd == 2 else 1
    order = (0, 1) if nd == 2 else (0, 2, 1)
    for d in order:
        k, size = kernel[d], input.shape[input.ndim - nd + d]
        if output_size[d] + k - 1 + reach > size:
            raise RuntimeError(f"{prefix}: pool {_DIM_NAMES[nd][d]} {k} too large relative to "
                               f"input {_DIM_NAMES[nd][d]} {size}")
    if samples.dtype != input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.ndim != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.ndim}")
    batch = input.shape[0] if input.ndim == nd + 2 else 1
    if samples.shape[0] < batch:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != input.shape[-nd - 1]:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != nd:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got "
                           f"{samples.shape[2]}.")
    for o in output_size:
        if o < 0:
            shape = list(input.shape[:-nd]) + list(output_size)
            raise RuntimeError(f"Trying to create tensor with negative dimension {o}: {shape}")


def _fractional(nd: int, input: Tensor, kernel_size, output_size, output_ratio,
                random_samples) -> tuple:
    from ...ops.random import rand

    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if nd == 2 and len(output_ratio) > 2:
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple "
                             "of Ints.")
        ratio = ((output_ratio,) * nd if isinstance(output_ratio, (int, float))
                 else tuple(output_ratio))
        output_size = [int(input.size(d - nd) * ratio[d]) for d in range(nd)]
    if random_samples is None:
        batch = 1 if input.dim() == nd + 1 else input.size(0)
        random_samples = rand(batch, input.size(-nd - 1), nd, dtype=input.dtype)
    kernel, output_size = _sizes(kernel_size, nd), _sizes(output_size, nd)
    _check(nd, input, kernel, output_size, random_samples)
    batch = input.shape[0] if input.ndim == nd + 2 else 1
    samples = random_samples._data[:batch]
    cls = FractionalMaxPool2D if nd == 2 else FractionalMaxPool3D
    return cls.apply(input, kernel, output_size, samples)


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size, output_size=None,
                                       output_ratio=None, return_indices: bool = False,
                                       _random_samples: Tensor = None):
    """(values, flat in-plane indices) of 2-D fractional max pooling to ``output_size`` (or
    ``output_ratio`` of the input's size); the per-plane samples are drawn with ``rand``
    from the default generator, as torch draws them, unless ``_random_samples`` is given."""
    return _fractional(2, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool2d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples: Tensor = None):
    """Max over ``kernel_size`` windows placed at pseudo-random fractional strides so the
    result has ``output_size`` (or ``output_ratio`` of the input); with ``return_indices``
    also the flat in-plane index of each max (for ``max_unpool2d``)."""
    output, indices = _fractional(2, input, kernel_size, output_size, output_ratio,
                                  _random_samples)
    return (output, indices) if return_indices else output


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size, output_size=None,
                                       output_ratio=None, return_indices: bool = False,
                                       _random_samples: Tensor = None):
    """(values, flat in-volume indices) of 3-D fractional max pooling."""
    return _fractional(3, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool3d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples: Tensor = None):
    """3-D fractional max pooling (see ``fractional_max_pool2d``); with ``return_indices``
    also the flat in-volume index of each max."""
    output, indices = _fractional(3, input, kernel_size, output_size, output_ratio,
                                  _random_samples)
    return (output, indices) if return_indices else output


__all__ = ["fractional_max_pool2d", "fractional_max_pool2d_with_indices",
           "fractional_max_pool3d", "fractional_max_pool3d_with_indices"]
