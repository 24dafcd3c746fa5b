"""In-place ops: the binary ones (add_, sub_, mul_, div_), the in-place forms of the unary and
other ops (exp_, clamp_, pow_, lerp_ ...), and the masked and indexed updates (random fills live
with the random draws, in ``_random_fills``).

An in-place op's forward writes its result into self. What it saves follows torch: a saved
``result`` is self after the update; a saved ``self`` is a clone taken before the update
(``Original``, torch's original_self), so double backward reaches self's past; an input it
overwrote is saved at its version before the write, so backward refuses it as torch does.
"""
from __future__ import annotations


import numpy as np

from .. import _dtype
from ..tensor import Tensor
from . import pointwise_binary as B
from . import pointwise_unary as X
from . import unary as U
from ._base import (arithmetic, as_operand, _binary_apply, check_inplace_cast,
                    _check_inplace_shape, _check_sub, Op, Original, promote)
from .arithmetic import Add, _add_scaled, Div, Mul, Pow, PowTensor, Sub, _true_dtype

_INPLACE: dict = {}


def _inplace_forward(cls, ctx, self, *args):
    *args, original = args
    result = cls._outplace.forward(ctx, self, *args)
    check_inplace_cast(result.dtype, self.dtype)
    if result.shape != self.shape:
        _check_inplace_shape(self.shape, result.shape)
    saved = ctx._to_save
    if saved is not None:  # result -> self after the update; self -> the clone taken before
        old_self = Original.saved(original)
        ctx._to_save = tuple(self if item is result else old_self if item is self else item
                             for item in saved)
    _dtype.copyto(self, result)
    return self


def inplace_class(cls) -> type:
    """``cls`` made in place: same node name, forward and backward."""
    made = _INPLACE.get(cls)
    if made is None:
        made = type(cls.__name__ + "Inplace", (cls,), {
            "node_name": cls.node_name, "_inplace": True, "_outplace": cls,
            "forward": classmethod(_inplace_forward), "__module__": __name__})
        _INPLACE[cls] = made
    return made


def inplace(cls, input: Tensor, *args) -> Tensor:
    """Run ``cls`` in place on ``input``; a saved ``self`` is a clone of input's old value."""
    tensors = [a for a in args if isinstance(a, Tensor)]
    wanted = "self" in cls.saved_names and Original.needed(input, *tensors)
    original = Original(input) if wanted else None
    return inplace_class(cls).apply(input, *args, original)


def _method(cls, name: str):
    def op(input: Tensor) -> Tensor:
        return inplace(cls, input)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"In place ``{name[:-1]}``: overwrites this tensor and bumps its version."
    return op


_UNARY = {
    "exp_": U.Exp, "log_": U.Log, "log1p_": U.Log1p, "sqrt_": U.Sqrt, "rsqrt_": U.Rsqrt,
    "reciprocal_": U.Reciprocal, "abs_": U.Abs, "absolute_": U.Abs, "sign_": U.Sign,
    "sgn_": U.Sgn,
    "sin_": U.Sin, "cos_": U.Cos, "tanh_": U.Tanh, "sigmoid_": U.Sigmoid, "erf_": U.Erf,
    "neg_": U.Neg, "negative_": U.Neg, "floor_": U.Floor, "ceil_": U.Ceil, "trunc_": U.Trunc,
    "fix_": U.Trunc, "log2_": X.Log2, "log10_": X.Log10, "exp2_": X.Exp2, "expm1_": X.Expm1,
    "tan_": X.Tan, "asin_": X.Asin, "acos_": X.Acos, "atan_": X.Atan, "sinh_": X.Sinh,
    "cosh_": X.Cosh, "arcsin_": X.Asin, "arccos_": X.Acos, "arctan_": X.Atan, "frac_": X.Frac,
    "sinc_": X.Sinc, "deg2rad_": X.Deg2Rad, "rad2deg_": X.Rad2Deg,
}
METHODS = {name: _method(cls, name) for name, cls in _UNARY.items()}


def round_(input: Tensor, *, decimals: int = 0) -> Tensor:
    """In place ``round`` (half to even, or to ``decimals`` places)."""
    if decimals:
        return inplace(U.RoundDecimals, input, decimals)
    return inplace(U.Round, input)


def pow_(input: Tensor, exponent) -> Tensor:
    """In place ``self = self ** exponent``."""
    exponent = as_operand(exponent, "pow_")
    if isinstance(exponent, Tensor):
        dtype = promote(input, exponent)
        return inplace(PowTensor, input, exponent, dtype, None)
    return inplace(Pow, input, exponent, promote(input, exponent))


def square_(input: Tensor) -> Tensor:
    """In place ``self = self * self``."""
    return pow_(input, 2)


def logit_(input: Tensor, eps: float | None = None) -> Tensor:
    """In place ``logit``: ``log(p / (1 - p))``, ``p`` clamped to ``[eps, 1 - eps]`` if given."""
    return inplace(X.Logit, input, eps)


def nan_to_num_(input: Tensor, nan: float = 0.0, posinf=None, neginf=None) -> Tensor:
    """In place ``nan_to_num``: replaces NaN and infinities by finite values."""
    return inplace(X.NanToNum, input, nan, posinf, neginf)


def fmod_(input: Tensor, other) -> Tensor:
    """In place ``fmod``: remainder with the sign of the dividend."""
    other = as_operand(other, "fmod_")
    if isinstance(other, Tensor):
        return inplace(B.Fmod, input, other, promote(input, other), None)
    return inplace(B.FmodScalar, input, other, promote(input, other))


def lerp_(input: Tensor, end: Tensor, weight) -> Tensor:
    """In place ``self += weight * (end - self)``."""
    B._same_dtype("lerp", input, "end", end)
    if isinstance(weight, Tensor):
        B._same_dtype("lerp", input, "weight", weight)
        return inplace(B.LerpTensor, input, end, weight)
    return inplace(B.Lerp, input, end, float(weight))


def addcmul_(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    """In place ``self += value * tensor1 * tensor2``."""
    return inplace(B.Addcmul, input, tensor1, tensor2, value, input._data.dtype)


def addcdiv_(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    """In place ``self += value * tensor1 / tensor2``."""
    return inplace(B.Addcdiv, input, tensor1, tensor2, value, input._data.dtype)


METHODS.update({
    "round_": round_, "pow_": pow_, "square_": square_,
    "logit_": logit_, "nan_to_num_": nan_to_num_, "fmod_": fmod_,
    "lerp_": lerp_, "addcmul_": addcmul_, "addcdiv_": addcdiv_,
})


# ---------------------------------------------------------------------------------------------
# add_, sub_, mul_, div_
# ---------------------------------------------------------------------------------------------
class _InplaceBinary(Op):
    """The out-of-place op's forward, written into self; backward is the out-of-place one."""

    _inplace = True
    _outplace: type = None
    _wrapped_scalars = (1,)

    @classmethod
    def _write(cls, ctx, self, result):
        if result is not self:  # else ``arithmetic`` wrote it in place
            _check_inplace_shape(self.shape, result.shape)
            _dtype.copyto(self, result)
        return self


class AddInplace(_InplaceBinary):
    node_name = "AddBackward0"

    @staticmethod
    def forward(ctx, self, other, dtype, number, alpha=1):
        _check_inplace_shape(self.shape, np.shape(other))  # torch: overlap (in apply), shape, dtype
        check_inplace_cast(dtype, self.dtype)
        return AddInplace._write(ctx, self, _add_scaled(ctx, "add", np.add, self, other, dtype,
                                                        alpha, inplace=True))

    backward = Add.backward


class SubInplace(_InplaceBinary):
    node_name = "SubBackward0"

    @staticmethod
    def forward(ctx, self, other, dtype, number, alpha=1):
        _check_sub(self, other, number)  # sub's own refusal comes first
        _check_inplace_shape(self.shape, np.shape(other))  # torch: overlap (in apply), shape, dtype
        check_inplace_cast(dtype, self.dtype)
        return SubInplace._write(ctx, self, _add_scaled(ctx, "sub", np.subtract, self, other,
                                                        dtype, alpha, inplace=True))

    backward = Sub.backward


class MulInplace(_InplaceBinary):
    """self *= other; d other needs the old self, so a copy of it is saved"""

    node_name = "MulBackward0"
    saved_names = ("other", "self")

    @staticmethod
    def forward(ctx, self, other, dtype, number, original=None):
        _check_inplace_shape(self.shape, np.shape(other))  # torch: overlap (in apply), shape, dtype
        check_inplace_cast(dtype, self.dtype)
        ctx.number = number
        if number is None:
            ctx.save_for_backward(other if ctx.needs_input_grad[0] else None,
                                  Original.saved(original))
        return MulInplace._write(ctx, self, arithmetic("mul_", np.multiply, self, other, dtype,
                                                       inplace=True))

    backward = Mul.backward


class DivInplace(_InplaceBinary):
    node_name = "DivBackward0"
    saved_names = ("other", "self")

    @staticmethod
    def forward(ctx, self, other, dtype, number, original=None):
        _check_inplace_shape(self.shape, np.shape(other))  # torch: overlap (in apply), shape, dtype
        check_inplace_cast(_true_dtype(dtype), self.dtype)
        ctx.number = number
        if number is None:
            need_self, need_other = ctx.needs_input_grad[:2]
            ctx.save_for_backward(other if need_self or need_other else None,
                                  Original.saved(original))
        return DivInplace._write(ctx, self, arithmetic("div_", np.true_divide, self, other,
                                                       _true_dtype(dtype), inplace=True))

    backward = Div.backward


def inplace_binary(cls, op_name: str, self: Tensor, other, *extra) -> Tensor:
    """add_/sub_/mul_/div_; mul_ and div_ keep the old self when ``other`` needs a gradient."""
    other = as_operand(other, op_name)
    if cls not in (MulInplace, DivInplace) or not Original.needed(self, other):
        return _binary_apply(cls, op_name, self, other, *extra)
    original = Original(self if Original.needed(other) else None)
    return _binary_apply(cls, op_name, self, other, original)
