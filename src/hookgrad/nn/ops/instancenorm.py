"""instance_norm: batch norm of a (1, N * C, *spatial) view, torch's composition.

Weight, bias and running statistics are repeated N times so every (sample, channel) plane is a
channel of its own; the running statistics are then the mean of their N updated copies.
"""
from __future__ import annotations

import math
from typing import Optional

import hookgrad
from ...tensor import Tensor


def _repeat(tensor: Optional[Tensor], times: int, dtype=None) -> Optional[Tensor]:
    if tensor is None:
        return None
    if dtype is not None and tensor.dtype != dtype:
        tensor = tensor.to(dtype)
    return tensor.repeat(times)


def instance_norm(input: Tensor, running_mean: Optional[Tensor] = None,
                  running_var: Optional[Tensor] = None, weight: Optional[Tensor] = None,
                  bias: Optional[Tensor] = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each (sample, channel) plane by its own mean and variance (or by the running
    statistics when ``use_input_stats`` is False), as torch.nn.functional.instance_norm."""
    if use_input_stats and math.prod(input.shape[2:]) == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                         f"{hookgrad.Size(input.shape)}")
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    batch, channels = input.shape[:2]
    for name, tensor in (("weight", weight), ("bias", bias), ("running_mean", running_mean),
                         ("running_var", running_var)):
        if tensor is not None and tensor.numel() * batch != batch * channels:
            raise RuntimeError(f"{name} should contain {batch * channels} elements not "
                               f"{tensor.numel() * batch}")
    # the running statistics take part in the input's dtype (whatever theirs), as in torch
    mean_copies = _repeat(running_mean, batch, input.dtype)
    var_copies = _repeat(running_var, batch, input.dtype)
    flat = input.contiguous().view((1, batch * channels) + tuple(input.shape[2:]))
    out = hookgrad.batch_norm(flat, _repeat(weight, batch), _repeat(bias, batch), mean_copies,
                              var_copies, use_input_stats, momentum, eps, False)
    with hookgrad.no_grad():
        if running_mean is not None:
            running_mean.copy_(mean_copies.view(batch, channels).mean(0))
        if running_var is not None:
            running_var.copy_(var_copies.view(batch, channels).mean(0))
    return out.view(input.shape)
