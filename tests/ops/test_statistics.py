"""cov, corrcoef, trapezoid/trapz/cumulative_trapezoid, histc, quantile and nanquantile
against torch: values, gradients, every interpolation mode and torch's errors."""
import warnings

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_same_error, compare, compare_double_backward

R = np.random.default_rng(23)
X = R.standard_normal((3, 7))


# -- cov, corrcoef --------------------------------------------------------------------------------
def test_cov_plain_and_corrected():
    compare(lambda lib, x: lib.cov(x), X)
    compare(lambda lib, x: x.cov(correction=0), X.astype(np.float32))
    compare(lambda lib, x: lib.cov(x, correction=3), X)
    compare(lambda lib, x: lib.cov(x), X[0])
    compare(lambda lib, x: lib.cov(x), np.array([[1, 2, 4], [3, 1, 0]]))
    compare_double_backward(lambda lib, x: lib.cov(x), X)


def test_cov_weights():
    fweights, aweights = np.array([1, 2, 1, 1, 3, 0, 2]), R.random(7)
    compare(lambda lib, x: lib.cov(x, fweights=lib.tensor(fweights)), X)
    compare(lambda lib, x, a: lib.cov(x, aweights=a), X, aweights)
    compare(lambda lib, x, a: lib.cov(x, fweights=lib.tensor(fweights), aweights=a,
                                      correction=2), X, aweights)
    compare(lambda lib, x, a: lib.cov(x, aweights=a, correction=0), X, aweights)


def test_cov_too_few_observations_warns_and_gives_inf_or_nan():
    for lib in (torch, hookgrad):
        with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
            lib.cov(lib.tensor(X[:, :1]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare(lambda lib, x: lib.cov(x), X[:, :1], grad=False)


@pytest.mark.parametrize("case", ["3-D", "float fweights", "negative fweights",
                                  "negative aweights", "aweights size", "int aweights",
                                  "2-D fweights", "zero weights", "bool"])
def test_cov_errors(case):
    make = {
        "3-D": lambda lib: lib.cov(lib.tensor(X).reshape(1, 3, 7)),
        "float fweights": lambda lib: lib.cov(lib.tensor(X), fweights=lib.tensor(X[0])),
        "negative fweights": lambda lib: lib.cov(lib.tensor(X), fweights=-lib.ones(7).long()),
        "negative aweights": lambda lib: lib.cov(lib.tensor(X), aweights=-lib.ones(7)),
        "aweights size": lambda lib: lib.cov(lib.tensor(X), aweights=lib.ones(4)),
        "int aweights": lambda lib: lib.cov(lib.tensor(X), aweights=lib.ones(7).long()),
        "2-D fweights": lambda lib: lib.cov(lib.tensor(X), fweights=lib.ones(1, 7).long()),
        "zero weights": lambda lib: lib.cov(lib.tensor(X), fweights=lib.zeros(7).long()),
        "bool": lambda lib: lib.cov(lib.tensor(X > 0)),
    }[case]
    assert_same_error(make)


def test_corrcoef():
    compare(lambda lib, x: lib.corrcoef(x), X)
    compare(lambda lib, x: x.corrcoef(), X.astype(np.float32))
    compare(lambda lib, x: lib.corrcoef(x), X[0])
    compare(lambda lib, x: lib.corrcoef(x), np.array([[1, 2, 4], [3, 1, 0]]))
    compare_double_backward(lambda lib, x: lib.corrcoef(x), X)
    assert_same_error(lambda lib: lib.corrcoef(lib.tensor(X).reshape(1, 3, 7)))


# -- trapezoid ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["trapezoid", "trapz"])
def test_trapezoid(name):
    fn = lambda lib: getattr(lib, name)  # noqa: E731
    compare(lambda lib, y: fn(lib)(y), X)
    compare(lambda lib, y: fn(lib)(y, dx=0.5, dim=0), X)
    compare(lambda lib, y, x: fn(lib)(y, x), X, np.sort(R.random(7)))
    compare(lambda lib, y, x: fn(lib)(y, x, dim=0), X, R.random((3, 7)))
    compare(lambda lib, y, x: fn(lib)(y, x), X.astype(np.float32), R.random(7).astype(np.float32))
    compare(lambda lib, y: fn(lib)(y), np.zeros((3, 0)))
    compare(lambda lib, y, x: fn(lib)(y, x), X, R.random(7)[None])
    compare_double_backward(lambda lib, y, x: fn(lib)(y, x), X, R.random(7))


def test_cumulative_trapezoid_and_errors():
    compare(lambda lib, y: lib.cumulative_trapezoid(y), X)
    compare(lambda lib, y: lib.cumulative_trapezoid(y, dx=2.0, dim=0), X)
    compare(lambda lib, y, x: lib.cumulative_trapezoid(y, x), X, R.random(7))
    assert_same_error(lambda lib: lib.trapezoid(lib.tensor(X), lib.tensor(R.random(5))))
    assert_same_error(lambda lib: lib.trapezoid(lib.tensor(X > 0), lib.tensor(R.random(7))))


# -- histc ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("bins, low, high", [(4, 0, 0), (10, -1, 1), (1, 0, 0), (7, -3.5, 2.25),
                                             (100, 0, 0)])
def test_histc(bins, low, high):
    x = np.concatenate([R.standard_normal(200), [1.0, -1.0, 2.25, -3.5]])
    compare(lambda lib, a: lib.histc(a, bins=bins, min=low, max=high), x, grad=False)
    compare(lambda lib, a: a.histc(bins, low, high), x.astype(np.float32), grad=False)
    compare(lambda lib, a: lib.histc(a, bins=bins), np.full(5, 2.0), grad=False)
    compare(lambda lib, a: lib.histc(a, bins=bins), np.zeros(0), grad=False)


def test_histc_errors_and_no_gradient():
    assert_same_error(lambda lib: lib.histc(lib.tensor([1, 2]), bins=4))
    assert_same_error(lambda lib: lib.histc(lib.tensor(X), bins=0))
    assert_same_error(lambda lib: lib.histc(lib.tensor(X), bins=3, min=2, max=1))
    out = hookgrad.histc(hookgrad.tensor(X, requires_grad=True))
    assert out.grad_fn is None and not out.requires_grad


# -- quantile -------------------------------------------------------------------------------------
MODES = ["linear", "lower", "higher", "midpoint", "nearest"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
def test_quantile(name, mode):
    fn = lambda lib: getattr(lib, name)  # noqa: E731
    q = np.array([0.0, 0.1, 0.25, 0.5, 0.9, 1.0])
    compare(lambda lib, x: fn(lib)(x, 0.3, interpolation=mode), X)
    compare(lambda lib, x, qs: fn(lib)(x, qs, dim=1, keepdim=True, interpolation=mode), X, q,
            requires_grad=[True, False])
    compare(lambda lib, x, qs: getattr(x, name)(qs, 0, interpolation=mode),
            X.astype(np.float32), q.astype(np.float32), requires_grad=[True, False])
    compare(lambda lib, x: fn(lib)(x, lib.tensor(0.75, dtype=lib.float64), -1, mode == "lower",
                                   interpolation=mode), X)
    compare(lambda lib, x: fn(lib)(x, 0.5, interpolation=mode), X[0, :4])  # a tie for nearest


@pytest.mark.parametrize("mode", MODES)
def test_quantile_with_nans(mode):
    x = X.copy()
    x[0, 2] = x[1, :] = np.nan
    for name in ("quantile", "nanquantile"):
        compare(lambda lib, a: getattr(lib, name)(a, lib.tensor([0.2, 0.8], dtype=lib.float64),
                                                  dim=1, interpolation=mode), x)


def test_quantile_double_backward():
    compare_double_backward(lambda lib, x: lib.quantile(x, 0.3, dim=1), X)


@pytest.mark.parametrize("case", ["q range", "q tensor range", "q dtype", "q 2-D", "int input",
                                  "interpolation", "empty"])
def test_quantile_errors(case):
    make = {
        "q range": lambda lib: lib.quantile(lib.tensor(X), 1.5),
        "q tensor range": lambda lib: lib.nanquantile(lib.tensor(X), lib.tensor([0.5, -0.1],
                                                                                dtype=lib.float64)),
        "q dtype": lambda lib: lib.quantile(lib.tensor(X), lib.tensor([0.5])),
        "q 2-D": lambda lib: lib.quantile(lib.tensor(X), lib.tensor([[0.5]], dtype=lib.float64)),
        "int input": lambda lib: lib.quantile(lib.tensor([1, 2]), 0.5),
        "interpolation": lambda lib: lib.quantile(lib.tensor(X), 0.5, interpolation="cubic"),
        "empty": lambda lib: lib.quantile(lib.tensor(np.zeros(0)), 0.5),
    }[case]
    assert_same_error(make)


def test_quantile_of_a_0d_tensor_along_its_dim():
    for fn in (lambda lib, x: lib.quantile(x, 0.3, dim=0),
               lambda lib, x: lib.nanquantile(x, 0.5, dim=-1, keepdim=True),
               lambda lib, x: lib.quantile(x, lib.tensor([0.25, 0.75], dtype=x.dtype), dim=0,
                                           interpolation="lower")):
        compare(fn, np.array(1.5))
    assert_same_error(lambda lib: lib.quantile(lib.tensor(1.5), 0.3, dim=1))
