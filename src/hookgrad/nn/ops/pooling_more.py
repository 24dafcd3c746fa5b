"""max_unpool1d/2d/3d (the inverse of max pooling: values back at their argmax positions,
zeros elsewhere), lp_pool1d/2d/3d (composed of avg_pool as torch composes it) and
channel_shuffle."""
from __future__ import annotations

import math

import numpy as np

from ... import _dtype
from ...ops._base import Op
from ...ops.activation import relu
from ...tensor import Tensor


class MaxUnpool(Op):
    """out.flat[indices] = input;  d input = grad gathered at indices"""

    node_name = "MaxUnpool2DBackward0"
    saved_names = ("indices",)

    @staticmethod
    def forward(ctx, self, indices, output_size):
        nd = len(output_size)
        lead = self.shape[:-nd]
        plane = math.prod(output_size)
        ctx.self_shape, ctx.nd = self.shape, nd
        ctx.save_for_backward(indices)
        flat_index = indices.reshape(lead + (-1,))
        bad = (flat_index < 0) | (flat_index >= plane)
        if bad.any():
            sizes = "x".join(str(s) for s in output_size)
            raise RuntimeError(f"Found an invalid max index: {int(flat_index[bad][0])} (output "
                               f"volumes are of size {sizes})")
        out = np.zeros(lead + (plane,), self.dtype)
        np.put_along_axis(out, flat_index, self.reshape(lead + (-1,)), axis=-1)
        return out.reshape(lead + tuple(output_size))

    @staticmethod
    def backward(ctx, grad, *_):
        (indices,) = ctx.saved_tensors
        lead = ctx.self_shape[:-ctx.nd]
        picked = grad.reshape(lead + (-1,)).gather(-1, indices.reshape(lead + (-1,)))
        return picked.reshape(ctx.self_shape), None, None


class MaxUnpool3D(MaxUnpool):
    node_name = "MaxUnpool3DBackward0"


def _tuple(value, nd: int) -> tuple:
    return (value,) * nd if isinstance(value, int) else tuple(value)


def _output_size(input: Tensor, kernel: tuple, stride: tuple, padding: tuple,
                 output_size) -> tuple:
    """torch's default unpooled size, or ``output_size`` checked against it."""
    nd = len(kernel)
    default = [(input.shape[input.ndim - nd + d] - 1) * stride[d] + kernel[d] - 2 * padding[d]
               for d in range(nd)]
    if output_size is None:
        return tuple(default)
    output_size = tuple(output_size)
    if len(output_size) == nd + 2:
        output_size = output_size[2:]
    if len(output_size) != nd:
        raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} "
                         f"elements, but it has a length of '{len(output_size)}'")
    for d in range(nd):
        low, high = default[d] - stride[d], default[d] + stride[d]
        if not low < output_size[d] < high:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between '
                             f'{low} and {high})')
    return output_size


def _unpool(nd: int, cls, input: Tensor, indices: Tensor, kernel_size, stride, padding,
            output_size) -> Tensor:
    kernel = _tuple(kernel_size, nd)
    stride = kernel if stride is None else _tuple(stride, nd)
    size = _output_size(input, kernel, stride, _tuple(padding, nd), output_size)
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Input to max_unpooling{nd}d should be a {nd + 1}d or {nd + 2}d "
                           f"Tensor, but got a tensor with {input.ndim} dimensions.")
    if indices._data.dtype != np.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: "
                           f"{_dtype.scalar_type_name(indices._data.dtype)}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    return cls.apply(input, indices._data, size)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """The inverse of ``max_pool1d``: each value back at its index, zeros elsewhere."""
    kernel = _tuple(kernel_size, 1)
    stride = kernel if stride is None else _tuple(stride, 1)
    size = _output_size(input, kernel, stride, _tuple(padding, 1), output_size)
    return max_unpool2d(input.unsqueeze(-1), indices.unsqueeze(-1), (kernel[0], 1),
                        (stride[0], 1), 0, size + (1,)).squeeze(-1)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """The inverse of ``max_pool2d``: each value back at its in-plane index, zeros elsewhere."""
    return _unpool(2, MaxUnpool, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """The inverse of ``max_pool3d``: each value back at its in-volume index."""
    return _unpool(3, MaxUnpool3D, input, indices, kernel_size, stride, padding, output_size)


def pools_over(max_pools: tuple, avg_pools: tuple) -> tuple:
    """lp_pool1d/2d/3d and max_pool1d_with_indices over the functional module's pools (given
    by that module, which imports this one)."""
    def lp_pool(nd: int):
        def pool(input: Tensor, norm_type, kernel_size, stride=None,
                 ceil_mode: bool = False) -> Tensor:
            if norm_type == math.inf:
                return max_pools[nd - 1](input.abs(), kernel_size, stride, 0, 1, ceil_mode)
            if norm_type == -math.inf:
                return -max_pools[nd - 1](-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
            powered = input.pow(norm_type)
            if stride is None:
                out = avg_pools[nd - 1](powered, kernel_size, padding=0, ceil_mode=ceil_mode)
            else:
                out = avg_pools[nd - 1](powered, kernel_size, stride, 0, ceil_mode)
            count = math.prod(_tuple(kernel_size, nd))
            return (out.sign() * relu(out.abs())).mul(count).pow(1.0 / norm_type)

        pool.__name__ = pool.__qualname__ = f"lp_pool{nd}d"
        pool.__doc__ = (f"``(sum over each window of x^p)^(1/p)``: power-average pooling over "
                        f"{nd}-D windows (max pooling of |x| for p = inf).")
        return pool

    def max_pool1d_with_indices(input: Tensor, kernel_size, stride=None, padding=0,
                                dilation=1, ceil_mode: bool = False,
                                return_indices: bool = True):
        """(values, indices) of ``max_pool1d``."""
        return max_pools[0](input, kernel_size, stride, padding, dilation, ceil_mode, True)

    return lp_pool(1), lp_pool(2), lp_pool(3), max_pool1d_with_indices


class ChannelShuffle(Op):
    """channels (g, C/g) -> (C/g, g);  d input = the inverse shuffle of grad"""

    node_name = "ChannelShuffleBackward0"

    @staticmethod
    def forward(ctx, self, groups):
        ctx.groups = groups
        n, c = self.shape[:2]
        grouped = self.reshape((n, groups, c // groups) + self.shape[2:])
        return np.ascontiguousarray(np.swapaxes(grouped, 1, 2)).reshape(self.shape)

    @staticmethod
    def backward(ctx, grad):
        return ChannelShuffle.apply(grad, grad.shape[1] // ctx.groups), None


class NativeChannelShuffle(ChannelShuffle):
    """torch's ``native_channel_shuffle`` has no derivative: its node refuses backward"""

    node_name = "torch::autograd::NotImplemented"

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("derivative for aten::native_channel_shuffle is not implemented")


def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """``channel_shuffle`` without a derivative (torch's kernel-level op)."""
    _check_shuffle(input, groups)
    return NativeChannelShuffle.apply(input, groups)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Splits the channels (dim 1) into ``groups`` and interleaves them."""
    _check_shuffle(input, groups)
    return ChannelShuffle.apply(input, groups)


def _check_shuffle(input: Tensor, groups: int) -> None:
    if input.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    if input.shape[1] % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got "
                           f"{input.shape[1]} channels and {groups} groups.")


__all__ = ["max_unpool1d", "max_unpool2d", "max_unpool3d", "channel_shuffle",
           "native_channel_shuffle"]
