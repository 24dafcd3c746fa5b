"""torch.linalg's matrix norms and products (matrix_norm, norm, vecdot, multi_dot,
matrix_power, diagonal, cond, matrix_rank, tensorinv, tensorsolve, vander) and the older
nuclear_norm / frobenius_norm / chain_matmul, against torch: values, gradients, gradcheck, graph
nodes and errors."""
import math
import warnings

import numpy as np
import pytest
import torch

import hookgrad
from tests.conftest import assert_close, assert_same_error, compare

RNG = np.random.default_rng(7)
SQUARE = RNG.standard_normal((4, 4))
BATCH = RNG.standard_normal((2, 3, 4, 4))
WIDE = RNG.standard_normal((2, 3, 5))
VECTORS = RNG.standard_normal((3, 5))

CASES = [  # (id, fn(lib, a), input, node of the result)
    ("fro", lambda lib, a: lib.linalg.matrix_norm(a), BATCH, "LinalgVectorNormBackward0"),
    ("nuc", lambda lib, a: lib.linalg.matrix_norm(a, "nuc"), BATCH, "SumBackward1"),
    ("nuc_keepdim_dims", lambda lib, a: lib.linalg.matrix_norm(a, "nuc", (0, 2), True), WIDE,
     "PermuteBackward0"),
    ("two", lambda lib, a: lib.linalg.matrix_norm(a, 2), WIDE, "AmaxBackward0"),
    ("minus_two", lambda lib, a: lib.linalg.matrix_norm(a, -2, keepdim=True), WIDE,
     "PermuteBackward0"),
    ("one", lambda lib, a: lib.linalg.matrix_norm(a, 1), BATCH, "AmaxBackward0"),
    ("minus_one_keepdim", lambda lib, a: lib.linalg.matrix_norm(a, -1, keepdim=True), WIDE,
     "AminBackward0"),
    ("inf", lambda lib, a: lib.linalg.matrix_norm(a, math.inf, dim=(2, 0)), BATCH,
     "AmaxBackward0"),
    ("minus_inf", lambda lib, a: lib.linalg.matrix_norm(a, -math.inf), WIDE, "AminBackward0"),
    ("norm_all", lambda lib, a: lib.linalg.norm(a), BATCH, "LinalgVectorNormBackward0"),
    ("norm_vector_dim", lambda lib, a: lib.linalg.norm(a, 3, dim=1), WIDE,
     "LinalgVectorNormBackward0"),
    ("norm_matrix_dims", lambda lib, a: lib.linalg.norm(a, "nuc", dim=(1, 2)), WIDE,
     "SumBackward1"),
    ("norm_2d_ord", lambda lib, a: lib.linalg.norm(a, 2), SQUARE, "AmaxBackward0"),
    ("norm_1d_ord", lambda lib, a: lib.linalg.norm(a, 1), VECTORS[0],
     "LinalgVectorNormBackward0"),
    ("norm_dtype", lambda lib, a: lib.linalg.matrix_norm(a.float(), 1, dtype=lib.float64),
     SQUARE, "AmaxBackward0"),
    ("vecdot", lambda lib, a: lib.linalg.vecdot(a, a[0]), VECTORS, "SumBackward1"),
    ("vecdot_dim", lambda lib, a: lib.linalg.vecdot(a, a, dim=0), VECTORS, "SumBackward1"),
    ("multi_dot", lambda lib, a: lib.linalg.multi_dot([a, a.T, a, a[0]]), VECTORS,
     "ViewBackward0"),
    ("multi_dot_vectors", lambda lib, a: lib.linalg.multi_dot([a[0], a.T, a, a[1]]), VECTORS,
     "ViewBackward0"),
    ("matrix_power_3", lambda lib, a: lib.linalg.matrix_power(a, 3), BATCH,
     "UnsafeViewBackward0"),
    ("matrix_power_5", lambda lib, a: lib.linalg.matrix_power(a, 5), SQUARE, "MmBackward0"),
    ("matrix_power_neg", lambda lib, a: lib.linalg.matrix_power(a, -2), SQUARE, "MmBackward0"),
    ("matrix_power_1", lambda lib, a: a.matrix_power(1), SQUARE, "CloneBackward0"),
    ("matrix_power_0", lambda lib, a: lib.matrix_power(a, 0), BATCH,
     "torch::autograd::CopyBackwards"),
    ("diagonal", lambda lib, a: lib.linalg.diagonal(a, offset=1), BATCH, "DiagonalBackward0"),
    ("cond", lambda lib, a: lib.linalg.cond(a), BATCH, "SqueezeBackward1"),
    ("cond_minus_two", lambda lib, a: lib.linalg.cond(a, -2), WIDE,
     "SqueezeBackward1"),
    ("cond_fro", lambda lib, a: lib.linalg.cond(a, "fro"), BATCH, "NanToNumBackward0"),
    ("cond_inf", lambda lib, a: lib.linalg.cond(a, math.inf), SQUARE, "NanToNumBackward0"),
    ("tensorinv", lambda lib, a: lib.linalg.tensorinv(a.reshape(4, 2, 2), ind=1), SQUARE,
     "ReshapeAliasBackward0"),
    ("vander", lambda lib, a: lib.linalg.vander(a), VECTORS, "CatBackward0"),
    ("vander_n", lambda lib, a: lib.linalg.vander(a, N=3), VECTORS[0], "CatBackward0"),
]
IDS = [case[0] for case in CASES]
# torch's own backward of these fails (it inverts in place a tensor it saved), so only values
# and graphs are compared; gradcheck checks our gradient
NO_TORCH_GRAD = {"cond_fro", "cond_inf"}


@pytest.mark.parametrize("name,fn,array,node", CASES, ids=IDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_values_and_gradients_match_torch(name, fn, array, node, dtype):
    tolerance = {} if dtype == np.float64 else {"rtol": 2e-4, "atol": 2e-4}
    compare(fn, array.astype(dtype), grad=name not in NO_TORCH_GRAD, **tolerance)


@pytest.mark.parametrize("name,fn,array,node", CASES, ids=IDS)
def test_node_names(name, fn, array, node):
    for lib in (torch, hookgrad):
        result = fn(lib, lib.tensor(array, requires_grad=True))
        assert result.grad_fn.name() == node, lib.__name__


@pytest.mark.parametrize("name,fn,array,node", [c for c in CASES if c[0] != "norm_dtype"])
def test_gradcheck(name, fn, array, node):
    a = hookgrad.tensor(array, requires_grad=True)
    assert hookgrad.autograd.gradcheck(lambda t: fn(hookgrad, t), (a,))


def test_deprecated_norms_and_chain_matmul():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare(lambda lib, a: lib.nuclear_norm(a), SQUARE)
        compare(lambda lib, a: lib.nuclear_norm(a, (0, 2), True), WIDE)
        compare(lambda lib, a: lib.frobenius_norm(a, (1, 2)), BATCH[0])
        compare(lambda lib, a: lib.chain_matmul(a, a.T, a), VECTORS)
        compare(lambda lib, a: lib.chain_matmul(a), VECTORS)
        b = hookgrad.tensor(BATCH[0], requires_grad=True)
        assert hookgrad.frobenius_norm(b, (1, 2)).grad_fn.name() == "NormBackward1"


def test_tensorsolve():
    A, B = RNG.standard_normal((2, 3, 6)), RNG.standard_normal((2, 3))
    compare(lambda lib, a, b: lib.linalg.tensorsolve(a, b), A, B)
    A = RNG.standard_normal((6, 2, 3))
    compare(lambda lib, a, b: lib.linalg.tensorsolve(a, b, dims=(0,)), A, B)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matrix_rank(dtype):
    low = (RNG.standard_normal((3, 5, 2)) @ RNG.standard_normal((3, 2, 4))).astype(dtype)
    symmetric = (low[..., :4, :] + low[..., :4, :].swapaxes(-1, -2)).astype(dtype)
    for kwargs in ({}, {"atol": 1.0}, {"rtol": 0.5}, {"atol": 0.1, "rtol": 0.2}):
        compare(lambda lib, a: lib.linalg.matrix_rank(a, **kwargs), low)
        compare(lambda lib, a: lib.linalg.matrix_rank(a, hermitian=True, **kwargs), symmetric)
    compare(lambda lib, a: lib.linalg.matrix_rank(a, 0.5), low)


def test_singular_cond_is_inf():
    singular = np.array([[1.0, 0.0], [0.0, 0.0]])
    for p in ("fro", "nuc", 1, math.inf):
        compare(lambda lib, a: lib.linalg.cond(a, p), singular, grad=False)


def test_matrix_power_of_integers():
    compare(lambda lib, a: lib.linalg.matrix_power(a, 3), np.arange(9).reshape(3, 3))


@pytest.mark.parametrize("fn", [
    lambda lib: lib.linalg.matrix_norm(lib.ones(3, 3), 3),
    lambda lib: lib.linalg.matrix_norm(lib.ones(3)),
    lambda lib: lib.linalg.matrix_norm(lib.ones(3, 3), dim=(0, 0)),
    lambda lib: lib.linalg.matrix_norm(lib.ones(3, 3, 3), dim=(0, 1, 2)),
    lambda lib: lib.linalg.matrix_norm(lib.ones(3, 3, dtype=lib.int64)),
    lambda lib: lib.linalg.norm(lib.ones(2, 3, 3), 2),
    lambda lib: lib.linalg.vecdot(lib.ones(3), lib.ones(3, dtype=lib.float64)),
    lambda lib: lib.linalg.multi_dot([lib.ones(3, 3)]),
    lambda lib: lib.linalg.multi_dot([lib.ones(3, 3), lib.ones(2, 3)]),
    lambda lib: lib.linalg.multi_dot([lib.ones(3, 3, 3), lib.ones(3, 3)]),
    lambda lib: lib.linalg.multi_dot([lib.ones(3, 3), lib.ones(3), lib.ones(3)]),
    lambda lib: lib.linalg.multi_dot([lib.ones(3, 3), lib.ones(3, 3, dtype=lib.float64)]),
    lambda lib: lib.linalg.matrix_power(lib.ones(2, 3), 2),
    lambda lib: lib.linalg.matrix_power(lib.ones(3), 2),
    lambda lib: lib.linalg.cond(lib.ones(2, 3), "fro"),
    lambda lib: lib.linalg.tensorinv(lib.ones(2, 3, 4)),
    lambda lib: lib.linalg.vander(lib.ones(3), N=1),
    lambda lib: lib.frobenius_norm(lib.ones(2, 2, 2), (0, 1, 2)),
], ids=lambda fn: "")
def test_errors_match_torch(fn):
    assert_same_error(fn)


def test_negative_power_of_a_singular_matrix_raises_linalg_error():
    with pytest.raises(torch.linalg.LinAlgError) as theirs:
        torch.linalg.matrix_power(torch.zeros(3, 3), -1)
    with pytest.raises(hookgrad.linalg.LinAlgError, match=str(theirs.value)):
        hookgrad.linalg.matrix_power(hookgrad.zeros(3, 3), -1)


def test_chain_order_gives_the_same_product():
    shapes = [(2, 30), (30, 3), (3, 40), (40, 2)]
    arrays = [RNG.standard_normal(shape) for shape in shapes]
    ours = hookgrad.linalg.multi_dot([hookgrad.tensor(a) for a in arrays])
    assert_close(ours, torch.linalg.multi_dot([torch.tensor(a) for a in arrays]))


def test_torch_norm_and_tensor_norm_take_nuc():
    compare(lambda lib, a: lib.norm(a, "nuc"), SQUARE)
    compare(lambda lib, a: a.norm("nuc", dim=(0, 2), keepdim=True), WIDE)
    compare(lambda lib, a: lib.norm(a, 2, dim=(0, 1)), SQUARE)
    assert_same_error(lambda lib: lib.norm(lib.ones(2, 2, 2), "nuc"))


def test_out_tensors_are_written():
    a = hookgrad.tensor(SQUARE)
    out = hookgrad.empty(0, dtype=hookgrad.float64)
    assert hookgrad.linalg.matrix_norm(a, "nuc", out=out) is out
    assert_close(out, torch.linalg.matrix_norm(torch.tensor(SQUARE), "nuc"))
    q, r = hookgrad.empty(0, dtype=hookgrad.float64), hookgrad.empty(0, dtype=hookgrad.float64)
    result = hookgrad.linalg.qr(a, out=(q, r))
    assert result.Q is q and result.R is r
    assert_close(q @ r, torch.tensor(SQUARE))
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        hookgrad.linalg.svdvals(hookgrad.tensor(SQUARE, requires_grad=True), out=out)


DEPRECATED = {  # name: call, each run on SQUARE
    "qr": "lib.qr(a)", "cholesky": "lib.cholesky(a @ a.mT + lib.eye(4))",
    "triangular_solve": "lib.triangular_solve(a, a)", "lu": "lib.lu(a)",
    "lu_solve": "lib.lu_solve(a, *lib.linalg.lu_factor(a))",
    "chain_matmul": "lib.chain_matmul(a, a)", "nuclear_norm": "lib.nuclear_norm(a)",
    "frobenius_norm": "lib.frobenius_norm(a, (0, 1))",
}
_WARNINGS_SCRIPT = """
import json, sys, warnings
import numpy as np
import {lib} as lib
a = lib.tensor(np.array(json.loads(sys.argv[1])))
seen = {{}}
for name, call in json.loads(sys.argv[2]).items():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        eval(call)
    seen[name] = [str(w.message).split(" (Triggered internally")[0] for w in caught]
print(json.dumps(seen))
"""


def test_deprecated_functions_warn_as_torch():
    """torch warns once per process, so each library runs the calls in a fresh process."""
    import json
    import os
    import subprocess
    import sys
    seen = []
    for lib in ("torch", "hookgrad"):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
        completed = subprocess.run(
            [sys.executable, "-c", _WARNINGS_SCRIPT.format(lib=lib),
             json.dumps(SQUARE.tolist()), json.dumps(DEPRECATED)],
            capture_output=True, text=True, check=True, env=env)
        seen.append(json.loads(completed.stdout))
    assert all(seen[0][name] for name in DEPRECATED)
    assert seen[1] == seen[0]
