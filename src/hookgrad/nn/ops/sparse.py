"""Embedding lookup: rows of the weight picked by integer indices; its gradient is a scatter-add
of the incoming rows (padding rows get none), and that scatter's gradient is the lookup again."""
from __future__ import annotations

import numpy as np

from ...autograd import grad_mode
from ...tensor import Tensor
from ..._dtype import legacy_type_name
from ...ops._base import Op


def renorm_rows(weight: Tensor, indices: np.ndarray, max_norm: float, norm_type: float) -> None:
    """Rows named in ``indices`` whose norm exceeds ``max_norm`` are scaled by
    max_norm / (norm + 1e-7), in place and outside autograd (``embedding``'s ``max_norm`` and
    ``torch.embedding_renorm_``)."""
    rows = np.unique(indices)
    with grad_mode.no_grad():
        values = weight._data[rows]
        norms = np.linalg.norm(values, ord=norm_type, axis=1)
        scale = np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        weight[Tensor._make(rows)] = Tensor._make((values * scale[:, None]).astype(
            weight._data.dtype))


def _row_scale(indices: np.ndarray, num_weights: int, padding_idx, scale_grad_by_freq: bool,
               dtype) -> np.ndarray:
    """Per-index factor of the gradient: 0 at padding_idx, 1 / frequency if asked."""
    scale = np.ones(indices.shape, dtype)
    if scale_grad_by_freq:
        counts = np.bincount(indices.ravel(), minlength=num_weights)
        scale = scale / counts[indices]
    if padding_idx is not None:
        scale = scale * (indices != padding_idx)
    return scale.astype(dtype, copy=False)


class Embedding(Op):
    """out[...] = weight[indices[...]]"""

    node_name = "EmbeddingBackward0"
    saved_names = ("indices",)
    saved_values = {"weight_sym_argsize_0": "num_weights", "scale_grad_by_freq":
                    "scale_grad_by_freq", "sparse": "sparse"}

    @staticmethod
    def forward(ctx, weight, indices, padding_idx, scale_grad_by_freq, sparse=False):
        if indices.dtype.kind not in "iu" or indices.dtype.itemsize < 4:
            raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                               "following scalar types: Long, Int; but got "
                               f"{legacy_type_name(indices)} instead (while checking arguments "
                               "for embedding)")
        if indices.size and (indices.min() < 0 or indices.max() >= weight.shape[0]):
            raise IndexError("index out of range in self")
        ctx.num_weights = weight.shape[0]
        ctx.padding_idx, ctx.scale_grad_by_freq = padding_idx, scale_grad_by_freq
        ctx.sparse = sparse  # accepted; the gradient stays dense
        # torch keeps "no padding row" as -1, read back unsigned as its ints are
        ctx._saved_padding_idx = (-1 if padding_idx is None else padding_idx) % 2 ** 64
        ctx.save_for_backward(indices)
        return weight[indices]

    @staticmethod
    def backward(ctx, grad):
        (indices,) = ctx.saved_tensors
        return EmbeddingDenseGrad.apply(grad, indices._data, ctx.num_weights, ctx.padding_idx,
                                        ctx.scale_grad_by_freq)


class EmbeddingDenseGrad(Op):
    """grad_weight[r] = sum of grad rows whose index is r (scaled, padding row left at 0)"""

    node_name = "EmbeddingDenseBackwardBackward0"
    saved_names = ("indices",)

    @staticmethod
    def forward(ctx, grad, indices, num_weights, padding_idx, scale_grad_by_freq):
        ctx.num_weights = num_weights
        ctx.padding_idx, ctx.scale_grad_by_freq = padding_idx, scale_grad_by_freq
        ctx.save_for_backward(indices)
        rows = grad.reshape(-1, grad.shape[-1])
        scale = _row_scale(indices, num_weights, padding_idx, scale_grad_by_freq, grad.dtype)
        result = np.zeros((num_weights, grad.shape[-1]), grad.dtype)
        np.add.at(result, indices.ravel(), rows * scale.reshape(-1, 1))
        return result

    @staticmethod
    def backward(ctx, grad):
        (indices,) = ctx.saved_tensors
        indices = indices._data
        scale = _row_scale(indices, ctx.num_weights, ctx.padding_idx, ctx.scale_grad_by_freq,
                           grad._data.dtype)
        rows = Embedding.apply(grad, indices, None, False)
        return rows * Tensor._make(scale[..., None])
