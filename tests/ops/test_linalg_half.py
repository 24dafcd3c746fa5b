"""matrix_norm and matrix_exp on float16/bfloat16, against torch: norms that need no singular
values as torch's half kernels give them; matrix_exp against torch's float32 result rounded
once (torch's own half-precision matrix_exp is wrong on this CPU: 1e30 for a small matrix)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad

MATRIX = np.array([[0.5, 0.2, -0.1], [0.1, 0.3, 0.4], [-0.2, 0.6, 0.1]], np.float32)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("ord", ["fro", 1, -1, float("inf"), float("-inf")])
def test_matrix_norm_in_half_precision_matches_torch(ord, dtype):
    ours = hookgrad.linalg.matrix_norm(hookgrad.tensor(MATRIX).to(getattr(hookgrad, dtype)), ord)
    theirs = torch.linalg.matrix_norm(torch.tensor(MATRIX).to(getattr(torch, dtype)), ord)
    assert str(ours.dtype) == str(theirs.dtype)
    assert float(ours.float()) == pytest.approx(float(theirs.float()), rel=1e-2)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_matrix_exp_in_half_precision_is_float32s_rounded_once(dtype):
    ours = hookgrad.linalg.matrix_exp(hookgrad.tensor(MATRIX).to(getattr(hookgrad, dtype)))
    exact = torch.linalg.matrix_exp(torch.tensor(MATRIX).to(getattr(torch, dtype)).float())
    assert str(ours.dtype) == f"torch.{dtype}"
    np.testing.assert_array_equal(ours.float().numpy(),
                                  exact.to(getattr(torch, dtype)).float().numpy())


@pytest.mark.parametrize("ord", ["nuc", 2, -2])
def test_singular_value_norms_refuse_half_precision_as_torch(ord):
    messages = []
    for lib in (torch, hookgrad):
        with pytest.raises(RuntimeError) as caught:
            lib.linalg.matrix_norm(lib.tensor(MATRIX).half(), ord)
        messages.append(str(caught.value))
    assert messages[1] == messages[0]
