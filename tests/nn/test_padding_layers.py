"""Padding layers (Zero/Constant/Reflection/Replication/Circular, 1-3 dims) against torch:
values, gradients, reprs, attributes and errors."""
import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_same_error, compare

R = np.random.default_rng(5)
SHAPES = {1: (2, 3, 6), 2: (2, 3, 5, 6), 3: (1, 2, 4, 5, 6)}
UNBATCHED = {1: (3, 6), 2: (3, 5, 6), 3: (2, 4, 5, 6)}
KINDS = ["ZeroPad", "ConstantPad", "ReflectionPad", "ReplicationPad", "CircularPad"]


def _build(nn, kind, dims, padding):
    cls = getattr(nn, f"{kind}{dims}d")
    return cls(padding, 2.5) if kind == "ConstantPad" else cls(padding)


def _paddings(dims):
    return [2, tuple(i % 3 + 1 for i in range(2 * dims)), tuple([1, 0] * dims)]


@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("kind", KINDS)
def test_padding_layer(kind, dims):
    for padding in _paddings(dims):
        for shape in (SHAPES[dims], UNBATCHED[dims]):
            compare(lambda lib, x: _build(lib.nn, kind, dims, padding)(x),
                    R.standard_normal(shape))
        ours, theirs = _build(hookgrad.nn, kind, dims, padding), _build(torch.nn, kind, dims,
                                                                         padding)
        assert repr(ours) == repr(theirs)
        assert ours.padding == theirs.padding
        assert getattr(ours, "value", None) == getattr(theirs, "value", None)
        assert list(ours.state_dict()) == []


def test_padding_layers_float32_and_negative_widths():
    compare(lambda lib, x: lib.nn.ZeroPad2d((-1, 2, 0, -2))(x),
            R.standard_normal((2, 3, 5, 6)).astype(np.float32))
    compare(lambda lib, x: lib.nn.ConstantPad1d((3, -1), -1.0)(x),
            R.standard_normal((2, 4)).astype(np.float32))


@pytest.mark.parametrize("kind", KINDS)
def test_padding_layer_errors(kind):
    assert_same_error(lambda lib: _build(lib.nn, kind, 2, 1)(lib.tensor(np.ones(4))))
    if kind in ("ReflectionPad", "CircularPad"):  # wider than the input
        assert_same_error(lambda lib: _build(lib.nn, kind, 1, 7)(lib.tensor(np.ones((2, 3)))))
