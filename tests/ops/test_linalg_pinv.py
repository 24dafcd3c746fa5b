"""pinv / pinverse, lstsq and matrix_exp (torch.linalg and the top-level and Tensor-method
names) against torch: values, gradients, gradcheck, nodes, driver outputs and errors."""
import numpy as np
import pytest
import torch

import hookgrad
from tests.conftest import assert_same_error, compare

RNG = np.random.default_rng(3)
TALL = RNG.standard_normal((2, 5, 3))
WIDE = RNG.standard_normal((2, 3, 5))
SQUARE = RNG.standard_normal((2, 4, 4))
RHS = RNG.standard_normal((2, 5, 2))

CASES = [  # (id, fn(lib, a), input, node)
    ("pinv_tall", lambda lib, a: lib.linalg.pinv(a), TALL, "LinalgPinvBackward0"),
    ("pinv_wide", lambda lib, a: lib.linalg.pinv(a), WIDE, "LinalgPinvBackward0"),
    ("pinv_hermitian", lambda lib, a: lib.linalg.pinv(a @ a.mT, hermitian=True), SQUARE,
     "LinalgPinvBackward0"),
    ("pinverse", lambda lib, a: lib.pinverse(a), WIDE, "LinalgPinvBackward0"),
    ("pinverse_method", lambda lib, a: a.pinverse(), TALL, "LinalgPinvBackward0"),
    ("matrix_exp", lambda lib, a: lib.linalg.matrix_exp(a), SQUARE, "LinalgMatrixExpBackward0"),
    ("matrix_exp_large", lambda lib, a: lib.matrix_exp(3 * a), SQUARE,
     "LinalgMatrixExpBackward0"),
    ("matrix_exp_method", lambda lib, a: a.matrix_exp(), SQUARE[0], "LinalgMatrixExpBackward0"),
]
IDS = [case[0] for case in CASES]


@pytest.mark.parametrize("name,fn,array,node", CASES, ids=IDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_values_and_gradients_match_torch(name, fn, array, node, dtype):
    tolerance = {"rtol": 1e-9, "atol": 1e-9} if dtype == np.float64 else \
        {"rtol": 1e-3, "atol": 1e-3}
    compare(fn, array.astype(dtype), **tolerance)


@pytest.mark.parametrize("name,fn,array,node", CASES, ids=IDS)
def test_nodes_and_gradcheck(name, fn, array, node):
    for lib in (torch, hookgrad):
        assert fn(lib, lib.tensor(array, requires_grad=True)).grad_fn.name() == node
    tensor = hookgrad.tensor(array, requires_grad=True)
    assert hookgrad.autograd.gradcheck(lambda t: fn(hookgrad, t), (tensor,))


def test_pinv_tolerances_drop_small_singular_values():
    low = RNG.standard_normal((2, 4, 2)) @ RNG.standard_normal((2, 2, 4))
    compare(lambda lib, a: lib.linalg.pinv(a), low, grad=False)
    compare(lambda lib, a: lib.linalg.pinv(a, atol=1.0), TALL, grad=False)
    compare(lambda lib, a: lib.linalg.pinv(a, rtol=0.5), WIDE, grad=False)
    compare(lambda lib, a: lib.pinverse(a, rcond=0.5), WIDE, grad=False)


def test_matrix_exp_double_backward():
    from tests.conftest import compare_double_backward
    compare_double_backward(lambda lib, a: lib.linalg.matrix_exp(a), SQUARE[0])


@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_lstsq_outputs_per_driver(driver, dtype):
    tolerance = {"rtol": 1e-9, "atol": 1e-9} if dtype == np.float64 else \
        {"rtol": 1e-3, "atol": 1e-3}
    compare(lambda lib, a, b: tuple(lib.linalg.lstsq(a, b, driver=driver)),
            TALL.astype(dtype), RHS.astype(dtype), **tolerance)


def test_lstsq_vector_broadcast_and_wide():
    compare(lambda lib, a, b: tuple(lib.linalg.lstsq(a, b)), TALL, RHS[..., 0])
    compare(lambda lib, a, b: tuple(lib.linalg.lstsq(a, b, driver="gelsd")), TALL, RHS[:1])
    compare(lambda lib, a, b: lib.linalg.lstsq(a, b).solution, WIDE, RHS[:, :3])


def test_lstsq_node_and_gradcheck():
    for lib in (torch, hookgrad):
        a, b = lib.tensor(TALL, requires_grad=True), lib.tensor(RHS, requires_grad=True)
        assert lib.linalg.lstsq(a, b).solution.grad_fn.name() == "LinalgLstsqBackward0"
    inputs = (hookgrad.tensor(TALL, requires_grad=True), hookgrad.tensor(RHS, requires_grad=True))
    assert hookgrad.autograd.gradcheck(
        lambda a, b: tuple(hookgrad.linalg.lstsq(a, b, driver="gelsd")[:2]), inputs)
    assert hookgrad.linalg.lstsq(*inputs).rank.dtype == hookgrad.int64


@pytest.mark.parametrize("fn", [
    lambda lib: lib.linalg.lstsq(lib.ones(5, 3), lib.ones(3, 2)),
    lambda lib: lib.linalg.lstsq(lib.ones(5, 3), lib.ones(5, 2), driver="x"),
    lambda lib: lib.linalg.lstsq(lib.ones(5, 3), lib.ones(5, 2, dtype=lib.float64)),
    lambda lib: lib.linalg.lstsq(lib.ones(3), lib.ones(3)),
    lambda lib: lib.linalg.lstsq(lib.ones(5, 3), lib.ones(2, 5, 2)),
    lambda lib: lib.linalg.matrix_exp(lib.ones(2, 3)),
    lambda lib: lib.linalg.matrix_exp(lib.ones(3, 3, dtype=lib.int64)),
    lambda lib: lib.linalg.pinv(lib.ones(3)),
], ids=lambda fn: "")
def test_errors_match_torch(fn):
    assert_same_error(fn)
