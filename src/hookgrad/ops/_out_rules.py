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
                 "diff": "sub", "fix": "trunc", "msort": "sort", "nanmean": "nansum",
                 "negative": "neg", "norm": "linalg_vector_norm", "outer": "mul",
                 "square": "pow", "take_along_dim": "gather", "kron": "mul",
                 "floor_divide": "aten::floor_divide",
                 **{name: f"aten::{name}" for name in ("zeros", "ones", "rand", "randn",
                                                       "randint", "randperm")}}

# composites torch runs from differentiable pieces, and ops with no derivative: torch writes
# their out without refusing
COMPOSITES = {"inner", "tensordot", "quantile", "nanquantile"}
NOT_REFUSED_UNDER_AUTOGRAD = COMPOSITES | {"histc", "argmax", "argmin", "all", "any"}


def _names(pattern: str, name_of=_dtype.scalar_type_name) -> Callable:
    """A message made from the result's and out's dtypes (``{result}``, ``{out}``)."""
    return lambda result, out: pattern.format(result=name_of(result), out=name_of(out))


def _boolean_only(name: str) -> str:
    return f"{name} does not support non-boolean outputs."


# ops whose out must have the result's dtype: True for torch's structured-kernel message
# ("Expected out tensor to have dtype ..."), else the op's own message or how to make it
SAME_DTYPE = {
    "tril": True, "triu": True, "sort": True, "topk": True, "inverse": True,
    "kthvalue": "output values must be of same type as input",
    "masked_select": "masked_select(): self and result must have the same scalar type",
    "float_power": _names("the output given to float_power has dtype {out} but the operation's "
                          "result requires dtype {result}"),
    "tensordot": _names("tensordot: Expected the output tensor to have dtype {result}, but got "
                        "an output tensor with dtype {out}"),
    # inner of tensors with dims is torch's tensordot over their last dims
    "inner": _names("tensordot: Expected the output tensor to have dtype {result}, but got "
                    "an output tensor with dtype {out}"),
    **{name: "quantile() out tensor must be same dtype as the input tensor"
       for name in ("quantile", "nanquantile")},
    "histc": _names("torch.histogram: input tensor and hist tensor should have the same dtype, "
                    "but got input {result} and hist {out}", _dtype.cpp_type_name),
    "frac": _names("Found dtype {out} but expected {result}"),
    "nan_to_num": _names("nan_to_num: dtype of out: {out} should be same as input: {result}"),
    "heaviside": "heaviside is not yet implemented for tensors with different dtypes.",
    **{name: _boolean_only(name) for name in ("signbit", "isposinf", "isneginf")},
}

# ops that cast to out's dtype where allowed, with their own message where not
CAST_MESSAGE = {
    "ldexp": _names("ldexp can't be cast to the desired output type {out}"),
    "mvlgamma": _names("mvlgamma: result type {result} can't be cast to the desired output "
                       "type {result}"),
}

# modules of pointwise ops computed by torch's TensorIterator, which casts through a
# temporary: a resized out of another dtype is resized (and warned about) twice
POINTWISE_MODULES = {"pointwise_binary", "pointwise_more", "pointwise_unary", "bessel_erfinv",
                     "special", "igamma", "special_normal", "bessel_k", "zeta",
                     "orthogonal_polynomials"}
POINTWISE_WARN_ONCE = {"logit", "float_power", "mvlgamma"}


# ops whose out torch refuses when it partly shares memory with an input (TensorIterator's
# check): every pointwise op, by module, and these by name; the rest (reductions over a dim,
# matrix products, tril/triu, linalg) write without looking
OVERLAP_CHECKED_MODULES = POINTWISE_MODULES | {"pointwise", "unary", "arithmetic",
                                               "comparison", "activation"}
OVERLAP_CHECKED = {"cumsum", "cumprod", "logcumsumexp", "kthvalue", "min", "max", "addmv",
                   "addbmm", "baddbmm", "addmm", "kron", "cross", "linalg_cross",
                   "masked_select", "cat", "concat", "concatenate", "stack", "take_along_dim",
                   "take", "index_select", "gather", "diff", "sort", "topk", "outer", "ger"}
# of those, the ones that refuse any sharing, even out being the input itself
OVERLAP_ANY = {"cat", "concat", "concatenate", "stack", "gather", "masked_select",
               "take_along_dim", "index_select", "take"}


def _found(result, out) -> str:
    name = _dtype.scalar_type_name
    return f"Found dtype {name(out)} but expected {name(result)}"


def _only_bool(name: str) -> Callable:
    return lambda result, out: (f"{name} only supports bool tensor for result, got: "
                                f"{_dtype.scalar_type_name(out)}")


# functions whose hookgrad signature has no ``out`` but torch's does: ``accept_out`` gives them
# one, with torch's dtype rule for each (the keys of ``ADDED_OUT``' values are write_out's)
_CAST = {"casts_through_temporary": True}  # TensorIterator ops: cast where allowed
_KEEP_DTYPE = {"same_dtype": _found}  # unary ops whose kernel keeps the input's dtype
_STRUCTURED = {"same_dtype": True}
ADDED_OUT = {
    **{name: _CAST for name in (
        "exp", "log", "log1p", "expm1", "sin", "cos", "sqrt", "rsqrt", "sigmoid", "tanh",
        "reciprocal", "erf", "square", "pow", "maximum", "minimum", "remainder", "fmax", "fmin")},
    **{name: _KEEP_DTYPE for name in (
        "abs", "neg", "negative", "floor", "ceil", "round", "trunc", "fix", "sign", "sgn",
        "clamp_min", "clamp_max")},
    **{name: _STRUCTURED for name in (
        "mm", "bmm", "mv", "addmm", "baddbmm", "take_along_dim", "msort", "argmax", "argmin",
        "max", "min", "aminmax")},
    # mean writes the sum into out, then divides it in place: an integer out holds no quotient
    "mean": {"resize_first": True, "cast_message": lambda result, out: (
        f"result type {_dtype.scalar_type_name(_dtype.get_default_dtype())} can't be cast to "
        f"the desired output type {_dtype.scalar_type_name(out)}")},
    "nanmean": {"resize_first": True}, "std": {"resize_first": True},
    "var": {"resize_first": True}, "floor_divide": {}, "outer": _CAST, "diff": _CAST,
    # kron resizes out itself, then writes a product into it (refused there under autograd)
    "kron": {"resize_first": True, "resize_before_refusal": True},
    "norm": _STRUCTURED,
    "logsumexp": {"same_dtype": lambda result, out: None if out.kind in "fV" else (
        f"logsumexp(): Expected floating point type for result tensor, but got: "
        f"{_dtype.scalar_type_name(out)}")},
    "sum": {}, "prod": {}, "cumsum": {"resize_first": True}, "nansum": {"resize_first": True},
    "amax": {"same_dtype": _names("Expected the dtype for input and out to match, but got "
                                  "{result} for input's dtype and {out} for out's dtype.")},
    "amin": {"same_dtype": _names("Expected the dtype for input and out to match, but got "
                                  "{result} for input's dtype and {out} for out's dtype.")},
    "all": {"same_dtype": _only_bool("all")}, "any": {"same_dtype": _only_bool("any")},
    "cummax": {"same_dtype": _names("expected scalar_type {result} but found {out}")},
    "cummin": {"same_dtype": _names("expected scalar_type {result} but found {out}")},
}

# comparisons write straight into an out of their operands' common dtype or bool, and cast
# through a temporary into any other (``accept_out`` works out which from the operands)
COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge", "greater", "less", "greater_equal",
               "less_equal", "not_equal"}
ADDED_OUT.update({name: {} for name in COMPARISONS | {
    "logical_and", "logical_or", "logical_xor", "logical_not"}})
ADDED_OUT.update({name: _CAST for name in ("bitwise_and", "bitwise_or", "bitwise_xor")})
ADDED_OUT["bitwise_not"] = _KEEP_DTYPE
NOT_REFUSED_UNDER_AUTOGRAD |= COMPARISONS | {"logical_and", "logical_or", "logical_xor",
                                             "logical_not"}
AUTOGRAD_NAME.update({name: f"aten::{name}" for name in (
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not")})


def _no_kernel(kernel: str, refused: Callable) -> Callable:
    """torch's error for a kernel with no implementation for out's dtype, when ``refused``
    (of the input's and out's dtypes) says it is asked for one."""
    return lambda given, out: NotImplementedError(
        f'"{kernel}" not implemented for \'{_dtype.scalar_type_name(out)}\'') if refused(
        given, out) else None


# kernels that run in out's dtype and have none for some: the error comes once out is resized
# (a floating input's nansum into an integer out; any cumsum into a bool out)
KERNEL_REFUSAL = {
    "nansum": _no_kernel("nansum_cpu", lambda given, out: given.kind in "fc"
                         and out.kind in "biu"),
    "nanmean": _no_kernel("nansum_cpu", lambda given, out: given.kind in "fc"
                          and out.kind in "biu"),
    "cumsum": _no_kernel("cumsum_out_cpu", lambda given, out: out.kind == "b"),
}

# composites torch lets through autograd that refuse an out requiring grad of another shape
GRAD_OUT_SHAPE = {
    name: "tensordot(): the 'out' tensor was specified and requires gradients, and its "
                 "shape does not match the expected result. Either remove the 'out' argument, "
                 "ensure it does not require gradients, or make sure its shape matches the "
                 "expected output." for name in ("tensordot", "inner")
}

# of those, the ones that compute in out's dtype (torch passes it as their ``dtype``)
DTYPE_FROM_OUT = {"sum", "prod", "cumsum", "nansum"}
