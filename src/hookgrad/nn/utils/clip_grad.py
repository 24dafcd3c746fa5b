"""Gradient clipping by total norm or by value, in place on ``.grad`` (torch's semantics: the
norm is taken per tensor, then over those norms; the scale is always applied, clamped at 1)."""
from __future__ import annotations

import types
from typing import Iterable, Optional, Union

import numpy as np

from ..._warnings import warn
from ... import _dtype
from ...autograd import grad_mode
from ...tensor import Tensor

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
           "get_total_norm"]

TensorOrTensors = Union[Tensor, Iterable[Tensor]]


def _vector_norm(array: np.ndarray, norm_type: float) -> np.ndarray:
    """``linalg.vector_norm`` of a whole array as a 0-dim array of its dtype."""
    magnitude = np.abs(array.ravel())
    if norm_type == np.inf or norm_type == -np.inf:
        if magnitude.size == 0:
            # torch takes the per-tensor inf norms with _foreach_norm, the -inf ones with
            # linalg.vector_norm: the message names whichever raised
            where = ("_foreach_norm cannot compute the infinity" if norm_type > 0
                     else "linalg.vector_norm cannot compute the -inf")
            raise RuntimeError(f"{where} norm on an empty tensor because the operation does "
                               "not have an identity")
        return (magnitude.max() if norm_type > 0 else magnitude.min()).astype(array.dtype)
    if norm_type == 0:
        return np.asarray(np.count_nonzero(magnitude), array.dtype)
    if norm_type == 1:
        return np.asarray(magnitude.sum(), array.dtype)
    if norm_type == 2:
        return np.sqrt(np.dot(magnitude, magnitude)).astype(array.dtype)
    kind = array.dtype.type
    return np.asarray(np.sum(magnitude ** kind(norm_type)) ** kind(1.0 / norm_type), array.dtype)


def _grouped_by_dtype(tensors: list) -> dict:
    """Tensors grouped by dtype in order of first appearance (torch groups by device and dtype
    and takes each group's norms together)."""
    groups: dict = {}
    for tensor in tensors:
        groups.setdefault(tensor._data.dtype, []).append(tensor)
    return groups


def get_total_norm(tensors: TensorOrTensors, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: Optional[bool] = None) -> Tensor:
    """The ``norm_type``-norm of the norms of ``tensors`` (as if all were concatenated)."""
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return Tensor._make(np.zeros((), _dtype.get_default_dtype().numpy))
    norms = [_vector_norm(t._data, norm_type)
             for group in _grouped_by_dtype(tensors).values() for t in group]
    result_dtype = np.result_type(*norms)
    total = _vector_norm(np.stack([n.astype(result_dtype) for n in norms]), norm_type)
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                           "`parameters` is non-finite, so it cannot be clipped. To disable this "
                           "error and scale the gradients by the non-finite norm anyway, set "
                           "`error_if_nonfinite=False`")
    return Tensor._make(np.asarray(total, result_dtype))


def clip_grads_with_norm_(parameters: TensorOrTensors, max_norm: float, total_norm: Tensor,
                          foreach: Optional[bool] = None) -> None:
    """Scale every ``.grad`` by ``min(1, max_norm / (total_norm + 1e-6))`` in place."""
    parameters = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return
    total = total_norm._data
    kind = total.dtype.type
    # torch's ``max_norm / tensor`` is ``tensor.reciprocal() * max_norm``: same rounding here
    coefficient = np.minimum(kind(1) / (total + kind(1e-6)) * kind(float(max_norm)), kind(1.0))
    with grad_mode.no_grad(), np.errstate(invalid="ignore"):  # a non-finite norm gives nan
        for grad in grads:
            grad._data *= grad._data.dtype.type(coefficient)
            grad._version_counter[0] += 1


def clip_grad_norm_(parameters: TensorOrTensors, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: Optional[bool] = None) -> Tensor:
    """Scale the gradients so their total ``norm_type``-norm is at most ``max_norm``; returns
    the total norm before clipping (a 0-dim tensor), e.g. to log exploding gradients."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and len(parameters) == 0:
            warn("`parameters` is an empty generator, no gradient clipping will occur.")
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters: TensorOrTensors, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: Optional[bool] = None) -> Tensor:
    """Deprecated spelling of ``clip_grad_norm_``."""
    warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
         "`torch.nn.utils.clip_grad_norm_`.", FutureWarning)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: TensorOrTensors, clip_value: float,
                     foreach: Optional[bool] = None) -> None:
    """Clamp every ``.grad`` to ``[-clip_value, clip_value]`` in place."""
    parameters = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    clip_value = float(clip_value)
    for param in parameters:
        grad = param.grad
        if grad is None:
            continue
        kind = grad._data.dtype.type
        np.clip(grad._data, kind(-clip_value), kind(clip_value), out=grad._data)
        grad._version_counter[0] += 1
