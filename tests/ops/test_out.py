"""``out=``: every public function that declares it writes its result there (torch's contract),
checked against torch for a table of families, and for every such function by a walk."""
import inspect

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, assert_same_error

R = np.random.default_rng(3)
A, B = R.uniform(0.2, 0.9, (3, 4)), R.uniform(0.2, 0.9, (3, 4))

CASES = {
    "atan2": lambda lib, out: lib.atan2(lib.tensor(A), lib.tensor(B), out=out),
    "hypot": lambda lib, out: lib.hypot(lib.tensor(A), lib.tensor(B), out=out),
    "copysign": lambda lib, out: lib.copysign(lib.tensor(A), lib.tensor(-B), out=out),
    "xlogy": lambda lib, out: lib.xlogy(lib.tensor(A), lib.tensor(B), out=out),
    "lerp": lambda lib, out: lib.lerp(lib.tensor(A), lib.tensor(B), 0.3, out=out),
    "addcmul": lambda lib, out: lib.addcmul(lib.tensor(A), lib.tensor(A), lib.tensor(B),
                                            out=out),
    "exp2": lambda lib, out: lib.exp2(lib.tensor(A), out=out),
    "asin": lambda lib, out: lib.asin(lib.tensor(A), out=out),
    "logit": lambda lib, out: lib.logit(lib.tensor(A), out=out),
    "erfc": lambda lib, out: lib.erfc(lib.tensor(A), out=out),
    "nextafter": lambda lib, out: lib.nextafter(lib.tensor(A), lib.tensor(B), out=out),
    "tril": lambda lib, out: lib.tril(lib.tensor(A), out=out),
    "cumprod": lambda lib, out: lib.cumprod(lib.tensor(A), 1, out=out),
    "logcumsumexp": lambda lib, out: lib.logcumsumexp(lib.tensor(A), 0, out=out),
    "tensordot": lambda lib, out: lib.tensordot(lib.tensor(A), lib.tensor(B.T), 1, out=out),
    "zeros": lambda lib, out: lib.zeros(3, 4, out=out),
    "ones": lambda lib, out: lib.ones(3, 4, out=out),
    "arange": lambda lib, out: lib.arange(12, out=out),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("start_shape", [(3, 4), (0,)])
def test_result_is_written_into_out(name, start_shape):
    results = []
    for lib in (hookgrad, torch):
        out = lib.full(start_shape, -7.0, dtype=lib.float64)
        returned = CASES[name](lib, out)
        assert returned is out
        results.append(out)
    assert tuple(results[0].shape) == tuple(results[1].shape)
    assert_close(results[0], results[1])


def test_factory_makes_out_dtype():
    for lib in (hookgrad, torch):
        out = lib.empty(0, dtype=lib.int64)
        lib.ones(2, 3, out=out)
        assert out.dtype == lib.int64 and out.tolist() == [[1, 1, 1], [1, 1, 1]]


def test_tuple_results_go_into_each_out():
    written = []
    for lib in (hookgrad, torch):
        values, indices = lib.empty(0, dtype=lib.float64), lib.empty(0, dtype=lib.int64)
        returned = lib.sort(lib.tensor(A), 1, out=(values, indices))
        assert returned[0] is values and returned.indices is indices
        written.append((values, indices))
    assert_close(written[0][0], written[1][0])
    assert_close(written[0][1], written[1][1])


@pytest.mark.parametrize("call", [
    lambda lib: lib.atan2(lib.tensor(A), lib.tensor(B), out=lib.empty(0, dtype=lib.int64)),
    lambda lib: lib.hypot(lib.tensor(A, requires_grad=True), lib.tensor(B), out=lib.empty(0)),
])
def test_errors_match(call):
    assert_same_error(call)


def _declares_out(fn) -> bool:
    try:
        return "out" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _some_layer_reads_out(fn) -> bool:
    from hookgrad.ops._out import reads_out
    while fn is not None:
        if reads_out(fn):
            return True
        fn = getattr(fn, "__wrapped__", None)
    return False


def test_no_public_function_ignores_out():
    """A function that takes ``out`` and leaves it untouched is a silent wrong answer."""
    ignoring = [name for name in dir(hookgrad) if not name.startswith("_")
                and inspect.isfunction(getattr(hookgrad, name))
                and _declares_out(getattr(hookgrad, name))
                and not _some_layer_reads_out(getattr(hookgrad, name).__wrapped__)]
    assert not ignoring, ignoring


@pytest.mark.parametrize("shape, transposed", [((3, 4), False), ((3, 4), True), ((2, 3), False),
                                               ((0,), False)])
def test_arange_out_keeps_a_shape_of_the_right_size(shape, transposed):
    """torch's arange keeps out's shape when it holds as many elements, filling it in its
    logical order (a transposed out too), and resizes it (with a warning) otherwise."""
    import warnings
    results = []
    for lib in (hookgrad, torch):
        out = lib.full(shape, -7.0, dtype=lib.float64)
        out = out.t() if transposed else out
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.arange(12, out=out)
        results.append((out, len([w for w in caught if "out tensor" in str(w.message)])))
    (ours, our_warnings), (theirs, their_warnings) = results
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert_close(ours, theirs)
    assert our_warnings == their_warnings


def test_arange_out_dtype_is_outs():
    for lib in (hookgrad, torch):
        out = lib.empty(0, dtype=lib.int32)
        lib.arange(5, out=out)
        assert out.dtype == lib.int32 and out.tolist() == [0, 1, 2, 3, 4]
