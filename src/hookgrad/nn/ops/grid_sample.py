"""grid_sample (bilinear / nearest / bicubic; zeros / border / reflection padding) and
affine_grid, for 2-D and 3-D inputs.

Both are composed of differentiable tensor ops, so the gradients in the input and in the grid,
and double backward, follow from them:

* a grid coordinate g in [-1, 1] becomes a pixel coordinate (unnormalize), then is folded
  into the input (padding: clipped for border, mirrored then clipped for reflection);
* the corners around it are gathered from the flattened input (``gather``), out-of-range
  corners read as zero, and weighted by the distances (bilinear), by the cubic convolution
  coefficients of the fractional part (bicubic), or the nearest is taken (nearest; it has no
  gradient in the grid).

Clipping passes a gradient only strictly inside the range and mirroring flips its sign, as
torch's kernels do. Differs from torch: the node names are those of the composing ops.
"""
from __future__ import annotations

import itertools
import math
from typing import Optional

import numpy as np

import hookgrad
from ..._warnings import warn
from ...ops._base import Op
from ...tensor import Tensor

_MODES = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")
_CUBIC_A = -0.75


def _unnormalize(coord: Tensor, size: int, align_corners: bool) -> Tensor:
    """[-1, 1] -> pixel index: corners at pixel centres (align_corners) or at pixel edges."""
    if align_corners:
        return ((coord + 1) / 2) * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _clip(coord: Tensor, size: int) -> Tensor:
    """coord clamped to [0, size - 1], with gradient only strictly inside (torch's rule)."""
    upper = size - 1
    inside = (coord > 0) & (coord < upper)
    return hookgrad.where(inside, coord, coord.detach().clamp(0, upper))


def _reflect(coord: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """Mirror coord into [twice_low / 2, twice_high / 2] (as many times as it takes)."""
    if twice_low == twice_high:
        return coord * 0
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    shifted = coord - low
    distance = hookgrad.where(shifted < 0, -shifted, shifted)
    extra = distance.fmod(span)
    flips = np.floor(distance.detach().numpy() / span)
    even = hookgrad.tensor(flips % 2 == 0)
    return hookgrad.where(even, extra + low, span - extra + low)


def _pad_coordinate(coord: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    if padding_mode == "border":
        return _clip(coord, size)
    if padding_mode == "reflection":
        if align_corners:
            coord = _reflect(coord, 0, 2 * (size - 1))
        else:
            coord = _reflect(coord, -1, 2 * size - 1)
        return _clip(coord, size)
    return coord


def _pad_index(index: np.ndarray, size: int, padding_mode: str,
               align_corners: bool) -> np.ndarray:
    """The padding fold applied to integer tap positions (bicubic), on arrays."""
    folded = _pad_coordinate(hookgrad.tensor(index.astype(np.float64)), size, padding_mode,
                             align_corners)
    return np.trunc(folded.numpy()).astype(np.int64)


class _Sampler:
    """Gathers input values at integer positions, zero outside, for one (input, grid)."""

    def __init__(self, input: Tensor, out_shape: tuple):
        self.input = input
        self.sizes = tuple(input.shape[2:])  # spatial, slowest first
        batch, channels = input.shape[:2]
        self.flat = input.reshape(batch, channels, math.prod(self.sizes))
        self.out_shape = out_shape  # (N, *out_spatial)
        self.channels = channels

    def values(self, positions: list) -> Tensor:
        """positions: one int array per spatial dim (slowest first), each of out_shape."""
        valid = np.ones(self.out_shape, bool)
        flat = np.zeros(self.out_shape, np.int64)
        for position, size in zip(positions, self.sizes):
            valid &= (position >= 0) & (position < size)
            flat = flat * size + np.clip(position, 0, size - 1)
        batch = self.out_shape[0]
        index = hookgrad.tensor(flat.reshape(batch, 1, -1)).expand(batch, self.channels, -1)
        gathered = self.flat.gather(2, index).reshape((batch, self.channels)
                                                      + self.out_shape[1:])
        mask = hookgrad.tensor(valid.reshape((batch, 1) + self.out_shape[1:]))
        return hookgrad.where(mask, gathered, hookgrad.zeros((), dtype=gathered.dtype))


def _linear(sampler: _Sampler, coords: list) -> Tensor:
    """Multilinear interpolation; coords: pixel coordinates per spatial dim, slowest first."""
    lows = [np.floor(c.detach().numpy()).astype(np.int64) for c in coords]
    low_t = [hookgrad.tensor(low.astype(c.detach().numpy().dtype)) for low, c in zip(lows, coords)]
    total = None
    for corner in itertools.product((0, 1), repeat=len(coords)):  # slowest dim outermost
        weight = None
        for dim in reversed(range(len(coords))):  # torch multiplies x, then y, then z
            if corner[dim]:
                factor = coords[dim] - low_t[dim]
            else:
                factor = (low_t[dim] + 1) - coords[dim]
            weight = factor if weight is None else weight * factor
        values = sampler.values([low + bit for low, bit in zip(lows, corner)])
        term = values * weight.unsqueeze(1)
        total = term if total is None else total + term
    return total


def _cubic_coefficients(t: Tensor) -> list:
    one = 1.0
    a = _CUBIC_A

    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + one), near(t), near(one - t), far((one - t) + one)]


def _bicubic(sampler: _Sampler, coords: list, padding_mode: str, align_corners: bool) -> Tensor:
    """2-D bicubic: 4 x 4 taps, each tap position folded by the padding mode."""
    y, x = coords
    y0 = np.floor(y.detach().numpy())
    x0 = np.floor(x.detach().numpy())
    ty = y - hookgrad.tensor(y0.astype(y0.dtype))
    tx = x - hookgrad.tensor(x0.astype(x0.dtype))
    height, width = sampler.sizes
    wy, wx = _cubic_coefficients(ty), _cubic_coefficients(tx)
    total = None
    for j in range(4):
        row_y = _pad_index(y0.astype(np.int64) - 1 + j, height, padding_mode, align_corners)
        row = None
        for i in range(4):
            col_x = _pad_index(x0.astype(np.int64) - 1 + i, width, padding_mode, align_corners)
            term = sampler.values([row_y, col_x]) * wx[i].unsqueeze(1)
            row = term if row is None else row + term
        term = row * wy[j].unsqueeze(1)
        total = term if total is None else total + term
    return total


class NearestGridLink(Op):
    """out = values; the grid's gradient is zero (nearest sampling is piecewise constant in the
    grid), given as zeros rather than None, as torch gives it."""

    node_name = "GridSampler2DBackward0"

    @staticmethod
    def forward(ctx, values, grid):
        ctx.grid_shape, ctx.grid_dtype = grid.shape, grid.dtype
        return values.copy()

    @staticmethod
    def backward(ctx, grad):
        zeros = hookgrad.tensor(np.zeros(ctx.grid_shape, ctx.grid_dtype))
        return grad, zeros


class NearestGridLink3D(NearestGridLink):
    node_name = "GridSampler3DBackward0"


def _shape_text(tensor: Tensor) -> str:
    return "[" + ", ".join(str(s) for s in tensor.shape) + "]"


def _check(input: Tensor, grid: Tensor, mode: str) -> None:
    nd = input.ndim - 2
    if input.ndim == 4:
        if grid.ndim != 4:
            raise RuntimeError("grid_sampler(): expected 4D input and grid with same number of "
                               f"dimensions, but got input with sizes {_shape_text(input)} and "
                               f"grid with sizes {_shape_text(grid)}")
    elif input.ndim != 5 or grid.ndim != 5:
        raise RuntimeError("grid_sampler(): expected 5D input and grid with same number of "
                           f"dimensions, but got input with sizes {_shape_text(input)} and "
                           f"grid with sizes {_shape_text(grid)}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError("grid_sampler(): expected grid and input to have same batch size, but "
                           f"got input with sizes {_shape_text(input)} and grid with sizes "
                           f"{_shape_text(grid)}")
    if grid.shape[-1] != nd:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {nd} in last dimension, "
                           f"but got grid with sizes {_shape_text(grid)}")
    for dim in range(2, input.ndim):
        if input.shape[dim] <= 0:
            raise RuntimeError("grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {_shape_text(input)} with "
                               f"dimension {dim} being empty")
    if input.ndim == 5 and mode == "bicubic":
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")


def _warn_align_corners() -> None:
    warn("Default grid_sample and affine_grid behavior has changed to align_corners=False "
         "since 1.3.0. Please specify align_corners=True if the old behavior is desired. "
         "See the documentation of grid_sample for details.")


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: Optional[bool] = None) -> Tensor:
    """Sample (N, C, H, W) or (N, C, D, H, W) input at the normalised positions of grid
    (N, H', W', 2) or (N, D', H', W', 3), whose last dim is (x, y[, z])."""
    if mode not in _MODES:
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' "
                         f"or 'bicubic', but got: '{mode}'")
    if padding_mode not in _PADDINGS:
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        _warn_align_corners()
        align_corners = False
    return _sample(input, grid, mode, padding_mode, align_corners)


def _sample(input: Tensor, grid: Tensor, mode: str, padding_mode: str,
            align_corners: bool) -> Tensor:
    if input.ndim in (4, 5) and grid.ndim and grid.shape[-1] != input.ndim - 2:
        # torch looks at the grid's last dim before comparing the ranks
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} in "
                           f"last dimension, but got grid with sizes {_shape_text(grid)}")
    _check(input, grid, mode)
    if grid.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {_name(input)} but found {_name(grid)}")
    nd = input.ndim - 2
    sizes = tuple(input.shape[2:])
    sampler = _Sampler(input, tuple(grid.shape[:-1]))
    # grid[..., 0] indexes the last (fastest) spatial dim
    coords = [_unnormalize(grid[..., nd - 1 - dim], sizes[dim], align_corners)
              for dim in range(nd)]
    if mode == "bicubic":
        return _bicubic(sampler, coords, padding_mode, align_corners)
    coords = [_pad_coordinate(c, s, padding_mode, align_corners) for c, s in zip(coords, sizes)]
    if mode == "nearest":
        nearest = [np.rint(c.detach().numpy()).astype(np.int64) for c in coords]
        link = NearestGridLink if nd == 2 else NearestGridLink3D
        return link.apply(sampler.values(nearest), grid)
    return _linear(sampler, coords)


def _from_codes(name: str, interpolation_mode: int, padding_mode: int) -> tuple:
    """torch's integer codes: interpolation 0 bilinear, 1 nearest, 2 bicubic; padding 0 zeros,
    1 border, 2 reflection."""
    if not 0 <= interpolation_mode < len(_MODES):
        raise RuntimeError(f"{name}(): interpolation_mode must be 0 (bilinear), 1 (nearest) or "
                           f"2 (bicubic), but got {interpolation_mode}")
    if not 0 <= padding_mode < len(_PADDINGS):
        raise RuntimeError(f"{name}(): padding_mode must be 0 (zeros), 1 (border) or "
                           f"2 (reflection), but got {padding_mode}")
    return _MODES[interpolation_mode], _PADDINGS[padding_mode]


def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
    """torch's ``grid_sampler``: :func:`grid_sample` with the modes as integer codes
    (interpolation 0 bilinear, 1 nearest, 2 bicubic; padding 0 zeros, 1 border, 2 reflection)
    and ``align_corners`` required; 4-D or 5-D input."""
    mode, padding = _from_codes("grid_sampler", interpolation_mode, padding_mode)
    return _sample(input, grid, mode, padding, bool(align_corners))


def grid_sampler_2d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    """:func:`grid_sampler` for 4-D (N, C, H, W) input only."""
    mode, padding = _from_codes("grid_sampler_2d", interpolation_mode, padding_mode)
    if input.ndim != 4 or grid.ndim != 4:
        raise RuntimeError("grid_sampler(): expected 4D input and grid with same number of "
                           f"dimensions, but got input with sizes {_shape_text(input)} and "
                           f"grid with sizes {_shape_text(grid)}")
    return _sample(input, grid, mode, padding, bool(align_corners))


def grid_sampler_3d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    """:func:`grid_sampler` for 5-D (N, C, D, H, W) input only (no bicubic)."""
    mode, padding = _from_codes("grid_sampler_3d", interpolation_mode, padding_mode)
    if input.ndim != 5 or grid.ndim != 5:
        raise RuntimeError("grid_sampler(): expected 5D input and grid with same number of "
                           f"dimensions, but got input with sizes {_shape_text(input)} and "
                           f"grid with sizes {_shape_text(grid)}")
    return _sample(input, grid, mode, padding, bool(align_corners))


def _name(tensor: Tensor) -> str:
    return {"float32": "Float", "float64": "Double", "float16": "Half"}.get(
        str(tensor.dtype).split(".")[-1], str(tensor.dtype))


def _base_line(steps: int, align_corners: bool) -> np.ndarray:
    """steps points spanning [-1, 1] (pixel centres), narrowed by (steps - 1) / steps without
    align_corners; a single point sits at 0."""
    if steps <= 1:
        return np.zeros(max(steps, 0))
    line = np.linspace(-1.0, 1.0, steps)
    return line if align_corners else line * (steps - 1) / steps


def affine_grid(theta: Tensor, size: list, align_corners: Optional[bool] = None) -> Tensor:
    """The sampling grid (N, H, W, 2) or (N, D, H, W, 3) of the affine maps theta (N, 2, 3)
    or (N, 3, 4): base (x, y[, z], 1) coordinates times theta^T."""
    if align_corners is None:
        _warn_align_corners()
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    if len(size) == 4:
        if theta.ndim != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{size}. Got {hookgrad.Size(theta.shape)}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.ndim != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{size}. Got {hookgrad.Size(theta.shape)}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    if align_corners and min(spatial) == 1:
        warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids "
             "when align_corners=True. This is not an intended use case of "
             "affine_grid. See the documentation of affine_grid for details.")
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return _affine_grid(theta, size, align_corners)


def _affine_base(spatial: tuple, align_corners: bool, dtype) -> np.ndarray:
    """(prod(spatial), nd + 1): each output point's (x, y[, z], 1), x fastest."""
    lines = [_base_line(s, align_corners) for s in spatial]  # slowest first
    mesh = np.meshgrid(*lines, indexing="ij")
    nd = len(spatial)
    base = np.stack([mesh[nd - 1 - k] for k in range(nd)] + [np.ones(tuple(spatial))], axis=-1)
    return base.reshape(-1, nd + 1).astype(dtype)


class AffineGridGenerator(Op):
    """grid[n, p] = theta[n] @ base[p];  d theta[n] = sum_p grad[n, p] base[p]^T (the base
    points are constants, rebuilt in backward rather than saved)."""

    node_name = "AffineGridGeneratorBackward0"
    saved_values = {"size": "size", "align_corners": "align_corners"}

    @staticmethod
    def forward(ctx, theta, size, align_corners):
        ctx.size, ctx.align_corners = tuple(size), align_corners
        base = _affine_base(tuple(size[2:]), align_corners, theta.dtype)
        grid = np.matmul(base[None], theta.transpose(0, 2, 1))
        return np.ascontiguousarray(grid.reshape((size[0],) + tuple(size[2:]) + (theta.shape[1],)))

    @staticmethod
    def backward(ctx, grad):
        spatial = tuple(ctx.size[2:])
        base = hookgrad.tensor(_affine_base(spatial, ctx.align_corners, np.float64),
                               dtype=grad.dtype)
        flat = grad.reshape(ctx.size[0], -1, grad.shape[-1])
        return flat.transpose(1, 2).matmul(base)


def _affine_grid(theta: Tensor, size: list, align_corners: bool) -> Tensor:
    return AffineGridGenerator.apply(theta, list(size), align_corners)


def affine_grid_generator(theta: Tensor, size: list, align_corners: bool) -> Tensor:
    """torch's ``affine_grid_generator``: the grid of :func:`affine_grid` for ``size`` (N, C,
    H, W) or (N, C, D, H, W), with its checks reduced to the batched product's."""
    size = [int(s) for s in size]
    if len(size) not in (4, 5):
        raise RuntimeError("AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.")
    nd = len(size) - 2
    if theta.ndim != 3:
        raise RuntimeError(f"batch2 must be a 3D tensor (affine_grid_generator: theta has "
                           f"{theta.ndim} dims)")
    if theta.shape[0] != size[0] or theta.shape[2] != nd + 1:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{size[0]}, {nd + 1}] but got: [{theta.shape[0]}, "
                           f"{theta.shape[2]}].")
    return _affine_grid(theta, size, bool(align_corners))
