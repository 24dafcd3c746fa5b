"""Rounding, scaling and positive on bool and integer tensors against torch: which dtypes
torch computes and which it refuses."""
import numpy as np
import pytest

from conftest import assert_same_error, compare

BOOLS = np.array([True, False, True])
INTS = np.array([-3, 0, 7], np.int8)


@pytest.mark.parametrize("name", ["floor", "ceil", "trunc", "round", "fix"])
def test_rounding_refuses_bool_and_copies_integers(name):
    assert_same_error(lambda lib: getattr(lib, name)(lib.tensor(BOOLS)))
    assert_same_error(lambda lib: getattr(lib.tensor(BOOLS), name + "_")())
    compare(lambda lib, x: getattr(lib, name)(x), INTS, grad=False)
    compare(lambda lib, x: getattr(lib, name)(x), np.array(5, np.int64), grad=False)


@pytest.mark.parametrize("name", ["deg2rad", "rad2deg"])
def test_degree_scaling_of_bool_and_integers_gives_floats(name):
    compare(lambda lib, x: getattr(lib, name)(x), BOOLS, grad=False)
    compare(lambda lib, x: getattr(lib, name)(x), INTS, grad=False)
    assert_same_error(lambda lib: getattr(lib.tensor(BOOLS), name + "_")())


def test_positive_refuses_bool_with_torchs_error():
    assert_same_error(lambda lib: lib.positive(lib.tensor(BOOLS)))
    assert_same_error(lambda lib: +lib.tensor(BOOLS))
