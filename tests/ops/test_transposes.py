"""``x.T``, ``x.mT``, ``x.H`` and ``x.mH`` against torch: values, gradients, the node each
records, the identity on 0-D tensors and the rank errors (their warnings: tests/test_warn_once)."""
from __future__ import annotations

import warnings

import pytest
import torch

import hookgrad
from tests.conftest import assert_same_error, compare, graph_names

SHAPES = [(), (3,), (2, 3), (4, 2, 3), (2, 1, 3, 2)]
PROPERTIES = ["T", "mT", "H", "mH"]


def quietly(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


def accepts(lib, name, shape) -> bool:
    try:
        quietly(lambda: getattr(lib.ones(shape), name))
    except RuntimeError:
        return False
    return True


@pytest.mark.parametrize("name", PROPERTIES)
@pytest.mark.parametrize("shape", SHAPES)
def test_property_as_torch(name, shape, rng):
    if not accepts(torch, name, shape):
        assert_same_error(lambda lib: getattr(lib.ones(shape), name))
        return
    array = rng.standard_normal(shape)
    quietly(lambda: compare(lambda lib, x: getattr(x * 1, name), array))


@pytest.mark.parametrize("name", PROPERTIES)
@pytest.mark.parametrize("shape", SHAPES)
def test_node_stride_and_identity_as_torch(name, shape):
    if not accepts(torch, name, shape):
        return
    found = []
    for lib in (hookgrad, torch):
        leaf = lib.ones(shape, requires_grad=True)
        result = quietly(lambda: getattr(leaf, name))
        found.append((graph_names(result.grad_fn, 2), result is leaf, tuple(result.shape),
                      result.stride(), result._base is leaf))
    assert found[0] == found[1]
