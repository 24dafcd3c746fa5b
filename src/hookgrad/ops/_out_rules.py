"""What differs, op by op, in how torch treats ``out=`` (measured on torch 2.13): the name its
autograd refusal gives, the ops whose out must have the result's dtype (with each one's
message), those with their own casting message, and which kernels cast through a temporary
(so a resized out of another dtype is warned about twice). ``_out.write_out`` reads these."""
from __future__ import annotations

from typing import Callable

from .. import _dtype

# factories that fill a fresh tensor: torch resizes their ``out`` without a warning
FACTORIES = {"zeros", "ones", "rand", "randn", "randint", "randperm", "normal", "bernoulli",
             "multinomial"}

# the name in "...(): functions with out=... arguments don't support automatic differentiation"
AUTOGRAD_NAME = {"float_power": "pow", "det": "_linalg_det", "inverse": "linalg_inv_ex",
                 **{name: f"aten::{name}" for name in ("zeros", "ones", "rand", "randn",
                                                       "randint", "randperm")}}

# composites torch runs from differentiable pieces: it writes their out without refusing
NOT_REFUSED_UNDER_AUTOGRAD = {"inner", "tensordot", "histc", "quantile", "nanquantile"}


def _names(pattern: str, name_of=_dtype.scalar_type_name) -> Callable:
    """A message made from the result's and out's dtypes (``{result}``, ``{out}``)."""
    return lambda result, out: pattern.format(result=name_of(result), out=name_of(out))


def _boolean_only(name: str) -> str:
    return f"{name} does not support non-boolean outputs."


# ops whose out must have the result's dtype: True for torch's structured-kernel message
# ("Expected out tensor to have dtype ..."), else the op's own message or how to make it
SAME_DTYPE = {
    "tril": True, "triu": True, "sort": True, "topk": True, "inverse": True, "diag": True,
    "kthvalue": "output values must be of same type as input",
    "masked_select": "masked_select(): self and result must have the same scalar type",
    "float_power": _names("the output given to float_power has dtype {out} but the operation's "
                          "result requires dtype {result}"),
    "tensordot": _names("tensordot: Expected the output tensor to have dtype {result}, but got "
                        "an output tensor with dtype {out}"),
    "histc": _names("torch.histogram: input tensor and hist tensor should have the same dtype, "
                    "but got input {result} and hist {out}", _dtype.cpp_type_name),
    "frac": _names("Found dtype {out} but expected {result}"),
    "nan_to_num": _names("nan_to_num: dtype of out: {out} should be same as input: {result}"),
    "heaviside": "heaviside is not yet implemented for tensors with different dtypes.",
    **{name: _boolean_only(name) for name in ("signbit", "isposinf", "isneginf")},
}

# ops that cast to out's dtype where allowed, with their own message where not
CAST_MESSAGE = {
    "diag": _names("diag: result type {result} can't be cast to the desired out= type {out}"),
    "ldexp": _names("ldexp can't be cast to the desired output type {out}"),
    "mvlgamma": _names("mvlgamma: result type {result} can't be cast to the desired output "
                       "type {result}"),
}

# modules of pointwise ops computed by torch's TensorIterator, which casts through a
# temporary: a resized out of another dtype is resized (and warned about) twice
POINTWISE_MODULES = {"pointwise_binary", "pointwise_more", "pointwise_unary", "bessel_erfinv",
                     "special"}
POINTWISE_WARN_ONCE = {"logit", "float_power", "mvlgamma"}
