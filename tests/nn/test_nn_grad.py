"""torch.nn.grad (conv1d/2d/3d_input and _weight) against torch: the gradients a convolution's
backward gives, for strides, padding, dilation and groups; differentiable again in the tensors
given, with torch's node."""
import numpy as np
import pytest
import torch

import hookgrad
from tests.conftest import compare

RNG = np.random.default_rng(29)
CASES = [
    (1, (2, 4, 9), (6, 2, 3), dict(stride=2, padding=1, groups=2)),
    (1, (3, 2, 7), (2, 2, 2), {}),
    (2, (2, 3, 7, 8), (4, 3, 3, 2), dict(stride=(2, 1), dilation=2)),
    (2, (1, 4, 6, 6), (4, 1, 3, 3), dict(padding=(1, 2), groups=4)),
    (3, (1, 2, 5, 6, 5), (3, 2, 2, 2, 2), dict(padding=1)),
    (3, (2, 2, 6, 5, 7), (2, 1, 3, 1, 2), dict(stride=(2, 1, 3), groups=2)),
]
IDS = [f"{case[0]}d-{i}" for i, case in enumerate(CASES)]


def _grad_output(nd, shape, weight_shape, kwargs):
    out = getattr(torch.nn.functional, f"conv{nd}d")(torch.zeros(shape),
                                                     torch.zeros(weight_shape), **kwargs)
    return RNG.standard_normal(tuple(out.shape))


@pytest.mark.parametrize("nd,shape,weight_shape,kwargs", CASES, ids=IDS)
def test_input_gradient_equals_torchs(nd, shape, weight_shape, kwargs):
    weight = RNG.standard_normal(weight_shape)
    grad_output = _grad_output(nd, shape, weight_shape, kwargs)
    compare(lambda lib, w, g: getattr(lib.nn.grad, f"conv{nd}d_input")(shape, w, g, **kwargs),
            weight, grad_output, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("nd,shape,weight_shape,kwargs", CASES, ids=IDS)
def test_weight_gradient_equals_torchs(nd, shape, weight_shape, kwargs):
    x = RNG.standard_normal(shape)
    grad_output = _grad_output(nd, shape, weight_shape, kwargs)
    compare(lambda lib, x, g: getattr(lib.nn.grad, f"conv{nd}d_weight")(x, weight_shape, g,
                                                                        **kwargs),
            x, grad_output, rtol=1e-12, atol=1e-12)


def test_the_results_agree_with_backward_and_record_torchs_node():
    x, weight = RNG.standard_normal((2, 3, 6, 6)), RNG.standard_normal((4, 3, 3, 3))
    grad_output = RNG.standard_normal((2, 4, 4, 4))
    names = []
    for lib in (torch, hookgrad):
        w = lib.tensor(weight, requires_grad=True)
        result = lib.nn.grad.conv2d_input(x.shape, w, lib.tensor(grad_output))
        names.append(result.grad_fn.name())
        t = lib.tensor(x, requires_grad=True)
        lib.nn.functional.conv2d(t, lib.tensor(weight)).backward(lib.tensor(grad_output))
        np.testing.assert_allclose(result.detach().numpy(), t.grad.numpy(), rtol=1e-12,
                                   atol=1e-12)
    assert names[1] == names[0]


def test_a_grad_output_of_the_wrong_size_raises_torchs_error_type():
    for lib in (torch, hookgrad):
        with pytest.raises(RuntimeError):
            lib.nn.grad.conv2d_input((1, 2, 5, 5), lib.randn(3, 2, 3, 3), lib.randn(1, 3, 4, 4))
