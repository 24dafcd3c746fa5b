"""select_scatter, slice_scatter, diagonal_scatter, index_copy and scatter_reduce against torch:
values, gradients (double backward too), node names and errors."""
import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_same_error, compare, compare_double_backward

R = np.random.default_rng(29)
X = R.standard_normal((4, 5))


EMBEDS = {
    "select_scatter": (lambda lib, x, s: lib.select_scatter(x, s, 0, 1), (5,)),
    "select_scatter negative": (lambda lib, x, s: x.select_scatter(s, 1, -2), (4,)),
    "slice_scatter": (lambda lib, x, s: lib.slice_scatter(x, s, 1, 1, 5, 2), (4, 2)),
    "slice_scatter default": (lambda lib, x, s: lib.slice_scatter(x, s), (4, 5)),
    "slice_scatter open end": (lambda lib, x, s: x.slice_scatter(s, 0, 2), (2, 5)),
    "diagonal_scatter": (lambda lib, x, s: lib.diagonal_scatter(x, s), (4,)),
    "diagonal_scatter above": (lambda lib, x, s: lib.diagonal_scatter(x, s, 2), (3,)),
    "diagonal_scatter below": (lambda lib, x, s: x.diagonal_scatter(s, -1, 1, 0), (4,)),
}


@pytest.mark.parametrize("case", EMBEDS, ids=str)
def test_embedding_scatters(case):
    fn, shape = EMBEDS[case]
    src = R.standard_normal(shape)
    compare(fn, X, src)
    compare(fn, X.astype(np.float32), src.astype(np.float32))
    compare_double_backward(fn, X, src)
    names = [fn(lib, lib.tensor(X, requires_grad=True), lib.tensor(src)).grad_fn.name()
             for lib in (torch, hookgrad)]
    assert names[0] == names[1]


def test_embedding_scatters_on_3d_and_mixed_dtypes():
    x = R.standard_normal((2, 3, 4))
    compare(lambda lib, a, s: lib.diagonal_scatter(a, s, 1, 0, 2), x, R.standard_normal((3, 2)))
    compare(lambda lib, a, s: lib.select_scatter(a, s, 2, 3), x, R.standard_normal((2, 3)))
    compare(lambda lib, a, s: lib.select_scatter(a, s, 0, 1), X.astype(np.float32),
            R.standard_normal(5), grad=False)


def test_embedding_scatter_errors():
    assert_same_error(lambda lib: lib.select_scatter(lib.tensor(X), lib.tensor(X[0, :3]), 0, 1))
    assert_same_error(lambda lib: lib.select_scatter(lib.tensor(X), lib.tensor(X[0]), 0, 7))
    assert_same_error(lambda lib: lib.slice_scatter(lib.tensor(X), lib.tensor(X[:, :3]), 1, 1,
                                                    5, 2))
    assert_same_error(lambda lib: lib.diagonal_scatter(lib.tensor(X), lib.tensor(X[0, :2]), 1))


# -- index_copy ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dim, index, shape", [(0, [2, 0], (2, 5)), (1, [4, 1, 2], (4, 3)),
                                               (-1, [0], (4, 1)), (0, [3, 1], (2, 5))])
def test_index_copy(dim, index, shape):
    source = R.standard_normal(shape)
    compare(lambda lib, x, s: lib.index_copy(x, dim, lib.tensor(index), s), X, source)
    compare(lambda lib, x, s: x.index_copy(dim, lib.tensor(index), s), X.astype(np.float32),
            source.astype(np.float32))
    compare(lambda lib, x, s: (x * 1).index_copy_(dim, lib.tensor(index), s), X, source)
    compare_double_backward(lambda lib, x, s: lib.index_copy(x, dim, lib.tensor(index), s),
                            X, source)
    names = [lib.index_copy(lib.tensor(X, requires_grad=True), dim, lib.tensor(index),
                            lib.tensor(source)).grad_fn.name() for lib in (torch, hookgrad)]
    assert names[0] == names[1]


@pytest.mark.parametrize("case", ["float index", "count", "slice shape", "out of bounds",
                                  "negative", "2-D index", "dtype"])
def test_index_copy_errors(case):
    make = {
        "float index": lambda lib: lib.index_copy(lib.tensor(X), 0, lib.tensor([2.0, 0.0]),
                                                  lib.tensor(X[:2])),
        "count": lambda lib: lib.index_copy(lib.tensor(X), 0, lib.tensor([2, 0]),
                                            lib.tensor(X[:3])),
        "slice shape": lambda lib: lib.index_copy(lib.tensor(X), 0, lib.tensor([2, 0]),
                                                  lib.tensor(X[:2, :4])),
        "out of bounds": lambda lib: lib.index_copy(lib.tensor(X), 0, lib.tensor([2, 5]),
                                                    lib.tensor(X[:2])),
        "negative": lambda lib: lib.index_copy(lib.tensor(X), 0, lib.tensor([2, -1]),
                                               lib.tensor(X[:2])),
        "2-D index": lambda lib: lib.index_copy(lib.tensor(X), 1, lib.tensor([[2, 0]]),
                                                lib.tensor(X[:, :2])),
        "dtype": lambda lib: lib.index_copy(lib.tensor(X), 0, lib.tensor([2, 0]),
                                            lib.tensor(X[:2]).float()),
    }[case]
    assert_same_error(make)


# -- scatter_reduce -------------------------------------------------------------------------------
INDEX = np.array([[0, 0, 2], [1, 1, 1], [3, 0, 0]])
REDUCES = ["sum", "prod", "mean", "amax", "amin"]


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCES)
def test_scatter_reduce(reduce, include_self):
    src = R.standard_normal((3, 3))
    index = np.array([[0, 1, 2], [0, 2, 3], [3, 3, 0]])

    def fn(lib, x, s):
        return lib.scatter_reduce(x, 0, lib.tensor(index), s, reduce, include_self=include_self)

    compare(fn, X, src)
    compare(fn, X.astype(np.float32), src.astype(np.float32))
    compare(lambda lib, x, s: x.scatter_reduce(1, lib.tensor(INDEX), s, reduce,
                                               include_self=include_self), X, src)
    compare(lambda lib, x, s: (x * 1).scatter_reduce_(1, lib.tensor(INDEX), s, reduce,
                                                      include_self=include_self), X, src)
    if reduce != "prod":
        compare_double_backward(fn, X, src)


@pytest.mark.parametrize("reduce", REDUCES)
def test_scatter_reduce_integers_and_ties(reduce):
    x = np.array([[1, 2, 3], [4, 5, 6]])
    src = np.array([[-7, 8, 9], [1, 2, 4]])
    for include_self in (True, False):
        compare(lambda lib, a, s: a.scatter_reduce(1, lib.tensor([[0, 0, 2], [1, 1, 1]]), s,
                                                   reduce, include_self=include_self), x, src)
    ties = np.array([[1.0, 2.0, 2.0], [0.0, 5.0, 0.0]])
    compare(lambda lib, a, s: a.scatter_reduce(1, lib.tensor([[0, 0, 1], [1, 2, 2]]), s, reduce),
            ties, np.array([[2.0, 1.0, 2.0], [5.0, 0.0, 3.0]]))


def test_scatter_reduce_prod_with_zeros():
    x = np.array([[2.0, 0.0, 3.0, 1.5]])
    src = np.array([[0.0, 4.0, 0.0, 0.0, 5.0]])
    index = np.array([[0, 0, 1, 2, 2]])
    for include_self in (True, False):
        compare(lambda lib, a, s: a.scatter_reduce(1, lib.tensor(index), s, "prod",
                                                   include_self=include_self), x, src)


def test_scatter_reduce_with_a_smaller_index_and_alias():
    src = R.standard_normal((4, 5))
    # torch's backward refuses a src larger than the index: values only
    compare(lambda lib, x, s: x.scatter_reduce(1, lib.tensor(INDEX), s, "sum"), X, src,
            grad=False)
    compare(lambda lib, x, s: x.scatter_reduce(1, lib.tensor(INDEX), s, "max"), X, src,
            grad=False)
    assert_same_error(lambda lib: lib.tensor(X).scatter_reduce(
        1, lib.tensor(INDEX), lib.tensor(X[:2, :2]), "sum"))
    assert_same_error(lambda lib: lib.tensor(X).scatter_reduce(
        1, lib.tensor(INDEX + 3), lib.tensor(X), "sum"))
    assert_same_error(lambda lib: lib.tensor(X).scatter_reduce(
        1, lib.tensor(INDEX), lib.tensor(X).float(), "sum"))
    assert_same_error(lambda lib: lib.tensor(X).scatter_reduce(
        1, lib.tensor(INDEX).double(), lib.tensor(X), "sum"))
    assert_same_error(lambda lib: lib.tensor(X).scatter_reduce(
        1, lib.tensor(INDEX), lib.tensor(X), "median"))
    assert_same_error(lambda lib: lib.tensor(X, requires_grad=True).scatter_reduce_(
        1, lib.tensor(INDEX), lib.tensor(X), "sum"))
