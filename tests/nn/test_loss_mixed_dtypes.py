"""Losses given an input and a target of different float dtypes, against torch: the result's
dtype (promoted for smooth_l1 and mse, the target's for binary_cross_entropy_with_logits,
which torch builds in place on ``1 - target``), the gradients' dtypes and values, and torch's
error where its kernel refuses the pair (binary_cross_entropy in forward, huber in backward)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad

LOSSES = ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
          "binary_cross_entropy_with_logits", "soft_margin_loss"]
PAIRS = [("float32", "float64"), ("float64", "float32")]


def _outcome(lib, loss, input_dtype, target_dtype, reduction, target_grad):
    x = lib.tensor([0.3, 0.6, 0.85], dtype=getattr(lib, input_dtype), requires_grad=True)
    t = lib.tensor([0.0, 1.0, 0.25], dtype=getattr(lib, target_dtype),
                   requires_grad=target_grad)
    try:
        result = getattr(lib.nn.functional, loss)(x, t, reduction=reduction)
    except RuntimeError as error:
        return ("forward error", str(error))
    try:
        (result * 1.5).sum().backward()
    except RuntimeError as error:
        return ("backward error", str(result.dtype).split(".")[-1], str(error))
    grads = [None if g is None else (str(g.dtype).split(".")[-1], g.detach().numpy())
             for g in (x.grad, t.grad)]
    return ("ok", str(result.dtype).split(".")[-1], result.detach().numpy(), grads)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("input_dtype,target_dtype", PAIRS)
@pytest.mark.parametrize("reduction", ["mean", "none"])
@pytest.mark.parametrize("target_grad", [False, True])
def test_mixed_dtypes_match_torch(loss, input_dtype, target_dtype, reduction, target_grad):
    ours = _outcome(hookgrad, loss, input_dtype, target_dtype, reduction, target_grad)
    theirs = _outcome(torch, loss, input_dtype, target_dtype, reduction, target_grad)
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] != "ok":
        assert ours[1:] == theirs[1:]
        return
    assert ours[1] == theirs[1]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6, atol=1e-7)
    for mine, torchs in zip(ours[3], theirs[3]):
        assert (mine is None) == (torchs is None)
        if mine is not None:
            assert mine[0] == torchs[0]
            np.testing.assert_allclose(mine[1], torchs[1], rtol=1e-6, atol=1e-7)
