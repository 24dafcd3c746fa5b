"""softmax's and log_softmax's first-order gradients under create_graph are one node each, as
in torch (SoftmaxBackwardDataBackward0, LogSoftmaxBackwardDataBackward0): names, edges, what a
hook on the node sees, and second and third derivatives."""
import numpy as np
import pytest
import torch

import hookgrad

DATA = np.random.default_rng(0).standard_normal((3, 4, 5))


def _run(lib, op, dim, dtype):
    x = lib.tensor(DATA, dtype=getattr(lib, dtype), requires_grad=True)
    weight = lib.tensor(np.linspace(-1, 1, DATA.size).reshape(DATA.shape),
                        dtype=getattr(lib, dtype))
    y = getattr(x, op)(dim)
    (g,) = lib.autograd.grad((y * weight).sum(), [x], create_graph=True)
    node = g.grad_fn
    names = (node.name(), [None if n is None else n.name() for n, _ in node.next_functions])
    seen = []
    node.register_hook(lambda grad_inputs, grad_outputs: seen.append(
        [None if v is None else v.detach().numpy().copy() for v in grad_inputs]))
    (h,) = lib.autograd.grad((g * g).sum(), [x], create_graph=True)
    (third,) = lib.autograd.grad(h.sum(), [x])
    return names, seen, g.detach().numpy(), h.detach().numpy(), third.numpy()


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_double_backward_node_matches_torch(op, dim, dtype):
    ours, theirs = _run(hookgrad, op, dim, dtype), _run(torch, op, dim, dtype)
    assert ours[0] == theirs[0]
    tolerance = dict(rtol=1e-10, atol=1e-12) if dtype == "float64" else dict(rtol=2e-4,
                                                                          atol=1e-5)
    assert len(ours[1]) == len(theirs[1]) > 0  # the hook runs in each later pass
    for call, other_call in zip(ours[1], theirs[1]):
        for mine, other in zip(call, other_call):
            assert (mine is None) == (other is None)
            if mine is not None:
                np.testing.assert_allclose(mine, other, **tolerance)
    for mine, other in zip(ours[2:], theirs[2:]):
        np.testing.assert_allclose(mine, other, **tolerance)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_half_precision_gradient_graph(op):
    def run(lib):
        x = lib.tensor(DATA[0], dtype=lib.float32).half().requires_grad_()
        (g,) = lib.autograd.grad(getattr(x, op)(1).sum() * 0 + (getattr(x, op)(1) ** 2).sum(),
                                 [x], create_graph=True)
        return g.float().detach().numpy(), g.dtype
    (ours, our_dtype), (theirs, their_dtype) = run(hookgrad), run(torch)
    assert str(our_dtype) == str(their_dtype)
    # a half's last bit in log_softmax's output moves exp(o) * sum(g) by about 5e-3 here
    np.testing.assert_allclose(ours, theirs, rtol=1e-2, atol=1e-2)
