"""sort, argsort, topk, kthvalue, median, mode and the search/set ops against torch."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import hookgrad
from tests.conftest import (assert_close, assert_same_error, compare, compare_double_backward,
                            saved_log)

RNG = np.random.default_rng(7)
X = RNG.standard_normal((4, 5))  # distinct values: no ties, so every index is determined
X32 = X.astype(np.float32)
X3 = RNG.standard_normal((4, 3, 5))
TIES = np.array([[1., 3., 3., 2., 1.], [5., 5., 1., 1., 0.]])
NAN = np.array([[3., np.nan, 2., -0.0, 5.0], [np.nan, 1., np.nan, 4., 2.]])
PERMUTED = RNG.permutation(20).reshape(4, 5)  # distinct integers

SELECTING = [
    ("sort", lambda lib, x: lib.sort(x)),
    ("sort_dim0_desc", lambda lib, x: lib.sort(x, 0, descending=True)),
    ("sort_stable", lambda lib, x: lib.sort(x, dim=1, stable=True)),
    ("sort_method", lambda lib, x: x.sort(-1, True)),
    ("msort", lambda lib, x: lib.msort(x)),
    ("topk", lambda lib, x: lib.topk(x, 2)),
    ("topk_smallest_dim0", lambda lib, x: lib.topk(x, 3, dim=0, largest=False)),
    ("topk_k0", lambda lib, x: x.topk(0)),
    ("kthvalue", lambda lib, x: lib.kthvalue(x, 2)),
    ("kthvalue_keepdim", lambda lib, x: lib.kthvalue(x, 3, 0, keepdim=True)),
    ("median_all", lambda lib, x: lib.median(x)),
    ("median_dim", lambda lib, x: lib.median(x, 1)),
    ("median_keepdim", lambda lib, x: x.median(0, keepdim=True)),
    ("nanmedian_all", lambda lib, x: lib.nanmedian(x)),
    ("nanmedian_dim", lambda lib, x: lib.nanmedian(x, 0)),
    ("mode", lambda lib, x: lib.mode(x.round())),
]


@pytest.mark.parametrize("name,fn", SELECTING, ids=[s[0] for s in SELECTING])
@pytest.mark.parametrize("array", [X, X32], ids=["f64", "f32"])
def test_selecting_ops_match_torch(name, fn, array):
    compare(fn, array)


@pytest.mark.parametrize("name,fn", SELECTING, ids=[s[0] for s in SELECTING])
def test_selecting_ops_on_3d(name, fn):
    compare(fn, X3)


@pytest.mark.parametrize("name,fn", [
    ("sort_ties_stable", lambda lib, x: lib.sort(x, stable=True)),
    ("sort_ties_desc", lambda lib, x: lib.sort(x, descending=True, stable=True)),
    ("argsort_ties", lambda lib, x: lib.argsort(x, stable=True)),
    ("median_ties", lambda lib, x: lib.median(x, 1)),
    ("median_all_ties", lambda lib, x: lib.median(x)),
    ("mode_ties", lambda lib, x: lib.mode(x, 1)),
    ("mode_dim0", lambda lib, x: lib.mode(x, 0)),
])
def test_ties_pick_torchs_index(name, fn):
    compare(fn, TIES)


@pytest.mark.parametrize("name,fn", [
    ("sort", lambda lib, x: lib.sort(x)),
    ("sort_desc", lambda lib, x: lib.sort(x, descending=True)),
    ("topk", lambda lib, x: lib.topk(x, 2)),
    ("topk_smallest", lambda lib, x: lib.topk(x, 2, largest=False)),
    ("median_dim", lambda lib, x: lib.median(x, 1)),
    ("median_all", lambda lib, x: lib.median(x)),
    ("nanmedian_dim", lambda lib, x: lib.nanmedian(x, 1)),
    ("nanmedian_all", lambda lib, x: lib.nanmedian(x)),
])
def test_nan_sorts_as_largest(name, fn):
    compare(fn, NAN)


@pytest.mark.parametrize("name,fn", [
    ("sort", lambda lib, x: lib.sort(x, descending=True)),
    ("topk", lambda lib, x: lib.topk(x, 2)),
    ("median", lambda lib, x: lib.median(x)),
    ("median_dim", lambda lib, x: lib.median(x, 1)),
    ("argsort", lambda lib, x: lib.argsort(x, descending=True)),
])
@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_integer_inputs(name, fn, dtype):
    compare(fn, PERMUTED.astype(dtype))


@pytest.mark.parametrize("name,fn", [
    ("sort", lambda lib, x: lib.sort(x, descending=True, stable=True)),
    ("argsort", lambda lib, x: lib.argsort(x, stable=True)),
    ("mode", lambda lib, x: lib.mode(x, 0)),
    ("msort", lambda lib, x: lib.msort(x)),
])
def test_bool_inputs(name, fn):
    compare(fn, X > 0)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.topk(lib.tensor([True, False]), 1),
    lambda lib: lib.kthvalue(lib.tensor([True, False]), 1),
    lambda lib: lib.median(lib.tensor([True, False])),
    lambda lib: lib.median(lib.tensor([True, False]), 0),
    lambda lib: lib.nanmedian(lib.tensor([True, False]), 0),
])
def test_bool_refused_where_torch_refuses(fn):
    assert_same_error(fn)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.kthvalue(lib.ones(3, 0), 1, 1),
    lambda lib: lib.kthvalue(lib.ones(0, 3), 5, 0, keepdim=True),
    lambda lib: lib.kthvalue(lib.ones(0, dtype=lib.bool), 1),
    lambda lib: lib.kthvalue(lib.ones(0, 3), 4, 1),
])
def test_kthvalue_over_an_empty_dim_refused_as_torch_refuses(fn):
    assert_same_error(fn)


@pytest.mark.parametrize("name,fn", [
    ("sort", lambda lib, x: lib.sort(x)),
    ("topk", lambda lib, x: lib.topk(x, 1)),
    ("kthvalue", lambda lib, x: lib.kthvalue(x, 1)),
    ("median_dim", lambda lib, x: lib.median(x, 0)),
    ("mode", lambda lib, x: lib.mode(x)),
    ("argsort", lambda lib, x: lib.argsort(x)),
])
def test_zero_dim_inputs(name, fn):
    compare(fn, np.array(1.5))


def test_topk_unsorted_has_the_same_elements():
    values = hookgrad.topk(hookgrad.tensor(X), 3, sorted=False).values
    expected = torch.topk(torch.tensor(X), 3, sorted=False).values
    assert_close(values.sort().values, expected.sort().values)


@pytest.mark.parametrize("fn,name", [
    (lambda lib, x: lib.sort(x, 1), "SortBackward0"),
    (lambda lib, x: lib.sort(x, dim=1, stable=True), "SortBackward1"),
    (lambda lib, x: lib.topk(x, 2), "TopkBackward0"),
    (lambda lib, x: lib.kthvalue(x, 2), "KthvalueBackward0"),
    (lambda lib, x: lib.median(x), "MedianBackward0"),
    (lambda lib, x: lib.median(x, 0), "MedianBackward1"),
    (lambda lib, x: lib.nanmedian(x), "NanmedianBackward0"),
    (lambda lib, x: lib.nanmedian(x, 0), "NanmedianBackward1"),
    (lambda lib, x: lib.mode(x, 0), "ModeBackward0"),
    (lambda lib, x: lib.msort(x), "SortBackward0"),
])
def test_grad_fn_names(fn, name):
    for lib in (torch, hookgrad):
        out = fn(lib, lib.tensor(X, requires_grad=True))
        out = out[0] if isinstance(out, tuple) else out
        assert out.grad_fn.name() == name


@pytest.mark.parametrize("fn", [
    lambda lib, x: lib.sort(x, 1),
    lambda lib, x: lib.topk(x, 2),
    lambda lib, x: lib.median(x),
    lambda lib, x: lib.median(x, 1),
    lambda lib, x: lib.mode(x, 0),
])
def test_saved_tensors_match_torch(fn):
    logs = [saved_log(lib, lambda x: fn(lib, x), lib.tensor(X, requires_grad=True))
            for lib in (torch, hookgrad)]
    assert logs[1] == logs[0]


def test_saved_inspection_names():
    for lib in (torch, hookgrad):
        node = lib.kthvalue(lib.tensor(X, requires_grad=True), 2, 0, True).values.grad_fn
        assert (node._saved_dim, node._saved_keepdim, tuple(node._saved_self_sym_sizes)) == (
            0, True, (4, 5))


@pytest.mark.parametrize("fn", [
    lambda lib, x: lib.sort(x, 0, descending=True),
    lambda lib, x: lib.topk(x, 2, 1),
    lambda lib, x: lib.median(x, 1),
    lambda lib, x: lib.median(x),
])
def test_double_backward(fn):
    compare_double_backward(fn, X)


def test_gradcheck_sort():
    x = hookgrad.tensor(X, requires_grad=True)
    assert hookgrad.autograd.gradcheck(lambda t: hookgrad.sort(t, 0).values, (x,))


def test_return_types():
    result = hookgrad.sort(hookgrad.tensor(X))
    assert isinstance(result, hookgrad.return_types.sort)
    assert result.values is result[0] and result.indices is result[1]
    assert repr(result).startswith("torch.return_types.sort(")


@pytest.mark.parametrize("fn", [
    lambda lib: lib.sort(lib.tensor([1.]), 2),
    lambda lib: lib.topk(lib.tensor([1., 2.]), 3),
    lambda lib: lib.kthvalue(lib.tensor([1., 2.]), 3),
    lambda lib: lib.kthvalue(lib.tensor([1., 2.]), 0),
    lambda lib: lib.median(lib.zeros(2, 0), 1),
])
def test_errors_match_torch(fn):
    assert_same_error(fn)


# ---------------------------------------------------------------------------------------------
# unique, nonzero, searchsorted, bucketize, bincount, isin
# ---------------------------------------------------------------------------------------------
INTS = np.array([[3, 1, 2], [3, 1, 5], [0, 1, 2]])
SEARCH = [
    ("unique", lambda lib, x: lib.unique(x)),
    ("unique_all", lambda lib, x: lib.unique(x, return_inverse=True, return_counts=True)),
    ("unique_unsorted", lambda lib, x: lib.unique(x, sorted=False)),
    ("unique_dim0", lambda lib, x: lib.unique(x, dim=0, return_inverse=True,
                                              return_counts=True)),
    ("unique_dim1", lambda lib, x: x.unique(dim=1, return_inverse=True)),
    ("unique_consecutive", lambda lib, x: lib.unique_consecutive(
        x.flatten(), return_inverse=True, return_counts=True)),
    ("unique_consecutive_dim", lambda lib, x: lib.unique_consecutive(x, dim=1,
                                                                     return_counts=True)),
    ("nonzero", lambda lib, x: lib.nonzero(x - 1)),
    ("nonzero_tuple", lambda lib, x: lib.nonzero(x - 1, as_tuple=True)),
    ("argwhere", lambda lib, x: lib.argwhere(x - 1)),
    ("count_nonzero", lambda lib, x: lib.count_nonzero(x - 1)),
    ("count_nonzero_dim", lambda lib, x: x.count_nonzero(dim=0)),
    ("count_nonzero_dims", lambda lib, x: lib.count_nonzero(x, dim=(0, 1))),
    ("searchsorted", lambda lib, x: lib.searchsorted(lib.tensor([0, 1, 3, 5]), x)),
    ("searchsorted_right", lambda lib, x: lib.searchsorted(lib.tensor([0, 1, 3]), x,
                                                           right=True)),
    ("searchsorted_side", lambda lib, x: lib.searchsorted(lib.tensor([0, 1, 3]), x,
                                                          side="right", out_int32=True)),
    ("searchsorted_rows", lambda lib, x: lib.searchsorted(x.sort().values, x * 0 + 2)),
    ("searchsorted_scalar", lambda lib, x: lib.searchsorted(lib.tensor([0, 1, 3]), 2)),
    ("searchsorted_float", lambda lib, x: lib.searchsorted(lib.tensor([0.5, 1.5]), x)),
    ("searchsorted_sorter", lambda lib, x: lib.searchsorted(
        lib.tensor([5, 1, 3]), x, sorter=lib.tensor([1, 2, 0]))),
    ("bucketize", lambda lib, x: lib.bucketize(x, lib.tensor([0, 2, 4]))),
    ("bucketize_right", lambda lib, x: lib.bucketize(x, lib.tensor([0, 2, 4]), right=True)),
    ("bucketize_scalar", lambda lib, x: lib.bucketize(3, lib.tensor([0, 2, 4]))),
    ("bincount", lambda lib, x: lib.bincount(x.flatten())),
    ("bincount_minlength", lambda lib, x: x.flatten().bincount(minlength=9)),
    ("bincount_weights", lambda lib, x: lib.bincount(x[0], lib.tensor([0.5, 1., 2.]))),
    ("bincount_weights64", lambda lib, x: lib.bincount(
        x[0], lib.tensor([0.5, 1., 2.], dtype=lib.float64))),
    ("bincount_int_weights", lambda lib, x: lib.bincount(x[0], x[1])),
    ("isin", lambda lib, x: lib.isin(x, lib.tensor([1, 5]))),
    ("isin_invert", lambda lib, x: lib.isin(x, lib.tensor([1, 5]), invert=True)),
    ("isin_scalar", lambda lib, x: lib.isin(x, 3)),
    ("isin_float", lambda lib, x: lib.isin(x * 1.0, lib.tensor([1, 5]))),
]


@pytest.mark.parametrize("name,fn", SEARCH, ids=[s[0] for s in SEARCH])
def test_search_ops_match_torch(name, fn):
    compare(fn, INTS)


@pytest.mark.parametrize("name,fn", [
    ("unique_float", lambda lib, x: lib.unique(x.detach(), return_inverse=True,
                                               return_counts=True)),
    ("unique_nan", lambda lib, x: lib.unique(x.detach() / x.detach().round())),
    ("nonzero", lambda lib, x: lib.nonzero(x.round())),
    ("count_nonzero_nan", lambda lib, x: lib.count_nonzero(x / x.round())),
])
def test_search_ops_on_floats(name, fn):
    compare(fn, (X * 2).round() / 2)


@pytest.mark.parametrize("value", [0, 5])
def test_nonzero_of_zero_dim(value):
    compare(lambda lib, x: (lib.nonzero(x), lib.nonzero(x, as_tuple=True)), np.array(value))


def test_unique_output_has_a_grad_fn_that_refuses():
    outputs = []
    for lib in (torch, hookgrad):
        out = lib.unique(lib.tensor([1., 2., 1.], requires_grad=True))
        with pytest.raises(NotImplementedError) as info:
            out.sum().backward()
        outputs.append((out.grad_fn.name(), str(info.value)))
    assert outputs[1] == outputs[0]


@pytest.mark.parametrize("fn", [
    lambda lib: lib.searchsorted(lib.tensor([[1, 3], [2, 4]]), lib.tensor([[3, 6, 1]])),
    lambda lib: lib.searchsorted(lib.tensor([[1, 3], [2, 4]]), 3),
    lambda lib: lib.searchsorted(lib.tensor([1, 3]), lib.tensor([3]), right=True, side="left"),
    lambda lib: lib.searchsorted(lib.tensor([1, 3]), lib.tensor([3]), side="middle"),
    lambda lib: lib.bucketize(lib.tensor([3]), lib.tensor([[1, 3]])),
    lambda lib: lib.bincount(lib.tensor([-1, 1])),
    lambda lib: lib.bincount(lib.tensor([[1, 1]])),
    lambda lib: lib.bincount(lib.tensor([1., 1.])),
    lambda lib: lib.bincount(lib.tensor([1, 1]), lib.tensor([1.])),
    lambda lib: lib.isin(lib.tensor([True]), lib.tensor([True])),
])
def test_search_errors_match_torch(fn):
    assert_same_error(fn)


# ---------------------------------------------------------------------------------------------
# fuzzing over shapes, dims and k (values drawn without ties)
# ---------------------------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), data=st.data())
def test_selecting_ops_fuzzed(shape, data):
    size = int(np.prod(shape))
    array = np.random.default_rng(size).permutation(size).reshape(shape) / size - 0.5
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    k = data.draw(st.integers(1, shape[dim]))
    descending = data.draw(st.booleans())
    keepdim = data.draw(st.booleans())
    compare(lambda lib, x: (lib.sort(x, dim, descending), lib.topk(x, k, dim, descending),
                            lib.kthvalue(x, k, dim, keepdim), lib.median(x, dim, keepdim),
                            lib.mode(x, dim, keepdim)), array)


def test_mode_counts_nans_as_one_value():
    nan = np.nan
    rows = np.array([[nan, nan, 1.0, 2.0, 3.0], [nan, nan, 1.0, 1.0, 1.0],
                     [3.0, nan, 2.0, 2.0, 7.0]])
    compare(lambda lib, x: lib.mode(x, -1).values, rows, grad=False)  # which tie: unspecified
    compare(lambda lib, x: lib.mode(x, -1).values, rows.astype(np.float32), grad=False)
    compare(lambda lib, x: lib.mode(x[0]).values, rows, grad=False)


def test_unique_along_a_dim_of_0d_and_empty_tensors():
    for name in ("unique", "unique_consecutive"):
        assert_same_error(lambda lib: getattr(lib, name)(lib.tensor(1.5), dim=0))
        assert_same_error(lambda lib: getattr(lib, name)(lib.zeros(2, 0, 3), dim=0))
        compare(lambda lib, x: getattr(lib, name)(x, dim=0, return_inverse=True,
                                                  return_counts=True), np.zeros((0,)),
                grad=False)
        compare(lambda lib, x: getattr(lib, name)(x, dim=1, return_counts=True),
                np.zeros((2, 0, 3)), grad=False)
