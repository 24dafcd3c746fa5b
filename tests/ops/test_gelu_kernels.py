"""Exact GELU's float32 kernels (``ops/_gelu.py``) and its first-order gradient on arrays:
values and gradients against torch and against float64 torch as the exact reference, special
values, the paths that miss the kernels (layouts, dtypes, create_graph), a gradient buffer
reused or left alone, and the same answer on one thread and on several."""
import math

import numpy as np
import pytest
import torch

import hookgrad
from hookgrad.ops import _gelu

GRID = np.concatenate([np.linspace(-12, 12, 48001), np.geomspace(1e-30, 2, 300),
                       -np.geomspace(1e-30, 2, 300), [0.0, -0.0, 40.0, -40.0, 1e30, -1e30]])


def _gelu_pair(lib, x, grad_output, create_graph=False):
    a = lib.tensor(x, requires_grad=True)
    y = lib.nn.functional.gelu(a)
    (g,) = lib.autograd.grad(y, a, lib.tensor(grad_output), create_graph=create_graph)
    return y, g, a


def test_float32_values_and_gradients_are_near_exact():
    x = GRID.astype(np.float32)
    exact_x = torch.tensor(x.astype(np.float64), requires_grad=True)
    exact = torch.nn.functional.gelu(exact_x)
    exact.sum().backward()
    y, g, _ = _gelu_pair(hookgrad, x, np.ones_like(x))
    assert y.dtype == hookgrad.float32 and g.dtype == hookgrad.float32
    np.testing.assert_allclose(y.detach().numpy(), exact.detach().numpy(), rtol=0, atol=5e-7)
    np.testing.assert_allclose(g.numpy(), exact_x.grad.numpy(), rtol=0, atol=3e-7)


def test_float32_matches_torch_float32():
    x = np.random.default_rng(0).standard_normal((64, 33)).astype(np.float32) * 3
    grad_output = np.random.default_rng(1).standard_normal(x.shape).astype(np.float32)
    (ya, ga, _), (yb, gb, _) = (_gelu_pair(lib, x, grad_output) for lib in (torch, hookgrad))
    np.testing.assert_allclose(yb.detach().numpy(), ya.detach().numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(gb.numpy(), ga.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_special_values_like_torch(dtype):
    x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1e30, -1e30], dtype)
    (ya, ga, _), (yb, gb, _) = (_gelu_pair(lib, x, np.ones_like(x)) for lib in (torch, hookgrad))
    ours, theirs = yb.detach().numpy(), ya.detach().numpy()
    # GELU(+inf) is +inf, as torch gives it with AVX2; torch's float32 AVX-512 kernel gives NaN
    # there (its erf of inf), which is not copied
    assert ours[0] == np.inf and (theirs[0] == np.inf or np.isnan(theirs[0]))
    np.testing.assert_allclose(ours[1:], theirs[1:], atol=0)
    np.testing.assert_allclose(gb.numpy(), ga.numpy(), atol=0)


def test_phi_is_one_half_at_zero():
    x = np.zeros(5, np.float32)
    _, g, _ = _gelu_pair(hookgrad, x, np.ones_like(x))
    assert np.all(g.numpy() == 0.5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gradient_from_a_following_linear_matches_torch(dtype):
    # the gradient reaching GELU from a linear is its own, so its buffer takes the result
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((40, 24)).astype(dtype), rng.standard_normal((8, 24)).astype(dtype)
    grads = []
    for lib in (torch, hookgrad):
        a, weight = lib.tensor(x, requires_grad=True), lib.tensor(w)
        lib.nn.functional.linear(lib.nn.functional.gelu(a), weight).square().sum().backward()
        grads.append(a.grad.numpy())
    tol = 2e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(grads[1], grads[0], rtol=tol, atol=tol)


def test_a_gradient_the_user_holds_is_not_overwritten():
    x = np.random.default_rng(3).standard_normal((16, 16)).astype(np.float32)
    grad_output = hookgrad.ones(16, 16) * 2
    before = grad_output.numpy().copy()
    a = hookgrad.tensor(x, requires_grad=True)
    hookgrad.nn.functional.gelu(a).backward(grad_output)
    np.testing.assert_array_equal(grad_output.numpy(), before)


@pytest.mark.parametrize("layout", ["transposed", "strided"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layouts_that_miss_the_kernels(layout, dtype):
    base = np.random.default_rng(4).standard_normal((30, 18)).astype(dtype) * 2
    results = []
    for lib in (torch, hookgrad):
        a = lib.tensor(base, requires_grad=True)
        view = a.t() if layout == "transposed" else a[::2, 1::3]
        y = lib.nn.functional.gelu(view)
        grad_output = lib.tensor(np.random.default_rng(5).standard_normal(tuple(y.shape))
                                 .astype(dtype)).t().contiguous().t()  # column-major
        y.backward(grad_output)
        results.append((y.detach().numpy(), y.stride(), a.grad.numpy()))
    (ya, stride_a, ga), (yb, stride_b, gb) = results
    tol = 1e-6 if dtype == np.float32 else 1e-13
    assert stride_b == stride_a
    np.testing.assert_allclose(yb, ya, rtol=tol, atol=tol)
    np.testing.assert_allclose(gb, ga, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_is_computed_in_float32(dtype):
    x = np.random.default_rng(6).standard_normal((9, 7)) * 3
    ya = torch.nn.functional.gelu(torch.tensor(x, dtype=dtype))
    yb = hookgrad.nn.functional.gelu(hookgrad.tensor(x, dtype=getattr(hookgrad, str(dtype)[6:])))
    np.testing.assert_allclose(yb.float().numpy(), ya.float().numpy(), rtol=1e-2, atol=1e-3)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_double_backward_keeps_the_tensor_formula(dtype):
    x = np.random.default_rng(7).standard_normal((11, 5)).astype(dtype)
    grad_output = np.random.default_rng(8).standard_normal(x.shape).astype(dtype)
    second = []
    for lib in (torch, hookgrad):
        _, g, a = _gelu_pair(lib, x, grad_output, create_graph=True)
        assert g.requires_grad
        (gg,) = lib.autograd.grad(g.square().sum(), a)
        second.append(gg.numpy())
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(second[1], second[0], rtol=tol, atol=tol)


def test_several_threads_give_the_one_thread_answer():
    x = np.random.default_rng(9).standard_normal(3 * _gelu._CHUNK + 77).astype(np.float32)
    grad_output = np.random.default_rng(10).standard_normal(x.size).astype(np.float32)
    before = hookgrad.get_num_threads()
    answers = []
    try:
        for threads in (1, 3):
            hookgrad.set_num_threads(threads)
            answers.append((_gelu.gelu_float32(x),
                            _gelu.gelu_backward_float32(grad_output, x, np.empty_like(x))))
    finally:
        hookgrad.set_num_threads(before)
    np.testing.assert_array_equal(answers[0][0], answers[1][0])
    np.testing.assert_array_equal(answers[0][1], answers[1][1])


def test_a_retained_or_hooked_gradient_keeps_its_values():
    x = np.random.default_rng(11).standard_normal((12, 9))  # float64: exact comparison
    seen = {}
    results = []
    for lib in (torch, hookgrad):
        a = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.gelu(a * 2)
        y.retain_grad()
        y.register_hook(lambda g, lib=lib: seen.setdefault(lib.__name__, g))
        (y * 3).square().sum().backward()
        results.append((a.grad.numpy(), y.grad.numpy(), seen[lib.__name__].numpy()))
    for ours, theirs in zip(results[1], results[0]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)


def test_tiny_inputs_keep_their_relative_accuracy():
    # gelu(x) ~ x / 2 near 0: no cancellation may lose it (torch keeps it too)
    x = np.concatenate([np.geomspace(1e-37, 1e-3, 500), -np.geomspace(1e-37, 1e-3, 500)])
    x = x.astype(np.float32)
    y, g, _ = _gelu_pair(hookgrad, x, np.ones_like(x))
    exact, exact_g, _ = _gelu_pair(torch, x.astype(np.float64), np.ones(x.size))
    np.testing.assert_allclose(y.detach().numpy(), exact.detach().numpy(), rtol=4e-7, atol=0)
    np.testing.assert_allclose(g.numpy(), exact_g.numpy(), rtol=0, atol=2.5e-7)


@pytest.mark.parametrize("make", ["scalar", "empty", "expanded"])
def test_shapes_and_broadcast_views(make):
    results = []
    for lib in (torch, hookgrad):
        base = lib.tensor(np.array([[0.5, -1.5, 2.0]], np.float32), requires_grad=True)
        x = {"scalar": lambda: base[0, 1], "empty": lambda: base[:0],
             "expanded": lambda: base.expand(4, 3)}[make]()
        y = lib.nn.functional.gelu(x)
        (y * 2).sum().backward()
        results.append((y.detach().numpy(), tuple(y.shape), y.stride(), base.grad.numpy()))
    (ya, shape_a, stride_a, ga), (yb, shape_b, stride_b, gb) = results
    assert shape_b == shape_a and stride_b == stride_a
    np.testing.assert_allclose(yb, ya, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(gb, ga, rtol=1e-6, atol=1e-6)


def test_negative_tail_keeps_its_relative_accuracy():
    # x Phi(x) is tiny but far from float32's underflow down to x ~ -13: an absolute bound
    # alone would let it drift. The reference is math.erfc in float64 (torch's float64 GELU
    # takes 1 + erf, which cancels there)
    x = -np.linspace(3, 13, 20001).astype(np.float32)
    wide = x.astype(np.float64)
    exact = wide * 0.5 * np.vectorize(math.erfc)(-wide / math.sqrt(2))
    y, _, _ = _gelu_pair(hookgrad, x, np.ones_like(x))
    for bound, limit in ((6, 3e-6), (9, 6e-6), (13, 3e-5)):
        near = x >= -bound
        np.testing.assert_allclose(y.detach().numpy()[near], exact[near], rtol=limit, atol=0)


def _dense_and_random_float32():
    rng = np.random.default_rng(12)
    # (the slope's rounding is largest near 0, hence the narrow normal sample)
    return np.concatenate([np.linspace(-14, 14, 280001), rng.standard_normal(100000) * 4,
                           rng.standard_normal(100000) / 2,
                           rng.uniform(-14, 14, 100000)]).astype(np.float32)


def test_dense_grid_to_14_and_random_values_within_the_budget():
    # the kernels' accuracy budget against float64 torch as the exact reference: 2.5e-7 absolute
    # for GELU and its slope
    x = _dense_and_random_float32()
    exact, exact_slope, _ = _gelu_pair(torch, x.astype(np.float64), np.ones(x.size))
    y, slope, _ = _gelu_pair(hookgrad, x, np.ones_like(x))
    np.testing.assert_allclose(y.detach().numpy(), exact.detach().numpy(), rtol=0, atol=2.5e-7)
    np.testing.assert_allclose(slope.numpy(), exact_slope.numpy(), rtol=0, atol=2.5e-7)


def test_dense_grid_to_14_and_random_values_match_torch_float32():
    # torch's float32 AVX-512 kernel errs by up to 1.1e-6 (near |x| = 3.5), ours by 2.5e-7
    x = _dense_and_random_float32()
    grad_output = np.random.default_rng(13).standard_normal(x.size).astype(np.float32)
    (ya, ga, _), (yb, gb, _) = (_gelu_pair(lib, x, grad_output) for lib in (torch, hookgrad))
    np.testing.assert_allclose(yb.detach().numpy(), ya.detach().numpy(), rtol=0, atol=1.5e-6)
    np.testing.assert_allclose(gb.numpy(), ga.numpy(), rtol=1.5e-6, atol=1.5e-6)


def test_more_special_magnitudes_like_torch():
    # subnormals, tiny and huge magnitudes and the far tails, where torch's float32 is exact too
    x = np.array([-3.4e38, 1e-40, -1e-40, 1e-45, -1e-45, 1e-20, -1e-20, -14.5, -20, -100,
                  14, 20, 100, 3e19, -3e19], np.float32)
    (ya, ga, _), (yb, gb, _) = (_gelu_pair(lib, x, np.ones_like(x)) for lib in (torch, hookgrad))
    np.testing.assert_allclose(yb.detach().numpy(), ya.detach().numpy(), rtol=2e-7, atol=0)
    np.testing.assert_array_equal(gb.numpy(), ga.numpy())


def test_the_largest_float32_gives_itself():
    # exact GELU of float32's largest value is that value; torch's float32 kernel overflows to
    # inf there (its x / 2 (1 + erf) rounds up), which is not copied
    x = np.array([np.finfo(np.float32).max], np.float32)
    y, slope, _ = _gelu_pair(hookgrad, x, np.ones_like(x))
    assert y.detach().numpy()[0] == x[0] and slope.numpy()[0] == 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_double_backward_over_both_tails(dtype):
    x = np.concatenate([np.linspace(-9, 9, 721), [0.0, -0.0, 1e-20, -1e-20, 30.0, -30.0]])
    x = x.astype(dtype)
    grad_output = np.random.default_rng(14).standard_normal(x.size).astype(dtype)
    second = []
    for lib in (torch, hookgrad):
        _, g, a = _gelu_pair(lib, x, grad_output, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), a)
        second.append((g.detach().numpy(), gg.numpy()))
    tol = 2e-6 if dtype == np.float32 else 1e-12
    for ours, theirs in zip(second[1], second[0]):
        np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol)
