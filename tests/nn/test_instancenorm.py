"""instance_norm and InstanceNorm1d/2d/3d against torch: affine, running statistics (train and
eval), unbatched input, gradients, double backward, reprs, state_dict and errors."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, assert_same_error, compare, double_backward


def F(lib):
    return lib.nn.functional


@pytest.mark.parametrize("shape", [(2, 3, 5), (2, 3, 4, 3), (1, 2, 2, 3, 2)])
def test_instance_norm_functional(rng, shape):
    x = rng.standard_normal(shape) * 2 + 1
    w, b = rng.standard_normal(shape[1]), rng.standard_normal(shape[1])
    compare(lambda lib, t, w, b: F(lib).instance_norm(t, weight=w, bias=b), x, w, b)
    compare(lambda lib, t: F(lib).instance_norm(t, eps=1e-3), x.astype(np.float32))
    double_backward(lambda lib, t, w, b: F(lib).instance_norm(t, weight=w, bias=b), x, w, b)


def test_instance_norm_running_stats(rng):
    x = rng.standard_normal((3, 2, 6))
    stats = []
    for lib in (hookgrad, torch):
        mean, var = lib.zeros(2, dtype=lib.float64), lib.ones(2, dtype=lib.float64)
        out = F(lib).instance_norm(lib.tensor(x), mean, var, momentum=0.3)
        evaluated = F(lib).instance_norm(lib.tensor(x), mean, var, use_input_stats=False)
        stats.append((out, evaluated, mean, var))
    for ours, theirs in zip(*stats):
        assert_close(ours, theirs)


def test_instance_norm_eval_gradients(rng):
    x = rng.standard_normal((2, 3, 4))
    mean, var = rng.standard_normal(3), rng.random(3) + 0.5
    compare(lambda lib, t, w: F(lib).instance_norm(t, lib.tensor(mean), lib.tensor(var), w,
                                                   use_input_stats=False), x,
            rng.standard_normal(3))


def test_instance_norm_errors(rng):
    x = rng.standard_normal((2, 3, 1))
    assert_same_error(lambda lib: F(lib).instance_norm(lib.tensor(x)))
    assert_same_error(lambda lib: F(lib).instance_norm(lib.tensor(rng.standard_normal((2, 3, 4))),
                                                       use_input_stats=False))
    for kwargs in (dict(weight=2), dict(bias=2), dict(weight=3, bias=4),
                   dict(running_mean=2, running_var=3)):
        assert_same_error(lambda lib: F(lib).instance_norm(
            lib.ones(2, 3, 4), **{k: lib.ones(v) for k, v in kwargs.items()}))


CONFIGS = [dict(), dict(affine=True), dict(track_running_stats=True),
           dict(affine=True, track_running_stats=True, momentum=0.2, eps=1e-3),
           dict(affine=True, bias=False), dict(track_running_stats=True, momentum=None)]


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("config", CONFIGS)
def test_instance_norm_modules(rng, nd, config):
    name = f"InstanceNorm{nd}d"
    modules = [getattr(lib.nn, name)(3, **config) for lib in (hookgrad, torch)]
    assert repr(modules[0]) == repr(modules[1])
    ours, theirs = (m.state_dict() for m in modules)
    assert list(ours) == list(theirs)
    for key in theirs:
        assert_close(ours[key], theirs[key])
    assert [n for n, _ in modules[0].named_parameters()] == \
        [n for n, _ in modules[1].named_parameters()]
    x = rng.standard_normal((2, 3) + (4, 3, 2)[:nd]).astype(np.float32)
    for _ in range(2):  # running statistics move twice
        compare(lambda lib, t: modules[lib is torch](t), x)
    compare(lambda lib, t: modules[lib is torch](t), x[0])
    for m in modules:
        m.eval()
    compare(lambda lib, t: modules[lib is torch](t), x)
    for key, value in modules[1].state_dict().items():
        assert_close(modules[0].state_dict()[key], value)


def test_instance_norm_module_errors(rng):
    assert_same_error(lambda lib: lib.nn.InstanceNorm2d(3)(lib.ones(2, 3)))
    assert_same_error(lambda lib: lib.nn.InstanceNorm1d(3, affine=True)(lib.ones(2, 4, 5)))
    with pytest.warns(UserWarning, match="does not match num_features"):
        hookgrad.nn.InstanceNorm1d(3)(hookgrad.ones(2, 4, 5))


def test_instance_norm_drops_old_running_stats(rng):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        errors = []
        for lib in (hookgrad, torch):
            module = lib.nn.InstanceNorm1d(2)
            state = {"running_mean": lib.zeros(2), "running_var": lib.ones(2)}
            with pytest.raises(RuntimeError) as info:
                module.load_state_dict(state)
            errors.append(str(info.value).split("\n\t", 1)[1])
    assert errors[0] == errors[1]
