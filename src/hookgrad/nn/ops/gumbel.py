"""gumbel_softmax: a softmax over logits perturbed by Gumbel(0, 1) noise.

Composed from tensor ops in torch's order so that, seeded alike, the noise consumes the default
generator exactly as torch's does (one ``exponential_`` fill of a fresh tensor shaped like the
logits, then ``-log``) and the graph records the same nodes: ``SoftmaxBackward0`` for the soft
sample; for the hard one-hot, the straight-through ``y_hard - y_soft.detach() + y_soft`` whose
gradient is the soft sample's.
"""
from __future__ import annotations

from ... import _memory_format as _mf
from ..._warnings import warn
from ...tensor import Tensor

_DEFAULT_EPS = 1e-10


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """``softmax((logits + g) / tau, dim)`` with ``g = -log(Exponential(1))`` ~ Gumbel(0, 1);
    with ``hard`` the forward value is the one-hot of its argmax along ``dim`` while the
    gradient is the soft sample's (straight through). ``eps`` is accepted for torch's
    signature only and has no effect (a value other than the default warns, as torch's)."""
    from ...ops.creation import empty_like, zeros_like

    if eps != _DEFAULT_EPS:
        warn("`eps` parameter is deprecated and has no effect.")
    noise = -empty_like(logits, memory_format=_mf.contiguous_format).exponential_().log()
    y_soft = ((logits + noise) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = zeros_like(logits, memory_format=_mf.contiguous_format).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


__all__ = ["gumbel_softmax"]
