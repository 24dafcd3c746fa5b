"""embedding_bag: sums, means or maxima of bags of embedding rows, without building the
(bags, length, dim) lookups a loop would.

Every index is looked up once (``hookgrad.embedding``, which also scales the gradient by index
frequency when asked); the rows are then reduced per bag: sum and mean with one ``index_add``
over the bag number of each position, max over a dense (bags, longest bag, dim) layout padded
with -inf. Everything is composed of differentiable tensor ops, so gradients in the weight and
in ``per_sample_weights`` (and double backward) follow from them.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

import hookgrad
from ..._warnings import warn
from ...tensor import Tensor
from .sparse import renorm_rows


def _check_indices(input: Tensor, offsets: Tensor, num_weights: int, fast_path: bool) -> None:
    """torch's checks; an out-of-range index is reported by its float32 sum/mean kernel
    (``fast_path``) or by its generic one, each in its own words."""
    for name, tensor in (("indices", input), ("offsets", offsets)):
        if tensor.dtype.is_floating_point or str(tensor.dtype) not in ("torch.int64",
                                                                       "torch.int32"):
            position = 1 if name == "indices" else 2
            raise RuntimeError(f"Expected tensor for argument #{position} '{name}' to have one of "
                               f"the following scalar types: Long, Int; but got {tensor.type()} "
                               "instead (while checking arguments for embedding_bag)")
    values = input.numpy()
    bad = np.flatnonzero((values < 0) | (values >= num_weights))
    if bad.size and fast_path:
        raise RuntimeError(f"Index {bad[0]} of input takes value {values[bad[0]]} which is not in "
                           f"the valid range [0, {num_weights})")
    if bad.size:
        raise RuntimeError("embedding_bag: Expected idx >= 0 && idx < num_embeddings but found "
                           f"idx to be {values[bad[0]]}")
    starts = offsets.numpy()
    if starts.size and starts[0] != 0:
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           f"has to start from position 0. However, got {starts[0]}")
    if starts.size and starts[-1] > values.size:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {values.size} "
                           f"but got offsets[-1] of {starts[-1]}")


def embedding_bag(input: Tensor, weight: Tensor, offsets: Optional[Tensor] = None,
                  max_norm: Optional[float] = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Optional[Tensor] = None, include_last_offset: bool = False,
                  padding_idx: Optional[int] = None) -> Tensor:
    """Reduce bags of embedding rows (mode 'sum', 'mean' or 'max'), as
    torch.nn.functional.embedding_bag (including the gradient factors its CPU kernel gives
    with scale_grad_by_freq). Differs from torch: ``sparse=True`` gives a dense gradient; the
    backward graph is made of ordinary ops (no EmbeddingBagBackward0 node)."""
    if weight.dtype == hookgrad.int64 and input.is_floating_point():
        warn("Argument order of nn.functional.embedding_bag was changed. Usage "
             "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
             "`embedding_bag(input, weight, ...)`.")
        weight, input = input, weight
    if per_sample_weights is not None and input.shape != per_sample_weights.shape:
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
                         f"not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.ndim}")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is "
                             "a mini-batch of fixed length sequences. However, found offsets of "
                             f"type {type(offsets)}")
        offsets = hookgrad.arange(0, input.numel(), input.shape[1], dtype=input.dtype)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.ndim}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    num_weights = weight.shape[0]
    if padding_idx is not None:
        if not -num_weights <= padding_idx < num_weights:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, "
                               f"-{num_weights} through {num_weights - 1}, but got {padding_idx}")
        padding_idx %= num_weights
    _check_indices(input, offsets, num_weights,
                   mode != "max" and weight.dtype == hookgrad.float32)
    if max_norm is not None:
        renorm_rows(weight, input.numpy(), max_norm, norm_type)
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError(
                "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                f"supported for mode='sum' (got mode='{mode}'). Please open a feature request "
                "on GitHub.")
        if per_sample_weights.dtype != weight.dtype:
            raise RuntimeError("Expected tensor for argument #1 'weight' to have the same type as "
                               "tensor for argument #1 'per_sample_weights'; but type "
                               f"{weight.type()} does not equal {per_sample_weights.type()} "
                               "(while checking arguments for embedding_bag)")
    return _reduce_bags(input, weight, offsets.numpy().astype(np.int64), mode,
                        per_sample_weights, include_last_offset, padding_idx, scale_grad_by_freq)


def _reduce_bags(input, weight, starts, mode, per_sample_weights, include_last_offset,
                 padding_idx, scale_grad_by_freq) -> Tensor:
    indices = input.numpy().astype(np.int64)
    length = indices.size
    bags = max(starts.size - 1, 0) if include_last_offset else starts.size
    # bag of each position; with include_last_offset the last bag still runs to the end of
    # the input (torch ignores the final offset's value)
    bag = np.searchsorted(starts[:bags], np.arange(length), side="right") - 1
    keep = bag >= 0
    if padding_idx is not None:
        keep &= indices != padding_idx
    counts = np.maximum(np.bincount(bag[keep], minlength=bags), 1)
    positions = np.flatnonzero(keep)
    bag = bag[positions]
    rows = hookgrad.embedding(weight, hookgrad.tensor(indices[positions]))
    if scale_grad_by_freq:
        rows = _scale_gradient(rows, _frequency_scale(indices, weight.shape[0])[
            indices[positions]])
    dim = weight.shape[1]
    if mode == "max":
        return _bag_max(rows, bag, bags, dim)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights[hookgrad.tensor(positions)].unsqueeze(1)
    zeros = hookgrad.zeros((bags, dim), dtype=weight.dtype)
    total = zeros.index_add(0, hookgrad.tensor(bag), rows)
    if padding_idx is None and include_last_offset and weight.dtype == hookgrad.float32 and bags:
        # torch's float32 sum/mean kernel (used when there is no padding_idx) sums the last bag
        # only up to the final offset, where its generic kernel runs on to the input's end; a
        # mean still divides by the count to the end and, in backward, sends every index its
        # share (so there only the value is cut)
        inside = positions < starts[bags]
        cut = zeros.index_add(0, hookgrad.tensor(bag[inside]),
                              rows[hookgrad.tensor(np.flatnonzero(inside))])
        total = cut if mode == "sum" else cut.detach() + (total - total.detach())
    if mode == "sum":
        return total
    return total / hookgrad.tensor(counts, dtype=total.dtype).unsqueeze(1)


def _frequency_scale(indices: np.ndarray, num_weights: int) -> np.ndarray:
    """Per-row gradient factor of scale_grad_by_freq as torch's CPU kernel computes it: the
    k-th distinct index (in sorted order) is divided by the frequency of the k-th entry of the
    sorted indices (not of itself; for indices that repeat, the two differ)."""
    ordered = np.sort(indices)
    distinct = np.unique(indices)
    counts = np.bincount(indices, minlength=num_weights)
    scale = np.ones(num_weights)
    scale[distinct] = 1.0 / counts[ordered[np.arange(distinct.size)]]
    return scale


def _scale_gradient(tensor: Tensor, factor: np.ndarray) -> Tensor:
    """``tensor`` unchanged in value (bit for bit) whose gradient is multiplied by ``factor``
    (one value per row)."""
    frozen = tensor.detach()
    factor = hookgrad.tensor(factor, dtype=tensor.dtype).unsqueeze(1)
    return frozen + (tensor - frozen) * factor


def _bag_max(rows: Tensor, bag: np.ndarray, bags: int, dim: int) -> Tensor:
    """Per-bag maximum over a dense layout: slot (b, k) holds the k-th row of bag b, or a
    row of -inf; an empty bag gives zeros, as in torch."""
    counts = np.bincount(bag, minlength=bags)
    longest = int(counts.max()) if counts.size else 0
    first = np.concatenate([[0], np.cumsum(counts)[:-1]]) if bags else np.zeros(0, np.int64)
    slot = np.full((bags, max(longest, 1)), bag.size, np.int64)  # bag.size: the -inf row
    within = np.arange(bag.size) - first[bag]
    slot[bag, within] = np.arange(bag.size)
    floor = hookgrad.full((1, dim), float("-inf"), dtype=rows.dtype)
    dense = hookgrad.cat([rows, floor])[hookgrad.tensor(slot)]
    best = dense.max(1).values
    empty = hookgrad.tensor((counts == 0)[:, None])
    return hookgrad.where(empty, hookgrad.zeros((), dtype=rows.dtype), best)
