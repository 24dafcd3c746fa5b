"""Backward formulas that run on NumPy arrays (``Op.array_formula``, ``_base.formula_on_arrays``).

The formula is written once, with Tensor operators; when no graph of the backward is recorded
the engine runs it on the arrays themselves. Every gradient must stay what torch gives (values,
dtype, layout), the saved-tensor machinery (hooks, versions, freeing) must behave as on the
Tensor path, and ``create_graph=True`` must still give a differentiable gradient.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad
from hookgrad.ops import arithmetic, unary
from hookgrad.ops._base import Op

from conftest import assert_close, assert_same_error, compare, double_backward

ARRAY_OPS = sorted((cls for module in (arithmetic, unary) for cls in vars(module).values()
                    if isinstance(cls, type) and issubclass(cls, Op)
                    and cls.__dict__.get("array_formula")), key=lambda cls: cls.__name__)

# one torch-API call per op that reaches it, on inputs inside its domain (log, sqrt: positive)
CALLS = {
    "Neg": lambda lib, x, y: -x,
    "Exp": lambda lib, x, y: x.exp(),
    "Log": lambda lib, x, y: (x * x + 0.5).log(),
    "Log1p": lambda lib, x, y: (x * x).log1p(),
    "Sqrt": lambda lib, x, y: (x * x + 0.5).sqrt(),
    "Reciprocal": lambda lib, x, y: (x * x + 0.5).reciprocal(),
    "Sub": lambda lib, x, y: lib.sub(x, y, alpha=2.5) - 0.25,
    "Rsub": lambda lib, x, y: lib.rsub(x, y),
    "RsubScalar": lambda lib, x, y: 1.5 - x,
    "Mul": lambda lib, x, y: x * y * 3,
    "Div": lambda lib, x, y: x / (y * y + 0.5) / 7,
    "Tanh": lambda lib, x, y: (x * y).tanh(),
    "Sigmoid": lambda lib, x, y: (x + y).sigmoid(),
}


def test_every_array_formula_op_has_a_case_here():
    assert {cls.__name__ for cls in ARRAY_OPS} == set(CALLS)


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(), (7,), (3, 4)])
def test_gradients_match_torch(name, dtype, shape):
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal(shape).astype(dtype) for _ in range(2))
    compare(CALLS[name], x, y)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_odd_layouts_and_dtypes_match_torch(name):
    """Transposed and broadcast operands, half precision and mixed dtypes miss the array lane
    (or take it) with torch's values, dtypes and strides either way."""
    rng = np.random.default_rng(1)
    call = CALLS[name]
    for x, y in ((rng.standard_normal((4, 3)).T, rng.standard_normal((3, 4))),
                 (rng.standard_normal((3, 4)), rng.standard_normal((4,))),
                 (rng.standard_normal((3, 4)).astype(np.float16),
                  rng.standard_normal((3, 4)).astype(np.float16)),
                 (rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((3, 4)))):
        grads = []
        for lib in (torch, hookgrad):
            a, b = (lib.tensor(v, requires_grad=True) for v in (x, y))
            if x.base is not None:  # keep the transposed layout
                a = lib.tensor(np.ascontiguousarray(x.T), requires_grad=True)
                leaf, a = a, a.t()
            else:
                leaf = a
            call(lib, a, b).sum().backward()
            grads.append((leaf.grad, b.grad))
        (t_a, t_b), (h_a, h_b) = grads
        assert_close(h_a, t_a, rtol=1e-2, atol=1e-3)
        assert h_a.stride() == t_a.stride()
        if t_b is not None:
            assert_close(h_b, t_b, rtol=1e-2, atol=1e-3)


def test_the_formula_makes_no_tensor_when_nothing_is_recorded(monkeypatch):
    x = hookgrad.ones(8, requires_grad=True)
    out = (x * 2).exp().neg().exp()
    gradient = hookgrad.ones(8)
    made = []
    original = hookgrad.Tensor._make.__func__

    def counting(cls, array, requires_grad=False):
        made.append(array.shape)
        return original(cls, array, requires_grad)

    monkeypatch.setattr(hookgrad.Tensor, "_make", classmethod(counting))
    out.backward(gradient)
    # one tensor per node's gradient (exp, neg, exp, mul), none in between
    assert made == [(8,)] * 4


@pytest.mark.parametrize("name", ["Exp", "Mul", "Div", "Reciprocal", "Log"])
def test_create_graph_still_differentiates_the_formula(name):
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    double_backward(CALLS[name], x, y)


def test_unpack_hooks_run_once_per_saved_tensor_as_in_torch():
    counts = []
    for lib in (torch, hookgrad):
        calls = []

        def unpack(t):
            calls.append(tuple(t.shape))
            return t

        x = lib.ones(5, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
            out = (x.exp() * x).reciprocal().sum()
        out.backward()
        counts.append(sorted(calls))
    assert counts[0] == counts[1]


def test_a_saved_result_changed_in_place_raises_torch_error():
    def run(lib):
        x = lib.ones(4, requires_grad=True)
        y = (x * 1).exp()
        y.add_(1)
        y.sum().backward()

    assert_same_error(run)


def test_second_backward_through_a_freed_graph_raises_torch_error():
    def run(lib):
        x = lib.ones(4, requires_grad=True)
        out = (x * 2).exp().sum()
        out.backward()
        out.backward()

    assert_same_error(run)


def test_retain_graph_gives_the_same_gradient_twice():
    x = hookgrad.tensor([0.5, -1.0, 2.0], requires_grad=True)
    out = (x * 3).exp().sum()
    out.backward(retain_graph=True)
    first = x.grad.clone()
    out.backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * first.numpy())


def test_hooks_see_torch_gradients_around_an_array_formula():
    seen = []
    for lib in (torch, hookgrad):
        x = lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3), requires_grad=True)
        y = x * 3
        grads = []
        y.register_hook(lambda g: grads.append((g.detach().numpy().copy(), g.stride())))
        z = y.exp()
        z.register_hook(lambda g: g * 2)
        z.retain_grad()
        z.sum().backward()
        seen.append((grads, z.grad.numpy().copy(), x.grad.numpy().copy()))
    (t_grads, t_z, t_x), (h_grads, h_z, h_x) = seen
    np.testing.assert_allclose(h_grads[0][0], t_grads[0][0], rtol=1e-12)
    assert h_grads[0][1] == t_grads[0][1]
    np.testing.assert_array_equal(h_z, t_z)
    np.testing.assert_allclose(h_x, t_x, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("shape, size", [((16, 5), (5,)), ((2, 3, 4), (3, 1)),
                                         ((4, 1, 3), (1, 1, 3))])
def test_sum_to_size_without_recording_matches_torch(dtype, shape, size):
    """The engine reduces a broadcast gradient (a bias's) with sum_to_size under no_grad: the
    direct lane there must give torch's values, dtype and layout."""
    array = np.random.default_rng(3).standard_normal(shape).astype(dtype)
    with torch.no_grad():
        expected = torch.tensor(array).sum_to_size(size)
    with hookgrad.no_grad():
        actual = hookgrad.tensor(array).sum_to_size(size)
    recorded = hookgrad.tensor(array, requires_grad=True).sum_to_size(size)  # through Sum's node
    assert_close(actual, expected)
    assert actual.stride() == expected.stride()
    np.testing.assert_array_equal(actual.numpy(), recorded.detach().numpy())


def test_bias_gradient_reduced_by_the_engine_matches_torch():
    rng = np.random.default_rng(4)
    x, weight, bias = rng.standard_normal((16, 8)), rng.standard_normal((3, 8)), np.zeros(3)
    compare(lambda lib, x, w, b: lib.nn.functional.linear(x, w, b), x, weight, bias)
