"""In-place unary ops, random fills, index_fill, masked_scatter and masked_select against torch."""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import hookgrad
import hookgrad.nn.functional as HF
from tests.conftest import (assert_close, assert_same_error, compare, compare_double_backward,
                            saved_log)

RNG = np.random.default_rng(5)
X = RNG.standard_normal((3, 4))
POSITIVE = RNG.uniform(0.5, 3.0, (3, 4))
UNIT = RNG.uniform(0.05, 0.95, (3, 4))

# (name, in-place call on a non-leaf, input)
INPLACE = [
    ("exp_", lambda lib, x: x.exp_(), X),
    ("log_", lambda lib, x: x.log_(), POSITIVE),
    ("log2_", lambda lib, x: x.log2_(), POSITIVE),
    ("log10_", lambda lib, x: x.log10_(), POSITIVE),
    ("log1p_", lambda lib, x: x.log1p_(), POSITIVE),
    ("expm1_", lambda lib, x: x.expm1_(), X),
    ("exp2_", lambda lib, x: x.exp2_(), X),
    ("sqrt_", lambda lib, x: x.sqrt_(), POSITIVE),
    ("rsqrt_", lambda lib, x: x.rsqrt_(), POSITIVE),
    ("sigmoid_", lambda lib, x: x.sigmoid_(), X),
    ("tanh_", lambda lib, x: x.tanh_(), X),
    ("neg_", lambda lib, x: x.neg_(), X),
    ("abs_", lambda lib, x: x.abs_(), X),
    ("sin_", lambda lib, x: x.sin_(), X),
    ("cos_", lambda lib, x: x.cos_(), X),
    ("tan_", lambda lib, x: x.tan_(), X),
    ("asin_", lambda lib, x: x.asin_(), UNIT),
    ("atan_", lambda lib, x: x.atan_(), X),
    ("sinh_", lambda lib, x: x.sinh_(), X),
    ("cosh_", lambda lib, x: x.cosh_(), X),
    ("erf_", lambda lib, x: x.erf_(), X),
    ("reciprocal_", lambda lib, x: x.reciprocal_(), POSITIVE),
    ("square_", lambda lib, x: x.square_(), X),
    ("pow_", lambda lib, x: x.pow_(3), X),
    ("pow_tensor", lambda lib, x: x.pow_(x.detach() * 0 + 1.5), POSITIVE),
    ("sign_", lambda lib, x: x.sign_(), X),
    ("floor_", lambda lib, x: x.floor_(), X),
    ("ceil_", lambda lib, x: x.ceil_(), X),
    ("round_", lambda lib, x: x.round_(), X),
    ("round_decimals", lambda lib, x: x.round_(decimals=1), X),
    ("trunc_", lambda lib, x: x.trunc_(), X),
    ("frac_", lambda lib, x: x.frac_(), X),
    ("clamp_min_", lambda lib, x: x.clamp_min_(0.1), X),
    ("clamp_max_", lambda lib, x: x.clamp_max_(0.1), X),
    ("clamp_min_tensor", lambda lib, x: x.clamp_min_(lib.zeros(4, dtype=lib.float64)), X),
    ("logit_", lambda lib, x: x.logit_(), UNIT),
    ("nan_to_num_", lambda lib, x: x.nan_to_num_(), X),
    ("fmod_", lambda lib, x: x.fmod_(0.3), X),
    ("lerp_", lambda lib, x: x.lerp_(x.detach() * 0 + 1, 0.25), X),
    ("addcmul_", lambda lib, x: x.addcmul_(x.detach(), x.detach(), value=0.5), X),
    ("addcdiv_", lambda lib, x: x.addcdiv_(x.detach(), x.detach() + 4), X),
    ("hardtanh_", lambda lib, x: _F(lib).hardtanh_(x, -0.3, 0.4), X),
    ("relu6_inplace", lambda lib, x: _F(lib).relu6(x * 4, inplace=True), X),
    ("hardswish_inplace", lambda lib, x: _F(lib).hardswish(x * 4, inplace=True), X),
    ("mish_inplace", lambda lib, x: _F(lib).mish(x, inplace=True), X),
    ("selu_", lambda lib, x: lib.selu_(x), X),
    ("celu_", lambda lib, x: lib.celu_(x, 0.5), X),
    ("selu_F", lambda lib, x: _F(lib).selu(x, inplace=True), X),
]


def _F(lib):
    return TF if lib is torch else HF


@pytest.mark.parametrize("name,fn,array", INPLACE, ids=[i[0] for i in INPLACE])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_inplace_values_and_gradients(name, fn, array, dtype):
    compare(lambda lib, x: fn(lib, x * 1), array.astype(dtype))


def _inplace_run(lib, fn, array):
    leaf = lib.tensor(array, requires_grad=True)
    x = leaf * 1
    version = x._version
    out = fn(lib, x)
    return out, x, version


@pytest.mark.parametrize("name,fn,array", INPLACE, ids=[i[0] for i in INPLACE])
def test_inplace_returns_self_with_torchs_node(name, fn, array):
    facts = []
    for lib in (torch, hookgrad):
        out, x, version = _inplace_run(lib, fn, array)
        facts.append((out.grad_fn.name(), out._version > version,
                      [n.name() if n is not None else None
                       for n, _ in out.grad_fn.next_functions][:1]))
        if "inplace" not in name and not name.startswith(("selu_", "celu_", "hardtanh_")):
            assert out is x
    assert facts[1] == facts[0]


@pytest.mark.parametrize("name,fn,array", INPLACE, ids=[i[0] for i in INPLACE])
def test_inplace_saves_what_torch_saves(name, fn, array):
    logs = []
    for lib in (torch, hookgrad):
        leaf = lib.tensor(array, requires_grad=True)
        logs.append(saved_log(lib, lambda t: fn(lib, t * 1), leaf))
    assert logs[1] == logs[0]


@pytest.mark.parametrize("name", ["log_", "sin_", "abs_", "pow_", "logit_", "exp_", "sqrt_",
                                  "tanh_", "mish_inplace", "selu_", "celu_"])
def test_inplace_double_backward(name):
    fn, array = next((f, a) for n, f, a in INPLACE if n == name)
    compare_double_backward(lambda lib, x: fn(lib, x * 1), array)


def test_original_self_is_saved_before_the_update():
    for lib in (torch, hookgrad):
        x = lib.tensor(POSITIVE, requires_grad=True) * 1
        before = x.detach().clone()
        node = x.log_().grad_fn
        assert_close(node._saved_self, before)


def test_inplace_on_a_view_updates_the_base():
    results = []
    for lib in (torch, hookgrad):
        leaf = lib.tensor(X, requires_grad=True)
        base = leaf * 1
        base[:, 2].sin_()  # saves a clone of its old values: later updates do not matter
        base[1].exp_()
        base.sum().backward()
        results.append((base, leaf.grad))
    assert_close(results[1][0], results[0][0])
    assert_close(results[1][1], results[0][1])


def test_inplace_without_grad_records_nothing():
    x = hookgrad.tensor(POSITIVE)
    out = x.log_()
    assert out is x and out.grad_fn is None and x._version == 1
    assert_close(x, torch.tensor(POSITIVE).log_())


@pytest.mark.parametrize("fn", [
    lambda lib: lib.zeros(3, dtype=lib.long).exp_(),
    lambda lib: lib.zeros(3, dtype=lib.long).sqrt_(),
    lambda lib: lib.ones(3, dtype=lib.long).pow_(0.5),
    lambda lib: lib.ones(3, requires_grad=True).exp_(),
    lambda lib: lib.ones(3, requires_grad=True).clamp_min_(0.0),
])
def test_errors_match_torch(fn):
    assert_same_error(fn)


@pytest.mark.parametrize("fn", [
    lambda lib, x: x.neg_(),
    lambda lib, x: x.abs_(),
    lambda lib, x: x.floor_(),
    lambda lib, x: x.sign_(),
    lambda lib, x: x.clamp_min_(2),
    lambda lib, x: x.square_(),
])
def test_integer_inplace(fn):
    compare(lambda lib, x: fn(lib, x * 1), np.array([[-2, 3], [0, 5]]))


# ---------------------------------------------------------------------------------------------
# random fills
# ---------------------------------------------------------------------------------------------
FILLS = [
    ("uniform_", lambda x: x.uniform_(-2, 3), "UniformBackward0", (-2.0, 3.0)),
    ("normal_", lambda x: x.normal_(1.0, 0.5), "NormalBackward0", (-10.0, 10.0)),
    ("exponential_", lambda x: x.exponential_(2.0), "ExponentialBackward0", (0.0, 50.0)),
    ("bernoulli_", lambda x: x.bernoulli_(0.3), "BernoulliBackward2", (0.0, 1.0)),
    ("bernoulli_tensor", lambda x: x.bernoulli_(x.detach() * 0 + 0.5), "BernoulliBackward1",
     (0.0, 1.0)),
    ("random_", lambda x: x.random_(), "RandomBackward2", (0.0, 2.0 ** 53)),
    ("random_to", lambda x: x.random_(7), "RandomBackward1", (0.0, 6.0)),
    ("random_from_to", lambda x: x.random_(-3, 4), "RandomBackward0", (-3.0, 3.0)),
]


@pytest.mark.parametrize("name,fill,node,bounds", FILLS, ids=[f[0] for f in FILLS])
def test_random_fill_node_and_zero_gradient(name, fill, node, bounds):
    results = []
    for lib in (torch, hookgrad):
        leaf = lib.tensor(X, requires_grad=True)
        x = leaf * 1
        out = fill(x)
        assert out is x and out.grad_fn.name() == node
        out.sum().backward()
        results.append(leaf.grad)
    assert_close(results[1], results[0])


@pytest.mark.parametrize("name,fill,node,bounds", FILLS, ids=[f[0] for f in FILLS])
@pytest.mark.parametrize("dtype", [hookgrad.float32, hookgrad.float64])
def test_random_fill_keeps_shape_dtype_and_range(name, fill, node, bounds, dtype):
    x = hookgrad.zeros(50, 40, dtype=dtype)
    out = fill(x)
    assert out.dtype == dtype and out.shape == (50, 40)
    data = out.numpy()
    assert bounds[0] <= data.min() and data.max() <= bounds[1]
    assert len(np.unique(data)) > 1


def test_random_fill_statistics():
    hookgrad.manual_seed(0)
    n = 20000
    assert abs(hookgrad.empty(n).uniform_(2, 4).mean().item() - 3) < 0.05
    assert abs(hookgrad.empty(n).normal_(1, 2).std().item() - 2) < 0.1
    assert abs(hookgrad.empty(n).exponential_(4).mean().item() - 0.25) < 0.02
    assert abs(hookgrad.empty(n).bernoulli_(0.2).mean().item() - 0.2) < 0.02


@pytest.mark.parametrize("dtype", [hookgrad.int64, hookgrad.uint8, hookgrad.bool])
def test_random_integers(dtype):
    data = hookgrad.zeros(200, dtype=dtype).random_().numpy()
    assert data.dtype == dtype.numpy and len(np.unique(data)) > 1
    small = hookgrad.zeros(200, dtype=dtype).random_(2).numpy()
    assert set(np.unique(small).tolist()) == {0, 1}


def test_random_fill_follows_the_seed():
    draws = []
    for _ in range(2):
        hookgrad.manual_seed(123)
        draws.append(hookgrad.empty(5).uniform_().numpy().copy())
    np.testing.assert_array_equal(draws[0], draws[1])


@pytest.mark.parametrize("fn", [
    lambda lib: lib.zeros(3).uniform_(2, 1),
    lambda lib: lib.zeros(3).exponential_(0),
    lambda lib: lib.zeros(3).normal_(0, -1),
    lambda lib: lib.zeros(3).bernoulli_(1.5),
    lambda lib: lib.zeros(3, dtype=lib.long).uniform_(),
    lambda lib: lib.zeros(3, dtype=lib.long).normal_(),
    lambda lib: lib.zeros(3, requires_grad=True).normal_(),
    lambda lib: lib.zeros(3).random_(5, 2),
    lambda lib: lib.zeros(3).random_(0),
])
def test_random_fill_errors(fn):
    assert_same_error(fn)


# ---------------------------------------------------------------------------------------------
# index_fill, masked_scatter, masked_select
# ---------------------------------------------------------------------------------------------
MASK = X > 0.2
MASKED = [
    ("masked_select", lambda lib, x, s: lib.masked_select(x, lib.tensor(MASK)),
     "MaskedSelectBackward0"),
    ("masked_select_broadcast", lambda lib, x, s: x[0].masked_select(lib.tensor(MASK)),
     "MaskedSelectBackward0"),
    ("masked_scatter", lambda lib, x, s: x.masked_scatter(lib.tensor(MASK), s),
     "MaskedScatterBackward0"),
    ("masked_scatter_broadcast", lambda lib, x, s: x[:1].masked_scatter(lib.tensor(MASK), s),
     "MaskedScatterBackward0"),
    ("masked_scatter_", lambda lib, x, s: (x * 1).masked_scatter_(lib.tensor(MASK), s[:2]),
     "MaskedScatterBackward0"),
    ("index_fill", lambda lib, x, s: x.index_fill(1, lib.tensor([0, 2]), -1.5),
     "IndexFillBackward0"),
    ("index_fill_negative", lambda lib, x, s: x.index_fill(0, lib.tensor([-1]), 2),
     "IndexFillBackward0"),
    ("index_fill_tensor", lambda lib, x, s: x.index_fill(1, lib.tensor([3]), s[0, 0]),
     "IndexFillBackward1"),
    ("index_fill_", lambda lib, x, s: (x * 1).index_fill_(0, lib.tensor([0, 2]), 7.0),
     "IndexFillBackward0"),
    ("index_fill_tensor_", lambda lib, x, s: (x * 1).index_fill_(1, lib.tensor(1), s[1, 1]),
     "IndexFillBackward1"),
]


@pytest.mark.parametrize("name,fn,node", MASKED, ids=[m[0] for m in MASKED])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_masked_and_index_ops(name, fn, node, dtype):
    compare(fn, X.astype(dtype), RNG.standard_normal((3, 5)).astype(dtype))


@pytest.mark.parametrize("name,fn,node", MASKED, ids=[m[0] for m in MASKED])
def test_masked_and_index_nodes_and_saves(name, fn, node):
    logs = []
    for lib in (torch, hookgrad):
        x = lib.tensor(X, requires_grad=True)
        s = lib.tensor(RNG.standard_normal((3, 5)), requires_grad=True)
        assert fn(lib, x, s).grad_fn.name() == node
        logs.append(saved_log(lib, lambda a, b: fn(lib, a, b), x, s))
    assert logs[1] == logs[0]


@pytest.mark.parametrize("name,fn,node", MASKED[2:5], ids=[m[0] for m in MASKED[2:5]])
def test_masked_scatter_double_backward(name, fn, node):
    compare_double_backward(fn, X, RNG.standard_normal((3, 5)))


@pytest.mark.parametrize("fn", [
    lambda lib, x: lib.masked_select(x, lib.tensor(MASK)),
    lambda lib, x: x[1:2].masked_select(lib.tensor(MASK)),
    lambda lib, x: x.index_fill(1, lib.tensor([0, 2]), -1.5),
])
def test_masked_select_and_index_fill_double_backward(fn):
    compare_double_backward(fn, X)


def test_index_fill_on_integers_and_zero_dim():
    compare(lambda lib, x: (x.index_fill(1, lib.tensor([1]), 9), x[0, 0].index_fill(
        0, lib.tensor([0]), 4)), np.array([[1, 2, 3], [4, 5, 6]]))


@pytest.mark.parametrize("fn", [
    lambda lib: lib.zeros(3).masked_scatter(lib.tensor([True, True, True]), lib.ones(2)),
    lambda lib: lib.zeros(3).masked_scatter(lib.tensor([1, 1, 0]), lib.ones(3)),
    lambda lib: lib.zeros(3).masked_scatter(lib.tensor([True, False, True]), lib.arange(6)),
    lambda lib: lib.zeros(3).masked_scatter_(lib.tensor([[True, False, True]] * 2),
                                             lib.arange(6.)),
    lambda lib: lib.masked_select(lib.arange(3.), lib.tensor([1, 0, 1])),
    lambda lib: lib.zeros(3).index_fill(0, lib.tensor([0], dtype=lib.int32), 1.),
    lambda lib: lib.zeros(3).index_fill(0, lib.tensor([3]), 1.),
    lambda lib: lib.zeros(3).index_fill(0, lib.tensor([0]), lib.tensor([1.])),
    lambda lib: lib.zeros(3).index_fill(0, lib.tensor([[0]]), 1.),
])
def test_masked_and_index_errors(fn):
    assert_same_error(fn)
