"""svd / svdvals / eigh / eigvalsh / qr (torch.linalg, torch.svd, torch.qr, Tensor methods)
against torch. Singular vectors and eigenvectors are fixed only up to sign, so the functions
compared are gauge invariant: reconstructions, projectors, products with a sign-fixed copy."""
import numpy as np
import pytest
import torch

import hookgrad
from tests.conftest import assert_same_error, compare

RNG = np.random.default_rng(11)
TALL = RNG.standard_normal((2, 5, 3))
WIDE = RNG.standard_normal((2, 3, 5))
SQUARE = RNG.standard_normal((4, 4))
SYMMETRIC = RNG.standard_normal((2, 4, 4))


def _signed(lib, vectors, axis):
    """vectors with each one's largest entry made positive: a gauge-free representative"""
    index = vectors.abs().argmax(axis, keepdim=True)
    return vectors * vectors.gather(axis, index).sign()


CASES = [  # (id, fn(lib, a), input, node)
    ("svd_values", lambda lib, a: lib.linalg.svd(a).S, TALL, "LinalgSvdBackward0"),
    ("svd_reduced_U", lambda lib, a: _signed(lib, lib.linalg.svd(a, False).U, -2), TALL,
     "MulBackward0"),
    ("svd_reduced_Vh", lambda lib, a: _signed(lib, lib.linalg.svd(a, False).Vh, -1), WIDE,
     "MulBackward0"),
    ("svd_rebuilt_wide", lambda lib, a: (lambda r: r.U @ (r.S.unsqueeze(-1) * r.Vh))(
        lib.linalg.svd(a, full_matrices=False)), WIDE, "UnsafeViewBackward0"),
    ("svd_projector_tall", lambda lib, a: (lambda u: u @ u.mT)(lib.linalg.svd(a, False).U),
     TALL, "UnsafeViewBackward0"),
    ("svd_full_projector", lambda lib, a: (lambda r: r.U[..., :3] @ r.Vh)(lib.linalg.svd(a)),
     TALL, "UnsafeViewBackward0"),
    ("svdvals", lambda lib, a: lib.linalg.svdvals(a), WIDE, "LinalgSvdBackward0"),
    ("svd_old_V", lambda lib, a: _signed(lib, lib.svd(a).V, -2), TALL, "MulBackward0"),
    ("svd_method", lambda lib, a: (lambda r: r.U @ r.V.mT)(a.svd()), SQUARE, "MmBackward0"),
    ("eigh_values", lambda lib, a: lib.linalg.eigh(a).eigenvalues, SYMMETRIC,
     "LinalgEighBackward0"),
    ("eigh_vectors", lambda lib, a: _signed(lib, lib.linalg.eigh(a, UPLO="U")[1], -2),
     SYMMETRIC, "MulBackward0"),
    ("eigvalsh", lambda lib, a: lib.linalg.eigvalsh(a, "U"), SYMMETRIC, "LinalgEighBackward0"),
    ("qr_reduced", lambda lib, a: lib.linalg.qr(a), TALL, "LinalgQrBackward0"),
    ("qr_wide", lambda lib, a: lib.linalg.qr(a), WIDE, "LinalgQrBackward0"),
    ("qr_complete_wide", lambda lib, a: lib.linalg.qr(a, "complete"), WIDE,
     "LinalgQrBackward0"),
    ("qr_R_only_grad", lambda lib, a: lib.linalg.qr(a).R, TALL, "LinalgQrBackward0"),
    ("qr_old", lambda lib, a: lib.qr(a), SQUARE, "LinalgQrBackward0"),
    ("qr_method", lambda lib, a: a.qr()[0], WIDE, "LinalgQrBackward0"),
]
IDS = [case[0] for case in CASES]


@pytest.mark.parametrize("name,fn,array,node", CASES, ids=IDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_values_and_gradients_match_torch(name, fn, array, node, dtype):
    tolerance = {} if dtype == np.float64 else {"rtol": 1e-3, "atol": 1e-3}
    if dtype == np.float64:
        tolerance = {"rtol": 1e-8, "atol": 1e-10}
    compare(fn, array.astype(dtype), **tolerance)


@pytest.mark.parametrize("name,fn,array,node", CASES, ids=IDS)
def test_node_names(name, fn, array, node):
    for lib in (torch, hookgrad):
        result = fn(lib, lib.tensor(array, requires_grad=True))
        result = result[0] if isinstance(result, tuple) else result
        assert result.grad_fn.name() == node, lib.__name__


@pytest.mark.parametrize("name,fn,array,node", CASES, ids=IDS)
def test_gradcheck(name, fn, array, node):
    a = hookgrad.tensor(array, requires_grad=True)
    if "eig" in name:  # eigh reads one triangle: perturb symmetric matrices, as torch's tests do
        assert hookgrad.autograd.gradcheck(lambda t: fn(hookgrad, t + t.mT), (a,))
    else:
        assert hookgrad.autograd.gradcheck(lambda t: fn(hookgrad, t), (a,))


def test_eigh_reads_one_triangle_and_symmetrises_its_gradient():
    compare(lambda lib, a: lib.linalg.eigvalsh(a), SYMMETRIC)  # lower triangle only
    compare(lambda lib, a: lib.linalg.eigh(a, "U").eigenvalues, SYMMETRIC)


def test_named_results_print_like_torchs():
    a = hookgrad.tensor(SQUARE)
    for result, name, fields in ((hookgrad.linalg.svd(a), "linalg_svd", ("U", "S", "Vh")),
                                 (hookgrad.svd(a), "svd", ("U", "S", "V")),
                                 (hookgrad.linalg.eigh(a), "linalg_eigh",
                                  ("eigenvalues", "eigenvectors")),
                                 (hookgrad.linalg.qr(a), "linalg_qr", ("Q", "R"))):
        assert isinstance(result, getattr(hookgrad.return_types, name))
        assert repr(result).startswith(f"torch.return_types.{name}(\n{fields[0]}=")
        assert all(getattr(result, f) is result[i] for i, f in enumerate(fields))


def test_qr_r_mode_and_complete_shapes():
    compare(lambda lib, a: lib.linalg.qr(a, "r").R.abs(), TALL, grad=False)
    compare(lambda lib, a: lib.linalg.qr(a, "r").Q, TALL, grad=False)
    compare(lambda lib, a: lib.linalg.qr(a, "complete").R.abs(), TALL, grad=False)
    compare(lambda lib, a: lib.svd(a, some=False).U.shape, TALL, grad=False)
    compare(lambda lib, a: lib.svd(a, compute_uv=False), TALL, grad=False)


@pytest.mark.parametrize("mode", ["r", "complete"])
def test_qr_backward_refusals(mode):
    def backward(lib):
        q, r = lib.linalg.qr(lib.tensor(TALL[0], requires_grad=True), mode)
        r.sum().backward()
    assert_same_error(backward)


def test_repeated_singular_values_give_torchs_non_finite_gradient():
    def grads(lib):
        a = lib.eye(3, dtype=lib.float64, requires_grad=True)
        u = lib.linalg.svd(a).U
        (u * lib.arange(9.0, dtype=lib.float64).reshape(3, 3)).sum().backward()
        return np.isfinite(a.grad.numpy())
    assert np.array_equal(grads(hookgrad), grads(torch))


def test_empty_and_non_finite_inputs():
    compare(lambda lib, a: lib.linalg.svdvals(a), np.zeros((2, 0, 3)), grad=False)
    compare(lambda lib, a: lib.linalg.eigvalsh(a), np.zeros((0, 0)), grad=False)
    compare(lambda lib, a: lib.linalg.svdvals(a), np.array([[np.inf, 0.0], [0.0, 1.0]]),
            grad=False)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.linalg.svd(lib.ones(3)),
    lambda lib: lib.linalg.svd(lib.ones(3, 3, dtype=lib.int64)),
    lambda lib: lib.linalg.svdvals(lib.ones(3, 3, dtype=lib.int64)),
    lambda lib: lib.linalg.eigh(lib.ones(3, 2)),
    lambda lib: lib.linalg.eigh(lib.ones(3, 3), UPLO="X"),
    lambda lib: lib.linalg.eigvalsh(lib.ones(3)),
    lambda lib: lib.linalg.qr(lib.ones(3)),
    lambda lib: lib.linalg.qr(lib.ones(3, 3), mode="x"),
    lambda lib: lib.linalg.qr(lib.ones(3, 3, dtype=lib.int64)),
], ids=lambda fn: "")
def test_errors_match_torch(fn):
    assert_same_error(fn)
