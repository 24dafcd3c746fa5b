"""hookgrad.amp.GradScaler("cpu") against torch's: scale, unscale_, steps skipped on inf/NaN,
growth and backoff of the scale, state_dict, settings and misuse errors."""
import warnings

import numpy as np
import pytest
import torch

import hookgrad


def _caught(fn):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            result = fn()
        except Exception as error:
            result = (type(error).__name__, str(error))
    return result, [(w.category.__name__, str(w.message)) for w in seen]


def _same(fn):
    assert repr(_caught(lambda: fn(hookgrad))) == repr(_caught(lambda: fn(torch)))


def _model(lib):
    rng = np.random.default_rng(0)
    layer = lib.nn.Linear(3, 2)
    with lib.no_grad():
        layer.weight.copy_(lib.tensor(rng.standard_normal((2, 3)).astype(np.float32)))
        layer.bias.copy_(lib.tensor(rng.standard_normal(2).astype(np.float32)))
    return layer, lib.optim.SGD(layer.parameters(), lr=0.1)


def _batch(lib, i):
    return lib.tensor(np.random.default_rng(i).standard_normal((4, 3)).astype(np.float32))


def _train(lib, poison, **settings):
    """Several steps; ``poison[i]`` puts inf or NaN into a gradient at step i."""
    layer, optimizer = _model(lib)
    scaler = lib.amp.GradScaler("cpu", **settings)
    history = []
    for i, bad in enumerate(poison):
        optimizer.zero_grad()
        scaled = scaler.scale(layer(_batch(lib, i)).pow(2).sum())
        scaled.backward()
        if bad:
            layer.weight.grad[0, 0] = float(bad)
        before = layer.weight.detach().clone()
        returned = scaler.step(optimizer)
        scaler.update()
        history.append((float(f"{scaled.item():.4g}"), returned,
                        bool((layer.weight.detach() == before).all()), scaler.get_scale(),
                        scaler.state_dict().get("_growth_tracker")))
    return history, layer.weight.detach().numpy().round(5).tolist()


@pytest.mark.parametrize("poison,settings", [
    ([0, 0, 0, 0, 0], dict(init_scale=8.0, growth_interval=2)),
    ([0, "inf", 0, 0, "nan", 0], dict(init_scale=8.0, growth_interval=2)),
    ([0, "-inf", "nan", 0], dict(init_scale=2.0 ** 10, growth_factor=3.0, backoff_factor=0.25,
                                 growth_interval=1)),
    ([0, 0, 0], dict(enabled=False)),
], ids=["clean", "inf-nan", "settings", "disabled"])
def test_steps_updates_and_skips_match_torch(poison, settings):
    assert repr(_train(hookgrad, poison, **settings)) == repr(_train(torch, poison, **settings))


def test_unscale_divides_gradients_and_step_then_skips_unscaling():
    def program(lib):
        layer, optimizer = _model(lib)
        scaler = lib.amp.GradScaler("cpu", init_scale=16.0)
        scaler.scale(layer(_batch(lib, 0)).sum()).backward()
        scaled = layer.weight.grad.clone()
        scaler.unscale_(optimizer)
        unscaled = layer.weight.grad.clone()
        scaler.step(optimizer)
        return (scaled.numpy().round(4).tolist(), unscaled.numpy().round(4).tolist(),
                layer.weight.detach().numpy().round(4).tolist())
    _same(program)


def test_scale_takes_tensors_and_nested_iterables():
    def program(lib):
        scaler = lib.amp.GradScaler("cpu", init_scale=4.0)
        out = scaler.scale([lib.ones(2), (lib.ones(1, dtype=lib.bfloat16),)])
        low = scaler.scale(lib.ones(3, dtype=lib.bfloat16))
        zero_dim = scaler.scale(lib.tensor(2.0, dtype=lib.bfloat16))
        return (type(out).__name__, type(out[1]).__name__, out[0].tolist(), str(out[1][0].dtype),
                str(low.dtype), str(zero_dim.dtype))
    _same(program)


@pytest.mark.parametrize("misuse", [
    lambda lib, s, o: s.scale(3.0),
    lambda lib, s, o: (s.scale(lib.ones(1)), s.update()),
    lambda lib, s, o: s.update(),
    lambda lib, s, o: (s.scale(lib.ones(1)), s.unscale_(o), s.unscale_(o)),
    lambda lib, s, o: (s.scale(lib.ones(1)), s.step(o), s.step(o)),
    lambda lib, s, o: (s.scale(lib.ones(1)), s.step(o), s.unscale_(o)),
    lambda lib, s, o: s.step(o, closure=lambda: None),
    lambda lib, s, o: s.load_state_dict({}),
    lambda lib, s, o: lib.amp.GradScaler("cpu", growth_factor=0.5),
    lambda lib, s, o: lib.amp.GradScaler("cpu", backoff_factor=2.0),
], ids=range(10))
def test_misuse_raises_as_torch(misuse):
    def program(lib):
        _, optimizer = _model(lib)
        return misuse(lib, lib.amp.GradScaler("cpu"), optimizer)
    _same(program)


def test_state_dict_settings_and_load_match_torch():
    def program(lib):
        scaler = lib.amp.GradScaler("cpu")
        fresh = (scaler.state_dict(), scaler.get_scale(), scaler.is_enabled(),
                 scaler.get_growth_factor(), scaler.get_backoff_factor(),
                 scaler.get_growth_interval())
        scaler.set_growth_factor(3.0)
        scaler.set_backoff_factor(0.1)
        scaler.set_growth_interval(7)
        changed = scaler.state_dict()
        other = lib.amp.GradScaler("cpu")
        other.load_state_dict({"scale": 4.0, "growth_factor": 3.0, "backoff_factor": 0.25,
                               "growth_interval": 5, "_growth_tracker": 2})
        loaded = (other.state_dict(), other.get_scale())
        other.scale(lib.ones(1))
        other.update(16.0)
        set_new = other.get_scale()
        disabled = lib.amp.GradScaler("cpu", enabled=False)
        return fresh, changed, loaded, set_new, (disabled.state_dict(), disabled.get_scale(),
                                                 disabled.scale(lib.ones(1)).tolist())
    _same(program)


def test_growth_tracker_survives_a_state_dict_round_trip():
    def program(lib):
        layer, optimizer = _model(lib)
        scaler = lib.amp.GradScaler("cpu", init_scale=8.0, growth_interval=3)
        for i in range(2):
            optimizer.zero_grad()
            scaler.scale(layer(_batch(lib, i)).sum()).backward()
            scaler.step(optimizer)
            scaler.update()
        copy = lib.amp.GradScaler("cpu")
        copy.load_state_dict(scaler.state_dict())
        optimizer.zero_grad()
        copy.scale(layer(_batch(lib, 5)).sum()).backward()
        copy.step(optimizer)
        copy.update()
        return copy.state_dict()
    _same(program)


@pytest.mark.parametrize("make", [
    lambda lib: lib.amp.GradScaler(),
    lambda lib: lib.amp.GradScaler("cuda"),
    lambda lib: lib.cpu.amp.GradScaler(init_scale=2.0),
], ids=["default", "cuda", "cpu.amp"])
def test_construction_warnings_match_torch(make):
    _same(lambda lib: (lambda s: (s.is_enabled(), s.get_scale(), s.state_dict()))(make(lib)))


@pytest.mark.parametrize("dtype_name", ["float16", "bfloat16"])
def test_half_precision_gradients_as_torch(dtype_name):
    """float16 gradients are refused (unscale_ and step), bfloat16 ones unscaled."""
    def program(lib):
        parameter = lib.nn.Parameter(lib.ones(2, dtype=getattr(lib, dtype_name)))
        optimizer = lib.optim.SGD([parameter], lr=0.1)
        scaler = lib.amp.GradScaler("cpu", init_scale=4.0)
        scaler.scale((parameter * 2).sum()).backward()
        unscaled = _caught(lambda: (scaler.unscale_(optimizer), parameter.grad.tolist()))
        stepped = _caught(lambda: (scaler.step(optimizer), parameter.detach().tolist()))
        return unscaled, stepped
    _same(program)


def test_two_optimizers_one_with_inf():
    def program(lib):
        first = lib.nn.Parameter(lib.ones(2))
        second = lib.nn.Parameter(lib.ones(2))
        optimizers = [lib.optim.SGD([p], lr=0.1) for p in (first, second)]
        scaler = lib.amp.GradScaler("cpu", init_scale=4.0, growth_interval=1)
        scaler.scale((first * 2).sum() + (second * float("inf")).sum()).backward()
        for optimizer in optimizers:
            scaler.step(optimizer)
        scaler.update()
        return first.detach().tolist(), second.detach().tolist(), scaler.get_scale()
    _same(program)
