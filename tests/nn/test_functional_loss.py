"""Losses against torch: every reduction, weights, ignore_index, label smoothing, probability
targets, target gradients, double backward, graphs, saved tensors and errors."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, compare, raised, saved_log


def F(lib):
    return lib.nn.functional


REDUCTIONS = ["none", "mean", "sum"]


def second_derivatives(fn, *arrays, seed=0):
    results = []
    for lib in (hookgrad, torch):
        rng = np.random.default_rng(seed)
        inputs = [lib.tensor(np.array(a, copy=True), requires_grad=True) for a in arrays]
        out = fn(lib, *inputs)
        weight = lib.tensor(rng.standard_normal(tuple(out.shape)))
        grads = lib.autograd.grad((out * weight).sum(), inputs, create_graph=True)
        total = sum((g * g).sum() for g in grads)
        results.append(lib.autograd.grad(total, inputs, allow_unused=True))
    for h, t in zip(*results):
        if t is None:
            assert h is None or not np.any(h.numpy())
        else:
            assert_close(h, t, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name,kwargs", [("mse_loss", {}), ("l1_loss", {}),
                                         ("smooth_l1_loss", {}), ("smooth_l1_loss", {"beta": 0.3}),
                                         ("smooth_l1_loss", {"beta": 0.0}), ("huber_loss", {}),
                                         ("huber_loss", {"delta": 0.4})])
def test_regression_losses_match_torch(rng, name, kwargs, reduction):
    x, y = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    compare(lambda lib, a, b: getattr(F(lib), name)(a, b, reduction=reduction, **kwargs), x, y)


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "huber_loss"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_weighted_regression_losses(rng, name, reduction):
    x, y, w = rng.standard_normal((4, 5)), rng.standard_normal((4, 5)), rng.uniform(0, 2, (4, 5))
    compare(lambda lib, a, b, c: getattr(F(lib), name)(a, b, reduction=reduction, weight=c),
            x, y, w)


def test_regression_losses_float32_and_broadcast_warning(rng):
    x = rng.standard_normal((4, 5)).astype(np.float32)
    y = rng.standard_normal((4, 5)).astype(np.float32)
    for name in ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"):
        compare(lambda lib, a, b: getattr(F(lib), name)(a, b), x, y)
    with pytest.warns(UserWarning, match="different to the input size"):
        compare(lambda lib, a, b: F(lib).mse_loss(a, b), rng.standard_normal((4, 5)),
                rng.standard_normal(5))


@pytest.mark.parametrize("name", ["mse_loss", "smooth_l1_loss", "huber_loss"])
def test_regression_graph_saved_and_double_backward(rng, name):
    x, y = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))

    def run(lib):
        a, b = lib.tensor(x, requires_grad=True), lib.tensor(y, requires_grad=True)
        fn = getattr(F(lib), name)
        return fn(a, b).grad_fn.name(), saved_log(lib, fn, a, b)
    assert run(hookgrad) == run(torch)
    second_derivatives(lambda lib, a, b: getattr(F(lib), name)(a, b), x, y)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy(rng, reduction, weighted):
    arrays = [rng.uniform(0.05, 0.95, (4, 5)), rng.uniform(0, 1, (4, 5))]
    if weighted:
        arrays.append(rng.uniform(0, 2, 5))
    compare(lambda lib, p, t, *w: F(lib).binary_cross_entropy(
        p, t, *w, reduction=reduction), *arrays, requires_grad=[True, True, False][:len(arrays)])


def test_binary_cross_entropy_clamps_logs_and_target_grad(rng):
    p = np.array([[0.0, 1.0, 0.5, 1e-50]])
    t = np.array([[0.0, 1.0, 0.3, 1.0]])
    compare(lambda lib, a, b: F(lib).binary_cross_entropy(a, b, reduction="sum"), p, t)
    second_derivatives(lambda lib, a, b: F(lib).binary_cross_entropy(a, b),
                       rng.uniform(0.1, 0.9, (3, 4)), rng.uniform(0, 1, (3, 4)))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weight,pos_weight", [(False, False), (True, False), (False, True),
                                               (True, True)])
def test_binary_cross_entropy_with_logits(rng, reduction, weight, pos_weight):
    x, y = rng.standard_normal((4, 5)) * 5, rng.uniform(0, 1, (4, 5))
    w = rng.uniform(0, 2, (4, 5)) if weight else None
    pw = rng.uniform(0.5, 3, 5) if pos_weight else None

    def fn(lib, a, b):
        return F(lib).binary_cross_entropy_with_logits(
            a, b, None if w is None else lib.tensor(w), reduction=reduction,
            pos_weight=None if pw is None else lib.tensor(pw))
    compare(fn, x, y)
    second_derivatives(fn, x, y)


def test_bce_graphs_and_saved_tensors(rng):
    p, t, x = rng.uniform(0.1, 0.9, (3, 4)), rng.uniform(0, 1, (3, 4)), rng.standard_normal((3, 4))
    w, pw = rng.uniform(0, 1, 4), rng.uniform(1, 2, 4)

    def run(lib):
        a, b, c = (lib.tensor(v, requires_grad=True) for v in (p, t, x))
        weight, pos = lib.tensor(w), lib.tensor(pw)

        def bce(a, b):
            return F(lib).binary_cross_entropy(a, b, weight)

        def logits(c, b):
            return F(lib).binary_cross_entropy_with_logits(c, b, weight, pos_weight=pos)
        return (bce(a, b).grad_fn.name(), saved_log(lib, bce, a, b),
                logits(c, b).grad_fn.name(), [s[:2] for s in saved_log(lib, logits, c, b)])
    assert run(hookgrad) == run(torch)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(6, 5), (5,), (3, 5, 4), (2, 5, 3, 2), (2, 5, 2, 2, 2)])
def test_nll_loss_shapes(rng, reduction, shape):
    x = rng.standard_normal(shape)
    target_shape = (shape[0],) + shape[2:] if len(shape) > 1 else ()
    target = rng.integers(0, 5, target_shape)
    compare(lambda lib, a, t: F(lib).nll_loss(a, t, reduction=reduction), x, target)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss_weight_and_ignore_index(rng, reduction):
    x, w = rng.standard_normal((6, 5)), rng.uniform(0.1, 2, 5)
    target = np.array([0, 4, -100, 2, 2, 1])
    compare(lambda lib, a, t, w: F(lib).nll_loss(a, t, w, reduction=reduction), x, target, w,
            requires_grad=[True, False, False])
    target = np.array([0, 4, 3, 2, 2, 1])
    compare(lambda lib, a, t: F(lib).nll_loss(a, t, ignore_index=2, reduction=reduction),
            x, target)


def test_nll_loss_all_ignored_mean_is_nan():
    compare(lambda lib, a, t: F(lib).nll_loss(a, t), np.zeros((2, 3)), np.array([-100, -100]))


@pytest.mark.parametrize("shape", [(6, 5), (2, 5, 3, 2)])
def test_nll_loss_graph_saved_and_double_backward(rng, shape):
    x = rng.standard_normal(shape)
    target = rng.integers(0, 5, (shape[0],) + shape[2:])

    def run(lib):
        a, t = lib.tensor(x, requires_grad=True), lib.tensor(target)
        w = lib.ones(5, dtype=lib.float64)

        def fn(a):
            return F(lib).nll_loss(a, t, w)
        return fn(a).grad_fn.name(), [s[:2] for s in saved_log(lib, fn, a)]
    assert run(hookgrad) == run(torch)
    first_order = []
    for lib in (hookgrad, torch):
        a = lib.tensor(x, requires_grad=True)
        out = F(lib).nll_loss(a, lib.tensor(target), reduction="none")
        grad_out = lib.tensor(np.ones(tuple(out.shape)), requires_grad=True)
        (grad,) = lib.autograd.grad(out, a, grad_out, create_graph=True)
        (second,) = lib.autograd.grad((grad * lib.tensor(x)).sum(), grad_out)
        first_order.append((grad, second))
    assert_close(first_order[0][0], first_order[1][0])
    assert_close(first_order[0][1], first_order[1][1])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_class_indices(rng, reduction, smoothing, weighted):
    x = rng.standard_normal((6, 5)) * 3
    target = np.array([0, 4, -100, 2, 2, 1])
    w = rng.uniform(0.1, 2, 5) if weighted else None
    compare(lambda lib, a, t: F(lib).cross_entropy(
        a, t, None if w is None else lib.tensor(w), reduction=reduction,
        label_smoothing=smoothing), x, target)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.25])
def test_cross_entropy_probabilities(rng, reduction, smoothing):
    x = rng.standard_normal((4, 5, 3))
    p = rng.uniform(0, 1, (4, 5, 3))
    p /= p.sum(1, keepdims=True)
    w = rng.uniform(0.5, 1.5, 5)
    compare(lambda lib, a, t: F(lib).cross_entropy(a, t, reduction=reduction,
                                                   label_smoothing=smoothing), x, p)
    compare(lambda lib, a, t, w: F(lib).cross_entropy(a, t, w, reduction=reduction), x, p, w,
            requires_grad=[True, True, False])


def test_cross_entropy_spatial_float32_and_chain(rng):
    x = rng.standard_normal((2, 5, 3, 4)).astype(np.float32)
    target = rng.integers(0, 5, (2, 3, 4))
    compare(lambda lib, a, t: F(lib).cross_entropy(a, t), x, target)
    compare(lambda lib, a, t: F(lib).cross_entropy(a, t), x[0, :, 0, 0], np.int64(3))
    chains = []
    for lib in (hookgrad, torch):
        a = lib.tensor(x[:, :, 0, 0], requires_grad=True)
        out = F(lib).cross_entropy(a, lib.tensor(target[:, 0, 0]))
        chains.append((out.grad_fn.name(), out.grad_fn.next_functions[0][0].name()))
    assert chains[0] == chains[1]
    second_derivatives(lambda lib, a: F(lib).cross_entropy(a, lib.tensor(target[:, 0, 0])),
                       x[:, :, 0, 0].astype(np.float64))


def test_legacy_size_average_and_reduce(rng):
    x, y = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare(lambda lib, a, b: F(lib).mse_loss(a, b, size_average=False), x, y)
        compare(lambda lib, a, b: F(lib).mse_loss(a, b, reduce=False), x, y)


ERRORS = {
    "target bounds": lambda lib: F(lib).nll_loss(lib.zeros(4, 5), lib.tensor([1, 2, 3, 5])),
    "batch size": lambda lib: F(lib).nll_loss(lib.zeros(4, 5), lib.tensor([1, 2, 3])),
    "ce bounds": lambda lib: F(lib).cross_entropy(lib.zeros(4, 5), lib.tensor([1, 2, 3, 7])),
    "target dtype": lambda lib: F(lib).nll_loss(lib.zeros(3, 2), lib.tensor([0, 1, 1],
                                                                             dtype=lib.int32)),
    "weight size": lambda lib: F(lib).nll_loss(lib.zeros(3, 2), lib.tensor([0, 1, 1]),
                                               lib.ones(3)),
    "reduction": lambda lib: F(lib).cross_entropy(lib.zeros(3, 2), lib.tensor([0, 1, 1]),
                                                  reduction="foo"),
    "bce range": lambda lib: F(lib).binary_cross_entropy(lib.ones(2, 2) * 2, lib.ones(2, 2)),
    "bce size": lambda lib: F(lib).binary_cross_entropy(lib.ones(2, 2) / 2, lib.ones(2, 3)),
    "logits size": lambda lib: F(lib).binary_cross_entropy_with_logits(lib.ones(2, 2),
                                                                       lib.ones(2, 3)),
    "beta": lambda lib: F(lib).smooth_l1_loss(lib.ones(2), lib.ones(2), beta=-1.0),
    "mse weight": lambda lib: F(lib).mse_loss(lib.ones(2), lib.ones(2), weight=lib.ones(3)),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_loss_errors_match_torch(case):
    assert raised(ERRORS[case], hookgrad) == raised(ERRORS[case], torch)
