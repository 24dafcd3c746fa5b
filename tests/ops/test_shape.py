"""Shape ops and views against torch: values, dtypes, gradients (float64 exact, float32 with
tolerance), grad_fn names, what is saved, view-or-copy, double backward and error messages."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from conftest import assert_same_error, compare, grad_fn_chain, saved_log
from hypothesis import given, settings
from hypothesis import strategies as st

import hookgrad

IDX_GATHER = np.array([[[0, 1, 2, 3, 0], [3, 3, 1, 0, 2]],
                       [[1, 1, 1, 1, 1], [0, 2, 0, 2, 3]],
                       [[2, 0, 3, 1, 2], [0, 2, 2, 2, 0]]])  # (3, 2, 5) into dim 1 of (3, 4, 5)
# no column repeats an index, so scatter's result (and its gradient) is well defined
IDX_SELECT = np.array([2, 0, 2, 3])


def _index(lib, array, dtype=None):
    return lib.tensor(array, dtype=dtype or lib.int64)


def _pad(lib, x, pad, value=None, mode="constant"):
    if lib is torch:
        return torch.nn.functional.pad(x, pad, mode=mode, value=value)
    from hookgrad.ops.padding import pad as hg_pad

    return hg_pad(x, pad, mode=mode, value=value)


# name, fn(lib, *inputs), input shapes
CASES = [
    ("reshape", lambda lib, x: x.reshape(12, 5), [(3, 4, 5)]),
    ("reshape_infer", lambda lib, x: x.reshape(-1, 10), [(3, 4, 5)]),
    ("reshape_tuple", lambda lib, x: lib.reshape(x, (5, -1)), [(3, 4, 5)]),
    ("reshape_copy", lambda lib, x: x.transpose(0, 1).reshape(-1), [(3, 4, 5)]),
    ("reshape_alias", lambda lib, x: x.t().reshape(2, 2, 3), [(3, 4)]),
    ("reshape_alias_expanded", lambda lib, x: x.expand(3, 4).reshape(3, 2, 2), [(3, 1)]),
    ("reshape_0d", lambda lib, x: x.sum().reshape(1, 1), [(3,)]),
    ("view", lambda lib, x: x.view(3, 20), [(3, 4, 5)]),
    ("view_infer", lambda lib, x: x.view(-1), [(3, 4, 5)]),
    ("view_split_dim", lambda lib, x: x.transpose(0, 1).view(2, 2, 3, 5), [(3, 4, 5)]),
    ("view_as", lambda lib, x, y: x.view_as(y), [(3, 4), (12,)]),
    ("reshape_as", lambda lib, x, y: x.t().reshape_as(y), [(3, 4), (12,)]),
    ("flatten", lambda lib, x: x.flatten(), [(3, 4, 5)]),
    ("flatten_from_1", lambda lib, x: lib.flatten(x, 1), [(3, 4, 5)]),
    ("flatten_0_1", lambda lib, x: x.flatten(0, 1), [(3, 4, 5)]),
    ("flatten_noncontig", lambda lib, x: x.mT.flatten(1), [(3, 4, 5)]),
    ("flatten_0d", lambda lib, x: x.sum().flatten(), [(3,)]),
    ("unflatten", lambda lib, x: x.unflatten(1, (2, 2)), [(3, 4, 5)]),
    ("unflatten_infer", lambda lib, x: lib.unflatten(x, -1, (-1, 1)), [(3, 4, 5)]),
    ("squeeze_all", lambda lib, x: x.squeeze(), [(3, 1, 5, 1)]),
    ("squeeze_dim", lambda lib, x: x.squeeze(1), [(3, 1, 5, 1)]),
    ("squeeze_dim_not_1", lambda lib, x: x.squeeze(0), [(3, 1, 5, 1)]),
    ("squeeze_dims", lambda lib, x: lib.squeeze(x, (1, -1)), [(3, 1, 5, 1)]),
    ("squeeze_0d", lambda lib, x: x.sum().squeeze(0), [(3,)]),
    ("unsqueeze", lambda lib, x: x.unsqueeze(0), [(3, 4)]),
    ("unsqueeze_last", lambda lib, x: lib.unsqueeze(x, -1), [(3, 4)]),
    ("permute", lambda lib, x: x.permute(2, 0, 1), [(3, 4, 5)]),
    ("permute_list", lambda lib, x: lib.permute(x, [1, -1, 0]), [(3, 4, 5)]),
    ("transpose", lambda lib, x: x.transpose(0, 2), [(3, 4, 5)]),
    ("swapaxes", lambda lib, x: lib.swapaxes(x, -1, 0), [(3, 4, 5)]),
    ("movedim", lambda lib, x: x.movedim((0, 1), (2, 0)), [(3, 4, 5)]),
    ("t", lambda lib, x: x.t(), [(3, 4)]),
    ("t_1d", lambda lib, x: lib.t(x), [(4,)]),
    ("T", lambda lib, x: x.T, [(3, 4)]),
    ("mT", lambda lib, x: x.mT, [(2, 3, 4)]),
    ("expand", lambda lib, x: x.expand(2, 3, 4, 5), [(3, 4, 5)]),
    ("expand_keep", lambda lib, x: x.expand(-1, 4, 5), [(3, 1, 5)]),
    ("expand_list", lambda lib, x: x.expand([2, 3, 1]), [(3, 1)]),
    ("expand_as", lambda lib, x, y: x.expand_as(y), [(1, 4), (3, 4)]),
    ("expand_0d", lambda lib, x: x.sum().expand(3, 2), [(3,)]),
    ("narrow", lambda lib, x: x.narrow(1, 1, 2), [(3, 4, 5)]),
    ("narrow_negative", lambda lib, x: lib.narrow(x, -1, -3, 2), [(3, 4, 5)]),
    ("select", lambda lib, x: x.select(1, -1), [(3, 4, 5)]),
    ("split", lambda lib, x: x.split(2), [(5, 3)]),
    ("split_dim", lambda lib, x: lib.split(x, 2, -1), [(5, 3)]),
    ("split_sizes", lambda lib, x: x.split([1, 0, 4]), [(5, 3)]),
    ("chunk", lambda lib, x: x.chunk(3, 1), [(3, 7)]),
    ("chunk_fewer", lambda lib, x: lib.chunk(x, 4), [(6, 2)]),
    ("unbind", lambda lib, x: x.unbind(1), [(3, 4)]),
    ("split_some_used", lambda lib, x: x.split(2)[1], [(5, 3)]),
    ("unbind_some_used", lambda lib, x: lib.unbind(x)[0] * 2, [(3, 4)]),
    # copies
    ("repeat", lambda lib, x: x.repeat(2, 1, 3), [(3, 4)]),
    ("repeat_same", lambda lib, x: x.repeat(2, 3), [(3, 4)]),
    ("repeat_0d", lambda lib, x: x.sum().repeat(2), [(3,)]),
    ("repeat_zero", lambda lib, x: x.repeat(0, 1), [(3, 4)]),
    ("flip", lambda lib, x: x.flip(0), [(3, 4, 5)]),
    ("flip_dims", lambda lib, x: lib.flip(x, (0, -1)), [(3, 4, 5)]),
    ("flip_none", lambda lib, x: x.flip([]), [(3, 4)]),
    ("roll", lambda lib, x: x.roll(1, 0), [(3, 4, 5)]),
    ("roll_dims", lambda lib, x: lib.roll(x, (1, -7), (0, 2)), [(3, 4, 5)]),
    ("roll_flat", lambda lib, x: x.roll(5), [(3, 4)]),
    ("cat", lambda lib, x, y: lib.cat([x, y]), [(2, 3), (4, 3)]),
    ("cat_dim", lambda lib, x, y: lib.cat((x, y, x), dim=1), [(2, 3), (2, 1)]),
    ("cat_negative", lambda lib, x, y: lib.concat([x, y], -1), [(2, 3, 1), (2, 3, 2)]),
    ("cat_skips_empty",
     lambda lib, x, y: lib.cat([x, lib.zeros(0, dtype=lib.float64), y]), [(2, 3), (1, 3)]),
    ("cat_empty_needs_grad", lambda lib, x, y: lib.cat([x, y]), [(2, 3), (0,)]),
    ("cat_one", lambda lib, x: lib.cat([x]), [(2, 3)]),
    ("concatenate", lambda lib, x, y: lib.concatenate([x, y], axis=1), [(2, 3), (2, 2)]),
    ("stack", lambda lib, x, y: lib.stack([x, y]), [(2, 3), (2, 3)]),
    ("stack_last", lambda lib, x, y: lib.stack((x, y, x), -1), [(2, 3), (2, 3)]),
    ("stack_0d", lambda lib, x: lib.stack([x.sum(), x[0]]), [(3,)]),
    ("hstack", lambda lib, x, y: lib.hstack([x, y]), [(2, 3), (2, 1)]),
    ("hstack_1d", lambda lib, x, y: lib.hstack([x, y]), [(3,), (2,)]),
    ("vstack", lambda lib, x, y: lib.vstack([x, y]), [(3,), (2, 3)]),
    ("gather", lambda lib, x: x.gather(1, _index(lib, IDX_GATHER)), [(3, 4, 5)]),
    ("gather_smaller",
     lambda lib, x: lib.gather(x, 2, _index(lib, IDX_GATHER[:2, :, :3] % 3)), [(3, 4, 5)]),
    ("gather_int32", lambda lib, x: x.gather(1, _index(lib, IDX_GATHER, lib.int32)), [(3, 4, 5)]),
    ("take_along_dim",
     lambda lib, x: lib.take_along_dim(x, _index(lib, IDX_GATHER), 1), [(3, 4, 5)]),
    ("scatter_add",
     lambda lib, x, s: x.scatter_add(1, _index(lib, IDX_GATHER), s), [(3, 4, 5), (3, 2, 5)]),
    ("scatter_add_inplace",
     lambda lib, x, s: (x * 1).scatter_add_(1, _index(lib, IDX_GATHER), s),
     [(3, 4, 5), (3, 2, 5)]),
    ("scatter", lambda lib, x, s: x.scatter(1, _index(lib, IDX_GATHER), s), [(3, 4, 5), (3, 2, 5)]),
    ("scatter_value", lambda lib, x: lib.scatter(x, 1, _index(lib, IDX_GATHER), 2.5), [(3, 4, 5)]),
    ("index_select", lambda lib, x: x.index_select(1, _index(lib, IDX_SELECT)), [(3, 4, 5)]),
    ("index_select_0d_index",
     lambda lib, x: lib.index_select(x, 0, _index(lib, np.array(2))), [(3, 4)]),
    ("index_add",
     lambda lib, x, s: x.index_add(1, _index(lib, IDX_SELECT), s, alpha=2), [(3, 4, 5), (3, 4, 5)]),
    ("pad", lambda lib, x: _pad(lib, x, (1, 2)), [(3, 4, 5)]),
    ("pad_two_dims", lambda lib, x: _pad(lib, x, (1, 0, 2, 3), 1.5), [(3, 4, 5)]),
    ("pad_negative", lambda lib, x: _pad(lib, x, (-1, 2, 0, -2)), [(3, 4, 5)]),
    ("pad_all_dims", lambda lib, x: _pad(lib, x, [1, 1, 0, 1, 2, 0]), [(3, 4, 5)]),
    ("reflect_1d", lambda lib, x: _pad(lib, x, (2, 1), mode="reflect"), [(2, 3, 5)]),
    ("reflect_1d_unbatched", lambda lib, x: _pad(lib, x, (-1, 3), mode="reflect"), [(3, 5)]),
    ("reflect_2d", lambda lib, x: _pad(lib, x, (1, 2, 2, 0), mode="reflect"), [(2, 3, 4, 5)]),
    ("reflect_3d", lambda lib, x: _pad(lib, x, (1, 0, 1, 1, 2, 1), mode="reflect"),
     [(2, 3, 4, 5)]),
    ("replicate_1d", lambda lib, x: _pad(lib, x, (3, 1), mode="replicate"), [(2, 3, 2)]),
    ("replicate_2d", lambda lib, x: _pad(lib, x, (1, -1, 2, 3), mode="replicate"), [(3, 4, 5)]),
    ("replicate_3d", lambda lib, x: _pad(lib, x, [0, 1, 2, 1, 1, 0], mode="replicate"),
     [(1, 2, 3, 4, 5)]),
    ("circular_1d", lambda lib, x: _pad(lib, x, (2, 1), mode="circular"), [(2, 3, 5)]),
    ("circular_2d", lambda lib, x: _pad(lib, x, (1, 2, -1, 3), mode="circular"), [(2, 3, 4, 5)]),
    ("circular_3d", lambda lib, x: _pad(lib, x, (1, 1, 0, 2, 3, 0), mode="circular"),
     [(1, 2, 3, 4, 5)]),
]

VIEW_CASES = {"reshape", "reshape_infer", "reshape_tuple", "reshape_0d", "reshape_alias",
              "reshape_alias_expanded", "view", "view_infer",
              "view_split_dim", "view_as", "flatten", "flatten_from_1", "flatten_0_1",
              "flatten_0d", "unflatten", "unflatten_infer", "squeeze_all", "squeeze_dim",
              "squeeze_dim_not_1", "squeeze_dims", "squeeze_0d", "unsqueeze", "unsqueeze_last",
              "permute", "permute_list", "transpose", "swapaxes", "movedim", "t", "t_1d", "T",
              "mT", "expand", "expand_keep", "expand_list", "expand_as", "expand_0d", "narrow",
              "narrow_negative", "select", "split", "split_dim", "split_sizes", "chunk",
              "chunk_fewer", "unbind", "split_some_used"}


def _arrays(shapes, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(dtype) for shape in shapes]


def _first(result):
    return result[0] if isinstance(result, (tuple, list)) else result


def _run_both(fn, arrays, requires_grad=True):
    hg = [hookgrad.tensor(a.copy(), requires_grad=requires_grad) for a in arrays]
    th = [torch.tensor(a.copy(), requires_grad=requires_grad) for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(hookgrad, *hg), fn(torch, *th), hg, th


@pytest.mark.parametrize("name, fn, shapes", CASES, ids=[c[0] for c in CASES])
def test_values_and_gradients_float64(name, fn, shapes):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare(fn, *_arrays(shapes))


@pytest.mark.parametrize("name, fn, shapes", CASES, ids=[c[0] for c in CASES])
def test_values_and_gradients_float32(name, fn, shapes):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare(fn, *_arrays(shapes, np.float32, seed=1))


@pytest.mark.parametrize("name, fn, shapes", CASES, ids=[c[0] for c in CASES])
def test_grad_fn_names(name, fn, shapes):
    hg_out, th_out, _, _ = _run_both(fn, _arrays(shapes))
    hg_out, th_out = _first(hg_out), _first(th_out)
    assert grad_fn_chain(hg_out) == grad_fn_chain(th_out)


@pytest.mark.parametrize("name, fn, shapes", CASES, ids=[c[0] for c in CASES])
def test_view_or_copy(name, fn, shapes):
    hg_out, th_out, hg_in, th_in = _run_both(fn, _arrays(shapes))
    hg_out, th_out = _first(hg_out), _first(th_out)
    assert (th_out._base is not None) == (name in VIEW_CASES)
    assert (hg_out._base is not None) == (th_out._base is not None)
    if th_out._base is th_in[0]:
        assert hg_out._base is hg_in[0]
        assert np.shares_memory(hg_out._data, hg_in[0]._data) or th_out.numel() == 0
    else:
        assert not np.shares_memory(hg_out._data, hg_in[0]._data)


@pytest.mark.parametrize("name, fn, shapes", CASES, ids=[c[0] for c in CASES])
def test_saved_tensors(name, fn, shapes):
    arrays = _arrays(shapes)
    hg = [hookgrad.tensor(a.copy(), requires_grad=True) for a in arrays]
    th = [torch.tensor(a.copy(), requires_grad=True) for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert saved_log(hookgrad, lambda *t: fn(hookgrad, *t), *hg) == \
            saved_log(torch, lambda *t: fn(torch, *t), *th)


@pytest.mark.parametrize("name, fn, shapes", CASES, ids=[c[0] for c in CASES])
def test_double_backward(name, fn, shapes):
    """Gradients of the gradients equal torch's (all these ops are linear, so this checks
    the backward of each backward)."""
    arrays = _arrays(shapes, seed=2)
    hg_out, th_out, hg_in, th_in = _run_both(fn, arrays)
    hg_outs = [o for o in (hg_out if isinstance(hg_out, tuple) else (hg_out,))]
    th_outs = [o for o in (th_out if isinstance(th_out, tuple) else (th_out,))]
    rng = np.random.default_rng(3)
    seeds = [rng.standard_normal(o.shape) for o in th_outs]
    hg_seeds = [hookgrad.tensor(s, requires_grad=True) for s in seeds]
    th_seeds = [torch.tensor(s, requires_grad=True) for s in seeds]
    hg_grads = hookgrad.autograd.grad(hg_outs, hg_in, hg_seeds, create_graph=True,
                                      allow_unused=True)
    th_grads = torch.autograd.grad(th_outs, th_in, th_seeds, create_graph=True,
                                   allow_unused=True)
    weights = [rng.standard_normal(x.shape) for x in th_in]
    hg_total = sum((g * hookgrad.tensor(w)).sum() for g, w in zip(hg_grads, weights)
                   if g is not None)
    th_total = sum((g * torch.tensor(w)).sum() for g, w in zip(th_grads, weights)
                   if g is not None)
    if not th_total.requires_grad:  # torch's gradient is a constant (e.g. repeat(0, 1))
        assert not hg_total.requires_grad
        return
    hg_total.backward()
    th_total.backward()
    for h, t in zip(hg_seeds, th_seeds):
        np.testing.assert_allclose(h.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name, fn, shapes", CASES[::4], ids=[c[0] for c in CASES[::4]])
def test_gradcheck(name, fn, shapes):
    inputs = [hookgrad.tensor(a, requires_grad=True) for a in _arrays(shapes, seed=4)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert hookgrad.autograd.gradcheck(lambda *t: fn(hookgrad, *t), inputs)
        assert hookgrad.autograd.gradgradcheck(lambda *t: fn(hookgrad, *t), inputs)


# -- dtypes ----------------------------------------------------------------------------------
@pytest.mark.parametrize("first, second", [(np.float32, np.float64), (np.int64, np.float32),
                                           (np.int32, np.int64), (np.bool_, np.int64),
                                           (np.float16, np.float32)])
def test_cat_and_stack_promote(first, second):
    arrays = [np.arange(6).reshape(2, 3).astype(first), np.ones((2, 3)).astype(second)]
    flags = [np.dtype(d).kind == "f" for d in (first, second)]
    compare(lambda lib, x, y: lib.cat([x, y]), *arrays, requires_grad=flags)
    compare(lambda lib, x, y: lib.stack([x, y], 1), *arrays, requires_grad=flags)


def test_cat_of_empties_promotes_over_skipped():
    compare(lambda lib: lib.cat([lib.zeros(0), lib.ones(2, dtype=lib.float64)]))
    compare(lambda lib: lib.cat([lib.zeros(0), lib.zeros(0, dtype=lib.int64)]))


@pytest.mark.parametrize("name, fn", [
    ("repeat", lambda lib, x: x.repeat(2, 2)), ("flip", lambda lib, x: x.flip(1)),
    ("roll", lambda lib, x: x.roll(1)), ("gather", lambda lib, x: x.gather(0, lib.tensor([[1]]))),
    ("index_select", lambda lib, x: x.index_select(1, lib.tensor([1, 1]))),
    ("pad", lambda lib, x: _pad(lib, x, (1, 1), 7)), ("view", lambda lib, x: x.view(-1)),
    ("expand", lambda lib, x: x.expand(2, 2, 3)), ("unbind", lambda lib, x: x.unbind(1)),
])
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.bool_, np.float32])
def test_integer_and_bool_inputs(name, fn, dtype):
    compare(fn, (np.arange(6).reshape(2, 3) % 3).astype(dtype), grad=False)


def test_scatter_add_src_larger_than_index():
    """Only the index's extent of src is used; torch's backward then refuses src's gradient."""
    def fn(lib, x, src):
        return lib.scatter_add(x, 1, _index(lib, IDX_GATHER), src)

    arrays = _arrays([(3, 4, 5), (3, 3, 6)])
    compare(fn, *arrays, requires_grad=[True, False])
    for lib in (torch, hookgrad):
        x, src = (lib.tensor(a, requires_grad=True) for a in arrays)
        with pytest.raises(RuntimeError, match=r"ScatterAddBackward0 returned an invalid "
                                               r"gradient at index 1 - got \[3, 2, 5\]"):
            fn(lib, x, src).sum().backward()


def test_flip_is_a_copy_not_a_view():
    x = hookgrad.arange(4.0)
    y = x.flip(0)
    x.add_(1)
    assert y.tolist() == [3.0, 2.0, 1.0, 0.0]
    assert y.is_contiguous()


def test_pad_value_is_cast_like_torch():
    compare(lambda lib: _pad(lib, lib.arange(3), (1, 1), 2.7), grad=False)
    compare(lambda lib: _pad(lib, lib.arange(3.0), (2, 0), True), grad=False)


def test_view_dtype_reinterprets_bits():
    compare(lambda lib, x: x.detach().view(lib.int64), np.array([1.5, -2.0]), grad=False)
    compare(lambda lib, x: x.detach().view(lib.int32), np.array([1.5, -2.0]), grad=False)


def test_views_share_the_version_counter():
    x = hookgrad.zeros(3, 4)
    views = [x.view(12), x.t(), x[1:], x.expand(2, 3, 4), x.unsqueeze(0), x.split(2)[1]]
    x.add_(1)
    assert [v._version for v in views] == [1] * len(views)


def test_out_argument():
    for lib in (hookgrad, torch):
        out = lib.empty(4, 2)
        result = lib.cat([lib.ones(2, 2), lib.zeros(2, 2)], out=out)
        assert result is out and out.sum().item() == 4.0


# -- errors ----------------------------------------------------------------------------------
A = np.arange(60.0).reshape(3, 4, 5)
ERRORS = [
    ("view_incompatible", lambda lib, a: a.transpose(0, 1).view(-1)),
    ("view_bad_size", lambda lib, a: a.view(7, -1)),
    ("view_two_infers", lambda lib, a: a.view(-1, -1)),
    ("view_zero_infer", lambda lib, a: a.view(0, -1)),
    ("view_ambiguous", lambda lib, a: lib.zeros(0, 3).view(-1, 0)),
    ("reshape_bad_size", lambda lib, a: a.reshape(11, 5)),
    ("flatten_order", lambda lib, a: a.flatten(2, 1)),
    ("unflatten_product", lambda lib, a: a.unflatten(1, (2, 3))),
    ("unflatten_dim", lambda lib, a: a.unflatten(5, (2, 2))),
    ("squeeze_dim", lambda lib, a: a.squeeze(3)),
    ("unsqueeze_dim", lambda lib, a: a.unsqueeze(4)),
    ("unsqueeze_negative", lambda lib, a: a.unsqueeze(-5)),
    ("permute_length", lambda lib, a: a.permute(0, 1)),
    ("permute_duplicate", lambda lib, a: a.permute(0, 0, 1)),
    ("permute_range", lambda lib, a: a.permute(0, 1, 3)),
    ("transpose_range", lambda lib, a: a.transpose(0, 3)),
    ("t_3d", lambda lib, a: a.t()),
    ("mT_1d", lambda lib, a: a[0, 0].mT),
    ("expand_mismatch", lambda lib, a: a.expand(3, 5, 5)),
    ("expand_mismatch_last", lambda lib, a: a[0].expand(5, 4)),
    ("expand_fewer", lambda lib, a: a.expand(3, 4)),
    ("expand_leading_infer", lambda lib, a: a.expand(-1, 3, 4, 5)),
    ("expand_negative", lambda lib, a: a.expand(3, 4, -2)),
    ("repeat_fewer", lambda lib, a: a.repeat(2)),
    ("repeat_negative", lambda lib, a: a.repeat(-1, 1, 1)),
    ("cat_sizes", lambda lib, a: lib.cat([a, a[:, :2]], 0)),
    ("cat_ndim", lambda lib, a: lib.cat([a, a[0]])),
    ("cat_0d", lambda lib, a: lib.cat([a[0, 0, 0], a[0, 0, 0]])),
    ("cat_empty_list", lambda lib, a: lib.cat([])),
    ("cat_dim", lambda lib, a: lib.cat([a, a], 3)),
    ("cat_not_tensor", lambda lib, a: lib.cat([a, 1])),
    ("stack_sizes", lambda lib, a: lib.stack([a, a[:2]])),
    ("stack_empty", lambda lib, a: lib.stack([])),
    ("stack_dim", lambda lib, a: lib.stack([a, a], 4)),
    ("split_zero", lambda lib, a: a.split(0)),
    ("split_negative", lambda lib, a: a.split(-1)),
    ("split_sizes_sum", lambda lib, a: a.split([1, 1], 0)),
    ("chunk_zero", lambda lib, a: a.chunk(0)),
    ("unbind_0d", lambda lib, a: a.sum().unbind()),
    ("unbind_dim", lambda lib, a: a.unbind(3)),
    ("narrow_start", lambda lib, a: a.narrow(1, 5, 0)),
    ("narrow_start_negative", lambda lib, a: a.narrow(1, -5, 1)),
    ("narrow_length", lambda lib, a: a.narrow(1, 3, 2)),
    ("narrow_negative_length", lambda lib, a: a.narrow(1, 1, -1)),
    ("narrow_0d", lambda lib, a: a.sum().narrow(0, 0, 1)),
    ("select_range", lambda lib, a: a.select(0, 5)),
    ("select_0d", lambda lib, a: a.sum().select(0, 0)),
    ("flip_repeated", lambda lib, a: a.flip(0, 0)),
    ("flip_range", lambda lib, a: a.flip(3)),
    ("roll_mismatch", lambda lib, a: a.roll((1, 2), (0,))),
    ("roll_no_shifts", lambda lib, a: a.roll(())),
    ("gather_ndim", lambda lib, a: a.gather(1, lib.zeros(2, 5, dtype=lib.int64))),
    ("gather_size", lambda lib, a: a.gather(1, lib.zeros(4, 2, 5, dtype=lib.int64))),
    ("gather_bounds", lambda lib, a: a.gather(1, lib.full((3, 2, 5), 4))),
    ("gather_negative", lambda lib, a: a.gather(1, lib.full((3, 2, 5), -1))),
    ("scatter_add_dtype", lambda lib, a: a.scatter_add(1, lib.zeros(3, 2, 5, dtype=lib.int64),
                                                      lib.ones(3, 2, 5))),
    ("scatter_add_small_src",
     lambda lib, a: a.scatter_add(1, lib.zeros(3, 2, 5, dtype=lib.int64), a[:, :1])),
    ("index_select_matrix", lambda lib, a: a.index_select(1, lib.tensor([[1]]))),
    ("index_select_float", lambda lib, a: a.index_select(1, lib.tensor([1.0]))),
    ("index_select_bounds", lambda lib, a: a.index_select(1, lib.tensor([4]))),
    ("index_select_empty_dim", lambda lib, a: a[:, :0].index_select(1, lib.tensor([0]))),
    ("index_select_empty_dim_negative",
     lambda lib, a: a[:0].index_select(0, lib.tensor([-1]))),
    ("index_select_empty_vector", lambda lib, a: a[0, 0, :0].index_select(0, lib.tensor([0]))),
    ("pad_odd", lambda lib, a: _pad(lib, a, (1, 2, 3))),
    ("pad_too_long", lambda lib, a: _pad(lib, a, (1,) * 8)),
    ("pad_crop_too_much", lambda lib, a: _pad(lib, a, (-3, -3))),
    ("pad_mode_1d_input", lambda lib, a: _pad(lib, a[0, 0], (1, 1), mode="reflect")),
    ("pad_mode_5d_input", lambda lib, a: _pad(lib, a[None, None], (1, 1), mode="replicate")),
    ("pad_mode_value", lambda lib, a: _pad(lib, a, (1, 1), 2.0, mode="reflect")),
    ("reflect_too_wide", lambda lib, a: _pad(lib, a, (1, 5), mode="reflect")),
    ("reflect_too_high", lambda lib, a: _pad(lib, a, (1, 1, 4, 1), mode="reflect")),
    ("reflect_too_deep", lambda lib, a: _pad(lib, a[None], (1, 1, 1, 1, 3, 1), mode="reflect")),
    ("reflect_too_small", lambda lib, a: _pad(lib, a, (-2, -3), mode="reflect")),
    ("replicate_empty_dim", lambda lib, a: _pad(lib, a[:, :0], (1, 1), mode="replicate")),
    ("circular_wraps_twice", lambda lib, a: _pad(lib, a, (6, 0), mode="circular")),
    ("circular_negative", lambda lib, a: _pad(lib, a, (-3, -3), mode="circular")),
]


@pytest.mark.parametrize("name, fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, fn):
    with pytest.raises(Exception) as expected:
        fn(torch, torch.tensor(A))
    with pytest.raises(type(expected.value)) as actual:
        fn(hookgrad, hookgrad.tensor(A))
    assert str(actual.value) == str(expected.value)


def test_unknown_pad_mode():
    from hookgrad.ops.padding import pad

    with pytest.raises(NotImplementedError, match="Unrecognised padding mode foo"):
        pad(hookgrad.zeros(2, 2), (1, 1), mode="foo")


def test_inplace_on_expanded_view_refused():
    x = hookgrad.zeros(3, 1).expand(3, 4)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        x.add_(1.0)  # fill_ is allowed (one value everywhere), as in torch


# -- fuzzing ---------------------------------------------------------------------------------
shapes = st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple)


@settings(max_examples=40, deadline=None)
@given(shape=shapes, data=st.data())
def test_fuzz_reshape_permute_expand(shape, data):
    ndim = len(shape)
    order = data.draw(st.permutations(range(ndim)))
    lead = data.draw(st.lists(st.integers(1, 3), max_size=2))
    target = tuple(lead) + tuple(data.draw(st.sampled_from([s, 2, 3])) if s == 1 else
                                 data.draw(st.sampled_from([s, -1])) for s in shape)
    numel = int(np.prod(shape))
    factors = [d for d in range(1, numel + 1) if numel % d == 0]
    first = data.draw(st.sampled_from(factors))

    def fn(lib, x):
        permuted = x.permute(*order)
        return (permuted.reshape(first, -1), x.expand(*target),
                permuted.expand(*lead, *permuted.shape).flatten())

    compare(fn, np.random.default_rng(0).standard_normal(shape))


@settings(max_examples=30, deadline=None)
@given(shape=shapes, data=st.data())
def test_fuzz_cat_stack_split(shape, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    count = data.draw(st.integers(1, 3))
    sizes = data.draw(st.lists(st.integers(0, 3), min_size=count, max_size=count))
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(shape[:dim % len(shape)] + (n,) + shape[dim % len(shape) + 1:])
              for n in sizes]
    split_size = data.draw(st.integers(1, 4))

    def fn(lib, *xs):
        joined = lib.cat(xs, dim)
        return (joined, lib.stack([xs[0], xs[0] * 2], dim), joined.split(split_size, dim),
                joined.chunk(split_size, dim))

    compare(fn, *arrays)


@st.composite
def strided_views(draw):
    """A tensor made non-contiguous by permute / step slices / expand, and a target shape of
    the same number of elements."""
    shape = draw(st.lists(st.integers(0, 4), min_size=1, max_size=4).map(tuple))
    order = draw(st.permutations(range(len(shape))))
    steps = tuple(slice(None, None, draw(st.integers(1, 2))) for _ in shape)
    expand = draw(st.integers(1, 2))
    permuted = [shape[d] for d in order]
    numel = int(np.prod([len(range(*s.indices(n))) for s, n in zip(steps, permuted)])) * expand
    target = []
    remaining = numel
    while remaining > 1:
        factor = draw(st.sampled_from([d for d in range(2, remaining + 1) if remaining % d == 0]))
        target.append(factor)
        remaining //= factor
    for _ in range(draw(st.integers(0, 2))):
        target.insert(draw(st.integers(0, len(target))), 1 if numel else 0)
    return shape, order, steps, expand, tuple(target) or (numel,)


@settings(max_examples=60, deadline=None)
@given(case=strided_views())
def test_fuzz_view_allowed_exactly_when_torch_allows_it(case):
    """``view`` succeeds or raises torch's error on the same strided inputs, and ``reshape``
    copies exactly when torch copies."""
    shape, order, steps, expand, target = case
    outcomes = []
    for lib in (hookgrad, torch):
        x = lib.zeros(shape, dtype=lib.float64, requires_grad=True)
        y = x.permute(*order)[steps].unsqueeze(0).expand(expand, *[-1] * len(shape))
        try:
            y.view(target)
            viewed = True
        except RuntimeError as error:
            assert "view size is not compatible with input tensor's size and stride" in str(error)
            viewed = False
        outcomes.append((viewed, y.reshape(target).grad_fn.name(), y.reshape(target).shape))
    assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize("fn, names", [
    (lambda lib, x: x.gather(1, _index(lib, IDX_GATHER)), ("index", "self")),
    (lambda lib, x: x.index_select(1, _index(lib, IDX_SELECT)), ("index",)),
    (lambda lib, x: x.scatter_add(1, _index(lib, IDX_GATHER), x[:, :2] * 1), ("index",)),
    (lambda lib, x: _pad(lib, x, (1, 1), mode="reflect"), ("self",)),
])
def test_saved_tensors_by_torch_name(fn, names):
    """``grad_fn._saved_<name>`` gives back what torch gives (the input itself for self)."""
    for lib in (hookgrad, torch):
        x = lib.tensor(_arrays([(3, 4, 5)])[0], requires_grad=True)
        node = fn(lib, x).grad_fn
        for name in names:
            saved = getattr(node, f"_saved_{name}")
            if name == "self":
                assert saved is x
            else:
                assert saved.dtype == lib.int64 and not saved.requires_grad


def test_roll_along_a_dim_of_a_0d_tensor_is_refused():
    assert_same_error(lambda lib: lib.roll(lib.tensor(1.5), 1, 0))
    assert_same_error(lambda lib: lib.roll(lib.tensor(1.5), 1, -1))
    compare(lambda lib, x: lib.roll(x, 1), np.array(1.5))
