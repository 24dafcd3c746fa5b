"""Integer powers, divisions and remainders on corner inputs, against torch: negative integer
exponents in a tensor, and integer division by a zero that no element meets."""
import numpy as np
import pytest

from conftest import assert_same_error, compare

BASES = np.array([[-3, -2, -1, 0, 1, 2, 3, 7]])
EXPONENTS = np.array([[-3], [-2], [-1], [0], [1], [2], [5]])


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
def test_integer_tensor_to_negative_integer_tensor_powers(dtype):
    base, exponent = BASES.astype(dtype), EXPONENTS.astype(dtype)
    compare(lambda lib, a, b: lib.pow(a, b), base, exponent, grad=False)
    compare(lambda lib, a, b: a ** b, base, exponent.astype(np.int64), grad=False)
    compare(lambda lib, a, b: a.clone().pow_(b), base, exponent[:1, :], grad=False)


def test_number_base_to_negative_integer_tensor_powers():
    exponent = EXPONENTS.ravel()
    for base in (2, -1, 1, -2, 0):
        compare(lambda lib, e: base ** e, exponent, grad=False)
        compare(lambda lib, e: lib.pow(base, e), exponent.astype(np.int16), grad=False)


def test_integer_tensor_to_negative_number_power_is_refused():
    assert_same_error(lambda lib: lib.pow(lib.tensor([1, 2]), -1))
    assert_same_error(lambda lib: lib.tensor([1, 2]) ** -2)


@pytest.mark.parametrize("op", ["floor_divide", "remainder", "fmod", "div_floor", "div_trunc"])
def test_integer_division_by_zero_with_nothing_to_divide(op):
    def call(lib, a, b):
        if op.startswith("div_"):
            return lib.div(a, b, rounding_mode=op[4:])
        return getattr(lib, op)(a, b)
    empty, zero = np.zeros((0,), np.int16), np.zeros((1,), np.int8)
    compare(call, empty, zero, grad=False)
    compare(call, np.zeros((2, 0), np.int64), np.zeros((2, 1), np.int64), grad=False)
    assert_same_error(lambda lib: call(lib, lib.tensor([1, 2]), lib.tensor([0])))
