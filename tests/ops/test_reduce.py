"""Reductions, scans and softmax against torch: values, dtypes, gradients (ties, zeros, NaN),
double backward, grad_fn names, what is saved for backward, return types and errors."""
import math
import warnings

import numpy as np
import pytest
import torch
from conftest import (assert_close, assert_same_error, compare, compare_double_backward,
                      saved_log)
from hypothesis import given, settings
from hypothesis import strategies as st

import hookgrad


def first(result):
    return result[0] if isinstance(result, tuple) else result


def random(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


# -- the table: values, gradients, grad_fn names, saved tensors ----------------------------------
REDUCTIONS = {
    "sum()": lambda lib, x: x.sum(),
    "sum(1)": lambda lib, x: x.sum(1),
    "sum(-1, keepdim)": lambda lib, x: x.sum(-1, keepdim=True),
    "sum((0, 2))": lambda lib, x: lib.sum(x, (0, 2)),
    "sum(dim=None)": lambda lib, x: x.sum(dim=None),
    "sum(dim=[])": lambda lib, x: x.sum(dim=[]),
    "sum(keepdim)": lambda lib, x: x.sum(dim=None, keepdim=True),
    "mean()": lambda lib, x: x.mean(),
    "mean((0, -1), keepdim)": lambda lib, x: lib.mean(x, (0, -1), keepdim=True),
    "mean(None)": lambda lib, x: x.mean(None),
    "var()": lambda lib, x: x.var(),
    "var(1)": lambda lib, x: x.var(1),
    "var(False)": lambda lib, x: x.var(False),
    "var(1, False, True)": lambda lib, x: x.var(1, False, True),
    "var((0, 2), correction=0)": lambda lib, x: lib.var(x, (0, 2), correction=0),
    "var(2, correction=2.5, keepdim)": lambda lib, x: x.var(2, correction=2.5, keepdim=True),
    "var(unbiased=False)": lambda lib, x: x.var(unbiased=False),
    "std()": lambda lib, x: x.std(),
    "std(0, keepdim)": lambda lib, x: x.std(0, keepdim=True),
    "std((1, 2), unbiased=False)": lambda lib, x: lib.std(x, (1, 2), unbiased=False),
    "max()": lambda lib, x: x.max(),
    "max(1)": lambda lib, x: x.max(1),
    "max(-1, keepdim)": lambda lib, x: lib.max(x, -1, keepdim=True),
    "max(dim=0)": lambda lib, x: lib.max(x, dim=0),
    "min()": lambda lib, x: lib.min(x),
    "min(2)": lambda lib, x: x.min(2),
    "max(other)": lambda lib, x: lib.max(x, x * 0.5),
    "min(other)": lambda lib, x: x.min(x.flip(0)),
    "amax()": lambda lib, x: x.amax(),
    "amax((0, 1))": lambda lib, x: x.amax((0, 1)),
    "amin(1, keepdim)": lambda lib, x: lib.amin(x, 1, True),
    "logsumexp(1)": lambda lib, x: x.logsumexp(1),
    "logsumexp((0, 2), keepdim)": lambda lib, x: lib.logsumexp(x, (0, 2), keepdim=True),
    "prod()": lambda lib, x: x.prod(),
    "prod(1)": lambda lib, x: x.prod(1),
    "prod(-1, keepdim)": lambda lib, x: lib.prod(x, -1, keepdim=True),
    "softmax(1)": lambda lib, x: x.softmax(1),
    "softmax(-1)": lambda lib, x: lib.softmax(x, -1),
    "log_softmax(0)": lambda lib, x: x.log_softmax(0),
    "log_softmax(dim=-1)": lambda lib, x: lib.log_softmax(x, dim=-1),
    "cumsum(1)": lambda lib, x: x.cumsum(1),
    "cumsum(dim=-1)": lambda lib, x: lib.cumsum(x, dim=-1),
}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("fn", REDUCTIONS.values(), ids=REDUCTIONS.keys())
def test_reduction_values_and_gradients_match_torch(fn, dtype):
    compare(fn, random(3, 4, 5).astype(dtype))


@pytest.mark.parametrize("fn", REDUCTIONS.values(), ids=REDUCTIONS.keys())
def test_reduction_grad_fn_and_saved_tensors_match_torch(fn):
    x = random(3, 4, 5)
    ours_in = hookgrad.tensor(x, requires_grad=True)
    theirs_in = torch.tensor(x, requires_grad=True)
    ours, theirs = first(fn(hookgrad, ours_in)), first(fn(torch, theirs_in))
    assert ours.grad_fn.name() == theirs.grad_fn.name()
    assert saved_log(hookgrad, lambda t: fn(hookgrad, t), ours_in) == \
        saved_log(torch, lambda t: fn(torch, t), theirs_in)


# torch keeps a negative dim as given (and prints it as an unsigned 64-bit number): the table
# uses non-negative dims here
@pytest.mark.parametrize("name", ["sum(1)", "sum((0, 2))", "var()", "var(1)", "var(False)",
                                  "var(1, False, True)", "std(0, keepdim)", "max(1)", "max(dim=0)",
                                  "amax()", "amax((0, 1))", "amin(1, keepdim)", "logsumexp(1)",
                                  "logsumexp((0, 2), keepdim)", "prod(1)", "cumsum(1)"])
def test_reduction_exposes_torchs_saved_arguments(name):
    fn = REDUCTIONS[name]
    x = random(3, 4, 5)
    ours = first(fn(hookgrad, hookgrad.tensor(x, requires_grad=True))).grad_fn
    theirs = first(fn(torch, torch.tensor(x, requires_grad=True))).grad_fn
    for attribute in ("_saved_dim", "_saved_keepdim", "_saved_correction",
                      "_saved_self_sym_sizes"):
        if hasattr(theirs, attribute):
            assert getattr(ours, attribute) == getattr(theirs, attribute), attribute


def test_saved_tensors_are_the_inputs_and_outputs_torch_names():
    for lib in (torch, hookgrad):
        x = lib.tensor([[1.0, 3.0], [2.0, 0.0]], requires_grad=True)
        top = x.max()
        values, indices = x.max(1)
        spread = x.std(0)
        assert top.grad_fn._saved_self is x
        assert values.grad_fn._saved_indices is indices
        assert spread.grad_fn._saved_self is x
        assert_close(spread.grad_fn._saved_result, spread.detach())


@pytest.mark.parametrize("name", ["sum(1)", "mean((0, -1), keepdim)", "var(1)", "std()",
                                  "std(0, keepdim)", "max(1)", "max()", "amax((0, 1))",
                                  "logsumexp(1)", "prod(1)", "prod()", "softmax(1)",
                                  "log_softmax(0)", "cumsum(1)"])
def test_reduction_double_backward_matches_torch(name):
    compare_double_backward(REDUCTIONS[name], random(2, 3, 4, seed=1))


@pytest.mark.parametrize("name", ["var(1)", "std(0, keepdim)", "logsumexp(1)", "prod(1)",
                                  "softmax(1)", "log_softmax(0)", "cumsum(1)", "amax((0, 1))"])
def test_reduction_passes_gradcheck_and_gradgradcheck(name):
    fn = REDUCTIONS[name]
    x = hookgrad.tensor(random(2, 3, 2, seed=2), requires_grad=True)
    assert hookgrad.autograd.gradcheck(lambda t: first(fn(hookgrad, t)), (x,))
    assert hookgrad.autograd.gradgradcheck(lambda t: first(fn(hookgrad, t)), (x,))


# -- ties, NaN and zeros ------------------------------------------------------------------------
TIES = np.array([[1.0, 3.0, 3.0, -1.0], [2.0, 2.0, 0.0, 2.0], [-5.0, -5.0, -5.0, -5.0]])
WITH_NAN = np.array([[1.0, np.nan, 3.0, np.nan], [0.5, 0.25, -1.0, 2.0]])


@pytest.mark.parametrize("fn", [
    lambda lib, x: x.max(1), lambda lib, x: x.min(1), lambda lib, x: x.max(0, keepdim=True),
    lambda lib, x: x.max(), lambda lib, x: x.min(), lambda lib, x: x.amax(1),
    lambda lib, x: x.amin(0), lambda lib, x: x.amax(), lambda lib, x: x.argmax(1),
    lambda lib, x: x.argmin(0), lambda lib, x: x.argmax(),
], ids=["max(1)", "min(1)", "max(0, keepdim)", "max()", "min()", "amax(1)", "amin(0)", "amax()",
        "argmax(1)", "argmin(0)", "argmax()"])
@pytest.mark.parametrize("data", [TIES, WITH_NAN], ids=["ties", "nan"])
def test_extremes_pick_and_share_gradients_like_torch(fn, data):
    compare(fn, data)


def test_max_over_a_dim_returns_torchs_named_pair():
    data = np.array([[1.0, 3.0], [2.0, 0.0]])
    ours, theirs = hookgrad.tensor(data).max(1), torch.tensor(data).max(1)
    values, indices = ours
    assert isinstance(ours, tuple) and len(ours) == 2
    assert isinstance(ours, hookgrad.return_types.max)
    assert ours.values is values and ours.indices is indices
    assert repr(ours) == repr(theirs)
    assert repr(hookgrad.tensor(data).min(0, keepdim=True)) == \
        repr(torch.tensor(data).min(0, keepdim=True))


@pytest.mark.parametrize("fn", [lambda lib, x: x.max(0), lambda lib, x: x.min(-1, keepdim=True),
                                lambda lib, x: x.amax(0), lambda lib, x: x.argmax(0)],
                         ids=["max(0)", "min(-1, keepdim)", "amax(0)", "argmax(0)"])
@pytest.mark.parametrize("data", [np.array(2.5), np.array([1.0, 3.0, -2.0])],
                         ids=["0-d", "1-d"])
def test_extremes_of_small_tensors_keep_torchs_shapes(fn, data):
    compare(fn, data)


PROD_ZEROS = {
    "one zero": np.array([[2.0, 0.0, 3.0], [1.5, -2.0, 0.5]]),
    "two zeros in a row": np.array([[2.0, 0.0, 0.0], [1.5, -2.0, 0.5]]),
    "zeros in two rows": np.array([[0.0, 4.0, 3.0], [1.5, 0.0, 0.5]]),
    "all zeros": np.zeros((2, 3)),
}


@pytest.mark.parametrize("fn", [lambda lib, x: x.prod(), lambda lib, x: x.prod(1),
                                lambda lib, x: x.prod(0, keepdim=True)],
                         ids=["prod()", "prod(1)", "prod(0, keepdim)"])
@pytest.mark.parametrize("data", PROD_ZEROS.values(), ids=PROD_ZEROS.keys())
def test_prod_gradient_with_zeros_matches_torch(fn, data):
    compare(fn, data)


@pytest.mark.parametrize("fn", [lambda lib, x: x.prod(), lambda lib, x: x.prod(1)],
                         ids=["prod()", "prod(1)"])
@pytest.mark.parametrize("data", PROD_ZEROS.values(), ids=PROD_ZEROS.keys())
def test_prod_double_backward_with_zeros_matches_torch(fn, data):
    compare_double_backward(fn, data)


@pytest.mark.parametrize("fn", [lambda lib, x: x.var(), lambda lib, x: x.std(1),
                                lambda lib, x: x.var(0, correction=3),
                                lambda lib, x: x.std()], ids=["var()", "std(1)",
                                                              "var(0, correction=3)", "std()"])
@pytest.mark.parametrize("data", [np.array([[1.5]]), np.array([[2.0, 2.0, 2.0]]),
                                  np.array([[1.0, 4.0], [2.0, -3.0]])],
                         ids=["one element", "constant row", "two by two"])
def test_var_and_std_without_degrees_of_freedom_match_torch(fn, data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare(fn, data)


def test_var_without_degrees_of_freedom_warns_like_torch():
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        hookgrad.ones(1).var()


def test_std_of_a_constant_has_zero_gradient_like_torch():
    compare(lambda lib, x: x.std(1), np.array([[3.0, 3.0, 3.0], [1.0, 2.0, 4.0]]))


def test_logsumexp_handles_infinities_like_torch():
    compare(lambda lib, x: x.logsumexp(1),
            np.array([[np.inf, 1.0], [-np.inf, -np.inf], [0.5, -np.inf]]))


def test_softmax_of_large_values_is_stable_like_torch():
    compare(lambda lib, x: (x.softmax(1), x.log_softmax(1)),
            np.array([[1000.0, 1001.0, 999.0], [-1000.0, 0.0, 1000.0]]))


# -- dtypes ---------------------------------------------------------------------------------------
DTYPE_CASES = {
    "sum of int32 is int64": (lambda lib, x: x.sum(), np.arange(6, dtype=np.int32)),
    "sum of bools is int64": (lambda lib, x: x.sum(), np.array([True, False, True])),
    "sum(dtype=int8)": (lambda lib, x: x.sum(dtype=lib.int8), np.arange(6, dtype=np.int16)),
    "sum of uint8 over a dim": (lambda lib, x: x.sum(0), np.full((3, 2), 200, np.uint8)),
    "prod of int32 is int64": (lambda lib, x: x.prod(), np.arange(1, 6, dtype=np.int32)),
    "cumsum of int32 is int64": (lambda lib, x: x.cumsum(0), np.arange(6, dtype=np.int32)),
    "cumsum of bools": (lambda lib, x: x.cumsum(0), np.array([True, False, True])),
    "max of ints": (lambda lib, x: x.max(0), np.array([[3, 1], [2, 5]], np.int32)),
    "amax of ints": (lambda lib, x: x.amax(1), np.array([[3, 1], [2, 5]], np.int32)),
    "max of bools": (lambda lib, x: x.max(), np.array([True, False])),
    "logsumexp of ints": (lambda lib, x: x.logsumexp(0), np.array([1, 2, 3], np.int32)),
    "softmax of ints with dtype": (lambda lib, x: x.softmax(0, dtype=lib.float32),
                                   np.array([1, 2, 3])),
    "mean of ints with dtype": (lambda lib, x: x.mean(dtype=lib.float64),
                                np.array([1, 2, 4], np.int32)),
    "half sum accumulates in float32": (lambda lib, x: x.sum(),
                                        np.full(5000, 0.1, np.float16)),
    "half mean accumulates in float32": (lambda lib, x: x.mean(0),
                                         np.full((5000, 2), 30000, np.float16)),
    "half var": (lambda lib, x: x.var(), np.linspace(0, 8, 64).astype(np.float16)),
    "half softmax": (lambda lib, x: x.softmax(0), np.linspace(-4, 4, 9).astype(np.float16)),
    "half cumsum": (lambda lib, x: x.cumsum(0), np.full(300, 0.1, np.float16)),
}


@pytest.mark.parametrize("fn, data", DTYPE_CASES.values(), ids=DTYPE_CASES.keys())
def test_reduction_result_dtypes_match_torch(fn, data):
    compare(fn, data, grad=False)


@pytest.mark.parametrize("fn", [
    lambda lib, x: x.sum(1, dtype=lib.float64), lambda lib, x: x.mean(dtype=lib.float64),
    lambda lib, x: x.prod(1, dtype=lib.float64), lambda lib, x: x.cumsum(0, dtype=lib.float64),
    lambda lib, x: x.softmax(1, dtype=lib.float64),
    lambda lib, x: lib.log_softmax(x, 0, dtype=lib.float64),
], ids=["sum", "mean", "prod", "cumsum", "softmax", "log_softmax"])
def test_reduction_in_a_wider_dtype_returns_gradients_in_the_input_dtype(fn):
    compare(fn, random(3, 4).astype(np.float32))


def test_softmax_with_dtype_casts_first_as_torch():
    def names(lib):
        out = lib.softmax(lib.ones(2, 3, requires_grad=True), 1, dtype=lib.float64)
        return [out.grad_fn.name(), out.grad_fn.next_functions[0][0].name()]

    assert names(hookgrad) == names(torch)


# -- argmax / argmin / any / all -----------------------------------------------------------------
INDEX_AND_LOGIC = {
    "argmax()": lambda lib, x: x.argmax(),
    "argmax(keepdim)": lambda lib, x: lib.argmax(x, keepdim=True),
    "argmax(1)": lambda lib, x: x.argmax(1),
    "argmin(0, keepdim)": lambda lib, x: lib.argmin(x, dim=0, keepdim=True),
    "any()": lambda lib, x: (x > 1).any(),
    "any(1)": lambda lib, x: lib.any(x > 1, 1),
    "all(0, keepdim)": lambda lib, x: (x > -2).all(0, keepdim=True),
    "all((0, 1))": lambda lib, x: (x > -2).all(dim=(0, 1)),
    "any of floats": lambda lib, x: (x * (x > 0)).any(1),
    "all of uint8 stays uint8": lambda lib, x: (x > 0).to(lib.uint8).all(1),
}


@pytest.mark.parametrize("fn", INDEX_AND_LOGIC.values(), ids=INDEX_AND_LOGIC.keys())
def test_indices_and_logical_reductions_match_torch(fn):
    compare(fn, random(4, 5, seed=3), grad=False)


def test_argmax_gives_no_gradient_path():
    assert hookgrad.randn(3, requires_grad=True).argmax().requires_grad is False


# -- errors ---------------------------------------------------------------------------------------
ERRORS = {
    "dim out of range": lambda lib: lib.zeros(2, 3).sum(3),
    "negative dim out of range": lambda lib: lib.zeros(2, 3).mean(-3),
    "repeated dim": lambda lib: lib.zeros(2, 3).sum((0, 0)),
    "repeated dim after wrapping": lambda lib: lib.zeros(2, 3).amax((1, -1)),
    "max dim out of range": lambda lib: lib.zeros(2, 3).max(2),
    "max of empty": lambda lib: lib.zeros(0).max(),
    "max over an empty dim": lambda lib: lib.zeros(0, 3).max(0),
    "amax of empty": lambda lib: lib.zeros(0).amax(),
    "amin over an empty dim": lambda lib: lib.zeros(0).amin(0),
    "argmax of empty": lambda lib: lib.zeros(0).argmax(),
    "var of ints": lambda lib: lib.tensor([1, 2]).var(),
    "std of ints": lambda lib: lib.tensor([1, 2]).std(0),
    "mean of ints": lambda lib: lib.tensor([1, 2], dtype=lib.int32).mean(),
    "softmax of ints": lambda lib: lib.tensor([[1, 2]]).softmax(1),
    "softmax of ints, not last dim": lambda lib: lib.tensor([[1, 2]]).softmax(0),
    "log_softmax of ints": lambda lib: lib.tensor([1, 2]).log_softmax(0),
    "softmax dim out of range": lambda lib: lib.zeros(2, 3).softmax(2),
    "logsumexp without dim": lambda lib: lib.zeros(2, 3).logsumexp(),
    "softmax without dim": lambda lib: lib.softmax(lib.zeros(2, 3)),
    "cumsum dim out of range": lambda lib: lib.zeros(2, 3).cumsum(2),
    "max over a tuple of dims": lambda lib: lib.zeros(2, 3).max((0, 1)),
}


@pytest.mark.parametrize("fn", ERRORS.values(), ids=ERRORS.keys())
def test_reduction_errors_match_torch(fn):
    assert_same_error(fn)


# -- fuzzing ------------------------------------------------------------------------------------
@st.composite
def shapes_and_dims(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=0, max_size=4)))
    ndim = len(shape)
    if ndim == 0:
        return shape, draw(st.sampled_from([None, 0, -1]))
    dims = draw(st.lists(st.integers(-ndim, ndim - 1), max_size=ndim, unique_by=lambda d: d % ndim))
    choice = draw(st.sampled_from(["none", "int", "tuple"]))
    return shape, None if choice == "none" or not dims else dims[0] if choice == "int" \
        else tuple(dims)


@given(shapes_and_dims(), st.booleans(), st.sampled_from(["sum", "mean", "var", "std", "amax"]),
       st.sampled_from([np.float64, np.float32]))
@settings(max_examples=60, deadline=None)
def test_reduction_fuzz_over_shapes_and_dims_matches_torch(shape_and_dim, keepdim, op, dtype):
    shape, dim = shape_and_dim
    data = np.random.default_rng(len(shape)).standard_normal(shape).astype(dtype)
    if op in ("var", "std"):
        count = math.prod(shape) if dim is None else math.prod(
            [shape[d] for d in ((dim,) if isinstance(dim, int) else dim)] if shape else [1])
        if count < 2:  # torch warns and answers nan there: covered by its own test
            return
    if dim is None and op != "amax":
        compare(lambda lib, x: getattr(x, op)(), data)
    else:
        compare(lambda lib, x: getattr(x, op)(dim, keepdim=keepdim), data)


@pytest.mark.parametrize("data", [[[-1.5, -0.008, 0.0]], [[-1.5, -0.008, 2.0]], [[0.0]],
                                  [[0.0, 0.0, 1.0], [2.0, 0.0, 1.0]]])
@pytest.mark.parametrize("dim", [0, 1, None])
def test_prod_gradient_graph_alone_along_dim_matches_torch(data, dim):
    """With create_graph, an element alone along the reduced dim has a constant factor: with a
    zero present, torch's gradient then does not depend on the input (no requires_grad)."""
    found = []
    for lib in (torch, hookgrad):
        x = lib.tensor(data, dtype=lib.float64, requires_grad=True)
        y = x.prod() if dim is None else x.prod(dim)
        (grad,) = lib.autograd.grad(y.sum(), [x], create_graph=True)
        found.append((grad.requires_grad, grad.tolist()))
    assert found[0] == found[1]


def test_all_and_any_over_an_empty_dim_list_reduce_nothing():
    """torch's all/any with ``dim=()`` test each element; count_nonzero (as the sums) counts
    over every dim."""
    x = np.array([[1, 0, 2], [3, 4, 0]])
    for fn in (lambda lib, t: t.all(()), lambda lib, t: t.any(()),
               lambda lib, t: lib.all(t, (), keepdim=True), lambda lib, t: t.bool().any(()),
               lambda lib, t: lib.count_nonzero(t, ()), lambda lib, t: t[:0].all(())):
        compare(fn, x, grad=False)
        compare(fn, x.astype(np.uint8), grad=False)


def test_count_nonzero_dims_of_a_0d_tensor():
    for fn in (lambda lib, t: lib.count_nonzero(t, 0), lambda lib, t: lib.count_nonzero(t, -1),
               lambda lib, t: lib.count_nonzero(t, (0,)), lambda lib, t: lib.count_nonzero(t)):
        compare(fn, np.array(3.0), grad=False)
        compare(fn, np.array(0), grad=False)
    assert_same_error(lambda lib: lib.count_nonzero(lib.tensor(3), (0, -1)))
    assert_same_error(lambda lib: lib.count_nonzero(lib.tensor([3]), 1))


def test_argmax_and_argmin_refuse_bool():
    for name in ("argmax", "argmin"):
        assert_same_error(lambda lib: getattr(lib, name)(lib.tensor([True, False])))
        assert_same_error(lambda lib: getattr(lib, name)(lib.tensor(True), 0))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(16, 64, 128), (3,), (7, 5), (1,)])
def test_mean_of_everything_backward_fills_torchs_value(dtype, shape):
    # first order fills grad / count in (no division of an expanded gradient); it must give
    # torch's values and strides, and what the recorded formula (create_graph) gives
    array = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    seed = np.array(3.7, dtype)
    x = hookgrad.tensor(array, requires_grad=True)
    x.mean().backward(hookgrad.tensor(seed))
    t = torch.tensor(array, requires_grad=True)
    t.mean().backward(torch.tensor(seed))
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())
    assert x.grad.stride() == t.grad.stride()
    y = hookgrad.tensor(array, requires_grad=True)
    (recorded,) = hookgrad.autograd.grad(y.mean(), y, hookgrad.tensor(seed), create_graph=True)
    np.testing.assert_array_equal(recorded.detach().numpy(), x.grad.numpy())
