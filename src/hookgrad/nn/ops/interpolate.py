"""Resizing: ``interpolate`` (nearest, nearest-exact, linear, bilinear, bicubic, trilinear, area)
and its old names ``upsample``, ``upsample_nearest``, ``upsample_bilinear``.

Every mode but ``area`` is separable: each output position along one spatial axis reads a few
input positions ("taps", 1 for nearest, 2 for linear, 4 for cubic) with weights, so the op is a
sequence of per-axis gathers-and-weighted-sums, last axis first (torch's kernel sums the inner
axis first too). Its adjoint scatters back along the same taps; as the tap indices never
decrease along an axis, the scatter is one ``np.add.reduceat`` per tap. The op is linear in its
input, so backward is the adjoint and the adjoint's backward is the op: nothing is saved.
Indices and weights follow torch's CPU formulas, including their float32 arithmetic.
"""
from __future__ import annotations

import math
import numbers
from typing import Optional

import numpy as np

from ..._warnings import warn
from ...ops import _layout
from ...ops._base import Op
from ...tensor import Tensor
from . import pooling as _pool
from .pool3d import adaptive_avg_pool3d

_CUBIC_A = -0.75
_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact")


# -- per-axis taps -------------------------------------------------------------------------------
def _scale_value(dtype, scale: Optional[float], in_size: int, out_size: int):
    """torch's compute_scales_value: 1 / scale_factor when one is in force, else in / out."""
    if scale is not None and scale > 0:
        return dtype(1.0 / scale)
    return dtype(in_size) / dtype(out_size)


def _nearest_index(in_size: int, out_size: int, scale, exact: bool,
                   shortcut: bool) -> np.ndarray:
    """Source index of each output position (float32 scale, as torch computes it). torch's 2-D
    kernel copies when the size is kept and halves when it doubles, whatever the scale; the 1-D
    and 3-D kernels do so in backward only (so their gradient is not the forward's adjoint when
    a scale_factor gives exactly twice the size: we follow torch)."""
    dst = np.arange(out_size)
    if shortcut and out_size == in_size:
        return dst
    if shortcut and out_size == 2 * in_size:
        return dst >> 1
    ratio = _scale_value(np.float32, scale, in_size, out_size)
    if exact:  # (dst + 0.5) is a double in torch's code; floorf rounds it to float first
        source = np.floor(((dst + 0.5) * np.float64(ratio)).astype(np.float32))
    else:
        source = np.floor(dst.astype(np.float32) * ratio)
    return np.minimum(source.astype(np.int64), in_size - 1)


def _source(in_size: int, out_size: int, align_corners: bool, scale, dtype, cubic: bool):
    """Real-valued source coordinate of each output position (torch's
    area_pixel_compute_source_index), in the op's math type."""
    dst = np.arange(out_size).astype(dtype)
    if align_corners:
        ratio = dtype(in_size - 1) / dtype(out_size - 1) if out_size > 1 else dtype(0)
        return (ratio * dst).astype(dtype)
    ratio = _scale_value(dtype, scale, in_size, out_size)
    source = (ratio * (dst + dtype(0.5)) - dtype(0.5)).astype(dtype)
    return source if cubic else np.maximum(source, dtype(0))


def _guard(source: np.ndarray, in_size: int):
    """Integer part (at most in_size - 1) and fraction clamped to [0, 1]."""
    index = np.minimum(np.floor(source.astype(np.float32)).astype(np.int64), in_size - 1)
    fraction = np.clip(source - index.astype(source.dtype), 0, 1).astype(source.dtype)
    return index, fraction


def _cubic_weights(t: np.ndarray) -> list:
    """Keys' cubic convolution weights (A = -0.75) of the four taps around fraction t."""
    a = t.dtype.type(_CUBIC_A)

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    one = t.dtype.type(1)
    return [far(t + one), near(t), near(one - t), far(one - t + one)]


def axis_taps(in_size: int, out_size: int, mode: str, align_corners: bool, scale, dtype,
              adjoint: bool = False):
    """(indices, weights) of one axis: lists of (out_size,) arrays, one per tap; weights is
    None for the nearest modes (one tap of weight 1)."""
    if mode.startswith("nearest"):
        shortcut = mode == "nearest-2d" or (adjoint and mode == "nearest-floor")
        return [_nearest_index(in_size, out_size, scale, mode == "nearest-exact",
                               shortcut)], None
    dtype = np.dtype(dtype).type
    if mode == "cubic":
        index, t = _guard(_source(in_size, out_size, align_corners, scale, dtype, True), in_size)
        indices = [np.clip(index - 1 + j, 0, in_size - 1) for j in range(4)]
        return indices, _cubic_weights(t)
    if out_size == in_size:  # torch copies when the size is unchanged
        return [np.arange(out_size)], None
    index, lam = _guard(_source(in_size, out_size, align_corners, scale, dtype, False), in_size)
    upper = index + (index < in_size - 1)
    return [index, upper], [(dtype(1) - lam).astype(dtype), lam]


def _plan_taps(plan: tuple, dtype, adjoint: bool = False) -> list:
    return [axis_taps(i, o, mode, align, scale, dtype, adjoint)
            for i, o, mode, align, scale in plan]


def _shaped(weight: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    return weight.reshape((-1,) + (1,) * (ndim - 1 - axis))


def _resample(x: np.ndarray, plan: tuple) -> np.ndarray:
    nd = len(plan)
    for position, (indices, weights) in reversed(list(enumerate(_plan_taps(plan, x.dtype)))):
        axis = x.ndim - nd + position
        if weights is None:
            x = np.take(x, indices[0], axis=axis)
            continue
        total = None
        for index, weight in zip(indices, weights):
            term = np.take(x, index, axis=axis) * _shaped(weight, axis, x.ndim)
            total = term if total is None else total + term
        x = total
    return np.ascontiguousarray(x)


def _scatter(values: np.ndarray, index: np.ndarray, axis: int, size: int) -> np.ndarray:
    """result[.., k, ..] = sum of values[.., o, ..] over o with index[o] == k (index sorted)."""
    starts = np.flatnonzero(np.r_[True, index[1:] != index[:-1]])
    summed = np.add.reduceat(values, starts, axis=axis)
    targets = index[starts]
    if targets.size == size and targets[0] == 0 and targets[-1] == size - 1:
        return summed  # every input position is hit, in order
    shape = list(values.shape)
    shape[axis] = size
    result = np.zeros(shape, values.dtype)
    target = [slice(None)] * values.ndim
    target[axis] = targets
    result[tuple(target)] = summed
    return result


def _resample_adjoint(grad: np.ndarray, plan: tuple) -> np.ndarray:
    nd = len(plan)
    for position, (indices, weights) in enumerate(_plan_taps(plan, grad.dtype, True)):
        axis = grad.ndim - nd + position
        size = plan[position][0]
        total = None
        for j, index in enumerate(indices):
            values = grad if weights is None else grad * _shaped(weights[j], axis, grad.ndim)
            term = _scatter(values, index, axis, size)
            total = term if total is None else total + term
        grad = total
    return np.ascontiguousarray(grad)


def _half_safe(kernel, x: np.ndarray, plan: tuple) -> np.ndarray:
    """float16 is computed in float32 and rounded once (torch's opmath)."""
    if x.dtype == np.float16:
        return kernel(x.astype(np.float32), plan).astype(np.float16)
    return kernel(x, plan)


_SCALE_NAMES = {1: ("scales",), 2: ("scales_h", "scales_w"), 3: ("scales_d", "scales_h",
                                                                   "scales_w")}


def _show_plan(ctx, shape: tuple, plan: tuple) -> None:
    """What torch's upsampling node shows: the input's sizes, the output size, the scale per
    axis (None where a size was given) and, for the interpolating modes, align_corners."""
    ctx._saved_self_sym_sizes = shape
    ctx._saved_output_size = tuple(output for _size, output, *_ in plan)
    for name, (*_, scale) in zip(_SCALE_NAMES[len(plan)], plan):
        setattr(ctx, "_saved_" + name, scale)
    if not plan[0][2].startswith("nearest"):
        ctx._saved_align_corners = plan[0][3]


class Resample(Op):
    """out = (T_1 x ... x T_d) x: one sparse tap matrix per spatial axis (linear in x)"""

    node_name = "UpsampleBackward0"

    @staticmethod
    def forward(ctx, input, plan):
        ctx.plan = plan
        _show_plan(ctx, input.shape, plan)
        return _layout.suggested(_half_safe(_resample, input, plan), input)

    @staticmethod
    def backward(ctx, grad):
        return ResampleAdjoint.apply(grad, ctx.plan), None


class ResampleAdjoint(Op):
    """grad_input = (T_1^T x ... x T_d^T) grad: the taps scattered back"""

    node_name = "UpsampleBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, plan):
        ctx.plan = plan
        return _half_safe(_resample_adjoint, grad, plan)

    @staticmethod
    def backward(ctx, grad):
        return Resample.apply(grad, ctx.plan), None


def _node_class(mode: str, nd: int) -> type:
    """A Resample whose node carries torch's name (UpsampleBilinear2DBackward0, ...)."""
    stem = {"nearest": "Nearest", "nearest-exact": "NearestExact", "linear": "Linear",
            "bilinear": "Bilinear", "trilinear": "Trilinear", "bicubic": "Bicubic"}[mode]
    name = f"Upsample{stem}{nd}D"
    return type(name, (Resample,), {"node_name": f"{name}Backward0", "__module__": __name__})


_NODES = {(mode, nd): _node_class(mode, nd)
          for mode, nd in [("nearest", 1), ("nearest", 2), ("nearest", 3), ("nearest-exact", 1),
                           ("nearest-exact", 2), ("nearest-exact", 3), ("linear", 1),
                           ("bilinear", 2), ("trilinear", 3), ("bicubic", 2)]}


# -- argument handling ---------------------------------------------------------------------------
def _is_integer(value) -> bool:
    if isinstance(value, Tensor):
        return value.dtype.is_floating_point is False and value.numel() == 1
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _output_geometry(input: Tensor, size, scale_factor, mode, recompute_scale_factor):
    """(output sizes, scales passed to the kernel or None per axis), torch's rules."""
    dim = input.ndim - 2
    spatial = list(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    scales = None
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {spatial} and output size of {size}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output "
                    "size in (o1, o2, ...,oK) format.")
            if not all(_is_integer(s) for s in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] "
                                "or Tuple[int, int, int], but got size with types "
                                f"{[type(s) for s in size]}")
            output = [int(s) for s in size]
        else:
            output = [int(size)] * dim
        if recompute_scale_factor:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
        return output, [None] * dim
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if isinstance(scale_factor, (list, tuple)):
        if len(scale_factor) != dim:
            raise ValueError(
                "Input and scale_factor must have the same number of spatial dimensions, but "
                f"got input with spatial dimensions of {spatial} and scale_factor of shape "
                f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                "and scale_factor in (s1, s2, ...,sK) format.")
        scales = [float(s) for s in scale_factor]
    else:
        scales = [float(scale_factor)] * dim
    output = [int(math.floor(s * f)) for s, f in zip(spatial, scales)]
    if mode == "area" or recompute_scale_factor:
        return output, [None] * dim
    return output, scales


def _area(input: Tensor, output: tuple) -> Tensor:
    """Adaptive average pooling, reached the way torch reaches it for each rank (1-D through a
    height-1 2-D pool, a (1, 1) output through a mean), so the nodes match too."""
    if len(output) == 3:
        return adaptive_avg_pool3d(input, output)
    if len(output) == 1:
        return _area(input.unsqueeze(-2), (1,) + output).squeeze(-2)
    if output == (1, 1):
        return input.mean((-1, -2), keepdim=True)
    return _pool.AdaptiveAvgPool.apply(input, output)


def _check_sizes(spatial: list, output: list) -> None:
    if all(s > 0 for s in spatial) and all(o > 0 for o in output):
        return
    names = "DHW"[-len(spatial):] if len(spatial) > 1 else "W"
    given = ", ".join(f"{n}: {s}" for n, s in zip(names, spatial))
    wanted = ", ".join(f"{n}: {o}" for n, o in zip(names, output))
    if len(spatial) == 2:
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({given}) output ({wanted})")
    raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                       f"({given}) and output ({wanted})")


def _check_dtype(input: Tensor, mode: str, nd: int) -> None:
    """Floating inputs everywhere, uint8 in the nearest modes; torch's kernel names otherwise."""
    dtype = input._data.dtype
    if dtype.kind in "fV" or (dtype == np.uint8 and mode.startswith("nearest")):
        return
    if dtype == np.uint8 and mode != "area":
        raise NotImplementedError(f"interpolate(mode={mode!r}) of uint8 input (torch's rounded "
                                  "integer path) is not implemented in hookgrad")
    if mode == "area":
        kernel = "adaptive_avg_pool3d_cpu" if nd == 3 else "adaptive_avg_pool2d"
    elif nd == 2 and mode != "bicubic":
        kernel = f"upsample_{'bilinear' if mode == 'bilinear' else 'nearest'}2d_channels_last"
    else:
        kernel = "compute_indices_weights_" + {"bicubic": "cubic", "linear": "linear",
                                               "trilinear": "linear"}.get(mode, "nearest")
    names = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
             "bool": "Bool"}
    name = names.get(dtype.name, dtype.name)
    raise NotImplementedError(f"\"{kernel}\" not implemented for '{name}'")


_WANTS = {"linear": 3, "bilinear": 4, "trilinear": 5}


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
                align_corners: Optional[bool] = None,
                recompute_scale_factor: Optional[bool] = None,
                antialias: bool = False) -> Tensor:
    """Resize the spatial dims of an (N, C, *spatial) tensor, as torch.nn.functional.interpolate.

    Differs from torch: ``antialias=True`` raises NotImplementedError (and uint8 input is
    refused outside the nearest modes).
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    output, scales = _output_geometry(input, size, scale_factor, mode, recompute_scale_factor)
    if antialias:
        if not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
            raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                             "modes and requires a 4-D tensor as input")
        raise NotImplementedError("interpolate(antialias=True) is not implemented in hookgrad")
    nd = input.ndim - 2
    if mode in _WANTS and input.ndim in (3, 4, 5) and input.ndim != _WANTS[mode]:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                  f"{_WANTS[mode]}D input")
    if (mode not in _MODES or input.ndim not in (3, 4, 5)
            or (mode == "bicubic" and input.ndim != 4)):
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for the "
            "modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
            f"nearest-exact (got {mode})")
    _check_dtype(input, mode, nd)
    if mode == "area":
        return _area(input, tuple(output))
    _check_sizes(list(input.shape[2:]), output)
    if input.numel() == 0 and 0 in tuple(input.shape[1:]):
        raise RuntimeError(f"Non-empty {input.ndim}D data tensor expected but got a tensor with "
                           f"sizes [{', '.join(map(str, input.shape))}]")
    nearest = "nearest-2d" if nd == 2 else "nearest-floor"
    kernel_mode = {"bicubic": "cubic", "nearest": nearest}.get(mode, mode)
    plan = tuple((s, o, kernel_mode, bool(align_corners), f)
                 for s, o, f in zip(input.shape[2:], output, scales))
    return _NODES[(mode, nd)].apply(input, plan)


def upsample(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
             align_corners: Optional[bool] = None) -> Tensor:
    """Deprecated alias of ``interpolate`` (torch warns the same way)."""
    warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
         "instead.")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """Deprecated: ``interpolate(mode="nearest")``."""
    warn("`nn.functional.upsample_nearest` is deprecated. Use "
         "`nn.functional.interpolate` instead.")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """Deprecated: ``interpolate(mode="bilinear", align_corners=True)``."""
    warn("`nn.functional.upsample_bilinear` is deprecated. Use "
         "`nn.functional.interpolate` instead.")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
