"""Gradient clipping and parameter vectors against torch."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close

SHAPES = [(3, 4), (5,), (), (2, 1, 3)]


def _params(lib, dtype, seed=0, grads=True, scale=1.0):
    rng = np.random.default_rng(seed)
    params = []
    for i, shape in enumerate(SHAPES):
        p = lib.tensor(rng.standard_normal(shape).astype(dtype), requires_grad=True)
        if grads and i != 2:  # one parameter without a gradient: ignored
            p.grad = lib.tensor((scale * rng.standard_normal(shape)).astype(dtype))
        params.append(p)
    return params


def _compare_grads(hg_params, th_params):
    for h, t in zip(hg_params, th_params):
        if t.grad is None:
            assert h.grad is None
        else:
            assert_close(h.grad, t.grad)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("norm_type", [2.0, 1, float("inf"), 3.0, 0.5, 0, -float("inf")])
@pytest.mark.parametrize("max_norm", [0.3, 1e3])
def test_clip_grad_norm_returns_the_norm_and_scales_like_torch(dtype, norm_type, max_norm):
    hg_params, th_params = _params(hookgrad, dtype), _params(torch, dtype)
    hg_total = hookgrad.nn.utils.clip_grad_norm_(hg_params, max_norm, norm_type)
    th_total = torch.nn.utils.clip_grad_norm_(th_params, max_norm, norm_type)
    assert_close(hg_total, th_total)
    _compare_grads(hg_params, th_params)


def test_clip_grad_norm_of_mixed_dtypes_promotes_the_total():
    def build(lib):
        a = lib.tensor([3.0, 4.0], requires_grad=True)
        b = lib.tensor(np.array([1.0, 2.0, 2.0]), requires_grad=True)
        a.grad, b.grad = lib.tensor([3.0, 4.0]), lib.tensor(np.array([1.0, 2.0, 2.0]))
        return [a, b]

    hg_params, th_params = build(hookgrad), build(torch)
    assert_close(hookgrad.nn.utils.clip_grad_norm_(hg_params, 1.0),
                 torch.nn.utils.clip_grad_norm_(th_params, 1.0))
    _compare_grads(hg_params, th_params)


def test_clip_grad_norm_accepts_a_single_tensor_and_a_generator():
    hg_params, th_params = _params(hookgrad, np.float64), _params(torch, np.float64)
    assert_close(hookgrad.nn.utils.clip_grad_norm_(hg_params[0], 0.5),
                 torch.nn.utils.clip_grad_norm_(th_params[0], 0.5))
    assert_close(hookgrad.nn.utils.clip_grad_norm_((p for p in hg_params), 0.5),
                 torch.nn.utils.clip_grad_norm_((p for p in th_params), 0.5))
    _compare_grads(hg_params, th_params)


def test_clip_grad_norm_of_nothing_is_a_zero_default_dtype_tensor():
    assert_close(hookgrad.nn.utils.clip_grad_norm_([], 1.0),
                 torch.nn.utils.clip_grad_norm_([], 1.0))


def test_clip_grad_norm_bumps_each_grad_version_once():
    hg_params, th_params = _params(hookgrad, np.float32), _params(torch, np.float32)
    hookgrad.nn.utils.clip_grad_norm_(hg_params, 0.1)
    torch.nn.utils.clip_grad_norm_(th_params, 0.1)
    assert [p.grad._version for p in hg_params if p.grad is not None] == \
        [p.grad._version for p in th_params if p.grad is not None]


@pytest.mark.parametrize("bad", [float("inf"), float("nan")])
def test_non_finite_norm_raises_when_asked_like_torch(bad):
    messages = []
    for lib in (torch, hookgrad):
        p = lib.tensor([1.0, 2.0], requires_grad=True)
        p.grad = lib.tensor([bad, 1.0])
        with pytest.raises(RuntimeError) as info:
            lib.nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
        messages.append(str(info.value))
    assert messages[1] == messages[0]


def test_non_finite_norm_scales_anyway_by_default():
    hg = hookgrad.tensor([1.0, 2.0], requires_grad=True)
    th = torch.tensor([1.0, 2.0], requires_grad=True)
    hg.grad, th.grad = hookgrad.tensor([float("inf"), 1.0]), torch.tensor([float("inf"), 1.0])
    assert_close(hookgrad.nn.utils.clip_grad_norm_([hg], 1.0),
                 torch.nn.utils.clip_grad_norm_([th], 1.0))
    assert_close(hg.grad, th.grad)


@pytest.mark.parametrize("norm_type", ["inf", "-inf"])
def test_inf_norm_of_an_empty_gradient_is_an_error_like_torch(norm_type):
    messages = []
    for lib in (torch, hookgrad):
        p = lib.zeros(0, requires_grad=True)
        p.grad = lib.zeros(0)
        with pytest.raises(RuntimeError) as info:
            lib.nn.utils.clip_grad_norm_([p], 1.0, norm_type=norm_type)
        messages.append(str(info.value))
    assert messages[1] == messages[0]


def test_get_total_norm_and_clip_grads_with_norm_compose_to_clip_grad_norm():
    hg_params, th_params = _params(hookgrad, np.float64), _params(torch, np.float64)
    hg_total = hookgrad.nn.utils.get_total_norm([p.grad for p in hg_params if p.grad is not None],
                                                norm_type=1)
    th_total = torch.nn.utils.get_total_norm([p.grad for p in th_params if p.grad is not None],
                                             norm_type=1)
    assert_close(hg_total, th_total)
    hookgrad.nn.utils.clip_grads_with_norm_(hg_params, 0.7, hg_total)
    torch.nn.utils.clip_grads_with_norm_(th_params, 0.7, th_total)
    _compare_grads(hg_params, th_params)


def test_deprecated_clip_grad_norm_warns_and_clips():
    hg_params, th_params = _params(hookgrad, np.float64), _params(torch, np.float64)
    with pytest.warns(FutureWarning):
        hg_total = hookgrad.nn.utils.clip_grad_norm(hg_params, 0.5)
    with pytest.warns(FutureWarning):
        th_total = torch.nn.utils.clip_grad_norm(th_params, 0.5)
    assert_close(hg_total, th_total)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("clip_value", [0.5, 3])
def test_clip_grad_value_clamps_like_torch(dtype, clip_value):
    hg_params, th_params = _params(hookgrad, dtype, scale=2), _params(torch, dtype, scale=2)
    assert hookgrad.nn.utils.clip_grad_value_(hg_params, clip_value) is None
    torch.nn.utils.clip_grad_value_(th_params, clip_value)
    _compare_grads(hg_params, th_params)


def test_parameters_to_vector_is_a_differentiable_cat():
    hg_params, th_params = _params(hookgrad, np.float64), _params(torch, np.float64)
    hg_vector = hookgrad.nn.utils.parameters_to_vector(hg_params)
    th_vector = torch.nn.utils.parameters_to_vector(th_params)
    assert_close(hg_vector, th_vector)
    assert hg_vector.grad_fn.name() == th_vector.grad_fn.name()


def test_vector_to_parameters_shares_the_vector_memory():
    hg_params, th_params = _params(hookgrad, np.float32, grads=False), _params(
        torch, np.float32, grads=False)
    total = sum(p.numel() for p in th_params)
    values = np.arange(total, dtype=np.float32)
    hg_vector, th_vector = hookgrad.tensor(values.copy()), torch.tensor(values.copy())
    hookgrad.nn.utils.vector_to_parameters(hg_vector, hg_params)
    torch.nn.utils.vector_to_parameters(th_vector, th_params)
    for h, t in zip(hg_params, th_params):
        assert_close(h, t)
    hg_vector.numpy()[0] = -1.0
    assert hg_params[0].detach().numpy().flat[0] == -1.0


def test_vector_to_parameters_needs_a_tensor():
    messages = []
    for lib in (torch, hookgrad):
        with pytest.raises(TypeError) as info:
            lib.nn.utils.vector_to_parameters([1.0], [lib.zeros(1, requires_grad=True)])
        messages.append(str(info.value))
    assert messages[1] == messages[0]
