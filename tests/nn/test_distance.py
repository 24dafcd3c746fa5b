"""normalize, cosine_similarity, pairwise_distance and their modules against torch."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_same_error, compare, double_backward, graph_nodes


def F(lib):
    return lib.nn.functional


@pytest.mark.parametrize("p,dim", [(2, 1), (1, 0), (3, -1), (float("inf"), 1), (0.5, 2),
                                   (2, (1, 2))])
def test_normalize(rng, p, dim):
    x = rng.standard_normal((2, 3, 4))
    compare(lambda lib, t: F(lib).normalize(t, p, dim), x)
    compare(lambda lib, t: F(lib).normalize(t, p, dim), x.astype(np.float32))
    if p != float("inf"):
        double_backward(lambda lib, t: F(lib).normalize(t, p, dim), x)


def test_normalize_eps_and_zero_rows(rng):
    x = rng.standard_normal((3, 4)) * 1e-3
    x[1] = 0
    compare(lambda lib, t: F(lib).normalize(t, eps=1e-2), x)
    out = hookgrad.zeros(3, 4, dtype=hookgrad.float64)
    F(hookgrad).normalize(hookgrad.tensor(x), eps=1e-2, out=out)
    np.testing.assert_allclose(out.numpy(), F(torch).normalize(torch.tensor(x), eps=1e-2).numpy())


SHAPES = [((3, 4), (3, 4), 1), ((2, 3, 4), (2, 3, 4), -1), ((2, 3, 4), (3, 4), 1),
          ((4,), (4,), 0), ((2, 1, 5), (1, 3, 5), 2), ((3, 4), (1, 4), 0)]


@pytest.mark.parametrize("shape1,shape2,dim", SHAPES)
def test_cosine_similarity(rng, shape1, shape2, dim):
    a, b = rng.standard_normal(shape1), rng.standard_normal(shape2)
    compare(lambda lib, x, y: F(lib).cosine_similarity(x, y, dim), a, b)
    compare(lambda lib, x, y: F(lib).cosine_similarity(x, y, dim), a.astype(np.float32),
            b.astype(np.float32))
    double_backward(lambda lib, x, y: F(lib).cosine_similarity(x, y, dim), a, b)


def test_cosine_similarity_small_norms_and_graph(rng):
    a = rng.standard_normal((3, 4)) * 1e-5
    b = rng.standard_normal((3, 4))
    compare(lambda lib, x, y: F(lib).cosine_similarity(x, y, eps=1e-3), a, b)
    double_backward(lambda lib, x, y: F(lib).cosine_similarity(x, y, eps=1e-3), a, b)
    graphs = [graph_nodes(F(lib).cosine_similarity(lib.tensor(a, requires_grad=True),
                                                   lib.tensor(b))) for lib in (hookgrad, torch)]
    assert graphs[0] == graphs[1]


def test_cosine_similarity_dtypes(rng):
    a = rng.standard_normal((3, 4))
    compare(lambda lib, x, y: F(lib).cosine_similarity(x, y), a, a.astype(np.float32))
    ints = rng.integers(-3, 4, (3, 4))
    compare(lambda lib, x, y: F(lib).cosine_similarity(x, y), a.astype(np.float32), ints,
            grad=False)
    assert_same_error(lambda lib: F(lib).cosine_similarity(lib.tensor(ints), lib.tensor(ints)))
    assert_same_error(lambda lib: F(lib).cosine_similarity(lib.tensor(a), lib.tensor(a[:2])))


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.5, float("inf"), 0.0])
@pytest.mark.parametrize("keepdim", [False, True])
def test_pairwise_distance(rng, p, keepdim):
    a, b = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    compare(lambda lib, x, y: F(lib).pairwise_distance(x, y, p, keepdim=keepdim), a, b)
    compare(lambda lib, x, y: F(lib).pairwise_distance(x, y, p, 1e-3, keepdim), a[0], b[1:])
    compare(lambda lib, x, y: F(lib).pairwise_distance(x, y, p), a.astype(np.float32),
            b.astype(np.float32))
    if p not in (float("inf"), 0.0):
        double_backward(lambda lib, x, y: F(lib).pairwise_distance(x, y, p, keepdim=keepdim),
                        a, b)


def test_pairwise_distance_shapes_and_errors(rng):
    compare(lambda lib, x, y: F(lib).pairwise_distance(x, y), rng.standard_normal(5),
            rng.standard_normal(5))
    compare(lambda lib, x, y: F(lib).pairwise_distance(x, y), rng.standard_normal((2, 3, 4)),
            rng.standard_normal((3, 4)))
    compare(lambda lib, x, y: F(lib).pairwise_distance(x, y), rng.integers(0, 5, (3, 4)),
            rng.integers(0, 5, (3, 4)))
    assert_same_error(lambda lib: F(lib).pairwise_distance(lib.ones(3, 4), lib.ones(2, 4)))


def test_distance_modules(rng):
    a, b = rng.standard_normal((3, 4, 2)), rng.standard_normal((3, 4, 2))
    for args, kwargs in (((), {}), ((0, 1e-3), {}), ((), dict(dim=2))):
        mods = [lib.nn.CosineSimilarity(*args, **kwargs) for lib in (hookgrad, torch)]
        assert repr(mods[0]) == repr(mods[1]) and mods[0].dim == mods[1].dim
        compare(lambda lib, x, y: mods[lib is torch](x, y), a, b)
    for args, kwargs in (((), {}), ((1.0, 1e-3, True), {}), ((), dict(p=3, keepdim=True))):
        mods = [lib.nn.PairwiseDistance(*args, **kwargs) for lib in (hookgrad, torch)]
        assert repr(mods[0]) == repr(mods[1])
        assert (mods[0].norm, mods[0].eps, mods[0].keepdim) == (mods[1].norm, mods[1].eps,
                                                                  mods[1].keepdim)
        compare(lambda lib, x, y: mods[lib is torch](x, y), a, b)
