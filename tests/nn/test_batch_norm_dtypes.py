"""Batch and instance norm with parameters and running statistics of other dtypes, and of the
wrong size, against torch: torch's CPU mixed-dtype rule (float32 parameters beside a bfloat16 or
float16 input, else one dtype), its errors in its order, and instance norm's running
statistics taken in the input's dtype."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, error_of

D, F32, B = "float64", "float32", "bfloat16"

# input dtype, (running_mean/var dtype or None), (weight dtype or None), (bias dtype or None),
# training
BATCH_CASES = [
    (D, None, F32, None, True), (D, None, None, F32, True), (F32, None, D, D, True),
    (D, F32, None, None, True), (D, F32, None, None, False), (D, F32, D, D, False),
    (D, D, F32, None, False), (B, None, F32, F32, True), (B, F32, F32, F32, True),
    (B, F32, None, None, True), (B, None, B, B, True), (B, None, F32, B, True),
    (F32, None, F32, B, True), (F32, F32, F32, F32, False), (D, D, D, D, True),
]


def tensor(lib, array, dtype):
    return None if dtype is None else lib.tensor(array).to(getattr(lib, dtype))


def batch_norm_call(lib, case, rng_seed=0):
    x_dtype, stats, w_dtype, b_dtype, training = case
    rng = np.random.default_rng(rng_seed)
    x = tensor(lib, rng.standard_normal((2, 4, 3)), x_dtype)
    mean = tensor(lib, rng.standard_normal(4) * 0.1, stats)
    var = tensor(lib, rng.random(4) + 0.5, stats)
    weight = tensor(lib, rng.standard_normal(4), w_dtype)
    bias = tensor(lib, rng.standard_normal(4), b_dtype)
    out = lib.nn.functional.batch_norm(x, mean, var, weight, bias, training=training)
    return out, mean, var


@pytest.mark.parametrize("case", BATCH_CASES, ids=[
    "-".join(str(c) for c in case) for case in BATCH_CASES])
def test_batch_norm_mixed_dtypes_as_torch(case):
    results = [error_of(lambda: batch_norm_call(lib, case)) for lib in (hookgrad, torch)]
    assert results[0] == results[1]
    if results[1] is None:
        (h_out, h_mean, _), (t_out, t_mean, _) = (batch_norm_call(lib, case)
                                                  for lib in (hookgrad, torch))
        assert str(h_out.dtype) == str(t_out.dtype)
        loose = B in case[:4]
        assert_close(h_out.float(), t_out.float(), rtol=2e-2 if loose else 1e-6,
                     atol=2e-2 if loose else 1e-6)
        if h_mean is not None:
            assert_close(h_mean.float(), t_mean.float(), rtol=1e-2 if loose else 1e-6,
                         atol=1e-2 if loose else 1e-7)


@pytest.mark.parametrize("sizes", [(5, 5, 5, 5), (4, 5, 4, 5), (None, None, 4, 5),
                                   (None, None, 5, 4), (4, 4, 5, None), (None, None, (2, 2), 4)],
                         ids=str)
def test_batch_norm_size_checks_in_torchs_order(sizes):
    def call(lib):
        x = lib.randn(2, 4, 3)
        mean, var, weight, bias = (None if s is None else lib.ones(s) for s in sizes)
        return lib.nn.functional.batch_norm(x, mean, var, weight, bias, training=True)
    assert error_of(lambda: call(hookgrad)) == error_of(lambda: call(torch))


@pytest.mark.parametrize("use_input_stats", [True, False])
@pytest.mark.parametrize("dtypes", [(D, F32), (F32, D), (B, F32), (F32, B), (B, D)], ids=str)
def test_instance_norm_running_statistics_of_another_dtype(dtypes, use_input_stats):
    x_dtype, stats_dtype = dtypes
    results = []
    for lib in (hookgrad, torch):
        rng = np.random.default_rng(3)
        x = tensor(lib, rng.standard_normal((2, 4, 3)), x_dtype)
        mean = tensor(lib, rng.random(4), stats_dtype)
        var = tensor(lib, rng.random(4) + 0.5, stats_dtype)
        out = lib.nn.functional.instance_norm(x, mean, var, use_input_stats=use_input_stats)
        results.append((out, mean, var))
    loose = B in dtypes
    tolerance = dict(rtol=2e-2, atol=2e-2) if loose else dict(rtol=1e-6, atol=1e-6)
    for h, t in zip(*results):
        assert str(h.dtype) == str(t.dtype)
        assert_close(h.float(), t.float(), **tolerance)


@pytest.mark.parametrize("dtypes", [(D, F32), (F32, D), (B, B)], ids=str)
def test_instance_norm_affine_dtypes_as_torch(dtypes):
    def call(lib):
        x = lib.randn(2, 4, 3).to(getattr(lib, dtypes[0]))
        weight = lib.ones(4).to(getattr(lib, dtypes[1]))
        return lib.nn.functional.instance_norm(x, weight=weight, bias=weight)
    assert error_of(lambda: call(hookgrad)) == error_of(lambda: call(torch))
