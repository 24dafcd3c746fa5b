"""nextafter (function, method, in place) against torch: values one ulp away in every float
dtype, promotion, broadcasting, errors, and torch's gradient (grad for self where it differs
from other, zero for other) with its node and saved tensors."""
import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, assert_same_error, compare, grad_fn_chain, saved_log

R = np.random.default_rng(5)


def _edge_values(dtype):
    info = np.finfo(np.float32 if dtype == "bfloat16" else dtype)
    return np.array([0.0, -0.0, 1.0, -1.0, info.max, info.tiny, np.inf, -np.inf, np.nan, 3.5])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_steps_one_unit_in_each_dtype(dtype):
    a = _edge_values(dtype)
    toward = np.array([1.0, 1.0, 2.0, -2.0, np.inf, 0.0, 0.0, 1.0, 1.0, 3.5])
    results = [lib.nextafter(lib.tensor(a).to(getattr(lib, dtype)),
                             lib.tensor(toward).to(getattr(lib, dtype)))
               for lib in (hookgrad, torch)]
    assert str(results[0].dtype) == str(results[1].dtype)
    assert_close(results[0].float(), results[1].float(), rtol=0, atol=0)


def test_smallest_subnormal_from_zero():
    results = [lib.nextafter(lib.zeros(1), lib.ones(1)).item() for lib in (hookgrad, torch)]
    assert results[0] == results[1] > 0


@pytest.mark.parametrize("dtypes", [("float16", "float32"), ("float32", "float64"),
                                    ("float64", "float32")])
def test_promotes_and_broadcasts(dtypes):
    a, b = R.standard_normal((3, 1)), R.standard_normal((4,))
    results = [lib.nextafter(lib.tensor(a).to(getattr(lib, dtypes[0])),
                             lib.tensor(b).to(getattr(lib, dtypes[1])))
               for lib in (hookgrad, torch)]
    assert str(results[0].dtype) == str(results[1].dtype)
    assert_close(results[0], results[1], rtol=0, atol=0)


def test_method_and_in_place_keep_self_dtype():
    a, b = R.standard_normal(5), R.standard_normal(5)
    for lib in (hookgrad, torch):
        x = lib.tensor(a, dtype=lib.float32)
        assert x.nextafter_(lib.tensor(b)) is x  # computed in float64, stored in float32
    compare(lambda lib, x, y: x.nextafter(y), a, b, grad=False)
    compare(lambda lib, x, y: x.to(lib.float32).nextafter_(y), a, b, grad=False)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nextafter(lib.tensor([1, 2]), lib.tensor([3, 0])),
    lambda lib: lib.nextafter(lib.tensor([1.0]), 2.0),
    lambda lib: lib.nextafter(lib.ones(2), lib.ones(3)),
    lambda lib: lib.ones(2).nextafter_(lib.ones(2, 2)),
])
def test_errors_match(call):
    assert_same_error(call)


def test_gradient_passes_where_self_differs_from_other():
    a = np.array([1.0, 2.0, np.nan, 3.0, -0.0])
    b = np.array([2.0, 0.0, 1.0, 3.0, 0.0])
    compare(lambda lib, x, y: lib.nextafter(x, y), a, b)
    grads = []
    for lib in (hookgrad, torch):
        x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        weight = lib.tensor(R.standard_normal(5) if lib is hookgrad else grads[0][2],
                            requires_grad=True)
        gx, gy = lib.autograd.grad(lib.nextafter(x, y), (x, y), weight, create_graph=True)
        grads.append((gx, gy, weight.detach().numpy()))
        assert gx.grad_fn.name() == "WhereBackward0" and gy.grad_fn is None
    assert_close(grads[0][0], grads[1][0], rtol=0, atol=0)
    assert_close(grads[0][1], grads[1][1], rtol=0, atol=0)


def test_node_and_saved_tensors():
    a, b = R.standard_normal(3), R.standard_normal(())
    for lib in (hookgrad, torch):
        x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        out = lib.nextafter(x, y)
        assert grad_fn_chain(out) == ["NextafterBackward0"]
        assert out.grad_fn._saved_self is not None and out.grad_fn._saved_other is not None
    logs = [saved_log(lib, lib.nextafter, lib.tensor(a, requires_grad=True), lib.tensor(b))
            for lib in (hookgrad, torch)]
    assert sorted(logs[0]) == sorted(logs[1])
