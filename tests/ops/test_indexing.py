"""``tensor[key]``, ``tensor[key] = value`` and index_put_ against torch: values, gradients
(repeated indices accumulate), grad_fn chains (views applied dim by dim), saved indices,
view-or-copy, error messages, and fuzzing over random keys."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from conftest import compare, grad_fn_chain, saved_log
from hypothesis import given, settings
from hypothesis import strategies as st

import hookgrad

SHAPE = (3, 4, 5)
MASK = np.random.default_rng(7).standard_normal(SHAPE) > 0


def _x(seed=0, shape=SHAPE):
    return np.random.default_rng(seed).standard_normal(shape)


# name, key(lib): basic keys are views, the rest are IndexBackward0 copies
KEYS = [
    ("int", lambda lib: 1),
    ("negative_int", lambda lib: -1),
    ("int_tuple", lambda lib: (0, 1)),
    ("int_slice", lambda lib: (0, slice(1, None))),
    ("colon_int", lambda lib: (slice(None), 0)),
    ("lone_colon", lambda lib: slice(None)),
    ("lone_slice_clamped", lambda lib: slice(-100, 100)),
    ("colon_colon", lambda lib: (slice(None), slice(None))),
    ("full_slice_skipped", lambda lib: (slice(0, 3), 0)),
    ("step", lambda lib: (slice(None, None, 2), slice(1, None, 3))),
    ("slices", lambda lib: (slice(1, 2), slice(1, 3), slice(2, 4))),
    ("empty_slice", lambda lib: slice(2, 1)),
    ("none", lambda lib: None),
    ("none_middle", lambda lib: (slice(1, 2), None, slice(None, None, 2))),
    ("ellipsis", lambda lib: Ellipsis),
    ("ellipsis_int", lambda lib: (Ellipsis, 0)),
    ("int_ellipsis_int", lambda lib: (0, Ellipsis, 1)),
    ("two_ellipses", lambda lib: (Ellipsis, 0, Ellipsis)),
    ("ellipsis_none", lambda lib: (None, Ellipsis, None, 0)),
    ("empty_tuple", lambda lib: ()),
    ("0d_int_tensor", lambda lib: lib.tensor(1)),
    ("numpy_int", lambda lib: (np.int64(2), np.array(1))),
    ("list_with_slice_is_tuple", lambda lib: [0, slice(None)]),
    ("all_ints", lambda lib: (0, 1, 2)),
    # advanced
    ("list", lambda lib: [0, 2]),
    ("list_repeated", lambda lib: [2, 0, 2, 2]),
    ("list_negative", lambda lib: [-1, 0]),
    ("empty_list", lambda lib: []),
    ("float_list_as_long", lambda lib: [1.0]),
    ("nested_list_is_tuple", lambda lib: [[0, 1], [1, 2]]),
    ("long_tensor", lambda lib: lib.tensor([1, 1, 0])),
    ("int32_tensor", lambda lib: lib.tensor([0, 2], dtype=lib.int32)),
    ("2d_index", lambda lib: lib.tensor([[0, 1], [2, 2]])),
    ("numpy_array", lambda lib: np.array([0, 2])),
    ("colon_list", lambda lib: (slice(None), [0, 1])),
    ("int_list", lambda lib: (0, [0, 1])),
    ("list_colon_int", lambda lib: ([0, 1], slice(None), 0)),
    ("colon_list_int", lambda lib: (slice(None), [0, 1], 0)),
    ("int_colon_list", lambda lib: (0, slice(None), [0, 1])),
    ("list_slice_list", lambda lib: ([0, 1], slice(1, None), [1, 2])),
    ("lists_broadcast", lambda lib: (slice(None), [[0], [1]], [0, 1, 2])),
    ("ellipsis_list", lambda lib: (Ellipsis, [0, 1])),
    ("none_list", lambda lib: (None, [0, 1])),
    ("list_none", lambda lib: ([0, 1], None)),
    ("int_none_list", lambda lib: (0, None, [1, 2])),
    ("three_lists", lambda lib: ([0, 1], [0, 1], [0, 1])),
    ("non_adjacent_lists", lambda lib: ([0, 2], slice(None), [1, 4])),
    ("mask_full", lambda lib: lib.tensor(MASK)),
    ("mask_2d", lambda lib: lib.tensor(MASK[:, :, 0])),
    ("mask_2d_then_int", lambda lib: (lib.tensor(MASK[:, :, 0]), 0)),
    ("mask_2d_then_slice", lambda lib: (lib.tensor(MASK[:, :, 0]), slice(1, 3))),
    ("colon_mask", lambda lib: (slice(None), lib.tensor(MASK[0, :, 0]))),
    ("ellipsis_mask", lambda lib: (Ellipsis, lib.tensor(MASK[0, 0]))),
    ("bool_list", lambda lib: [True, False, True]),
    ("uint8_mask", lambda lib: lib.tensor([1, 0, 1], dtype=lib.uint8)),
    ("true", lambda lib: True),
    ("false", lambda lib: False),
    ("none_true", lambda lib: (None, True)),
    ("0d_bool_tensor", lambda lib: lib.tensor(True)),
    ("mask_list", lambda lib: (lib.tensor(MASK[:, 0, 0]), [1] * int(MASK[:, 0, 0].sum()))),
]
BASIC = {"int", "negative_int", "int_tuple", "int_slice", "colon_int", "lone_colon",
         "lone_slice_clamped", "colon_colon", "full_slice_skipped", "step", "slices",
         "empty_slice", "none", "none_middle", "ellipsis", "ellipsis_int", "int_ellipsis_int",
         "two_ellipses", "ellipsis_none", "empty_tuple", "0d_int_tensor", "numpy_int",
         "list_with_slice_is_tuple", "all_ints"}


def _get(key):
    return lambda lib, x: x[key(lib)]


@pytest.mark.parametrize("name, key", KEYS, ids=[k[0] for k in KEYS])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_getitem_values_and_gradients(name, key, dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare(_get(key), _x().astype(dtype))


@pytest.mark.parametrize("name, key", KEYS, ids=[k[0] for k in KEYS])
def test_getitem_grad_fn_chain_and_view(name, key):
    results = []
    for lib in (hookgrad, torch):
        x = lib.tensor(_x(), requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = x[key(lib)]
        results.append((grad_fn_chain(y), y._base is x))
    assert results[0] == results[1]
    assert results[1][1] == (name in BASIC)


@pytest.mark.parametrize("name, key", KEYS, ids=[k[0] for k in KEYS])
def test_getitem_saves_the_indices(name, key):
    logs = []
    for lib in (hookgrad, torch):
        x = lib.tensor(_x(), requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            logs.append(saved_log(lib, lambda t, lib=lib: t[key(lib)], x))
    assert logs[0] == logs[1]


@pytest.mark.parametrize("name, key", [k for k in KEYS if k[0] not in BASIC][::3])
def test_getitem_double_backward(name, key):
    x = hookgrad.tensor(_x(1), requires_grad=True)
    assert hookgrad.autograd.gradgradcheck(lambda t: t[key(hookgrad)], [x])


def test_getitem_on_0d_tensor():
    compare(lambda lib, s: (s[None], s[...], s[()], s[None, None]), np.array(2.0))


def test_getitem_view_shares_memory_and_version():
    x = hookgrad.zeros(3, 4)
    y = x[1, 1:]
    x.add_(1)
    assert y.tolist() == [1.0, 1.0, 1.0] and y._version == 1
    z = x[[1]]
    x.add_(1)
    assert z.tolist() == [[1.0] * 4] and z._version == 0


def test_getitem_repeated_indices_accumulate():
    compare(lambda lib, x: x[[0, 0, 1, 0]] * lib.arange(4.0).reshape(4, 1), _x(shape=(2, 3)))
    compare(lambda lib, x: x[lib.tensor([[1, 1], [1, 0]]), lib.tensor([2, 2])], _x(shape=(2, 3)))


# -- setitem ---------------------------------------------------------------------------------
# name, key(lib), value(lib, w) where w is a (4, 5) float64 tensor that requires grad
SETS = [
    ("int_number", lambda lib: 0, lambda lib, w: 1.5),
    ("int_tensor", lambda lib: 0, lambda lib, w: w),
    ("int_broadcast_row", lambda lib: 0, lambda lib, w: w[0]),
    ("int_leading_ones", lambda lib: 0, lambda lib, w: w.reshape(1, 1, 4, 5)),
    ("int_0d_tensor", lambda lib: 0, lambda lib, w: w[0, 0]),
    ("slice", lambda lib: slice(1, None), lambda lib, w: w),
    ("lone_colon", lambda lib: slice(None), lambda lib, w: w),
    ("ellipsis_number", lambda lib: Ellipsis, lambda lib, w: 2),
    ("ellipsis_tensor", lambda lib: Ellipsis, lambda lib, w: w * 2),
    ("none", lambda lib: None, lambda lib, w: w),
    ("int_int_int", lambda lib: (0, 0, 0), lambda lib, w: w[0, 0]),
    ("step_slices", lambda lib: (slice(None, None, 2), slice(1, 3)), lambda lib, w: w[:2]),
    ("list_number", lambda lib: [0, 1], lambda lib, w: 1.0),
    ("list_tensor", lambda lib: [0, 2], lambda lib, w: w),
    ("list_repeated", lambda lib: [0, 0], lambda lib, w: w),
    ("mixed_int_list", lambda lib: (0, [0, 1]), lambda lib, w: w[0]),
    ("mixed_slice_list_int", lambda lib: (slice(None), [0, 1], 0), lambda lib, w: w[:2, :3].T),
    ("mixed_slice_list", lambda lib: (slice(1, None), [0, 1]), lambda lib, w: 2.0),
    ("non_adjacent", lambda lib: ([0, 1], slice(None), [1, 2]), lambda lib, w: w[:, :2].T),
    ("mask", lambda lib: lib.tensor(MASK), lambda lib, w: 0.0),
    ("mask_0d_tensor", lambda lib: lib.tensor(MASK), lambda lib, w: w[1, 1]),
    ("mask_2d_rows", lambda lib: lib.tensor(MASK[:, :, 0]), lambda lib, w: w[0]),
    ("0d_int_tensor_key", lambda lib: lib.tensor(2), lambda lib, w: w),
    ("true", lambda lib: True, lambda lib, w: w),
    ("false", lambda lib: False, lambda lib, w: w),
    ("int_dtype_value", lambda lib: 0, lambda lib, w: lib.ones(4, 5, dtype=lib.int64)),
]


def _set(key, value):
    def fn(lib, x, w):
        b = x * 1
        b[key(lib)] = value(lib, w)
        return b
    return fn


@pytest.mark.parametrize("name, key, value", SETS, ids=[s[0] for s in SETS])
def test_setitem_values_and_gradients(name, key, value):
    compare(_set(key, value), _x(), _x(1, (4, 5)))


@pytest.mark.parametrize("name, key, value", SETS, ids=[s[0] for s in SETS])
def test_setitem_graph(name, key, value):
    """grad_fn of the target (CopySlices around the op, or the op itself) and its inputs."""
    def describe(node, depth=0):
        if node is None:
            return None
        if depth == 2:
            return node.name()
        return (node.name(), tuple(describe(n, depth + 1) for n, _ in node.next_functions))

    results = []
    for lib in (hookgrad, torch):
        x = lib.tensor(_x(), requires_grad=True)
        w = lib.tensor(_x(1, (4, 5)), requires_grad=True)
        b = x * 1
        b[key(lib)] = value(lib, w)
        results.append((describe(b.grad_fn), b._version))
    assert results[0] == results[1]


@pytest.mark.parametrize("name, key, value", SETS, ids=[s[0] for s in SETS])
def test_setitem_saved_tensors(name, key, value):
    logs = []
    for lib in (hookgrad, torch):
        x = lib.tensor(_x(), requires_grad=True)
        w = lib.tensor(_x(1, (4, 5)), requires_grad=True)
        logs.append(saved_log(lib, lambda a, b, lib=lib: _set(key, value)(lib, a, b), x, w))
    assert logs[0] == logs[1]


def test_setitem_into_tensor_without_grad_makes_it_require_grad():
    def fn(lib, w):
        out = lib.zeros(3, dtype=lib.float64)
        out[1:] = w * 2
        return out

    hg, th = compare(fn, np.array([1.0, 2.0]))
    assert hg[0].grad_fn.name() == th[0].grad_fn.name() == "torch::autograd::CopySlices"


def test_setitem_int_values_into_int_tensor():
    def fn(lib):
        x = lib.zeros(2, 3, dtype=lib.int64)
        x[0] = 2.7
        x[1, [0, 2]] = lib.tensor([5, 6])
        x[x > 4] = -1
        return x

    compare(fn)


def test_setitem_twice_in_a_row():
    def fn(lib, x, w):
        b = x * 1
        b[0] = w
        b[:, 1] = w[:, 0].sum()
        b[[2, 2]] += w * 3
        return b

    compare(fn, _x(), _x(1, (4, 5)))


def test_augmented_assignment_through_views():
    """``b[k] += v`` is getitem, an in-place op on the view, then setitem of the view itself."""
    def fn(lib, x, w):
        b = x * 1
        b[:, 1] += w[0]
        b[0] *= 2
        b[1:, ::2] -= b[:2, 1:3].sum()
        return b

    compare(fn, _x(), _x(1, (4, 5)))


def test_rows_assigned_in_a_loop():
    def fn(lib, x):
        out = lib.zeros(2, 4, 5, dtype=lib.float64)
        for i in range(2):
            out[i] = x[i] * (i + 1)
        return out.sum(0)

    compare(fn, _x())


# -- index_put ---------------------------------------------------------------------------------
PUTS = [
    ("one", lambda lib: (lib.tensor([0, 2]),), lambda lib, w: w, False),
    ("one_accumulate", lambda lib: (lib.tensor([0, 0, 2]),), lambda lib, w: w, True),
    ("two", lambda lib: (lib.tensor([0, 1]), lib.tensor([1, 3])), lambda lib, w: w[0], False),
    ("two_accumulate", lambda lib: [lib.tensor([0, 0]), lib.tensor([1, 1])],
     lambda lib, w: w[0], True),
    ("mask", lambda lib: (lib.tensor(MASK),), lambda lib, w: w[0, 0], False),
    ("mask_accumulate", lambda lib: (lib.tensor(MASK[:, :, 0]),), lambda lib, w: w[1], True),
    ("scalar_value", lambda lib: (lib.tensor([1]),), lambda lib, w: w[2, 2], True),
]


@pytest.mark.parametrize("name, indices, value, accumulate", PUTS, ids=[p[0] for p in PUTS])
@pytest.mark.parametrize("inplace", [True, False])
def test_index_put(name, indices, value, accumulate, inplace):
    def fn(lib, x, w):
        b = x * 1
        if inplace:
            return b.index_put_(indices(lib), value(lib, w), accumulate=accumulate)
        return lib.index_put(b, indices(lib), value(lib, w), accumulate)

    hg, th = compare(fn, _x(), _x(1, (4, 5)))
    assert hg[0].grad_fn.name() == th[0].grad_fn.name()


def test_index_put_double_backward():
    x = hookgrad.tensor(_x(), requires_grad=True)
    w = hookgrad.tensor(_x(1, (4, 5)), requires_grad=True)
    index = (hookgrad.tensor([0, 2, 0]),)
    for accumulate in (True, False):
        def fn(a, b, accumulate=accumulate):
            return (a * 1).index_put_(index, b.expand(3, 4, 5) * 2, accumulate)

        assert hookgrad.autograd.gradgradcheck(fn, [x, w])


# -- errors ----------------------------------------------------------------------------------
ERRORS = [
    ("int_bounds", lambda lib, a: a[5]),
    ("negative_bounds", lambda lib, a: a[-4]),
    ("second_dim_bounds", lambda lib, a: a[:, 10]),
    ("too_many", lambda lib, a: a[0, 0, 0, 0]),
    ("too_many_lists", lambda lib, a: a[[0, 1], [0, 1], [0, 1], [0, 1]]),
    ("0d_int", lambda lib, a: a.sum()[0]),
    ("float", lambda lib, a: a[1.0]),
    ("string", lambda lib, a: a["x"]),
    ("float_tensor", lambda lib, a: a[lib.tensor([1.0])]),
    ("negative_step", lambda lib, a: a[::-1]),
    ("zero_step", lambda lib, a: a[::0]),
    ("list_bounds", lambda lib, a: a[[5]]),
    ("list_bounds_later_dim", lambda lib, a: a[:, [0, 4]]),
    ("broadcast", lambda lib, a: a[[0, 1], [0, 1, 2]]),
    ("mask_shape", lambda lib, a: a[lib.ones(2, dtype=lib.bool)]),
    ("mask_shape_inner", lambda lib, a: a[lib.ones(3, 5, dtype=lib.bool)]),
    ("mask_shape_offset", lambda lib, a: a[:, lib.ones(3, 5, dtype=lib.bool)]),
    ("mask_after_ellipsis", lambda lib, a: a[..., lib.ones(4, dtype=lib.bool)]),
    ("mask_and_list_broadcast", lambda lib, a: a[lib.tensor(MASK[:, :, 0]), [0, 1]]),
    ("set_list_value", lambda lib, a: a.__setitem__(0, [1.0, 2.0])),
    ("set_numpy_value", lambda lib, a: a.__setitem__(0, np.ones(5))),
    ("set_string_value", lambda lib, a: a.__setitem__(0, "x")),
    ("set_bad_shape", lambda lib, a: a.__setitem__(0, lib.ones(2, 4, 5, dtype=lib.float64))),
    ("set_transposed", lambda lib, a: a.__setitem__(0, lib.ones(5, 4, dtype=lib.float64))),
    ("set_advanced_dtype", lambda lib, a: a.__setitem__([0], lib.ones(4, 5))),
    ("set_bounds", lambda lib, a: a.__setitem__(5, 1.0)),
    ("set_list_bounds", lambda lib, a: a.__setitem__([5], 1.0)),
    ("put_dtype", lambda lib, a: a.index_put_((lib.tensor([0]),), lib.ones(4, 5))),
    ("put_list_index", lambda lib, a: a.index_put_(([0],), a[0])),
    ("put_none_index", lambda lib, a: a.index_put_((None, lib.tensor([1])), a[0])),
    ("put_shape", lambda lib, a: a.index_put_((lib.tensor([0, 1]),), lib.ones(2, 5).double())),
    ("dict", lambda lib, a: a[{1: 2}]),
    ("copy_shape", lambda lib, a: a.copy_(lib.ones(2, 5))),
    ("copy_more_dims", lambda lib, a: a[0, 0].copy_(lib.ones(2, 5))),
    ("fill_1d_value", lambda lib, a: a.fill_(a[0, 0])),
]


@pytest.mark.parametrize("name, fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, fn):
    with pytest.raises(Exception) as expected:
        fn(torch, torch.tensor(_x()))
    with pytest.raises(type(expected.value)) as actual:
        fn(hookgrad, hookgrad.tensor(_x()))
    assert str(actual.value) == str(expected.value)


def test_uint8_mask_warns_like_torch():
    with pytest.warns(UserWarning, match="indexing with dtype torch.uint8 is now deprecated"):
        hookgrad.zeros(3)[hookgrad.tensor([1, 0, 1], dtype=hookgrad.uint8)]


def test_setitem_on_leaf_refused():
    x = hookgrad.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        x[0] = 1.0
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used"):
        x[[0]] = 1.0


# -- fuzzing ---------------------------------------------------------------------------------
def _key_item(size):
    integer = st.integers(-size, size - 1)
    return st.one_of(
        integer,
        st.builds(slice, st.none() | st.integers(-size - 1, size + 1),
                  st.none() | st.integers(-size - 1, size + 1), st.none() | st.integers(1, 3)),
        st.lists(integer, min_size=1, max_size=3),
    )


@st.composite
def keys(draw):
    """A shape and a key for it: items for the leading dims (or, after ``...``, the trailing
    ones), with ``None`` sprinkled in; list indices share one length so they broadcast."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    count = draw(st.integers(0, len(shape)))
    ellipsis = draw(st.sampled_from(["none", "end", "start"]))
    sizes = shape[len(shape) - count:] if ellipsis == "start" else shape[:count]
    items = [draw(_key_item(size)) for size in sizes]
    lists = [i for i, item in enumerate(items) if isinstance(item, list)]
    for i in lists[1:]:
        items[i] = (items[i] * 3)[:len(items[lists[0]])]
    for _ in range(draw(st.integers(0, 2))):
        items.insert(draw(st.integers(0, len(items))), None)
    if ellipsis == "end":
        items.append(Ellipsis)
    elif ellipsis == "start":
        items.insert(0, Ellipsis)
    return shape, tuple(items)


@settings(max_examples=60, deadline=None)
@given(case=keys())
def test_fuzz_getitem(case):
    shape, key = case
    compare(lambda lib, x: x[key], _x(2, shape))


@settings(max_examples=40, deadline=None)
@given(case=keys(), scalar=st.booleans())
def test_fuzz_setitem(case, scalar):
    shape, key = case
    target_shape = tuple(torch.zeros(shape)[key].shape)
    value = _x(3, target_shape)

    def fn(lib, x, v):
        b = x * 1
        b[key] = 0.5 if scalar else v
        return b

    compare(fn, _x(2, shape), value)


@pytest.mark.parametrize("change", ["mask after setitem", "index after getitem",
                                    "index after index_put_", "unchanged"])
def test_index_tensors_are_saved_with_their_version_as_torch(change):
    """The index tensors an indexing op saves are the caller's: changing one in place before
    backward is torch's version error, never the gradient of other indices."""
    outcomes = []
    for lib in (torch, hookgrad):
        x = lib.zeros(3, requires_grad=True)
        values = lib.tensor([1.0, 2.0], requires_grad=True)
        weights = lib.tensor([1.0, 10.0, 100.0])
        if change in ("mask after setitem", "unchanged"):
            mask = lib.tensor([True, False, True])
            y = x * 1
            y[mask] = values
            if change != "unchanged":
                mask[0], mask[1] = False, True
            loss = (y * weights).sum()
        elif change == "index after getitem":
            index = lib.tensor([0, 2])
            loss = (x[index] * values).sum()
            index[0] = 1
        else:
            index = lib.tensor([2, 0])
            y = (x * 1).index_put_((index,), values)
            index[0] = 1
            loss = (y * weights).sum()
        try:
            loss.backward()
            outcomes.append(("ok", x.grad.tolist(), values.grad.tolist()))
        except RuntimeError as error:
            outcomes.append(("error", "modified by an inplace operation" in str(error)))
    assert outcomes[1] == outcomes[0]
