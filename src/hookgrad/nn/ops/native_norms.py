"""torch's ``native_*`` normalization entry points, which return the statistics beside the result,
and the SyncBatchNorm building blocks (``batch_norm_stats`` and friends).

The result comes from the same Functions as ``F.batch_norm``/``layer_norm``/``group_norm``
(``normalization.py``), so values, layouts and gradients are theirs. Batch and layer norm's
statistics are plain outputs without a gradient, as torch's are; group norm's come from its node.

torch 2.13 runs ``native_norm`` only on sparse tensors and the SyncBatchNorm kernels (all but
``batch_norm_update_stats``) only on CUDA; on a CPU tensor each raises ``NotImplementedError``,
and so do these.
"""
from __future__ import annotations

import math
from typing import Optional, Sequence

import numpy as np

from ... import _dtype
from ...tensor import Tensor
from .. import functional as F
from . import normalization as _norm

__all__ = ["native_batch_norm", "native_layer_norm", "native_group_norm", "native_norm",
           "batch_norm_stats", "batch_norm_elemt", "batch_norm_gather_stats",
           "batch_norm_gather_stats_with_counts", "batch_norm_backward_reduce",
           "batch_norm_backward_elemt", "batch_norm_update_stats"]


def _stat(array: np.ndarray, dtype) -> Tensor:
    return Tensor._make(np.ascontiguousarray(array, dtype=dtype))


def _stats_dtype(input: Tensor, *params) -> np.dtype:
    """The statistics' dtype: the input's, or float32 when float32 parameters go with a
    float16/bfloat16 input (torch's mixed-precision CPU kernels accumulate and return float32)."""
    if input.dtype in (_dtype.float16, _dtype.bfloat16) and any(
            p is not None and p.dtype == _dtype.float32 for p in params):
        return np.dtype(np.float32)
    return input._data.dtype


def _channel_axes(input: Tensor) -> tuple:
    if input.ndim < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[-{max(input.ndim, 1)}, {max(input.ndim, 1) - 1}], but got 1)")
    return (0,) + tuple(range(2, input.ndim))


def native_batch_norm(input: Tensor, weight: Optional[Tensor], bias: Optional[Tensor],
                      running_mean: Optional[Tensor], running_var: Optional[Tensor],
                      training: bool, momentum: float, eps: float) -> tuple:
    """Batch norm returning ``(output, save_mean, save_invstd)``: in training the batch's
    per-channel mean and 1/sqrt(biased var + eps) (and the running statistics are updated in
    place); in evaluation both are empty, as torch's CPU kernel leaves them."""
    axes = _channel_axes(input)
    if momentum is None or isinstance(momentum, bool):
        raise TypeError(f"native_batch_norm(): argument 'momentum' (position 7) must be float, "
                        f"not {type(momentum).__name__}")
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError("native_batch_norm: running_mean and running_var must be defined in "
                           "evaluation mode")
    channels = input.shape[1]
    for name, stat in (("running_mean", running_mean), ("running_var", running_var),
                       ("weight", weight), ("bias", bias)):
        if stat is not None and stat.numel() != channels:
            raise RuntimeError(f"{name} should contain {channels} elements not {stat.numel()}")
    _norm.check_affine_dtypes(input, weight, bias, running_mean, running_var)
    output = _norm.NativeBatchNorm.apply(
        input, weight, bias, None if running_mean is None else running_mean._data,
        None if running_var is None else running_var._data, bool(training), float(momentum),
        eps)
    dtype = _stats_dtype(input, weight, bias, running_mean, running_var)
    if not training:
        return output, _stat(np.zeros(0), dtype), _stat(np.zeros(0), dtype)
    mean, _centered, _var, rstd = _norm._moments(input._data.astype(dtype), axes, eps)
    return output, _stat(mean.reshape(-1), dtype), _stat(rstd.reshape(-1), dtype)


def native_layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Optional[Tensor],
                      bias: Optional[Tensor], eps: float) -> tuple:
    """Layer norm returning ``(output, mean, rstd)``; the statistics keep the leading dims and
    have size 1 in each normalized one."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if not shape:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    output = F.layer_norm(input, shape, weight, bias, eps)
    axes = tuple(range(input.ndim - len(shape), input.ndim))
    dtype = _stats_dtype(input, weight, bias)
    with np.errstate(invalid="ignore", over="ignore"):
        mean, _centered, _var, rstd = _norm._moments(input._data.astype(dtype), axes, eps)
    return output, _stat(_norm.inf_rows_nan(mean), dtype), _stat(rstd, dtype)


def native_group_norm(input: Tensor, weight: Optional[Tensor], bias: Optional[Tensor], N: int,
                      C: int, HxW: int, group: int, eps: float) -> tuple:
    """Group norm returning ``(output, mean, rstd)``, the statistics of shape (N, group)."""
    if input.numel() != N * C * HxW:
        raise RuntimeError("Expected X.numel() == N * C * HxW to be true, but got false.  "
                           "(native_group_norm: N, C and HxW do not describe the input)")
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.ndim}")
    if group <= 0 or input.shape[1] % group:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={group}")
    for name, tensor in (("weight", weight), ("bias", bias)):
        if tensor is not None and (tensor.ndim != 1 or tensor.numel() != input.shape[1]):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape "
                               f"{list(tensor.shape)} and input of shape {list(input.shape)}")
    _norm.check_affine_dtypes(input, weight, bias)
    output, mean, rstd = _norm.NativeGroupNorm.apply(input, weight, bias, group, eps)
    dtype = _stats_dtype(input, weight, bias)
    if dtype != input._data.dtype:
        # mixed precision: torch's statistics are float32 (they then carry no gradient here)
        grouped = input._data.astype(dtype).reshape(N, group, -1)
        mean, _centered, _var, rstd = _norm._moments(grouped, (2,), eps)
        mean, rstd = _stat(mean.reshape(N, group), dtype), _stat(rstd.reshape(N, group), dtype)
    return output, mean, rstd


def _cpu_missing(name: str, where: str) -> NotImplementedError:
    return NotImplementedError(
        f"Could not run 'aten::{name}' with arguments from the 'CPU' backend. torch has this "
        f"kernel for {where} only, so hookgrad (CPU, dense) does not run it either.")


def native_norm(input: Tensor, p=2, dim=None, keepdim: bool = False, dtype=None) -> Tensor:
    """torch runs this only on sparse tensors; on a dense CPU tensor it raises
    ``NotImplementedError``, as here (use :func:`hookgrad.norm`)."""
    raise _cpu_missing("native_norm", "sparse tensors")


def batch_norm_stats(input: Tensor, eps: float) -> tuple:
    """CUDA-only in torch (SyncBatchNorm's per-device (mean, invstd)): raises on CPU."""
    raise _cpu_missing("batch_norm_stats", "CUDA")


def batch_norm_elemt(input: Tensor, weight, bias, mean: Tensor, invstd: Tensor,
                     eps: float) -> Tensor:
    """CUDA-only in torch (SyncBatchNorm's normalisation step): raises on CPU."""
    raise _cpu_missing("batch_norm_elemt", "CUDA")


def batch_norm_gather_stats(input: Tensor, mean: Tensor, invstd: Tensor, running_mean,
                            running_var, momentum: float, eps: float, count: int) -> tuple:
    """CUDA-only in torch (SyncBatchNorm's reduction of per-device statistics): raises on
    CPU."""
    raise _cpu_missing("batch_norm_gather_stats", "CUDA")


def batch_norm_gather_stats_with_counts(input: Tensor, mean: Tensor, invstd: Tensor,
                                        running_mean, running_var, momentum: float, eps: float,
                                        counts: Tensor) -> tuple:
    """CUDA-only in torch (as ``batch_norm_gather_stats`` with a count per device): raises
    on CPU."""
    raise _cpu_missing("batch_norm_gather_stats_with_counts", "CUDA")


def batch_norm_backward_reduce(grad_out: Tensor, input: Tensor, mean: Tensor, invstd: Tensor,
                               weight, input_g: bool, weight_g: bool, bias_g: bool) -> tuple:
    """CUDA-only in torch (SyncBatchNorm's backward sums): raises on CPU."""
    raise _cpu_missing("batch_norm_backward_reduce", "CUDA")


def batch_norm_backward_elemt(grad_out: Tensor, input: Tensor, mean: Tensor, invstd: Tensor,
                              weight, sum_dy: Tensor, sum_dy_xmu: Tensor,
                              count: Tensor) -> Tensor:
    """CUDA-only in torch (SyncBatchNorm's input gradient): raises on CPU."""
    raise _cpu_missing("batch_norm_backward_elemt", "CUDA")


def batch_norm_update_stats(input: Tensor, running_mean: Optional[Tensor],
                            running_var: Optional[Tensor], momentum: float) -> tuple:
    """The batch's per-channel ``(mean, biased var)``; the running statistics, when given,
    move towards the mean and the unbiased var by ``momentum``, in place. The results have the
    running statistics' dtype when those are given, else the input's."""
    axes = _channel_axes(input)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"batch_norm_update_stats_cpu" not implemented for '
                                  f"'{_dtype.scalar_type_name(input.dtype)}'")
    _norm.check_affine_dtypes(input, running_mean, running_var)
    stats_dtype = (running_mean if running_mean is not None else
                   running_var if running_var is not None else input)._data.dtype
    data = input._data.astype(np.promote_types(input._data.dtype, np.float32), copy=False)
    mean = data.mean(axis=axes)
    var = np.mean(np.square(data - mean.reshape((1, -1) + (1,) * (input.ndim - 2))), axis=axes)
    count = math.prod(input.shape[i] for i in axes)
    factor = float(momentum)
    if running_mean is not None:
        running_mean._data[...] = (1 - factor) * running_mean._data + factor * mean
    if running_var is not None:
        unbiased = var * (count / (count - 1)) if count > 1 else var * math.inf
        running_var._data[...] = (1 - factor) * running_var._data + factor * unbiased
    return _stat(mean, stats_dtype), _stat(var, stats_dtype)
