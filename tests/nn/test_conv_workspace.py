"""Convolution's backward keeps its transients small: the weight's gradient slices the batch so
that its columns and the laid-out incoming gradient together stay under
``conv.WORKSPACE_BYTES``, and the saved input is let go before the input's gradient is made
(a saver's decoded copy of it is then freed early). Values are checked against torch."""
from __future__ import annotations

import tracemalloc
import weakref

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close
from hookgrad.nn.ops import conv


def test_weight_gradient_workspace_counts_the_laid_out_gradient(rng, monkeypatch):
    x = rng.standard_normal((8, 16, 32, 32)).astype(np.float32)
    grad = rng.standard_normal((8, 32, 32, 32)).astype(np.float32)
    bound = 2 << 20
    monkeypatch.setattr(conv, "WORKSPACE_BYTES", bound)
    tracemalloc.start()
    try:
        result = conv.correlate_weight_grad(x, grad, (3, 3), (1, 1), (1, 1), (1, 1), 1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # columns, laid-out gradient and a padded slice of x (counting the columns alone, the
    # slices were 3 samples and this peak 1.05 times the bound)
    assert peak < bound
    expected = torch.nn.grad.conv2d_weight(torch.tensor(x), (32, 16, 3, 3), torch.tensor(grad),
                                           padding=1)
    assert_close(result, expected, rtol=1e-4, atol=5e-3)  # sums of 8192 float32 terms


@pytest.mark.parametrize("transposed", [False, True])
def test_the_saved_input_is_let_go_before_the_input_gradient(rng, monkeypatch, transposed):
    unpacked = []

    def unpack(array):
        decoded = array.copy()  # a decoded copy, as a saver hands back
        unpacked.append(weakref.ref(decoded))
        return hookgrad.from_numpy(decoded)

    alive_then = []
    real = conv.correlate_input_grad if not transposed else conv.correlate

    def watched(*args, **kwargs):
        alive_then.append([ref() is not None for ref in unpacked])
        return real(*args, **kwargs)

    values = rng.standard_normal((2, 4, 7, 6))
    weight = rng.standard_normal((4, 3, 3, 3) if transposed else (5, 4, 3, 3))
    x = hookgrad.tensor(values, requires_grad=True)
    w = hookgrad.tensor(weight, requires_grad=True)
    function = "conv_transpose2d" if transposed else "conv2d"
    with hookgrad.autograd.graph.saved_tensors_hooks(lambda t: t.detach().numpy().copy(),
                                                     unpack):
        h = x * 1  # an activation, so the hooks store a copy of it
        out = getattr(hookgrad.nn.functional, function)(h, w, padding=1)
    monkeypatch.setattr(conv, "correlate" if transposed else "correlate_input_grad", watched)
    out.backward(hookgrad.ones_like(out))
    monkeypatch.undo()
    # the convolution's node unpacked its input and weight; when the input's gradient was
    # computed, the input's decoded copy was gone (the weight is a parameter: still held)
    assert alive_then and alive_then[0] == [False, True]
    tx = torch.tensor(values, requires_grad=True)
    tw = torch.tensor(weight, requires_grad=True)
    theirs = getattr(torch.nn.functional, function)(tx * 1, tw, padding=1)
    theirs.backward(torch.ones_like(theirs))
    assert_close(x.grad, tx.grad)
    assert_close(w.grad, tw.grad)
