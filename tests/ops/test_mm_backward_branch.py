"""Which way mm's and addmm's gradients are computed, as torch decides it: a factor whose
strides pass torch's column-major test (stride 1 down the rows, the row count across) gets its
gradient as a transposed product, which shows as ``TBackward0`` under ``create_graph`` and in
the gradient's strides. Size-1 dims pass that test while being row-major as well (fuzzer seed
2831543: a 1x1 factor)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad

LAYOUTS = [((1, 1), (1, 1)), ((1, 1), (5, 7)), ((1, 1), (1, 5)), ((2, 1), (1, 1)),
           ((2, 1), (1, 2)), ((2, 1), (1, 9)), ((1, 2), (2, 1)), ((1, 2), (1, 1)),
           ((1, 2), (1, 9)), ((3, 2), (2, 1)), ((3, 2), (1, 3)), ((3, 2), (1, 4))]


def _gradient(lib, op, side, shape, strides):
    rng = np.random.default_rng(0)
    size = sum((n - 1) * s for n, s in zip(shape, strides)) + 1
    factor = lib.tensor(rng.standard_normal(size)).as_strided(shape, strides)
    factor = factor.detach().requires_grad_()
    other_shape = (shape[1], 3) if side == "mat1" else (3, shape[0])
    other = lib.tensor(rng.standard_normal(other_shape), requires_grad=True)
    mat1, mat2 = (factor, other) if side == "mat1" else (other, factor)
    if op == "mm":
        out = mat1 @ mat2
    else:
        bias = lib.tensor(rng.standard_normal((mat1.shape[0], mat2.shape[1])))
        out = lib.addmm(bias, mat1, mat2, beta=0.5)  # alpha 1: no scalar product
    weights = lib.tensor(rng.standard_normal(tuple(out.shape)))
    (grad,) = lib.autograd.grad((out * weights).sum(), factor, create_graph=True)
    return grad


@pytest.mark.parametrize("op", ["mm", "addmm"])
@pytest.mark.parametrize("side", ["mat1", "mat2"])
@pytest.mark.parametrize("shape,strides", LAYOUTS)
def test_gradient_branch_and_layout_match_torch(op, side, shape, strides):
    ours = _gradient(hookgrad, op, side, shape, strides)
    theirs = _gradient(torch, op, side, shape, strides)
    assert ours.grad_fn.name() == theirs.grad_fn.name()
    assert ours.stride() == theirs.stride()
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12)
