"""The nn ops under their ``torch.*`` names and argument orders (``torch.batch_norm`` takes the
weight before the running stats, ``torch.embedding`` the weight first, ...)."""
from __future__ import annotations

from typing import Optional

from ...tensor import Tensor
from .. import functional as F
from ...ops.inplace import inplace
from .linear import Addmm, Baddbmm

conv1d = F.conv1d
conv2d = F.conv2d
conv3d = F.conv3d
conv_transpose1d = F.conv_transpose1d
conv_transpose2d = F.conv_transpose2d


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight=None,
                                     pos_weight=None, reduction: int = 0) -> Tensor:
    """torch's spelling takes the reduction as an enum: 0 none, 1 mean, 2 sum."""
    return F.binary_cross_entropy_with_logits(input, target, weight, reduction=(
        "none", "mean", "sum")[reduction], pos_weight=pos_weight)


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """beta input + alpha (mat1 @ mat2)"""
    return Addmm.apply(input, mat1, mat2, beta, alpha)


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """beta input + alpha (batch1 @ batch2) for each batch"""
    return Baddbmm.apply(input, batch1, batch2, beta, alpha)


def convolution(input: Tensor, weight: Tensor, bias: Optional[Tensor], stride, padding,
                dilation, transposed: bool, output_padding, groups: int) -> Tensor:
    """torch's general convolution entry point: plain or transposed, any of 1-3 spatial dims."""
    nd = input.ndim - 2
    name = ("conv_transpose" if transposed else "conv") + f"{nd}d"
    return F._convolution(name, nd, input, weight, bias, stride, padding, dilation, groups,
                          transposed, output_padding)


def max_pool2d(input: Tensor, kernel_size, stride=(), padding=0, dilation=1,
               ceil_mode: bool = False) -> Tensor:
    """torch's top-level ``max_pool2d``."""
    return F.max_pool2d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def batch_norm(input: Tensor, weight, bias, running_mean, running_var, training: bool,
               momentum: float, eps: float, cudnn_enabled: bool = True) -> Tensor:
    """torch's top-level ``batch_norm``: ``F.batch_norm`` with every argument given."""
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def layer_norm(input: Tensor, normalized_shape, weight=None, bias=None, eps: float = 1e-5,
               cudnn_enable: bool = True) -> Tensor:
    """torch's top-level ``layer_norm``."""
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input: Tensor, num_groups: int, weight=None, bias=None, eps: float = 1e-5,
               cudnn_enabled: bool = True) -> Tensor:
    """torch's top-level ``group_norm``."""
    return F.group_norm(input, num_groups, weight, bias, eps)


def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """torch's top-level ``dropout(input, p, train)``."""
    return F.dropout(input, p, train)


def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """torch's top-level ``embedding(weight, indices)`` (note: weight first)."""
    return F.embedding(indices, weight, None if padding_idx == -1 else padding_idx,
                       scale_grad_by_freq=scale_grad_by_freq)


def _check_inplace_product(input: Tensor, shape: tuple) -> None:
    if tuple(input.shape) != shape:
        raise RuntimeError(f"Bad in-place call: input tensor size {list(input.shape)} and output "
                           f"tensor size {list(shape)} should match")


def addmm_(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """In place ``addmm``: ``input`` must have the product's shape (no broadcasting)."""
    if mat1.ndim == 2 and mat2.ndim == 2:
        _check_inplace_product(input, (mat1.shape[0], mat2.shape[1]))
    return inplace(Addmm, input, mat1, mat2, beta, alpha)


def baddbmm_(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """In place ``baddbmm``: ``input`` must have the batched product's shape."""
    if batch1.ndim == 3 and batch2.ndim == 3:
        _check_inplace_product(input, (batch1.shape[0], batch1.shape[1], batch2.shape[2]))
    return inplace(Baddbmm, input, batch1, batch2, beta, alpha)
