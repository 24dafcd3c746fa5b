"""Type promotion against torch.result_type: tensors of every dtype, 0-dim tensors, Python
numbers and NumPy scalars on either side of every binary operator."""
from __future__ import annotations

import operator

import numpy as np
import pytest
import torch
from conftest import assert_close
from hypothesis import given, settings
from hypothesis import strategies as st

import hookgrad

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
KINDS = ["dim", "zero_dim", "python", "numpy"]
NUMPY = {"bool": np.bool_, "uint8": np.uint8, "int8": np.int8, "int16": np.int16,
         "int32": np.int32, "int64": np.int64, "float16": np.float16, "float32": np.float32,
         "float64": np.float64}


def _value(dtype: str):
    return True if dtype == "bool" else (2.5 if dtype.startswith("float") else 3)


def operand(lib, dtype: str, kind: str):
    """One operand of the given kind, holding a value every operator accepts."""
    value = _value(dtype)
    if kind == "python":
        return {"bool": True, "int64": 3, "float64": 2.5}.get(dtype, value)
    if kind == "numpy":
        return NUMPY[dtype](value)
    shape = (2,) if kind == "dim" else ()
    return lib.full(shape, value, dtype=getattr(lib, dtype))


def _outcome(fn):
    """dtype name and values, or the exception type."""
    try:
        result = fn()
    except (RuntimeError, TypeError, NotImplementedError) as error:
        return type(error).__name__
    if isinstance(result, (hookgrad.Tensor, torch.Tensor)):
        return str(result.dtype).replace("torch.", ""), np.asarray(result.tolist()).tolist()
    return type(result).__name__, result


def assert_same(actual, expected):
    """Same exception type, or same dtype and values (floats to a few ulp: libm pow differs)."""
    if isinstance(expected, str) or isinstance(actual, str):
        assert actual == expected
        return
    assert actual[0] == expected[0]
    rtol = {"float16": 1e-3, "float32": 1e-6}.get(expected[0], 1e-12)
    np.testing.assert_allclose(np.asarray(actual[1], dtype=float),
                               np.asarray(expected[1], dtype=float), rtol=rtol)


BINARY = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul,
    "truediv": operator.truediv, "floordiv": operator.floordiv, "mod": operator.mod,
    "pow": operator.pow, "eq": operator.eq, "lt": operator.lt, "ge": operator.ge,
    "and": operator.and_, "or": operator.or_, "xor": operator.xor,
}


@given(st.sampled_from(DTYPES), st.sampled_from(KINDS), st.sampled_from(DTYPES),
       st.sampled_from(KINDS), st.sampled_from(sorted(BINARY)))
@settings(max_examples=400, deadline=None)
def test_operator_result_matches_torch(dtype_a, kind_a, dtype_b, kind_b, op):
    if kind_a in ("python", "numpy") and kind_b in ("python", "numpy"):
        return  # not a tensor operation
    fn = BINARY[op]
    expected = _outcome(lambda: fn(operand(torch, dtype_a, kind_a),
                                   operand(torch, dtype_b, kind_b)))
    actual = _outcome(lambda: fn(operand(hookgrad, dtype_a, kind_a),
                                 operand(hookgrad, dtype_b, kind_b)))
    assert_same(actual, expected)


FUNCTIONS = {
    "maximum": lambda L, a, b: L.maximum(a, b),
    "where": lambda L, a, b: L.where(L.tensor([True, False]), a, b),
    "add_alpha": lambda L, a, b: L.add(a, b, alpha=2),
    "div_floor": lambda L, a, b: L.div(a, b, rounding_mode="floor"),
    "div_trunc": lambda L, a, b: L.div(a, b, rounding_mode="trunc"),
    "clamp": lambda L, a, b: L.clamp(a, min=b),
    "result_type": lambda L, a, b: L.result_type(a, b),
}


@given(st.sampled_from(DTYPES), st.sampled_from(["dim", "zero_dim"]), st.sampled_from(DTYPES),
       st.sampled_from(KINDS), st.sampled_from(sorted(FUNCTIONS)))
@settings(max_examples=300, deadline=None)
def test_function_result_matches_torch(dtype_a, kind_a, dtype_b, kind_b, name):
    fn = FUNCTIONS[name]
    expected = _outcome(lambda: fn(torch, operand(torch, dtype_a, kind_a),
                                   operand(torch, dtype_b, kind_b)))
    actual = _outcome(lambda: fn(hookgrad, operand(hookgrad, dtype_a, kind_a),
                                 operand(hookgrad, dtype_b, kind_b)))
    if name == "result_type":
        expected, actual = str(expected[1]), str(actual[1])
    assert_same(actual, expected)


@pytest.mark.parametrize("a", DTYPES)
def test_promote_types_matches_torch_for_every_pair(a):
    for b in DTYPES:
        actual = hookgrad.promote_types(getattr(hookgrad, a), getattr(hookgrad, b))
        expected = torch.promote_types(getattr(torch, a), getattr(torch, b))
        assert repr(actual) == repr(expected), (a, b)


@pytest.mark.parametrize("a", DTYPES)
def test_can_cast_matches_torch_for_every_pair(a):
    for b in DTYPES:
        actual = hookgrad.can_cast(getattr(hookgrad, a), getattr(hookgrad, b))
        assert actual == torch.can_cast(getattr(torch, a), getattr(torch, b)), (a, b)


EXAMPLES = [
    "L.tensor([1, 2]) * 2.5",
    "L.tensor([1., 2.]) + L.tensor(2., dtype=L.float64)",
    "L.tensor([1, 2], dtype=L.int32) + L.tensor([1, 2])",
    "L.tensor([1, 2], dtype=L.int32) + L.tensor(2)",
    "L.tensor([1, 2]) + L.tensor(2.5, dtype=L.float64)",
    "L.tensor([True, False]) + L.tensor([True, True])",
    "L.tensor([True, False]) * L.tensor([True, True])",
    "L.tensor([True, False]) + 1",
    "L.tensor([True, False]) / L.tensor([True, True])",
    "L.tensor([1, 2]) / 2",
    "L.tensor([1, 2]) / L.tensor([2, 2])",
    "L.tensor([5, 7]) // 2",
    "L.tensor([5, 7], dtype=L.uint8) + 300",
    "L.tensor([5, 7], dtype=L.uint8) - 6",
    "L.tensor([5], dtype=L.int8) + L.tensor([5], dtype=L.uint8)",
    "L.tensor([1., 2.], dtype=L.float16) * 2.5",
    "L.tensor([1, 2]) ** 2",
    "2 ** L.tensor([1, 2])",
    "2.5 ** L.tensor([1, 2])",
    "L.tensor([1, 2]) ** 0.5",
    "L.tensor([1, 2]) == 1",
    "L.tensor([1, 2]) < 1.5",
    "L.tensor([1., 2.]) != L.tensor([1, 3])",
    "L.tensor([3, 2]) > L.tensor(2.5)",
    "L.tensor([1, 2], dtype=L.int32) * 2 ** 40",
    "L.tensor([1, 2]) * (2 ** 63)",
    "L.exp(L.tensor([1, 2]))",
    "L.sqrt(L.tensor([True]))",
    "L.abs(L.tensor([-1, 2], dtype=L.int16))",
    "-L.tensor([1, 2], dtype=L.uint8)",
    "L.square(L.tensor([True]))",
    "L.clamp(L.tensor([1, 2]), 0.5)",
    "L.clamp(L.tensor([1, 2]), 0, 1)",
    "L.where(L.tensor([True, False]), L.tensor([1, 2]), 2.5)",
    "L.where(L.tensor([True, False]), 1, 2.5)",
    "L.tensor([1, 2]).masked_fill(L.tensor([True, False]), 2.5)",
]


@pytest.mark.parametrize("expression", EXAMPLES)
def test_examples_match_torch(expression):
    assert_same(_outcome(lambda: eval(expression, {"L": hookgrad})),
                _outcome(lambda: eval(expression, {"L": torch})))


def test_integer_division_follows_the_default_dtype():
    previous = hookgrad.get_default_dtype()
    hookgrad.set_default_dtype(hookgrad.float64)
    try:
        assert (hookgrad.tensor([1, 2]) / 2).dtype is hookgrad.float64
        assert (hookgrad.tensor([1, 2]) * 2.5).dtype is hookgrad.float64
        assert (hookgrad.tensor([1., 2.], dtype=hookgrad.float32) * 2.5).dtype is hookgrad.float32
    finally:
        hookgrad.set_default_dtype(previous)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "bool"])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "truediv", "lt"])
def test_numpy_scalar_on_either_side_acts_like_a_number(dtype, op):
    fn = BINARY[op]
    number = NUMPY[dtype](_value(dtype))
    for tensor_dtype in ("float32", "int32"):
        for number_first in (False, True):
            def apply(lib, tensor_dtype=tensor_dtype, number_first=number_first):
                tensor = lib.ones(2, dtype=getattr(lib, tensor_dtype))
                return fn(number, tensor) if number_first else fn(tensor, number)

            assert_same(_outcome(lambda: apply(hookgrad)), _outcome(lambda: apply(torch)))


@pytest.mark.parametrize("op", sorted(BINARY))
def test_numpy_array_operand_acts_as_a_tensor_on_either_side(op):
    fn = BINARY[op]
    array = np.array([1, 2, 3], dtype=np.int64)
    tensor = hookgrad.tensor([3.0, 2.0, 1.0])
    if op in ("and", "or", "xor"):
        tensor = hookgrad.tensor([3, 2, 1], dtype=hookgrad.int32)
    left = fn(tensor, array)
    right = fn(array, tensor)
    assert isinstance(left, hookgrad.Tensor) and isinstance(right, hookgrad.Tensor)
    assert_close(left, fn(tensor, hookgrad.as_tensor(array)))
    assert_close(right, fn(hookgrad.as_tensor(array), tensor))


def test_numpy_array_operand_keeps_gradient_flowing():
    x = hookgrad.tensor([1.0, 2.0], requires_grad=True)
    y = (np.array([3.0, 4.0]) * x + x / np.array([2.0, 2.0])).sum()
    y.backward()
    assert x.grad.tolist() == [3.5, 4.5]


@pytest.mark.parametrize("expression", [
    "x.add_(L.tensor([1., 2.], dtype=L.float64))",
    "x.mul_(L.tensor([2, 3]))",
    "x.div_(L.tensor([True, True]))",
    "x.sub_(1)",
])
def test_inplace_keeps_the_dtype_of_self(expression):
    results = []
    for L in (hookgrad, torch):
        x = L.tensor([1.5, 2.5], dtype=L.float32)
        eval(expression)
        results.append((str(x.dtype), x.tolist()))
    assert results[0] == results[1]


@pytest.mark.parametrize("expression", [
    "L.tensor([1, 2]).add_(2.5)", "L.tensor([1, 2]).mul_(L.tensor([1., 2.]))",
    "L.tensor([1, 2]).div_(2)", "L.tensor([True]).add_(1)",
    "L.tensor([1], dtype=L.int8).add_(L.tensor([1], dtype=L.float16))",
])
def test_inplace_refuses_a_lower_category_like_torch(expression):
    messages = []
    for L in (hookgrad, torch):
        with pytest.raises(RuntimeError) as info:
            eval(expression)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
