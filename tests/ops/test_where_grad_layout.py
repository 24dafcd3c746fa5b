"""where's gradients are torch's ``where(condition, grad, 0)`` and ``where(condition, 0, grad)``:
laid out by the elementwise rule with the condition first, so a transposed condition gives
transposed gradients even when the incoming gradient is an expanded scalar (``sum``), and
recorded as where under ``create_graph``. Compared with torch: values, strides, nodes."""
import numpy as np
import pytest
import torch

import hookgrad

DATA = np.random.default_rng(8).standard_normal((4, 3))

BRANCHES = {
    "self": lambda lib, t: lib.where(t > 0, t, 0.0),
    "other": lambda lib, t: lib.where(t > 0, 1.0, t),
    "both": lambda lib, t: lib.where(t > 0, t, t * 0.5),
}
LAYOUTS = {
    "transposed": lambda t: t.t(),
    "row-major": lambda t: t,
    "sliced": lambda t: t[:, ::2],
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("branch", sorted(BRANCHES))
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("summed", [True, False])
def test_where_grad_values_and_layout(dtype, branch, layout, summed):
    results = []
    for lib in (torch, hookgrad):
        leaf = lib.tensor(DATA.astype(dtype), requires_grad=True)
        shaped = LAYOUTS[layout](leaf * 1)
        out = BRANCHES[branch](lib, shaped)
        if summed:
            (grad,) = lib.autograd.grad(out.sum(), [shaped])
        else:
            (grad,) = lib.autograd.grad(out, [shaped], lib.ones(tuple(out.shape), dtype=out.dtype))
        results.append((grad.detach().numpy(), grad.stride()))
    np.testing.assert_array_equal(results[1][0], results[0][0])
    assert results[1][1] == results[0][1]


def test_where_grad_is_recorded_as_where():
    names = []
    for lib in (torch, hookgrad):
        x = lib.tensor(DATA, requires_grad=True)
        weight = lib.tensor(np.ones((4, 3)), requires_grad=True)
        grad_self, = lib.autograd.grad(lib.where(x > 0, x, -x), [x], weight, create_graph=True)
        names.append(grad_self.grad_fn.name())
    assert names[1] == names[0]
