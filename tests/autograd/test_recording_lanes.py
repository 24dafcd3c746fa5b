"""The recording shortcuts (an operator's direct lane handing ``record_builtin`` the inputs it
already knows; a one-argument op on a tensor that is no view; an op that saves only its output)
record what the full search records: the same edges, gradients, saved tensors and version
errors as torch, for leaves, non-leaves, a tensor and its detached alias, and ``x * x``."""
import numpy as np
import pytest
import torch

import hookgrad


def _edges(tensor):
    return [None if node is None else (type(node).__name__, nr)
            for node, nr in tensor.grad_fn.next_functions]


def _run(module, case):
    data = np.array([0.5, -1.5, 2.0], dtype=np.float32)
    x = module.tensor(data, requires_grad=True)
    h = x * 1.5  # a non-leaf
    plain = module.tensor(data * 2)
    if case == "leaf_number":
        out = x * 3.0
    elif case == "nonleaf_number":
        out = h + 2.0
    elif case == "pair_plain":
        out = h * plain
    elif case == "pair_leaves":
        out = x * module.tensor(data, requires_grad=True)
    elif case == "square":
        out = h * h
    elif case == "detached_alias":
        out = h * h.detach()
    elif case == "unary_leaf":
        out = x.tanh()
    else:  # unary_nonleaf
        out = h.exp()
    edges = _edges(out)
    out.sum().backward()
    return out.detach().numpy(), x.grad.numpy(), edges


CASES = ["leaf_number", "nonleaf_number", "pair_plain", "pair_leaves", "square",
         "detached_alias", "unary_leaf", "unary_nonleaf"]


@pytest.mark.parametrize("case", CASES)
def test_recorded_edges_and_gradients_match_torch(case):
    t_out, t_grad, t_edges = _run(torch, case)
    h_out, h_grad, h_edges = _run(hookgrad, case)
    np.testing.assert_allclose(h_out, t_out, rtol=1e-6)
    np.testing.assert_allclose(h_grad, t_grad, rtol=1e-6)
    assert h_edges == t_edges


@pytest.mark.parametrize("case", ["tanh", "pair", "alias"])
def test_saved_tensor_changed_in_place_raises_as_torch(case):
    messages = []
    for module in (torch, hookgrad):
        x = module.tensor([0.5, -1.5], requires_grad=True)
        h = x * 2.0
        if case == "tanh":
            out = h.tanh()
            out.add_(1.0)  # the saved output is changed
        elif case == "pair":
            other = module.tensor([1.0, 2.0])
            out = h * other
            other.mul_(2.0)  # a saved input is changed
        else:
            alias = h.detach()
            out = h * alias
            alias.mul_(2.0)  # shares h's version counter
        with pytest.raises(RuntimeError) as info:
            out.sum().backward()
        messages.append(str(info.value).split(";")[0])
    assert messages[1] == messages[0]
