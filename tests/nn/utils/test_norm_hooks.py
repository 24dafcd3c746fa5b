"""The hook-based nn.utils.weight_norm and spectral_norm against torch: the hooks each
registers, parameter and buffer names, values and gradients (u and v drawn from the same
seed), removal, the deprecation warning and spectral norm's versioned checkpoints."""
import warnings
from collections import OrderedDict

import numpy as np
import pytest
import torch

import hookgrad
from tests.conftest import assert_close


def _layer(lib, kind):
    return {"linear": lambda: lib.nn.Linear(4, 3), "conv": lambda: lib.nn.Conv2d(2, 3, 3),
            "conv_t": lambda: lib.nn.ConvTranspose1d(2, 3, 3)}[kind]().double()


def _both(kind, apply, seed=5):
    modules = []
    for lib in (torch, hookgrad):
        lib.manual_seed(seed)
        module = _layer(lib, kind)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            apply(lib.nn.utils, module)
        modules.append(module)
    return modules


def _hook_types(module):
    return ([type(h).__name__ for h in module._forward_pre_hooks.values()],
            [type(h).__name__ for h in module._state_dict_hooks.values()],
            [type(getattr(h, "hook", h)).__name__ for h in
             module._load_state_dict_pre_hooks.values()])


def _input(kind):
    shape = {"linear": (2, 4), "conv": (1, 2, 5, 5), "conv_t": (1, 2, 4)}[kind]
    return np.random.default_rng(0).standard_normal(shape)


def _run_and_compare(t_module, h_module, kind, steps=2):
    for _ in range(steps):
        x = _input(kind)
        t_out, h_out = t_module(torch.tensor(x)), h_module(hookgrad.tensor(x))
        assert_close(h_out, t_out)
        (t_out ** 2).sum().backward()
        (h_out ** 2).sum().backward()
    for (name, t_value), (h_name, h_value) in zip(t_module.state_dict(keep_vars=True).items(),
                                                  h_module.state_dict(keep_vars=True).items()):
        assert h_name == name
        assert_close(h_value, t_value, what=name)
        if t_value.grad is not None:
            assert_close(h_value.grad, t_value.grad, rtol=1e-9, atol=1e-12, what=name)


@pytest.mark.parametrize("kind", ["linear", "conv", "conv_t"])
@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_matches_torch(kind, dim):
    t_module, h_module = _both(kind, lambda utils, m: utils.weight_norm(m, dim=dim))
    assert _hook_types(h_module) == _hook_types(t_module) == (["WeightNorm"], [], [])
    assert [n for n, _ in h_module.named_parameters()] == \
        [n for n, _ in t_module.named_parameters()]
    assert h_module.weight_g.shape == t_module.weight_g.shape
    _run_and_compare(t_module, h_module, kind)
    assert h_module.weight.grad_fn.name() == t_module.weight.grad_fn.name()


def test_weight_norm_warns_it_is_deprecated_and_refuses_twice():
    for lib in (torch, hookgrad):
        module = lib.nn.Linear(3, 2)
        with pytest.warns(FutureWarning, match="`torch.nn.utils.weight_norm` is deprecated in "
                          "favor of `torch.nn.utils.parametrizations.weight_norm`."):
            lib.nn.utils.weight_norm(module)
        with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks on the "
                           "same parameter weight"), warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            lib.nn.utils.weight_norm(module)


def test_remove_weight_norm_leaves_the_normalized_parameter():
    t_module, h_module = _both("conv", lambda utils, m: utils.weight_norm(m))
    for module in (t_module, h_module):
        utils = torch.nn.utils if module is t_module else hookgrad.nn.utils
        utils.remove_weight_norm(module)
        assert not module._forward_pre_hooks
        with pytest.raises(ValueError, match="weight_norm of 'weight' not found in"):
            utils.remove_weight_norm(module)
    assert [n for n, _ in h_module.named_parameters()] == \
        [n for n, _ in t_module.named_parameters()]
    assert_close(h_module.weight, t_module.weight)


@pytest.mark.parametrize("kind", ["linear", "conv", "conv_t"])
@pytest.mark.parametrize("iterations", [1, 3])
def test_spectral_norm_matches_torch(kind, iterations):
    t_module, h_module = _both(kind, lambda utils, m: utils.spectral_norm(
        m, n_power_iterations=iterations))
    assert _hook_types(h_module) == _hook_types(t_module) == (
        ["SpectralNorm"], ["SpectralNormStateDictHook"], ["SpectralNormLoadStateDictPreHook"])
    assert [n for n, _ in h_module.named_buffers()] == [n for n, _ in t_module.named_buffers()]
    assert_close(h_module.weight_u, t_module.weight_u)
    _run_and_compare(t_module, h_module, kind)
    t_module.eval()
    h_module.eval()
    _run_and_compare(t_module, h_module, kind, steps=1)


def test_spectral_norm_metadata_and_loading_both_ways():
    t_module, h_module = _both("linear", lambda utils, m: utils.spectral_norm(m))
    t_state, h_state = t_module.state_dict(), h_module.state_dict()
    assert dict(h_state._metadata) == dict(t_state._metadata)
    assert h_state._metadata[""]["spectral_norm"] == {"weight.version": 1}
    converted = OrderedDict((k, hookgrad.tensor(v.numpy() * 2)) for k, v in t_state.items())
    converted._metadata = t_state._metadata
    assert str(h_module.load_state_dict(converted)) == "<All keys matched successfully>"
    assert_close(h_module.weight_orig, t_module.weight_orig * 2)


def test_spectral_norm_upgrades_a_checkpoint_without_version():
    # the old layout: weight (the normalized value) and weight_u, but no weight_v
    t_module, h_module = _both("linear", lambda utils, m: utils.spectral_norm(m))
    loaded = []
    for lib, module in ((torch, t_module), (hookgrad, h_module)):
        state = OrderedDict((k, v.clone()) for k, v in module.state_dict().items())
        state["weight"] = state["weight_orig"] / 2.5
        del state["weight_v"]
        state._metadata = {"": {"version": 1}}
        fresh = _layer(lib, "linear")
        lib.nn.utils.spectral_norm(fresh)
        fresh.load_state_dict(state)
        loaded.append(fresh)
    assert_close(loaded[1].weight_v, loaded[0].weight_v, rtol=1e-8, atol=1e-10)
    loaded[0].eval()
    loaded[1].eval()
    x = _input("linear")
    assert_close(loaded[1](hookgrad.tensor(x)), loaded[0](torch.tensor(x)), rtol=1e-8)


def test_remove_spectral_norm_matches_torch():
    t_module, h_module = _both("conv", lambda utils, m: utils.spectral_norm(m))
    for module, utils in ((t_module, torch.nn.utils), (h_module, hookgrad.nn.utils)):
        utils.remove_spectral_norm(module)
        with pytest.raises(ValueError, match="spectral_norm of 'weight' not found in"):
            utils.remove_spectral_norm(module)
    # torch wraps the load pre-hook, so its removal loop does not find it: it stays in both
    assert _hook_types(h_module) == _hook_types(t_module)
    assert [n for n, _ in h_module.named_parameters()] == \
        [n for n, _ in t_module.named_parameters()]
    assert_close(h_module.weight, t_module.weight)


@pytest.mark.parametrize("case", ["twice", "iterations", "none"])
def test_spectral_norm_errors_match_torch(case):
    errors = []
    for lib in (torch, hookgrad):
        module = lib.nn.Linear(3, 2, bias=case != "none")
        with pytest.raises((RuntimeError, ValueError)) as info:
            if case == "twice":
                lib.nn.utils.spectral_norm(module)
                lib.nn.utils.spectral_norm(module)
            elif case == "iterations":
                lib.nn.utils.spectral_norm(module, n_power_iterations=0)
            else:
                lib.nn.utils.spectral_norm(module, "bias")
        errors.append((type(info.value), str(info.value)))
    assert errors[1] == errors[0]
