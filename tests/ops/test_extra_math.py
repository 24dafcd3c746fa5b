"""Extra unary and binary math, activations, scans and fused reductions against torch."""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import hookgrad
import hookgrad.nn.functional as HF
from tests.conftest import (assert_close, assert_same_error, compare, compare_double_backward,
                            saved_log)

RNG = np.random.default_rng(3)
X = RNG.standard_normal((3, 4))
Y = RNG.standard_normal((3, 4))
Z = RNG.standard_normal((3, 4))
POSITIVE = RNG.uniform(0.5, 3.0, (3, 4))
ABOVE_ONE = RNG.uniform(1.2, 3.0, (3, 4))
UNIT = RNG.uniform(0.05, 0.95, (3, 4))
WIDE = RNG.uniform(-5, 5, (4, 6))

# (name, function, input, torch's node name)
UNARY = [
    ("log2", lambda lib, x: lib.log2(x), POSITIVE, "Log2Backward0"),
    ("log10", lambda lib, x: x.log10(), POSITIVE, "Log10Backward0"),
    ("exp2", lambda lib, x: lib.exp2(x), X, "Exp2Backward0"),
    ("expm1", lambda lib, x: lib.expm1(x), X, "Expm1Backward0"),
    ("tan", lambda lib, x: lib.tan(x), X, "TanBackward0"),
    ("asin", lambda lib, x: lib.asin(x), UNIT, "AsinBackward0"),
    ("acos", lambda lib, x: lib.arccos(x), UNIT, "AcosBackward0"),
    ("atan", lambda lib, x: x.atan(), X, "AtanBackward0"),
    ("sinh", lambda lib, x: lib.sinh(x), X, "SinhBackward0"),
    ("cosh", lambda lib, x: lib.cosh(x), X, "CoshBackward0"),
    ("asinh", lambda lib, x: lib.asinh(x), X, "AsinhBackward0"),
    ("acosh", lambda lib, x: lib.acosh(x), ABOVE_ONE, "AcoshBackward0"),
    ("atanh", lambda lib, x: lib.atanh(x), UNIT, "AtanhBackward0"),
    ("sinc", lambda lib, x: lib.sinc(x), X, "SincBackward0"),
    ("frac", lambda lib, x: lib.frac(x * 3), X, "FracBackward0"),
    ("deg2rad", lambda lib, x: lib.deg2rad(x), X, "Deg2RadBackward0"),
    ("rad2deg", lambda lib, x: x.rad2deg(), X, "Rad2DegBackward0"),
    ("logit", lambda lib, x: lib.logit(x), UNIT, "LogitBackward0"),
    ("logit_eps", lambda lib, x: lib.logit(x, 0.2), UNIT, "LogitBackward0"),
    ("logit_outside", lambda lib, x: lib.logit(x), X, "LogitBackward0"),
    ("nan_to_num", lambda lib, x: lib.nan_to_num(x.log()), X, "NanToNumBackward0"),
    ("nan_to_num_values", lambda lib, x: (x / (x > 0)).nan_to_num(1.0, 9.0, -9.0), X,
     "NanToNumBackward0"),
    ("logsigmoid", lambda lib, x: _F(lib).logsigmoid(x * 20), X, "LogSigmoidBackward0"),
    ("hardtanh", lambda lib, x: _F(lib).hardtanh(x, -0.5, 0.7), X, "HardtanhBackward0"),
    ("relu6", lambda lib, x: _F(lib).relu6(x * 4), X, "HardtanhBackward0"),
    ("hardsigmoid", lambda lib, x: _F(lib).hardsigmoid(x), WIDE, "HardsigmoidBackward0"),
    ("hardswish", lambda lib, x: _F(lib).hardswish(x), WIDE, "HardswishBackward0"),
    ("mish", lambda lib, x: _F(lib).mish(x), WIDE, "MishBackward0"),
    ("selu", lambda lib, x: lib.selu(x), X, "EluBackward0"),
    ("selu_F", lambda lib, x: _F(lib).selu(x), X, "EluBackward0"),
    ("celu", lambda lib, x: lib.celu(x, 2.0), X, "CeluBackward0"),
    ("softshrink", lambda lib, x: _F(lib).softshrink(x, 0.3), X, "SoftshrinkBackward0"),
    ("hardshrink", lambda lib, x: _F(lib).hardshrink(x, 0.3), X, "HardshrinkBackward0"),
    ("softsign", lambda lib, x: _F(lib).softsign(x), X, "DivBackward0"),
    ("tanhshrink", lambda lib, x: _F(lib).tanhshrink(x), X, "SubBackward0"),
]


def _F(lib):
    return TF if lib is torch else HF


@pytest.mark.parametrize("name,fn,array,node", UNARY, ids=[u[0] for u in UNARY])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_unary_ops_match_torch(name, fn, array, node, dtype):
    compare(fn, array.astype(dtype))


@pytest.mark.parametrize("name,fn,array,node", UNARY, ids=[u[0] for u in UNARY])
def test_unary_node_names(name, fn, array, node):
    for lib in (torch, hookgrad):
        assert fn(lib, lib.tensor(array, requires_grad=True)).grad_fn.name() == node


@pytest.mark.parametrize("name,fn,array,node", UNARY[:18], ids=[u[0] for u in UNARY[:18]])
def test_unary_saved_tensors(name, fn, array, node):
    logs = [saved_log(lib, lambda x: fn(lib, x), lib.tensor(array, requires_grad=True))
            for lib in (torch, hookgrad)]
    assert logs[1] == logs[0]


PIECEWISE_LINEAR = ("frac", "logit_outside", "hardtanh", "relu6", "hardsigmoid", "softshrink",
                    "hardshrink")


@pytest.mark.parametrize("name,fn,array,node",
                         [u for u in UNARY if u[0] not in PIECEWISE_LINEAR],
                         ids=[u[0] for u in UNARY if u[0] not in PIECEWISE_LINEAR])
def test_unary_double_backward(name, fn, array, node):
    compare_double_backward(fn, array)


GRAD_LINEAR = [u for u in UNARY if u[0] in PIECEWISE_LINEAR and u[0] != "hardsigmoid"]


@pytest.mark.parametrize("name,fn,array,node", GRAD_LINEAR, ids=[u[0] for u in GRAD_LINEAR])
def test_piecewise_linear_backward_is_linear_in_grad(name, fn, array, node):
    """the second derivative w.r.t. the input is zero; w.r.t. the output gradient it is the
    backward itself"""
    results = []
    for lib in (torch, hookgrad):
        x = lib.tensor(array, requires_grad=True)
        weight = lib.tensor(np.cos(array), requires_grad=True)
        (first,) = lib.autograd.grad(fn(lib, x), x, weight, create_graph=True)
        results.append(lib.autograd.grad((first * lib.tensor(np.sin(array))).sum(), weight)[0])
    assert_close(results[1], results[0])


@pytest.mark.parametrize("name", ["log2", "exp2", "tan", "asin", "sinh", "acosh", "expm1",
                                  "sinc", "logit"])
def test_integer_inputs_give_the_default_float(name):
    compare(lambda lib, x: getattr(lib, name)(x), np.array([[1, 2], [0, 3]]))


def test_selu_saves_torchs_constants():
    for lib in (torch, hookgrad):
        node = lib.selu(lib.tensor(X, requires_grad=True)).grad_fn
        assert (node._saved_alpha, node._saved_scale, node._saved_input_scale) == (
            pytest.approx(1.6732632423543772), pytest.approx(1.0507009873554805), 1)


# ---------------------------------------------------------------------------------------------
# binary and ternary ops
# ---------------------------------------------------------------------------------------------
BINARY = [
    ("atan2", lambda lib, x, y: lib.atan2(x, y), "Atan2Backward0"),
    ("arctan2", lambda lib, x, y: x.arctan2(y), "Atan2Backward0"),
    ("hypot", lambda lib, x, y: lib.hypot(x, y), "HypotBackward0"),
    ("logaddexp", lambda lib, x, y: lib.logaddexp(x, y * 30), "LogaddexpBackward0"),
    ("copysign", lambda lib, x, y: lib.copysign(x, y), "CopysignBackward0"),
    ("fmod", lambda lib, x, y: lib.fmod(x * 3, y), "FmodBackward1"),
    ("fmod_number", lambda lib, x, y: x.fmod(0.3) + y, "AddBackward0"),
    ("xlogy", lambda lib, x, y: lib.xlogy(x, y.abs()), "XlogyBackward0"),
    ("xlogy_number_other", lambda lib, x, y: lib.xlogy(x, 2.5) * y, "MulBackward0"),
    ("xlogy_number_self", lambda lib, x, y: lib.xlogy(3.0, y.abs()) * x, "MulBackward0"),
    ("lerp", lambda lib, x, y: lib.lerp(x, y, 0.3), "LerpBackward0"),
    ("lerp_tensor", lambda lib, x, y: x.lerp(y, y.sigmoid()), "LerpBackward1"),
    ("addcmul", lambda lib, x, y: lib.addcmul(x, y, x * y, value=2), "AddcmulBackward0"),
    ("addcdiv", lambda lib, x, y: x.addcdiv(y, x.exp(), value=-0.5), "AddcdivBackward0"),
    ("broadcast_atan2", lambda lib, x, y: lib.atan2(x, y[0]), "Atan2Backward0"),
    ("broadcast_lerp", lambda lib, x, y: lib.lerp(x[:1], y, y[:, :1].sigmoid()),
     "LerpBackward1"),
    ("broadcast_addcmul", lambda lib, x, y: lib.addcmul(x[0], y, x[:, :1]), "AddcmulBackward0"),
]


@pytest.mark.parametrize("name,fn,node", BINARY, ids=[b[0] for b in BINARY])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_binary_ops_match_torch(name, fn, node, dtype):
    compare(fn, X.astype(dtype), Y.astype(dtype))


@pytest.mark.parametrize("name,fn,node", BINARY, ids=[b[0] for b in BINARY])
def test_binary_node_names(name, fn, node):
    for lib in (torch, hookgrad):
        x, y = lib.tensor(X, requires_grad=True), lib.tensor(Y, requires_grad=True)
        assert fn(lib, x, y).grad_fn.name() == node


@pytest.mark.parametrize("name,fn,node", BINARY, ids=[b[0] for b in BINARY])
def test_binary_double_backward(name, fn, node):
    if name in ("fmod", "copysign"):  # piecewise: torch's second derivative is structural 0
        return
    compare_double_backward(fn, X, Y)


@pytest.mark.parametrize("fn", [
    lambda lib, x, y, z: lib.atan2(x, y),
    lambda lib, x, y, z: lib.hypot(x, y),
    lambda lib, x, y, z: lib.hypot(x, y.detach()),
    lambda lib, x, y, z: lib.lerp(x, y, z),
    lambda lib, x, y, z: lib.lerp(x, y.detach(), z.detach()),
    lambda lib, x, y, z: lib.addcmul(x, y, z),
    lambda lib, x, y, z: lib.addcmul(x.detach(), y, z.detach()),
    lambda lib, x, y, z: lib.addcdiv(x, y, z),
    lambda lib, x, y, z: lib.xlogy(x, z.abs()),
    lambda lib, x, y, z: lib.fmod(x, y),
    lambda lib, x, y, z: lib.logaddexp(x, y),
])
def test_binary_saved_tensors(fn):
    logs = []
    for lib in (torch, hookgrad):
        tensors = [lib.tensor(a, requires_grad=True) for a in (X, Y, Z)]
        logs.append(saved_log(lib, lambda *t: fn(lib, *t), *tensors))
    assert logs[1] == logs[0]


@pytest.mark.parametrize("fn,node", [
    (lambda lib, x: x.fmod(0.3), "FmodBackward0"),
    (lambda lib, x: lib.xlogy(x, 2.5), "XlogyBackward2"),
    (lambda lib, x: lib.xlogy(3.0, x), "XlogyBackward1"),
])
def test_number_operand_nodes(fn, node):
    for lib in (torch, hookgrad):
        assert fn(lib, lib.tensor(POSITIVE, requires_grad=True)).grad_fn.name() == node


def test_integer_promotion():
    ints, floats = np.array([[1, 2], [3, 4]]), np.array([[0.5, 1.5], [2.5, 3.5]], np.float32)
    compare(lambda lib, a, b: (lib.atan2(a, b), lib.hypot(a, b), lib.xlogy(a, b),
                               lib.fmod(a, 3), lib.fmod(a, b), lib.addcmul(a, a, a, value=2),
                               lib.addcdiv(b, a, b)), ints, floats)


def test_gradcheck_ternary():
    tensors = [hookgrad.tensor(a, requires_grad=True) for a in (X, Y, POSITIVE)]
    assert hookgrad.autograd.gradcheck(
        lambda a, b, c: hookgrad.addcdiv(a, b, c, value=0.7) + hookgrad.lerp(a, b, c.sigmoid()),
        tensors)


# ---------------------------------------------------------------------------------------------
# scans and fused reductions
# ---------------------------------------------------------------------------------------------
WITH_ZEROS = X.copy()
WITH_ZEROS[1, 2] = WITH_ZEROS[2, 0] = WITH_ZEROS[2, 3] = 0.0
WITH_NAN = X.copy()
WITH_NAN[0, 1] = WITH_NAN[2, 2] = np.nan

SCANS = [
    ("cumprod", lambda lib, x: lib.cumprod(x, 1), X, "CumprodBackward0"),
    ("cumprod_dim0", lambda lib, x: x.cumprod(0), X, "CumprodBackward0"),
    ("cumprod_zeros", lambda lib, x: lib.cumprod(x, 1), WITH_ZEROS, "CumprodBackward0"),
    ("cummax", lambda lib, x: lib.cummax(x, 1), X, "CummaxBackward0"),
    ("cummin", lambda lib, x: x.cummin(0), X, "CumminBackward0"),
    ("cummax_nan", lambda lib, x: lib.cummax(x, 1), WITH_NAN, "CummaxBackward0"),
    ("logcumsumexp", lambda lib, x: lib.logcumsumexp(x * 30, 1), X, "LogcumsumexpBackward0"),
    ("diff", lambda lib, x: lib.diff(x), X, "SubBackward0"),
    ("diff_n2_dim0", lambda lib, x: x.diff(2, 0), X, "SubBackward0"),
    ("diff_prepend", lambda lib, x: lib.diff(x, dim=1, prepend=x[:, :1] * 2, append=x), X,
     "SubBackward0"),
    ("var_mean", lambda lib, x: lib.var_mean(x, 1), X, "VarMeanBackward0"),
    ("var_mean_all", lambda lib, x: lib.var_mean(x), X, "VarMeanBackward0"),
    ("var_mean_correction", lambda lib, x: lib.var_mean(x, (0, 1), correction=0, keepdim=True),
     X, "VarMeanBackward0"),
    ("std_mean", lambda lib, x: lib.std_mean(x, 0), X, "StdMeanBackward0"),
    ("std_mean_unbiased", lambda lib, x: lib.std_mean(x, unbiased=False), X,
     "StdMeanBackward0"),
    ("aminmax", lambda lib, x: lib.aminmax(x), X, "AminmaxBackward0"),
    ("aminmax_dim", lambda lib, x: x.aminmax(dim=1, keepdim=True), X, "AminmaxBackward0"),
    ("aminmax_ties", lambda lib, x: lib.aminmax(x, dim=0), np.array([[1., 2.], [1., 0.]]),
     "AminmaxBackward0"),
    ("aminmax_all_ties", lambda lib, x: lib.aminmax(x), np.array([[1., 2.], [2., 1.]]),
     "AminmaxBackward0"),
    ("nansum", lambda lib, x: lib.nansum(x), WITH_NAN, "NansumBackward0"),
    ("nansum_dim", lambda lib, x: x.nansum(1, keepdim=True), WITH_NAN, "NansumBackward0"),
    ("nanmean", lambda lib, x: lib.nanmean(x), WITH_NAN, "DivBackward0"),
    ("nanmean_dim", lambda lib, x: x.nanmean(0), WITH_NAN, "DivBackward0"),
]


@pytest.mark.parametrize("name,fn,array,node", SCANS, ids=[s[0] for s in SCANS])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_scans_match_torch(name, fn, array, node, dtype):
    compare(fn, array.astype(dtype))


@pytest.mark.parametrize("name,fn,array,node", SCANS, ids=[s[0] for s in SCANS])
def test_scan_node_names(name, fn, array, node):
    for lib in (torch, hookgrad):
        out = fn(lib, lib.tensor(array, requires_grad=True))
        assert (out[0] if isinstance(out, tuple) else out).grad_fn.name() == node


@pytest.mark.parametrize("name,fn,array,node", SCANS, ids=[s[0] for s in SCANS])
def test_scan_saved_tensors(name, fn, array, node):
    logs = [saved_log(lib, lambda x: fn(lib, x), lib.tensor(array, requires_grad=True))
            for lib in (torch, hookgrad)]
    assert logs[1] == logs[0]


@pytest.mark.parametrize("name,fn,array,node",
                         [s for s in SCANS if s[0] not in ("logcumsumexp", "cummax_nan")],
                         ids=[s[0] for s in SCANS if s[0] not in ("logcumsumexp", "cummax_nan")])
def test_scan_double_backward(name, fn, array, node):
    compare_double_backward(fn, array)


def test_cumprod_gradcheck_with_zeros():
    x = hookgrad.tensor(WITH_ZEROS, requires_grad=True)
    assert hookgrad.autograd.gradcheck(lambda t: hookgrad.cumprod(t, 1), (x,))


def test_logcumsumexp_gradcheck():
    x = hookgrad.tensor(X, requires_grad=True)
    assert hookgrad.autograd.gradcheck(lambda t: hookgrad.logcumsumexp(t, 0), (x,))


def test_integer_scans():
    compare(lambda lib, x: (lib.cumprod(x, 0), lib.cummax(x, 1), lib.nansum(x), lib.diff(x),
                            lib.aminmax(x), lib.diff(x > 1)), np.array([[1, 3, 2], [2, 0, 5]]))


def test_aminmax_return_type():
    result = hookgrad.aminmax(hookgrad.tensor(X))
    assert result.min is result[0] and result.max is result[1]
    assert isinstance(result, hookgrad.return_types.aminmax)


# ---------------------------------------------------------------------------------------------
# axis= as numpy's name for dim=
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fn", [
    lambda lib, x: x.sum(axis=1),
    lambda lib, x: lib.mean(x, axis=0, keepdim=True),
    lambda lib, x: x.std(axis=1),
    lambda lib, x: lib.amax(x, axis=1),
    lambda lib, x: x.max(axis=0),
    lambda lib, x: lib.argmax(x, axis=1),
    lambda lib, x: lib.cat([x, x], axis=1),
    lambda lib, x: lib.softmax(x, axis=1),
    lambda lib, x: x.sort(axis=0),
    lambda lib, x: lib.cumprod(x, axis=1),
    lambda lib, x: lib.nansum(x, axis=0),
])
def test_axis_is_an_alias_of_dim(fn):
    compare(fn, X)


# ---------------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fn", [
    lambda lib: lib.frac(lib.tensor([1, 2])),
    lambda lib: lib.lerp(lib.zeros(2), lib.zeros(2, dtype=lib.float64), 0.5),
    lambda lib: lib.addcdiv(lib.zeros(2), lib.tensor([1, 2]), lib.tensor([1, 2])),
    lambda lib: lib.atan2(lib.zeros(2), lib.zeros(3)),
    lambda lib: lib.fmod(lib.tensor([1, 2]), 0),
    lambda lib: lib.logcumsumexp(lib.tensor([1, 2]), 0),
    lambda lib: lib.nanmean(lib.tensor([1, 2])),
    lambda lib: lib.diff(lib.tensor(1.)),
    lambda lib: lib.diff(lib.tensor([1., 3.]), prepend=lib.tensor(0.)),
    lambda lib: lib.aminmax(lib.zeros(0, 3)),
    lambda lib: lib.aminmax(lib.zeros(0, 3), dim=0),
    lambda lib: lib.cummax(lib.zeros(3), 1),
    lambda lib: _F(lib).softshrink(lib.zeros(2), -1.0),
    lambda lib: _F(lib).mish(lib.tensor([1, 2])),
    lambda lib: lib.hypot(lib.tensor([1, 2]), lib.tensor([1, 2])),
    lambda lib: lib.logaddexp(lib.tensor([1, 2]), lib.tensor([1, 2])),
])
def test_errors_match_torch(fn):
    assert_same_error(fn)


def test_aminmax_over_an_empty_dim_that_is_kept():
    compare(lambda lib, x: lib.aminmax(x, dim=1), np.zeros((0, 3)))


def test_positive_returns_the_input():
    x = hookgrad.tensor(X)
    assert hookgrad.positive(x) is x
    assert_close(hookgrad.positive(x), torch.positive(torch.tensor(X)))
