"""reshape of an input whose strides allow no view: one row-major copy (torch's
``_unsafe_view(clone(contiguous_format))``), with torch's graph, values and gradient."""
import numpy as np
import torch
from conftest import traced_peak

import hookgrad


def test_graph_values_and_gradient_match_torch():
    x = np.random.default_rng(0).standard_normal((4, 5, 6, 3))
    results = []
    for lib in (torch, hookgrad):
        a = lib.tensor(x, requires_grad=True)
        y = a.permute(2, 0, 3, 1).reshape(6, 60)
        clone = y.grad_fn.next_functions[0][0]
        y.backward(lib.tensor(np.arange(360.0).reshape(6, 60)))
        results.append((type(y.grad_fn).__name__, type(clone).__name__, y.stride(),
                        y.detach().numpy(), a.grad.numpy()))
    (name_a, clone_a, stride_a, ya, ga), (name_b, clone_b, stride_b, yb, gb) = results
    assert (name_b, clone_b, stride_b) == (name_a, clone_a, stride_a)
    np.testing.assert_array_equal(yb, ya)
    np.testing.assert_array_equal(gb, ga)


def test_the_copy_is_made_once():
    # a clone keeping the permuted strides would leave reshape a second copy: two results'
    # worth of memory at the peak instead of one
    x = hookgrad.tensor(np.ones((64, 32, 128), np.float32)).permute(1, 2, 0)
    nbytes = x.numel() * 4
    peak = traced_peak(lambda: x.reshape(32, -1))
    assert nbytes <= peak < 1.5 * nbytes
