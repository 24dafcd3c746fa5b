"""``segment_reduce``: one reduction (sum, mean, max, min, prod) per run of consecutive
elements along ``axis``, the runs given by their ``lengths`` or by ``offsets`` (the start of
each run and the end of the last).

Empty runs give the reduction's identity (0, 1, -inf, inf; NaN for mean) or ``initial`` when
given; ``initial`` also takes part in every non-empty run (for mean it is added to the sum, the
count unchanged). The gradient, as torch's: max/min share it equally among the elements equal
to the result; prod handles zeros exactly. Like torch, the gradient has no gradient itself.
"""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from ._base import Op, not_implemented
from ._util import normalize_dim

_REDUCTIONS = {"sum": "sum", "mean": "mean", "max": "max", "amax": "max", "min": "min",
               "amin": "min", "prod": "prod"}
_EMPTY = {"sum": 0.0, "mean": np.nan, "max": -np.inf, "min": np.inf, "prod": 1.0}
_ENHANCE = ("  (Could this error message be improved?  If so, please report an enhancement "
            "request to PyTorch.)")


def _segments(data: np.ndarray, offsets: np.ndarray):
    """(batch index, segment number, the run of ``data``) for every segment: the dims of
    ``offsets`` but its last index the batch, and the segments run along the next dim."""
    batch = offsets.shape[:-1]
    for index in np.ndindex(*batch):
        row = data[index]  # ``axis`` is now the leading dim
        bounds = offsets[index]
        for number in range(bounds.shape[0] - 1):
            yield index, number, row[int(bounds[number]):int(bounds[number + 1])]


def _reduce_run(run: np.ndarray, reduction: str, initial) -> np.ndarray:
    if run.shape[0] == 0:
        value = _EMPTY[reduction] if initial is None else initial
        return np.full(run.shape[1:], value, np.float64)
    if reduction == "mean":
        total = run.sum(0) + (0.0 if initial is None else initial)
        return total / run.shape[0]
    result = {"sum": np.sum, "max": np.max, "min": np.min, "prod": np.prod}[reduction](run, 0)
    if initial is not None:
        result = {"sum": np.add, "max": np.maximum, "min": np.minimum,
                  "prod": np.multiply}[reduction](result, initial)
    return result


def _run_gradient(run: np.ndarray, result: np.ndarray, grad: np.ndarray, reduction: str,
                  initial) -> np.ndarray:
    if run.shape[0] == 0:
        return np.zeros_like(run)
    if reduction == "sum":
        return np.broadcast_to(grad, run.shape).copy()
    if reduction == "mean":
        return np.broadcast_to(grad / run.shape[0], run.shape).copy()
    if reduction in ("max", "min"):
        hits = run == result
        ties = np.maximum(hits.sum(0), 1)
        return np.where(hits, grad / ties, 0.0)
    # prod: the product of the others, counted with zeros so a single zero is handled exactly
    zeros = run == 0
    zero_count = zeros.sum(0)
    scale = 1.0 if initial is None else initial
    nonzero_product = np.prod(np.where(zeros, 1.0, run), 0) * scale
    with np.errstate(all="ignore"):
        others = np.where(zero_count == 0, nonzero_product / np.where(zeros, 1.0, run),
                          np.where(zeros & (zero_count == 1), nonzero_product, 0.0))
    return grad * others


class SegmentReduce(Op):
    """out[s] = reduce(data[offsets[s]:offsets[s + 1]]) along ``axis``"""

    node_name = "SegmentReduceBackward0"

    @staticmethod
    def forward(ctx, data, offsets, reduction, axis, initial):
        # ``axis`` is the last dim of ``offsets``: the dims before it are the batch
        compute = data.astype(np.float64)
        out = np.empty(offsets.shape[:-1] + (offsets.shape[-1] - 1,) + data.shape[axis + 1:],
                       np.float64)
        for index, number, run in _segments(compute, offsets):
            out[index + (number,)] = _reduce_run(run, reduction, initial)
        result = out.astype(data.dtype)
        ctx.options = (reduction, axis, initial)
        ctx.save_for_backward(data, offsets, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        data, offsets, result = ctx.saved_tensors
        return (SegmentReduceBackward.apply(grad, data, offsets, result, *ctx.options),
                None, None, None, None)


class SegmentReduceBackward(Op):
    """the gradient of ``segment_reduce``; torch has no formula for its own gradient"""

    node_name = "torch::autograd::NotImplemented"

    @staticmethod
    def forward(ctx, grad, data, offsets, result, reduction, axis, initial):
        values, grads = data.astype(np.float64), grad.astype(np.float64)
        results = result.astype(np.float64)
        out = np.zeros(values.shape, np.float64)
        for index, number, run in _segments(values, offsets):
            start = int(offsets[index][number])
            where = index + (slice(start, start + run.shape[0]),)
            out[where] = _run_gradient(run, results[index + (number,)],
                                       grads[index + (number,)], reduction, initial)
        return out.astype(data.dtype)

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("derivative for aten::_segment_reduce_backward is not implemented")


def _offsets_from(data: Tensor, lengths, offsets, axis: int, unsafe: bool) -> np.ndarray:
    given = offsets if offsets is not None else lengths
    name = "offsets" if offsets is not None else "lengths"
    values = given._data
    if values.dtype.kind not in "iu":
        raise not_implemented(f"_segment_reduce_{name}_cpu_kernel1", values.dtype)
    if data.dim() < values.ndim:
        raise RuntimeError(f"Expected data.dim() >= {name}_value.dim() to be true, but got "
                           f"false.{_ENHANCE}")
    if axis != values.ndim - 1:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of {name} "
                           f"but got {axis}.")
    if offsets is not None:
        if np.any(np.diff(values, axis=-1) < 0):
            raise RuntimeError(f"Expected segment_length >= 0 to be true, but got false.{_ENHANCE}")
        return values.astype(np.int64)
    if not unsafe:
        if np.any(values < 0):
            raise RuntimeError("lengths contains negative value!")
        if np.any(values.sum(-1) != data.shape[axis]):
            raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum "
                               "to data.size(lengths.dim()-1) when !unsafe.")
    starts = np.zeros(values.shape[:-1] + (1,), np.int64)
    return np.concatenate([starts, np.cumsum(values, -1, dtype=np.int64)], -1)


def segment_reduce(data: Tensor, reduce: str, *, lengths: Tensor = None,
                   indices: Tensor = None, offsets: Tensor = None, axis: int = 0,
                   unsafe: bool = False, initial=None) -> Tensor:
    """Reduce each segment of ``data`` along ``axis`` with ``reduce`` ("sum", "mean", "max",
    "min", "prod"; "amax"/"amin" too); segments by ``lengths`` or ``offsets`` (which wins when
    both are given), batched over the dims before ``axis``. ``unsafe`` skips the check that the
    lengths cover ``data``; ``initial`` joins every segment and fills empty ones."""
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if data._data.dtype.kind not in "fV":
        raise not_implemented("_segment_reduce_cpu", data._data.dtype)
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    axis = normalize_dim(axis, data.dim())
    bounds = _offsets_from(data, lengths, offsets, axis, unsafe)
    initial = None if initial is None else float(initial)
    return SegmentReduce.apply(data, Tensor._make(bounds), _REDUCTIONS[reduce], axis, initial)
