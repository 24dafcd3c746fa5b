"""einsum builds torch's graph: not one node but torch's decomposition (diagonal, movedim,
unsqueeze, permute, sum, mul, reshape, bmm, view). For each equation the whole backward graph is
walked in both libraries — every node's name, its saved attributes (tensors by shape, dtype and
strides) and its edges, down to the leaves — together with the result's shape and strides, the
values, the float64 gradients, and gradcheck / double backward for a few families."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import assert_close, assert_same_error, compare, compare_double_backward

import hookgrad

CASES = [
    # matrix products, transposed and batched
    ("ij,jk->ik", (2, 3), (3, 4)), ("ij,kj->ik", (3, 4), (5, 4)), ("ij,jk", (2, 3), (3, 4)),
    ("ij,jk->ki", (2, 3), (3, 4)), ("ji,jk->ik", (3, 2), (3, 4)), ("ij,j->i", (2, 3), (3,)),
    ("j,ij->i", (3,), (2, 3)), ("bij,bjk->bik", (5, 2, 3), (5, 3, 4)),
    ("bij,bjk->bki", (5, 2, 3), (5, 3, 4)), ("bhqd,bhkd->bhqk", (2, 3, 4, 5), (2, 3, 6, 5)),
    ("ijk,ikl->jl", (2, 3, 4), (2, 4, 5)), ("ij,jkl->lik", (2, 3), (3, 4, 5)),
    ("ij,jkl->kli", (2, 3), (3, 4, 5)), ("ijm,jk->kim", (2, 3, 6), (3, 4)),
    ("ijm,jk->ikm", (2, 3, 6), (3, 4)),
    # outer products and elementwise products (no bmm)
    ("i,j->ij", (3,), (4,)), ("ab,cd->abcd", (2, 3), (4, 5)), ("i,i->i", (3,), (3,)),
    ("ij,ij->ij", (3, 4), (3, 4)), ("i,->i", (3,), ()), (",->", (), ()),
    # full contractions
    ("i,i->", (3,), (3,)), ("i,i", (3,), (3,)), ("ij,ij->", (3, 4), (3, 4)),
    ("ij,ji->", (3, 4), (4, 3)), ("Ba,aB->", (2, 3), (3, 2)), ("ij,k->", (2, 3), (4,)),
    # one operand: permutes, sums, traces, diagonals
    ("ij->ji", (3, 4)), ("ij", (3, 4)), ("ba", (3, 4)), ("ijk->kji", (2, 3, 4)), ("->", ()),
    ("ij->", (3, 4)), ("ij->j", (3, 4)), ("ii->", (3, 3)), ("ii", (3, 3)), ("ii->i", (3, 3)),
    ("iii->i", (3, 3, 3)), ("iji->j", (3, 4, 3)), ("ijkj->ik", (2, 3, 4, 3)),
    ("iij,jk->ik", (2, 2, 3), (3, 4)),
    # broadcasting, ellipsis
    ("...ij,...jk->...ik", (2, 2, 3), (3, 4)), ("...ij,...jk", (2, 2, 3), (1, 3, 4)),
    ("...ij,...jk->ik", (5, 2, 3), (5, 3, 4)), ("...ij->ij", (5, 2, 3)), ("i...->...", (3, 4, 5)),
    ("i...->i", (2, 3, 4)), ("...,...->...", (3, 4), (4,)), ("...i,...i->...", (2, 3, 4), (3, 4)),
    ("ij,jk->ik", (2, 3), (1, 4)), ("ij,jk->ik", (2, 1), (3, 4)), ("ij,jk->ik", (2, 1), (1, 4)),
    ("ij,jk->ik", (1, 3), (3, 1)), ("ij,jk->ki", (2, 3), (3, 1)), ("ij,jk->ki", (1, 3), (3, 4)),
    ("aij,jk->kia", (1, 2, 3), (3, 4)),
    # three and more operands, repeated operand labels
    ("ij,jk,kl->il", (2, 3), (3, 4), (4, 5)), ("i,j,k->ijk", (2,), (3,), (4,)),
    ("bn,anm,bm->ba", (2, 3), (4, 3, 5), (2, 5)), ("ij,jk,jl->ikl", (2, 3), (3, 4), (3, 5)),
    ("ij,jk,jl->ikl", (2, 3), (1, 4), (3, 5)), ("i,i,i->", (3,), (3,), (3,)),
    ("ii,bj,j->bi", (3, 3), (2, 1), (3,)), ("ab,bc,cd,da->", (2, 3), (3, 4), (4, 5), (5, 2)),
    # empty dims
    ("ij,jk->ik", (0, 3), (3, 4)), ("ij,jk->ik", (2, 0), (0, 4)),
]


def _case_id(case):
    return case[0] + ":" + "|".join("x".join(map(str, s)) for s in case[1:])


def _shown(value):
    if isinstance(value, (torch.Tensor, hookgrad.Tensor)):
        return ("tensor", tuple(value.shape), str(value.dtype).split(".")[-1],
                tuple(value.stride()))
    if isinstance(value, tuple):
        return tuple(_shown(item) for item in value)
    return value


def graph(lib, equation, arrays) -> tuple:
    """The result's (shape, strides) and its backward graph, walked depth first: per node its
    name, saved attributes and edges; a leaf as the operand it is."""
    operands = [lib.tensor(a, requires_grad=True) for a in arrays]
    leaves = {id(op): i for i, op in enumerate(operands)}
    result = lib.einsum(equation, *operands)
    nodes = []

    def walk(node, depth):
        if node is None:
            nodes.append((depth, None))
            return
        name = type(node).__name__
        if name == "AccumulateGrad":
            nodes.append((depth, "leaf", leaves[id(node.variable)]))
            return
        saved = tuple((key, _shown(getattr(node, key))) for key in sorted(dir(node))
                      if key.startswith("_saved_"))
        nodes.append((depth, name, saved, tuple(nr for _, nr in node.next_functions)))
        for child, _ in node.next_functions:
            walk(child, depth + 1)

    walk(result.grad_fn, 0)
    return (tuple(result.shape), result.stride()), nodes


def _arrays(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape) for shape in shapes]


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_einsum_builds_torchs_graph(case):
    equation, *shapes = case
    arrays = _arrays(shapes)
    assert graph(hookgrad, equation, arrays) == graph(torch, equation, arrays)


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_einsum_values_and_float64_gradients_as_torch(case):
    equation, *shapes = case
    compare(lambda lib, *ops: lib.einsum(equation, *ops), *_arrays(shapes, seed=1))


def test_einsum_float32_values_and_gradients_as_torch():
    arrays = [a.astype(np.float32) for a in _arrays([(2, 3, 4), (4, 5), (5,)], seed=2)]
    compare(lambda lib, a, b, c: lib.einsum("bij,jk,k->bi", a, b, c), *arrays)


def test_an_operand_without_grad_gets_no_edge_as_in_torch():
    arrays = _arrays([(2, 3), (3, 4)], seed=3)

    def edges(lib):
        a, b = lib.tensor(arrays[0], requires_grad=True), lib.tensor(arrays[1])
        node = lib.einsum("ij,jk->ik", a, b).grad_fn
        names = []
        while node is not None:
            names.append(type(node).__name__)
            node = node.next_functions[0][0] if node.next_functions else None
        return names

    assert edges(hookgrad) == edges(torch)


@pytest.mark.parametrize("equation, shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ii->i", [(3, 3)]), ("bij,bjk->bki", [(2, 2, 3), (2, 3, 2)]),
    ("ij,jk,kl->il", [(2, 3), (3, 2), (2, 2)]), ("...i,...i->...", [(2, 3), (3,)]),
    ("ij,k->", [(2, 3), (2,)]),
])
def test_einsum_passes_gradcheck_and_gradgradcheck(equation, shapes):
    inputs = [hookgrad.tensor(a, requires_grad=True) for a in _arrays(shapes, seed=4)]

    def fn(*ops):
        return hookgrad.einsum(equation, *ops)

    assert hookgrad.autograd.gradcheck(fn, inputs)
    assert hookgrad.autograd.gradgradcheck(fn, inputs)


@pytest.mark.parametrize("equation, shapes", [
    ("ij,jk->ki", [(2, 3), (3, 4)]), ("iij,jk->ik", [(2, 2, 3), (3, 4)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]), ("ij,jk->ik", [(2, 3), (1, 4)]),
])
def test_einsum_double_backward_as_torch(equation, shapes):
    compare_double_backward(lambda lib, *ops: lib.einsum(equation, *ops),
                            *_arrays(shapes, seed=5))


PARSE_ERRORS = {
    "ellipsis sizes": ("...i,...i", [(2, 3), (4, 3)]),
    "ellipsis sizes later dim": ("i...,j...->ij...", [(2, 3, 4), (2, 5, 4)]),
    "dot outside an ellipsis": ("i.j", [(2, 3)]),
    "a second ellipsis": ("....", [(2,)]),
    "a dot in the output": ("i->.", [(2,)]),
    "a second ellipsis in the output": ("i...->......", [(2,)]),
    "a stray minus": ("i-->i", [(2,)]),
    "a stray greater-than": ("i->>i", [(2,)]),
    "index counts spaces": ("i j -> j#", [(2, 3)]),
    "fewer operands before a bad character": ("i,j#", [(2,)]),
    "no operand": ("i", []),
}


@pytest.mark.parametrize("equation, shapes", PARSE_ERRORS.values(), ids=PARSE_ERRORS.keys())
def test_einsum_parse_errors_as_torch(equation, shapes):
    assert_same_error(lambda lib: lib.einsum(equation, *[lib.ones(s) for s in shapes]))


def test_einsum_of_bool_operands_refuses_the_product_as_torch():
    assert_same_error(lambda lib: lib.einsum("ij,ij->", lib.ones(2, 3, dtype=lib.bool),
                                             lib.ones(2, 3, dtype=lib.bool)))


def test_einsum_with_an_empty_ellipsis_in_the_output_as_torch():
    ours = hookgrad.einsum("i->i...", hookgrad.ones(2))
    assert_close(ours, torch.einsum("i->i...", torch.ones(2)))
