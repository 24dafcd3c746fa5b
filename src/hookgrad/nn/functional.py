"""torch.nn.functional: layers as functions.

Arguments are normalised and checked here (with torch's messages); the work is done by the
Functions of ``nn/ops`` (one node per op, like torch's fused kernels) or composed from tensor ops
where torch composes them too, so grad_fn names and saved tensors match torch's.
"""
from __future__ import annotations

import functools
import math
from types import FunctionType as _FunctionType
from typing import Optional

import numpy as np

from .. import _memory_format as _mf
from .._warnings import warn, warn_once
from ..ops import activation as _activation
from ..ops import pointwise as _pointwise
from ..ops import reduce as _reduce
from ..ops._reduce_util import shown_window
from ..ops.padding import pad
from ..autograd.saved import array_for_forward
from ..tensor import Tensor
from .ops import conv as _conv
from .ops import normalization as _norm
from .ops import pooling as _pool
from .ops.attention import scaled_dot_product_attention  # noqa: F401
from .ops.dropout import (alpha_dropout, dropout, dropout1d, dropout2d, dropout3d,  # noqa: F401
                          feature_alpha_dropout)
from .ops.linear import Addmm, linear  # noqa: F401
from .ops.loss import (binary_cross_entropy, binary_cross_entropy_with_logits,  # noqa: F401
                       cross_entropy, huber_loss, l1_loss, mse_loss, nll_loss, smooth_l1_loss)
from .ops.multihead import multi_head_attention_forward  # noqa: F401
from .ops.sparse import Embedding, renorm_rows
from ..ops.activation_extra import (celu, celu_, glu, hardshrink, hardsigmoid,  # noqa: F401,E402
                               hardswish, hardtanh, hardtanh_, logsigmoid, mish, relu6, selu,
                               selu_, softshrink, softsign, tanhshrink)
from ..overrides import wrap


def _tensor_input(function):
    """torch's TypeError when the first argument is not a tensor (``F.gelu(None)``), instead
    of an AttributeError from deep inside the op."""
    name = function.__name__

    @functools.wraps(function)
    def checked(input, *args, **kwargs):
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                            f"{type(input).__name__}")
        return function(input, *args, **kwargs)
    return checked


def _ntuple(value, n: int, name: str = "") -> tuple:
    if isinstance(value, (int, np.integer)):
        return (int(value),) * n
    value = tuple(int(v) for v in value)
    if len(value) == 1 and n > 1:
        return value * n
    if len(value) != n:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} "
                           f"values to match the convolution dimensions, but got "
                           f"{name}={list(value)}")
    return value


# -- activations (the core ops, under torch.nn.functional's names) ------------------------------
@_tensor_input
def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(x, 0)`` elementwise."""
    return _activation.relu_(input) if inplace else _activation.relu(input)


@_tensor_input
def relu_(input: Tensor) -> Tensor:
    """In place ``relu``."""
    return _activation.relu_(input)


@_tensor_input
def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """``x * Phi(x)`` (``approximate='tanh'`` for the tanh formula)."""
    return _activation.gelu(input, approximate)


@_tensor_input
def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * sigmoid(x)`` elementwise."""
    if inplace:  # silu of a copy, written back: the core's in-place silu saves the input it
        return input.copy_(_activation.silu(input.clone()))  # then overwrites (version error)
    return _activation.silu(input)


@_tensor_input
def sigmoid(input: Tensor) -> Tensor:
    """``1 / (1 + exp(-x))`` elementwise."""
    return _pointwise.sigmoid(input)


@_tensor_input
def tanh(input: Tensor) -> Tensor:
    """Hyperbolic tangent elementwise."""
    return _pointwise.tanh(input)


@_tensor_input
def softplus(input: Tensor, beta: float = 1, threshold: float = 20) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, linear above ``threshold`` (the defaults are the
    integers torch's node shows: ``grad_fn._saved_beta`` is 1)."""
    return _activation.softplus(input, beta, threshold)


@_tensor_input
def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` for positive ``x``, else ``negative_slope * x``."""
    return _activation.leaky_relu(input, negative_slope, inplace)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """Replace every entry not above ``threshold`` by ``value``; the rest pass through."""
    return _activation.threshold(input, threshold, value, inplace)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """``threshold`` done in place on ``input``."""
    return _activation.threshold_(input, threshold, value)


@_tensor_input
def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` for positive ``x``, else ``alpha * (exp(x) - 1)``."""
    return _activation.elu(input, alpha, inplace)


def _softmax_dim(name: str, ndim: int) -> int:
    warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
         "include dim=X as an argument.")
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: Optional[int] = None, _stacklevel: int = 3,
            dtype=None) -> Tensor:
    """``exp(x) / sum(exp(x))`` along ``dim``, computed stably. ``_stacklevel`` is accepted for
    torch's signature and unused: the implicit-dim warning always names the user's line."""
    if dim is None:
        dim = _softmax_dim("softmax", input.ndim)
    return _reduce.softmax(input, dim, dtype=dtype)


def log_softmax(input: Tensor, dim: Optional[int] = None, _stacklevel: int = 3,
                dtype=None) -> Tensor:
    """``log(softmax(input, dim))`` computed stably."""
    if dim is None:
        dim = _softmax_dim("log_softmax", input.ndim)
    return _reduce.log_softmax(input, dim, dtype=dtype)


# -- convolution ----------------------------------------------------------------------------------
def _convolution(name: str, nd: int, input, weight, bias, stride, padding, dilation, groups,
                 transposed: bool = False, output_padding=0) -> Tensor:
    stride = _ntuple(stride, nd, "stride")
    dilation = _ntuple(dilation, nd, "dilation")
    if isinstance(padding, str):
        if padding == "valid":
            padding = 0
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            return _same_convolution(name, nd, input, weight, bias, dilation, groups)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    padding = _ntuple(padding, nd, "padding")
    output_padding = _ntuple(output_padding, nd, "output_padding")
    unbatched = input.ndim == nd + 1
    _conv.check_args(name, input.unsqueeze(0) if unbatched else input, weight, bias, nd, stride,
                padding, dilation, groups, transposed)
    if unbatched:
        input = input.unsqueeze(0)
    if transposed:
        for op, s, d in zip(output_padding, stride, dilation):
            if op >= s and op >= d:
                names = ("height", "width") if nd == 2 else ("depth", "height", "width")[-nd:]
                raise RuntimeError(
                    "output padding must be smaller than either stride or dilation, but got "
                    + " ".join(f"output_padding_{n}: {v}" for n, v in zip(names, output_padding))
                    + " " + " ".join(f"stride_{n}: {v}" for n, v in zip(names, stride))
                    + " " + " ".join(f"dilation_{n}: {v}" for n, v in zip(names, dilation)))
    result = _conv.Convolution.apply(input, weight, bias, stride, padding, dilation, transposed,
                                     output_padding, groups)
    return result.squeeze(0) if unbatched else result


def _same_convolution(name, nd, input, weight, bias, dilation, groups) -> Tensor:
    """padding='same': symmetric padding where the kernel allows it, else pad the input on the
    right first (torch's way, so even kernels give its grad_fn chain)."""
    total = [d * (k - 1) for k, d in zip(weight.shape[2:], dilation)]
    left = [t // 2 for t in total]
    extra = [t - 2 * lo for t, lo in zip(total, left)]
    if any(extra):
        warn_once("Using padding='same' with even kernel lengths and odd dilation may require "
                  "a zero-padded copy of the input be created")
        widths = []
        for e in reversed(extra):
            widths += [0, e]
        input = pad(input, widths)
    return _convolution(name, nd, input, weight, bias, 1, tuple(left), dilation, groups)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """1-d convolution (cross-correlation, as torch's) of ``(N, C, L)`` input with ``weight``."""
    return _convolution("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """2-d convolution (cross-correlation, as torch's) of ``(N, C, H, W)`` input with ``weight``."""
    return _convolution("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """3-d convolution (cross-correlation, as torch's) of ``(N, C, D, H, W)`` input with ``weight``.
    """
    return _convolution("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1) -> Tensor:
    """Transposed 1-d convolution: the gradient of ``conv1d`` with respect to its input."""
    return _convolution("conv_transpose1d", 1, input, weight, bias, stride, padding, dilation,
                        groups, True, output_padding)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1) -> Tensor:
    """Transposed 2-d convolution: the gradient of ``conv2d`` with respect to its input."""
    return _convolution("conv_transpose2d", 2, input, weight, bias, stride, padding, dilation,
                        groups, True, output_padding)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1) -> Tensor:
    """Transposed 3-d convolution: the gradient of ``conv3d`` with respect to its input."""
    return _convolution("conv_transpose3d", 3, input, weight, bias, stride, padding, dilation,
                        groups, True, output_padding)


# -- pooling --------------------------------------------------------------------------------------
def _pool_args(nd, kernel_size, stride, padding, dilation=1):
    kernel = _ntuple(kernel_size, nd, "kernel_size")
    stride = kernel if stride is None or (not isinstance(stride, int) and len(stride) == 0) \
        else _ntuple(stride, nd, "stride")
    return kernel, stride, _ntuple(padding, nd, "padding"), _ntuple(dilation, nd, "dilation")


def _check_pool(input, nd, kernel, stride, padding, dilation, ceil_mode):
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for "
                           "input")
    if any(s <= 0 for s in stride):
        raise RuntimeError("stride should be greater than zero, but got " + " ".join(
            f"s{'HW'[i] if nd == 2 else i}: {s}" for i, s in enumerate(stride)))
    for k, p, d in zip(kernel, padding, dilation):
        if p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={d}")
    if nd == 2 and any(p > k // 2 for k, p in zip(kernel, padding)):
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got "
                           f"padW = {padding[1]}, padH = {padding[0]}, kW = {kernel[1]}, "
                           f"kH = {kernel[0]}")
    size = input.shape[-nd:]
    out = _pool.pooled_size(size, kernel, stride, padding, dilation, ceil_mode)
    if any(o <= 0 for o in out):
        channels = input.shape[-nd - 1]
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, (channels,) + size))}). "
                           f"Calculated output size: ({'x'.join(map(str, (channels,) + out))}). "
                           "Output size is too small")


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    """``max_pool2d`` returning ``(values, indices)``."""
    shown = shown_window(2, kernel_size=kernel_size, stride=stride, padding=padding,
                        dilation=dilation)
    kernel, stride, padding, dilation = _pool_args(2, kernel_size, stride, padding, dilation)
    _check_pool(input, 2, kernel, stride, padding, dilation, ceil_mode)
    return _pool.MaxPoolWithIndices.apply(input, kernel, stride, padding, dilation, ceil_mode,
                                          shown=shown)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Maximum over sliding windows of an image (``return_indices`` also gives where each came
    from)."""
    output, indices = max_pool2d_with_indices(input, kernel_size, stride, padding, dilation,
                                              ceil_mode)
    return (output, indices) if return_indices else output


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None) -> Tensor:
    """Average over sliding windows of an image."""
    shown = shown_window(2, kernel_size=kernel_size, stride=stride, padding=padding)
    kernel, stride, padding, _ = _pool_args(2, kernel_size, stride, padding)
    _check_pool(input, 2, kernel, stride, padding, (1, 1), ceil_mode)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    return _pool.AvgPool.apply(input, kernel, stride, padding, ceil_mode, count_include_pad,
                               divisor_override, shown=shown)


def adaptive_avg_pool2d(input, output_size) -> Tensor:
    """Average pooling over an image to ``output_size`` windows chosen from the input size."""
    if input.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got "
                           f"{list(input.shape)}")
    if isinstance(output_size, int):
        output_size = (output_size, output_size)
    size = tuple(input.shape[-2:])
    output_size = tuple(s if o is None else int(o) for o, s in zip(output_size, size))
    if output_size == (1, 1):
        out = input.mean((-1, -2), keepdim=True)  # torch's shortcut (MeanBackward1)
        if input.ndim == 4 and _mf.suggested(input.shape, input.stride()) is _mf.channels_last:
            out = _pool.ChannelsLastGlobalMean.apply(out)  # channels-last in, channels-last out
        return out
    return _pool.AdaptiveAvgPool.apply(input, output_size)


def _one(value, name: str) -> int:
    return int(value[0]) if isinstance(value, (tuple, list)) else int(value)


def _as_2d(input: Tensor, name: str) -> Tensor:
    if input.ndim not in (2, 3):
        raise RuntimeError(f"{name}: Expected 2D or 3D (batch mode) tensor for input, but got "
                           f"{list(input.shape)}")
    return input.unsqueeze(-2)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """max_pool2d over a height-1 view, as torch does (unsqueeze, pool, squeeze)."""
    stride = kernel_size if stride is None or stride == () else stride
    output, indices = max_pool2d_with_indices(
        _as_2d(input, "max_pool1d"), (1, _one(kernel_size, "kernel_size")),
        (1, _one(stride, "stride")), (0, _one(padding, "padding")),
        (1, _one(dilation, "dilation")), ceil_mode)
    output = output.squeeze(-2)
    return (output, indices.squeeze(-2)) if return_indices else output


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True) -> Tensor:
    """Average over sliding windows of a 1-d signal."""
    stride = kernel_size if stride is None or stride == () else stride
    return avg_pool2d(_as_2d(input, "avg_pool1d"), (1, _one(kernel_size, "kernel_size")),
                      (1, _one(stride, "stride")), (0, _one(padding, "padding")), ceil_mode,
                      count_include_pad).squeeze(-2)


def adaptive_avg_pool1d(input, output_size) -> Tensor:
    """Average pooling over a 1-d signal to ``output_size`` windows chosen from the input length."""
    size = _one(output_size, "output_size")
    pooled = _pool.AdaptiveAvgPool.apply(_as_2d(input, "adaptive_avg_pool1d"), (1, size))
    return pooled.squeeze(-2)


# -- normalization --------------------------------------------------------------------------------
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5) -> Tensor:
    """Normalises each channel by batch statistics (training) or by
    ``running_mean``/``running_var``, which training updates in place."""
    if training:
        count = input.numel() // input.shape[1] if input.ndim > 1 else 1
        if count == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input "
                             f"size {input.shape}")
    elif running_mean is None or running_var is None:
        raise RuntimeError("running_mean must be defined in evaluation mode")
    channels = input.shape[1]
    for name, stat in (("running_mean", running_mean), ("running_var", running_var),
                       ("weight", weight), ("bias", bias)):
        if stat is not None and stat.numel() != channels:
            raise RuntimeError(f"{name} should contain {channels} elements not {stat.numel()}")
    _norm.check_affine_dtypes(input, weight, bias, running_mean, running_var)
    return _norm.NativeBatchNorm.apply(
        input, weight, bias, None if running_mean is None else running_mean._data,
        None if running_var is None else running_var._data, training,
        0.0 if momentum is None else momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5) -> Tensor:
    """Normalises over the trailing ``normalized_shape`` dimensions, then applies the optional
    affine ``weight``/``bias``."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    n = len(normalized_shape)
    if tuple(input.shape[input.ndim - n:]) != normalized_shape or input.ndim < n:
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input "
                           f"with shape [*, {', '.join(map(str, normalized_shape))}], but got "
                           f"input of size{list(input.shape)}")
    for name, tensor in (("weight", weight), ("bias", bias)):
        if tensor is not None and tuple(tensor.shape) != normalized_shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got "
                               f"{name} of shape {list(tensor.shape)} and normalized_shape = "
                               f"{list(normalized_shape)}")
    _norm.check_affine_dtypes(input, weight, bias)
    return _norm.NativeLayerNorm.apply(input, weight, bias, n, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5) -> Tensor:
    """Normalises groups of channels per sample, then applies the optional affine
    ``weight``/``bias``."""
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.ndim}")
    if input.shape[1] % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    # torch checks the statistics' sample count as batch_norm does, on the grouped view
    grouped = [input.shape[0] * input.shape[1] // num_groups, num_groups, *input.shape[2:]]
    if grouped[0] * math.prod(grouped[2:]) == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input "
                         f"size {grouped}")
    _norm.check_affine_dtypes(input, weight, bias)
    return _norm.NativeGroupNorm.apply(input, weight, bias, num_groups, eps)[0]


# -- dropout and embedding ------------------------------------------------------------------------
def embedding(input: Tensor, weight: Tensor, padding_idx: Optional[int] = None,
              max_norm: Optional[float] = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """out = weight[input]; with max_norm the looked-up rows are renormalised in place first."""
    num = weight.shape[0]
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx = padding_idx % num
    if max_norm is not None:
        renorm_rows(weight, input._data, max_norm, norm_type)
    return Embedding.apply(weight, array_for_forward(input), padding_idx, scale_grad_by_freq,
                           sparse=bool(sparse))


# -- utilities ------------------------------------------------------------------------------------
def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """Int64 tensor with a trailing dimension of ``num_classes`` holding a 1 at each label."""
    if tensor._data.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    classes = int(tensor._data.max()) + 1 if num_classes == -1 else num_classes
    hits = tensor._data[..., None] == np.arange(classes)
    return Tensor._make(np.array(hits, np.int64, order="C"))  # row-major, as torch's


# -- vision and distance ops (implemented in nn/ops; re-exported here) --------------------------
from .ops.interpolate import interpolate, upsample, upsample_bilinear, upsample_nearest  # noqa: E402,F401,E501
from .ops.fold import fold, unfold  # noqa: E402,F401
from .ops.pixelshuffle import pixel_shuffle, pixel_unshuffle  # noqa: E402,F401
from .ops.distance import cosine_similarity, normalize, pairwise_distance  # noqa: E402,F401
from .ops.cdist import pdist  # noqa: E402,F401
from .ops.instancenorm import instance_norm  # noqa: E402,F401
from .ops.pool3d import adaptive_avg_pool3d, avg_pool3d, max_pool3d, max_pool3d_with_indices  # noqa: E402,F401,E501
from .ops.bilinear import bilinear  # noqa: E402,F401
from .ops.embedding_bag import embedding_bag  # noqa: E402,F401
from .ops.grid_sample import affine_grid, grid_sample  # noqa: E402,F401
from .ops.activation_extra import elu_, leaky_relu_, prelu, softmin  # noqa: E402,F401
from .ops.rrelu import rrelu, rrelu_  # noqa: E402,F401
from .ops.normalization_extra import local_response_norm, rms_norm  # noqa: E402,F401
from .ops.losses_extra import *  # noqa: E402,F401,F403  (kl_div, margin and NLL losses)
from .ops.ctc import ctc_loss  # noqa: E402,F401
from .ops.gumbel import gumbel_softmax  # noqa: E402,F401
from .ops.conv_tbc import conv_tbc  # noqa: E402,F401
from .ops.linear_cross_entropy import linear_cross_entropy  # noqa: E402,F401
from .ops.fractional_max_pool import *  # noqa: E402,F401,F403  (fractional_max_pool2d/3d)
from .ops.adaptive_max_pool import *  # noqa: E402,F401,F403  (adaptive_max_pool1d/2d/3d)
from .ops.pooling_more import *  # noqa: E402,F401,F403  (max_unpool1d/2d/3d, channel_shuffle)
from .ops.pooling_more import pools_over as _pools_over  # noqa: E402
lp_pool1d, lp_pool2d, lp_pool3d, max_pool1d_with_indices = _pools_over(
    (max_pool1d, max_pool2d, max_pool3d), (avg_pool1d, avg_pool2d, avg_pool3d))


# every public function here is seen by an active ``TorchFunctionMode``
for _name, _value in list(globals().items()):
    if _name[0] != "_" and isinstance(_value, _FunctionType):
        globals()[_name] = wrap(_value)
del _name, _value
