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
}


def _setitem(x, i):
    y = x * 1
    y[i] = y[i] * 3
    return y


def _run(lib, name, change: bool):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    index = lib.tensor([2, 0])
    out = CASES[name](lib, x, index)
    if change:
        index[0] = 1
    weights = lib.arange(1.0, out.numel() + 1).reshape(out.shape)
    try:
        (out * weights).sum().backward()
    except RuntimeError as error:
        return "error", "modified by an inplace operation" in str(error)
    return "ok", x.grad.tolist()


@pytest.mark.parametrize("change", [True, False], ids=["index changed", "unchanged"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_changing_an_index_before_backward_is_refused_as_torch(name, change):
    assert _run(hookgrad, name, change) == _run(torch, name, change)
