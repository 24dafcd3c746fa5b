"""Linear layers: y = x W^T + b, initialised like torch (kaiming_uniform_ with a = sqrt(5))."""
from __future__ import annotations

import math

from ...ops.creation import empty
from ...tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


def _factory(device=None, dtype=None) -> dict:
    return {"dtype": dtype}


def add_weight_and_bias(module: Module, weight_shape, bias_shape, dtype=None) -> None:
    """Register ``weight`` and ``bias`` Parameters, left for ``reset_parameters`` to fill, or
    None in place of either whose shape is None (a layer built without it)."""
    for name, shape in (("weight", weight_shape), ("bias", bias_shape)):
        if shape is None:
            module.register_parameter(name, None)
        else:
            setattr(module, name, Parameter(empty(shape, dtype=dtype)))


def reset_weight_and_bias(weight: Tensor, bias) -> None:
    """torch's default for Linear and Conv: kaiming_uniform_(a=sqrt(5)) on the weight and
    U(-1/sqrt(fan_in), 1/sqrt(fan_in)) on the bias."""
    init.kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = init._calculate_fan_in_and_fan_out(weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        init.uniform_(bias, -bound, bound)


class Linear(Module):
    """y = x W^T + b with W of shape (out_features, in_features)."""

    __constants__ = ["in_features", "out_features"]

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        add_weight_and_bias(self, (out_features, in_features), out_features if bias else None,
                            **_factory(device, dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Redraws ``weight`` (Kaiming uniform, a=sqrt(5)) and ``bias`` (U(-1/sqrt(fan_in),
        1/sqrt(fan_in))) from torch's stream, as torch's layer does."""
        reset_weight_and_bias(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class NonDynamicallyQuantizableLinear(Linear):
    """The out-projection of MultiheadAttention (a Linear under another name, as in torch)."""
