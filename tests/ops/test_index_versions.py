"""Ops that take an index tensor save it as the caller's tensor, with its version counter:
changing the indices in place before backward is torch's error, never the gradient of other
indices (which hookgrad gave when it saved the index's array)."""
from __future__ import annotations

import pytest
import torch

import hookgrad

CASES = {
    "gather": lambda L, x, i: x.gather(0, i),
    "index_select": lambda L, x, i: x.index_select(0, i),
    "take": lambda L, x, i: x.take(i),
    "take_along_dim": lambda L, x, i: L.take_along_dim(x, i),
    "scatter": lambda L, x, i: L.zeros(3).scatter(0, i, x[:2] * 1),
    "scatter_add": lambda L, x, i: L.zeros(3).scatter_add(0, i, x[:2] * 1),
    "index_add": lambda L, x, i: L.zeros(3).index_add(0, i, x[:2] * 1),
    "index_copy": lambda L, x, i: L.zeros(3).index_copy(0, i, x[:2] * 1),
    "index_fill": lambda L, x, i: (x * 1).index_fill(0, i, 5.0),
    "put": lambda L, x, i: (x * 1).put(i, L.tensor([7.0, 8.0])),
    "index_put": lambda L, x, i: (x * 1).index_put((i,), L.tensor([7.0, 8.0])),
    "getitem": lambda L, x, i: x[i],
    "setitem": lambda L, x, i: _setitem(x, i),
    "scatter_reduce": lambda L, x, i: L.zeros(3).scatter_reduce(0, i, x[:2] * 1, "sum"),
    "index_reduce": lambda L, x, i: L.ones(3).index_reduce(0, i, x[:2] * 1, "prod"),
    "embedding": lambda L, x, i: L.nn.functional.embedding(i, x.reshape(3, 1)),
    "nll_loss": lambda L, x, i: L.nn.functional.nll_loss(x.reshape(1, 3).expand(2, 3), i),
    "cross_entropy": lambda L, x, i: L.nn.functional.cross_entropy(
        x.reshape(1, 3).expand(2, 3), i),
    "multi_margin_loss": lambda L, x, i: L.nn.functional.multi_margin_loss(
        x.reshape(1, 3).expand(2, 3), i),
}
MASKS = {
    "masked_fill": lambda L, x, m: (x * 1).masked_fill(m, 0.0),
    "masked_scatter": lambda L, x, m: (x * 1).masked_scatter(m, L.tensor([5.0, 6.0, 7.0])),
    "masked_select": lambda L, x, m: x.masked_select(m),
    "where": lambda L, x, m: L.where(m, x, x * 2),
}


def _setitem(x, i):
    y = x * 1
    y[i] = y[i] * 3
    return y


def _run(lib, make, aux, change, change_aux):
    """One op's backward after ``make(lib, x, aux)``, with ``aux`` (an index or a mask) changed
    in place first when ``change``: torch's version error, or x's gradient."""
    x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
    out = make(lib, x, aux)
    if change:
        change_aux(aux)
    weights = lib.arange(1.0, out.numel() + 1).reshape(out.shape)
    try:
        (out * weights).sum().backward()
    except RuntimeError as error:
        return "error", "modified by an inplace operation" in str(error)
    return "ok", [round(value, 5) for value in x.grad.tolist()]  # float32 sums may differ


def _set_first_to_one(index):
    index[0] = 1


@pytest.mark.parametrize("change", [True, False], ids=["index changed", "unchanged"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_changing_an_index_before_backward_is_refused_as_torch(name, change):
    ours, theirs = (_run(lib, CASES[name], lib.tensor([2, 0]), change, _set_first_to_one)
                    for lib in (hookgrad, torch))
    assert ours == theirs


@pytest.mark.parametrize("change", [True, False], ids=["mask changed", "unchanged"])
@pytest.mark.parametrize("name", sorted(MASKS))
def test_changing_a_mask_before_backward_is_refused_as_torch(name, change):
    ours, theirs = (_run(lib, MASKS[name], lib.tensor([True, False, True]), change,
                         lambda mask: mask.logical_not_()) for lib in (hookgrad, torch))
    assert ours == theirs
