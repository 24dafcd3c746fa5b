"""optim.swa_utils against torch: averaged weights (SWA, EMA, custom), BatchNorm refresh and the
SWALR schedule, with the same models and data in both libraries."""
import math
import pickle
import warnings

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close

RNG = np.random.default_rng(7)
WEIGHTS = {"0.weight": RNG.standard_normal((4, 3)), "0.bias": RNG.standard_normal(4),
           "1.weight": RNG.standard_normal(4), "1.bias": RNG.standard_normal(4)}
BATCHES = [RNG.standard_normal((5, 3)) for _ in range(4)]


def _model(lib, dtype=np.float64):
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4))
    if dtype == np.float64:
        model = model.double()
    model.load_state_dict({k: lib.tensor(v.astype(dtype)) for k, v in WEIGHTS.items()},
                          strict=False)
    return model


def _averaging_run(lib, dtype, use_buffers=False, **options):
    """Train-like updates (a fixed step per round) folded into an AveragedModel."""
    model = _model(lib, dtype)
    averaged = lib.optim.swa_utils.AveragedModel(model, use_buffers=use_buffers, **options)
    for round_ in range(6):
        with lib.no_grad():
            for index, param in enumerate(model.parameters()):
                param.add_(lib.sin(param * (round_ + 1) + index))
        model.train()
        model(lib.tensor(BATCHES[round_ % 4].astype(dtype)))  # moves the running statistics
        averaged.update_parameters(model)
    return averaged


def _options(lib, kind):
    utils = lib.optim.swa_utils
    return {"swa": {}, "ema_multi": {"multi_avg_fn": utils.get_ema_multi_avg_fn(0.7)},
            "swa_multi": {"multi_avg_fn": utils.get_swa_multi_avg_fn()},
            "ema": {"avg_fn": utils.get_ema_avg_fn(0.9)},
            "swa_fn": {"avg_fn": utils.get_swa_avg_fn()}}[kind]


@pytest.mark.parametrize("use_buffers", [False, True])
@pytest.mark.parametrize("kind", ["swa", "ema_multi", "swa_multi", "ema", "swa_fn"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_averaged_weights_and_buffers_follow_torch(kind, dtype, use_buffers):
    try:
        th = _averaging_run(torch, dtype, use_buffers, **_options(torch, kind))
    except RuntimeError as error:  # the SWA list mean refuses the integer batch counter
        with pytest.raises(RuntimeError) as caught:
            _averaging_run(hookgrad, dtype, use_buffers, **_options(hookgrad, kind))
        assert str(caught.value) == str(error)
        return
    hg = _averaging_run(hookgrad, dtype, use_buffers, **_options(hookgrad, kind))
    hg_state, th_state = hg.state_dict(), th.state_dict()
    assert list(hg_state) == list(th_state)
    for key, value in th_state.items():
        assert_close(hg_state[key], value, what=key)


def test_averaged_model_forward_is_the_copy_and_the_original_is_untouched():
    for lib in (hookgrad, torch):
        model = _model(lib)
        averaged = lib.optim.swa_utils.AveragedModel(model)
        assert averaged.module is not model
        assert averaged.module[0].weight is not model[0].weight
    x = BATCHES[0]
    outputs = [lib.optim.swa_utils.AveragedModel(_model(lib)).eval()(lib.tensor(x))
               for lib in (hookgrad, torch)]
    assert_close(*outputs)


def test_avg_fn_and_multi_avg_fn_together_are_refused():
    for lib in (hookgrad, torch):
        utils = lib.optim.swa_utils
        with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
            utils.AveragedModel(_model(lib), avg_fn=utils.get_swa_avg_fn(),
                                multi_avg_fn=utils.get_swa_multi_avg_fn())


@pytest.mark.parametrize("decay", [-0.1, 1.5])
def test_bad_decay_raises_torchs_error(decay):
    for name in ("get_ema_avg_fn", "get_ema_multi_avg_fn"):
        with pytest.raises(ValueError) as expected:
            getattr(torch.optim.swa_utils, name)(decay)
        with pytest.raises(ValueError) as got:
            getattr(hookgrad.optim.swa_utils, name)(decay)
        assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("with_labels", [False, True])
def test_update_bn_recomputes_running_statistics(with_labels):
    results = []
    for lib in (hookgrad, torch):
        model = _model(lib)
        model.eval()
        batches = [lib.tensor(b) for b in BATCHES]
        loader = [(b, lib.zeros(5)) for b in batches] if with_labels else batches
        lib.optim.swa_utils.update_bn(loader, model)
        assert not model.training and model[1].momentum == 0.1
        results.append(model.state_dict())
    for key, value in results[1].items():
        assert_close(results[0][key], value, what=key)


def test_update_bn_without_batchnorm_does_not_run_the_model():
    calls = []
    model = hookgrad.nn.Linear(3, 2)
    model.register_forward_hook(lambda *args: calls.append(1))
    hookgrad.optim.swa_utils.update_bn([hookgrad.zeros(1, 3)], model)
    assert calls == []


SWALR_CASES = [dict(swa_lr=0.05), dict(swa_lr=0.05, anneal_epochs=4, anneal_strategy="linear"),
               dict(swa_lr=[0.01, 0.2], anneal_epochs=3), dict(swa_lr=0.3, anneal_epochs=0),
               dict(swa_lr=0.3, anneal_epochs=1, anneal_strategy="linear")]


def _swalr_run(lib, options, epochs=15):
    params = [lib.zeros(2, requires_grad=True), lib.zeros(3, requires_grad=True)]
    optimizer = lib.optim.SGD([{"params": params[:1]}, {"params": params[1:], "lr": 0.5}],
                              lr=0.1)
    scheduler = lib.optim.swa_utils.SWALR(optimizer, **options)
    lrs = [scheduler.get_last_lr()]
    for _ in range(epochs):
        optimizer.step()
        scheduler.step()
        lrs.append(scheduler.get_last_lr())
    return lrs, scheduler, optimizer


@pytest.mark.parametrize("options", SWALR_CASES, ids=str)
def test_swalr_lr_sequence_equals_torchs(options):
    hg_lrs, hg_sched, hg_opt = _swalr_run(hookgrad, options)
    th_lrs, th_sched, th_opt = _swalr_run(torch, options)
    assert hg_lrs == th_lrs
    assert hg_opt.state_dict()["param_groups"] == th_opt.state_dict()["param_groups"]
    hg_state, th_state = hg_sched.state_dict(), th_sched.state_dict()
    for key in ("anneal_epochs", "_anneal_strategy", "base_lrs", "last_epoch", "_step_count",
                "_last_lr"):
        assert hg_state[key] == th_state[key], key


def test_swalr_state_dict_round_trip_restores_the_anneal_function():
    _, scheduler, optimizer = _swalr_run(hookgrad, dict(swa_lr=0.05, anneal_strategy="linear"),
                                         epochs=2)
    saved = pickle.loads(pickle.dumps(scheduler.state_dict()))
    assert "anneal_func" not in saved and "optimizer" not in saved
    fresh = hookgrad.optim.swa_utils.SWALR(optimizer, swa_lr=0.9)
    fresh.load_state_dict(saved)
    assert fresh.anneal_func(0.25) == 0.25 and scheduler.anneal_func(0.25) == 0.25
    assert math.isclose(hookgrad.optim.swa_utils.SWALR._cosine_anneal(0.5), 0.5)


@pytest.mark.parametrize("options", [dict(anneal_strategy="step"), dict(anneal_epochs=-1),
                                     dict(anneal_epochs=2.0), dict(swa_lr=[0.1])])
def test_swalr_bad_arguments_raise_torchs_error(options):
    options = {"swa_lr": 0.1, **options}
    errors = []
    for lib in (hookgrad, torch):
        optimizer = lib.optim.SGD([{"params": [lib.zeros(1, requires_grad=True)]},
                                   {"params": [lib.zeros(1, requires_grad=True)]}], lr=0.1)
        with pytest.raises(ValueError) as caught:
            lib.optim.swa_utils.SWALR(optimizer, **options)
        errors.append(str(caught.value))
    assert errors[0] == errors[1]


def test_swalr_get_lr_outside_step_warns():
    _, scheduler, _ = _swalr_run(hookgrad, dict(swa_lr=0.05), epochs=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scheduler.get_lr()
    assert any("get_last_lr()" in str(w.message) for w in caught)
