"""clamp/clip bounds of other dtypes, mixed number and tensor bounds, inverted and equal bounds,
against torch: result dtype, values, errors and gradients."""
import pytest
import torch

import hookgrad

from tests.conftest import assert_close, error_of

SELVES = {
    "int64": lambda lib: lib.tensor([0, 1, 2, 3]),
    "uint8": lambda lib: lib.tensor([0, 1, 200, 3], dtype=lib.uint8),
    "bool": lambda lib: lib.tensor([True, False, True, False]),
    "float16": lambda lib: lib.tensor([0.0, 1.0, 2.5, -1.0], dtype=lib.float16),
    "float32": lambda lib: lib.tensor([0.0, 1.0, 2.5, -1.0]),
}
BOUNDS = {
    "py_float": lambda lib: 0.5,
    "py_int": lambda lib: 1,
    "py_bool": lambda lib: True,
    "float32_0d": lambda lib: lib.tensor(1.5),
    "float64_0d": lambda lib: lib.tensor(1.5, dtype=lib.float64),
    "int64_0d": lambda lib: lib.tensor(2),
    "bool_0d": lambda lib: lib.tensor(True),
    "int64_vec": lambda lib: lib.tensor([0, 1, 2, 3]),
    "float64_col": lambda lib: lib.tensor([[0.5], [2.0]], dtype=lib.float64),
    "grad_0d": lambda lib: lib.tensor(1.5, requires_grad=True),
}
CALLS = {
    "min": lambda lib, x, b: lib.clamp(x, min=b),
    "max": lambda lib, x, b: lib.clamp(x, max=b),
    "both_same": lambda lib, x, b: lib.clip(x, b, b),
    "number_then_bound": lambda lib, x, b: lib.clamp(x, 0.5, b),
    "bound_then_number": lambda lib, x, b: lib.clamp(x, b, 2),
    "inplace_min": lambda lib, x, b: x.clamp_(min=b),
    "inplace_mixed": lambda lib, x, b: x.clamp_(b, 3),
}


@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize("bound", sorted(BOUNDS))
@pytest.mark.parametrize("self_name", sorted(SELVES))
def test_clamp_bound_kinds(self_name, bound, call):
    def run(lib):
        return CALLS[call](lib, SELVES[self_name](lib), BOUNDS[bound](lib))

    expected = error_of(lambda: run(torch))
    outcome = error_of(lambda: run(hookgrad))
    if expected is None or outcome is None:
        assert outcome == expected
        assert_close(run(hookgrad), run(torch))
    else:  # the type, and the first line (torch's parser goes on to list its overloads)
        assert outcome[0] is expected[0]
        assert outcome[1].splitlines()[0].startswith(expected[1].splitlines()[0][:40])


@pytest.mark.parametrize("tensors", [False, True])
@pytest.mark.parametrize("low,high", [(1.0, 1.0), (0.0, 2.0), (1.5, 0.5), (2.0, 2.0)])
def test_gradients_at_and_between_bounds(low, high, tensors):
    def run(lib):
        x = lib.tensor([0.0, 1.0, 2.0], dtype=lib.float64, requires_grad=True)
        weights = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)
        if not tensors:
            out = lib.clamp(x, low, high)
            out.backward(weights)
            return out, x.grad
        lo = lib.full((3,), low, dtype=lib.float64, requires_grad=True)
        hi = lib.full((3,), high, dtype=lib.float64, requires_grad=True)
        out = lib.clamp(x, lo, hi)
        out.backward(weights)
        return out, x.grad, lo.grad, hi.grad

    for ours, theirs in zip(run(hookgrad), run(torch)):
        assert_close(ours, theirs)


def test_mixed_bounds_record_the_number_overload():
    def run(lib):
        x = lib.tensor([0.0, 1.0, 2.0], requires_grad=True)
        return lib.clamp(x, 0.5, lib.tensor(1.5, dtype=lib.float64))

    ours, theirs = run(hookgrad), run(torch)
    assert_close(ours, theirs)
    assert ours.grad_fn.name() == theirs.grad_fn.name()
