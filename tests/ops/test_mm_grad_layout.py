"""mm / addmm gradients are produced in their input's layout (a transposed weight gets a
transposed product), as torch does: same values, gradients, double backward and the same
contiguity of ``.grad`` as torch for a Linear weight."""
import numpy as np
import pytest
import torch

import hookgrad

DTYPES = ["float16", "float32", "float64"]
TOL = {"float16": 2e-2, "float32": 1e-5, "float64": 1e-12}


def _pair(array):
    return (torch.tensor(array, requires_grad=True),
            hookgrad.tensor(array, requires_grad=True))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(5, 7, 3), (1, 4, 1), (6, 1, 9), (2, 3, 4, 5)])
def test_linear_weight_grad_layout_and_values(dtype, bias, shape):
    *lead, n_in, n_out = shape
    rng = np.random.default_rng(0)
    x = rng.standard_normal((*lead, n_in)).astype(dtype)
    w = rng.standard_normal((n_out, n_in)).astype(dtype)
    b = rng.standard_normal(n_out).astype(dtype)
    xt, xh = _pair(x)
    wt, wh = _pair(w)
    bt, bh = _pair(b)
    torch.nn.functional.linear(xt, wt, bt if bias else None).pow(2).sum().backward()
    hookgrad.nn.functional.linear(xh, wh, bh if bias else None).pow(2).sum().backward()
    for t, h in ((xt, xh), (wt, wh)) + (((bt, bh),) if bias else ()):
        np.testing.assert_allclose(h.grad.numpy(), t.grad.numpy(), rtol=TOL[dtype],
                                   atol=TOL[dtype])
        assert h.grad.is_contiguous() == t.grad.is_contiguous()
        assert h.grad.stride() == t.grad.stride()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("transpose", [(False, False), (True, False), (False, True),
                                       (True, True)])
def test_mm_with_transposed_operands_double_backward(dtype, transpose):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((4, 6)).astype(dtype)
    b = rng.standard_normal((6, 3)).astype(dtype)
    if transpose[0]:
        a = np.ascontiguousarray(a.T)
    if transpose[1]:
        b = np.ascontiguousarray(b.T)
    at, ah = _pair(a)
    bt, bh = _pair(b)

    def product(lib, x, y):
        x = x.t() if transpose[0] else x
        y = y.t() if transpose[1] else y
        return lib.mm(x, y)

    out_t, out_h = product(torch, at, bt), product(hookgrad, ah, bh)
    np.testing.assert_allclose(out_h.detach().numpy(), out_t.detach().numpy(), rtol=TOL[dtype],
                               atol=TOL[dtype])
    g = rng.standard_normal(out_t.shape).astype(dtype)
    gt, gh = _pair(g)
    grads_t = torch.autograd.grad(out_t, (at, bt), gt, create_graph=True)
    grads_h = hookgrad.autograd.grad(out_h, (ah, bh), gh, create_graph=True)
    for t, h in zip(grads_t, grads_h):
        np.testing.assert_allclose(h.detach().numpy(), t.detach().numpy(), rtol=TOL[dtype],
                                   atol=TOL[dtype])
    second_t = torch.autograd.grad(sum((t * t).sum() for t in grads_t), (at, bt, gt))
    second_h = hookgrad.autograd.grad(sum((h * h).sum() for h in grads_h), (ah, bh, gh))
    for t, h in zip(second_t, second_h):
        np.testing.assert_allclose(h.numpy(), t.numpy(), rtol=TOL[dtype] * 10,
                                   atol=TOL[dtype] * 10)
