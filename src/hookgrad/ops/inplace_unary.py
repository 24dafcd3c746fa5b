"""In-place forms of the unary (and a few binary) ops and the masked and indexed
updates: index_fill(_), masked_scatter(_), masked_select.

An in-place op is its out-of-place class with ``_inplace = True`` (``inplace_class``): the same
forward writes its result into self and the same backward runs. What it saves follows torch:
a saved ``result`` is self after the update; a saved ``self`` is a clone taken before the
update (``elementwise.Original``, torch's original_self), so double backward reaches self's past.
"""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from . import activations as A
from . import binary_math as B
from . import elementwise as E
from . import extra_math as X
from . import math as M
from . import selection as S
from . import unary as U

_INPLACE: dict = {}


def _inplace_forward(cls, ctx, self, *args):
    *args, original = args
    result = cls._outplace.forward(ctx, self, *args)
    E.check_inplace_cast(result.dtype, self.dtype)
    if result.shape != self.shape:
        E._check_inplace_shape(self.shape, result.shape)
    saved = ctx._to_save
    if saved is not None:  # result -> self after the update; self -> the clone taken before
        ctx._original_slots = tuple(i for i, item in enumerate(saved) if item is self)
        ctx._to_save = tuple(self if item is result else None if item is self else item
                             for item in saved)
        E.Original.record(original, ctx)
    np.copyto(self, result, casting="unsafe")
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
    wanted = "self" in cls.saved_names and E.Original.needed(input, *tensors)
    original = E.Original(input) if wanted else None
    result = inplace_class(cls).apply(input, *args, original)
    if original is not None and original.node is not None:
        for slot in getattr(original.node, "_original_slots", ()):
            original.save(slot)
    return result


def _method(cls, name: str):
    def op(input: Tensor) -> Tensor:
        return inplace(cls, input)

    op.__name__ = op.__qualname__ = name
    return op


_UNARY = {
    "exp_": U.Exp, "log_": U.Log, "log1p_": U.Log1p, "sqrt_": U.Sqrt, "rsqrt_": U.Rsqrt,
    "reciprocal_": U.Reciprocal, "abs_": U.Abs, "absolute_": U.Abs, "sign_": U.Sign,
    "sin_": U.Sin, "cos_": U.Cos, "tanh_": U.Tanh, "sigmoid_": U.Sigmoid, "erf_": U.Erf,
    "neg_": U.Neg, "negative_": U.Neg, "floor_": U.Floor, "ceil_": U.Ceil, "trunc_": U.Trunc,
    "fix_": U.Trunc, "log2_": X.Log2, "log10_": X.Log10, "exp2_": X.Exp2, "expm1_": X.Expm1,
    "tan_": X.Tan, "asin_": X.Asin, "acos_": X.Acos, "atan_": X.Atan, "sinh_": X.Sinh,
    "cosh_": X.Cosh, "arcsin_": X.Asin, "arccos_": X.Acos, "arctan_": X.Atan, "frac_": X.Frac,
    "sinc_": X.Sinc, "deg2rad_": X.Deg2Rad, "rad2deg_": X.Rad2Deg,
}
METHODS = {name: _method(cls, name) for name, cls in _UNARY.items()}


def round_(input: Tensor, *, decimals: int = 0) -> Tensor:
    if decimals:
        return inplace(U.RoundDecimals, input, decimals)
    return inplace(U.Round, input)


def pow_(input: Tensor, exponent) -> Tensor:
    exponent = E.as_operand(exponent, "pow_")
    if isinstance(exponent, Tensor):
        dtype = E.promote(input, exponent)
        return inplace(E.PowTensor, input, exponent, dtype, None)
    return inplace(E.Pow, input, exponent, E.promote(input, exponent))


def square_(input: Tensor) -> Tensor:
    return pow_(input, 2)


def clamp_min_(input: Tensor, min) -> Tensor:
    input, min, _, dtype, tensor_bound = M._clamp_args(input, min, None, "clamp_min_")
    if tensor_bound:
        return inplace(S.ClampMinTensor, input, min, dtype)
    return inplace(S.ClampMin, input, min, None, dtype)


def clamp_max_(input: Tensor, max) -> Tensor:
    input, _, max, dtype, tensor_bound = M._clamp_args(input, None, max, "clamp_max_")
    if tensor_bound:
        return inplace(S.ClampMaxTensor, input, max, dtype)
    return inplace(S.ClampMax, input, None, max, dtype)


def logit_(input: Tensor, eps: float | None = None) -> Tensor:
    return inplace(X.Logit, input, eps)


def nan_to_num_(input: Tensor, nan: float = 0.0, posinf=None, neginf=None) -> Tensor:
    return inplace(X.NanToNum, input, nan, posinf, neginf)


def fmod_(input: Tensor, other) -> Tensor:
    other = E.as_operand(other, "fmod_")
    if isinstance(other, Tensor):
        return inplace(B.Fmod, input, other, E.promote(input, other), None)
    return inplace(B.FmodScalar, input, other, E.promote(input, other))


def lerp_(input: Tensor, end: Tensor, weight) -> Tensor:
    B._same_dtype("lerp", input, "end", end)
    if isinstance(weight, Tensor):
        B._same_dtype("lerp", input, "weight", weight)
        return inplace(B.LerpTensor, input, end, weight)
    return inplace(B.Lerp, input, end, float(weight))


def addcmul_(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    return inplace(B.Addcmul, input, tensor1, tensor2, value, input._data.dtype)


def addcdiv_(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    return inplace(B.Addcdiv, input, tensor1, tensor2, value, input._data.dtype)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return A.hardtanh(input, min_val, max_val, inplace=True)


METHODS.update({
    "round_": round_, "pow_": pow_, "square_": square_, "clamp_min_": clamp_min_,
    "clamp_max_": clamp_max_, "logit_": logit_, "nan_to_num_": nan_to_num_, "fmod_": fmod_,
    "lerp_": lerp_, "addcmul_": addcmul_, "addcdiv_": addcdiv_,
})
