"""rrelu: leaky_relu whose negative slope is drawn per element from U(lower, upper) in training
and fixed at (lower + upper) / 2 in evaluation (torch's ``rrelu_with_noise``).

The slopes are torch's draws: one ``random64`` word of the default generator per non-positive
element, in C order, turned into a double in [lower, upper) (``uniform_real_distribution``), so
the same seed gives torch's slopes. The noise (1 where x > 0, the slope elsewhere) is an input of
the node and saved with ``self`` for backward, which is ``grad * noise`` in training and
leaky_relu's gradient otherwise.
"""
from __future__ import annotations

import numpy as np

from ..._generator import default_generator
from ...ops._distributions import unit_floats
from ...ops._base import Op
from ...tensor import Tensor

_LOWER, _UPPER = 1.0 / 8.0, 1.0 / 3.0
_SPREAD = 1e-6  # below this range, backward treats the slope as fixed (as torch does)


def _check(input: Tensor, lower: float, upper: float) -> None:
    dtype = input._data.dtype
    if dtype.kind not in "fV":
        from ..._dtype import scalar_type_name
        raise NotImplementedError(f"\"leaky_relu_cpu\" not implemented for "
                                  f"'{scalar_type_name(dtype)}'")
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")


def _noise(input: np.ndarray, lower: float, upper: float, training: bool) -> np.ndarray:
    """The slopes: drawn where the input is not positive when training, else left unset (torch
    saves an uninitialised buffer then; backward never reads it)."""
    noise = np.ones(input.shape, input.dtype)
    if training:
        negative = input <= 0
        draws = unit_floats(default_generator, int(negative.sum()), True)
        # the bounds pass through the op's precision first, then the draw is a double
        lower, upper = float(input.dtype.type(lower)), float(input.dtype.type(upper))
        noise[negative] = (draws * (upper - lower) + lower).astype(input.dtype)
    return noise


def _slopes(self: np.ndarray, noise: np.ndarray, lower, upper, training) -> np.ndarray:
    """What multiplies grad: the noise in training, else 1 above 0 and the mean slope below."""
    if training and upper - lower > _SPREAD:
        return noise
    return np.where(self > 0, 1, self.dtype.type((lower + upper) / 2)).astype(self.dtype)


def _forward(self, noise, lower, upper, training) -> np.ndarray:
    if training:
        return self * noise
    return np.where(self > 0, self, self * self.dtype.type((lower + upper) / 2))


class RreluWithNoise(Op):
    """x above 0, else x times its slope (drawn, or the mean slope in evaluation)"""

    node_name = "RreluWithNoiseBackward0"
    saved_names = ("noise", "self")

    @staticmethod
    def forward(ctx, self, noise, lower, upper, training):
        ctx.bounds = (lower, upper, training)
        ctx.save_for_backward(noise, self)  # torch's order
        return _forward(self, noise, lower, upper, training)

    @staticmethod
    def backward(ctx, grad):
        noise, self = ctx.saved_tensors
        return RreluWithNoiseBackward.apply(grad, self, noise, *ctx.bounds), None, None, None, None


class RreluWithNoiseInplace(RreluWithNoise):
    """in place: the result is saved (its sign is the input's, every slope being positive)"""

    node_name = "RreluWithNoiseBackward1"
    saved_names = ("noise", "result")
    _inplace = True

    @staticmethod
    def forward(ctx, self, noise, lower, upper, training):
        ctx.bounds = (lower, upper, training)
        np.copyto(self, _forward(self, noise, lower, upper, training))
        ctx.save_for_backward(noise, self)  # torch's order
        return self


class RreluWithNoiseBackward(Op):
    """grad times the slopes; linear in grad, so its own gradient is the same map"""

    node_name = "RreluWithNoiseBackwardBackward0"
    saved_names = ("noise", "self")

    @staticmethod
    def forward(ctx, grad, self, noise, lower, upper, training):
        ctx.bounds = (lower, upper, training)
        ctx.save_for_backward(noise, self)  # torch's order
        return grad * _slopes(self, noise, lower, upper, training)

    @staticmethod
    def backward(ctx, grad):
        noise, self = ctx.saved_tensors
        again = RreluWithNoiseBackward.apply(grad, self, noise, *ctx.bounds)
        return again, Tensor._make(np.zeros(self.shape, self._data.dtype)), None, None, None, None


def rrelu(input: Tensor, lower: float = _LOWER, upper: float = _UPPER, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU: slopes from U(lower, upper) per non-positive element when
    training (the default generator's draws, as torch's), the mean slope otherwise."""
    if not isinstance(input, Tensor):
        raise TypeError(f"rrelu(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    _check(input, lower, upper)
    noise = Tensor._make(_noise(input._data, lower, upper, training))
    op = RreluWithNoiseInplace if inplace else RreluWithNoise
    return op.apply(input, noise, float(lower), float(upper), bool(training))


def rrelu_(input: Tensor, lower: float = _LOWER, upper: float = _UPPER,
           training: bool = False) -> Tensor:
    """``rrelu`` in place on ``input``."""
    return rrelu(input, lower, upper, training, inplace=True)
