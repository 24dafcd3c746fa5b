"""det, logdet, slogdet and inverse (top level, Tensor methods and torch.linalg) against torch:
values, gradients, double backward, node names, saved tensors, layouts and errors."""
import numpy as np
import pytest
import torch

import hookgrad
from tests.conftest import (assert_close, assert_same_error, compare, compare_double_backward,
                            saved_log)

RNG = np.random.default_rng(31)
SQUARE = RNG.standard_normal((4, 4))
BATCH = RNG.standard_normal((2, 3, 3, 3))
POSITIVE = SQUARE @ SQUARE.T + np.eye(4)  # a positive determinant: logdet is finite

CASES = [  # (id, function, input, node of the first output)
    ("det", lambda lib, a: lib.det(a), SQUARE, "LinalgDetBackward0"),
    ("det_batch", lambda lib, a: a.det(), BATCH, "LinalgDetBackward0"),
    ("linalg_det", lambda lib, a: lib.linalg.det(a), BATCH, "LinalgDetBackward0"),
    ("logdet", lambda lib, a: lib.logdet(a), POSITIVE, "WhereBackward0"),
    ("logdet_batch", lambda lib, a: a.logdet(), BATCH, "WhereBackward0"),
    ("slogdet_logabsdet", lambda lib, a: lib.slogdet(a)[1], BATCH, "LinalgSlogdetBackward0"),
    ("slogdet_method", lambda lib, a: a.slogdet().logabsdet, SQUARE, "LinalgSlogdetBackward0"),
    ("inverse", lambda lib, a: lib.inverse(a), SQUARE, "LinalgInvExBackward0"),
    ("inverse_batch", lambda lib, a: a.inverse(), BATCH, "LinalgInvExBackward0"),
    ("linalg_inv", lambda lib, a: lib.linalg.inv(a), SQUARE, "LinalgInvExBackward0"),
]
IDS = [case[0] for case in CASES]


@pytest.mark.parametrize("name,fn,array,node", CASES, ids=IDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_values_and_gradients_match_torch(name, fn, array, node, dtype):
    tolerance = {} if dtype == np.float64 else {"rtol": 1e-4, "atol": 1e-4}
    compare(fn, array.astype(dtype), **tolerance)


@pytest.mark.parametrize("name,fn,array,node", CASES, ids=IDS)
def test_node_names_saved_tensors_and_strides(name, fn, array, node):
    results, logs = [], []
    for lib in (torch, hookgrad):
        a = lib.tensor(array, requires_grad=True)
        results.append(fn(lib, a))
        logs.append(saved_log(lib, lambda t: fn(lib, t), lib.tensor(array, requires_grad=True)))
    assert results[1].grad_fn.name() == results[0].grad_fn.name() == node
    assert results[1].stride() == results[0].stride()
    assert logs[1] == logs[0]


@pytest.mark.parametrize("name,fn,array,node", CASES, ids=IDS)
def test_double_backward(name, fn, array, node):
    compare_double_backward(fn, array)


def test_slogdet_is_torchs_named_pair():
    ours, theirs = hookgrad.slogdet(hookgrad.tensor(BATCH)), torch.slogdet(torch.tensor(BATCH))
    assert_close(ours.sign, theirs.sign)
    assert_close(ours.logabsdet, theirs.logabsdet)
    assert isinstance(ours, hookgrad.return_types.slogdet) and len(ours) == 2
    assert repr(ours).startswith("torch.return_types.slogdet(\nsign=")


@pytest.mark.parametrize("matrix", [
    [[1.0, 2.0], [2.0, 4.0]], [[0.0, 0.0], [0.0, 1.0]], [[-1.0, 0.0], [0.0, 1.0]],
    np.zeros((0, 0)), np.eye(3)[[1, 0, 2]],
])
def test_singular_negative_and_empty_determinants(matrix):
    matrix = np.asarray(matrix, dtype=np.float64)
    for name in ("det", "logdet"):
        compare(lambda lib, a: getattr(lib, name)(a), matrix, grad=False)
    compare(lambda lib, a: tuple(lib.slogdet(a)), matrix, grad=False)


def test_det_gradient_of_a_singular_matrix_is_the_adjugate():
    """torch's first-order gradient here is zero; its create_graph gradient (and ours, in both
    modes) is the transposed adjugate, the true derivative of det."""
    singular = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])
    b = torch.tensor(singular, requires_grad=True)
    (expected,) = torch.autograd.grad(torch.det(b), b, create_graph=True)
    a = hookgrad.tensor(singular, requires_grad=True)
    hookgrad.det(a).backward()
    assert_close(a.grad, expected.detach(), atol=1e-12)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.det(lib.ones(2, 3)),
    lambda lib: lib.det(lib.ones(3)),
    lambda lib: lib.det(lib.ones(2, 2, dtype=lib.int64)),
    lambda lib: lib.inverse(lib.ones(2, 3)),
    lambda lib: lib.inverse(lib.ones(2, 2, dtype=lib.int64)),
    lambda lib: lib.logdet(lib.ones(2, 2, dtype=lib.int64)),
    lambda lib: lib.slogdet(lib.ones(3)),
])
def test_errors_match_torch(fn):
    assert_same_error(fn)


def test_inverse_of_a_singular_matrix_raises_linalg_error():
    with pytest.raises(torch.linalg.LinAlgError) as theirs:
        torch.inverse(torch.zeros(2, 2))
    with pytest.raises(hookgrad.linalg.LinAlgError) as ours:
        hookgrad.inverse(hookgrad.zeros(2, 2))
    assert isinstance(ours.value, RuntimeError) and str(ours.value) == str(theirs.value)
