"""linalg.ldl_factor / ldl_factor_ex / ldl_solve against torch: LAPACK sytrf's pivots and
compact LD (1x1 and 2x2 blocks, ties, singular and NaN matrices, batches, sizes past LAPACK's
block size), sytrs's solutions with broadcasting, out=, errors, and the refused derivative."""
import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, assert_same_error

R = np.random.default_rng(21)


def _matrices(n: int, kind: str) -> np.ndarray:
    A = R.standard_normal((n, n))
    return {"symmetric": A + A.T, "definite": A @ A.T + n * np.eye(n),
            "integers": np.round(2 * A),  # ties between candidate pivots and exact zeros
            "scaled": A * np.exp(R.uniform(-5, 5, (n, n))),
            "lower_only": A}[kind]


def _factor_both(A: np.ndarray):
    return (hookgrad.linalg.ldl_factor_ex(hookgrad.tensor(A)),
            torch.linalg.ldl_factor_ex(torch.tensor(A)))


def _assert_same_factor(ours, theirs, rtol=1e-9, atol=1e-10, strides=True):
    np.testing.assert_array_equal(ours.pivots.numpy(), theirs.pivots.numpy())
    np.testing.assert_array_equal(ours.info.numpy(), theirs.info.numpy())
    assert ours.pivots.dtype == hookgrad.int32 and ours.info.dtype == hookgrad.int32
    assert_close(ours.LD, theirs.LD, rtol=rtol, atol=atol)
    assert not strides or ours.LD.stride() == theirs.LD.stride()


@pytest.mark.parametrize("kind", ["symmetric", "definite", "integers", "scaled", "lower_only"])
@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 13])
def test_pivots_and_LD_match_lapack(kind, n):
    for _ in range(6):
        _assert_same_factor(*_factor_both(_matrices(n, kind)))


@pytest.mark.parametrize("n", [70, 130])
def test_sizes_past_the_lapack_block_size(n):
    _assert_same_factor(*_factor_both(_matrices(n, "symmetric")), rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("A", [
    [[0.0, 1.0], [1.0, 0.0]], [[1.0, 2.0], [2.0, 4.0]], [[0.0, 0.0], [0.0, 0.0]],
    [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 2.0]], [[np.nan, 1.0], [1.0, 2.0]],
    [[1.0, 1.0], [np.nan, 2.0]], [[2.0, 5.0, 1.0], [5.0, 2.0, 5.0], [1.0, 5.0, 2.0]]])
def test_singular_indefinite_and_nan_matrices(A):
    ours, theirs = _factor_both(np.array(A))
    np.testing.assert_array_equal(ours.pivots.numpy(), theirs.pivots.numpy())
    assert int(ours.info) == int(theirs.info)
    assert_close(ours.LD, theirs.LD)


def test_batches_and_float32():
    A = R.standard_normal((2, 3, 6, 6)).astype(np.float32)
    A = A + A.swapaxes(-1, -2)
    _assert_same_factor(*_factor_both(A), rtol=1e-4, atol=1e-5)
    A[1, 2] = 0
    _assert_same_factor(*_factor_both(A), rtol=1e-4, atol=1e-5)


def test_empty_matrices():
    for shape in ((0, 0), (2, 0, 0), (0, 3, 3)):
        _assert_same_factor(*_factor_both(np.zeros(shape)), strides=False)


def test_ldl_factor_returns_the_named_pair_and_hermitian_changes_nothing_for_reals():
    A = _matrices(4, "symmetric")
    ours = hookgrad.linalg.ldl_factor(hookgrad.tensor(A), hermitian=True)
    theirs = torch.linalg.ldl_factor(torch.tensor(A), hermitian=True)
    assert type(ours).__name__ == type(theirs).__name__ and len(ours) == 2
    assert_close(ours.LD, theirs.LD)
    assert_close(ours.pivots, theirs.pivots)


@pytest.mark.parametrize("kind", ["symmetric", "integers", "scaled", "definite"])
def test_ldl_solve_on_the_factorisation(kind):
    for n in (1, 2, 4, 7, 12):
        A = _matrices(n, kind)
        B = R.standard_normal((n, 3))
        ours, theirs = _factor_both(A)
        if int(theirs.info):
            continue
        assert_close(hookgrad.linalg.ldl_solve(ours.LD, ours.pivots, hookgrad.tensor(B)),
                     torch.linalg.ldl_solve(theirs.LD, theirs.pivots, torch.tensor(B)),
                     rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("ld_batch, b_batch", [((), (2,)), ((2,), ()), ((), (2, 3)), ((2, 3), (3,)),
                                               ((2, 3), (2, 3))])
def test_ldl_solve_broadcasts_batches(ld_batch, b_batch):
    """(torch 2.13 crashes when a batched LD must expand, so only an unbatched one does)"""
    A = R.standard_normal(ld_batch + (5, 5))
    A = A + A.swapaxes(-1, -2)
    B = R.standard_normal(b_batch + (5, 2))
    results = []
    for lib in (hookgrad, torch):
        LD, pivots, _ = lib.linalg.ldl_factor_ex(lib.tensor(A))
        results.append(lib.linalg.ldl_solve(LD, pivots, lib.tensor(B), hermitian=True))
    assert results[0].stride() == results[1].stride()
    assert_close(*results, rtol=1e-8, atol=1e-10)


def test_out_and_solving_in_place_into_B():
    A = _matrices(4, "symmetric")
    results = []
    for lib in (hookgrad, torch):
        out = (lib.empty(0, dtype=lib.float64), lib.empty(0, dtype=lib.int32),
               lib.empty(0, dtype=lib.int32))
        returned = lib.linalg.ldl_factor_ex(lib.tensor(A), out=out)
        assert returned[0] is out[0]
        B = lib.ones(4, 2, dtype=lib.float64)
        solved = lib.linalg.ldl_solve(out[0], out[1], B, out=B)
        assert solved is B
        results.append((out[0], out[1], B))
    for ours, theirs in zip(*results):
        assert_close(ours, theirs)


@pytest.mark.parametrize("call", [
    lambda lib: lib.linalg.ldl_factor(lib.zeros(2, 3)),
    lambda lib: lib.linalg.ldl_factor(lib.zeros(3)),
    lambda lib: lib.linalg.ldl_factor(lib.zeros(3, 3, dtype=lib.int64)),
    lambda lib: lib.linalg.ldl_factor(lib.zeros(3, 3, dtype=lib.float16)),
    lambda lib: lib.linalg.ldl_factor(lib.zeros(3, 3)),
    lambda lib: lib.linalg.ldl_factor_ex(lib.zeros(2, 3, 3), check_errors=True),
    lambda lib: lib.linalg.ldl_solve(lib.eye(3), lib.ones(3, dtype=lib.int32), lib.ones(4, 2)),
    lambda lib: lib.linalg.ldl_solve(lib.eye(3), lib.ones(2, dtype=lib.int32), lib.ones(3, 2)),
    lambda lib: lib.linalg.ldl_solve(lib.eye(3), lib.ones(3), lib.ones(3, 2)),
    lambda lib: lib.linalg.ldl_solve(lib.eye(3), lib.ones(3, dtype=lib.int32),
                                     lib.ones(3, 2, dtype=lib.float64)),
    lambda lib: lib.linalg.ldl_solve(lib.eye(3), lib.ones(3, dtype=lib.int32), lib.ones(3)),
    lambda lib: lib.linalg.ldl_solve(lib.ones(2, 3), lib.ones(2, dtype=lib.int32),
                                     lib.ones(3, 2)),
    lambda lib: lib.linalg.ldl_solve(lib.eye(3, dtype=lib.int64), lib.ones(3, dtype=lib.int32),
                                     lib.ones(3, 2, dtype=lib.int64)),
    lambda lib: lib.linalg.ldl_solve(lib.eye(3, dtype=lib.bfloat16),
                                     lib.ones(3, dtype=lib.int32),
                                     lib.ones(3, 2, dtype=lib.bfloat16)),
    lambda lib: lib.linalg.ldl_solve(lib.eye(3), lib.tensor([9, 2, 3], dtype=lib.int32),
                                     lib.ones(3, 2)),
    lambda lib: lib.linalg.ldl_solve(lib.eye(3), lib.tensor([0, 2, 3], dtype=lib.int32),
                                     lib.ones(3, 2)),
    lambda lib: lib.linalg.ldl_solve(lib.ones(2, 3, 3), lib.ones(2, 3, dtype=lib.int32),
                                     lib.ones(3, 3, 2)),
])
def test_errors_match_torch(call):
    kind = type(_error(call, torch))
    with pytest.raises(kind):
        call(hookgrad)
    ours, theirs = str(_error(call, hookgrad)), str(_error(call, torch))
    assert ours in theirs or theirs.startswith(ours) or ours.startswith(theirs), (ours, theirs)


def _error(call, lib):
    try:
        call(lib)
    except Exception as error:  # noqa: BLE001  (compared by type and message)
        return error
    raise AssertionError("no error")


def test_no_derivative_as_torch():
    for lib in (hookgrad, torch):
        A = lib.tensor(_matrices(3, "symmetric"), requires_grad=True)
        LD, pivots, info = lib.linalg.ldl_factor_ex(A)
        assert LD.requires_grad and not pivots.requires_grad
        assert LD.grad_fn.name() == "torch::autograd::NotImplemented"
    assert_same_error(lambda lib: lib.linalg.ldl_factor(
        lib.tensor(_matrices(3, "definite"), requires_grad=True)).LD.sum().backward())
    assert_same_error(lambda lib: lib.linalg.ldl_solve(
        lib.eye(3, dtype=lib.float64), lib.tensor([1, 2, 3], dtype=lib.int32),
        lib.ones(3, 2, dtype=lib.float64, requires_grad=True)).sum().backward())
