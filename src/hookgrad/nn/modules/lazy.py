"""LazyLinear: a Linear whose ``in_features`` is read off its first input."""
from __future__ import annotations

from ...tensor import Tensor
from ..parameter import UninitializedParameter
from .linear import Linear
from .module import Module


class LazyLinear(Linear):
    """A Linear layer that learns ``in_features`` from the last dim of its first input, then
    draws its parameters (from torch's stream, as Linear does) and becomes a ``Linear``.

    Differs from torch: the shape is inferred inside ``forward`` rather than by a forward
    pre-hook, so forward pre-hooks of the user's run before the parameters exist."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        Module.__init__(self)
        self.in_features = 0
        self.out_features = out_features
        self.weight = UninitializedParameter(dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)
        else:
            self.register_parameter("bias", None)

    def has_uninitialized_params(self) -> bool:
        """True until the first input has given the parameters their shapes."""
        return any(isinstance(p, UninitializedParameter) for p in self._parameters.values())

    def reset_parameters(self) -> None:
        """Redraws the parameters once they have shapes (nothing to draw before)."""
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        """Shapes the parameters from ``input``'s last dim and draws them."""
        if not self.has_uninitialized_params():
            return
        self.in_features = input.shape[-1]
        self.weight.materialize((self.out_features, self.in_features))
        if self.bias is not None:
            self.bias.materialize((self.out_features,))
        self.reset_parameters()

    def forward(self, input: Tensor) -> Tensor:
        if self.has_uninitialized_params():
            self.initialize_parameters(input)
            self.__class__ = self.cls_to_become
        return Linear.forward(self, input)
