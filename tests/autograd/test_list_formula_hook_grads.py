"""cat, stack and block_diag compute every input's part of the gradient in one formula, so a
node hook sees a gradient for an input that does not require grad (torch's list formulas),
where ops with per-input formulas give None. Checked against torch on the same programs."""
import numpy as np
import pytest
import torch

import hookgrad

BUILDERS = {
    "cat": lambda lib, a, b: lib.cat([a, b]),
    "cat_first_plain": lambda lib, a, b: lib.cat([b, a]),
    "stack": lambda lib, a, b: lib.stack([a[0], b[0]]),
    "block_diag": lambda lib, a, b: lib.block_diag(a, b),
    "mul": lambda lib, a, b: a[:1] * b,
}


def _seen(lib, build, partial: bool, plain_dtype):
    a = lib.tensor(np.array([[1.0, 2.0], [3.0, 4.0]]), requires_grad=True)
    b = lib.tensor(np.array([[5.0, 6.0]])).to(plain_dtype)
    out = build(lib, a, b)
    seen = []
    out.grad_fn.register_hook(lambda grad_inputs, grad_outputs: seen.extend(
        None if g is None else (tuple(g.shape), str(g.dtype).split(".")[-1], g.detach().numpy())
        for g in grad_inputs))
    loss = (out * lib.arange(out.numel(), dtype=out.dtype).reshape(out.shape)).sum()
    if partial:
        lib.autograd.grad(loss, [a])
    else:
        loss.backward()
    return seen


@pytest.mark.parametrize("partial", [False, True])
@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_node_hook_sees_list_formula_parts_as_torch(name, partial):
    for plain in ("float64", "float32"):
        theirs = _seen(torch, BUILDERS[name], partial, getattr(torch, plain))
        ours = _seen(hookgrad, BUILDERS[name], partial, getattr(hookgrad, plain))
        assert len(ours) == len(theirs)
        for mine, expected in zip(ours, theirs):
            assert (mine is None) == (expected is None), (name, plain, ours, theirs)
            if expected is not None:
                assert mine[:2] == expected[:2]
                np.testing.assert_array_equal(mine[2], expected[2])
