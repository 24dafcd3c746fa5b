"""Embedding: a lookup table of num_embeddings rows, initialised N(0, 1) (padding row zero)."""
from __future__ import annotations

from typing import Optional

from ...autograd.grad_mode import no_grad
from ...ops.creation import empty
from ...tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


def _resolve_padding_idx(padding_idx: Optional[int], num_embeddings: int,
                         message: str) -> Optional[int]:
    """Check ``padding_idx`` against the table and turn a negative one into its row number."""
    if padding_idx is None:
        return None
    beyond_end = padding_idx > 0 and padding_idx >= num_embeddings
    if beyond_end or padding_idx < -num_embeddings:
        raise AssertionError(message)
    return padding_idx + num_embeddings if padding_idx < 0 else padding_idx


def _give_weight(module: Module, _weight: Optional[Tensor], dtype,
                 requires_grad: bool = True) -> None:
    """Set ``module.weight`` to the given table, or to a fresh one drawn by reset_parameters.

    Needs ``num_embeddings``, ``embedding_dim`` and ``padding_idx`` set on the module first.
    """
    shape = (module.num_embeddings, module.embedding_dim)
    if _weight is None:
        module.weight = Parameter(empty(shape, dtype=dtype), requires_grad=requires_grad)
        module.reset_parameters()
        return
    if tuple(_weight.shape) != shape:
        raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
    module.weight = Parameter(_weight, requires_grad=requires_grad)


class Embedding(Module):
    """A lookup table: row ``i`` of ``weight`` for index ``i`` (``padding_idx`` rows get no
    gradient)."""
    __constants__ = ["num_embeddings", "embedding_dim", "padding_idx", "max_norm", "norm_type",
                     "scale_grad_by_freq", "sparse"]

    def __init__(self, num_embeddings: int, embedding_dim: int,
                 padding_idx: Optional[int] = None, max_norm: Optional[float] = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False,
                 _weight: Optional[Tensor] = None, _freeze: bool = False, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = _resolve_padding_idx(padding_idx, num_embeddings,
                                                "Padding_idx must be within num_embeddings")
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        _give_weight(self, _weight, dtype, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        """Redraw the table from N(0, 1); the padding row goes back to zeros."""
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input: Tensor) -> Tensor:
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            text += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            text += ", sparse=True"
        return text

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        padding_idx: Optional[int] = None, max_norm: Optional[float] = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> "Embedding":
        """An Embedding whose table is ``embeddings`` (frozen unless ``freeze=False``)."""
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings, _freeze=freeze,
                   padding_idx=padding_idx, max_norm=max_norm, norm_type=norm_type,
                   scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)
