"""The common activations of ``nn.functional``: relu, leaky_relu, elu, gelu, silu, softplus,
each torch function next to its Function (the others, hardtanh to tanhshrink, are in
``activation_extra.py``).
"""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from . import _layout
from ..autograd import grad_mode
from ._base import Op, clip_ufunc, finish, owned_grad
from ._pattern_backward import (BLOCK, LeakyReluBackwardBackward, ThresholdBackwardBackward,
                                clear_where, in_blocks, in_float32, masked_where)
from ._activation_backward import (EluBackward, GeluBackward, SoftplusBackward,
                                   gelu_backward_into)
from ._gelu import gelu_float32
from .unary import (_KAPPA, _SQRT_HALF, _TANH_K, _apply_float, _not_for_integers, _sigmoid,
                    _zero, erf)


def zero_where_at_most(grad: np.ndarray, values: np.ndarray, limit) -> None:
    """``grad[values <= limit] = 0`` in place, without a masked copy (``clear_where``). The
    mask is made a block at a time when both arrays lie in memory alike, so a large ReLU's
    backward does not add a mask the size of the gradient to the step's peak."""
    if grad.size <= BLOCK or grad.strides != values.strides or not grad.flags.c_contiguous:
        clear_where(grad, np.less_equal(values, limit))
        return
    flat_grad, flat_values = grad.reshape(-1), values.reshape(-1)
    in_blocks(flat_grad.size, lambda block: clear_where(
        flat_grad[block], np.less_equal(flat_values[block], limit)))


_AT_MOST_ZERO = masked_where(lambda x: x <= 0)  # relu's pattern, read from its result


def _relu_array(x: np.ndarray, out=None) -> np.ndarray:
    """max(x, 0) as torch's clamp_min(x, 0): x unless it is below 0, so -0.0 stays -0.0 and NaN
    stays NaN. For float16/32/64, np.clip with both bounds does exactly that in one SIMD pass
    (np.maximum gives +0.0 for -0.0, and is ~3x slower); bfloat16 goes through float32."""
    kind = x.dtype.kind
    if kind == "f":
        top = _TOP.get(x.dtype)
        if top is None:
            top = _TOP.setdefault(x.dtype, np.asarray(np.inf, x.dtype))
        return clip_ufunc(x, _zero(x.dtype), top, out=out)
    if kind == "V":  # bfloat16: exact in float32
        result = clip_ufunc(x.astype(np.float32), np.float32(0),
                            np.float32(np.inf)).astype(x.dtype)
        if out is None:
            return result
        out[...] = result
        return out
    return np.maximum(x, _zero(x.dtype), out=out)


_TOP: dict = {}  # +inf per float dtype, as 0-dim arrays


class Relu(Op):
    """d relu(x) = 1 where relu(x) > 0"""

    node_name = "ReluBackward0"
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, self):
        if self.dtype.kind == "b":
            raise RuntimeError("\"clamp_min_scalar_cpu\" not implemented for 'Bool'")
        result = _layout.pointwise(finish(_relu_array(self), self.dtype), self)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        if owned_grad(ctx, grad):  # reuse the buffer: one activation-sized array fewer
            zero_where_at_most(grad._data, result._data, 0)
            return grad
        return ThresholdBackwardBackward.apply(grad, result, _AT_MOST_ZERO)


class Threshold(Op):
    """value where x <= threshold, else x;  d = grad where x > threshold (a mask read from the
    saved input, so under create_graph the gradient depends on it, as torch's
    threshold_backward)"""

    node_name = "ThresholdBackward0"
    saved_names = ("self",)
    saved_values = {"threshold": "threshold"}

    @staticmethod
    def forward(ctx, self, threshold, value):
        if self.dtype.kind == "b":
            raise RuntimeError("\"threshold_cpu\" not implemented for 'Bool'")
        ctx.threshold = threshold
        ctx.save_for_backward(self)
        kept = self > threshold
        return _layout.pointwise(finish(np.where(kept | np.isnan(self), self,
                                                 np.asarray(value).astype(self.dtype)),
                                        self.dtype), self)

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        if owned_grad(ctx, grad):
            zero_where_at_most(grad._data, self._data, ctx.threshold)
            return grad, None, None
        limit = ctx.threshold
        # torch compares half-precision inputs in float32 (its opmath), with the threshold as
        # a float32: an input that rounds onto the threshold is not at or below it there
        pattern = masked_where(lambda x: in_float32(x) <= limit)
        return ThresholdBackwardBackward.apply(grad, self, pattern), None, None


class ThresholdInplace(Threshold):
    node_name = "ThresholdBackward1"  # torch's node for threshold_


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """torch.nn.functional.threshold: ``value`` where input <= threshold, else input"""
    if inplace:
        from . import inplace as _inplace  # imports this module
        return _inplace.inplace(ThresholdInplace, input, threshold, value)
    return Threshold.apply(input, threshold, value)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place ``threshold``: entries at or below ``threshold`` become ``value``."""
    return globals()["threshold"](input, threshold, value, inplace=True)


class ReluInplace(Relu):
    node_name = "ReluBackward0"
    _inplace = True

    @staticmethod
    def forward(ctx, self):
        _relu_array(self, out=self)
        ctx.save_for_backward(self)
        return self


def _gelu(x: np.ndarray, approximate: str) -> np.ndarray:
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(_TANH_K * (x + _KAPPA * x * x * x)))
    if x.dtype == np.float32:  # half precision arrives here as float32 too
        return gelu_float32(x)
    return x * 0.5 * (1 + erf(x * _SQRT_HALF))


def _gelu_grad_arrays(grad: Tensor, x: Tensor, owned: bool):
    """Exact GELU's first-order gradient computed on the arrays (no graph of it is wanted),
    written into ``grad``'s buffer when the formula owns it. None when the dtypes or layouts
    are not the plain ones (the general node then runs)."""
    grad_array, x_array = grad._data, x._data
    dtype = x_array.dtype
    if (dtype not in (np.float32, np.float64) or grad_array.dtype != dtype
            or grad_array.shape != x_array.shape or not grad_array.flags.c_contiguous
            or not x_array.flags.c_contiguous):
        return None
    out = grad_array if owned else np.empty_like(grad_array)
    gelu_backward_into(grad_array, x_array, out)
    return grad if owned else Tensor._make(out)


class Gelu(Op):
    """x * Phi(x), or its tanh approximation"""

    node_name = "GeluBackward0"
    saved_names = ("self",)
    saved_values = {"approximate": "approximate"}

    @staticmethod
    def forward(ctx, self, approximate="none"):
        if approximate not in ("none", "tanh"):
            raise RuntimeError("approximate argument must be either none or tanh.")
        _not_for_integers(self, "GeluKernelImpl")
        ctx.approximate = approximate
        ctx.save_for_backward(self)
        return _apply_float(lambda x: _gelu(x, approximate), self)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        if ctx.approximate == "none" and not grad_mode._state.enabled:
            # owned_grad counts references: asked in the formula's own frame, on its own line
            owned = owned_grad(ctx, grad)
            result = _gelu_grad_arrays(grad, x, owned)
            if result is not None:
                return result, None
        return GeluBackward.apply(grad, x, ctx.approximate), None


class Silu(Op):
    """x s(x);  d = s(x) (1 + x (1 - s(x)))"""

    node_name = "SiluBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self):
        _not_for_integers(self, "silu_cpu")
        ctx.save_for_backward(self)
        return _apply_float(lambda x: x * _sigmoid(x), self)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        s = x.sigmoid()
        return grad * (s * (1 + x * (1 - s)))


class Softplus(Op):
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold"""

    node_name = "SoftplusBackward0"
    saved_names = ("self",)
    saved_values = {"beta": "beta", "threshold": "threshold"}

    @staticmethod
    def forward(ctx, self, beta=1.0, threshold=20.0):
        _not_for_integers(self, "softplus_cpu")
        ctx.beta, ctx.threshold = beta, threshold
        ctx.save_for_backward(self)

        def softplus(x):
            scaled = x * x.dtype.type(beta)
            return np.where(scaled > threshold, x, np.logaddexp(0, scaled) / x.dtype.type(beta))

        return _apply_float(softplus, self)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return SoftplusBackward.apply(grad, x, ctx.beta, ctx.threshold), None, None


class LeakyRelu(Op):
    """x where x > 0, else negative_slope * x"""

    node_name = "LeakyReluBackward0"
    saved_names = ("self",)
    saved_values = {"negative_slope": "negative_slope"}

    @staticmethod
    def forward(ctx, self, negative_slope=0.01):
        _not_for_integers(self, "leaky_relu_cpu")
        ctx.negative_slope = negative_slope
        ctx.save_for_backward(self)
        return _apply_float(lambda x: np.where(x > 0, x, x * x.dtype.type(negative_slope)), self)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return LeakyReluBackwardBackward.apply(grad, x, _scaled_by(ctx.negative_slope)), None


def _scaled_by(negative_slope):
    """leaky_relu's pattern: grad where the saved tensor is positive, else grad times the
    slope (as torch's ``leaky_relu_backward``)"""
    def pattern(grad: np.ndarray, saved: np.ndarray) -> np.ndarray:
        slopes = np.where(saved > 0, 1, negative_slope).astype(saved.dtype)
        return _layout.pointwise(grad * slopes, grad, slopes)
    return pattern


class LeakyReluInplace(Op):
    """in place, the result is saved (its sign is the input's when the slope is positive)"""

    node_name = "LeakyReluBackward1"
    saved_names = ("result",)
    _inplace = True

    @staticmethod
    def forward(ctx, self, negative_slope=0.01):
        _not_for_integers(self, "leaky_relu_cpu")
        if negative_slope < 0 and ctx.needs_input_grad[0]:
            raise RuntimeError("In-place leakyReLu backward calculation is triggered with a "
                               "negative slope which is not supported. This is caused by calling "
                               "in-place forward function with a negative slope, please call "
                               "out-of-place version instead.")
        ctx.negative_slope = negative_slope
        np.copyto(self, _apply_float(
            lambda x: np.where(x > 0, x, x * x.dtype.type(negative_slope)), self))
        ctx.save_for_backward(self)
        return self

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return (LeakyReluBackwardBackward.apply(grad, result, _scaled_by(ctx.negative_slope)),
                None)


class Elu(Op):
    """x where x > 0, else alpha (exp(x) - 1)"""

    node_name = "EluBackward0"
    saved_names = ("self",)
    saved_values = {"alpha": "alpha"}

    @staticmethod
    def forward(ctx, self, alpha=1.0):
        _not_for_integers(self, "elu_cpu")
        ctx.alpha = alpha
        ctx._saved_scale = ctx._saved_input_scale = 1  # F.elu's: torch shows its integer 1
        ctx.save_for_backward(self)
        return _apply_float(lambda x: _elu(x, alpha), self)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return EluBackward.apply(grad, x, ctx.alpha, 1.0, 1.0, False), None


def _elu(x: np.ndarray, alpha) -> np.ndarray:
    return np.where(x > 0, x, x.dtype.type(alpha) * np.expm1(np.minimum(x, 0)))


class EluInplace(Op):
    """in place, the result is saved: d = result + alpha where result <= 0"""

    node_name = "EluBackward1"
    saved_names = ("result",)
    saved_values = {"alpha": "alpha"}
    _inplace = True

    @staticmethod
    def forward(ctx, self, alpha=1.0):
        _not_for_integers(self, "elu_cpu")
        if alpha < 0 and ctx.needs_input_grad[0]:
            raise RuntimeError("In-place elu backward calculation is triggered with a negative "
                               "slope which is not supported. This is caused by calling in-place "
                               "forward function with a negative slope, please call out-of-place "
                               "version instead.")
        ctx.alpha = alpha
        ctx._saved_scale = ctx._saved_input_scale = 1
        np.copyto(self, _apply_float(lambda x: _elu(x, alpha), self))
        ctx.save_for_backward(self)
        return self

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return EluBackward.apply(grad, result, ctx.alpha, 1.0, 1.0, True), None


# ---------------------------------------------------------------------------------------------
# torch functions
# ---------------------------------------------------------------------------------------------
def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(input, 0)"""
    if input._data.dtype.kind == "b":
        raise RuntimeError("Boolean inputs not supported for relu")
    return (ReluInplace if inplace else Relu).apply(input)


def relu_(input: Tensor) -> Tensor:
    """In place ``relu``."""
    return relu(input, inplace=True)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """input * Phi(input) (Phi the normal CDF), or the tanh approximation"""
    return Gelu.apply(input, approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """input * sigmoid(input)"""
    if inplace:  # silu's backward needs the input: compute on a copy, then write back
        return input.copy_(Silu.apply(input.clone()))
    return Silu.apply(input)


def softplus(input: Tensor, beta: float = 1, threshold: float = 20) -> Tensor:
    """log(1 + exp(beta * input)) / beta, linear above threshold"""
    return Softplus.apply(input, beta, threshold)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """input where positive, else negative_slope * input"""
    return (LeakyReluInplace if inplace else LeakyRelu).apply(input, negative_slope)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    return leaky_relu(input, negative_slope, inplace=True)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """input where positive, else alpha * (exp(input) - 1)"""
    return (EluInplace if inplace else Elu).apply(input, alpha)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return elu(input, alpha, inplace=True)
