"""Elementwise ops. Each saves what torch saves (so pack hooks see the same tensors) and states
its derivative in ``backward`` with differentiable tensor ops (double backward comes free)."""
from __future__ import annotations

import math

import numpy as np

from ..autograd.function import Function
from ..tensor import Tensor
from ._util import broadcast_error, cast, default_float, promote


class _Op(Function):
    """Built-in op: forward on NumPy arrays; non-tensor arguments stay Python values."""

    _builtin = True


def _float(x: np.ndarray) -> np.ndarray:
    return x if x.dtype.kind == "f" else x.astype(default_float())


def _binary(cls, op_name: str, a, b, **kwargs):
    """Promote ``a`` and ``b`` as torch would and call ``cls``; Python numbers stay numbers."""
    if not isinstance(a, Tensor):
        raise TypeError(f"{op_name}(): argument 'input' must be Tensor, not {type(a).__name__}")
    dtype = promote(a, b)
    if not isinstance(b, Tensor):
        if isinstance(b, np.ndarray):
            b = Tensor._make(b)
        else:
            return cls.apply(a, cast(b, dtype), dtype, **kwargs)
    return cls.apply(a, b, dtype, **kwargs)


def _compute(op_name: str, fn, a, b):
    try:
        return fn(a, b)
    except ValueError:
        raise broadcast_error(op_name, np.shape(a), np.shape(b)) from None


def _cast2(a, b, dtype):
    return cast(a, dtype), cast(b, dtype)


class Add(_Op):
    """out = self + alpha * other"""

    node_name = "AddBackward0"

    @staticmethod
    def forward(ctx, self, other, dtype, alpha=1):
        ctx.alpha = alpha
        self, other = _cast2(self, other, dtype)
        if alpha != 1:
            other = other * cast(alpha, dtype)
        return _compute("add", np.add, self, other)

    @staticmethod
    def backward(ctx, grad):
        return grad, (grad if ctx.alpha == 1 else grad * ctx.alpha)


class Sub(_Op):
    """out = self - alpha * other"""

    node_name = "SubBackward0"

    @staticmethod
    def forward(ctx, self, other, dtype, alpha=1):
        ctx.alpha = alpha
        self, other = _cast2(self, other, dtype)
        if alpha != 1:
            other = other * cast(alpha, dtype)
        return _compute("sub", np.subtract, self, other)

    @staticmethod
    def backward(ctx, grad):
        return grad, -grad if ctx.alpha == 1 else grad * -ctx.alpha


class Rsub(_Op):
    """out = other - alpha * self, for a Python number ``other``"""

    node_name = "RsubBackward1"

    @staticmethod
    def forward(ctx, self, other, dtype, alpha=1):
        ctx.alpha = alpha
        return cast(other, dtype) - cast(self, dtype) * cast(alpha, dtype)

    @staticmethod
    def backward(ctx, grad):
        return -grad if ctx.alpha == 1 else grad * -ctx.alpha, None


class Mul(_Op):
    """out = self * other"""

    node_name = "MulBackward0"
    saved_names = ("other", "self")

    @staticmethod
    def forward(ctx, self, other, dtype):
        self, other = _cast2(self, other, dtype)
        need_self, need_other = ctx.needs_input_grad[:2]
        if isinstance(other, np.ndarray):
            ctx.save_for_backward(other if need_self else None, self if need_other else None)
        else:
            ctx.other = other
        return _compute("mul", np.multiply, self, other)

    @staticmethod
    def backward(ctx, grad):
        if "other" in ctx.__dict__:
            return grad * ctx.other, None
        other, self = ctx.saved_tensors
        return (grad * other if other is not None else None,
                grad * self if self is not None else None)


class Div(_Op):
    """out = self / other"""

    node_name = "DivBackward0"
    saved_names = ("other", "self")

    @staticmethod
    def forward(ctx, self, other, dtype, rounding_mode=None):
        if dtype.kind != "f" and rounding_mode is None:
            dtype = default_float()
        self, other = _cast2(self, other, dtype)
        ctx.rounding_mode = rounding_mode
        need_self, need_other = ctx.needs_input_grad[:2]
        if isinstance(other, np.ndarray):
            ctx.save_for_backward(other if (need_self or need_other) else None,
                                  self if need_other else None)
        else:
            ctx.other = other
        if rounding_mode is None:
            with np.errstate(divide="ignore", invalid="ignore"):
                return _compute("div", np.true_divide, self, other)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = _compute("div", np.true_divide, self, other)
        out = np.floor(out) if rounding_mode == "floor" else np.trunc(out)
        return out.astype(dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        if ctx.rounding_mode is not None:
            return grad * 0, None if "other" in ctx.__dict__ else grad * 0
        if "other" in ctx.__dict__:
            return grad / ctx.other, None
        other, self = ctx.saved_tensors
        grad_self = grad / other if ctx.needs_input_grad[0] else None
        grad_other = -grad * self / (other * other) if self is not None else None
        return grad_self, grad_other


class Pow(_Op):
    """out = self ** exponent (a number: PowBackward0; a tensor: PowBackward1)"""

    node_name = "PowBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self, exponent, dtype):
        self = cast(self, dtype)
        ctx.exponent = exponent
        ctx.save_for_backward(self)
        return np.power(self, cast(exponent, dtype))

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        exponent = ctx.exponent
        if exponent == 0:
            return grad * 0, None
        return grad * exponent * self.pow(exponent - 1), None


class PowTensor(_Op):
    node_name = "PowBackward1"
    saved_names = ("exponent", "self", "result")

    @staticmethod
    def forward(ctx, self, exponent, dtype):
        self, exponent = _cast2(self, exponent, dtype)
        with np.errstate(divide="ignore", invalid="ignore"):
            result = _compute("pow", np.power, self, exponent)
        ctx.save_for_backward(exponent, self, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        exponent, self, result = ctx.saved_tensors
        grad_self = grad_exponent = None
        if ctx.needs_input_grad[0]:
            grad_self = grad * exponent * self.pow(exponent - 1)
            grad_self = grad_self.masked_fill((exponent == 0)._data, 0.0)
        if ctx.needs_input_grad[1]:
            safe_log = self.log().masked_fill(((self == 0) & (exponent >= 0))._data, 0.0)
            grad_exponent = grad * result * safe_log
        return grad_self, grad_exponent


class RPow(_Op):
    """out = base ** self for a Python number ``base``"""

    node_name = "PowBackward2"
    saved_names = ("exponent", "result")

    @staticmethod
    def forward(ctx, exponent, base, dtype):
        exponent = cast(exponent, dtype)
        result = np.power(cast(base, dtype), exponent)
        ctx.base = base
        ctx.save_for_backward(exponent, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        _exponent, result = ctx.saved_tensors
        if ctx.base == 0:
            return grad * 0, None
        return grad * result * math.log(ctx.base), None


def _extremum_backward(ctx, grad, keep):
    other, self = ctx.saved_tensors
    ties = (self == other)._data
    mask_self = keep(self._data, other._data)
    grad_self = grad_other = None
    half = grad / 2
    if ctx.needs_input_grad[0]:
        grad_self = half.masked_fill(~ties, 0.0) + grad.masked_fill(~mask_self, 0.0)
    if ctx.needs_input_grad[1]:
        mask_other = keep(other._data, self._data)
        grad_other = half.masked_fill(~ties, 0.0) + grad.masked_fill(~mask_other, 0.0)
    return grad_self, grad_other


class Maximum(_Op):
    node_name = "MaximumBackward0"
    saved_names = ("other", "self")

    @staticmethod
    def forward(ctx, self, other, dtype):
        self, other = _cast2(self, other, dtype)
        ctx.save_for_backward(other, self)
        return _compute("maximum", np.maximum, self, other)

    @staticmethod
    def backward(ctx, grad):
        return _extremum_backward(ctx, grad, np.greater)


class Minimum(_Op):
    node_name = "MinimumBackward0"
    saved_names = ("other", "self")

    @staticmethod
    def forward(ctx, self, other, dtype):
        self, other = _cast2(self, other, dtype)
        ctx.save_for_backward(other, self)
        return _compute("minimum", np.minimum, self, other)

    @staticmethod
    def backward(ctx, grad):
        return _extremum_backward(ctx, grad, np.less)


class Where(_Op):
    """out = self where condition else other (condition is passed as an array: no edge)"""

    node_name = "WhereBackward0"
    saved_names = ("condition",)

    @staticmethod
    def forward(ctx, condition, self, other, dtype):
        self, other = _cast2(self, other, dtype)
        ctx.save_for_backward(condition)
        try:
            return np.where(condition, self, other)
        except ValueError:
            raise broadcast_error("where", np.shape(self), np.shape(other)) from None

    @staticmethod
    def backward(ctx, grad):
        (condition,) = ctx.saved_tensors
        mask = condition._data
        return (None, grad.masked_fill(~mask, 0.0) if ctx.needs_input_grad[1] else None,
                grad.masked_fill(mask, 0.0) if ctx.needs_input_grad[2] else None)


class MaskedFill(_Op):
    node_name = "MaskedFillBackward0"
    saved_names = ("mask",)

    @staticmethod
    def forward(ctx, self, mask, value):
        if mask.dtype != np.bool_:
            raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with "
                               f"dtype {mask.dtype}")
        ctx.save_for_backward(mask)
        try:
            return np.where(mask, self.dtype.type(value), self)
        except ValueError:
            raise broadcast_error("masked_fill", self.shape, mask.shape) from None

    @staticmethod
    def backward(ctx, grad):
        (mask,) = ctx.saved_tensors
        return grad.masked_fill(mask._data, 0.0), None, None


class MaskedFillInplace(MaskedFill):
    node_name = "MaskedFillBackward0"
    _inplace = True

    @staticmethod
    def forward(ctx, self, mask, value):
        if mask.dtype != np.bool_:
            raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with "
                               f"dtype {mask.dtype}")
        ctx.save_for_backward(mask)
        np.copyto(self, self.dtype.type(value), where=np.broadcast_to(mask, self.shape))
        return self


# ---------------------------------------------------------------------------------------------
# Unary ops
# ---------------------------------------------------------------------------------------------
class Neg(_Op):
    node_name = "NegBackward0"

    @staticmethod
    def forward(ctx, self):
        return np.negative(self)

    @staticmethod
    def backward(ctx, grad):
        return -grad


class Exp(_Op):
    """d exp(x) = exp(x)"""

    node_name = "ExpBackward0"
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, self):
        result = np.exp(_float(self))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return grad * result


class Log(_Op):
    """d log(x) = 1 / x"""

    node_name = "LogBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self):
        ctx.save_for_backward(self)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log(_float(self))

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        return grad / self


class Log1p(_Op):
    node_name = "Log1PBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self):
        ctx.save_for_backward(self)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log1p(_float(self))

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        return grad / (self + 1)


class Sqrt(_Op):
    """d sqrt(x) = 1 / (2 sqrt(x))"""

    node_name = "SqrtBackward0"
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, self):
        with np.errstate(invalid="ignore"):
            result = np.sqrt(_float(self))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return grad / (2 * result)


class Rsqrt(_Op):
    """d x^-1/2 = -1/2 x^-3/2"""

    node_name = "RsqrtBackward0"
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, self):
        self = _float(self)
        with np.errstate(divide="ignore", invalid="ignore"):
            result = np.reciprocal(np.sqrt(self))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return -0.5 * grad * result.pow(3)


class Reciprocal(_Op):
    node_name = "ReciprocalBackward0"
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, self):
        with np.errstate(divide="ignore"):
            result = np.reciprocal(_float(self))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return -grad * result * result


class Abs(_Op):
    node_name = "AbsBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self):
        ctx.save_for_backward(self)
        return np.abs(self)

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        return grad * self.sign()


class Sign(_Op):
    node_name = "SignBackward0"

    @staticmethod
    def forward(ctx, self):
        return np.sign(self)

    @staticmethod
    def backward(ctx, grad):
        return grad * 0


class Sin(_Op):
    node_name = "SinBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self):
        ctx.save_for_backward(self)
        return np.sin(_float(self))

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        return grad * self.cos()


class Cos(_Op):
    node_name = "CosBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self):
        ctx.save_for_backward(self)
        return np.cos(_float(self))

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        return grad * -self.sin()


class Tanh(_Op):
    """d tanh(x) = 1 - tanh(x)^2"""

    node_name = "TanhBackward0"
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, self):
        result = np.tanh(_float(self))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return grad * (1 - result * result)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    # stable on both sides: exp of a non-positive number only
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


class Sigmoid(_Op):
    """d s(x) = s(x) (1 - s(x))"""

    node_name = "SigmoidBackward0"
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, self):
        result = _sigmoid(_float(self))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return grad * result * (1 - result)


class Relu(_Op):
    node_name = "ReluBackward0"
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, self):
        result = np.maximum(self, self.dtype.type(0))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return grad.masked_fill(result._data <= 0, 0.0)


class ReluInplace(Relu):
    node_name = "ReluBackward0"
    _inplace = True

    @staticmethod
    def forward(ctx, self):
        np.maximum(self, self.dtype.type(0), out=self)
        ctx.save_for_backward(self)
        return self


_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_TANH_K = math.sqrt(2 / math.pi)


def erf(x: np.ndarray) -> np.ndarray:
    """erf to double precision without SciPy: a positive series for |x| < 3 (no cancellation)
    and a continued fraction of erfc beyond; both loop over terms, never over elements."""
    x64 = np.asarray(x, dtype=np.float64)
    ax = np.abs(x64)
    small = np.minimum(ax, 3.0)
    two_x2 = 2 * small * small
    term = np.ones_like(small)
    total = np.ones_like(small)
    for n in range(1, 90):
        term = term * two_x2 / (2 * n + 1)
        total += term
    series = 2 / math.sqrt(math.pi) * small * np.exp(-small * small) * total
    large = np.maximum(ax, 3.0)
    fraction = large.copy()
    for k in range(60, 0, -1):
        fraction = large + (k / 2) / fraction
    tail = 1 - np.exp(-large * large) / (math.sqrt(math.pi) * fraction)
    result = np.where(ax < 3.0, series, tail) * np.sign(x64)
    return result.astype(x.dtype if x.dtype.kind == "f" else np.float64, copy=False)


class Erf(_Op):
    node_name = "ErfBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self):
        ctx.save_for_backward(self)
        return erf(_float(self))

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        return grad * (2 / math.sqrt(math.pi)) * (-(self * self)).exp()


class Gelu(_Op):
    """x * Phi(x), or its tanh approximation"""

    node_name = "GeluBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self, approximate="none"):
        if approximate not in ("none", "tanh"):
            raise RuntimeError(f"approximate argument must be either none or tanh.")
        self = _float(self)
        ctx.approximate = approximate
        ctx.save_for_backward(self)
        if approximate == "tanh":
            inner = _TANH_K * (self + 0.044715 * self ** 3)
            return (0.5 * self * (1 + np.tanh(inner))).astype(self.dtype, copy=False)
        return (0.5 * self * (1 + erf(self * self.dtype.type(_SQRT_HALF)))).astype(
            self.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        if ctx.approximate == "tanh":
            inner = _TANH_K * (x + 0.044715 * x.pow(3))
            t = inner.tanh()
            d_inner = _TANH_K * (1 + 3 * 0.044715 * x * x)
            return grad * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * d_inner), None
        cdf = 0.5 * (1 + (x * _SQRT_HALF).erf())
        pdf = (-0.5 * x * x).exp() * _INV_SQRT_2PI
        return grad * (cdf + x * pdf), None


class Silu(_Op):
    node_name = "SiluBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self):
        self = _float(self)
        ctx.save_for_backward(self)
        return self * _sigmoid(self)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        s = x.sigmoid()
        return grad * s * (1 + x * (1 - s))


class Softplus(_Op):
    """log(1 + exp(beta x)) / beta, linear above ``threshold``"""

    node_name = "SoftplusBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self, beta=1.0, threshold=20.0):
        self = _float(self)
        ctx.beta, ctx.threshold = beta, threshold
        ctx.save_for_backward(self)
        scaled = self * self.dtype.type(beta)
        soft = np.logaddexp(0, scaled) / self.dtype.type(beta)
        return np.where(scaled > threshold, self, soft).astype(self.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        scaled = x * ctx.beta
        return grad * scaled.sigmoid().masked_fill(scaled._data > ctx.threshold, 1.0), None, None


class LeakyRelu(_Op):
    node_name = "LeakyReluBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self, negative_slope=0.01):
        ctx.negative_slope = negative_slope
        ctx.save_for_backward(self)
        return np.where(self > 0, self, self * self.dtype.type(negative_slope))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * Tensor._make(np.where(x._data > 0, 1, ctx.negative_slope).astype(
            x._data.dtype)), None


class Elu(_Op):
    node_name = "EluBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self, alpha=1.0):
        self = _float(self)
        ctx.alpha = alpha
        ctx.save_for_backward(self)
        negative = self.dtype.type(alpha) * np.expm1(np.minimum(self, 0))
        return np.where(self > 0, self, negative)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        negative = grad * ctx.alpha * x.exp()
        return Tensor.where(x > 0, grad, negative), None


class Clamp(_Op):
    """gradient passes where min <= x <= max"""

    node_name = "ClampBackward1"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self, min=None, max=None):
        if min is None and max is None:
            raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
        ctx.save_for_backward(self)
        ctx.min, ctx.max = min, max
        return _clamp_array(self, min, max)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        keep = np.ones(x._data.shape, dtype=bool)
        if ctx.min is not None:
            keep &= x._data >= ctx.min
        if ctx.max is not None:
            keep &= x._data <= ctx.max
        return grad.masked_fill(~keep, 0.0), None, None


def _clamp_array(x: np.ndarray, low, high) -> np.ndarray:
    result = x
    if low is not None:
        result = np.maximum(result, x.dtype.type(low))
    if high is not None:
        result = np.minimum(result, x.dtype.type(high))
    return result if result is not x else x.copy()


class ClampInplace(Clamp):
    _inplace = True

    @staticmethod
    def forward(ctx, self, min=None, max=None):
        if min is None and max is None:
            raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
        ctx.save_for_backward(self.copy())  # torch keeps the input of clamp_ (a copy here)
        ctx.min, ctx.max = min, max
        np.copyto(self, _clamp_array(self, min, max))
        return self


class InplaceBinary(_Op):
    """``self <op>= other`` for add_, sub_, mul_, div_: the result is written into self."""

    _inplace = True
    saved_names = ("other", "self")

    @staticmethod
    def forward(ctx, self, other, dtype, op, alpha=1):
        ctx.op, ctx.alpha = op, alpha
        original = self.copy() if op in ("mul", "div") and ctx.needs_input_grad[1] else None
        if isinstance(other, np.ndarray):
            need_self = ctx.needs_input_grad[0]
            if op == "mul":
                ctx.save_for_backward(other if need_self else None, original)
            elif op == "div":
                ctx.save_for_backward(other, original)
        else:
            ctx.other = other
        value = other if alpha == 1 else other * alpha
        try:
            _INPLACE[op](self, value, out=self, casting="same_kind")
        except ValueError:
            raise broadcast_error(f"{op}_", self.shape, np.shape(other)) from None
        except TypeError as error:
            raise RuntimeError(f"result type {np.result_type(self, other)} can't be cast to the "
                               f"desired output type {self.dtype}") from error
        return self

    @staticmethod
    def backward(ctx, grad):
        op, alpha = ctx.op, ctx.alpha
        if op in ("add", "sub"):
            sign = alpha if op == "add" else -alpha
            return grad, (grad if sign == 1 else grad * sign)
        if "other" in ctx.__dict__:
            return (grad * ctx.other if op == "mul" else grad / ctx.other), None
        other, original = ctx.saved_tensors
        if op == "mul":
            return (grad * other if other is not None else None,
                    grad * original if original is not None else None)
        return (grad / other,
                -grad * original / (other * other) if original is not None else None)


_INPLACE = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide}
for _op, _name in (("add", "AddBackward0"), ("sub", "SubBackward0"), ("mul", "MulBackward0"),
                   ("div", "DivBackward0")):
    globals()[f"_Inplace{_op.title()}"] = type(f"Inplace{_op.title()}", (InplaceBinary,),
                                                {"node_name": _name})


def inplace_binary(self: Tensor, other, op: str, alpha=1) -> Tensor:
    cls = globals()[f"_Inplace{op.title()}"]
    if isinstance(other, Tensor):
        return cls.apply(self, other, self._data.dtype, op, alpha)
    return cls.apply(self, cast(other, self._data.dtype) if not isinstance(other, np.ndarray)
                     else other, self._data.dtype, op, alpha)
