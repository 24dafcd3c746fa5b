"""Arguments torch takes only as tensors, and isclose's dtype rule, against torch."""
import numpy as np
import pytest

from conftest import assert_same_error, compare


@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor", "gcd", "lcm",
                                  "equal", "isclose", "dist"])
def test_tensor_only_other_refuses_a_python_number(name):
    for number in (2, 1.5, True):
        assert_same_error(lambda lib: getattr(lib, name)(lib.tensor([1, 0, 3]), number))


def test_logical_functions_still_take_tensors_of_any_dtype():
    a, b = np.array([0, 1, 2, -1]), np.array([0.0, 0.0, 1.5, np.nan])
    for name in ("logical_and", "logical_or", "logical_xor"):
        compare(lambda lib, x, y: getattr(lib, name)(x, y), a, b, grad=False)


def test_isclose_needs_one_dtype():
    assert_same_error(lambda lib: lib.isclose(lib.tensor([True]), lib.tensor([1], dtype=lib.uint8)))
    assert_same_error(lambda lib: lib.isclose(lib.tensor([1.0]), lib.tensor([1.0],
                                                                           dtype=lib.float64)))
    compare(lambda lib, x, y: lib.isclose(x, y), np.array([1.0, np.nan, 2.0]),
            np.array([1.0 + 1e-9, np.nan, 2.1]), grad=False)
