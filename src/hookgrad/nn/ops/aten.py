"""The nn ops under their ``torch.*`` names and argument orders (``torch.batch_norm`` takes the
weight before the running stats, ``torch.embedding`` the weight first, ...)."""
from __future__ import annotations

from typing import Optional

from ...tensor import Tensor
from .. import functional as F
from ...ops.inplace import inplace
from .linear import Addmm, Baddbmm
from .losses_extra import kl_div_pointwise_reduced
from .pooling_more import native_channel_shuffle  # noqa: F401  (torch.native_channel_shuffle)
from .conv_tbc import conv_tbc  # noqa: F401  (torch.conv_tbc)

conv1d = F.conv1d
conv2d = F.conv2d
conv3d = F.conv3d
conv_transpose1d = F.conv_transpose1d
conv_transpose2d = F.conv_transpose2d


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight=None,
                                     pos_weight=None, reduction: int = 0) -> Tensor:
    """torch's spelling takes the reduction as an enum (``_reduction``)."""
    return F.binary_cross_entropy_with_logits(input, target, weight,
                                              reduction=_reduction(reduction),
                                              pos_weight=pos_weight)


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


# torch's top-level spellings of more nn ops: positional arguments in ATen's order, the reduction
# as an enum (1 mean, 2 sum, any other value none) whose default here is none (0), as in torch's
# bindings, and the adaptive / with_indices max pools returning values and indices


def _reduction(reduction: int) -> str:
    return "mean" if reduction == 1 else "sum" if reduction == 2 else "none"


adaptive_avg_pool1d = F.adaptive_avg_pool1d
avg_pool1d = F.avg_pool1d
bilinear = F.bilinear
channel_shuffle = F.channel_shuffle
conv_transpose3d = F.conv_transpose3d
pixel_shuffle = F.pixel_shuffle
pixel_unshuffle = F.pixel_unshuffle
prelu = F.prelu


def adaptive_max_pool1d(input: Tensor, output_size) -> tuple:
    """The pooled values and their indices (torch's top-level form always returns both)."""
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


def max_pool1d(input: Tensor, kernel_size, stride=(), padding=0, dilation=1,
               ceil_mode: bool = False) -> Tensor:
    """torch's top-level ``max_pool1d`` (an empty ``stride`` means the kernel size)."""
    return F.max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool1d_with_indices(input: Tensor, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode: bool = False) -> tuple:
    """``max_pool1d``'s values and the flat indices of the maxima."""
    return F.max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode,
                        return_indices=True)


def max_pool3d(input: Tensor, kernel_size, stride=(), padding=0, dilation=1,
               ceil_mode: bool = False) -> Tensor:
    """torch's top-level ``max_pool3d``."""
    return F.max_pool3d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: int = 0) -> Tensor:
    """``F.cosine_embedding_loss`` with the reduction as torch's enum."""
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_reduction(reduction))


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         reduction: int = 0) -> Tensor:
    """``F.hinge_embedding_loss`` with the reduction as torch's enum."""
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: int = 0) -> Tensor:
    """``F.margin_ranking_loss`` with the reduction as torch's enum."""
    return F.margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def kl_div(input: Tensor, target: Tensor, reduction: int = 0, *,
           log_target: bool = False) -> Tensor:
    """``F.kl_div`` with the reduction as torch's enum (and without F.kl_div's warning about
    'mean', which torch gives only there)."""
    return kl_div_pointwise_reduced(input, target, _reduction(reduction), log_target)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,
                     reduction: int) -> Tensor:
    """``F.poisson_nll_loss`` with every argument given, the reduction as torch's enum."""
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction(reduction))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                        swap: bool = False, reduction: int = 0) -> Tensor:
    """``F.triplet_margin_loss`` with the reduction as torch's enum."""
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_reduction(reduction))


def instance_norm(input: Tensor, weight, bias, running_mean, running_var,
                  use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool = True) -> Tensor:
    """torch's top-level ``instance_norm``: the affine parameters before the running stats."""
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                           momentum, eps)


def rms_norm(input: Tensor, normalized_shape, weight=None, eps=None) -> Tensor:
    """torch's top-level ``rms_norm``."""
    return F.rms_norm(input, normalized_shape, weight, eps)


def constant_pad_nd(input: Tensor, pad, value=0) -> Tensor:
    """``F.pad`` in constant mode."""
    return F.pad(input, pad, "constant", value)
