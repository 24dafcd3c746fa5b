"""TransformerEncoderLayer (post- or pre-norm) and TransformerEncoder, composed like torch's,
and the mask helpers the decoder shares."""
from __future__ import annotations

import copy
from typing import Callable, Optional, Union

import hookgrad
from ..._warnings import warn
from ...tensor import Tensor
from .. import functional as F
from .activation import GELU, MultiheadAttention, ReLU
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm


def _get_activation_fn(activation: str) -> Callable[[Tensor], Tensor]:
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
    """-inf above the diagonal, 0 on and below: position i may attend to positions <= i."""
    return hookgrad.triu(hookgrad.full((sz, sz), float("-inf"), dtype=dtype), diagonal=1)


def _get_seq_len(src: Tensor, batch_first: bool) -> int:
    if src.dim() == 2:
        return src.shape[0]
    return src.shape[1 if batch_first else 0]


def _detect_is_causal_mask(mask: Optional[Tensor], is_causal: Optional[bool] = None,
                           size: Optional[int] = None) -> bool:
    """``is_causal`` when given; otherwise whether ``mask`` equals the square subsequent mask
    of ``size`` (torch's rule, so the same attention path is taken)."""
    make_causal = is_causal is True
    if is_causal is None and mask is not None:
        sz = size if size is not None else mask.shape[-2]
        causal = _generate_square_subsequent_mask(sz, dtype=mask.dtype)
        if tuple(mask.shape) == tuple(causal.shape):
            make_causal = bool((mask == causal).all())
        else:
            make_causal = False
    return make_causal


class TransformerEncoderLayer(Module):
    """Self-attention block then feed-forward block, each with dropout, residual and LayerNorm
    (after the residual, or before the block when norm_first)."""

    __constants__ = ["norm_first"]

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Union[str, Callable] = F.relu,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        # torch's flag for its fused inference kernel (1 relu, 2 gelu, 0 other); the encoder
        # reads it to decide whether padded positions come back zeroed
        if activation is F.relu or isinstance(activation, ReLU):
            self.activation_relu_or_gelu = 1
        elif activation is F.gelu or isinstance(activation, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def forward(self, src: Tensor, src_mask: Optional[Tensor] = None,
                src_key_padding_mask: Optional[Tensor] = None, is_causal: bool = False
                ) -> Tensor:
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x: Tensor, attn_mask, key_padding_mask, is_causal: bool) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerEncoder(Module):
    """num_layers deep copies of an encoder layer, then an optional norm.

    hookgrad has no nested tensors, but it reproduces what torch's nested-tensor inference path
    changes in the result: when that path would be taken (``use_nested_tensor``, eval mode, no
    gradient needed, a batched input with a right-padded ``src_key_padding_mask`` and no
    ``mask``), the padded positions come out as zeros before the final norm, as in torch.
    """

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int,
                 norm: Optional[Module] = None, enable_nested_tensor: bool = True,
                 mask_check: bool = True) -> None:
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why_not = _why_no_sparsity_path(encoder_layer)
        if enable_nested_tensor and why_not:
            warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False "
                 f"because {why_not}")
            self.use_nested_tensor = False

    def forward(self, src: Tensor, mask: Optional[Tensor] = None,
                src_key_padding_mask: Optional[Tensor] = None,
                is_causal: Optional[bool] = None) -> Tensor:
        output = src
        first_layer = self.layers[0]
        seq_len = _get_seq_len(src, first_layer.self_attn.batch_first)
        is_causal = _detect_is_causal_mask(mask, is_causal, seq_len)
        for layer in self.layers:
            output = layer(output, src_mask=mask, is_causal=is_causal,
                           src_key_padding_mask=src_key_padding_mask)
        if self._takes_sparsity_path(src, mask, src_key_padding_mask):
            padded = _as_padding_bool(src_key_padding_mask)
            output = output.masked_fill(padded.unsqueeze(-1), 0.0)
        if self.norm is not None:
            output = self.norm(output)
        return output

    def _takes_sparsity_path(self, src: Tensor, mask, src_key_padding_mask) -> bool:
        first_layer = self.layers[0]
        if (not getattr(self, "use_nested_tensor", False) or first_layer.training
                or src.dim() != 3 or src_key_padding_mask is None or mask is not None):
            return False
        padded = _as_padding_bool(src_key_padding_mask)
        if getattr(self, "mask_check", True):
            # left aligned: every row is real tokens then padding
            kept = padded.logical_not().to(hookgrad.int64)
            if bool((kept[:, 1:] > kept[:, :-1]).any()):
                return False
        attention = first_layer.self_attn
        weights = (src, attention.in_proj_weight, attention.in_proj_bias,
                   attention.out_proj.weight, attention.out_proj.bias, first_layer.norm1.weight,
                   first_layer.norm1.bias, first_layer.norm2.weight, first_layer.norm2.bias,
                   first_layer.linear1.weight, first_layer.linear1.bias,
                   first_layer.linear2.weight, first_layer.linear2.bias)
        return not (hookgrad.is_grad_enabled()
                    and any(w is not None and w.requires_grad for w in weights))


def _as_padding_bool(mask: Tensor) -> Tensor:
    """A key padding mask as booleans (True = padding); a float mask pads wherever it is
    non-zero, as torch's nested-tensor conversion reads it."""
    if mask.dtype == hookgrad.bool:
        return mask
    return mask != 0


def _why_no_sparsity_path(layer) -> str:
    """torch's reasons (in its order) for not using nested tensors in an encoder."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    if layer.norm_first:
        return f"{name}.norm_first was True"
    if not layer.self_attn.batch_first:
        return (f"{name}.self_attn.batch_first was not True(use batch_first for better "
                f"inference performance)")
    if not layer.self_attn._qkv_same_embed_dim:
        return f"{name}.self_attn._qkv_same_embed_dim was not True"
    if layer.self_attn.in_proj_bias is None:
        return f"{name}.self_attn was passed bias=False"
    if not layer.activation_relu_or_gelu:
        return f"{name}.activation_relu_or_gelu was not True"
    if layer.norm1.eps != layer.norm2.eps:
        return f"{name}.norm1.eps was not equal to {name}.norm2.eps"
    if layer.self_attn.num_heads % 2 == 1:
        return f"{name}.self_attn.num_heads is odd"
    return ""
