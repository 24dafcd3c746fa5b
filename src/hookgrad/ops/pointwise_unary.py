"""More unary math: logs and exponentials in other bases, tan, the inverse and hyperbolic trig
functions, logit, frac, nan_to_num, sinc, deg2rad / rad2deg.

Each op saves what torch saves (``self`` or ``result``) and writes its derivative with tensor
ops, so double backward comes free. Integers give the default float dtype and half precision is
computed in float32 (``unary._apply_float``). The in-place forms are made from these classes in
``inplace.py``.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _dtype
from .._finfo import finfo
from ..tensor import Tensor
from . import _layout
from ._util import ordered, quiet_errors
from .unary import _apply_float
from ._base import finish, not_implemented, Op

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)


class _SavesSelf(Op):
    """f(self), saving self; subclasses give ``_fn`` (on arrays) and ``_derivative``"""

    saved_names = ("self",)
    _fn = None

    @classmethod
    def forward(cls, ctx, self):
        ctx.save_for_backward(self)
        return _apply_float(cls._fn, self)

    @classmethod
    def backward(cls, ctx, grad):
        (self,) = ctx.saved_tensors
        return cls._derivative(grad, self)


class _SavesResult(Op):
    """f(self), saving the result"""

    saved_names = ("result",)
    _fn = None

    @classmethod
    def forward(cls, ctx, self):
        result = _apply_float(cls._fn, self)
        ctx.save_for_backward(result)
        return result

    @classmethod
    def backward(cls, ctx, grad):
        (result,) = ctx.saved_tensors
        return cls._derivative(grad, result)


class Log2(_SavesSelf):
    """d log2(x) = 1 / (x ln 2)"""

    node_name = "Log2Backward0"
    _fn = staticmethod(np.log2)

    @staticmethod
    def _derivative(grad, self):
        return grad / (self * _LN2)


class Log10(_SavesSelf):
    """d log10(x) = 1 / (x ln 10)"""

    node_name = "Log10Backward0"
    _fn = staticmethod(np.log10)

    @staticmethod
    def _derivative(grad, self):
        return grad / (self * _LN10)


class Exp2(_SavesResult):
    """d 2^x = 2^x ln 2"""

    node_name = "Exp2Backward0"
    _fn = staticmethod(np.exp2)

    @staticmethod
    def _derivative(grad, result):
        return grad * result * _LN2


class Expm1(_SavesResult):
    """d (e^x - 1) = result + 1"""

    node_name = "Expm1Backward0"
    _fn = staticmethod(np.expm1)

    @staticmethod
    def _derivative(grad, result):
        return grad * (result + 1)


class Tan(_SavesResult):
    """d tan(x) = 1 + tan(x)^2"""

    node_name = "TanBackward0"
    _fn = staticmethod(np.tan)

    @staticmethod
    def _derivative(grad, result):
        return grad * (result * result + 1)


class Asin(_SavesSelf):
    """d asin(x) = 1 / sqrt(1 - x^2)"""

    node_name = "AsinBackward0"
    _fn = staticmethod(np.arcsin)

    @staticmethod
    def _derivative(grad, self):
        return grad * (1 - self * self).rsqrt()


class Acos(_SavesSelf):
    """d acos(x) = -1 / sqrt(1 - x^2)"""

    node_name = "AcosBackward0"
    _fn = staticmethod(np.arccos)

    @staticmethod
    def _derivative(grad, self):
        return grad * -(1 - self * self).rsqrt()


class Atan(_SavesSelf):
    """d atan(x) = 1 / (1 + x^2)"""

    node_name = "AtanBackward0"
    _fn = staticmethod(np.arctan)

    @staticmethod
    def _derivative(grad, self):
        return grad / (self * self + 1)


class Sinh(_SavesSelf):
    """d sinh(x) = cosh(x)"""

    node_name = "SinhBackward0"
    _fn = staticmethod(np.sinh)

    @staticmethod
    def _derivative(grad, self):
        return grad * Cosh.apply(self)


class Cosh(_SavesSelf):
    """d cosh(x) = sinh(x)"""

    node_name = "CoshBackward0"
    _fn = staticmethod(np.cosh)

    @staticmethod
    def _derivative(grad, self):
        return grad * Sinh.apply(self)


class Asinh(_SavesSelf):
    """d asinh(x) = 1 / sqrt(x^2 + 1)"""

    node_name = "AsinhBackward0"
    _fn = staticmethod(np.arcsinh)

    @staticmethod
    def _derivative(grad, self):
        return grad * (self * self + 1).rsqrt()


class Acosh(_SavesSelf):
    """d acosh(x) = 1 / sqrt(x^2 - 1)"""

    node_name = "AcoshBackward0"
    _fn = staticmethod(np.arccosh)

    @staticmethod
    def _derivative(grad, self):
        return grad * (self * self - 1).rsqrt()


class Atanh(_SavesSelf):
    """d atanh(x) = 1 / (1 - x^2)"""

    node_name = "AtanhBackward0"
    _fn = staticmethod(np.arctanh)

    @staticmethod
    def _derivative(grad, self):
        return grad / (1 - self * self)


def _sinc(x: np.ndarray) -> np.ndarray:
    return np.sinc(x)


class Sinc(_SavesSelf):
    """d sin(pi x) / (pi x) = (cos(pi x) pi x - sin(pi x)) / (pi x^2), 0 at x = 0"""

    node_name = "SincBackward0"
    _fn = staticmethod(_sinc)

    @staticmethod
    def _derivative(grad, self):
        # torch's formula and order: where(x^2 pi == 0, 0, grad * (...) / (x^2 pi)), so the
        # gradient is laid out by x and its own derivative at 0 is torch's (NaN)
        scaled = self * math.pi
        squared = self * self * math.pi
        out = grad * (scaled * scaled.cos() - scaled.sin()) / squared
        return out.where(squared._data != 0, 0.0)


class Frac(Op):
    """x - trunc(x): the gradient passes unchanged"""

    node_name = "FracBackward0"

    @staticmethod
    def forward(ctx, self):
        if self.dtype.kind not in "fV":
            raise not_implemented("frac_cpu", self.dtype)
        return _layout.pointwise(finish(self - np.trunc(self), self.dtype), self)

    @staticmethod
    def backward(ctx, grad):
        return grad


class _Scale(Op):
    """x times a constant (deg2rad, rad2deg)"""

    _factor = 1.0

    @classmethod
    def forward(cls, ctx, self):
        # torch writes into empty_like(self): self's own layout, not the elementwise rule's
        return _layout.preserve(_apply_float(lambda x: x * x.dtype.type(cls._factor), self),
                                self)

    @classmethod
    def backward(cls, ctx, grad):
        return grad * cls._factor


class Deg2Rad(_Scale):
    """Degrees to radians: ``x * pi / 180``."""

    node_name = "Deg2RadBackward0"
    _factor = math.pi / 180


class Rad2Deg(_Scale):
    """Radians to degrees: ``x * 180 / pi``."""

    node_name = "Rad2DegBackward0"
    _factor = 180 / math.pi


class Logit(Op):
    """log(p / (1 - p)), p clamped to [eps, 1 - eps] when eps is given"""

    node_name = "LogitBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self, eps=None):
        ctx._saved_eps = eps
        ctx.save_for_backward(self)

        def logit(x):
            if eps is not None:
                x = np.clip(x, x.dtype.type(eps), x.dtype.type(1 - eps))
            return np.log(x / (1 - x))

        return _apply_float(logit, self)

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        x, eps = self._data, ctx._saved_eps
        result = grad / (self * (1 - self))
        if eps is None:
            outside = (x < 0) | (x > 1)
            return result.where(~outside, float("nan")), None
        outside = (x < eps) | (x > 1 - eps)
        return result.where(~outside, 0.0), None


class NanToNum(Op):
    """NaN, +inf and -inf replaced; the gradient passes only where self was finite"""

    node_name = "NanToNumBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self, nan, posinf, neginf):
        ctx.save_for_backward(self)
        if self.dtype.kind not in "fV":  # torch's clone
            return _layout.preserve(np.array(self, copy=True), self)
        info = finfo(_dtype.from_numpy_dtype(self.dtype))
        # torch writes into empty_like(self): self's own layout, not the elementwise rule's
        with quiet_errors():
            replaced = np.nan_to_num(ordered(self), nan=0.0 if nan is None else nan,
                                     posinf=info.max if posinf is None else posinf,
                                     neginf=info.min if neginf is None else neginf)
        return _layout.preserve(replaced.astype(self.dtype, copy=False), self)

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        finite = np.isfinite(self._data).astype(grad._data.dtype)
        return grad * Tensor._make(finite), None, None, None  # a product, as torch's


def _unary(cls, name: str):
    def op(input: Tensor, *, out=None) -> Tensor:
        return cls.apply(input)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = cls.__doc__
    return op


log2 = _unary(Log2, "log2")
log10 = _unary(Log10, "log10")
exp2 = _unary(Exp2, "exp2")
expm1 = _unary(Expm1, "expm1")
tan = _unary(Tan, "tan")
asin = arcsin = _unary(Asin, "asin")
acos = arccos = _unary(Acos, "acos")
atan = arctan = _unary(Atan, "atan")
sinh = _unary(Sinh, "sinh")
cosh = _unary(Cosh, "cosh")
asinh = arcsinh = _unary(Asinh, "asinh")
acosh = arccosh = _unary(Acosh, "acosh")
atanh = arctanh = _unary(Atanh, "atanh")
sinc = _unary(Sinc, "sinc")
frac = _unary(Frac, "frac")
deg2rad = _unary(Deg2Rad, "deg2rad")
rad2deg = _unary(Rad2Deg, "rad2deg")


def logit(input: Tensor, eps: float | None = None, *, out=None) -> Tensor:
    """log(p / (1 - p)); with ``eps`` the input is clamped to [eps, 1 - eps] first"""
    return Logit.apply(input, eps)


def nan_to_num(input: Tensor, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None, *, out=None) -> Tensor:
    """NaN -> ``nan``, inf -> ``posinf`` (default: the largest finite value), -inf -> ``neginf``"""
    return NanToNum.apply(input, nan, posinf, neginf)


def positive(input: Tensor) -> Tensor:
    """The input itself (raises for bool tensors, as torch)."""
    if input._data.dtype == np.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input
