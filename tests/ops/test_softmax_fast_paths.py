"""softmax's array paths against torch: a last-dim softmax of float32/float64 inputs below the
safe bound takes exp(x) / sum(exp(x)) without the row max; inputs that miss it (a large input,
a row far below zero, a fully -inf row, nan, another dim, half precision) take the row max
out first; backward's last-dim row sums and the other dims' sums."""
import numpy as np
import pytest
import torch

import hookgrad


def _inputs(case, dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 5, 7)) * 3
    if case == "large input":
        x[1, 2, 3] = 100.0  # exp overflows float32
    elif case == "row far below zero":
        x[0, 1] -= 200.0
    elif case == "fully -inf row":
        x[2, 4] = -np.inf
    elif case == "nan":
        x[1, 0, 0] = np.nan
    return x.astype(dtype)


CASES = ["below the bound", "large input", "row far below zero", "fully -inf row", "nan"]


def _run(lib, x, dim, grad_output):
    leaf = lib.tensor(x, requires_grad=True)
    out = lib.softmax(leaf, dim)
    (grad,) = lib.autograd.grad(out, [leaf], lib.tensor(grad_output))
    return out.detach().numpy(), grad.numpy(), out.stride()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("dim", [-1, 1])
@pytest.mark.parametrize("case", CASES)
def test_softmax_and_its_gradient_match_torch(case, dim, dtype):
    x = _inputs(case, dtype)
    grad_output = np.random.default_rng(1).standard_normal(x.shape).astype(dtype)
    (out_t, grad_t, stride_t), (out_h, grad_h, stride_h) = (
        _run(lib, x, dim, grad_output) for lib in (torch, hookgrad))
    assert out_h.dtype == out_t.dtype and stride_h == stride_t
    tol = {np.float16: 2e-3, np.float32: 1e-6, np.float64: 1e-13}[dtype]
    np.testing.assert_allclose(out_h, out_t, rtol=tol * 10, atol=tol, equal_nan=True)
    np.testing.assert_allclose(grad_h, grad_t, rtol=tol * 10, atol=tol * 10, equal_nan=True)
    assert np.array_equal(np.isnan(out_h), np.isnan(out_t))


def test_a_row_far_below_zero_keeps_its_relative_precision():
    """exp of a row near -200 underflows without the max taken out: such rows take it out."""
    x = np.array([[-200.0, -201.0, -230.0]], np.float32)
    out = hookgrad.softmax(hookgrad.tensor(x), -1).numpy()
    expected = torch.softmax(torch.tensor(x), -1).numpy()
    np.testing.assert_allclose(out, expected, rtol=1e-6, atol=0)
