"""ReLU's and threshold's backward clear the gradient by a bit mask: the same bits as torch's
``self <= threshold ? 0 : grad``, including +0 over negative, infinite and NaN gradients and
NaN inputs, for every float dtype, small and block-sized, and for strided gradients."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close


def _special(rng, shape, dtype):
    values = rng.standard_normal(shape)
    flat = values.reshape(-1)
    flat[:6] = [0.0, -0.0, np.nan, np.inf, -np.inf, 1e-30]
    return values.astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("shape", [(5, 7), (300, 700)])
@pytest.mark.parametrize("op", ["relu", "threshold"])
@pytest.mark.parametrize("transposed_grad", [False, True])
def test_masked_gradient_bits_match_torch(rng, dtype, shape, op, transposed_grad):
    x = _special(rng, shape, np.float64)
    g = _special(rng, shape[::-1] if transposed_grad else shape, np.float64)
    g.reshape(-1)[6:12] = [-1.0, np.nan, np.inf, -np.inf, -0.0, -2.0]
    # values both libraries hold exactly (torch rounds float64 to half through float32)
    x, g = (a.astype(np.float32).astype(np.float64) for a in (x, g))
    grads = []
    for lib in (torch, hookgrad):
        t = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
        out = t.relu() if op == "relu" else lib.nn.functional.threshold(t, 0.25, -3.0)
        upstream = lib.tensor(g, dtype=getattr(lib, dtype))
        out.backward(upstream.t() if transposed_grad else upstream)
        grads.append(t.grad)
    theirs = grads[0].float() if dtype == "bfloat16" else grads[0]
    ours = grads[1].float() if dtype == "bfloat16" else grads[1]
    assert_close(ours, theirs)
    bits = {"float64": np.uint64, "float32": np.uint32, "float16": np.uint16}
    if dtype in bits:  # +0 and -0 alike: compare the bits, not the values
        np.testing.assert_array_equal(ours.numpy().view(bits[dtype]),
                                      theirs.numpy().view(bits[dtype]))
