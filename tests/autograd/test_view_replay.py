"""A view remembers how to replay itself from its root base: after an in-place change of the
base, its history is rebuilt by replaying the chain of view ops, as torch regenerates it. The
replay keeps each op's other arguments, never the tensor the view was taken of."""
import gc
import weakref

import numpy as np
import pytest
import torch

import hookgrad


@pytest.mark.parametrize("chain", [
    lambda t: t.view(2, 3).transpose(0, 1)[1:],
    lambda t: t.reshape(3, 2).unsqueeze(0).permute(2, 0, 1).squeeze(1),
    lambda t: t.view(6)[::2].view(3, 1).expand(3, 2),
])
def test_a_chain_of_views_is_replayed_after_the_base_changes(chain):
    results = []
    for lib in (torch, hookgrad):
        leaf = lib.tensor(np.arange(6.0), requires_grad=True, dtype=lib.float64)
        base = leaf * 1
        view = chain(base)
        base.mul_(3)  # the view's history is now stale: asking for it replays the chain
        history = type(view.grad_fn).__name__
        (view * lib.arange(float(view.numel()), dtype=lib.float64).view(view.shape)).sum() \
            .backward()
        results.append((history, view.detach().numpy().tolist(), leaf.grad.numpy().tolist()))
    assert results[1] == results[0]


def test_a_view_does_not_keep_the_view_it_was_taken_of():
    histories = []
    for lib in (torch, hookgrad):
        base = lib.ones(6, requires_grad=True) * 2
        middle = base.view(2, 3)
        last = middle.transpose(0, 1)
        if lib is hookgrad:
            gone = weakref.ref(middle)
            del middle
            gc.collect()
            assert gone() is None
        base.mul_(2)  # and it is still replayed from the base, as torch does
        histories.append(type(last.grad_fn).__name__)
    assert histories[1] == histories[0]


@pytest.mark.parametrize("base_kind", ["leaf", "non_leaf", "plain", "view_of_non_leaf"])
def test_a_view_made_under_no_grad_refuses_in_place_as_torch(base_kind):
    # the refusal depends on whether the root base requires grad when the view is made
    outcomes = []
    for lib in (torch, hookgrad):
        leaf = lib.ones(4, requires_grad=base_kind != "plain")
        base = {"leaf": leaf, "plain": leaf, "non_leaf": leaf * 2,
                "view_of_non_leaf": (leaf * 2)[1:]}[base_kind]
        with lib.no_grad():
            view = base.view(2, 2) if base_kind != "view_of_non_leaf" else base.view(-1)
        try:
            view.mul_(2)
            outcomes.append("ok")
        except RuntimeError as error:
            outcomes.append(str(error).split(".")[0])
    assert outcomes[1] == outcomes[0]
