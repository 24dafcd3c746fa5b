"""Activation layers (thin modules over the functional ops) and MultiheadAttention."""
from __future__ import annotations

from typing import Optional

from ...ops.creation import empty
from ...tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .linear import NonDynamicallyQuantizableLinear
from .module import Module


def _inplace(inplace: bool) -> str:
    return "inplace=True" if inplace else ""


class ReLU(Module):
    """Module form of ``F.relu``."""
    __constants__ = ["inplace"]

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return _inplace(self.inplace)


class SiLU(ReLU):
    """Module form of ``F.silu``."""
    def forward(self, input: Tensor) -> Tensor:
        return F.silu(input, inplace=self.inplace)


class GELU(Module):
    """Module form of ``F.gelu`` (``approximate='none'`` or ``'tanh'``)."""
    __constants__ = ["approximate"]

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Sigmoid(Module):
    """Module form of ``sigmoid``."""
    def forward(self, input: Tensor) -> Tensor:
        return F.sigmoid(input)


class GLU(Module):
    """Module form of ``F.glu``: halves along ``dim``, the first gated by the second's
    sigmoid."""
    __constants__ = ["dim"]

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Tanh(Module):
    """Module form of ``tanh``."""
    def forward(self, input: Tensor) -> Tensor:
        return F.tanh(input)


class Softplus(Module):
    """Module form of ``F.softplus``."""
    __constants__ = ["beta", "threshold"]

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class LeakyReLU(Module):
    """Module form of ``F.leaky_relu``."""
    __constants__ = ["inplace", "negative_slope"]

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class RReLU(Module):
    """Module form of ``F.rrelu``: random slopes while training, their mean in eval mode."""
    __constants__ = ["lower", "upper", "inplace"]

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                 inplace: bool = False) -> None:
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace
                                                           else "")


class ELU(Module):
    """Module form of ``F.elu``."""
    __constants__ = ["alpha", "inplace"]

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Softmax(Module):
    """Module form of ``F.softmax`` along ``dim``."""
    __constants__ = ["dim"]

    def __init__(self, dim: Optional[int] = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """Module form of ``F.log_softmax`` along ``dim``."""
    def forward(self, input: Tensor) -> Tensor:
        return F.log_softmax(input, self.dim)


class Hardtanh(Module):
    """Module form of ``F.hardtanh``."""
    __constants__ = ["min_val", "max_val", "inplace"]

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" + (
            ", inplace=True" if self.inplace else "")


class ReLU6(Hardtanh):
    """``min(max(x, 0), 6)`` as a module."""
    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return _inplace(self.inplace)


def _with_inplace(name: str, functional):
    """An activation module whose only option is ``inplace`` (SELU, Mish, Hardswish, ...)."""

    def forward(self, input: Tensor) -> Tensor:
        return functional(input, inplace=self.inplace)

    forward.__doc__ = f"``F.{functional.__name__}(input)``, in place if the module says so."

    return type(name, (ReLU,), {"forward": forward, "__module__": __name__,
                                "__doc__": f"Module form of ``F.{functional.__name__}``."})


def _without_options(name: str, functional):
    """An activation module with no options (LogSigmoid, Softsign, Tanhshrink)."""

    def forward(self, input: Tensor) -> Tensor:
        return functional(input)

    forward.__doc__ = f"``F.{functional.__name__}(input)``."

    return type(name, (Module,), {"forward": forward, "__module__": __name__,
                                  "__doc__": f"Module form of ``F.{functional.__name__}``."})


SELU = _with_inplace("SELU", F.selu)
Mish = _with_inplace("Mish", F.mish)
Hardswish = _with_inplace("Hardswish", F.hardswish)
Hardsigmoid = _with_inplace("Hardsigmoid", F.hardsigmoid)
LogSigmoid = _without_options("LogSigmoid", F.logsigmoid)
Softsign = _without_options("Softsign", F.softsign)
Tanhshrink = _without_options("Tanhshrink", F.tanhshrink)


class CELU(Module):
    """Module form of ``F.celu``: ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    __constants__ = ["alpha", "inplace"]

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Softshrink(Module):
    """Module form of ``F.softshrink``."""
    __constants__ = ["lambd"]

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return F.softshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class Hardshrink(Softshrink):
    """Module form of ``F.hardshrink``."""
    def forward(self, input: Tensor) -> Tensor:
        return F.hardshrink(input, self.lambd)


class MultiheadAttention(Module):
    """Attention over num_heads subspaces: packed q/k/v in-projection (separate weights when
    kdim or vdim differ from embed_dim), then an out-projection."""

    __constants__ = ["batch_first"]

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim=None, vdim=None,
                 batch_first: bool = False, device=None, dtype=None) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        super().__init__()
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        # One packed (3E, E) in-projection is possible only when q, k and v all have width E.
        self._qkv_same_embed_dim = self.kdim == self.vdim == embed_dim
        self.dropout, self.batch_first = dropout, batch_first
        self.head_dim, spare = divmod(embed_dim, num_heads)
        if spare:
            raise AssertionError("embed_dim must be divisible by num_heads")

        def fresh(*shape: int) -> Parameter:
            return Parameter(empty(shape, dtype=dtype))

        packed = self._qkv_same_embed_dim
        projections = {
            "in_proj_weight": fresh(3 * embed_dim, embed_dim) if packed else None,
            "q_proj_weight": None if packed else fresh(embed_dim, embed_dim),
            "k_proj_weight": None if packed else fresh(embed_dim, self.kdim),
            "v_proj_weight": None if packed else fresh(embed_dim, self.vdim),
            "in_proj_bias": fresh(3 * embed_dim) if bias else None,
        }
        for name, weight in projections.items():
            self.register_parameter(name, weight)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        dtype=dtype)
        self.bias_k, self.bias_v = ((fresh(1, 1, embed_dim), fresh(1, 1, embed_dim))
                                    if add_bias_kv else (None, None))
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        # Only one of the two layouts exists; the other's names hold None.
        for weight in (self.in_proj_weight, self.q_proj_weight, self.k_proj_weight,
                       self.v_proj_weight):
            if weight is not None:
                init.xavier_uniform_(weight)
        if self.in_proj_bias is not None:
            for bias in (self.in_proj_bias, self.out_proj.bias):
                init.constant_(bias, 0.0)
        for extra in (self.bias_k, self.bias_v):
            if extra is not None:
                init.xavier_normal_(extra)

    def forward(self, query: Tensor, key: Tensor, value: Tensor,
                key_padding_mask: Optional[Tensor] = None, need_weights: bool = True,
                attn_mask: Optional[Tensor] = None, average_attn_weights: bool = True,
                is_causal: bool = False):
        """(attn_output, attn_weights or None); batch_first inputs are (N, L, E)."""
        batched = query.ndim == 3
        if self.batch_first and batched:
            # Keep shared inputs shared after the swap to (L, N, E): the functional form
            # recognises self-attention by identity.
            if key is not value:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
            else:
                swapped = key.transpose(1, 0)
                query = swapped if query is key else query.transpose(1, 0)
                key = value = swapped
        separate = not self._qkv_same_embed_dim
        output, weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=separate,
            q_proj_weight=self.q_proj_weight if separate else None,
            k_proj_weight=self.k_proj_weight if separate else None,
            v_proj_weight=self.v_proj_weight if separate else None,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        if self.batch_first and batched:
            return output.transpose(1, 0), weights
        return output, weights
