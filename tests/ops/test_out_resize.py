"""``out=`` of a wrong shape or dtype, against torch: each call runs under both libraries and
must give the same warnings (category and text; torch resizes a non-empty out of another shape
with a deprecation warning, an empty one and a factory's silently), the same error (type and
message) or the same out (shape, stride, dtype, values), and return out itself."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close

R = np.random.default_rng(5)
V, M = R.uniform(0.2, 0.9, 3), R.uniform(0.2, 0.9, (2, 3))

CALLS = {
    "add": lambda lib, out: lib.add(lib.tensor(V), 1, out=out),
    "sub": lambda lib, out: lib.sub(lib.tensor(M), lib.tensor(V), out=out),
    "mul": lambda lib, out: lib.mul(lib.tensor(V), 2, out=out),
    "div": lambda lib, out: lib.div(lib.tensor(M), 3, out=out),
    "clamp": lambda lib, out: lib.clamp(lib.tensor(M), 0.3, 0.6, out=out),
    "clamp_tensor_bounds": lambda lib, out: lib.clamp(lib.tensor(V), lib.tensor(V) * 0.5,
                                                      out=out),
    "atan2": lambda lib, out: lib.atan2(lib.tensor(M), lib.tensor(V), out=out),
    "addcmul": lambda lib, out: lib.addcmul(lib.tensor(V), lib.tensor(V), lib.tensor(V),
                                            out=out),
    "matmul_mm": lambda lib, out: lib.matmul(lib.tensor(M), lib.tensor(M.T), out=out),
    "matmul_mv": lambda lib, out: lib.matmul(lib.tensor(M), lib.tensor(V), out=out),
    "matmul_dot": lambda lib, out: lib.matmul(lib.tensor(V), lib.tensor(V), out=out),
    "matmul_vm": lambda lib, out: lib.matmul(lib.tensor(V), lib.tensor(M.T), out=out),
    "matmul_batched": lambda lib, out: lib.matmul(lib.tensor(M).expand(2, 2, 3),
                                                  lib.tensor(M.T), out=out),
    "matmul_folded_mv": lambda lib, out: lib.matmul(lib.tensor(M).expand(2, 2, 3),
                                                    lib.tensor(V), out=out),
    "cat": lambda lib, out: lib.cat([lib.tensor(M), lib.tensor(M)], out=out),
    "stack": lambda lib, out: lib.stack([lib.tensor(V), lib.tensor(V)], out=out),
    "hstack": lambda lib, out: lib.hstack([lib.tensor(V), lib.tensor(V)], out=out),
    "column_stack": lambda lib, out: lib.column_stack([lib.tensor(V), lib.tensor(V)], out=out),
    "gather": lambda lib, out: lib.gather(lib.tensor(V), 0, lib.tensor([2, 0]), out=out),
    "index_select": lambda lib, out: lib.index_select(lib.tensor(M), 1, lib.tensor([2, 0]),
                                                      out=out),
    "masked_select": lambda lib, out: lib.masked_select(lib.tensor(V), lib.tensor(V) > 0.4,
                                                        out=out),
    "tril": lambda lib, out: lib.tril(lib.tensor(M), out=out),
    "diag": lambda lib, out: lib.diag(lib.tensor(V), out=out),
    "diag_of_matrix": lambda lib, out: lib.diag(lib.tensor(M), out=out),
    "inner": lambda lib, out: lib.inner(lib.tensor(M), lib.tensor(M), out=out),
    "quantile": lambda lib, out: lib.quantile(lib.tensor(V), 0.5, out=out),
    "nanquantile": lambda lib, out: lib.nanquantile(lib.tensor(M), 0.5, 1, out=out),
    "cumprod": lambda lib, out: lib.cumprod(lib.tensor(M), 1, out=out),
    "float_power": lambda lib, out: lib.float_power(lib.tensor(V), 2, out=out),
    "tensordot": lambda lib, out: lib.tensordot(lib.tensor(M), lib.tensor(M), ([1], [1]),
                                                out=out),
    "histc": lambda lib, out: lib.histc(lib.tensor(V), bins=4, out=out),
    "sort": lambda lib, out: lib.sort(lib.tensor(M), out=(out, lib.empty(5, dtype=lib.int64))),
    "topk": lambda lib, out: lib.topk(lib.tensor(V), 2, out=(out, lib.empty(0, dtype=lib.int64))),
    "zeros": lambda lib, out: lib.zeros(2, 3, out=out),
    "randint": lambda lib, out: lib.randint(0, 5, (4,), out=out),
}

# (shape, dtype name, requires_grad) of the out given
OUTS = {
    "wrong_shape": ((4,), "float64", False),
    "same_numel_other_shape": ((3, 2), "float64", False),
    "empty": ((0,), "float64", False),
    "empty_2d": ((2, 0), "float64", False),
    "float32": ((4,), "float32", False),
    "int64": ((4,), "int64", False),
    "int64_empty": ((0,), "int64", False),
    "requires_grad": ((4,), "float64", True),
}


def plain(message) -> str:
    return re.sub(r" \(Triggered internally at .*\)$", "", str(message), flags=re.S)


def outcome(lib, call, shape, dtype, requires_grad):
    out = lib.full(shape, -7.0, dtype=getattr(lib, dtype), requires_grad=requires_grad)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            returned = call(lib, out)
        except Exception as error:  # noqa: BLE001  (the type is what is compared)
            result = (type(error), str(error).splitlines()[0])
        else:
            first = returned[0] if isinstance(returned, tuple) else returned
            assert first is out
            result = out
    return result, [(w.category, plain(w.message)) for w in caught]


# known differences, kept visible: each must still fail (strict)
KNOWN_DIFFERENCES: dict = {}


def table_cases(calls: dict, outs: dict, known: dict):
    """One case per call and out; a known difference must keep failing (strict xfail)."""
    for name in sorted(calls):
        for kind in sorted(outs):
            reason = known.get((name, kind))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            yield pytest.param(name, kind, marks=marks, id=f"{name}-{kind}")


def check_out_as_torch(call, out, compare_values: bool = True, **tolerances) -> None:
    """Run ``call`` with ``out`` (shape, dtype, requires_grad) under both libraries: the same
    warnings, the same error, or an out of torch's shape, strides and values."""
    ours, our_warnings = outcome(hookgrad, call, *out)
    theirs, their_warnings = outcome(torch, call, *out)
    assert our_warnings == their_warnings
    if isinstance(theirs, tuple):
        assert ours == theirs
        return
    assert not isinstance(ours, tuple), ours
    assert (tuple(ours.shape), ours.stride()) == (tuple(theirs.shape), theirs.stride())
    if compare_values:
        assert_close(ours, theirs, **tolerances)


@pytest.mark.parametrize("name, kind", list(table_cases(CALLS, OUTS, KNOWN_DIFFERENCES)))
def test_out_as_torch(name, kind):
    check_out_as_torch(CALLS[name], OUTS[kind], compare_values=name != "randint")


def _wrapped_pointwise():
    """hookgrad's public pointwise functions whose ``out=`` the shared wrapper writes."""
    import inspect
    from hookgrad.ops import _out_rules
    from hookgrad.ops._out import reads_out
    for name in sorted(dir(hookgrad)):
        fn = getattr(hookgrad, name)
        if name.startswith("_") or not inspect.isfunction(fn):
            continue
        inner = inspect.unwrap(fn)
        if inner.__module__.rsplit(".", 1)[-1] not in _out_rules.POINTWISE_MODULES or \
                "out" not in inspect.signature(fn).parameters or reads_out(inner):
            continue
        yield name, [p.name for p in inspect.signature(inner).parameters.values()
                     if p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD]


ARGUMENTS = {"weight": 0.3, "n": 1, "p": 1}
POINTWISE = list(_wrapped_pointwise())
# torch's gcd/lcm resize out before refusing a float input; hookgrad refuses first
NOT_COMPARED = {"gcd", "lcm"}


@pytest.mark.parametrize("kind", ["wrong_shape", "float32", "int64", "empty", "int64_empty"])
@pytest.mark.parametrize("name, parameters", [p for p in POINTWISE if p[0] not in NOT_COMPARED])
def test_every_wrapped_pointwise_out_as_torch(name, parameters, kind):
    def call(lib, out):
        values = lib.tensor(V)
        return getattr(lib, name)(*[ARGUMENTS.get(p, values) for p in parameters], out=out)
    ours, our_warnings = outcome(hookgrad, call, *OUTS[kind])
    theirs, their_warnings = outcome(torch, call, *OUTS[kind])
    assert our_warnings == their_warnings
    if isinstance(theirs, tuple):
        assert ours == theirs
    else:
        assert not isinstance(ours, tuple), ours
        assert_close(ours, theirs, rtol=1e-6, atol=1e-7)


def test_the_sweep_covers_the_pointwise_families():
    assert len(POINTWISE) > 40


def test_a_tuple_result_refuses_a_single_out():
    from conftest import assert_same_error
    assert_same_error(lambda lib: lib.frexp(lib.tensor(V), out=lib.empty(3)))
