"""The gradients of the smooth activations as torch records them under ``create_graph``: one
node per gradient (``SoftplusBackwardBackward0``, ``EluBackwardBackward0``,
``LogSigmoidBackwardBackward0``, ``HardswishBackwardBackward0``, ``GeluBackwardBackward0``)
that saves the incoming
gradient and the activation's input (or result) through ``save_for_backward``, so an in-place
write to either makes a later backward through the gradient refuse, as torch's does, and whose
own backward gives torch's derivatives with respect to both."""
from __future__ import annotations

import numpy as np

from . import _layout
from ._base import HALF_TYPES, Op
from ._erf import erf
from ._gelu import gelu_backward_float32
from .unary import _INV_SQRT_2PI, _KAPPA, _SQRT_HALF, _TANH_K, _apply_float, _sigmoid


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


def gelu_backward_into(grad_output: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    """Exact GELU's gradient grad_output (Phi(x) + x phi(x)) into ``out`` (may be
    ``grad_output`` itself): C-contiguous arrays of one shape and dtype, float32 or float64."""
    if x.dtype == np.float32:
        gelu_backward_float32(grad_output, x, out)
        return
    # flat views (erf gives a 0-d input a 1-d result)
    grad_output, x, out = grad_output.reshape(-1), x.reshape(-1), out.reshape(-1)
    with np.errstate(all="ignore"):
        slope = erf(x * _SQRT_HALF)
        slope += 1
        slope *= 0.5
        density = np.exp(-0.5 * x * x)
        density *= _INV_SQRT_2PI
        density *= x
        slope += density
        np.multiply(grad_output, slope, out=out)


def _gelu_second_derivative(x, approximate: str):
    """phi(x) (2 - x^2), or the tanh approximation's (1 - t^2) u' - x t sech(u)^2 u'^2
    + x (1 - t^2) u''/2 (u = k (x + kappa x^3), t = tanh(u)). The middle term takes sech^2 from
    cosh, as torch's does, which keeps it exact where 1 - t^2 cancels (large |x|)."""
    if approximate != "tanh":
        square = x * x
        density = (square * -0.5).exp() * _INV_SQRT_2PI
        return density * 2 - square * density
    inner = (x + x.pow(3) * _KAPPA) * _TANH_K
    t = inner.tanh()
    tanh_slope = 1 - t * t
    inner_slope = (x * (3 * _KAPPA) * x + 1) * _TANH_K
    sech = 1 / inner.cosh()
    half_x = x * 0.5
    return (tanh_slope * inner_slope
            + half_x * inner_slope * (sech * -2 * sech * t) * inner_slope
            + half_x * tanh_slope * (x * (6 * _KAPPA) * _TANH_K))


class GeluBackward(Op):
    """grad_output (Phi(x) + x phi(x)), or the tanh approximation's slope
    0.5 (1 + t) + 0.5 x (1 - t^2) u' (t = tanh(u), u = k (x + kappa x^3)): torch's
    ``gelu_backward``, one node that saves the incoming gradient and the input.

    Its derivatives are the same formula again for grad_output and grad grad_output times the
    second derivative for x: phi(x) (2 - x^2), or (1 - t^2) (u' - x t u'^2 + x u''/2)."""

    node_name = "GeluBackwardBackward0"
    saved_names = ("grad_output", "self")
    saved_values = {"approximate": "approximate"}

    @staticmethod
    def forward(ctx, grad_output, self, approximate):
        ctx.approximate = approximate
        ctx.save_for_backward(grad_output, self)
        dtype = np.result_type(grad_output, self)
        work = np.dtype(np.float32) if dtype in HALF_TYPES else dtype  # rounded once at the end
        gradient, x = grad_output.astype(work, copy=False), self.astype(work, copy=False)
        if approximate == "tanh":
            t = np.tanh(_TANH_K * (x + _KAPPA * x * x * x))
            slope = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * (_TANH_K * (1 + 3 * _KAPPA * x * x))
            result = np.multiply(gradient, slope)
        else:
            shape = np.broadcast_shapes(gradient.shape, x.shape)
            gradient = np.ascontiguousarray(np.broadcast_to(gradient, shape))
            x = np.ascontiguousarray(np.broadcast_to(x, shape))
            result = np.empty(shape, work)
            gelu_backward_into(gradient, x, result)
        return _layout.pointwise(result.astype(dtype, copy=False), grad_output, self)

    @staticmethod
    def backward(ctx, grad):
        grad_output, x = ctx.saved_tensors
        approximate = ctx.approximate
        need_grad_output, need_self = ctx.needs_input_grad[:2]
        grad_grad_output = grad_self = None
        if need_grad_output:
            grad_grad_output = GeluBackward.apply(grad, x, approximate)
        if need_self:
            grad_self = grad * grad_output * _gelu_second_derivative(x, approximate)
        return grad_grad_output, grad_self, None
