"""Window functions against torch's: every length class, both forms, the floating dtypes."""
import numpy as np
import pytest
import torch

import hookgrad
from tests.conftest import assert_close, raised

NAMES = ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
         "kaiser_window"]
LENGTHS = [0, 1, 2, 3, 4, 5, 8, 17, 64, 255, 1000]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_windows_as_torch(name, periodic, dtype):
    tolerance = {"float32": dict(rtol=1e-5, atol=1e-6), "float64": dict(rtol=1e-12, atol=1e-13)}
    for length in LENGTHS:
        hg = getattr(hookgrad, name)(length, periodic, dtype=getattr(hookgrad, dtype))
        th = getattr(torch, name)(length, periodic, dtype=getattr(torch, dtype))
        assert_close(hg, th, what=f"{name}({length}, {periodic})", **tolerance[dtype])
        assert hg.is_contiguous()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_windows_in_16_bit_dtypes_within_a_few_places(dtype):
    for name in NAMES:
        hg = getattr(hookgrad, name)(64, dtype=getattr(hookgrad, dtype))
        th = getattr(torch, name)(64, dtype=getattr(torch, dtype))
        assert hg.dtype == getattr(hookgrad, dtype)
        np.testing.assert_allclose(hg.float().numpy(), th.float().numpy(), atol=0.03)


def test_window_arguments():
    for lib in (hookgrad, torch):
        assert lib.hann_window(6).dtype == lib.get_default_dtype()
        assert lib.hann_window(4, requires_grad=True).requires_grad
    assert_close(hookgrad.hamming_window(9, False, 0.5, 0.4),
                 torch.hamming_window(9, False, 0.5, 0.4))
    assert_close(hookgrad.kaiser_window(12, True, 5.0, dtype=hookgrad.float64),
                 torch.kaiser_window(12, True, 5.0, dtype=torch.float64), rtol=1e-12)
    hookgrad.set_default_dtype(hookgrad.float64)
    try:
        assert hookgrad.bartlett_window(3).dtype == hookgrad.float64
    finally:
        hookgrad.set_default_dtype(hookgrad.float32)


@pytest.mark.parametrize("make", [lambda lib: lib.hann_window(5, dtype=lib.int64),
                                  lambda lib: lib.kaiser_window(-1),
                                  lambda lib: lib.blackman_window(-3, False)])
def test_window_errors_as_torch(make):
    assert raised(make, hookgrad) == raised(make, torch)
