"""Batch, layer and group norm against torch: values, gradients (input, weight, bias), double
backward, running statistics (momentum, unbiased variance), train vs eval, graphs, errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, assert_same_error, compare, error_of, raised, saved_log


def F(lib):
    return lib.nn.functional


def second_derivatives(fn, *arrays, seed=0):
    """Gradient of <first grads, random> with respect to every input, in both libraries."""
    results = []
    for lib in (hookgrad, torch):
        rng = np.random.default_rng(seed)
        inputs = [lib.tensor(np.array(a, copy=True), requires_grad=True) for a in arrays]
        out = fn(lib, *inputs)
        weight = lib.tensor(rng.standard_normal(tuple(out.shape)))
        grads = lib.autograd.grad((out * weight).sum(), inputs, create_graph=True)
        total = sum((g * lib.tensor(rng.standard_normal(tuple(g.shape)))).sum() for g in grads)
        results.append(lib.autograd.grad(total, inputs, allow_unused=True))
    for h, t in zip(*results):
        if t is None:  # the bias gradient does not depend on anything
            assert h is None or not np.any(h.numpy())
        else:
            assert_close(h, t, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("shape", [(4, 3), (4, 3, 5), (2, 3, 4, 5)])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_training_matches_torch(rng, shape, affine):
    arrays = [rng.standard_normal(shape) * 2 + 1]
    if affine:
        arrays += [rng.standard_normal(3), rng.standard_normal(3)]
    compare(lambda lib, x, *wb: F(lib).batch_norm(x, None, None, *wb, training=True), *arrays)


def test_batch_norm_updates_running_stats_like_torch(rng):
    x = rng.standard_normal((6, 3, 4)) * 3 + 2
    stats = []
    for lib in (hookgrad, torch):
        mean, var = lib.zeros(3, dtype=lib.float64), lib.ones(3, dtype=lib.float64)
        for momentum in (0.1, 0.5):
            F(lib).batch_norm(lib.tensor(x), mean, var, training=True, momentum=momentum)
        stats.append((mean, var, mean._version, var._version))
    assert_close(stats[0][0], stats[1][0])
    assert_close(stats[0][1], stats[1][1])
    assert stats[0][2:] == stats[1][2:]


def test_batch_norm_eval_uses_running_stats(rng):
    arrays = [rng.standard_normal((4, 3, 5)), rng.standard_normal(3), rng.standard_normal(3),
              rng.uniform(0.5, 2, 3), rng.standard_normal(3)]
    compare(lambda lib, x, w, b, var, mean: F(lib).batch_norm(x, mean, var, w, b), *arrays,
            requires_grad=[True, True, True, False, False])


def test_batch_norm_float32(rng):
    arrays = [rng.standard_normal((8, 3, 4, 4)).astype(np.float32),
              rng.standard_normal(3).astype(np.float32), rng.standard_normal(3).astype(np.float32)]
    compare(lambda lib, x, w, b: F(lib).batch_norm(x, None, None, w, b, True), *arrays)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_graph_and_saved_tensors(rng, training):
    def run(lib):
        x = lib.tensor(rng.standard_normal((4, 3, 5)), requires_grad=True)
        w = lib.tensor(rng.standard_normal(3), requires_grad=True)
        b = lib.tensor(rng.standard_normal(3), requires_grad=True)
        mean, var = lib.zeros(3, dtype=lib.float64), lib.ones(3, dtype=lib.float64)
        log = saved_log(lib, lambda x, w, b: F(lib).batch_norm(x, mean, var, w, b, training),
                        x, w, b)
        out = F(lib).batch_norm(x, mean, var, w, b, training)
        return out.grad_fn.name(), log, len(out.grad_fn.next_functions)
    assert run(hookgrad) == run(torch)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_double_backward(rng, training):
    x, w, b = rng.standard_normal((4, 3, 5)), rng.standard_normal(3), rng.standard_normal(3)
    mean, var = rng.standard_normal(3), rng.uniform(0.5, 2, 3)
    second_derivatives(lambda lib, x, w, b: F(lib).batch_norm(
        x, lib.tensor(mean), lib.tensor(var), w, b, training), x, w, b)


@pytest.mark.parametrize("shape,normalized", [((4, 5), (5,)), ((2, 3, 4), (3, 4)),
                                              ((2, 3, 4), (4,)), ((6,), (6,))])
def test_layer_norm_matches_torch(rng, shape, normalized):
    arrays = [rng.standard_normal(shape) * 2 + 1, rng.standard_normal(normalized),
              rng.standard_normal(normalized)]
    compare(lambda lib, x, w, b: F(lib).layer_norm(x, normalized, w, b, eps=1e-3), *arrays)
    compare(lambda lib, x: F(lib).layer_norm(x, normalized), arrays[0])


def test_layer_norm_float32_graph_and_double_backward(rng):
    arrays = [rng.standard_normal((3, 4, 5)).astype(np.float32),
              rng.standard_normal(5).astype(np.float32), rng.standard_normal(5).astype(np.float32)]
    compare(lambda lib, x, w, b: F(lib).layer_norm(x, (5,), w, b), *arrays)

    def run(lib):
        x, w, b = (lib.tensor(a.astype(np.float64), requires_grad=True) for a in arrays)
        out = F(lib).layer_norm(x, (5,), w, b)
        return out.grad_fn.name(), saved_log(lib, lambda x, w, b: F(lib).layer_norm(
            x, (5,), w, b), x, w, b)
    assert run(hookgrad) == run(torch)
    second_derivatives(lambda lib, x, w, b: F(lib).layer_norm(x, (5,), w, b),
                       *(a.astype(np.float64) for a in arrays))


@pytest.mark.parametrize("shape,groups", [((2, 6, 4), 3), ((2, 6, 3, 3), 2), ((3, 4), 4),
                                          ((2, 6, 5), 1)])
def test_group_norm_matches_torch(rng, shape, groups):
    arrays = [rng.standard_normal(shape) * 2 + 1, rng.standard_normal(shape[1]),
              rng.standard_normal(shape[1])]
    compare(lambda lib, x, w, b: F(lib).group_norm(x, groups, w, b), *arrays)
    compare(lambda lib, x: F(lib).group_norm(x, groups), arrays[0])


def test_group_norm_graph_and_double_backward(rng):
    arrays = [rng.standard_normal((2, 6, 4)), rng.standard_normal(6), rng.standard_normal(6)]

    def run(lib):
        x, w, b = (lib.tensor(a, requires_grad=True) for a in arrays)
        out = F(lib).group_norm(x, 3, w, b)
        log = saved_log(lib, lambda x, w, b: F(lib).group_norm(x, 3, w, b), x, w, b)
        return out.grad_fn.name(), log
    assert run(hookgrad) == run(torch)
    second_derivatives(lambda lib, x, w, b: F(lib).group_norm(x, 3, w, b), *arrays)


ERRORS = {
    "running size": lambda lib: F(lib).batch_norm(lib.zeros(4, 3, 2), lib.zeros(4), lib.ones(4)),
    "one value": lambda lib: F(lib).batch_norm(lib.zeros(1, 3, 1, 1), None, None, training=True),
    "eval without stats": lambda lib: F(lib).batch_norm(lib.zeros(3, 2), None, None),
    "layer shape": lambda lib: F(lib).layer_norm(lib.zeros(4, 3, 8), (7,)),
    "layer weight": lambda lib: F(lib).layer_norm(lib.zeros(3, 2), (2,), lib.ones(3)),
    "groups": lambda lib: F(lib).group_norm(lib.zeros(4, 3, 8), 2),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_norm_errors_match_torch(case):
    assert raised(ERRORS[case], hookgrad) == raised(ERRORS[case], torch)


_DTYPES = ("float32", "float64", "bfloat16", "float16")


@pytest.mark.parametrize("input_dtype", ("float32", "float64", "bfloat16"))
@pytest.mark.parametrize("weight_dtype", _DTYPES + (None,))
@pytest.mark.parametrize("bias_dtype", _DTYPES + (None,))
@pytest.mark.parametrize("op", ("layer_norm", "group_norm"))
def test_affine_dtypes_follow_torch(input_dtype, weight_dtype, bias_dtype, op):
    """Mixed weight/bias dtypes: computed exactly where torch computes, torch's error elsewhere."""
    def run(lib):
        x = lib.ones(2, 4, dtype=getattr(lib, input_dtype))
        w = None if weight_dtype is None else lib.ones(4, dtype=getattr(lib, weight_dtype))
        b = None if bias_dtype is None else lib.zeros(4, dtype=getattr(lib, bias_dtype))
        if op == "layer_norm":
            return lib.nn.functional.layer_norm(x, (4,), w, b)
        return lib.nn.functional.group_norm(x, 2, w, b)
    if error_of(lambda: run(torch)) is None:
        assert str(run(hookgrad).dtype) == str(run(torch).dtype)
    else:
        assert_same_error(run)
