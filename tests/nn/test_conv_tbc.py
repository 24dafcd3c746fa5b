"""torch.conv_tbc / F.conv_tbc against torch: time-major 1-D convolution with padding (negative
padding crops), values, gradients, double backward, node, saved attributes and errors."""
import numpy as np
import pytest
import torch

import hookgrad
from tests.conftest import assert_same_error, compare, compare_double_backward

RNG = np.random.default_rng(31)
CASES = [(7, 2, 3, 4, 3, 0), (7, 2, 3, 4, 3, 1), (5, 1, 2, 3, 2, -1), (6, 3, 2, 2, 1, 2),
         (4, 2, 3, 2, 4, 5), (3, 2, 2, 2, 3, 0)]


def _arrays(time, batch, c_in, c_out, width):
    return (RNG.standard_normal((time, batch, c_in)), RNG.standard_normal((width, c_in, c_out)),
            RNG.standard_normal(c_out))


@pytest.mark.parametrize("time,batch,c_in,c_out,width,pad", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_and_gradients_equal_torchs(time, batch, c_in, c_out, width, pad, dtype):
    arrays = [a.astype(dtype) for a in _arrays(time, batch, c_in, c_out, width)]
    tolerance = dict(rtol=1e-12, atol=1e-12) if dtype == np.float64 else {}
    compare(lambda lib, x, w, b: lib.conv_tbc(x, w, b, pad), *arrays, **tolerance)
    compare(lambda lib, x, w, b: lib.nn.functional.conv_tbc(x, w, b, pad), *arrays,
            **tolerance)


@pytest.mark.parametrize("pad", [0, 2, -1])
def test_double_backward_equals_torchs(pad):
    compare_double_backward(lambda lib, x, w, b: lib.conv_tbc(x, w, b, pad),
                            *_arrays(6, 2, 3, 2, 2))


def test_node_and_saved_attributes_are_torchs():
    arrays = _arrays(5, 2, 3, 4, 2)
    seen = []
    for lib in (torch, hookgrad):
        x, w, b = (lib.tensor(a, requires_grad=True) for a in arrays)
        node = lib.conv_tbc(x, w, b, 1).grad_fn
        seen.append((node.name(), node._saved_pad, node._saved_self is x,
                     node._saved_weight is w, node._saved_bias is b))
    assert seen[1] == seen[0]


ERRORS = {
    "input_2d": lambda lib: lib.conv_tbc(lib.randn(5, 2), lib.randn(2, 3, 4), lib.randn(4)),
    "weight_2d": lambda lib: lib.conv_tbc(lib.randn(5, 2, 3), lib.randn(2, 3), lib.randn(4)),
    "bias_size": lambda lib: lib.conv_tbc(lib.randn(5, 2, 3), lib.randn(2, 3, 4), lib.randn(3)),
    "channels": lambda lib: lib.conv_tbc(lib.randn(5, 2, 3), lib.randn(2, 4, 4), lib.randn(4)),
    "too_short": lambda lib: lib.conv_tbc(lib.randn(1, 2, 3), lib.randn(4, 3, 4),
                                          lib.randn(4)),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_are_torchs(name):
    assert_same_error(ERRORS[name])
