"""Per-op result dtypes (and values) under CPU autocast, compared with torch's: every case of
``_autocast_table`` with float32 inputs, inputs already in the autocast dtype, and mixed
inputs, in bfloat16 and float16 autocast."""
import warnings

import numpy as np
import pytest
import torch

import hookgrad

from _autocast_table import CASES

_DTYPES = {"bfloat16": (hookgrad.bfloat16, torch.bfloat16),
           "float16": (hookgrad.float16, torch.float16)}
_INPUTS = ("float32", "low", "mixed")

# differences that are not autocast's: the same inputs differ from torch without autocast too
# (hookgrad ops with no bfloat16/float16 kernel, or other rules for mixed dtypes)
_OUTSIDE_AUTOCAST = {
    ("affine_grid", "low"): "affine_grid of a half-precision theta gives float32",
    ("affine_grid", "float32"): "affine_grid of a half-precision theta gives float32",
    ("bilinear", "low"): "bilinear has no bfloat16 (einsum refuses it)",
    ("einsum_implicit_outer", "mixed"): "hookgrad's einsum refuses mixed dtypes",
    ("histc", "low"): "bfloat16 bin edges round differently",
    ("linalg.matrix_exp", "low"): "torch's half-precision matrix_exp is wrong on this CPU "
                                  "(1e30 for a small bfloat16 matrix); hookgrad's is float32's",
    ("matrix_exp", "low"): "torch's half-precision matrix_exp is wrong on this CPU; hookgrad "
                           "computes it in float32",
    ("pdist", "low"): "torch has no half-precision pdist; hookgrad's error differs",
}
# torch runs part of bilinear's contraction in the autocast dtype and gives float32; hookgrad
# computes it all in float32: the dtype matches, the values only to the low dtype's precision
_LOW_PRECISION_VALUES = {"bilinear"}


def _outcome(lib, fn, shapes, kinds, autocast_dtype):
    rng = np.random.default_rng(0)
    tensors = [lib.tensor(rng.standard_normal(s).astype(np.float32)) for s in shapes]
    tensors = [t if kind == "float32" else t.to(autocast_dtype)
               for t, kind in zip(tensors, kinds)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with lib.autocast("cpu", dtype=autocast_dtype):
                out = fn(lib, *tensors)
        except Exception as error:  # the same exception type is expected
            return type(error).__name__, None
    out = out[0] if isinstance(out, (tuple, list)) else out
    return str(out.dtype), out.detach().float().numpy()


def _kinds(inputs, count):
    if inputs == "float32":
        return ["float32"] * count
    if inputs == "low":
        return ["low"] * count
    return ["low"] + ["float32"] * (count - 1)


def _cases():
    """(name, inputs, dtype) for every case that exists (a one-input op has no mixed inputs);
    a difference that is not autocast's is a strict xfail, so that a fix shows."""
    for name in sorted(CASES):
        for inputs in _INPUTS:
            if inputs == "mixed" and len(CASES[name][1]) == 1:
                continue
            for dtype_name in sorted(_DTYPES):
                reason = _OUTSIDE_AUTOCAST.get((name, inputs))
                marks = [] if reason is None or (name, inputs, dtype_name) in _SAME_AS_TORCH \
                    else [pytest.mark.xfail(strict=True, reason=reason)]
                yield pytest.param(name, inputs, dtype_name, marks=marks,
                                   id=f"{name}-{inputs}-{dtype_name}")


# cases of _OUTSIDE_AUTOCAST that agree with torch for one of the two dtypes
_SAME_AS_TORCH = {("affine_grid", "float32", "float16"), ("affine_grid", "low", "float16"),
                  ("bilinear", "low", "float16"), ("histc", "low", "float16")}


@pytest.mark.parametrize("name, inputs, dtype_name", list(_cases()))
def test_result_dtype_and_value_match_torch(name, inputs, dtype_name):
    fn, shapes = CASES[name]
    ours_dtype, theirs_dtype = _DTYPES[dtype_name]
    kinds = _kinds(inputs, len(shapes))
    ours, ours_value = _outcome(hookgrad, fn, shapes, kinds, ours_dtype)
    theirs, theirs_value = _outcome(torch, fn, shapes, kinds, theirs_dtype)
    assert ours == theirs
    if theirs_value is not None:
        low = (theirs != "torch.float32" or inputs != "float32"
               or name in _LOW_PRECISION_VALUES)
        tolerance = 5e-2 if low else 1e-4
        np.testing.assert_allclose(ours_value, theirs_value, rtol=tolerance,
                                   atol=tolerance * max(1.0, np.abs(theirs_value).max()))
