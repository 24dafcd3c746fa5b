"""geqrf, linalg.householder_product and orgqr against torch: values, gradients, gradcheck,
nodes and errors (geqrf's reflectors are LAPACK's, so they are compared directly)."""
import numpy as np
import pytest
import torch

import hookgrad
from tests.conftest import assert_same_error, compare

RNG = np.random.default_rng(17)
TALL = RNG.standard_normal((2, 5, 3))


def _reflectors(dtype=np.float64):
    a, tau = torch.geqrf(torch.tensor(TALL.astype(dtype)))
    return np.ascontiguousarray(a.numpy()), tau.numpy()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_geqrf_matches_lapack_through_torch(dtype):
    tolerance = {} if dtype == np.float64 else {"rtol": 1e-5, "atol": 1e-5}
    compare(lambda lib, a: tuple(lib.geqrf(a)), TALL.astype(dtype), grad=False, **tolerance)
    compare(lambda lib, a: tuple(a.geqrf()), TALL[0].astype(dtype), grad=False, **tolerance)


def test_geqrf_has_no_derivative_as_in_torch():
    assert_same_error(lambda lib: lib.geqrf(lib.tensor(TALL, requires_grad=True))[0]
                      .sum().backward())


@pytest.mark.parametrize("columns,count", [(3, 3), (3, 2), (2, 1)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_householder_product_values_and_gradients(columns, count, dtype):
    a, tau = _reflectors(dtype)
    tolerance = {"rtol": 1e-9, "atol": 1e-10} if dtype == np.float64 else \
        {"rtol": 1e-4, "atol": 1e-4}
    compare(lambda lib, x, t: lib.linalg.householder_product(x, t),
            a[..., :columns].copy(), tau[..., :count].copy(), **tolerance)
    compare(lambda lib, x, t: lib.orgqr(x, t), a[0], tau[0], **tolerance)


def test_householder_product_node_and_gradcheck():
    a, tau = _reflectors()
    for lib in (torch, hookgrad):
        result = lib.linalg.householder_product(lib.tensor(a, requires_grad=True),
                                                lib.tensor(tau, requires_grad=True))
        assert result.grad_fn.name() == "LinalgHouseholderProductBackward0"
    inputs = (hookgrad.tensor(a[..., :3].copy(), requires_grad=True),
              hookgrad.tensor(tau[..., :2].copy(), requires_grad=True))
    assert hookgrad.autograd.gradcheck(hookgrad.linalg.householder_product, inputs)
    assert hookgrad.autograd.gradcheck(lambda x, t: x.orgqr(t), inputs)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.linalg.householder_product(lib.ones(2, 3), lib.ones(2)),
    lambda lib: lib.linalg.householder_product(lib.ones(4, 2), lib.ones(3)),
    lambda lib: lib.linalg.householder_product(lib.ones(3), lib.ones(3)),
    lambda lib: lib.linalg.householder_product(lib.ones(4, 3), lib.ones(2, dtype=lib.float64)),
    lambda lib: lib.linalg.householder_product(lib.ones(2, 4, 3), lib.ones(3, 2)),
], ids=lambda fn: "")
def test_errors_match_torch(fn):
    assert_same_error(fn)


ORMQR = [(left, transpose) for left in (True, False) for transpose in (False, True)]


@pytest.mark.parametrize("left,transpose", ORMQR)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_ormqr_values_and_gradients(left, transpose, dtype):
    a, tau = _reflectors(dtype)
    other = RNG.standard_normal((2, 5, 4) if left else (2, 4, 5)).astype(dtype)
    tolerance = {"rtol": 1e-9, "atol": 1e-10} if dtype == np.float64 else \
        {"rtol": 1e-4, "atol": 1e-4}
    compare(lambda lib, x, t, c: lib.ormqr(x, t, c, left, transpose), a, tau, other,
            **tolerance)


def test_ormqr_node_gradcheck_and_method():
    a, tau = _reflectors()
    other = RNG.standard_normal((2, 5, 2))
    for lib in (torch, hookgrad):
        result = lib.tensor(a, requires_grad=True).ormqr(lib.tensor(tau), lib.tensor(other))
        assert result.grad_fn.name() == "OrmqrBackward0"
    inputs = [hookgrad.tensor(x, requires_grad=True) for x in (a, tau, other)]
    assert hookgrad.autograd.gradcheck(lambda x, t, c: hookgrad.ormqr(x, t, c, False, True),
                                       (inputs[0], inputs[1], inputs[2].mT.contiguous()))
    assert hookgrad.autograd.gradcheck(hookgrad.ormqr, inputs)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.ormqr(*lib.geqrf(lib.ones(5, 3, dtype=lib.float64)),
                          lib.ones(4, 2, dtype=lib.float64)),
    lambda lib: lib.ormqr(*lib.geqrf(lib.ones(5, 3, dtype=lib.float64)),
                          lib.ones(2, 5, dtype=lib.float64), left=True),
    lambda lib: lib.ormqr(lib.ones(5, 2), lib.ones(3), lib.ones(5, 2)),
], ids=lambda fn: "")
def test_ormqr_errors_match_torch(fn):
    assert_same_error(fn)
