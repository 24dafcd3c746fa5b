"""torch.autograd.graph's public helpers that the tools are built on, against torch:
increment_version on one tensor or several, and register_multi_grad_hook's "any" mode firing once
per backward call."""
import numpy as np
import pytest
import torch

import hookgrad


def versions_after_increment(lib, several):
    a = lib.tensor(np.arange(3.0), requires_grad=True)
    b = lib.tensor(np.ones(2))
    lib.autograd.graph.increment_version([a, b] if several else a)
    lib.autograd.graph.increment_version((b,) if several else b)
    return a._version, b._version


@pytest.mark.parametrize("several", [False, True])
def test_increment_version_matches_torch(several):
    assert versions_after_increment(hookgrad, several) == versions_after_increment(torch, several)


def stale_saved_tensor_error(lib):
    x = lib.tensor(np.array([0.5, 1.5]), requires_grad=True)
    y = x.exp()  # exp saves its result
    lib.autograd.graph.increment_version(y)
    with pytest.raises(RuntimeError) as caught:
        y.sum().backward()
    return type(caught.value).__name__, "modified by an inplace operation" in str(caught.value)


def test_increment_version_makes_backward_refuse_a_saved_tensor_like_torch():
    assert stale_saved_tensor_error(hookgrad) == stale_saved_tensor_error(torch)


def any_mode_calls(lib):
    x = lib.tensor(np.array([1.0, 2.0]), requires_grad=True)
    first, second = x * 2, x * 3
    calls = []
    lib.autograd.graph.register_multi_grad_hook(
        (first, second), lambda grad: calls.append(grad.tolist()), mode="any")
    (first.sum() + second.sum()).backward(retain_graph=True)  # reaches both: one call
    second.sum().backward(retain_graph=True)
    lib.autograd.grad(first.sum(), x)
    return calls


def test_multi_grad_hook_any_mode_fires_once_per_backward_call_like_torch():
    assert any_mode_calls(hookgrad) == any_mode_calls(torch)
