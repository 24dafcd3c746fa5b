"""torch.histogram and torch.combinations against torch on the same inputs."""
import numpy as np
import pytest
import torch

import hookgrad
from tests.conftest import compare, grad_fn_chain, raised

RNG = np.random.default_rng(0)
DATA = np.array([1.0, 2.0, 1.0, 4.0, 2.5, 7.0, -3.0, 7.0])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kwargs", [dict(), dict(range=(0.0, 3.0)), dict(density=True),
                                    dict(range=(1.0, 1.0)), dict(weight=True),
                                    dict(weight=True, density=True, range=(-5.0, 10.0))])
@pytest.mark.parametrize("bins", [1, 3, 4, 10])
def test_histogram_equal_bins(dtype, kwargs, bins):
    kwargs = dict(kwargs)
    def run(lib, x, w):
        extra = {**kwargs, "weight": w} if kwargs.get("weight") else kwargs
        return lib.histogram(x, bins, **extra)
    compare(run, DATA.astype(dtype), RNG.random(DATA.shape).astype(dtype), grad=False)
    compare(lambda lib, x: x.histogram(bins), RNG.standard_normal((3, 5)).astype(dtype),
            grad=False)


@pytest.mark.parametrize("edges", [[0.0, 2.0, 5.0, 8.0], [0.0, 1.0, 1.0, 3.0], [2.0, 1.0],
                                   [-10.0, 10.0]])
def test_histogram_given_edges(edges):
    compare(lambda lib, x, e: lib.histogram(x, e), DATA, np.array(edges), grad=False)
    compare(lambda lib, x, e: lib.histogram(x, e, density=True), DATA, np.array(edges),
            grad=False)


def test_histogram_edge_cases_and_result_type():
    compare(lambda lib, x: lib.histogram(x, 2), np.array([3.0, 3.0]), grad=False)
    compare(lambda lib, x: lib.histogram(x, 2), np.zeros(0), grad=False)
    result = hookgrad.histogram(hookgrad.tensor(DATA), 3)
    assert isinstance(result, hookgrad.return_types.histogram)
    assert result.hist is result[0] and result.bin_edges is result[1]
    assert repr(result).startswith("torch.return_types.histogram(\nhist=")


def test_histogram_refuses_backward_as_torch():
    messages = []
    for lib in (hookgrad, torch):
        x = lib.tensor(DATA, requires_grad=True)
        hist, edges = lib.histogram(x, 3)
        assert hist.grad_fn.name() == "torch::autograd::NotImplemented"
        assert edges.requires_grad
        with pytest.raises(RuntimeError) as info:
            hist.sum().backward()
        messages.append(str(info.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("make", [
    lambda lib: lib.histogram(lib.tensor([1, 2]), 2),
    lambda lib: lib.histogram(lib.randn(4), 0),
    lambda lib: lib.histogram(lib.randn(4), 2, range=(3.0, 1.0)),
    lambda lib: lib.histogram(lib.tensor([1.0, float("nan")]), 2),
    lambda lib: lib.histogram(lib.tensor([1.0, float("inf")]), 2),
    lambda lib: lib.histogram(lib.randn(6), 3, weight=lib.ones(3)),
    lambda lib: lib.histogram(lib.randn(6), 3, weight=lib.ones(6, dtype=lib.float64)),
    lambda lib: lib.histogram(lib.randn(6), lib.tensor([0.0, 2.0], dtype=lib.float64)),
])
def test_histogram_errors_as_torch(make):
    assert raised(make, hookgrad) == raised(make, torch)


@pytest.mark.parametrize("r", [0, 1, 2, 3, 5])
@pytest.mark.parametrize("with_replacement", [False, True])
def test_combinations(r, with_replacement):
    hg, th = compare(lambda lib, x: lib.combinations(x, r, with_replacement),
                     RNG.standard_normal(4))
    if r:
        assert grad_fn_chain(hg[0]) == grad_fn_chain(th[0])
    compare(lambda lib, x: lib.combinations(x, r, with_replacement), np.arange(5), grad=False)
    compare(lambda lib, x: lib.combinations(x, r, with_replacement), np.zeros(0), grad=False)


@pytest.mark.parametrize("make", [lambda lib: lib.combinations(lib.randn(2, 3)),
                                  lambda lib: lib.combinations(lib.randn(3), -1),
                                  lambda lib: lib.combinations(lib.tensor(3.0))])
def test_combinations_errors_as_torch(make):
    assert raised(make, hookgrad) == raised(make, torch)
