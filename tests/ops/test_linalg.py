"""Matrix products, einsum and vector norms against torch: values, gradients, double backward,
the graph matmul builds (node chain and what pack hooks see) and shape/dtype errors."""
import math

import numpy as np
import pytest
import torch
from conftest import (assert_close, assert_same_error, compare, compare_double_backward,
                      saved_log)
from hypothesis import given, settings
from hypothesis import strategies as st

import hookgrad


def chain(tensor) -> str:
    """The graph below ``tensor`` as nested node names, ``None`` for inputs without grad."""
    def walk(node):
        if node is None:
            return "None"
        name = node.name().replace("torch::autograd::", "")
        if not node.next_functions:
            return name
        return name + "(" + ", ".join(walk(n) for n, _ in node.next_functions) + ")"

    return walk(tensor.grad_fn)


def both_tensors(arrays, flags):
    th = [torch.tensor(a, requires_grad=f) for a, f in zip(arrays, flags)]
    hg = [hookgrad.tensor(a, requires_grad=f) for a, f in zip(arrays, flags)]
    return th, hg


# -- matmul: the graph -------------------------------------------------------------------------
MATMUL_SHAPES = [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
    ((5, 2, 3), (3,)), ((5, 2, 3), (3, 4)), ((6, 5, 2, 3), (3, 4)), ((6, 5, 2, 3), (3,)),
    ((3,), (5, 3, 4)), ((2, 3), (5, 3, 4)), ((2, 3), (6, 5, 3, 4)), ((3,), (6, 5, 3, 4)),
    ((5, 2, 3), (5, 3, 4)), ((5, 2, 3), (1, 3, 4)), ((1, 2, 3), (5, 3, 4)),
    ((1, 2, 3), (1, 3, 4)), ((7, 1, 2, 3), (5, 3, 4)), ((5, 2, 3), (7, 1, 3, 4)),
    ((4, 5, 2, 3), (5, 3, 4)), ((0, 2, 3), (3, 4)), ((5, 2, 0), (0, 4)), ((4, 1, 2, 3), (3,)),
]
GRAD_FLAGS = [(True, True), (True, False), (False, True)]


def _shape_id(shapes):
    return "@".join("x".join(map(str, s)) for s in shapes)


@pytest.mark.parametrize("flags", GRAD_FLAGS, ids=lambda f: "".join("G" if x else "-" for x in f))
@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=_shape_id)
def test_matmul_builds_torchs_chain_and_saves_the_same_tensors(shapes, flags):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in shapes]
    th, hg = both_tensors(arrays, flags)
    assert chain(hookgrad.matmul(*hg)) == chain(torch.matmul(*th))
    assert saved_log(hookgrad, hookgrad.matmul, *hg) == saved_log(torch, torch.matmul, *th)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=_shape_id)
def test_matmul_values_and_gradients_match_torch(shapes, dtype):
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]
    compare(lambda lib, a, b: a @ b, *arrays)


def test_matmul_of_a_non_contiguous_batch_folds_when_the_matrix_needs_grad():
    rng = np.random.default_rng(2)
    th, hg = both_tensors([rng.standard_normal((2, 5, 3)), rng.standard_normal((3, 4))],
                          (False, True))
    ours = chain(hookgrad.matmul(hg[0].transpose(0, 1), hg[1]))
    assert ours == chain(torch.matmul(th[0].transpose(0, 1), th[1]))
    assert ours.startswith("UnsafeViewBackward0(MmBackward0")


def test_matmul_of_a_non_contiguous_batch_uses_bmm_when_only_it_needs_grad():
    rng = np.random.default_rng(2)
    th, hg = both_tensors([rng.standard_normal((2, 5, 3)), rng.standard_normal((3, 4))],
                          (True, False))
    assert "BmmBackward0" in chain(torch.matmul(th[0].transpose(0, 1), th[1]))
    assert "BmmBackward0" in chain(hookgrad.matmul(hg[0].transpose(0, 1), hg[1]))


@pytest.mark.parametrize("op, shapes", [
    ("mm", ((2, 3), (3, 4))), ("bmm", ((2, 2, 3), (2, 3, 4))), ("mv", ((2, 3), (3,))),
    ("dot", ((3,), (3,))),
])
@pytest.mark.parametrize("flags", GRAD_FLAGS, ids=lambda f: "".join("G" if x else "-" for x in f))
def test_products_save_what_torch_saves(op, shapes, flags):
    rng = np.random.default_rng(3)
    th, hg = both_tensors([rng.standard_normal(s) for s in shapes], flags)
    assert saved_log(hookgrad, getattr(hookgrad, op), *hg) == \
        saved_log(torch, getattr(torch, op), *th)


@pytest.mark.parametrize("op, shapes, names", [
    ("mm", ((2, 3), (3, 4)), ("_saved_self", "_saved_mat2")),
    ("bmm", ((2, 2, 3), (2, 3, 4)), ("_saved_self", "_saved_mat2")),
    ("mv", ((2, 3), (3,)), ("_saved_self", "_saved_vec")),
    ("dot", ((3,), (3,)), ("_saved_self", "_saved_tensor")),
])
def test_products_expose_saved_tensors_under_torchs_names(op, shapes, names):
    rng = np.random.default_rng(4)
    th, hg = both_tensors([rng.standard_normal(s) for s in shapes], (True, True))
    ours, theirs = getattr(hookgrad, op)(*hg).grad_fn, getattr(torch, op)(*th).grad_fn
    assert ours.name() == theirs.name()
    for name in names:
        assert_close(getattr(ours, name), getattr(theirs, name), what=name)


@pytest.mark.parametrize("shapes", [((2, 3), (3,)), ((3,), (3, 4)), ((3, 4), (4, 2)),
                                    ((2, 2, 3), (2, 3, 4))], ids=_shape_id)
@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_matmul_of_integers_matches_torch(shapes, dtype):
    rng = np.random.default_rng(5)
    compare(lambda lib, a, b: a @ b, *[rng.integers(-5, 5, s).astype(dtype) for s in shapes])


def test_matmul_in_half_precision_matches_torch():
    rng = np.random.default_rng(6)
    compare(lambda lib, a, b: a @ b, rng.standard_normal((4, 8)).astype(np.float16),
            rng.standard_normal((8, 3)).astype(np.float16), grad=False)


@pytest.mark.parametrize("shapes", [((2, 3), (3, 4)), ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)),
                                    ((5, 2, 3), (5, 3, 4)), ((3,), (3,)), ((2, 3), (3,)),
                                    ((7, 1, 2, 3), (5, 3, 4))], ids=_shape_id)
def test_matmul_double_backward_matches_torch(shapes):
    rng = np.random.default_rng(7)
    compare_double_backward(lambda lib, a, b: a @ b, *[rng.standard_normal(s) for s in shapes])


@pytest.mark.parametrize("shapes", [((2, 3), (3, 2)), ((2, 1, 3), (2, 3, 2)), ((3,), (2, 3, 2))],
                         ids=_shape_id)
def test_matmul_passes_gradcheck_and_gradgradcheck(shapes):
    rng = np.random.default_rng(8)
    inputs = [hookgrad.tensor(rng.standard_normal(s), requires_grad=True) for s in shapes]
    assert hookgrad.autograd.gradcheck(hookgrad.matmul, inputs)
    assert hookgrad.autograd.gradgradcheck(hookgrad.matmul, inputs)


@given(st.data())
@settings(max_examples=40, deadline=None)
def test_matmul_broadcasting_fuzz_matches_torch(data):
    n, m, p = (data.draw(st.integers(1, 3)) for _ in range(3))
    batch = data.draw(st.lists(st.integers(1, 3), max_size=3))
    ones1 = data.draw(st.lists(st.booleans(), min_size=len(batch), max_size=len(batch)))
    ones2 = data.draw(st.lists(st.booleans(), min_size=len(batch), max_size=len(batch)))
    drop1, drop2 = data.draw(st.integers(0, len(batch))), data.draw(st.integers(0, len(batch)))
    batch1 = [1 if o else b for b, o in zip(batch, ones1)][drop1:]
    batch2 = [1 if o else b for b, o in zip(batch, ones2)][drop2:]
    shape1 = tuple(batch1) + ((n, m) if data.draw(st.booleans()) or batch1 else (m,))
    shape2 = tuple(batch2) + ((m, p) if data.draw(st.booleans()) or batch2 else (m,))
    flags = data.draw(st.sampled_from(GRAD_FLAGS))
    rng = np.random.default_rng(9)
    arrays = [rng.standard_normal(shape1), rng.standard_normal(shape2)]
    compare(lambda lib, a, b: lib.matmul(a, b), *arrays, requires_grad=list(flags))
    th, hg = both_tensors(arrays, flags)
    theirs = chain(torch.matmul(*th))
    assert chain(hookgrad.matmul(*hg)) == theirs


# -- products: errors --------------------------------------------------------------------------
def _zeros(lib, *shape, dtype=None):
    return lib.zeros(*shape, dtype=dtype or lib.float32)


PRODUCT_ERRORS = {
    "mm inner sizes": lambda lib: lib.mm(_zeros(lib, 2, 3), _zeros(lib, 4, 5)),
    "mm dtypes": lambda lib: lib.mm(_zeros(lib, 2, 3), _zeros(lib, 3, 5, dtype=lib.float64)),
    "mm self not a matrix": lambda lib: lib.mm(_zeros(lib, 2, 3, 1), _zeros(lib, 3, 5)),
    "mm mat2 not a matrix": lambda lib: lib.mm(_zeros(lib, 2, 3), _zeros(lib, 3)),
    "mm of bools": lambda lib: lib.mm(lib.ones(2, 3, dtype=lib.bool),
                                      lib.ones(3, 2, dtype=lib.bool)),
    "mv sizes": lambda lib: lib.mv(_zeros(lib, 2, 3), _zeros(lib, 4)),
    "mv dims": lambda lib: lib.mv(_zeros(lib, 2, 3), _zeros(lib, 3, 1)),
    "mv dtypes": lambda lib: lib.mv(_zeros(lib, 2, 3), _zeros(lib, 3, dtype=lib.float64)),
    "dot sizes": lambda lib: lib.dot(_zeros(lib, 3), _zeros(lib, 4)),
    "dot dims": lambda lib: lib.dot(_zeros(lib, 3, 1), _zeros(lib, 3)),
    "dot dtypes": lambda lib: lib.dot(_zeros(lib, 3), _zeros(lib, 3, dtype=lib.float64)),
    "dot of bools": lambda lib: lib.dot(lib.ones(3, dtype=lib.bool), lib.ones(3, dtype=lib.bool)),
    "bmm inner sizes": lambda lib: lib.bmm(_zeros(lib, 2, 3, 4), _zeros(lib, 2, 5, 6)),
    "bmm batch sizes": lambda lib: lib.bmm(_zeros(lib, 2, 3, 4), _zeros(lib, 3, 4, 6)),
    "bmm dims": lambda lib: lib.bmm(_zeros(lib, 2, 3, 4), _zeros(lib, 4, 6)),
    "bmm dtypes": lambda lib: lib.bmm(_zeros(lib, 2, 3, 4), _zeros(lib, 2, 4, 6,
                                                                    dtype=lib.float64)),
    "matmul 0-d": lambda lib: lib.matmul(_zeros(lib, 2, 3), lib.tensor(1.0)),
    "matmul vector sizes": lambda lib: lib.matmul(_zeros(lib, 3), _zeros(lib, 4)),
    "matmul matrix-vector sizes": lambda lib: lib.matmul(_zeros(lib, 2, 3), _zeros(lib, 4)),
    "matmul vector-matrix sizes": lambda lib: lib.matmul(_zeros(lib, 3), _zeros(lib, 4, 5)),
    "matmul folded sizes": lambda lib: lib.matmul(_zeros(lib, 5, 2, 3), _zeros(lib, 4, 4)),
    "matmul folded vector": lambda lib: lib.matmul(_zeros(lib, 5, 2, 3), _zeros(lib, 4)),
    "matmul batched inner": lambda lib: lib.matmul(_zeros(lib, 5, 2, 3), _zeros(lib, 5, 4, 4)),
    "matmul batch broadcast": lambda lib: lib.matmul(_zeros(lib, 5, 2, 3), _zeros(lib, 6, 3, 4)),
    "matmul 2d-3d inner": lambda lib: lib.matmul(_zeros(lib, 2, 3), _zeros(lib, 5, 4, 4)),
    "matmul dtypes": lambda lib: lib.matmul(_zeros(lib, 2, 3),
                                            _zeros(lib, 5, 3, 4, dtype=lib.float64)),
    "matmul long and float": lambda lib: lib.matmul(lib.ones(3, dtype=lib.int64),
                                                    _zeros(lib, 3)),
    "matmul with a number": lambda lib: lib.matmul(_zeros(lib, 2, 3), 3),
}


@pytest.mark.parametrize("fn", PRODUCT_ERRORS.values(), ids=PRODUCT_ERRORS.keys())
def test_product_errors_match_torch(fn):
    assert_same_error(fn)


def test_matmul_shape_error_names_both_original_shapes():
    with pytest.raises(RuntimeError, match=r"in matmul: shapes \[5, 2, 3\] and \[4, 4\]"):
        hookgrad.matmul(hookgrad.zeros(5, 2, 3), hookgrad.zeros(4, 4))


def test_matmul_operator_with_a_list_raises_type_error():
    with pytest.raises(TypeError):
        hookgrad.zeros(2, 3) @ [1.0, 2.0, 3.0]


# -- einsum -------------------------------------------------------------------------------------
EINSUMS = [
    ("ij,jk->ik", (2, 3), (3, 4)), ("ij,jk", (2, 3), (3, 4)), ("ij->ji", (2, 3)),
    ("ij->", (2, 3)), ("ij->j", (2, 3)), ("ii->i", (3, 3)), ("ii", (3, 3)), ("iij->j", (3, 3, 4)),
    ("ii,i->i", (3, 3), (3,)), ("i,j->ij", (3,), (4,)), ("ij,ij->ij", (2, 3), (2, 3)),
    ("bij,bjk->bik", (2, 3, 4), (2, 4, 5)), ("...ij,...jk->...ik", (2, 1, 3, 4), (5, 4, 2)),
    ("...j,j...->...", (2, 3, 4), (4, 1, 3)), ("...i->i", (2, 3)), ("i...->i", (2, 3)),
    ("...", (2, 3)), ("i,i->i", (1,), (3,)), ("bi,i->b", (2, 1), (3,)),
    ("ij,jk,kl->il", (2, 3), (3, 4), (4, 2)), ("Ab,bA", (2, 3), (3, 2)),
    ("i j -> j i", (2, 3)), ("ijk,ik->j", (2, 3, 4), (2, 4)), ("i,i,i->", (3,), (3,), (3,)),
]


def _einsum_id(case):
    return case[0].replace(" ", "_") + ":" + "|".join("x".join(map(str, s)) for s in case[1:])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", EINSUMS, ids=_einsum_id)
def test_einsum_values_and_gradients_match_torch(case, dtype):
    equation, *shapes = case
    rng = np.random.default_rng(10)
    compare(lambda lib, *ops: lib.einsum(equation, *ops),
            *[rng.standard_normal(s).astype(dtype) for s in shapes])


@pytest.mark.parametrize("case", [c for c in EINSUMS if c[0] in
                                  ("ij,jk->ik", "ii->i", "ij->j", "ii,i->i", "bi,i->b",
                                   "...ij,...jk->...ik", "ij,jk,kl->il", "i,i,i->")],
                         ids=_einsum_id)
def test_einsum_double_backward_matches_torch(case):
    equation, *shapes = case
    rng = np.random.default_rng(11)
    compare_double_backward(lambda lib, *ops: lib.einsum(equation, *ops),
                            *[rng.standard_normal(s) for s in shapes])


def test_einsum_passes_gradgradcheck_with_a_diagonal_and_broadcasting():
    rng = np.random.default_rng(12)
    inputs = [hookgrad.tensor(rng.standard_normal(s), requires_grad=True)
              for s in ((3, 3), (2, 1), (3,))]

    def fn(a, b, c):
        return hookgrad.einsum("ii,bj,j->bi", a, b, c)

    assert hookgrad.autograd.gradcheck(fn, inputs)
    assert hookgrad.autograd.gradgradcheck(fn, inputs)


def test_einsum_accepts_a_list_of_operands():
    rng = np.random.default_rng(13)
    compare(lambda lib, a, b: lib.einsum("ij,jk", [a, b]), rng.standard_normal((2, 3)),
            rng.standard_normal((3, 4)))


def test_einsum_accepts_the_sublist_format():
    rng = np.random.default_rng(14)
    compare(lambda lib, a, b: lib.einsum(a, [0, 1], b, [1, 2], [0, 2]),
            rng.standard_normal((2, 3)), rng.standard_normal((3, 4)))


def test_einsum_of_integers_matches_torch():
    rng = np.random.default_rng(15)
    compare(lambda lib, a, b: lib.einsum("ij,jk->ik", a, b), rng.integers(-3, 3, (2, 3)),
            rng.integers(-3, 3, (3, 4)))


def test_einsum_one_operand_integer_sum_gives_int64_as_torch():
    compare(lambda lib, a: lib.einsum("ij->", a), np.ones((2, 3), np.int32))


EINSUM_ERRORS = {
    "size clash": lambda lib: lib.einsum("ij,jk->ik", _zeros(lib, 2, 3), _zeros(lib, 5, 2)),
    "unknown output": lambda lib: lib.einsum("ij->ik", _zeros(lib, 2, 3)),
    "too many subscripts": lambda lib: lib.einsum("ijk->i", _zeros(lib, 2, 3)),
    "too few operands": lambda lib: lib.einsum("ij,jk->ik", _zeros(lib, 2, 3)),
    "too many operands": lambda lib: lib.einsum("ij->ij", _zeros(lib, 2, 3), _zeros(lib, 2, 3)),
    "bad character": lambda lib: lib.einsum("i#->i", _zeros(lib, 2, 3)),
    "repeated output": lambda lib: lib.einsum("ij->iij", _zeros(lib, 2, 3)),
    "diagonal sizes": lambda lib: lib.einsum("ii->i", _zeros(lib, 2, 3)),
    "ellipsis too long": lambda lib: lib.einsum("...ij->...ij", _zeros(lib, 2)),
    "dtypes": lambda lib: lib.einsum("ij,ij->", _zeros(lib, 2, 3),
                                     _zeros(lib, 2, 3, dtype=lib.float64)),
}


@pytest.mark.parametrize("fn", EINSUM_ERRORS.values(), ids=EINSUM_ERRORS.keys())
def test_einsum_errors_match_torch(fn):
    assert_same_error(fn)


# -- norms --------------------------------------------------------------------------------------
NORMS = {
    "norm()": lambda lib, x: x.norm(),
    "norm(p=1)": lambda lib, x: x.norm(p=1),
    "norm(3)": lambda lib, x: x.norm(3),
    "norm(1.5, dim=1)": lambda lib, x: x.norm(1.5, dim=1),
    "norm(0.5, dim=(0, 2))": lambda lib, x: x.norm(0.5, dim=(0, 2)),
    "norm(inf, dim=2, keepdim)": lambda lib, x: x.norm(float("inf"), 2, True),
    "norm(-inf)": lambda lib, x: x.norm(-float("inf")),
    "norm(fro, dim=(0, 1))": lambda lib, x: lib.norm(x, "fro", dim=(0, 1)),
    "norm(fro, dim=1, keepdim)": lambda lib, x: lib.norm(x, p="fro", dim=1, keepdim=True),
    "norm(None)": lambda lib, x: lib.norm(x, p=None),
    "vector_norm()": lambda lib, x: lib.linalg.vector_norm(x),
    "vector_norm(0)": lambda lib, x: lib.linalg.vector_norm(x, 0, dim=1),
    "vector_norm(-1)": lambda lib, x: lib.linalg.vector_norm(x, -1),
    "vector_norm(4, dim=-1)": lambda lib, x: lib.linalg.vector_norm(x, ord=4, dim=-1),
    "vector_norm(dim=[])": lambda lib, x: lib.linalg.vector_norm(x, dim=[]),
}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("fn", NORMS.values(), ids=NORMS.keys())
def test_norm_values_and_gradients_match_torch(fn, dtype):
    rng = np.random.default_rng(16)
    compare(fn, rng.standard_normal((3, 4, 5)).astype(dtype))


@pytest.mark.parametrize("fn", NORMS.values(), ids=NORMS.keys())
def test_norm_graph_and_saved_tensors_match_torch(fn):
    rng = np.random.default_rng(17)
    th, hg = both_tensors([rng.standard_normal((3, 4, 5))], (True,))
    ours, theirs = fn(hookgrad, hg[0]), fn(torch, th[0])
    assert chain(ours) == chain(theirs)
    assert saved_log(hookgrad, lambda x: fn(hookgrad, x), hg[0]) == \
        saved_log(torch, lambda x: fn(torch, x), th[0])
    assert ours.grad_fn._saved_ord == theirs.grad_fn._saved_ord


@pytest.mark.parametrize("ord", [2, 1, 3, 1.5, 0.5, math.inf])
def test_norm_of_zeros_has_torchs_gradient(ord):
    compare(lambda lib, x: lib.linalg.vector_norm(x, ord, dim=1),
            np.array([[0.0, 0.0, 0.0], [1.0, 0.0, -2.0]]))


def test_inf_norm_shares_the_gradient_among_ties_like_torch():
    compare(lambda lib, x: x.norm(float("inf"), dim=1),
            np.array([[1.0, -3.0, 3.0], [2.0, 2.0, -2.0]]))


def test_vector_norm_in_a_wider_dtype_matches_torch():
    rng = np.random.default_rng(18)
    compare(lambda lib, x: lib.linalg.vector_norm(x, dim=1, dtype=lib.float64),
            rng.standard_normal((3, 4)).astype(np.float32))


@pytest.mark.parametrize("fn", [lambda lib, x: x.norm(), lambda lib, x: x.norm(1, dim=0),
                                lambda lib, x: x.norm(3, dim=1, keepdim=True)])
def test_norm_double_backward_matches_torch(fn):
    rng = np.random.default_rng(19)
    compare_double_backward(fn, rng.standard_normal((3, 4)))


NORM_ERRORS = {
    "integer input": lambda lib: lib.ones(3, dtype=lib.int32).norm(),
    "inf norm of empty": lambda lib: lib.linalg.vector_norm(lib.zeros(0), float("inf")),
    "fro over three dims": lambda lib: lib.norm(lib.zeros(2, 3, 4), "fro", dim=(0, 1, 2)),
    "narrowing dtype": lambda lib: lib.linalg.vector_norm(lib.zeros(3, dtype=lib.float64),
                                                          dtype=lib.float32),
    "dim out of range": lambda lib: lib.zeros(2, 3).norm(dim=2),
}


@pytest.mark.parametrize("fn", NORM_ERRORS.values(), ids=NORM_ERRORS.keys())
def test_norm_errors_match_torch(fn):
    assert_same_error(fn)


def test_nuclear_norm_is_torchs():
    compare(lambda lib, a: lib.norm(a, p="nuc"), np.arange(6.0).reshape(2, 3))
