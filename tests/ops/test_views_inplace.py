"""In-place ops on views against torch: the base's gradient goes through CopySlices, versions
are shared across views, stale views are rebuilt, saved tensors changed through a view are
detected, and the cases torch forbids raise torch's RuntimeError."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import compare

import hookgrad

A = np.random.default_rng(0).standard_normal((3, 4))
W = np.random.default_rng(1).standard_normal(4)
MASK = np.array([True, False, False, True])


def _mask(lib, shape):
    return lib.tensor(np.resize(MASK, shape))


# a view of the (3, 4) non-leaf ``b``: name, fn(b)
VIEWS = [
    ("row", lambda b: b[0]),
    ("column_slice", lambda b: b[:, 1:3]),
    ("transpose", lambda b: b.t()),
    ("flat_slice", lambda b: b.view(-1)[2:7]),
    ("view_of_view", lambda b: b[1:][0]),
    ("transposed_row", lambda b: b.transpose(0, 1)[1]),
    ("unsqueezed", lambda b: b.unsqueeze(0)[0, 1]),
    ("narrow", lambda b: b.narrow(1, 1, 2)),
    ("strided", lambda b: b[::2, ::3]),
    ("element", lambda b: b[1, 2]),
    ("whole", lambda b: b[:]),
]

# an in-place op on view ``v`` with ``w`` (4,) requiring grad: name, fn(lib, v, w)
OPS = [
    ("mul_number", lambda lib, v, w: v.mul_(2.5)),
    ("mul_tensor", lambda lib, v, w: v.mul_(w.repeat(2)[:v.shape[-1]] if v.ndim else w[0])),
    ("add_alpha", lambda lib, v, w: v.add_(w.sum(), alpha=-2)),
    ("sub", lambda lib, v, w: v.sub_(w[0] * 3)),
    ("div", lambda lib, v, w: v.div_(w[1])),
    ("relu_", lambda lib, v, w: v.relu_()),
    ("clamp_", lambda lib, v, w: v.clamp_(-0.5, 0.5)),
    ("copy_", lambda lib, v, w: v.copy_(w[0] * lib.ones(v.shape, dtype=lib.float64))),
    ("copy_broadcast", lambda lib, v, w: v.copy_(w[0])),
    ("fill_number", lambda lib, v, w: v.fill_(3.0)),
    ("fill_tensor", lambda lib, v, w: v.fill_(w[2])),
    ("zero_", lambda lib, v, w: v.zero_()),
    ("masked_fill_", lambda lib, v, w: v.masked_fill_(_mask(lib, v.shape), 1.5)),
    ("setitem", lambda lib, v, w: v.__setitem__(..., w[3])),
]


@pytest.mark.parametrize("op_name, op", OPS, ids=[o[0] for o in OPS])
@pytest.mark.parametrize("view_name, make_view", VIEWS, ids=[v[0] for v in VIEWS])
def test_inplace_on_view_of_non_leaf(view_name, make_view, op_name, op):
    """The base and the view after the op, and the gradients of a and w through both."""
    def fn(lib, a, w):
        b = a * 1
        v = make_view(b)
        op(lib, v, w)
        return b * b, v * 3

    hg, th = compare(fn, A, W)
    assert hg[0].grad_fn.next_functions[0][0].name() == \
        th[0].grad_fn.next_functions[0][0].name() == "torch::autograd::CopySlices"


@pytest.mark.parametrize("op_name, op", OPS, ids=[o[0] for o in OPS])
def test_inplace_on_view_of_tensor_without_grad(op_name, op):
    """``out = zeros(...); out[i].op_(w)``: the base starts to require grad through the view."""
    def fn(lib, w):
        out = lib.zeros(3, 4, dtype=lib.float64)
        view = out[1]
        op(lib, view, w * 2)
        return out, view

    compare(fn, W)


def test_setitem_on_tensor_without_grad():
    def fn(lib, w):
        out = lib.zeros(3, dtype=lib.float64)
        out[1:] = w[:2] * 2
        return out

    hg, th = compare(fn, W)
    assert hg[0].grad_fn.name() == th[0].grad_fn.name()


def test_inplace_twice_on_the_same_view():
    def fn(lib, a, w):
        b = a * 1
        v = b[1:, 1]
        v.mul_(w[0])
        v.add_(w[1:3])
        v.mul_(v * 1)
        return b.sin(), v

    compare(fn, A, W)


def test_inplace_on_view_of_view_then_parent_view_used():
    def fn(lib, a, w):
        b = a * 1
        v = b[1:]
        u = v[0]
        u.mul_(w)
        return v * 1, b

    compare(fn, A, W)


def test_inplace_on_base_seen_by_view_output_of_op():
    """After an in-place change through a view, the view itself carries the new history."""
    def fn(lib, a, w):
        b = a * 1
        v = b[0]
        v.mul_(w)
        return v.exp()

    compare(fn, A, W)


def test_sibling_views_that_do_not_overlap():
    def fn(lib, a, w):
        b = a * 1
        v1, v2 = b[0], b[1]
        v1.mul_(w)
        return v2 * v1

    compare(fn, A, W)


def test_saved_result_of_inplace_op_on_view():
    """relu_ saves its result, which is the view: its history is the view of the new base."""
    def fn(lib, a, w):
        b = a * w
        v = b[:, 1:]
        v.relu_()
        return v.sum() * b.sum()

    compare(fn, A, W)


def test_double_backward_through_copy_slices():
    results = []
    for lib in (hookgrad, torch):
        a = lib.tensor(A, requires_grad=True)
        w = lib.tensor(W, requires_grad=True)
        b = a * 1
        b[1].mul_(w)
        b[:, 2].copy_(w[:3] ** 2)
        loss = (b ** 3).sum()
        grads = lib.autograd.grad(loss, [a, w], create_graph=True)
        (grads[0].sin().sum() + (grads[1] ** 2).sum()).backward()
        results.append((a.grad.detach().numpy().copy(), w.grad.detach().numpy().copy()))
    for h, t in zip(*results):
        np.testing.assert_allclose(h, t, rtol=1e-10, atol=1e-12)


def test_gradcheck_through_inplace_on_views():
    def fn(a, w):
        b = a * 1
        b[0].mul_(w)
        b[1:, ::2].clamp_(-0.3, 0.3)
        b.t()[1].copy_(w[:3])
        return b

    inputs = [hookgrad.tensor(A, requires_grad=True), hookgrad.tensor(W, requires_grad=True)]
    assert hookgrad.autograd.gradcheck(fn, inputs)
    assert hookgrad.autograd.gradgradcheck(fn, inputs)


def test_no_grad_inplace_on_leaf_view_is_allowed():
    def fn(lib, a):
        with lib.no_grad():
            a[0].mul_(2)
        return a * a

    compare(fn, A)


def test_detached_view_inplace_is_not_recorded():
    def fn(lib, a, w):
        b = a * w
        b.detach()[0].mul_(2)
        return b * 1

    compare(fn, A, W)


# -- version counters ------------------------------------------------------------------------
def test_version_counter_shared_by_base_views_and_detach():
    results = []
    for lib in (hookgrad, torch):
        b = lib.tensor(A) * 1
        v, u, d = b[0], b.t()[1:], b.detach()
        log = []
        steps = (lambda: v.mul_(2), lambda: u.add_(1), lambda: b.zero_(),  # noqa: B023
                 lambda: d.fill_(1.0), lambda: b.__setitem__(1, 3.0),  # noqa: B023
                 lambda: b.__setitem__([0, 2], 1.0), lambda: v.copy_(lib.ones(4)))  # noqa: B023
        for step in steps:
            step()
            log.append((b._version, v._version, u._version, d._version))
        results.append(log)
    assert results[0] == results[1]


def test_data_does_not_share_the_version_counter():
    for lib in (hookgrad, torch):
        b = lib.tensor(A) * 1
        b.data[0].mul_(2)
        assert b._version == 0


# -- saved tensors modified through a view ---------------------------------------------------
def _base_changed_through_view(lib, a, w):
    b = a * 1
    y = b.sin()
    b[0].mul_(2)
    return y


def _view_changed_through_base(lib, a, w):
    b = a * 1
    y = b[0].sin()
    b.mul_(2)
    return y


def _changed_through_sibling(lib, a, w):
    b = a * 1
    y = b[0:2].sin()
    b[1].zero_()
    return y


def _other_operand_saved(lib, a, w):
    b = a * 1
    y = w * b
    b[2].add_(1)
    return y


def _setitem_on_saved(lib, a, w):
    b = a * 1
    y = b.exp() * b
    b[0] = 1.0
    return y


SAVED = [_base_changed_through_view, _view_changed_through_base, _changed_through_sibling,
         _other_operand_saved, _setitem_on_saved]


@pytest.mark.parametrize("fn", SAVED, ids=[f.__name__.strip("_") for f in SAVED])
def test_saved_tensor_modified_through_a_view_raises(fn):
    messages = []
    for lib in (hookgrad, torch):
        out = fn(lib, lib.tensor(A, requires_grad=True), lib.tensor(W, requires_grad=True))
        with pytest.raises(RuntimeError) as error:
            out.sum().backward()
        messages.append(str(error.value))
    prefix = ("one of the variables needed for gradient computation has been modified by an "
              "inplace operation: [torch.DoubleTensor ")
    assert messages[0].startswith(prefix) and messages[1].startswith(prefix)
    versions = [m[m.index("is at version"):m.index(" instead")] for m in messages]
    assert versions[0] == versions[1]


def test_saved_output_not_affected_by_other_region():
    """exp saves its result, not its input: changing the base elsewhere is fine."""
    def fn(lib, a):
        b = a * 1
        y = b[0].exp()
        b[1].mul_(2)
        return y, b

    compare(fn, A)


# -- errors ----------------------------------------------------------------------------------
def _error_pair(program):
    outcomes = []
    for lib in (hookgrad, torch):
        a = lib.tensor(A, requires_grad=True)
        w = lib.tensor(W, requires_grad=True)
        with pytest.raises(RuntimeError) as error:
            program(lib, a, w)
        outcomes.append(str(error.value))
    return outcomes


def _split_then_base_changed(lib, a, w):
    b = a * 1
    view = b.split(2)[0]
    b.add_(1)
    return view.grad_fn


def _split_in_no_grad_then_inplace(lib, a, w):
    b = a * 1
    with lib.no_grad():
        pieces = b.split(2)
    pieces[0].mul_(2)


def _unbind_then_base_changed(lib, a, w):
    b = a * 1
    view = b.unbind()[0]
    b.mul_(w)
    view.sum().backward()


ERRORS = [
    ("leaf", lambda lib, a, w: a.mul_(2)),
    ("view_of_leaf", lambda lib, a, w: a[0].mul_(2)),
    ("view_of_view_of_leaf", lambda lib, a, w: a.view(12)[1:].zero_()),
    ("setitem_on_leaf", lambda lib, a, w: a.__setitem__(0, 1.0)),
    ("copy_into_leaf_view", lambda lib, a, w: a.t()[0].copy_(w[:3])),
    ("split_output", lambda lib, a, w: (a * 1).split(2)[0].mul_(2)),
    ("split_sizes_output", lambda lib, a, w: (a * 1).split([1, 2])[1].add_(w)),
    ("unbind_output", lambda lib, a, w: (a * 1).unbind()[1].add_(1)),
    ("chunk_output", lambda lib, a, w: (a * 1).chunk(2, 1)[1].zero_()),
    ("unbind_output_copy", lambda lib, a, w: (a * 1).unbind(1)[0].copy_(w[:3])),
    ("unbind_output_setitem", lambda lib, a, w: (a * 1).unbind()[0].__setitem__(0, 2.0)),
    ("view_of_chunk_output", lambda lib, a, w: (a * 1).chunk(2)[0][0].mul_(2)),
    ("reshape_of_split_output", lambda lib, a, w: (a * 1).split(2)[0].view(-1).mul_(2)),
    ("split_of_no_grad_base", lambda lib, a, w: lib.zeros(3, 4).double().split(2)[0].add_(w)),
    ("split_in_no_grad_then_inplace", _split_in_no_grad_then_inplace),
    ("split_view_after_base_changed", _split_then_base_changed),
    ("unbind_view_after_base_changed",
     _unbind_then_base_changed),
]


@pytest.mark.parametrize("name, program", ERRORS, ids=[e[0] for e in ERRORS])
def test_forbidden_inplace_raises_torch_error(name, program):
    hg_message, th_message = _error_pair(program)
    assert hg_message == th_message


@pytest.mark.parametrize("op", [lambda lib, e: e.copy_(lib.ones(2, 4).double()),
                                lambda lib, e: e.scatter_add_(0, lib.zeros(1, 4).long(),
                                                              lib.ones(1, 4).double())])
def test_inplace_on_expanded_view_raises(op):
    for lib in (hookgrad, torch):
        b = lib.tensor(A) * 1
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
            op(lib, b[0].expand(2, 4))


def test_no_grad_inplace_on_split_output_is_allowed():
    def fn(lib, a):
        b = a * 1
        with lib.no_grad():
            b.split(2)[0].mul_(2)
            pieces = b.unbind(1)
        with lib.no_grad():
            pieces[1].zero_()
        return b

    compare(fn, A)


# -- views whose base changed after they were taken ---------------------------------------------
# torch rebuilds such a view's history from its base when it is next used (AsStridedBackward0
# over the base's new history). These need Function.apply to read ``tensor.grad_fn`` (which
# regenerates) instead of ``tensor._grad_fn`` for views: see the report of this work.
def test_view_used_after_base_changed_in_place():
    def fn(lib, a, w):
        b = a * 1
        v = b[0]
        b.mul_(w)
        return v * 2

    compare(fn, A, W)


def test_view_is_a_root_after_base_changed_in_place():
    def fn(lib, a, w):
        b = a * 1
        v = b[1:, 2]
        b.add_(w)
        return v

    compare(fn, A, W)


def test_overlapping_sibling_used_after_inplace_through_other_view():
    def fn(lib, a, w):
        b = a * 1
        v1, v2 = b[0], b[0:2]
        v1.mul_(w)
        return v2 * 1

    compare(fn, A, W)


def test_view_created_in_no_grad_modified_with_grad_raises():
    def program(lib, a, w):
        b = a * 1
        with lib.no_grad():
            v = b[0]
        v.mul_(2)

    hg_message, th_message = _error_pair(program)
    assert hg_message == th_message
