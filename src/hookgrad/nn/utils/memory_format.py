"""Converting the weights of every 2-d (3-d) convolution in a model to a memory format,
typically channels-last, so their layout matches channels-last inputs."""
from __future__ import annotations

from typing import Tuple, TypeVar

import hookgrad
from ..._memory_format import memory_format
from ..modules.module import Module

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]

_M = TypeVar("_M", bound=Module)


def _convert(module: _M, layout: memory_format, kinds: Tuple[type, ...]) -> _M:
    if isinstance(module, kinds):
        # the same Parameter object takes the new strides, so optimizers keep their state
        module.weight.data = module.weight.detach().clone(memory_format=layout)
    for child in module.children():
        _convert(child, layout, kinds)
    return module


def convert_conv2d_weight_memory_format(module: _M, memory_format: memory_format) -> _M:
    """Give the weight of every ``Conv2d``/``ConvTranspose2d`` in ``module`` (recursively) the
    layout ``memory_format``, in place; returns ``module``."""
    return _convert(module, memory_format, (hookgrad.nn.Conv2d, hookgrad.nn.ConvTranspose2d))


def convert_conv3d_weight_memory_format(module: _M, memory_format: memory_format) -> _M:
    """Give the weight of every ``Conv3d``/``ConvTranspose3d`` in ``module`` (recursively) the
    layout ``memory_format``, in place; returns ``module``."""
    return _convert(module, memory_format, (hookgrad.nn.Conv3d, hookgrad.nn.ConvTranspose3d))
