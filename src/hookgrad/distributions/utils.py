"""Helpers the distributions share: broadcasting parameters, probabilities <-> logits, cached
properties and the standard-normal draw torch's reparameterised samplers start from."""
from __future__ import annotations

from functools import update_wrapper
from numbers import Number

import hookgrad as torch

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs", "probs_to_logits",
           "tril_matrix_to_vec", "vec_to_tril_matrix"]

euler_constant = 0.57721566490153286060  # the Euler-Mascheroni constant


def broadcast_all(*values):
    """Broadcast tensors and numbers together; numbers become tensors of the first tensor's
    dtype (the default dtype if none is a tensor), so ``Normal(0., scale64)`` stays float64."""
    if not all(isinstance(v, (torch.Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    if not all(isinstance(v, torch.Tensor) for v in values):
        dtype = next((v.dtype for v in values if isinstance(v, torch.Tensor)),
                     torch.get_default_dtype())
        values = tuple(v if isinstance(v, torch.Tensor) else torch.tensor(v, dtype=dtype)
                       for v in values)
    return torch.broadcast_tensors(*values)


def _standard_normal(shape, dtype, device=None):
    """Standard normals of ``shape``, drawn the way torch's samplers draw them (``normal_`` on a
    fresh tensor), so a seeded rsample gives torch's numbers."""
    return torch.empty(shape, dtype=dtype).normal_()


def _sum_rightmost(value, dim: int):
    """Sum out the ``dim`` rightmost dimensions of ``value``."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:-dim]) + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary: bool = False):
    """Probabilities from logits: a sigmoid for log-odds, a softmax over the last dimension for
    (unnormalised) log-probabilities."""
    if is_binary:
        return torch.sigmoid(logits)
    return torch.nn.functional.softmax(logits, dim=-1)


def clamp_probs(probs):
    """Probabilities kept inside [eps, 1 - eps] of their dtype, so their logs stay finite."""
    eps = torch.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary: bool = False):
    """Logits from probabilities (clamped first): log-odds when binary, else the logs."""
    clamped = clamp_probs(probs)
    if is_binary:
        return torch.log(clamped) - torch.log1p(-clamped)
    return torch.log(clamped)


class lazy_property:
    """A property computed once per instance (with grad enabled) and then stored on it, so
    ``probs`` derived from ``logits`` costs nothing until asked for and keeps its graph."""

    def __init__(self, wrapped):
        update_wrapper(self, wrapped)
        self.wrapped = wrapped

    def __get__(self, instance, obj_type=None):
        if instance is None:
            # looked up on the class: answer with something that is also a real property
            return _lazy_property_and_property(self.wrapped)
        # grad stays on even under no_grad so the cached value keeps its graph to the parameter
        with torch.enable_grad():
            result = self.wrapped(instance)
        # stored under the same name, the instance attribute now hides this descriptor
        setattr(instance, self.wrapped.__name__, result)
        return result


class _lazy_property_and_property(lazy_property, property):
    """What a lazy_property looks like on the class: both kinds, for validation and docs."""

    def __init__(self, wrapped):
        super(lazy_property, self).__init__(wrapped)  # property's, skipping lazy_property's


def _loc_scale_batch(dist, loc, scale):
    """Set ``dist.loc`` and ``dist.scale`` broadcast against each other and return the batch
    shape they give: empty when both were Python numbers, else their broadcast shape (the
    constructor of every location-scale family)."""
    dist.loc, dist.scale = broadcast_all(loc, scale)
    both_numbers = isinstance(loc, Number) and isinstance(scale, Number)
    return torch.Size() if both_numbers else dist.loc.size()


class _CoinOdds:
    """``probs`` and ``logits`` of a two-outcome parameter, each derived from the other on
    first use: a distribution built from one of them (Bernoulli, Binomial, Geometric, the
    relaxed Bernoulli) sets it on the instance, and the other is computed and kept when read."""

    @lazy_property
    def logits(self):
        """Log-odds, log p - log(1 - p), of the (clamped) probabilities."""
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        """The probability of a success (heads), sigmoid(logits)."""
        return logits_to_probs(self.logits, is_binary=True)


def _tril_mask(n: int, diag: int):
    """True where column - row <= diag, i.e. on and below diagonal ``diag``."""
    idx = torch.arange(n)
    return idx.view(1, -1) - idx.view(-1, 1) <= diag


def tril_matrix_to_vec(mat, diag: int = 0):
    """The entries on and below diagonal ``diag`` of (a batch of) square matrices, row by row."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag)]


def vec_to_tril_matrix(vec, diag: int = 0):
    """The inverse of ``tril_matrix_to_vec``: fill a lower triangle from a vector."""
    length = vec.shape[-1]
    # the side of the square, from the triangle's size (torch's formula and its tolerance)
    root = ((1 + 2 * diag) ** 2 + 8 * length + 4 * abs(diag) * (diag + 1)) ** 0.5
    n = (-(1 + 2 * diag) + root) / 2
    if round(n) - n > torch.finfo(vec.dtype).eps:
        raise ValueError(f"The size of last dimension is {length} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    n = round(n)
    mat = vec.new_zeros(tuple(vec.shape[:-1]) + (n, n))
    mat[..., _tril_mask(n, diag)] = vec
    return mat
