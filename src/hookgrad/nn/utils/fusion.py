"""Folding an evaluation-mode batch norm into the convolution or linear layer before it:
``bn(conv(x)) == fused(x)`` with ``W' = W gamma / sqrt(var + eps)`` and
``b' = (b - mean) gamma / sqrt(var + eps) + beta``, one layer instead of two at inference."""
from __future__ import annotations

import copy
from typing import Optional, Tuple, TypeVar

import hookgrad
from ...tensor import Tensor
from ..modules.module import Module
from ..parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]

ConvT = TypeVar("ConvT", bound=Module)
LinearT = TypeVar("LinearT", bound=Module)


def fuse_conv_bn_eval(conv: ConvT, bn: Module, transpose: bool = False) -> ConvT:
    """A copy of ``conv`` (both modules in eval mode) that also applies ``bn``; ``transpose``
    for transposed convolutions, whose output channels are the weight's dim 1."""
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(conv)
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias,
        transpose)
    return fused


def fuse_conv_bn_weights(conv_w: Tensor, conv_b: Optional[Tensor], bn_rm: Tensor,
                         bn_rv: Tensor, bn_eps: float, bn_w: Optional[Tensor],
                         bn_b: Optional[Tensor],
                         transpose: bool = False) -> Tuple[Parameter, Parameter]:
    """The fused convolution's (weight, bias) as Parameters, in the convolution's dtypes; a
    missing conv bias counts as zeros, a missing affine as gamma 1, beta 0."""
    weight_dtype = conv_w.dtype
    bias_dtype = conv_b.dtype if conv_b is not None else weight_dtype
    conv_b = hookgrad.zeros_like(bn_rm) if conv_b is None else conv_b
    bn_w = hookgrad.ones_like(bn_rm) if bn_w is None else bn_w
    bn_b = hookgrad.zeros_like(bn_rm) if bn_b is None else bn_b
    inverse_std = hookgrad.rsqrt(bn_rv + bn_eps)
    channel = [1, -1] if transpose else [-1, 1]
    shape = channel + [1] * (len(conv_w.shape) - 2)
    weight = (conv_w * (bn_w * inverse_std).reshape(shape)).to(dtype=weight_dtype)
    bias = ((conv_b - bn_rm) * inverse_std * bn_w + bn_b).to(dtype=bias_dtype)
    return Parameter(weight, conv_w.requires_grad), Parameter(bias, conv_b.requires_grad)


def fuse_linear_bn_eval(linear: LinearT, bn: Module) -> LinearT:
    """A copy of ``linear`` (both in eval mode) that also applies ``bn``, whose features must
    equal the linear's outputs (or be 1)."""
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(linear)
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError("To fuse, linear.out_features == bn.num_features or "
                             f"bn.num_features == 1, got linear.out_features="
                             f"{linear.out_features} and bn.num_features={bn.num_features}")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)
    return fused


def fuse_linear_bn_weights(linear_w: Tensor, linear_b: Optional[Tensor], bn_rm: Tensor,
                           bn_rv: Tensor, bn_eps: float, bn_w: Tensor,
                           bn_b: Tensor) -> Tuple[Parameter, Parameter]:
    """The fused linear layer's (weight, bias) as Parameters, in the linear's dtypes."""
    weight_dtype = linear_w.dtype
    bias_dtype = linear_b.dtype if linear_b is not None else weight_dtype
    linear_b = hookgrad.zeros_like(bn_rm) if linear_b is None else linear_b
    scale = bn_w * hookgrad.rsqrt(bn_rv + bn_eps)
    weight = linear_w * scale.unsqueeze(-1).to(dtype=weight_dtype)
    bias = ((linear_b - bn_rm) * scale + bn_b).to(dtype=bias_dtype)
    return Parameter(weight, linear_w.requires_grad), Parameter(bias, linear_b.requires_grad)
