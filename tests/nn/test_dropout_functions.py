"""torch.native_dropout, dropout_, feature_dropout(_), alpha_dropout_, feature_alpha_dropout_
against torch: same masks for the same seed, gradients, in-place identity and errors."""
import numpy as np
import pytest
import torch

import hookgrad
from tests.conftest import assert_close, assert_same_error, compare


def _seeded(fn):
    def run(lib, *tensors):
        lib.manual_seed(7)
        return fn(lib, *tensors)
    return run


@pytest.mark.parametrize("p", [0.0, 0.3, 0.5, 1.0])
@pytest.mark.parametrize("train", [True, False, None])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_native_dropout_matches_torch(p, train, dtype):
    x = np.random.default_rng(0).standard_normal((4, 6)).astype(dtype)
    hg_out, th_out = compare(_seeded(lambda lib, x: lib.native_dropout(x, p, train)), x)
    assert hg_out[1].dtype == hookgrad.bool
    # the generator moved on exactly as torch's did
    assert_close(hookgrad.rand(3), torch.rand(3))
    hg_node, th_node = hg_out[0].grad_fn, th_out[0].grad_fn
    assert hg_node.name() == th_node.name()
    saved = sorted(a for a in dir(th_node) if a.startswith("_saved"))
    assert sorted(a for a in dir(hg_node) if a.startswith("_saved")) == saved
    for name in saved:
        if name != "_saved_result1":
            assert getattr(hg_node, name) == getattr(th_node, name), name


def test_native_dropout_double_backward_is_a_product():
    x = np.random.default_rng(1).standard_normal((3, 5))
    grads = {}
    for lib in (hookgrad, torch):
        lib.manual_seed(3)
        t = lib.tensor(x, requires_grad=True)
        out, _mask = lib.native_dropout(t, 0.4, True)
        weight = lib.tensor(np.ones((3, 5)), requires_grad=True)
        (first,) = lib.autograd.grad(out, t, weight, create_graph=True)
        (second,) = lib.autograd.grad(first.sum(), weight)
        grads[lib] = (first, second)
    for ours, theirs in zip(grads[hookgrad], grads[torch]):
        assert_close(ours, theirs)


def test_native_dropout_errors():
    assert_same_error(lambda lib: lib.native_dropout(lib.ones(3), 1.5, True))
    assert_same_error(lambda lib: lib.native_dropout(lib.ones(3, dtype=lib.int64), 0.5, True))


@pytest.mark.parametrize("name", ["dropout", "feature_dropout", "alpha_dropout",
                                  "feature_alpha_dropout"])
@pytest.mark.parametrize("p", [0.0, 0.4, 1.0])
@pytest.mark.parametrize("train", [True, False])
def test_out_of_place_match_torch(name, p, train):
    x = np.random.default_rng(2).standard_normal((3, 4, 2))
    compare(_seeded(lambda lib, x: getattr(lib, name)(x, p, train)), x)
    assert_close(hookgrad.rand(2), torch.rand(2))


@pytest.mark.parametrize("name", ["dropout_", "feature_dropout_", "alpha_dropout_",
                                  "feature_alpha_dropout_"])
@pytest.mark.parametrize("p", [0.0, 0.4, 1.0])
def test_in_place_match_torch(name, p):
    x = np.random.default_rng(3).standard_normal((3, 4, 2))

    def run(lib, x):
        lib.manual_seed(7)
        y = x * 1
        result = getattr(lib, name)(y, p, True)
        assert result is y
        return result

    compare(run, x)


@pytest.mark.parametrize("call", [
    lambda lib: lib.dropout(lib.ones(3), 1.5, True),
    lambda lib: lib.dropout_(lib.ones(3), -0.5, False),
    lambda lib: lib.feature_dropout(lib.ones(3), 0.5, True),
    lambda lib: lib.feature_dropout(lib.ones(2, 3), 2.0, False),
    lambda lib: lib.alpha_dropout_(lib.ones(3), 1.5, True),
    lambda lib: lib.feature_alpha_dropout_(lib.ones(2, 3), -1, True),
    lambda lib: lib.dropout_(lib.ones(3, requires_grad=True), 0.5, True),
])
def test_errors_match_torch(call):
    assert_same_error(call)
