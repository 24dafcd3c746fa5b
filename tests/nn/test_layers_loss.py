"""Loss modules against torch: options stored and applied, weights as buffers, repr."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad
from conftest import compare


def probabilities(rng, shape):
    p = rng.uniform(0.05, 1, shape)
    return p / p.sum(1, keepdims=True)


CASES = {  # name: (kwargs, input, target) builders
    "MSELoss": ({"reduction": "sum"}, lambda r: r.standard_normal((4, 3)),
                lambda r: r.standard_normal((4, 3))),
    "L1Loss": ({}, lambda r: r.standard_normal((4, 3)), lambda r: r.standard_normal((4, 3))),
    "SmoothL1Loss": ({"beta": 0.5, "reduction": "none"}, lambda r: r.standard_normal((4, 3)),
                     lambda r: r.standard_normal((4, 3))),
    "HuberLoss": ({"delta": 0.7}, lambda r: r.standard_normal((4, 3)),
                  lambda r: r.standard_normal((4, 3))),
    "NLLLoss": ({"ignore_index": 1}, lambda r: r.standard_normal((5, 3)),
                lambda r: np.array([0, 1, 2, 2, 1])),
    "CrossEntropyLoss": ({"label_smoothing": 0.1}, lambda r: r.standard_normal((5, 3)),
                         lambda r: np.array([0, 1, 2, 2, 1])),
    "CrossEntropyLoss probs": ({}, lambda r: r.standard_normal((5, 3)),
                               lambda r: probabilities(r, (5, 3))),
    "BCELoss": ({}, lambda r: r.uniform(0.1, 0.9, (4, 3)), lambda r: r.uniform(0, 1, (4, 3))),
    "BCEWithLogitsLoss": ({"reduction": "sum"}, lambda r: r.standard_normal((4, 3)),
                          lambda r: r.uniform(0, 1, (4, 3))),
}


@pytest.mark.parametrize("case", list(CASES))
def test_loss_module_matches_torch(rng, case):
    kwargs, make_input, make_target = CASES[case]
    name = case.split()[0]
    assert repr(getattr(hookgrad.nn, name)(**kwargs)) == repr(getattr(torch.nn, name)(**kwargs))
    compare(lambda lib, x, t: getattr(lib.nn, name)(**kwargs)(x, t), make_input(rng),
            make_target(rng))


@pytest.mark.parametrize("name", ["NLLLoss", "CrossEntropyLoss", "BCELoss"])
def test_weighted_loss_modules_keep_weight_as_buffer(rng, name):
    weight = rng.uniform(0.5, 2, 3)
    modules = [getattr(lib.nn, name)(weight=lib.tensor(weight)) for lib in (hookgrad, torch)]
    assert [n for n, _ in modules[0].named_buffers()] == [n for n, _ in
                                                           modules[1].named_buffers()]
    if name == "BCELoss":
        x, t = rng.uniform(0.1, 0.9, (4, 3)), rng.uniform(0, 1, (4, 3))
    else:
        x, t = rng.standard_normal((4, 3)), np.array([0, 2, 1, 1])
    compare(lambda lib, x, t: getattr(lib.nn, name)(weight=lib.tensor(weight))(x, t), x, t)


def test_bce_with_logits_pos_weight_buffer(rng):
    pos = rng.uniform(0.5, 3, 3)
    compare(lambda lib, x, t: lib.nn.BCEWithLogitsLoss(pos_weight=lib.tensor(pos))(x, t),
            rng.standard_normal((4, 3)), rng.uniform(0, 1, (4, 3)))
    names = [[n for n, _ in lib.nn.BCEWithLogitsLoss(pos_weight=lib.ones(3)).named_buffers()]
             for lib in (hookgrad, torch)]
    assert names[0] == names[1]


def test_legacy_arguments_pick_the_same_reduction():
    with pytest.warns(UserWarning):
        ours = hookgrad.nn.MSELoss(size_average=False)
    with pytest.warns(UserWarning):
        theirs = torch.nn.MSELoss(size_average=False)
    assert ours.reduction == theirs.reduction == "sum"
