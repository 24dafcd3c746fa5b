"""index_reduce / index_reduce_ against torch: values for every reduce with and without self,
repeated and empty indices, negative dims, integer dtypes, gradients (ties, zeros), gradcheck,
the node's name and saved attributes, version counting and errors."""
import warnings

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_same_error, compare, compare_double_backward

R = np.random.default_rng(41)
REDUCES = ["prod", "mean", "amax", "amin"]
X = R.standard_normal((4, 5))

pytestmark = pytest.mark.filterwarnings("ignore:index_reduce\\(\\) is in beta")


def _call(lib, x, dim, index, source, reduce, include_self, method):
    index = lib.tensor(index)
    if method == "function":
        return lib.index_reduce(x, dim, index, source, reduce, include_self=include_self)
    if method == "method":
        return x.index_reduce(dim, index, source, reduce, include_self=include_self)
    return (x * 1).index_reduce_(dim, index, source, reduce, include_self=include_self)


CASES = {  # dim, index, source shape
    "rows repeated": (0, [0, 2, 0, 3, 2, 0], (6, 5)),
    "columns": (1, [4, 1, 1], (4, 3)),
    "negative dim": (-1, [0, 0, 3, 4], (4, 4)),
    "negative dim rows": (-2, [3, 1], (2, 5)),
    "every slot": (0, [3, 2, 1, 0], (4, 5)),
}


@pytest.mark.parametrize("method", ["function", "method", "inplace"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_values_and_gradients(case, reduce, include_self, method):
    dim, index, shape = CASES[case]
    source = R.standard_normal(shape)

    def fn(lib, x, s):
        return _call(lib, x, dim, index, s, reduce, include_self, method)

    compare(fn, X, source)
    compare(fn, X.astype(np.float32), source.astype(np.float32))


def test_three_dims_and_int32_index():
    x, source = R.standard_normal((2, 3, 4)), R.standard_normal((2, 5, 4))
    index = np.array([2, 0, 2, 1, 2], np.int32)
    for reduce in REDUCES:
        for include_self in (True, False):
            def fn(lib, a, s):
                return lib.index_reduce(a, 1, lib.tensor(index), s, reduce,
                                        include_self=include_self)

            if include_self:
                compare(fn, x, source)
            else:  # torch's backward clears the receiving slices with an int64-only index_fill
                compare(fn, x, source, grad=False)
                assert_same_error(lambda lib: fn(lib, lib.tensor(x, requires_grad=True),
                                                 lib.tensor(source)).sum().backward())


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCES)
def test_ties_and_zeros(reduce, include_self):
    """amax/amin share the gradient among all equal winners (self among them), prod takes the
    product of the others where one factor is zero and gives zero where two are."""
    x = np.array([[2.0, 0.0, 3.0], [1.0, 5.0, 5.0], [0.0, 0.0, 2.0], [4.0, 4.0, 1.0]])
    source = np.array([[0.0, 4.0, 3.0], [5.0, 0.0, 0.0], [2.0, 1.0, 3.0], [5.0, 5.0, 1.0],
                       [1.0, 5.0, 2.0]])

    def fn(lib, a, s):
        return a.index_reduce(0, lib.tensor([0, 0, 1, 1, 1]), s, reduce,
                              include_self=include_self)

    compare(fn, x, source)
    compare(fn, x.astype(np.float32), source.astype(np.float32))


def test_zero_dim_and_empty_index():
    for reduce in REDUCES:
        compare(lambda lib, a, s: lib.index_reduce(a, 0, lib.tensor([0]), s, reduce),
                np.array(2.0), np.array(3.0))
        compare(lambda lib, a, s: lib.index_reduce(a, -1, lib.tensor(0), s, reduce,
                                                   include_self=False),
                np.array(2.0), np.array(-3.0))
        for include_self in (True, False):
            compare(lambda lib, a, s: a.index_reduce(0, lib.tensor(np.zeros(0, np.int64)), s,
                                                     reduce, include_self=include_self),
                    X, np.zeros((0, 5)))


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int16, np.uint8])
@pytest.mark.parametrize("reduce", REDUCES)
def test_integers(reduce, dtype):
    """mean rounds down (floor) as torch's integer division does, negatives included."""
    x = np.array([[1, 2, -7], [4, 5, -3]]).astype(dtype)
    source = np.array([[-4, 3, 0], [0, 0, 0], [9, 1, 1]]).astype(dtype)
    for include_self in (True, False):
        compare(lambda lib, a, s: a.index_reduce(0, lib.tensor([0, 0, 1]), s, reduce,
                                                 include_self=include_self), x, source)


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCES)
def test_gradcheck(reduce, include_self):
    x = hookgrad.tensor(R.standard_normal((4, 3)), requires_grad=True)
    source = hookgrad.tensor(R.standard_normal((5, 3)), requires_grad=True)
    index = hookgrad.tensor([1, 3, 1, 0, 3])
    assert hookgrad.autograd.gradcheck(
        lambda a, s: a.index_reduce(0, index, s, reduce, include_self=include_self),
        (x, source))


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCES)
def test_double_backward(reduce, include_self):
    """The backward is built from differentiable ops, result included (saved as the output)."""
    source = R.standard_normal((3, 5))
    compare_double_backward(lambda lib, x, s: lib.index_reduce(
        x, -2, lib.tensor([0, 3, 0]), s, reduce, include_self=include_self), X, source)
    compare_double_backward(lambda lib, x, s: (x * 1).index_reduce_(
        1, lib.tensor([4, 4]), s, reduce, include_self=include_self), X, source.T[:4, :2] * 1)
    compare_double_backward(lambda lib, x, s: lib.index_reduce(
        x, 0, lib.tensor([0]), s, reduce, include_self=include_self), np.array(2.0),
        np.array(-3.0))


@pytest.mark.parametrize("dim", [0, -2])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCES)
def test_node_and_saved_attributes(reduce, include_self, dim):
    source = R.standard_normal((3, 5))
    shown = []
    for lib in (torch, hookgrad):
        x = lib.tensor(X, requires_grad=True)
        node = x.index_reduce(dim, lib.tensor([0, 3, 0]), lib.tensor(source), reduce,
                              include_self=include_self).grad_fn
        names = sorted(name for name in dir(node) if name.startswith("_saved_"))
        values = [getattr(node, name) for name in names]
        shown.append((node.name(), names, [
            np.asarray(v.detach()) if hasattr(v, "detach") else v for v in values]))
    assert shown[0][:2] == shown[1][:2]
    for expected, actual in zip(shown[0][2], shown[1][2]):
        if isinstance(expected, np.ndarray):
            np.testing.assert_array_equal(actual, expected)
        else:
            assert actual == expected


def test_inplace_bumps_the_version_and_keeps_the_old_self():
    counts = []
    for lib in (torch, hookgrad):
        x = lib.tensor(X, requires_grad=True)
        y = x * 1
        before = y._version
        out = y.index_reduce_(1, lib.tensor([1, 1]), lib.tensor(X[:, :2]), "amax")
        counts.append((out is y, y._version - before, y.grad_fn.name()))
        np.testing.assert_array_equal(np.asarray(y.grad_fn._saved_self.detach()), X)
    assert counts[0] == counts[1]


def test_warns_once_that_it_is_beta():
    x = hookgrad.tensor(X)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        x.index_reduce(0, hookgrad.tensor([0]), x[:1], "mean")
        x.index_reduce(0, hookgrad.tensor([0]), x[:1], "mean")
    assert [str(w.message) for w in caught] == [
        "index_reduce() is in beta and the API may change at any time."]


BAD = {
    "sum is not offered": lambda lib: lib.tensor(X).index_reduce(
        0, lib.tensor([0]), lib.tensor(X[:1]), "sum"),
    "max is not an alias": lambda lib: lib.tensor(X).index_reduce(
        0, lib.tensor([0]), lib.tensor(X[:1]), "max"),
    "reduce before dim": lambda lib: lib.tensor(X).index_reduce(
        5, lib.tensor([0.0]), lib.tensor(X[:1]), "sum"),
    "dim out of range": lambda lib: lib.tensor(X).index_reduce(
        2, lib.tensor([0]), lib.tensor(X[:1]), "mean"),
    "index not a vector": lambda lib: lib.tensor(X).index_reduce(
        0, lib.tensor([[0.0]]), lib.tensor(X[:1]), "mean"),
    "float index": lambda lib: lib.tensor(X).index_reduce(
        0, lib.tensor([0.0]), lib.tensor(X[:1]), "mean"),
    "int16 index": lambda lib: lib.tensor(X).index_reduce(
        0, lib.tensor([0], dtype=lib.int16), lib.tensor(X[:1]), "prod"),
    "list index": lambda lib: lib.tensor(X).index_reduce(0, [0], lib.tensor(X[:1]), "mean"),
    "number source": lambda lib: lib.tensor(X).index_reduce(0, lib.tensor([0]), 3.0, "mean"),
    "source dtype": lambda lib: lib.tensor(X).index_reduce(
        0, lib.tensor([0, 1, 2]), lib.tensor(X[:1]).float(), "mean"),
    "count": lambda lib: lib.tensor(X).index_reduce(
        0, lib.tensor([0, 1]), lib.tensor(X[:3]), "mean"),
    "slice shape": lambda lib: lib.tensor(X).index_reduce(
        0, lib.tensor([9]), lib.tensor(X[:1, :3]), "amin"),
    "source dims": lambda lib: lib.tensor(X).index_reduce(
        0, lib.tensor([0]), lib.tensor(X[:1, :, None]), "amin"),
    "out of range": lambda lib: lib.tensor(X).index_reduce(
        0, lib.tensor([4]), lib.tensor(X[:1]), "amax"),
    "negative index": lambda lib: lib.tensor(X).index_reduce(
        1, lib.tensor([-1]), lib.tensor(X[:, :1]), "amax"),
    "leaf in place": lambda lib: lib.tensor(X, requires_grad=True).index_reduce_(
        0, lib.tensor([0]), lib.tensor(X[:1]), "mean"),
}


@pytest.mark.parametrize("case", BAD, ids=str)
def test_errors(case):
    assert_same_error(BAD[case])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("reduce", REDUCES)
def test_half_precision_without_self(reduce, dtype):
    """Slices that receive values start from the reduction's identity (infinities for
    amax/amin) in bfloat16 too, for index_reduce and scatter_reduce alike."""
    x = [[1.0, 2.0], [3.0, 4.0]]
    source = [[-3.0, -5.0], [-2.0, 2.7], [1.1, 0.3]]
    results = []
    for lib in (torch, hookgrad):
        a, s = (lib.tensor(v, dtype=getattr(lib, dtype)) for v in (x, source))
        results.append([
            a.index_reduce(0, lib.tensor([0, 0, 1]), s, reduce, include_self=False),
            a.scatter_reduce(0, lib.tensor([[0, 0], [0, 0], [1, 1]]), s, reduce,
                             include_self=False)])
    for ours, theirs in zip(results[1], results[0]):
        assert str(ours.dtype) == str(theirs.dtype)
        assert ours.float().tolist() == theirs.float().tolist()
