"""Triangles, diagonals and the structure ops (kron, meshgrid, tensor_split ...) against torch."""
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import hookgrad
from tests.conftest import (assert_close, assert_same_error, compare, compare_double_backward,
                            grad_fn_chain, saved_log)

RNG = np.random.default_rng(11)
M = RNG.standard_normal((4, 5))
SQ = RNG.standard_normal((3, 3))
B3 = RNG.standard_normal((2, 3, 4))
V = RNG.standard_normal(4)
W = RNG.standard_normal(3)

ONE_INPUT = [
    ("tril", lambda lib, x: lib.tril(x)),
    ("tril_offset", lambda lib, x: x.tril(-1)),
    ("triu", lambda lib, x: lib.triu(x, 2)),
    ("diagonal", lambda lib, x: lib.diagonal(x)),
    ("diagonal_offset", lambda lib, x: x.diagonal(1)),
    ("diagonal_negative", lambda lib, x: x.diagonal(-2)),
    ("diagonal_dims", lambda lib, x: x.diagonal(0, 1, 0)),
    ("diagonal_past_end", lambda lib, x: x.diagonal(9)),
    ("diag", lambda lib, x: lib.diag(x, 1)),
    ("diag_embed", lambda lib, x: lib.diag_embed(x)),
    ("diag_embed_offset", lambda lib, x: lib.diag_embed(x, -1, 0, 2)),
    ("diagflat", lambda lib, x: lib.diagflat(x, 1)),
    ("trace", lambda lib, x: lib.trace(x)),
    ("kron_self", lambda lib, x: lib.kron(x, x[:2, :3])),
    ("tensor_split_sections", lambda lib, x: lib.tensor_split(x, 3, dim=1)),
    ("tensor_split_indices", lambda lib, x: x.tensor_split([1, 3, 9])),
    ("tensor_split_tensor", lambda lib, x: lib.tensor_split(x, lib.tensor([2]), 1)),
    ("repeat_interleave", lambda lib, x: lib.repeat_interleave(x, 2, dim=1)),
    ("repeat_interleave_flat", lambda lib, x: x.repeat_interleave(3)),
    ("repeat_interleave_tensor", lambda lib, x: lib.repeat_interleave(
        x, lib.tensor([1, 0, 2, 1]), dim=0)),
    ("tile", lambda lib, x: lib.tile(x, (2,))),
    ("tile_more_dims", lambda lib, x: x.tile((2, 1, 2))),
    ("rot90", lambda lib, x: lib.rot90(x)),
    ("rot90_k2", lambda lib, x: lib.rot90(x, 2, [1, 0])),
    ("rot90_negative", lambda lib, x: x.rot90(-3)),
    ("broadcast_to", lambda lib, x: lib.broadcast_to(x, (2, 4, 5))),
    ("ravel", lambda lib, x: lib.ravel(x.t())),
    ("take", lambda lib, x: lib.take(x, lib.tensor([[0, 7], [-1, 7]]))),
    ("atleast_3d", lambda lib, x: lib.atleast_3d(x)),
    ("atleast_2d_many", lambda lib, x: lib.atleast_2d(x[0], x, x[0, 0])),
    ("atleast_1d_list", lambda lib, x: lib.atleast_1d([x[0, 0], x])),
    ("dstack", lambda lib, x: lib.dstack([x, x * 2])),
    ("column_stack", lambda lib, x: lib.column_stack([x[:, 0], x[:, 1], x[:, :3]])),
    ("row_stack", lambda lib, x: lib.row_stack([x[0], x])),
    ("block_diag", lambda lib, x: lib.block_diag(x, x[0], x[0, 0], x[:2, :1])),
    ("cartesian_prod", lambda lib, x: lib.cartesian_prod(x[0], x[1, :2], x[2, :3])),
    ("meshgrid_ij", lambda lib, x: lib.meshgrid(x[0], x[1, :3], indexing="ij")),
    ("meshgrid_xy", lambda lib, x: lib.meshgrid([x[0], x[1, :3], x[2, :2]], indexing="xy")),
    ("meshgrid_scalar", lambda lib, x: lib.meshgrid(x[0, 0], x[1], indexing="ij")),
    ("broadcast_tensors", lambda lib, x: lib.broadcast_tensors(x, x[0], x[:1, :1])),
]


@pytest.mark.parametrize("name,fn", ONE_INPUT, ids=[s[0] for s in ONE_INPUT])
@pytest.mark.parametrize("array", [M, M.astype(np.float32)], ids=["f64", "f32"])
def test_structure_ops_match_torch(name, fn, array):
    compare(fn, array)


@pytest.mark.parametrize("name,fn", [
    ("tril", lambda lib, x: lib.tril(x, 1)),
    ("triu", lambda lib, x: lib.triu(x)),
    ("diagonal", lambda lib, x: lib.diagonal(x, 1, -1, 0)),
    ("diag_embed", lambda lib, x: lib.diag_embed(x, 1, 0, -1)),
    ("rot90", lambda lib, x: lib.rot90(x, 1, [2, 0])),
    ("repeat_interleave", lambda lib, x: x.repeat_interleave(2, -1)),
    ("tensor_split", lambda lib, x: x.tensor_split(2, -1)),
])
def test_batched_inputs(name, fn):
    compare(fn, B3)


@pytest.mark.parametrize("name,fn", [
    ("outer", lambda lib, v, w: lib.outer(v, w)),
    ("ger", lambda lib, v, w: v.ger(w)),
    ("kron", lambda lib, v, w: lib.kron(v, w)),
    ("cartesian_prod", lambda lib, v, w: lib.cartesian_prod(v, w)),
    ("meshgrid", lambda lib, v, w: lib.meshgrid(v, w, indexing="xy")),
    ("block_diag", lambda lib, v, w: lib.block_diag(v, w)),
    ("column_stack", lambda lib, v, w: lib.column_stack([v, v])),
    ("broadcast_tensors", lambda lib, v, w: lib.broadcast_tensors(v, w[:, None])),
])
def test_two_vector_ops(name, fn):
    compare(fn, V, W)


@pytest.mark.parametrize("fn", [
    lambda lib, a, b: lib.cross(a, b, dim=1),
    lambda lib, a, b: lib.linalg.cross(a, b),
    lambda lib, a, b: a.cross(b[:, :1], dim=0),
    lambda lib, a, b: lib.kron(a, b),
])
def test_cross_and_kron(fn):
    compare(fn, SQ, RNG.standard_normal((3, 3)))


def test_cross_without_dim_warns_and_uses_the_first_dim_of_size_3():
    with pytest.warns(UserWarning, match="without specifying the dim"):
        compare(lambda lib, a, b: lib.cross(a, b), SQ, SQ[::-1].copy())


def test_meshgrid_without_indexing_warns():
    with pytest.warns(UserWarning, match="indexing argument"):
        compare(lambda lib, v, w: lib.meshgrid(v, w), V, W)


def test_integer_inputs():
    ints = (M * 10).astype(np.int64)
    compare(lambda lib, x: (lib.tril(x), lib.trace(x[:, :4]), lib.diag(x[0]), lib.kron(x, x),
                            lib.block_diag(x, x[0] * 1.5), lib.rot90(x)), ints)


@pytest.mark.parametrize("fn,names", [
    (lambda lib, x: lib.tril(x), ["TrilBackward0"]),
    (lambda lib, x: lib.triu(x), ["TriuBackward0"]),
    (lambda lib, x: lib.diagonal(x), ["DiagonalBackward0"]),
    (lambda lib, x: lib.diag(x), ["DiagonalBackward0_copy"]),
    (lambda lib, x: lib.diag(x[0]), ["DiagEmbedBackward0", "SelectBackward0"]),
    (lambda lib, x: lib.diag_embed(x), ["DiagEmbedBackward0"]),
    (lambda lib, x: lib.trace(x), ["TraceBackward0"]),
    (lambda lib, x: lib.kron(x, x), ["UnsafeViewBackward0", "MulBackward0",
                                      "UnsafeViewBackward0"]),
    (lambda lib, x: lib.rot90(x), ["Rot90Backward0"]),
    (lambda lib, x: lib.block_diag(x, x), ["BlockDiagBackward0"]),
    (lambda lib, x: lib.tile(x, (2,)), ["RepeatBackward0"]),
    (lambda lib, x: lib.repeat_interleave(x, 2, 1),
     ["ViewBackward0", "CloneBackward0", "ExpandBackward0", "UnsqueezeBackward0"]),
    (lambda lib, x: lib.repeat_interleave(x, lib.tensor([1, 2, 0, 1]), 0),
     ["IndexSelectBackward0"]),
    (lambda lib, x: lib.tensor_split(x, 2)[1], ["SliceBackward0"]),
    (lambda lib, x: lib.meshgrid(x[0], x[1], indexing="xy")[0],
     ["ExpandBackward0", "ViewBackward0", "SelectBackward0"]),
    (lambda lib, x: lib.cartesian_prod(x[0], x[1]), ["StackBackward0"]),
    (lambda lib, x: lib.atleast_3d(x), ["UnsqueezeBackward0"]),
    (lambda lib, x: lib.dstack([x, x]), ["CatBackward0"]),
    (lambda lib, x: lib.take(x, lib.tensor([1])), ["TakeBackward0"]),
    (lambda lib, x: lib.cross(x[:3, :3], x[:3, 1:4], dim=1),
     ["LinalgCrossBackward0", "SliceBackward0", "SliceBackward0"]),
])
def test_grad_fn_names(fn, names):
    chains = [grad_fn_chain(fn(lib, lib.tensor(M, requires_grad=True)) * 1)[1:]
              for lib in (torch, hookgrad)]
    assert chains[1] == chains[0]
    assert chains[0][:len(names)] == names


@pytest.mark.parametrize("fn", [
    lambda lib, x: lib.outer(x[0], x[1]),
    lambda lib, x: lib.take(x, lib.tensor([1, 3])),
    lambda lib, x: lib.cross(x[:3, :3], x[1:4, :3], dim=0),
    lambda lib, x: lib.kron(x, x[:2]),
])
def test_saved_tensors_match_torch(fn):
    logs = [saved_log(lib, lambda x: fn(lib, x), lib.tensor(M, requires_grad=True))
            for lib in (torch, hookgrad)]
    assert logs[1] == logs[0]


def test_saved_inspection_names():
    for lib in (torch, hookgrad):
        node = lib.diagonal(lib.tensor(M, requires_grad=True), 1, 1, 0).grad_fn
        assert (node._saved_offset, node._saved_dim1, node._saved_dim2) == (1, 1, 0)
        assert lib.tril(lib.tensor(M, requires_grad=True), 2).grad_fn._saved_diagonal == 2
        assert lib.rot90(lib.tensor(M, requires_grad=True), 3).grad_fn._saved_k == 3


@pytest.mark.parametrize("fn", [
    lambda lib, x: lib.tril(x, 1),
    lambda lib, x: lib.diagonal(x, 1),
    lambda lib, x: lib.diag_embed(x),
    lambda lib, x: lib.trace(x[:, :4]),
    lambda lib, x: lib.kron(x, x),
    lambda lib, x: lib.cross(x[:3, :3], x[1:4, :3].exp(), dim=0),
    lambda lib, x: lib.rot90(x),
    lambda lib, x: lib.block_diag(x, x[0]),
    lambda lib, x: lib.take(x, lib.tensor([1, 1, 3])),
])
def test_double_backward(fn):
    compare_double_backward(fn, M)


def test_gradcheck_cross():
    a = hookgrad.tensor(SQ, requires_grad=True)
    b = hookgrad.tensor(SQ.T.copy(), requires_grad=True)
    assert hookgrad.autograd.gradcheck(lambda x, y: hookgrad.cross(x, y, dim=0), (a, b))


def test_diagonal_is_a_writable_view():
    results = []
    for lib in (torch, hookgrad):
        base = lib.tensor(M, requires_grad=True)
        x = base * 1
        x.diagonal(1).mul_(3)
        x.sum().backward()
        results.append((x, base.grad, x.grad_fn.name()))
    assert_close(results[1][0], results[0][0])
    assert_close(results[1][1], results[0][1])
    assert results[1][2] == results[0][2]


@pytest.mark.parametrize("fn", [
    lambda lib, x: x.tril_(1),
    lambda lib, x: x.triu_(-1),
    lambda lib, x: x.fill_diagonal_(2.5),
    lambda lib, x: x.fill_diagonal_(-1.0, wrap=True),
])
def test_in_place_structure_ops(fn):
    tall = RNG.standard_normal((7, 3))
    results = []
    for lib in (torch, hookgrad):
        base = lib.tensor(tall, requires_grad=True)
        x = base * 1
        out = fn(lib, x)
        (out * lib.arange(out.numel()).reshape(out.shape)).sum().backward()
        results.append((out, base.grad, out.grad_fn.name()))
    assert_close(results[1][0], results[0][0])
    assert_close(results[1][1], results[0][1])
    assert results[1][2] == results[0][2]


def test_fill_diagonal_of_a_transposed_view():
    compare(lambda lib, x: (x * 1).t().fill_diagonal_(2.5), RNG.standard_normal((7, 3)))


def test_fill_diagonal_of_a_cube():
    compare(lambda lib, x: (x * 1).fill_diagonal_(2.0), RNG.standard_normal((3, 3, 3)))


def test_meshgrid_refuses_matrices():
    message = "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got:"
    for lib in (torch, hookgrad):
        with pytest.raises(RuntimeError, match=message):
            lib.meshgrid(lib.zeros(2, 2), indexing="ij")


def test_broadcast_shapes():
    assert hookgrad.broadcast_shapes((3, 1), (4,), 1) == torch.broadcast_shapes((3, 1), (4,), 1)
    assert isinstance(hookgrad.broadcast_shapes((2,)), hookgrad.Size)


def test_broadcast_tensors_returns_a_tensor_of_the_right_shape_unchanged():
    x = hookgrad.tensor(M, requires_grad=True)
    assert hookgrad.broadcast_tensors(x, x[0])[0] is x


@pytest.mark.parametrize("fn", [
    lambda lib: lib.tril(lib.zeros(3)),
    lambda lib: lib.trace(lib.zeros(3)),
    lambda lib: lib.trace(lib.ones(2, 2, dtype=lib.bool)),  # no bool kernel
    lambda lib: lib.trace(lib.ones(3, dtype=lib.bool)),  # ... checked before the rank
    lambda lib: lib.diag(lib.zeros(2, 2, 2)),
    lambda lib: lib.diag(lib.tensor(1.)),
    lambda lib: lib.diagonal(lib.zeros(2, 2), 0, 1, 1),
    lambda lib: lib.outer(lib.zeros(2, 2), lib.zeros(2)),
    lambda lib: lib.linalg.cross(lib.zeros(4, 2), lib.zeros(4, 2)),
    lambda lib: lib.cross(lib.zeros(3, 4), lib.zeros(3, 4), dim=1),
    lambda lib: lib.linalg.cross(lib.zeros(2, 1, 3), lib.zeros(4, 3)),
    lambda lib: lib.meshgrid(lib.zeros(2), indexing="foo"),
    lambda lib: lib.rot90(lib.zeros(3)),
    lambda lib: lib.rot90(lib.zeros(3, 3), 1, [0, 1, 1]),
    lambda lib: lib.rot90(lib.zeros(3, 3), 1, [0, 0]),
    lambda lib: lib.block_diag(lib.zeros(2, 2, 2)),
    lambda lib: lib.tensor_split(lib.arange(7), 0),
    lambda lib: lib.tensor_split(lib.tensor(1), 2),
    lambda lib: lib.tensor_split(lib.arange(7), lib.tensor([1.])),
    lambda lib: lib.repeat_interleave(lib.tensor([1, 2]), -1),
    lambda lib: lib.repeat_interleave(lib.tensor([1, 2]), lib.tensor([1, 2, 3])),
    lambda lib: lib.take(lib.zeros(2, 2), lib.tensor([4])),
    lambda lib: lib.broadcast_tensors(lib.zeros(3, 4), lib.zeros(3)),
    lambda lib: lib.broadcast_shapes((3, 1), (2, 4)),
    lambda lib: lib.zeros(2, 3, 4).fill_diagonal_(1.0),
    lambda lib: lib.zeros(3).fill_diagonal_(1.0),
])
def test_errors_match_torch(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same_error(fn)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.repeat_interleave(lib.tensor([2, 0, 1])),
    lambda lib: lib.repeat_interleave(lib.tensor([1, 2]), lib.tensor([2])),
    lambda lib: lib.repeat_interleave(lib.tensor(3), 2),
    lambda lib: lib.block_diag(),
    lambda lib: lib.tensor_split(lib.arange(7), lib.tensor(3)),
    lambda lib: lib.trace(lib.tensor([[1, 2], [3, 4]])),
])
def test_index_and_edge_forms(fn):
    ours, theirs = fn(hookgrad), fn(torch)
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    for a, b in zip(ours, theirs):
        assert_close(a, b)


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=2, max_size=4), data=st.data())
def test_diagonals_fuzzed(shape, data):
    ndim = len(shape)
    dim1, dim2 = data.draw(st.lists(st.integers(0, ndim - 1), min_size=2, max_size=2,
                                    unique=True))
    offset = data.draw(st.integers(-4, 4))
    array = np.random.default_rng(ndim).standard_normal(shape)
    compare(lambda lib, x: (lib.diagonal(x, offset, dim1, dim2),
                            lib.diag_embed(x, offset, dim1, dim2), lib.tril(x, offset),
                            lib.triu(x, offset)), array)
