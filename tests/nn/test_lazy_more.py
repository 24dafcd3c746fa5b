"""Lazy convolutions and norms against torch: the same shapes and draws for the same seed, the
class each becomes, hooks order, state dicts both ways and torch's errors."""
import numpy as np
import pytest
import torch

import hookgrad
from tests.conftest import assert_close, error_of, raised

RNG = np.random.default_rng(0)

MODULES = {
    "LazyConv1d": ((4, 3), dict(stride=2, padding=1), (2, 3, 9)),
    "LazyConv1d_unbatched": ((4, 3), dict(), (3, 9)),
    "LazyConv2d": ((4, 3), dict(padding=1, groups=2, bias=False), (2, 6, 5, 5)),
    "LazyConv3d": ((2, 2), dict(), (1, 3, 4, 4, 4)),
    "LazyConvTranspose1d": ((6, 3), dict(stride=2, groups=2), (1, 4, 5)),
    "LazyConvTranspose2d": ((3, 2), dict(output_padding=1, stride=2), (2, 2, 3, 3)),
    "LazyConvTranspose3d": ((2, 2), dict(), (1, 3, 3, 3, 3)),
    "LazyBatchNorm1d": ((), dict(), (4, 3)),
    "LazyBatchNorm2d": ((), dict(momentum=None), (4, 3, 2, 2)),
    "LazyBatchNorm3d": ((), dict(affine=False), (2, 3, 2, 2, 2)),
    "LazyInstanceNorm1d": ((), dict(affine=True, track_running_stats=True), (2, 3, 5)),
    "LazyInstanceNorm2d": ((), dict(affine=True), (2, 3, 4, 4)),
    "LazyInstanceNorm3d": ((), dict(), (2, 3, 2, 2, 2)),
}


def _build(lib, key):
    args, kwargs, _ = MODULES[key]
    return getattr(lib.nn, key.split("_")[0])(*args, **kwargs)


def _state(module) -> dict:
    lazy = ("UninitializedParameter", "UninitializedBuffer")
    return {name: (type(value).__name__,
                   None if type(value).__name__ in lazy else tuple(value.shape))
            for name, value in module.state_dict().items()}


@pytest.mark.parametrize("key", sorted(MODULES))
def test_lazy_module_infers_and_draws_as_torch(key):
    data = RNG.standard_normal(MODULES[key][2]).astype(np.float32)
    results = []
    for lib in (torch, hookgrad):
        lib.manual_seed(3)
        module = _build(lib, key)
        before = (type(module).__name__, module.has_uninitialized_params(), _state(module))
        inputs = lib.tensor(data, requires_grad=True)
        out = module(inputs)
        out.sum().backward()
        after = (type(module).__name__, hasattr(module, "has_uninitialized_params"), _state(module),
                 repr(module))
        results.append((before, after, out, inputs.grad, dict(module.state_dict())))
    (tb, ta, tout, tgrad, tstate), (hb, ha, hout, hgrad, hstate) = results
    assert hb == tb
    assert ha == ta
    assert_close(hout, tout)
    assert_close(hgrad, tgrad)
    for name in tstate:
        assert_close(hstate[name], tstate[name], what=name)


def test_inference_runs_before_the_users_pre_hooks():
    for lib in (torch, hookgrad):
        module = lib.nn.LazyConv1d(2, 3)
        seen = []
        module.register_forward_pre_hook(lambda m, args: seen.append(tuple(m.weight.shape)))
        module(lib.randn(1, 5, 7))
        module(lib.randn(1, 5, 7))
        assert seen == [(2, 5, 3)] * 2
        assert not hasattr(module, "_initialize_hook")


@pytest.mark.parametrize("key", ["LazyConv2d", "LazyConvTranspose1d", "LazyBatchNorm2d",
                                 "LazyInstanceNorm1d"])
def test_state_dict_of_a_trained_layer_loads_into_a_lazy_one(key):
    data = RNG.standard_normal(MODULES[key][2]).astype(np.float32)
    outcomes = []
    for lib in (torch, hookgrad):
        trained = _build(lib, key)
        trained(lib.tensor(data))
        fresh = _build(lib, key)
        result = fresh.load_state_dict(trained.state_dict())
        assert not result.missing_keys and not result.unexpected_keys
        assert type(fresh).__name__ == key  # still lazy: no forward yet
        assert not fresh.has_uninitialized_params()
        assert hasattr(fresh, "_initialize_hook")  # inference still runs at the first call
        for name, value in trained.state_dict().items():
            assert lib.equal(fresh.state_dict()[name], value)
        # torch's lazy instance norm keeps num_features 0 here and its forward then refuses
        error = error_of(lambda: fresh(lib.tensor(data)))
        if error is None:
            assert type(fresh).__name__ == key[4:]
            assert lib.equal(fresh(lib.tensor(data)), trained(lib.tensor(data)))
        outcomes.append(error)
    assert outcomes[0] == outcomes[1]


def test_uninitialized_state_dict_round_trip():
    for lib in (torch, hookgrad):
        state = lib.nn.LazyBatchNorm1d().state_dict()
        assert [type(v).__name__ for v in state.values()] == [
            "UninitializedParameter", "UninitializedParameter", "UninitializedBuffer",
            "UninitializedBuffer", "Tensor"]
        other = lib.nn.LazyBatchNorm1d()
        other.load_state_dict(state)
        assert other.has_uninitialized_params()
    assert hookgrad.nn.parameter.is_lazy(hookgrad.nn.UninitializedBuffer())
    assert not hookgrad.nn.parameter.is_lazy(hookgrad.zeros(1))
    for lib in (torch, hookgrad):
        for value in (lib.nn.UninitializedParameter(), lib.nn.UninitializedBuffer()):
            assert raised(lambda _: value.shape, lib) == raised(
                lambda _: torch.nn.UninitializedBuffer().shape, torch)


@pytest.mark.parametrize("make", [
    lambda lib: lib.nn.LazyConv1d(4, 3, groups=2)(lib.randn(1, 3, 5)),
    lambda lib: lib.nn.LazyConv1d(4, 3)(lib.randn(1, 1, 3, 5)),
    lambda lib: lib.nn.LazyConvTranspose2d(4, 3)(lib.randn(3, 5)),
])
def test_lazy_errors_as_torch(make):
    assert raised(make, hookgrad) == raised(make, torch)
