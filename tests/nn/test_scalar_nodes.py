"""The nodes torch's C++ losses and norms record where they combine a tensor with a Python
number (``MulBackward1``, ``DivBackward1``, ``AddBackward1``, ``SubBackward1`` with the number
kept on the node, ``SubBackward0`` with an empty edge for ``1 - x``, ``NormBackward1`` for
pairwise distances): each graph (names, empty edges, saved numbers), value and gradient is
compared with torch's on the same inputs."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad
from conftest import compare, graph_with_numbers

R = np.random.default_rng(7)
X, T = R.uniform(0.1, 0.9, (2, 3, 4)), R.uniform(0.1, 0.9, (2, 3, 4))
LABELS = np.array([[0, 1, 2, 1], [2, 1, 0, 0]])


def f(lib):
    return lib.nn.functional


CASES = {}
for reduction in ("mean", "sum", "none"):
    CASES.update({
        f"cross_entropy_probabilities_{reduction}": lambda lib, x, t, r=reduction: f(
            lib).cross_entropy(x, t.softmax(1), reduction=r),
        f"cross_entropy_probabilities_smoothed_{reduction}": lambda lib, x, t, r=reduction: f(
            lib).cross_entropy(x, t.softmax(1), label_smoothing=0.2, reduction=r),
        f"cross_entropy_indices_smoothed_{reduction}": lambda lib, x, t, r=reduction: f(
            lib).cross_entropy(x, lib.tensor(LABELS), label_smoothing=0.2, reduction=r),
        f"cosine_embedding_{reduction}": lambda lib, x, t, r=reduction: f(
            lib).cosine_embedding_loss(x[0], t[0], lib.tensor([1, -1, 1]), margin=0.1,
                                       reduction=r),
        f"margin_ranking_{reduction}": lambda lib, x, t, r=reduction: f(lib).margin_ranking_loss(
            x, t, lib.ones(2, 3, 4), margin=0.2, reduction=r),
        f"hinge_embedding_{reduction}": lambda lib, x, t, r=reduction: f(
            lib).hinge_embedding_loss(x, (t > 0.5) * 2 - 1, reduction=r),
        f"triplet_{reduction}": lambda lib, x, t, r=reduction: f(lib).triplet_margin_loss(
            x[0], t[0], t[1], reduction=r),
        f"triplet_swap_p3_{reduction}": lambda lib, x, t, r=reduction: f(
            lib).triplet_margin_loss(x[0], t[0], t[1], swap=True, p=3, reduction=r),
        f"poisson_nll_rate_full_{reduction}": lambda lib, x, t, r=reduction: f(
            lib).poisson_nll_loss(x, t + 2, log_input=False, full=True, reduction=r),
    })
CASES.update({
    "pairwise_distance": lambda lib, x, t: f(lib).pairwise_distance(x[0], t[0]),
    "pairwise_distance_p3_keepdim": lambda lib, x, t: f(lib).pairwise_distance(
        x[0], t[0], p=3, keepdim=True),
    "rms_norm": lambda lib, x, t: f(lib).rms_norm(x, (4,)),
    "rms_norm_eps": lambda lib, x, t: f(lib).rms_norm(x, (3, 4), eps=1e-3),
})


@pytest.mark.parametrize("name", sorted(CASES))
def test_graph_as_torch(name):
    graphs = []
    for lib in (hookgrad, torch):
        x = lib.tensor(X, requires_grad=True)
        graphs.append(graph_with_numbers(CASES[name](lib, x, lib.tensor(T)).grad_fn))
    assert graphs[0] == graphs[1]


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_as_torch(name):
    compare(lambda lib, x, t: CASES[name](lib, x, t), X, T, requires_grad=[True, False])


def test_the_table_reaches_every_scalar_node():
    seen = set()
    for fn in CASES.values():
        stack = [fn(torch, torch.tensor(X, requires_grad=True), torch.tensor(T)).grad_fn]
        while stack:
            node = stack.pop()
            if node is not None:
                seen.add(node.name())
                stack.extend(child for child, _ in node.next_functions)
    assert {"MulBackward1", "DivBackward1", "AddBackward1", "SubBackward1",
            "NormBackward1"} <= seen
