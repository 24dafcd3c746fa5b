"""clamp's gradient is torch's ``where(inside, grad, 0)``: laid out by the elementwise rule over
the mask (made from the input) and the incoming gradient, so a transposed input gets a
transposed gradient even when the incoming one is an expanded scalar (``sum``). Compared with
torch: values, strides, and the node under ``create_graph``."""
import numpy as np
import pytest
import torch

import hookgrad

BOUNDS = [(0.1, None), (None, 0.5), (-0.5, 0.5)]


def _input(module, dtype):
    data = np.random.default_rng(3).standard_normal((4, 3)).astype(dtype)
    data[0, 0] = np.nan
    return module.tensor(data, requires_grad=True)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("low,high", BOUNDS)
@pytest.mark.parametrize("transposed", [True, False])
def test_clamp_grad_values_and_layout(dtype, low, high, transposed):
    results = []
    for module in (torch, hookgrad):
        x = _input(module, dtype)
        view = x.t() if transposed else x
        out = view.clamp(min=low, max=high)
        grad, = module.autograd.grad(out.sum(), [view])
        results.append((grad.detach().numpy(), grad.stride(), grad.is_contiguous()))
    (t_values, t_strides, t_contig), (h_values, h_strides, h_contig) = results
    np.testing.assert_array_equal(h_values, t_values)
    assert (h_strides, h_contig) == (t_strides, t_contig)


@pytest.mark.parametrize("low,high", BOUNDS)
def test_clamp_double_backward_matches_torch(low, high):
    results = []
    for module in (torch, hookgrad):
        x = _input(module, "float64")
        out = x.t().clamp(min=low, max=high)
        grad, = module.autograd.grad((out * out).sum(), [x], create_graph=True)
        names = [type(grad.grad_fn).__name__] + [
            type(node).__name__ for node, _ in grad.grad_fn.next_functions if node is not None]
        second, = module.autograd.grad(grad.sum(), [x])
        results.append((grad.detach().numpy(), second.numpy(), names))
    np.testing.assert_array_equal(results[1][0], results[0][0])
    np.testing.assert_array_equal(results[1][1], results[0][1])
    assert results[1][2] == results[0][2]


# tensor bounds: torch's formulas give self the gradient where min <= self <= max, min where
# self < min < max, max where self > max or max < min; NaN anywhere, or self below min == max,
# gives the gradient to nobody
BOUND_CASES = {
    "equal bounds": ([-1.0, 0.5, 2.0, 0.5], [0.5, 0.5, 0.5, 1.0], [0.5, 0.5, 0.5, 0.2]),
    "nan": ([float("nan"), 0.5, 0.2], [0.0, float("nan"), 0.0], [1.0, 1.0, float("nan")]),
    "crossed": ([0.1, 0.9, 3.0], [0.8, 0.8, 0.8], [0.2, 0.2, 0.2]),
    "min only": ([-1.0, 0.5, 2.0], [0.5, 0.5, 0.5], None),
    "max only": ([-1.0, 0.5, 2.0], None, [0.5, 0.5, 0.5]),
}


@pytest.mark.parametrize("name", sorted(BOUND_CASES))
def test_clamp_tensor_bounds_gradients(name):
    x, low, high = BOUND_CASES[name]
    grads = []
    for lib in (torch, hookgrad):
        tensors = [lib.tensor(v, requires_grad=True) if v is not None else None
                   for v in (x, low, high)]
        out = lib.clamp(tensors[0], tensors[1], tensors[2])
        out.backward(lib.arange(1.0, len(x) + 1))
        grads.append([t.grad.numpy() if t is not None else None for t in tensors])
    for ours, theirs in zip(grads[1], grads[0]):
        if theirs is not None:
            np.testing.assert_array_equal(ours, theirs)


def test_clamp_tensor_bounds_grad_layout():
    strides = []
    for lib in (torch, hookgrad):
        x = lib.tensor(np.random.default_rng(4).standard_normal((4, 3)), requires_grad=True)
        shaped = (x * 1).t()
        low = lib.full((), -0.5, dtype=lib.float64, requires_grad=True)
        high = lib.full((3, 1), 0.5, dtype=lib.float64, requires_grad=True)
        (grad,) = lib.autograd.grad(lib.clamp(shaped, low, high).sum(), [shaped])
        strides.append(grad.stride())
    assert strides[1] == strides[0]
