"""The backward of view, reshape, _unsafe_view and squeeze reshapes the incoming gradient; when
nothing is recorded, no mode intercepts calls and the gradient is row-major, that reshape is
made directly instead of through the public call. Each case compares with torch (values, the
gradient's shape and strides as a hook on the input sees them, and what flows on) with the
gradient row-major, not row-major (a hook hands on a transposed copy), under create_graph
and under a function mode, where the ordinary path runs."""
import numpy as np
import pytest
import torch

import hookgrad

OPS = {
    "view": lambda t: t.view(3, 4),
    "reshape": lambda t: t.reshape(-1, 2),
    "reshape_copy": lambda t: t.transpose(0, 1).reshape(12),  # _unsafe_view of a clone
    "squeeze": lambda t: t.view(1, 12, 1).squeeze(),
    "squeeze_dim": lambda t: t.view(1, 2, 6).squeeze(0),
    "unsqueeze_then_view": lambda t: t.unsqueeze(1).view(4, 3, 1),
}


def _run(lib, op, grad_kind):
    leaf = lib.tensor(np.arange(12.0).reshape(2, 6), requires_grad=True, dtype=lib.float64)
    seen = []
    base = leaf * 1
    base.register_hook(lambda g: seen.append((tuple(g.shape), g.stride())))
    out = OPS[op](base)
    if grad_kind == "transposed":
        # the gradient reaching the view's node is not row-major: the ordinary path runs
        out.register_hook(lambda g: g.detach().t().contiguous().t()
                          if g.dim() == 2 else g.flip(0).flip(0))
    weights = lib.arange(float(out.numel()), dtype=lib.float64).view(out.shape)
    create_graph = grad_kind == "create_graph"
    (out * weights).sum().backward(create_graph=create_graph)
    grad = leaf.grad
    return seen, grad.detach().numpy().tolist(), grad.requires_grad


@pytest.mark.parametrize("grad_kind", ["row_major", "transposed", "create_graph"])
@pytest.mark.parametrize("op", list(OPS))
def test_view_backward_matches_torch(op, grad_kind):
    assert _run(hookgrad, op, grad_kind) == _run(torch, op, grad_kind)


@pytest.mark.parametrize("op", list(OPS))
def test_view_backward_under_a_function_mode_matches_the_plain_run(op):
    seen = []

    class Log(hookgrad.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(getattr(func, "__name__", str(func)))
            return func(*args, **(kwargs or {}))

    with Log():
        result = _run(hookgrad, op, "row_major")
    assert result == _run(torch, op, "row_major")
    assert seen  # the mode saw the calls
