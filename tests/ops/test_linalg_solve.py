"""Linear systems and LU (torch.linalg.solve / solve_ex / solve_triangular / inv_ex / cholesky /
cholesky_ex / lu_factor / lu_factor_ex / lu / lu_solve, torch.cholesky_solve /
cholesky_inverse / triangular_solve / lu / lu_unpack / lu_solve) against torch: values,
gradients, gradcheck, batched and broadcast shapes, nodes, info codes and errors."""
import warnings

import numpy as np
import pytest
import torch

import hookgrad
from tests.conftest import assert_close, assert_same_error, compare

RNG = np.random.default_rng(5)
A = RNG.standard_normal((2, 3, 3)) + 3 * np.eye(3)
B = RNG.standard_normal((2, 3, 2))
WIDE_B = RNG.standard_normal((4, 3))
SPD = A @ A.swapaxes(-1, -2) + np.eye(3)
TALL = RNG.standard_normal((2, 5, 3))
WIDE = RNG.standard_normal((3, 5))


def _lower(lib, a):
    return lib.linalg.cholesky(a @ a.mT + lib.eye(3, dtype=a.dtype))


CASES = [  # (id, fn(lib, a, b), a, b, node)
    ("solve", lambda lib, a, b: lib.linalg.solve(a, b), A, B, "LinalgSolveExBackward0"),
    ("solve_broadcast", lambda lib, a, b: lib.linalg.solve(a, b), A[0], B,
     "LinalgSolveExBackward0"),
    ("solve_vector", lambda lib, a, b: lib.linalg.solve(a, b), A, B[..., 0],
     "LinalgSolveExBackward0"),
    ("solve_1d", lambda lib, a, b: lib.linalg.solve(a, b), A[0], B[0, :, 0],
     "LinalgSolveExBackward0"),
    ("solve_right", lambda lib, a, b: lib.linalg.solve(a, b, left=False), A[0], WIDE_B,
     "LinalgSolveExBackward0"),
    ("solve_ex", lambda lib, a, b: lib.linalg.solve_ex(a, b).result, A, B,
     "LinalgSolveExBackward0"),
    ("tri_upper", lambda lib, a, b: lib.linalg.solve_triangular(a, b, upper=True), A, B,
     "LinalgSolveTriangularBackward0"),
    ("tri_lower_unit", lambda lib, a, b: lib.linalg.solve_triangular(
        a, b, upper=False, unitriangular=True), A, B, "LinalgSolveTriangularBackward0"),
    ("tri_right", lambda lib, a, b: lib.linalg.solve_triangular(a, b, upper=False,
                                                                left=False), A[0], WIDE_B,
     "LinalgSolveTriangularBackward0"),
    ("triangular_solve", lambda lib, a, b: lib.triangular_solve(b, a, upper=False,
                                                                transpose=True)[0], A, B,
     "TriangularSolveBackward0"),
    ("cholesky_solve", lambda lib, a, b: lib.cholesky_solve(b, _lower(lib, a)), A, B,
     "CholeskySolveBackward0"),
    ("cholesky_solve_upper", lambda lib, a, b: lib.cholesky_solve(
        b, _lower(lib, a).mT, upper=True), A, B, "CholeskySolveBackward0"),
    ("cholesky_inverse", lambda lib, a, b: lib.cholesky_inverse(_lower(lib, a)) + b.sum(),
     A, B, "AddBackward0"),
    ("lu_solve", lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b), A, B,
     "LinalgLuSolveBackward0"),
    ("lu_solve_adjoint", lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b,
                                                               adjoint=True), A, B,
     "LinalgLuSolveBackward0"),
    ("lu_solve_right", lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b,
                                                             left=False), A[0], WIDE_B,
     "LinalgLuSolveBackward0"),
    ("lu_solve_right_adjoint", lambda lib, a, b: lib.linalg.lu_solve(
        *lib.linalg.lu_factor(a), b, left=False, adjoint=True), A[0], WIDE_B,
     "LinalgLuSolveBackward0"),
]
IDS = [case[0] for case in CASES]


@pytest.mark.parametrize("name,fn,a,b,node", CASES, ids=IDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_values_and_gradients_match_torch(name, fn, a, b, node, dtype):
    tolerance = {"rtol": 1e-9, "atol": 1e-10} if dtype == np.float64 else \
        {"rtol": 1e-4, "atol": 1e-4}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare(fn, a.astype(dtype), b.astype(dtype), **tolerance)


@pytest.mark.parametrize("name,fn,a,b,node", CASES, ids=IDS)
def test_node_names_and_gradcheck(name, fn, a, b, node):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lib in (torch, hookgrad):
            result = fn(lib, lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True))
            assert result.grad_fn.name() == node, lib.__name__
        inputs = (hookgrad.tensor(a, requires_grad=True), hookgrad.tensor(b, requires_grad=True))
        assert hookgrad.autograd.gradcheck(lambda x, y: fn(hookgrad, x, y), inputs)


SINGLE = [  # (id, fn(lib, a), input, node)
    ("inv_ex", lambda lib, a: lib.linalg.inv_ex(a).inverse, A, "LinalgInvExBackward0"),
    ("cholesky", lambda lib, a: lib.linalg.cholesky(a), SPD, "LinalgCholeskyExBackward0"),
    ("cholesky_upper", lambda lib, a: lib.linalg.cholesky(a, upper=True), SPD,
     "LinalgCholeskyExBackward0"),
    ("cholesky_ex", lambda lib, a: lib.linalg.cholesky_ex(a).L, SPD,
     "LinalgCholeskyExBackward0"),
    ("cholesky_old", lambda lib, a: lib.cholesky(a), SPD, "CholeskyBackward0"),
    ("cholesky_method", lambda lib, a: a.cholesky(upper=True), SPD[0], "CholeskyBackward0"),
    ("lu_factor", lambda lib, a: lib.linalg.lu_factor(a).LU, A, "LinalgLuFactorExBackward0"),
    ("lu_factor_tall", lambda lib, a: lib.linalg.lu_factor_ex(a).LU, TALL,
     "LinalgLuFactorExBackward0"),
    ("lu_factor_wide", lambda lib, a: lib.linalg.lu_factor(a).LU, WIDE,
     "LinalgLuFactorExBackward0"),
    ("lu_L", lambda lib, a: lib.linalg.lu(a).L, A, "LinalgLuBackward0"),
    ("lu_U_tall", lambda lib, a: lib.linalg.lu(a).U, TALL, "LinalgLuBackward0"),
    ("lu_LU_wide", lambda lib, a: lib.linalg.lu(a)[1:], WIDE, "LinalgLuBackward0"),
    ("lu_unpack", lambda lib, a: lib.lu_unpack(*lib.linalg.lu_factor(a))[1:], A,
     "LuUnpackBackward0"),
    ("lu_unpack_tall", lambda lib, a: lib.lu_unpack(*lib.linalg.lu_factor(a))[1:], TALL,
     "LuUnpackBackward0"),
    ("lu_old", lambda lib, a: a.lu()[0], A, "LinalgLuFactorExBackward0"),
]
SINGLE_IDS = [case[0] for case in SINGLE]


@pytest.mark.parametrize("name,fn,a,node", SINGLE, ids=SINGLE_IDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_factorisations_match_torch(name, fn, a, node, dtype):
    tolerance = {"rtol": 1e-9, "atol": 1e-10} if dtype == np.float64 else \
        {"rtol": 1e-4, "atol": 1e-4}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare(fn, a.astype(dtype), **tolerance)


@pytest.mark.parametrize("name,fn,a,node", SINGLE, ids=SINGLE_IDS)
def test_factorisation_nodes_and_gradcheck(name, fn, a, node):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lib in (torch, hookgrad):
            result = fn(lib, lib.tensor(a, requires_grad=True))
            result = result[0] if isinstance(result, tuple) else result
            assert result.grad_fn.name() == node, lib.__name__
        tensor = hookgrad.tensor(a, requires_grad=True)
        if "cholesky" in name:  # one triangle is read: perturb symmetric matrices
            assert hookgrad.autograd.gradcheck(lambda t: fn(hookgrad, t + t.mT), (tensor,))
        else:
            assert hookgrad.autograd.gradcheck(lambda t: fn(hookgrad, t), (tensor,))


def test_pivots_permutations_and_info_match_torch():
    singular = np.array([[[1.0, 2.0], [2.0, 4.0]], [[0.0, 0.0], [0.0, 1.0]]])
    compare(lambda lib, a: tuple(lib.linalg.lu_factor_ex(a))[1:], singular, grad=False)
    compare(lambda lib, a: lib.linalg.lu_factor(a).pivots, A, grad=False)
    compare(lambda lib, a: lib.linalg.lu(a).P, TALL, grad=False)
    compare(lambda lib, a: lib.linalg.solve_ex(a, a).info, singular, grad=False)
    compare(lambda lib, a: lib.linalg.inv_ex(a).info, singular, grad=False)
    not_pd = np.array([[[1.0, 0.0], [0.0, -1.0]], [[4.0, 0.0], [0.0, 1.0]]])
    compare(lambda lib, a: lib.linalg.cholesky_ex(a).info, not_pd, grad=False)
    compare(lambda lib, a: lib.linalg.cholesky_ex(a).info, -np.eye(3), grad=False)


def test_named_results():
    a = hookgrad.tensor(A)
    for result, name in ((hookgrad.linalg.solve_ex(a, a), "linalg_solve_ex"),
                         (hookgrad.linalg.inv_ex(a), "linalg_inv_ex"),
                         (hookgrad.linalg.cholesky_ex(hookgrad.tensor(SPD)),
                          "linalg_cholesky_ex"),
                         (hookgrad.linalg.lu_factor(a), "linalg_lu_factor"),
                         (hookgrad.linalg.lu_factor_ex(a), "linalg_lu_factor_ex"),
                         (hookgrad.linalg.lu(a), "linalg_lu"),
                         (hookgrad.triangular_solve(a, a), "triangular_solve")):
        theirs = getattr(torch.return_types, name)
        assert isinstance(result, getattr(hookgrad.return_types, name))
        assert type(result)._fields == theirs._fields if hasattr(theirs, "_fields") else True
        assert repr(result).startswith(f"torch.return_types.{name}(")
    assert hookgrad.linalg.lu_factor_ex(a).pivots.dtype == hookgrad.int32


def test_solve_out():
    out = hookgrad.empty(0, dtype=hookgrad.float64)
    result = hookgrad.linalg.solve(hookgrad.tensor(A), hookgrad.tensor(B), out=out)
    assert result is out
    assert_close(out, torch.linalg.solve(torch.tensor(A), torch.tensor(B)))


def _linalg_error(fn):
    with pytest.raises(torch.linalg.LinAlgError) as theirs:
        fn(torch)
    with pytest.raises(hookgrad.linalg.LinAlgError) as ours:
        fn(hookgrad)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.linalg.solve(lib.zeros(3, 3), lib.ones(3)),
    lambda lib: lib.linalg.solve(lib.eye(2).expand(2, 2, 2) * lib.tensor([1.0, 0.0])[:, None,
                                                                                    None],
                                 lib.ones(2, 2)),
    lambda lib: lib.linalg.cholesky(-lib.eye(3)),
    lambda lib: lib.linalg.cholesky(lib.diag(lib.tensor([1.0, -1.0])).expand(3, 2, 2)),
    lambda lib: lib.linalg.cholesky_ex(-lib.eye(3), check_errors=True),
    lambda lib: lib.linalg.inv_ex(lib.zeros(2, 2), check_errors=True),
], ids=lambda fn: "")
def test_singular_and_not_positive_definite_raise_linalg_error(fn):
    _linalg_error(fn)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.linalg.solve(lib.ones(3, 3), lib.ones(4)),
    lambda lib: lib.linalg.solve(lib.ones(2, 3), lib.ones(2)),
    lambda lib: lib.linalg.solve(lib.ones(3, 3), lib.ones(3, dtype=lib.float64)),
    lambda lib: lib.linalg.solve(lib.ones(2, 3, 3), lib.ones(4, 3, 2)),
    lambda lib: lib.linalg.solve_triangular(lib.ones(3, 3), lib.ones(3), upper=True),
    lambda lib: lib.linalg.solve_triangular(lib.ones(3, 3), lib.ones(4, 2), upper=True),
    lambda lib: lib.linalg.cholesky(lib.ones(2, 3)),
    lambda lib: lib.linalg.cholesky(lib.ones(3, 3, dtype=lib.int64)),
    lambda lib: lib.linalg.lu_factor(lib.zeros(3, 3)),
    lambda lib: lib.linalg.lu_factor(lib.zeros(2, 3, 3)),
    lambda lib: lib.linalg.lu_factor(lib.ones(3, 3, dtype=lib.int64)),
    lambda lib: lib.linalg.lu_factor(lib.ones(3)),
    lambda lib: lib.linalg.lu_factor(lib.eye(3), pivot=False),
    lambda lib: lib.linalg.lu(lib.ones(3)),
    lambda lib: lib.linalg.lu_solve(lib.eye(3), lib.ones(3, dtype=lib.int32), lib.ones(2, 1)),
], ids=lambda fn: "")
def test_errors_match_torch(fn):
    assert_same_error(fn)


def test_singular_triangular_solve_gives_non_finite_values_as_torch():
    compare(lambda lib, a, b: lib.linalg.solve_triangular(a, b, upper=True),
            np.triu(np.ones((3, 3))) - np.diag([0.0, 1.0, 0.0]), np.ones((3, 1)), grad=False)


SAVED = {  # what pack hooks see, in torch's order
    "solve": lambda lib, a: lib.linalg.solve(a, a),
    "solve_triangular": lambda lib, a: lib.linalg.solve_triangular(a, a, upper=True),
    "triangular_solve": lambda lib, a: lib.triangular_solve(a, a)[0],
    "cholesky": lambda lib, a: lib.linalg.cholesky(a @ a.mT),
    "cholesky_solve": lambda lib, a: lib.cholesky_solve(a, a),
    "cholesky_inverse": lambda lib, a: lib.cholesky_inverse(a),
    "lu_factor": lambda lib, a: lib.linalg.lu_factor(a)[0],
    "lu": lambda lib, a: lib.linalg.lu(a)[1],
    "lu_solve": lambda lib, a: lib.linalg.lu_solve(*lib.linalg.lu_factor(a.detach()), a),
    "lu_unpack": lambda lib, a: lib.lu_unpack(*lib.linalg.lu_factor(a))[1],
    "svd": lambda lib, a: lib.linalg.svd(a)[0],
    "eigh": lambda lib, a: lib.linalg.eigh(a @ a.mT)[0],
    "qr": lambda lib, a: lib.linalg.qr(a)[0],
    "pinv": lambda lib, a: lib.linalg.pinv(a),
    "lstsq": lambda lib, a: lib.linalg.lstsq(a, a)[0],
    "matrix_exp": lambda lib, a: lib.linalg.matrix_exp(a),
}


@pytest.mark.parametrize("name", list(SAVED))
def test_saved_tensors_match_torch(name):
    from tests.conftest import saved_log
    fn = SAVED[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        logs = [saved_log(lib, lambda t: fn(lib, t), lib.tensor(A[0], requires_grad=True))
                for lib in (torch, hookgrad)]
    assert logs[1] == logs[0]


T_RHS = RNG.standard_normal((2, 5, 3))
STRIDES = {  # torch's result layouts: LAPACK's column-major matrices, B's buffer for lstsq
    "solve": lambda lib: lib.linalg.solve(lib.tensor(A), lib.tensor(B)),
    "solve_vectors": lambda lib: lib.linalg.solve(lib.tensor(A), lib.tensor(B[..., 0])),
    "solve_vector_batches": lambda lib: lib.linalg.solve(
        lib.tensor(np.stack([A] * 4)), lib.tensor(np.stack([B[..., 0]] * 4))),
    "solve_right": lambda lib: lib.linalg.solve(lib.tensor(A), lib.tensor(B).mT, left=False),
    "solve_triangular": lambda lib: lib.linalg.solve_triangular(lib.tensor(A), lib.tensor(B),
                                                                upper=True),
    "cholesky_upper": lambda lib: lib.linalg.cholesky(lib.tensor(SPD), upper=True),
    "lstsq": lambda lib: tuple(lib.linalg.lstsq(lib.tensor(T_RHS), lib.tensor(T_RHS))),
    "lstsq_vectors": lambda lib: tuple(lib.linalg.lstsq(lib.tensor(T_RHS),
                                                        lib.tensor(T_RHS[..., 0]))),
    "lu_factor": lambda lib: tuple(lib.linalg.lu_factor_ex(lib.tensor(TALL))),
    "lu": lambda lib: tuple(lib.linalg.lu(lib.tensor(TALL))),
    "lu_solve": lambda lib: lib.linalg.lu_solve(*lib.linalg.lu_factor(lib.tensor(A)),
                                                lib.tensor(B)),
    "svd": lambda lib: tuple(lib.linalg.svd(lib.tensor(TALL))),
    "qr": lambda lib: tuple(lib.linalg.qr(lib.tensor(TALL), "complete")),
    "pinv": lambda lib: lib.linalg.pinv(lib.tensor(TALL)),
    "matrix_exp": lambda lib: lib.linalg.matrix_exp(lib.tensor(A)),
}


@pytest.mark.parametrize("name", list(STRIDES))
def test_result_strides_match_torch(name):
    results = [STRIDES[name](lib) for lib in (torch, hookgrad)]
    strides = [[t.stride() for t in (r if isinstance(r, tuple) else (r,))] for r in results]
    assert strides[1] == strides[0]


@pytest.mark.parametrize("left", [True, False])
def test_solve_triangular_gradient_reaches_A_when_B_needs_none(left):
    """A's gradient is built from B's, so it must come out even when B is a constant."""
    grads = []
    for lib in (hookgrad, torch):
        a = lib.tensor(np.tril(A[0]), requires_grad=True)
        b = lib.tensor(B[0] if left else B[0].T)
        lib.linalg.solve_triangular(a, b, upper=False, left=left).pow(2).sum().backward()
        grads.append(np.asarray(a.grad.detach().numpy()))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10, atol=1e-12)
