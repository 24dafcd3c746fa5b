"""The gradients of the smooth activations as torch records them under ``create_graph``: one
node per gradient (``SoftplusBackwardBackward0``, ``EluBackwardBackward0``,
``LogSigmoidBackwardBackward0``, ``HardswishBackwardBackward0``) that saves the incoming
gradient and the activation's input (or result) through ``save_for_backward``, so an in-place
write to either makes a later backward through the gradient refuse, as torch's does, and whose
own backward gives torch's derivatives with respect to both."""
from __future__ import annotations

import numpy as np


from . import _layout
from ._base import Op
from .unary import _apply_float, _sigmoid


class SoftplusBackward(Op):
    """grad_output sigmoid(beta x), and grad_output itself where beta x > threshold: torch's
    ``softplus_backward``, recorded as one node that saves both operands, so an in-place write
    to either makes a later backward through the gradient refuse, as torch's does.

    Its own derivatives are torch's: the same formula again for grad_output, and
    ``grad grad_output beta s (1 - s)`` (s = sigmoid(beta x)) for x, zero where
    beta x >= threshold."""

    node_name = "SoftplusBackwardBackward0"
    saved_names = ("grad_output", "self")
    saved_values = {"beta": "beta", "threshold": "threshold"}

    @staticmethod
    def forward(ctx, grad_output, self, beta, threshold):
        ctx.beta, ctx.threshold = beta, threshold
        ctx.save_for_backward(grad_output, self)

        def slope(x):
            scaled = x * x.dtype.type(beta)
            return np.where(scaled > threshold, x.dtype.type(1), _sigmoid(scaled))

        slope = _apply_float(slope, self)
        # laid out as torch's elementwise ``softplus_backward(grad_output, self)`` lays it out
        return _layout.pointwise(np.multiply(grad_output, slope), grad_output, self)

    @staticmethod
    def backward(ctx, grad):
        grad_output, x = ctx.saved_tensors
        beta, threshold = ctx.beta, ctx.threshold
        need_grad_output, need_self = ctx.needs_input_grad[:2]
        grad_grad_output = grad_self = None
        if need_grad_output:
            grad_grad_output = SoftplusBackward.apply(grad, x, beta, threshold)
        if need_self:
            scaled = x * beta
            s = scaled.sigmoid()
            grad_self = (grad * grad_output) * (1 - s) * s * (scaled < threshold) * beta
        return grad_grad_output, grad_self, None, None


class EluBackward(Op):
    """torch's ``elu_backward``: grad_output scale where the saved value is positive, else
    grad_output input_scale alpha scale exp(input_scale x) from the input x, or
    grad_output input_scale (y + alpha scale) from the result y of an in-place elu.

    Its derivative with respect to grad_output is the same formula again; with respect to the
    saved value it is torch's ``elu_double_backward``, masked by value < 0 (zero at 0, where
    the first gradient still takes the exponential branch)."""

    node_name = "EluBackwardBackward0"
    saved_names = ("grad_output", "self_or_result")
    saved_values = {"alpha": "alpha", "scale": "scale", "input_scale": "input_scale",
                    "is_result": "is_result"}

    @staticmethod
    def forward(ctx, grad_output, self_or_result, alpha, scale, input_scale, is_result):
        ctx.alpha, ctx.scale, ctx.input_scale = alpha, scale, input_scale
        ctx.is_result = is_result
        ctx.save_for_backward(grad_output, self_or_result)

        def slope(value):
            kind = value.dtype.type
            if is_result:
                negative = kind(input_scale) * (value + kind(alpha * scale))
            else:  # exp of the clipped input: the unused branch must not overflow
                negative = kind(input_scale * alpha * scale) * np.exp(
                    np.minimum(value, 0) * kind(input_scale))
            return np.where(value <= 0, negative, kind(scale))

        slope = _apply_float(slope, self_or_result)
        # laid out as torch's elementwise ``elu_backward(grad_output, ..., self_or_result)``
        return _layout.pointwise(np.multiply(grad_output, slope), grad_output, self_or_result)

    @staticmethod
    def backward(ctx, grad):
        grad_output, value = ctx.saved_tensors
        settings = (ctx.alpha, ctx.scale, ctx.input_scale, ctx.is_result)
        need_grad_output, need_value = ctx.needs_input_grad[:2]
        grad_grad_output = grad_value = None
        if need_grad_output:
            grad_grad_output = EluBackward.apply(grad, value, *settings)
        if need_value:
            scaled = grad * grad_output * ctx.input_scale
            if not ctx.is_result:
                scaled = EluBackward.apply(scaled, value, *settings)
            grad_value = scaled * (value < 0)
        return grad_grad_output, grad_value, None, None, None, None


class LogSigmoidBackward(Op):
    """grad_output sigmoid(-x): torch's ``log_sigmoid_backward``, laid out as the incoming
    gradient (torch's kernel allocates its output like it: row-major from ``out.sum()``).

    Its derivatives are the same formula again for grad_output and
    ``grad grad_output (s - 1) s`` (s = sigmoid(x)) for x; the buffer gets none."""

    node_name = "LogSigmoidBackwardBackward0"
    saved_names = ("grad_output", "self", "buffer")

    @staticmethod
    def forward(ctx, grad_output, self, buffer):
        ctx.save_for_backward(grad_output, self, buffer)
        slope = _apply_float(lambda x: _sigmoid(-x), self)
        return _layout.preserve(np.multiply(grad_output, slope), grad_output)

    @staticmethod
    def backward(ctx, grad):
        grad_output, x, buffer = ctx.saved_tensors
        need_grad_output, need_self = ctx.needs_input_grad[:2]
        grad_grad_output = grad_self = None
        if need_grad_output:
            grad_grad_output = LogSigmoidBackward.apply(grad, x, buffer)
        if need_self:
            z = x.sigmoid()
            grad_self = (grad * grad_output) * (z - 1) * z
        return grad_grad_output, grad_self, None


class HardswishBackward(Op):
    """grad_output (0 up to -3, x/3 + 1/2 inside, 1 from 3): torch's ``hardswish_backward``.

    Its derivatives are the same formula again for grad_output and grad grad_output / 3
    strictly inside (-3, 3), else 0, for x."""

    node_name = "HardswishBackwardBackward0"
    saved_names = ("grad_output", "self")

    @staticmethod
    def forward(ctx, grad_output, self):
        ctx.save_for_backward(grad_output, self)

        def slope(x):
            kind = x.dtype.type
            inside = x / kind(3) + kind(0.5)
            return np.where(x <= -3, kind(0), np.where(x >= 3, kind(1), inside))

        slope = _apply_float(slope, self)
        return _layout.pointwise(np.multiply(grad_output, slope), grad_output, self)

    @staticmethod
    def backward(ctx, grad):
        grad_output, x = ctx.saved_tensors
        need_grad_output, need_self = ctx.needs_input_grad[:2]
        grad_grad_output = grad_self = None
        if need_grad_output:
            grad_grad_output = HardswishBackward.apply(grad, x)
        if need_self:
            inside = (x._data > -3) & (x._data < 3)
            grad_self = (grad * grad_output / 3.0).where(inside, 0.0)
        return grad_grad_output, grad_self
