"""cdist, pdist, glu and alpha dropout against torch: values, gradients, graphs, errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, assert_same_error, compare, double_backward, graph_nodes

INF = float("inf")
PS = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, INF]


@pytest.mark.parametrize("p", PS)
@pytest.mark.parametrize("shape1,shape2", [((4, 3), (5, 3)), ((2, 4, 3), (2, 6, 3)),
                                           ((2, 1, 4, 3), (3, 5, 3)), ((30, 2), (7, 2)),
                                           ((3, 0), (2, 0))])
def test_cdist(rng, p, shape1, shape2):
    a, b = rng.standard_normal(shape1), rng.standard_normal(shape2)
    compare(lambda lib, x, y: lib.cdist(x, y, p), a, b)
    compare(lambda lib, x, y: lib.cdist(x, y, p), a.astype(np.float32), b.astype(np.float32))


@pytest.mark.parametrize("mode", ["use_mm_for_euclid_dist_if_necessary",
                                  "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"])
@pytest.mark.parametrize("rows", [3, 26])
def test_cdist_compute_modes_and_graph(rng, mode, rows):
    a, b = rng.standard_normal((2, rows, 4)), rng.standard_normal((1, 5, 4))
    compare(lambda lib, x, y: lib.cdist(x, y, compute_mode=mode), a, b)
    graphs = [graph_nodes(lib.cdist(lib.tensor(a, requires_grad=True), lib.tensor(b),
                                    compute_mode=mode)) for lib in (hookgrad, torch)]
    assert graphs[0] == graphs[1]


def test_cdist_euclidean_double_backward(rng):
    a, b = rng.standard_normal((27, 3)), rng.standard_normal((4, 3))
    double_backward(lambda lib, x, y: lib.cdist(x, y), a, b)


def test_cdist_zero_distances_give_zero_gradients(rng):
    a = rng.standard_normal((4, 3))
    for p in PS:
        compare(lambda lib, x, y: lib.cdist(x, y, p), a, a.copy())
        compare(lambda lib, x, y: lib.cdist(x, y, p), np.round(a), np.round(a[::-1]))
    # the matrix-product form cancels |a|^2 - 2ab + |b|^2 with BLAS's rounding, so only rows
    # that are exactly zero give an exactly zero distance in both libraries
    z1, z2 = a.copy(), rng.standard_normal((3, 3))
    z1[1], z2[2] = 0, 0
    for mode in ("use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"):
        compare(lambda lib, x, y: lib.cdist(x, y, compute_mode=mode), z1, z2)


def test_cdist_direct_form_refuses_double_backward(rng):
    a, b = rng.standard_normal((3, 2)), rng.standard_normal((4, 2))

    def second(lib):
        x = lib.tensor(a, requires_grad=True)
        (g,) = lib.autograd.grad(lib.cdist(x, lib.tensor(b)).sum(), x, create_graph=True)
        g.sum().backward()
    assert_same_error(second)


@pytest.mark.parametrize("call", [
    lambda lib: lib.cdist(lib.ones(3), lib.ones(3, 3)),
    lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 4)),
    lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 3), p=-1),
    lambda lib: lib.cdist(lib.ones(2, 3, dtype=lib.long), lib.ones(2, 3, dtype=lib.long)),
    lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 3), compute_mode="fast"),
    lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 3), compute_mode=None),
    lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 3, dtype=lib.float64)),
    lambda lib: lib.cdist(lib.ones(2, 2, 3), lib.ones(3, 2, 3)),
    lambda lib: lib.pdist(lib.ones(2, 2, 3)),
    lambda lib: lib.pdist(lib.ones(2, 3), p=-1.0),
])
def test_cdist_pdist_errors(call):
    assert_same_error(call)


@pytest.mark.parametrize("p", PS)
@pytest.mark.parametrize("rows", [1, 2, 5])
def test_pdist(rng, p, rows):
    a = rng.standard_normal((rows, 3))
    compare(lambda lib, x: lib.pdist(x, p), a)
    compare(lambda lib, x: lib.nn.functional.pdist(x, p), a.astype(np.float32))


def test_pdist_repeated_rows_and_graph(rng):
    a = rng.standard_normal((4, 3))
    a[2] = a[0]
    for p in PS:
        compare(lambda lib, x: lib.pdist(x, p), a)
    graphs = [graph_nodes(lib.pdist(lib.tensor(a, requires_grad=True)))
              for lib in (hookgrad, torch)]
    assert graphs[0] == graphs[1]


@pytest.mark.parametrize("shape,dim", [((4, 6), -1), ((4, 6), 0), ((2, 4, 3), 1),
                                       ((2, 4, 3), -2), ((2,), 0)])
def test_glu(rng, shape, dim):
    x = rng.standard_normal(shape)
    compare(lambda lib, t: lib.nn.functional.glu(t, dim), x)
    compare(lambda lib, t: lib.nn.functional.glu(t, dim), x.astype(np.float32))
    compare(lambda lib, t: lib.nn.GLU(dim)(t), x.T.copy().T)
    double_backward(lambda lib, t: lib.nn.functional.glu(t, dim), x)


def test_glu_graph_half_and_layout(rng):
    x = rng.standard_normal((3, 4))
    graphs = [graph_nodes(lib.nn.functional.glu(lib.tensor(x, requires_grad=True)))
              for lib in (hookgrad, torch)]
    assert graphs[0] == graphs[1]
    half = [lib.nn.functional.glu(lib.tensor(x, dtype=lib.float16), 1) for lib in (hookgrad, torch)]
    assert_close(half[0], half[1])
    t = [lib.nn.functional.glu(lib.tensor(x).t(), 0) for lib in (hookgrad, torch)]
    assert t[0].stride() == t[1].stride()


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.glu(lib.ones(3, 5)),
    lambda lib: lib.nn.functional.glu(lib.tensor(1.0)),
    lambda lib: lib.nn.functional.glu(lib.ones(3, 4), 2),
])
def test_glu_errors(call):
    assert_same_error(call)


def _both(fn, seed: int = 0):
    results = []
    for lib in (hookgrad, torch):
        lib.manual_seed(seed)
        results.append(fn(lib))
    return results


@pytest.mark.parametrize("p", [0.0, 0.2, 0.5, 1.0])
@pytest.mark.parametrize("feature", [False, True])
def test_alpha_dropout_matches_torch_for_the_same_seed(rng, p, feature):
    x = rng.standard_normal((4, 3, 5))
    name = "feature_alpha_dropout" if feature else "alpha_dropout"

    def run(lib):
        t = lib.tensor(x, requires_grad=True)
        out = getattr(lib.nn.functional, name)(t, p, True)
        out.backward(lib.ones_like(out))
        return out, t.grad
    (out, grad), (expected, expected_grad) = _both(run)
    assert_close(out, expected)
    assert_close(grad, expected_grad)
    assert (out.grad_fn is None) == (expected.grad_fn is None)
    if expected.grad_fn is not None:
        assert out.grad_fn.name() == expected.grad_fn.name()


@pytest.mark.parametrize("module", ["AlphaDropout", "FeatureAlphaDropout", "Dropout3d"])
def test_dropout_modules_train_and_eval(rng, module):
    x = rng.standard_normal((2, 3, 4, 2, 2)).astype(np.float32)

    def run(lib):
        layer = getattr(lib.nn, module)(0.3)
        trained = layer(lib.tensor(x))
        layer.eval()
        return trained, layer(lib.tensor(x)), repr(layer)
    ours, theirs = _both(run, seed=3)
    assert_close(ours[0], theirs[0])
    assert_close(ours[1], theirs[1])
    assert ours[2] == theirs[2]


def test_alpha_dropout_in_place_and_top_level(rng):
    x = rng.standard_normal((5, 4)).astype(np.float32)

    def run(lib):
        t = lib.tensor(x)
        lib.nn.functional.alpha_dropout(t, 0.4, True, inplace=True)
        return t, lib.alpha_dropout(lib.tensor(x), 0.4, True)
    ours, theirs = _both(run, seed=7)
    assert_close(ours[0], theirs[0])
    assert_close(ours[1], theirs[1])


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.alpha_dropout(lib.ones(3), 1.5, True),
    lambda lib: lib.nn.functional.feature_alpha_dropout(lib.ones(3), 0.5, True),
])
def test_alpha_dropout_errors(call):
    assert_same_error(call)
