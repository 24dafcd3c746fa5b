"""``repr`` and ``str`` of tensors are character-identical to torch's, for tensors built from the
same NumPy data in both libraries."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad

_rng = np.random.default_rng(2024)


def _normal(shape, dtype=np.float32, scale=1.0):
    return (_rng.standard_normal(shape) * scale).astype(dtype)


CASES = {
    # 0-d
    "scalar_float": np.array(3.0, np.float32),
    "scalar_fraction": np.array(7.38905, np.float32),
    "scalar_zero": np.array(0.0, np.float32),
    "scalar_negative_zero": np.array(-0.0, np.float32),
    "scalar_int": np.array(7),
    "scalar_bool": np.array(True),
    "scalar_tiny": np.array(1e-5),
    "scalar_nan": np.array(np.nan, np.float32),
    "scalar_big": np.array(123456789.0, np.float32),
    # 1-d floats: int mode, fixed point, scientific
    "int_valued": np.array([1.0, 2.0, 3.0], np.float32),
    "int_valued_negative": np.array([-1.0, 20.0, 300.0], np.float32),
    "fixed": np.array([1.5, -2.25, 3.0], np.float32),
    "fixed_small": np.array([0.1, 0.2], np.float32),
    "sci_small": np.array([1e-5, 1.0], np.float32),
    "sci_large": np.array([1e9, 1.0], np.float32),
    "sci_ratio": np.array([1001.0, 1.0], np.float32),
    "not_sci_ratio": np.array([1000.0, 1.0], np.float32),
    "not_sci_1e8": np.array([1e8, 1.0], np.float32),
    "sci_mixed_sign": np.array([1e20, -1e-20]),
    "sci_int_valued": np.array([1e10, 3.0]),
    "inf_nan": np.array([np.inf, -np.inf, np.nan, 1.0], np.float32),
    "nan_and_zero": np.array([np.nan, 0.0], np.float32),
    "inf_and_fraction": np.array([np.inf, 1.5], np.float32),
    "negative_zero": np.array([-0.0, 0.0, 1.0], np.float32),
    "negative_zero_fixed": np.array([-0.5, -0.0], np.float32),
    "all_zero": np.array([0.0, 0.0], np.float32),
    "rounding_to_width": np.array([99999.5, 1.0], np.float32),
    "precision_edge": np.array([1.00005, 1.0], np.float32),
    "near_threshold": np.array([0.00015, 1.0], np.float32),
    # dtypes and their suffixes
    "int64": np.array([1, -2, 300]),
    "int32": np.array([1, 2], np.int32),
    "int16": np.array([1, -2], np.int16),
    "int8": np.array([1, 2], np.int8),
    "uint8": np.array([1, 255], np.uint8),
    "bool": np.array([True, False]),
    "bool_2d": np.array([[True, False], [False, True]]),
    "float64": np.array([1.5, 2.0]),
    "float64_fraction": np.array([123.456, 0.001]),
    "float16": np.array([1.5, 2.0], np.float16),
    "float16_max": np.array([65504.0, 1.0], np.float16),
    "big_int": np.array([2 ** 40, -5]),
    # more dimensions
    "matrix": _normal((3, 4)),
    "matrix_sci": _normal((3, 4), scale=1e5),
    "matrix_tiny": np.array([[1e-10, 1.0], [2.0, 3.0]], np.float32),
    "tensor_3d": _normal((2, 3, 4)),
    "tensor_4d": _normal((2, 2, 2, 2), np.float64),
    "tensor_4d_wide": _normal((5, 4, 3, 2)),
    "int_matrix": _rng.integers(-100, 100, (4, 5)),
    "column": _normal((7, 1)),
    "nested_single": _normal((1, 1, 7)),
    # wrapping at 80 columns and summarization
    "wraps": _normal(30),
    "wraps_wide": _normal(100, scale=1000.0),
    "wraps_ints": np.arange(50),
    "wraps_rows": _normal((10, 200)),
    "exactly_threshold": np.arange(1000.0).reshape(10, 100),
    "summarized_1d": np.arange(2000),
    "summarized_1001": np.arange(1001),
    "summarized_float": _normal(1001, np.float64),
    "summarized_2d": np.arange(2000.0).reshape(40, 50),
    "summarized_half": _normal((3, 400), np.float16),
    "summarized_3d": _normal((12, 10, 10)),
    # empty tensors
    "empty": np.zeros(0, np.float32),
    "empty_2d": np.zeros((0, 3), np.float32),
    "empty_int": np.zeros(0, np.int64),
    "empty_bool_2d": np.zeros((2, 0), np.bool_),
    "empty_float64": np.zeros(0, np.float64),
    "empty_3d_int32": np.zeros((1, 0, 2), np.int32),
}
FLOAT_CASES = [name for name, array in CASES.items() if array.dtype.kind == "f"]


def _pair(array: np.ndarray, requires_grad: bool = False):
    return (hookgrad.tensor(array, requires_grad=requires_grad),
            torch.tensor(array, requires_grad=requires_grad))


@pytest.mark.parametrize("name", sorted(CASES))
def test_repr_matches_torch(name):
    ours, theirs = _pair(CASES[name])
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("name", ["fixed", "matrix", "int64", "bool", "empty_2d", "scalar_nan"])
def test_str_matches_torch(name):
    ours, theirs = _pair(CASES[name])
    assert str(ours) == str(theirs)


@pytest.mark.parametrize("name", FLOAT_CASES)
def test_requires_grad_suffix_matches_torch(name):
    ours, theirs = _pair(CASES[name], requires_grad=True)
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("name", FLOAT_CASES)
def test_grad_fn_suffix_matches_torch(name):
    ours, theirs = _pair(CASES[name], requires_grad=True)
    assert repr(ours * 2) == repr(theirs * 2)


@pytest.mark.parametrize("length", range(1, 16))
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_suffix_moves_to_a_new_line_past_80_columns(length, dtype):
    array = (_rng.standard_normal(length) * 1e4).astype(dtype)
    for requires_grad in ([False, True] if array.dtype.kind == "f" else [False]):
        ours, theirs = _pair(array, requires_grad)
        assert repr(ours) == repr(theirs)
        if requires_grad:
            assert repr(ours.sum(0, keepdim=True) * ours) == repr(
                theirs.sum(0, keepdim=True) * theirs)


@pytest.mark.parametrize("options", [
    {"precision": 2}, {"precision": 6}, {"sci_mode": True}, {"sci_mode": False},
    {"threshold": 5}, {"threshold": 5, "edgeitems": 1}, {"linewidth": 40}, {"profile": "short"},
    {"threshold": 5, "edgeitems": 0},
], ids=str)
@pytest.mark.parametrize("name", ["fixed", "matrix", "sci_small", "wraps", "int_matrix",
                                  "tensor_3d", "wraps_ints", "inf_nan"])
def test_print_options_match_torch(options, name):
    ours, theirs = _pair(CASES[name])
    with hookgrad.printoptions(**options), torch._tensor_str.printoptions(**options):
        assert repr(ours) == repr(theirs)


def test_print_options_are_restored_after_the_block():
    before = hookgrad.get_printoptions()
    with hookgrad.printoptions(precision=1, linewidth=20):
        assert hookgrad.get_printoptions()["precision"] == 1
    assert hookgrad.get_printoptions() == before


def test_default_dtype_changes_the_suffix_like_torch():
    ours_previous, theirs_previous = hookgrad.get_default_dtype(), torch.get_default_dtype()
    hookgrad.set_default_dtype(hookgrad.float64)
    torch.set_default_dtype(torch.float64)
    try:
        for array in (np.array([1.5, 2.0]), np.array([1.5], np.float32), np.zeros(0)):
            ours, theirs = _pair(array)
            assert repr(ours) == repr(theirs)
    finally:
        hookgrad.set_default_dtype(ours_previous)
        torch.set_default_dtype(theirs_previous)


def test_custom_function_grad_fn_name_matches_torch():
    reprs = []
    for lib in (hookgrad, torch):
        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                return grad * 2

        reprs.append(repr(Double.apply(lib.tensor([1.0, 2.0], requires_grad=True))))
    assert reprs[0] == reprs[1]


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (0,), (1, 0, 4)])
def test_size_repr_matches_torch(shape):
    ours, theirs = hookgrad.zeros(shape), torch.zeros(shape)
    assert repr(ours.shape) == repr(theirs.shape)
    assert str(ours.size()) == str(theirs.size())


def test_format_of_a_0_dim_tensor_uses_the_number():
    assert f"{hookgrad.tensor(2.5):.2f}" == f"{torch.tensor(2.5):.2f}"
    assert f"{hookgrad.tensor([1.0, 2.0])}" == f"{torch.tensor([1.0, 2.0])}"
