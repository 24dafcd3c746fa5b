"""Elementwise ops against torch: values, dtypes, gradients, double backward, grad_fn names,
next_functions, what pack hooks see, and half precision. One table drives most tests."""
from __future__ import annotations

import math
import types

import numpy as np
import pytest
import torch
from conftest import assert_close, compare, saved_log

import hookgrad
import hookgrad.ops.activation as hg_activation
import hookgrad.ops.comparison as hg_comparison
import hookgrad.ops.pointwise as hg_pointwise

hg_functional = types.SimpleNamespace(**{**vars(hg_comparison), **vars(hg_pointwise),
                                         **vars(hg_activation)})


def F(lib):
    """torch.nn.functional, or the same functions in hookgrad's pointwise and activation ops."""
    return torch.nn.functional if lib is torch else hg_functional


def _data(domain: str, shape: tuple, rng) -> np.ndarray:
    if domain == "any":
        return rng.standard_normal(shape)
    if domain == "pos":
        return rng.uniform(0.5, 2.0, shape)
    if domain == "unit":
        return rng.uniform(-0.9, 0.9, shape)
    if domain == "wide":  # crosses softplus thresholds and erf's branches
        return rng.uniform(-7.0, 7.0, shape)
    if domain == "frac":  # away from integers and halves, so rounding is stable
        return rng.integers(-4, 4, shape) + rng.choice([0.1, 0.3, 0.7, 0.9], shape)
    raise ValueError(domain)


A = ("any", (3, 4))
P = ("pos", (3, 4))
ROW = ("any", (4,))
ROWP = ("pos", (4,))
SCALAR = ("any", ())

# name, fn(lib, *tensors), input specs
OPS = [
    ("add", lambda L, a, b: a + b, [A, A]),
    ("add_broadcast", lambda L, a, b: a + b, [A, ROW]),
    ("add_alpha", lambda L, a, b: L.add(a, b, alpha=2.5), [A, ROW]),
    ("add_number", lambda L, a: a + 2, [A]),
    ("radd_number", lambda L, a: 2.5 + a, [A]),
    ("add_0dim", lambda L, a, b: a + b, [A, SCALAR]),
    ("sub", lambda L, a, b: a - b, [A, A]),
    ("sub_alpha", lambda L, a, b: L.sub(a, b, alpha=3), [A, ROW]),
    ("sub_number", lambda L, a: a - 1.5, [A]),
    ("rsub_number", lambda L, a: 2 - a, [A]),
    ("rsub_tensor", lambda L, a, b: L.rsub(a, b, alpha=2), [A, ROW]),
    ("mul", lambda L, a, b: a * b, [A, A]),
    ("mul_broadcast", lambda L, a, b: a * b, [("any", (3, 1)), ROW]),
    ("mul_number", lambda L, a: a * 1.5, [A]),
    ("rmul_number", lambda L, a: 3 * a, [A]),
    ("mul_self", lambda L, a: a * a, [A]),
    ("div", lambda L, a, b: a / b, [A, P]),
    ("div_broadcast", lambda L, a, b: a / b, [A, ROWP]),
    ("div_number", lambda L, a: a / 3, [A]),
    ("rdiv_number", lambda L, a: 2 / a, [P]),
    ("div_floor", lambda L, a, b: L.div(a, b, rounding_mode="floor"), [A, P]),
    ("div_trunc", lambda L, a, b: L.div(a, b, rounding_mode="trunc"), [A, P]),
    ("div_floor_number", lambda L, a: L.div(a, 0.7, rounding_mode="floor"), [A]),
    ("remainder", lambda L, a, b: L.remainder(a, b), [A, P]),
    ("remainder_number", lambda L, a: a % 0.7, [A]),
    ("neg", lambda L, a: -a, [A]),
    ("pow_2", lambda L, a: a ** 2, [A]),
    ("pow_3", lambda L, a: a.pow(3), [A]),
    ("pow_half", lambda L, a: a ** 0.5, [P]),
    ("pow_negative", lambda L, a: a ** -1.5, [P]),
    ("pow_0", lambda L, a: a ** 0, [A]),
    ("pow_tensor", lambda L, a, b: a ** b, [P, A]),
    ("pow_tensor_broadcast", lambda L, a, b: L.pow(a, b), [P, ROW]),
    ("pow_0dim_exponent", lambda L, a, b: a ** b, [P, SCALAR]),
    ("rpow_number", lambda L, a: 2 ** a, [A]),
    ("rpow_float", lambda L, a: L.pow(2.5, a), [A]),
    ("square", lambda L, a: L.square(a), [A]),
    ("exp", lambda L, a: L.exp(a), [A]),
    ("log", lambda L, a: L.log(a), [P]),
    ("log1p", lambda L, a: L.log1p(a), [("unit", (3, 4))]),
    ("sqrt", lambda L, a: L.sqrt(a), [P]),
    ("rsqrt", lambda L, a: L.rsqrt(a), [P]),
    ("reciprocal", lambda L, a: L.reciprocal(a), [P]),
    ("abs", lambda L, a: L.abs(a), [A]),
    ("sign", lambda L, a: L.sign(a), [A]),
    ("sin", lambda L, a: L.sin(a), [A]),
    ("cos", lambda L, a: L.cos(a), [A]),
    ("tanh", lambda L, a: L.tanh(a), [A]),
    ("sigmoid", lambda L, a: L.sigmoid(a), [("wide", (3, 4))]),
    ("relu", lambda L, a: L.relu(a), [A]),
    ("erf", lambda L, a: L.erf(a), [("wide", (3, 4))]),
    ("gelu", lambda L, a: F(L).gelu(a), [("wide", (3, 4))]),
    ("gelu_tanh", lambda L, a: F(L).gelu(a, approximate="tanh"), [("wide", (3, 4))]),
    ("silu", lambda L, a: F(L).silu(a), [("wide", (3, 4))]),
    ("softplus", lambda L, a: F(L).softplus(a), [("wide", (3, 4))]),
    ("softplus_beta", lambda L, a: F(L).softplus(a, beta=2.0, threshold=3.0), [("wide", (3, 4))]),
    ("leaky_relu", lambda L, a: F(L).leaky_relu(a), [A]),
    ("leaky_relu_slope", lambda L, a: F(L).leaky_relu(a, 0.2), [A]),
    ("elu", lambda L, a: F(L).elu(a), [A]),
    ("elu_alpha", lambda L, a: F(L).elu(a, alpha=0.5), [A]),
    ("clamp", lambda L, a: L.clamp(a, -0.5, 0.5), [A]),
    ("clamp_min_only", lambda L, a: a.clamp(min=-0.2), [A]),
    ("clamp_max_only", lambda L, a: a.clamp(max=0.3), [A]),
    ("clamp_min", lambda L, a: L.clamp_min(a, -0.2), [A]),
    ("clamp_max", lambda L, a: L.clamp_max(a, 0.3), [A]),
    ("clamp_tensors", lambda L, a, b, c: L.clamp(a, b, c + 1), [A, A, ROW]),
    ("clamp_tensor_min", lambda L, a, b: L.clamp(a, min=b), [A, ROW]),
    ("clamp_tensor_max", lambda L, a, b: a.clamp(max=b), [A, A]),
    ("clamp_min_tensor", lambda L, a, b: L.clamp_min(a, b), [A, ROW]),
    ("maximum", lambda L, a, b: L.maximum(a, b), [A, A]),
    ("maximum_broadcast", lambda L, a, b: L.maximum(a, b), [A, ROW]),
    ("minimum", lambda L, a, b: L.minimum(a, b), [A, ROW]),
    ("where", lambda L, a, b: L.where(a > b, a, b), [A, A]),
    ("where_broadcast", lambda L, a, b: L.where(a > 0, a, b), [A, ROW]),
    ("where_number_other", lambda L, a: L.where(a > 0, a, 0.0), [A]),
    ("where_number_input", lambda L, a: L.where(a > 0, 1.5, a), [A]),
    ("masked_fill", lambda L, a: a.masked_fill(a > 0, 2.5), [A]),
    ("masked_fill_broadcast_mask", lambda L, a, b: a.masked_fill(b > 0, -1.0), [A, ROW]),
    ("masked_fill_tensor", lambda L, a, v: L.masked_fill(a, a < 0, v), [A, SCALAR]),
    ("floor", lambda L, a: L.floor(a), [("frac", (3, 4))]),
    ("ceil", lambda L, a: L.ceil(a), [("frac", (3, 4))]),
    ("round", lambda L, a: L.round(a), [("frac", (3, 4))]),
    ("round_decimals", lambda L, a: L.round(a, decimals=1), [("any", (3, 4))]),
    ("trunc", lambda L, a: L.trunc(a), [("frac", (3, 4))]),
    ("chain", lambda L, a, b: L.sigmoid(a * b + 1).log() / (b.exp() + 1), [A, ROW]),
]


def _inplace(op):
    """Apply an in-place op to a non-leaf copy of the first input."""
    return lambda L, a, *rest: op(L, a * 1, *rest)


INPLACE = [
    ("add_", _inplace(lambda L, a, b: a.add_(b)), [A, A]),
    ("add_alpha_", _inplace(lambda L, a, b: a.add_(b, alpha=-2)), [A, ROW]),
    ("add_number_", _inplace(lambda L, a: a.add_(3)), [A]),
    ("iadd", _inplace(lambda L, a, b: a.__iadd__(b)), [A, ROW]),
    ("sub_", _inplace(lambda L, a, b: a.sub_(b)), [A, ROW]),
    ("sub_alpha_", _inplace(lambda L, a, b: a.sub_(b, alpha=0.5)), [A, A]),
    ("mul_", _inplace(lambda L, a, b: a.mul_(b)), [A, A]),
    ("mul_broadcast_", _inplace(lambda L, a, b: a.mul_(b)), [A, ROW]),
    ("mul_number_", _inplace(lambda L, a: a.mul_(2.5)), [A]),
    ("imul", _inplace(lambda L, a, b: a.__imul__(b)), [A, A]),
    ("div_", _inplace(lambda L, a, b: a.div_(b)), [A, P]),
    ("div_number_", _inplace(lambda L, a: a.div_(4)), [A]),
    ("itruediv", _inplace(lambda L, a, b: a.__itruediv__(b)), [A, ROWP]),
    ("clamp_", _inplace(lambda L, a: a.clamp_(-0.5, 0.5)), [A]),
    ("clamp_min_only_", _inplace(lambda L, a: a.clamp_(min=0.1)), [A]),
    ("clamp_tensor_", _inplace(lambda L, a, b: a.clamp_(min=b)), [A, ROW]),
    ("relu_", _inplace(lambda L, a: a.relu_()), [A]),
    ("relu_inplace_flag", _inplace(lambda L, a: F(L).relu(a, inplace=True)), [A]),
    ("leaky_relu_inplace", _inplace(lambda L, a: F(L).leaky_relu(a, 0.1, inplace=True)), [A]),
    ("elu_inplace", _inplace(lambda L, a: F(L).elu(a, 0.7, inplace=True)), [A]),
    ("masked_fill_", _inplace(lambda L, a: a.masked_fill_(a > 0.5, 0.25)), [A]),
    ("masked_fill_tensor_", _inplace(lambda L, a, v: a.masked_fill_(a < 0, v)), [A, SCALAR]),
    ("inplace_then_op", _inplace(lambda L, a, b: a.mul_(b).sin()), [A, A]),
]

TABLE = OPS + INPLACE
IDS = [name for name, _, _ in TABLE]
FLOATS = [np.float64, np.float32]


def _arrays(specs, seed: int, dtype=np.float64) -> list:
    rng = np.random.default_rng(seed)
    return [_data(domain, shape, rng).astype(dtype) for domain, shape in specs]


def _seed(name: str) -> int:
    return sum(map(ord, name))


def _run(lib, fn, arrays, requires_grad=True):
    inputs = [lib.tensor(np.array(a, copy=True), requires_grad=requires_grad) for a in arrays]
    return inputs, fn(lib, *inputs)


@pytest.mark.parametrize("dtype", FLOATS, ids=["float64", "float32"])
@pytest.mark.parametrize("name, fn, specs", TABLE, ids=IDS)
def test_values_and_gradients(name, fn, specs, dtype):
    compare(fn, *_arrays(specs, _seed(name), dtype))


@pytest.mark.parametrize("name, fn, specs", TABLE, ids=IDS)
def test_grad_fn_name_and_edges(name, fn, specs):
    arrays = _arrays(specs, _seed(name))
    _, hg_out = _run(hookgrad, fn, arrays)
    _, th_out = _run(torch, fn, arrays)
    assert hg_out.grad_fn.name() == th_out.grad_fn.name()
    assert len(hg_out.grad_fn.next_functions) == len(th_out.grad_fn.next_functions)


@pytest.mark.parametrize("name, fn, specs", TABLE, ids=IDS)
@pytest.mark.parametrize("grad_of", ["all", "first", "last"])
def test_saved_tensors_match_torch(name, fn, specs, grad_of):
    arrays = _arrays(specs, _seed(name))
    logs = []
    for lib in (hookgrad, torch):
        flags = [grad_of == "all" or (grad_of == "first" and i == 0) or
                 (grad_of == "last" and i == len(arrays) - 1) for i in range(len(arrays))]
        inputs = [lib.tensor(a, requires_grad=f) for a, f in zip(arrays, flags)]
        logs.append(saved_log(lib, lambda *t, lib=lib: fn(lib, *t), *inputs))
    assert logs[0] == logs[1]


def _second_order(lib, fn, arrays, weights, grad_output):
    inputs = [lib.tensor(np.array(a, copy=True), requires_grad=True) for a in arrays]
    output = fn(lib, *inputs)
    grads = lib.autograd.grad(output, inputs, lib.tensor(grad_output), create_graph=True,
                              allow_unused=True)
    terms = [(g * lib.tensor(w)).sum() for g, w in zip(grads, weights)
             if g is not None and g.requires_grad]
    if not terms:
        return [np.zeros_like(a) for a in arrays]
    total = terms[0]
    for term in terms[1:]:
        total = total + term
    second = lib.autograd.grad(total, inputs, allow_unused=True)
    return [np.zeros_like(a) if s is None or _is_zero_tensor(s) else s.detach().numpy()
            for a, s in zip(arrays, second)]


def _is_zero_tensor(tensor) -> bool:
    # torch answers some second derivatives (abs, sign) with a symbolic ZeroTensor
    return isinstance(tensor, torch.Tensor) and tensor._is_zerotensor()


@pytest.mark.parametrize("dtype", FLOATS, ids=["float64", "float32"])
@pytest.mark.parametrize("name, fn, specs", TABLE, ids=IDS)
def test_double_backward(name, fn, specs, dtype):
    arrays = _arrays(specs, _seed(name), dtype)
    rng = np.random.default_rng(7)
    with torch.no_grad():
        shape = tuple(fn(torch, *[torch.tensor(a) for a in arrays]).shape)
    grad_output = rng.standard_normal(shape).astype(dtype)
    weights = [rng.standard_normal(a.shape).astype(dtype) for a in arrays]
    expected = _second_order(torch, fn, arrays, weights, grad_output)
    actual = _second_order(hookgrad, fn, arrays, weights, grad_output)
    for a, e in zip(actual, expected):
        assert_close(a, e)


SMOOTH = [entry for entry in TABLE if entry[0] not in {
    "floor", "ceil", "round", "round_decimals", "trunc", "sign", "div_floor", "div_trunc",
    "div_floor_number"}]


@pytest.mark.parametrize("name, fn, specs", SMOOTH, ids=[e[0] for e in SMOOTH])
def test_gradcheck_finite_differences(name, fn, specs):
    inputs = [hookgrad.tensor(a, requires_grad=True) for a in _arrays(specs, _seed(name))]
    assert hookgrad.autograd.gradcheck(lambda *t: fn(hookgrad, *t), inputs)


@pytest.mark.parametrize("name, fn, specs", TABLE, ids=IDS)
def test_float16_values(name, fn, specs):
    arrays = _arrays(specs, _seed(name), np.float16)
    with torch.no_grad():
        expected = fn(torch, *[torch.tensor(a) for a in arrays])
    with hookgrad.no_grad():
        actual = fn(hookgrad, *[hookgrad.tensor(a) for a in arrays])
    assert_close(actual, expected, rtol=4e-3, atol=4e-3)


# ---------------------------------------------------------------------------------------------
# Edge cases at kinks, ties, zeros and boundaries
# ---------------------------------------------------------------------------------------------
TIES = np.array([[1.0, 2.0, -1.0, 0.0], [3.0, -2.0, 0.5, 0.5]])
TIES_OTHER = np.array([[1.0, 0.0, -1.0, 1.0], [3.0, -2.0, 0.25, 0.5]])


@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_extremum_ties_split_the_gradient(op):
    compare(lambda L, a, b: getattr(L, op)(a, b), TIES, TIES_OTHER)


@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_extremum_with_nan_matches_torch(op):
    compare(lambda L, a, b: getattr(L, op)(a, b), np.array([np.nan, 1.0, 2.0]),
            np.array([0.0, np.nan, 2.0]))


BOUNDARY = np.array([-1.0, -0.5, 0.0, 0.5, 1.0, np.nan])


@pytest.mark.parametrize("fn", [
    lambda L, a: L.clamp(a, -0.5, 0.5),
    lambda L, a: L.clamp(a, min=0.5),
    lambda L, a: L.clamp(a, max=-0.5),
    lambda L, a: L.clamp(a, 0.5, -0.5),  # min > max: everything is max
    lambda L, a: L.clamp(a, L.tensor([-0.5] * 6, dtype=L.float64), L.tensor([0.5] * 6,
                                                                           dtype=L.float64)),
    lambda L, a: L.relu(a),
    lambda L, a: L.abs(a),
    lambda L, a: F(L).leaky_relu(a, 0.3),
    lambda L, a: F(L).elu(a),
    lambda L, a: L.sign(a),
], ids=["clamp", "clamp_min", "clamp_max", "clamp_crossed", "clamp_tensors", "relu", "abs",
        "leaky_relu", "elu", "sign"])
def test_gradient_at_kinks_matches_torch(fn):
    compare(fn, BOUNDARY)


def test_clamp_tensor_bounds_crossed_give_max_the_gradient():
    x = np.array([-2.0, 0.0, 2.0, 0.7])
    compare(lambda L, a, low, high: L.clamp(a, low, high), x, np.array([1.0, 1.0, 1.0, 0.5]),
            np.array([0.0, 0.0, 0.0, 1.0]))


@pytest.mark.parametrize("fn", [
    lambda L, a, b: a ** b,
    lambda L, a, b: L.pow(a, 0.0 * b),
    lambda L, a, b: L.pow(0.0, b),
    lambda L, a, b: L.pow(a, 0),
], ids=["tensor", "zero_exponent_tensor", "zero_base_number", "zero_exponent_number"])
def test_pow_at_zero_matches_torch(fn):
    compare(fn, np.array([0.0, 0.0, 0.0, 2.0, -1.5]), np.array([0.0, 2.0, -1.0, 0.0, 2.0]))


def test_division_by_zero_gives_infinities_like_torch():
    compare(lambda L, a, b: a / b, np.array([1.0, -1.0, 0.0]), np.array([0.0, 0.0, 0.0]))


def test_floor_division_of_floats_follows_python_rounding():
    a = np.array([-7.0, 7.0, -7.0, 7.0, 5.5, -0.0, 1.0])
    b = np.array([2.0, 2.0, -2.0, -2.0, 0.5, 3.0, 0.0])
    for mode in ("floor", "trunc"):
        compare(lambda L, x, y, mode=mode: L.div(x, y, rounding_mode=mode), a, b)
    compare(lambda L, x, y: x % y, a, b)


@pytest.mark.parametrize("op", ["floor", "trunc"])
def test_integer_division_rounding_matches_torch(op):
    a = np.array([-7, 7, -7, 7, 0, 9])
    b = np.array([2, 2, -2, -2, 3, -4])
    compare(lambda L, x, y: L.div(x, y, rounding_mode=op), a, b)


def test_integer_remainder_matches_torch():
    compare(lambda L, x, y: x % y, np.array([-7, 7, -7, 7, 0]), np.array([2, 2, -2, -2, 5]))


@pytest.mark.parametrize("expression", ["a // 0", "a % 0",
                                        "L.div(a, 0, rounding_mode='trunc')"])
def test_integer_division_by_zero_raises(expression):
    for L in (hookgrad, torch):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            eval(expression, {"L": L, "a": L.tensor([1, 2])})


def test_softplus_threshold_boundary_matches_torch():
    x = np.array([19.0, 20.0, 20.5, -30.0, 0.0])
    compare(lambda L, a: F(L).softplus(a), x)
    compare(lambda L, a: F(L).softplus(a, beta=2.0, threshold=10.0), x / 4)


def test_erf_is_accurate_to_double_precision():
    x = np.concatenate([np.linspace(-7.0, 7.0, 20001), np.geomspace(1e-300, 1.0, 300),
                        -np.geomspace(1e-300, 1.0, 300), [1.5, -1.5, 6.0, 30.0, 1e300]])
    expected = np.array([math.erf(v) for v in x])
    actual = hookgrad.erf(hookgrad.tensor(x)).numpy()
    assert np.max(np.abs(actual - expected)) <= 1e-15
    assert np.max(np.abs(actual - expected) / np.maximum(np.abs(expected), 1e-300)) <= 1e-15


def test_erf_keeps_special_values():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0])
    compare(lambda L, a: L.erf(a), x, grad=False)
    assert np.signbit(hookgrad.erf(hookgrad.tensor(x)).numpy()[-1])


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_far_tails_match_torch(approximate):
    x = np.array([-40.0, -10.0, -5.5, -1e-8, 0.0, 3.0, 40.0])
    compare(lambda L, a: F(L).gelu(a, approximate=approximate), x)


def test_gelu_rejects_unknown_approximation():
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        F(hookgrad).gelu(hookgrad.ones(2), approximate="erf")


ROUNDING = [lambda L, a: L.floor(a), lambda L, a: L.ceil(a), lambda L, a: L.round(a),
            lambda L, a: L.trunc(a)]


@pytest.mark.parametrize("fn", ROUNDING + [lambda L, a: L.round(a, decimals=2)],
                         ids=["floor", "ceil", "round", "trunc", "round_decimals"])
def test_rounding_has_zero_gradient(fn):
    compare(fn, np.array([-1.5, -0.5, 0.5, 1.5, 2.5, 2.675, -0.2]))


@pytest.mark.parametrize("fn", ROUNDING, ids=["floor", "ceil", "round", "trunc"])
def test_rounding_keeps_integers(fn):
    compare(fn, np.array([-3, 0, 7]))


def test_where_condition_must_be_bool():
    for L in (hookgrad, torch):
        with pytest.raises(RuntimeError, match="where expected condition to be a boolean tensor"):
            L.where(L.tensor([1.0, 0.0]), L.ones(2), 0.0)


def test_where_with_two_numbers_gives_default_float():
    compare(lambda L, c: L.where(c, 1.0, 2), np.array([True, False]))
    compare(lambda L, c: L.where(c, 1, 2), np.array([True, False]))


@pytest.mark.parametrize("mask", [np.array([1, 0, 1]), np.array([1.0, 0.0, 1.0])])
def test_masked_fill_mask_must_be_bool(mask):
    messages = []
    for L in (hookgrad, torch):
        with pytest.raises(RuntimeError) as info:
            L.ones(3).masked_fill(L.tensor(mask), 2.0)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_masked_fill_value_tensor_must_be_0_dim():
    messages = []
    for L in (hookgrad, torch):
        with pytest.raises(RuntimeError) as info:
            L.ones(3).masked_fill(L.tensor([True, False, True]), L.ones(3))
        messages.append(str(info.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("expression", [
    "F(L).gelu(L.ones(2, dtype=L.int64))", "F(L).silu(L.ones(2, dtype=L.int64))",
    "F(L).softplus(L.ones(2, dtype=L.int32))", "F(L).leaky_relu(L.ones(2, dtype=L.int64))",
    "F(L).elu(L.ones(2, dtype=L.int64))", "L.abs(L.ones(2, dtype=L.bool))",
    "-L.ones(2, dtype=L.bool)", "L.ones(2, dtype=L.bool) - L.ones(2, dtype=L.bool)",
    "L.relu(L.ones(2, dtype=L.bool))", "L.ones(2, dtype=L.int64) ** -1",
    "L.clamp(L.ones(2))", "L.ones(2, dtype=L.int64).add_(2.5)",
    "L.ones(2, dtype=L.int64).div_(2)", "L.ones(2, dtype=L.bool).add_(1)",
    "L.ones(3).add_(L.ones(2, 3))", "L.ones(2).mul_(L.ones(3))",
    "L.add(L.ones(2, dtype=L.int64), 1, alpha=0.5)", "L.add(L.ones(2), 1, alpha=True)",
    "L.ones(2) & L.ones(2)", "L.maximum(L.ones(2), 2.0)",
    "L.round(L.ones(2, dtype=L.int64), decimals=1)",
])
def test_bad_input_raises_like_torch(expression):
    errors = []
    for L in (hookgrad, torch):
        with pytest.raises(Exception) as info:
            eval(expression)
        errors.append((type(info.value), str(info.value).split(" (in ")[0]))
    assert errors[0][0] is errors[1][0]
    assert errors[0][1] == errors[1][1]


# ---------------------------------------------------------------------------------------------
# In-place specifics
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("op", ["add_", "mul_", "relu_", "clamp_"])
def test_inplace_on_leaf_requiring_grad_raises(op):
    x = hookgrad.ones(3, requires_grad=True)
    args = {"add_": (1,), "mul_": (2,), "relu_": (), "clamp_": (0, 1)}[op]
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in "
                                           "an in-place operation"):
        getattr(x, op)(*args)


@pytest.mark.parametrize("op", ["add_", "sub_", "mul_", "div_", "clamp_", "relu_",
                                "masked_fill_"])
def test_inplace_returns_self_and_bumps_version(op):
    x = hookgrad.tensor([1.0, -2.0, 3.0])
    args = {"add_": (1,), "sub_": (1,), "mul_": (2,), "div_": (2,), "clamp_": (0, 1),
            "relu_": (), "masked_fill_": (hookgrad.tensor([True, False, True]), 0.0)}[op]
    version = x._version
    assert getattr(x, op)(*args) is x
    assert x._version == version + 1


def test_inplace_keeps_dtype_of_self():
    compare(lambda L, a, b: (a * 1).add_(b), np.ones(3, np.float32), np.ones(3, np.float64))
    compare(lambda L, a, b: (a * 1).mul_(b), np.ones(3, np.float64), np.arange(3))


def test_mul_inplace_by_itself_fails_backward_like_torch():
    messages = []
    for L in (hookgrad, torch):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * 1
        y.mul_(y)
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
        messages.append(str(info.value).split(", which is")[0])
    assert messages[0] == messages[1]


def test_mul_inplace_saves_a_clone_of_the_old_self():
    names = []
    for L in (hookgrad, torch):
        a = L.tensor([1.0, 2.0], requires_grad=True)
        b = L.tensor([3.0, 4.0], requires_grad=True)
        y = a * 1
        y.mul_(b)
        saved = y.grad_fn._saved_self
        names.append((saved.grad_fn.name(), saved.tolist(), y.grad_fn._saved_other is b))
    assert names[0] == names[1]


@pytest.mark.parametrize("op", [
    lambda L, v, w: v.mul_(w), lambda L, v, w: v.div_(w + 3), lambda L, v, w: v.clamp_(min=w),
    lambda L, v, w: v.add_(w, alpha=2), lambda L, v, w: v.masked_fill_(v > 0, 1.5),
    lambda L, v, w: v.relu_(),
], ids=["mul_", "div_", "clamp_", "add_", "masked_fill_", "relu_"])
def test_inplace_on_a_view_matches_torch(op):
    def fn(L, a, w):
        b = a * 1
        op(L, b[1], w)
        return b

    compare(fn, *_arrays([A, ROW], 11))
