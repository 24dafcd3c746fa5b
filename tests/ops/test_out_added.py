"""``out=`` for the functions whose own signature has none but torch's has (sum, exp, mm, max
over a dim, ...: ``_out_rules.ADDED_OUT``): each runs under both libraries with outs of a wrong
shape, another dtype, no elements, or requiring grad, and must give torch's warnings, error
or written out (see test_out_resize for the comparison)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad
from hookgrad.ops import _out_rules
from tests.ops.test_out_resize import check_out_as_torch, table_cases

V = np.linspace(0.1, 0.9, 6).reshape(2, 3)


def t(lib, array=V):
    return lib.tensor(array)




CALLS = {
    **{name: (lambda name: lambda lib, out: getattr(lib, name)(t(lib), out=out))(name)
       for name in ("exp", "log", "log1p", "expm1", "sin", "cos", "sqrt", "rsqrt", "sigmoid",
                    "tanh", "reciprocal", "erf", "square", "abs", "neg", "negative", "floor",
                    "ceil", "round", "trunc", "fix", "sign", "sgn", "msort")},
    **{name: (lambda name: lambda lib, out: getattr(lib, name)(t(lib), 1, out=out))(name)
       for name in ("sum", "prod", "cumsum", "nansum", "mean", "nanmean", "std", "var", "amax",
                    "amin", "argmax", "argmin", "all", "any", "logsumexp")},
    **{name: (lambda name: lambda lib, out: getattr(lib, name)(t(lib), t(lib), out=out))(name)
       for name in ("pow", "maximum", "minimum", "remainder", "fmax", "fmin", "floor_divide",
                    "kron")},
    **{name: (lambda name: lambda lib, out: getattr(lib, name)(t(lib), 0.5, out=out))(name)
       for name in sorted(_out_rules.COMPARISONS)},
    "lt_tensor": lambda lib, out: lib.lt(t(lib), t(lib, V.T.reshape(2, 3)), out=out),
    "eq_int_operands": lambda lib, out: lib.eq(t(lib, (V * 10).astype(np.int32)), 3, out=out),
    **{name: (lambda name: lambda lib, out: getattr(lib, name)(t(lib), t(lib) - 0.5, out=out))(
        name) for name in ("logical_and", "logical_or", "logical_xor")},
    "logical_not": lambda lib, out: lib.logical_not(t(lib) - 0.5, out=out),
    **{name: (lambda name: lambda lib, out: getattr(lib, name)(
        t(lib) > 0.5, t(lib) > 0.3, out=out))(name)
       for name in ("bitwise_and", "bitwise_or", "bitwise_xor")},
    "bitwise_not": lambda lib, out: lib.bitwise_not(t(lib) > 0.5, out=out),
    "bitwise_and_int": lambda lib, out: lib.bitwise_and(t(lib, (V * 10).astype(np.int64)), 6,
                                                        out=out),
    "clamp_min": lambda lib, out: lib.clamp_min(t(lib), 0.5, out=out),
    "clamp_max": lambda lib, out: lib.clamp_max(t(lib), 0.5, out=out),
    "diff": lambda lib, out: lib.diff(t(lib), out=out),
    "nansum_of_integers": lambda lib, out: lib.nansum(t(lib, (V * 10).astype(np.int64)), 1,
                                                      out=out),
    "cumsum_of_bools": lambda lib, out: lib.cumsum(t(lib) > 0.5, 1, out=out),
    "outer": lambda lib, out: lib.outer(t(lib, V[0]), t(lib, V[1]), out=out),
    "norm": lambda lib, out: lib.norm(t(lib), 2, 1, out=out),
    "mm": lambda lib, out: lib.mm(t(lib), t(lib, V.T), out=out),
    "bmm": lambda lib, out: lib.bmm(t(lib, V[None]), t(lib, V.T[None]), out=out),
    "mv": lambda lib, out: lib.mv(t(lib), t(lib, V[0]), out=out),
    "addmm": lambda lib, out: lib.addmm(t(lib, V @ V.T), t(lib), t(lib, V.T), out=out),
    "baddbmm": lambda lib, out: lib.baddbmm(t(lib, (V @ V.T)[None]), t(lib, V[None]),
                                            t(lib, V.T[None]), out=out),
    "take_along_dim": lambda lib, out: lib.take_along_dim(t(lib), lib.tensor([[0], [1]]), 1,
                                                          out=out),
    "max": lambda lib, out: lib.max(t(lib), 1, out=(out, lib.empty(0, dtype=lib.int64))),
    "min": lambda lib, out: lib.min(t(lib), 1, out=(out, lib.empty(0, dtype=lib.int64))),
    "cummax": lambda lib, out: lib.cummax(t(lib), 1, out=(out, lib.empty(0, dtype=lib.int64))),
    "cummin": lambda lib, out: lib.cummin(t(lib), 1, out=(out, lib.empty(0, dtype=lib.int64))),
    "aminmax": lambda lib, out: lib.aminmax(t(lib), dim=1, out=(out, lib.empty(0, dtype=lib.float64))),  # noqa: E501
}

# (shape, dtype name, requires_grad) of the out given
OUTS = {"wrong_shape": ((4,), "float64", False), "float32": ((4,), "float32", False),
        "int32": ((4,), "int32", False),
        "float32_empty": ((0,), "float32", False), "int64": ((4,), "int64", False),
        "bool": ((4,), "bool", False), "requires_grad": ((4,), "float64", True)}

# known differences, kept visible: each must still fail (strict)
KNOWN_DIFFERENCES: dict = {}


@pytest.mark.parametrize("name, kind", list(table_cases(CALLS, OUTS, KNOWN_DIFFERENCES)))
def test_added_out_as_torch(name, kind):
    check_out_as_torch(CALLS[name], OUTS[kind], rtol=1e-6, atol=1e-7)


def test_the_table_covers_every_added_out():
    assert set(_out_rules.ADDED_OUT) <= set(CALLS) | {"negative"}


@pytest.mark.parametrize("kind", ["int64", "bool", "float32"])
def test_mean_into_an_integer_out_names_the_default_dtype(kind):
    """mean divides the sum in out in place: the quotient has the default dtype."""
    for lib in (hookgrad, torch):
        lib.set_default_dtype(lib.float64)
    try:
        check_out_as_torch(lambda lib, out: lib.mean(t(lib), 1, out=out), OUTS[kind],
                           rtol=1e-6, atol=1e-7)
    finally:
        for lib in (hookgrad, torch):
            lib.set_default_dtype(lib.float32)
