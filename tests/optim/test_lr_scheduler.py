"""Learning-rate schedules: the lr sequence of each scheduler equals torch's, epoch by epoch."""
from __future__ import annotations

import copy
import math
import warnings

import numpy as np
import pytest
import torch

import hookgrad

EPOCHS = 40


class Halving:
    """A callable object: LambdaLR saves its ``__dict__`` in state_dict."""

    def __init__(self, every: int):
        self.every = every

    def __call__(self, epoch: int) -> float:
        return 0.5 ** (epoch // self.every)


SCHEDULES = {
    "StepLR": lambda m, opt: m.StepLR(opt, step_size=3, gamma=0.5),
    "StepLR default gamma": lambda m, opt: m.StepLR(opt, step_size=7),
    "MultiStepLR": lambda m, opt: m.MultiStepLR(opt, milestones=[2, 5, 5, 11], gamma=0.3),
    "ExponentialLR": lambda m, opt: m.ExponentialLR(opt, gamma=0.9),
    "CosineAnnealingLR": lambda m, opt: m.CosineAnnealingLR(opt, T_max=7),
    "CosineAnnealingLR eta_min": lambda m, opt: m.CosineAnnealingLR(opt, T_max=10,
                                                                    eta_min=0.01),
    "CosineAnnealingLR T_max=1": lambda m, opt: m.CosineAnnealingLR(opt, T_max=1, eta_min=0.05),
    "LambdaLR": lambda m, opt: m.LambdaLR(opt, lambda epoch: 1.0 / (1 + epoch)),
    "LambdaLR per group": lambda m, opt: m.LambdaLR(
        opt, [lambda e: 0.95 ** e, Halving(4)]),
    "MultiplicativeLR": lambda m, opt: m.MultiplicativeLR(opt, lambda epoch: 0.97),
    "LinearLR": lambda m, opt: m.LinearLR(opt, start_factor=0.25, total_iters=6),
    "ConstantLR": lambda m, opt: m.ConstantLR(opt, factor=0.5, total_iters=4),
    "PolynomialLR": lambda m, opt: m.PolynomialLR(opt, total_iters=12, power=2.0),
    "PolynomialLR linear": lambda m, opt: m.PolynomialLR(opt),
    "CosineAnnealingWarmRestarts": lambda m, opt: m.CosineAnnealingWarmRestarts(opt, T_0=6),
    "CosineAnnealingWarmRestarts T_mult": lambda m, opt: m.CosineAnnealingWarmRestarts(
        opt, T_0=3, T_mult=2, eta_min=0.001),
    "CyclicLR": lambda m, opt: m.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=4),
    "CyclicLR triangular2": lambda m, opt: m.CyclicLR(
        opt, base_lr=[0.01, 0.02], max_lr=0.1, step_size_up=3, step_size_down=5,
        mode="triangular2"),
    "CyclicLR exp_range": lambda m, opt: m.CyclicLR(opt, base_lr=0.01, max_lr=0.1,
                                                    step_size_up=5, mode="exp_range",
                                                    gamma=0.97, cycle_momentum=False),
    "CyclicLR scale_fn": lambda m, opt: m.CyclicLR(opt, base_lr=0.01, max_lr=0.1,
                                                   step_size_up=3, scale_fn=Halving(2),
                                                   scale_mode="iterations"),
    "OneCycleLR": lambda m, opt: m.OneCycleLR(opt, max_lr=0.5, total_steps=EPOCHS),
    "OneCycleLR linear three_phase": lambda m, opt: m.OneCycleLR(
        opt, max_lr=[0.5, 0.2], epochs=4, steps_per_epoch=10, anneal_strategy="linear",
        three_phase=True, pct_start=0.25),
    "SequentialLR": lambda m, opt: m.SequentialLR(
        opt, [m.LinearLR(opt, start_factor=0.1, total_iters=5),
              m.CosineAnnealingLR(opt, T_max=10), m.ExponentialLR(opt, gamma=0.9)],
        milestones=[5, 15]),
    "ChainedScheduler": lambda m, opt: m.ChainedScheduler(
        [m.ConstantLR(opt, factor=0.5, total_iters=3), m.ExponentialLR(opt, gamma=0.95)]),
}


def _optimizer(lib, lr=0.1):
    params = [lib.tensor([1.0, -2.0], requires_grad=True), lib.tensor([0.5], requires_grad=True)]
    for p in params:
        p.grad = lib.ones_like(p)
    groups = [{"params": params[:1]}, {"params": params[1:], "lr": lr / 4}]
    return lib.optim.SGD(groups, lr=lr, momentum=0.9)


def _lrs(lib, name, epochs=EPOCHS):
    optimizer = _optimizer(lib)
    scheduler = SCHEDULES[name](lib.optim.lr_scheduler, optimizer)
    seen = [scheduler.get_last_lr()]
    for _ in range(epochs):
        optimizer.step()
        scheduler.step()
        seen.append(scheduler.get_last_lr())
        assert seen[-1] == [g["lr"] for g in optimizer.param_groups]
    return seen


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_lr_sequence_equals_torch(name):
    # the same float arithmetic in the same order: equal, not merely close
    assert _lrs(hookgrad, name) == _lrs(torch, name)


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_state_dict_round_trip_resumes_the_schedule(name):
    """Save optimizer and scheduler after 10 epochs, restore both into fresh objects and
    continue: the rest of the sequence is the uninterrupted one."""
    optimizer = _optimizer(hookgrad)
    scheduler = SCHEDULES[name](hookgrad.optim.lr_scheduler, optimizer)
    for _ in range(10):
        optimizer.step()
        scheduler.step()
    saved_optimizer = copy.deepcopy(optimizer.state_dict())
    saved_scheduler = copy.deepcopy(scheduler.state_dict())
    fresh_optimizer = _optimizer(hookgrad, lr=7.0)
    fresh_scheduler = SCHEDULES[name](hookgrad.optim.lr_scheduler, fresh_optimizer)
    fresh_optimizer.load_state_dict(saved_optimizer)
    fresh_scheduler.load_state_dict(saved_scheduler)
    for _ in range(15):
        for opt, sched in ((optimizer, scheduler), (fresh_optimizer, fresh_scheduler)):
            opt.step()
            sched.step()
        assert fresh_scheduler.get_last_lr() == scheduler.get_last_lr()


def test_scheduler_state_dict_has_torch_keys():
    keys = []
    for lib in (torch, hookgrad):
        optimizer = _optimizer(lib)
        keys.append(sorted(lib.optim.lr_scheduler.StepLR(optimizer, 3).state_dict()))
    assert keys[1] == keys[0]


def test_lambda_lr_saves_callable_objects_but_not_functions():
    optimizer = _optimizer(hookgrad)
    state = hookgrad.optim.lr_scheduler.LambdaLR(optimizer, [lambda e: 1.0, Halving(3)]
                                                 ).state_dict()
    assert state["lr_lambdas"] == [None, {"every": 3}]


@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR",
                                  "LinearLR", "ConstantLR"])
def test_step_with_epoch_uses_the_closed_form_and_warns(name):
    results = []
    for lib in (torch, hookgrad):
        optimizer = _optimizer(lib)
        scheduler = SCHEDULES[name](lib.optim.lr_scheduler, optimizer)
        lrs = []
        for epoch in (3, 9, 4, 25):
            optimizer.step()
            with pytest.warns(UserWarning, match="epoch parameter"):
                scheduler.step(epoch)
            lrs.append(scheduler.get_last_lr())
        results.append(lrs)
    assert results[1] == results[0]


def test_resuming_with_last_epoch_starts_from_the_closed_form():
    results = []
    for lib in (torch, hookgrad):
        optimizer = _optimizer(lib)
        for group in optimizer.param_groups:
            group["initial_lr"] = group["lr"]
        scheduler = lib.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=10,
                                                             last_epoch=4)
        lrs = [scheduler.get_last_lr()]
        for _ in range(8):
            optimizer.step()
            scheduler.step()
            lrs.append(scheduler.get_last_lr())
        results.append(lrs)
    assert results[1] == results[0]


def test_resuming_without_initial_lr_is_a_key_error_like_torch():
    messages = []
    for lib in (torch, hookgrad):
        with pytest.raises(KeyError) as info:
            lib.optim.lr_scheduler.StepLR(_optimizer(lib), 3, last_epoch=2)
        messages.append(str(info.value))
    assert messages[1] == messages[0]


def test_scheduler_needs_an_optimizer():
    with pytest.raises(TypeError, match="list is not an Optimizer"):
        hookgrad.optim.lr_scheduler.StepLR([], 3)


def test_stepping_the_scheduler_before_the_optimizer_warns_like_torch():
    for lib in (torch, hookgrad):
        scheduler = lib.optim.lr_scheduler.StepLR(_optimizer(lib), 3)
        with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
            scheduler.step()


def test_correct_order_does_not_warn():
    optimizer = _optimizer(hookgrad)
    scheduler = hookgrad.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            optimizer.step()
            scheduler.step()


def test_calling_get_lr_outside_step_warns():
    scheduler = hookgrad.optim.lr_scheduler.StepLR(_optimizer(hookgrad), 3)
    with pytest.warns(UserWarning, match="get_last_lr"):
        scheduler.get_lr()


def test_schedule_drives_the_optimizer_updates():
    """The lr the scheduler sets is the one the next step uses (SGD without momentum)."""
    p = hookgrad.tensor([0.0], requires_grad=True)
    optimizer = hookgrad.optim.SGD([p], lr=1.0)
    scheduler = hookgrad.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.5)
    for _ in range(4):
        p.grad = hookgrad.tensor([1.0])
        optimizer.step()
        scheduler.step()
    np.testing.assert_allclose(p.detach().numpy(), [-(1 + 0.5 + 0.25 + 0.125)])


def test_tensor_lr_is_filled_in_place():
    lr = hookgrad.tensor(0.5)
    p = hookgrad.tensor([1.0], requires_grad=True)
    optimizer = hookgrad.optim.SGD([p], lr=lr)
    scheduler = hookgrad.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    optimizer.step()
    scheduler.step()
    assert optimizer.param_groups[0]["lr"] is lr and math.isclose(lr.item(), 0.25)


CYCLING = ["CyclicLR", "CyclicLR triangular2", "OneCycleLR", "OneCycleLR linear three_phase"]


@pytest.mark.parametrize("optimizer_name", ["SGD", "Adam"])
@pytest.mark.parametrize("name", CYCLING)
def test_cycled_momentum_and_betas_equal_torch(name, optimizer_name):
    """The momentum (SGD) or beta1 (Adam) moves opposite to the lr, value for value."""
    seen = []
    for lib in (hookgrad, torch):
        p = lib.tensor([1.0], requires_grad=True)
        p.grad = lib.ones_like(p)
        groups = [{"params": [p]}, {"params": [lib.tensor([2.0], requires_grad=True)]}]
        options = {"momentum": 0.9} if optimizer_name == "SGD" else {}
        optimizer = getattr(lib.optim, optimizer_name)(groups, lr=0.1, **options)
        scheduler = SCHEDULES[name](lib.optim.lr_scheduler, optimizer)
        key = "momentum" if optimizer_name == "SGD" else "betas"
        values = []
        for _ in range(EPOCHS):
            optimizer.step()
            scheduler.step()
            values.append([g[key] for g in optimizer.param_groups])
        seen.append(values)
    assert seen[0] == seen[1]


def test_one_cycle_refuses_to_step_past_its_total_like_torch():
    messages = []
    for lib in (hookgrad, torch):
        optimizer = _optimizer(lib)
        scheduler = lib.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.5, total_steps=3)
        for _ in range(3):
            optimizer.step()
            scheduler.step()
        with pytest.raises(ValueError) as info:
            scheduler.step()
        messages.append(str(info.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("options", [dict(), dict(mode="max", patience=2, factor=0.5),
                                     dict(threshold_mode="abs", threshold=0.05, cooldown=2,
                                          patience=1, min_lr=[0.02, 0.0]),
                                     dict(mode="max", threshold_mode="abs", patience=0)],
                         ids=str)
def test_reduce_on_plateau_follows_the_metric_like_torch(options):
    metrics = [1.0, 0.9, 0.95, 0.96, 0.97, 0.89, 0.9, 0.91, 0.92, 0.93, 0.94, 0.5, 0.6, 0.7,
               0.8, 0.9, 1.0, 1.1, 1.2, 1.0, 0.9, 0.9, 0.9, 0.9, 0.9]
    runs = []
    for lib in (hookgrad, torch):
        optimizer = _optimizer(lib)
        scheduler = lib.optim.lr_scheduler.ReduceLROnPlateau(optimizer, **options)
        lrs = []
        for metric in metrics:
            optimizer.step()
            scheduler.step(lib.tensor(metric))
            lrs.append(scheduler.get_last_lr())
        runs.append((lrs, scheduler.state_dict()["num_bad_epochs"], scheduler.best))
    assert runs[0] == runs[1]


def test_reduce_on_plateau_state_dict_keys_and_errors_match_torch():
    keys = []
    for lib in (hookgrad, torch):
        optimizer = _optimizer(lib)
        keys.append(sorted(lib.optim.lr_scheduler.ReduceLROnPlateau(optimizer).state_dict()))
        with pytest.raises(ValueError, match="Factor should be < 1.0"):
            lib.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=1.0)
        with pytest.raises(ValueError, match="expected 2 min_lrs, got 1"):
            lib.optim.lr_scheduler.ReduceLROnPlateau(optimizer, min_lr=[0.1])
    assert keys[0] == keys[1]


def test_composites_refuse_what_torch_refuses():
    for lib in (hookgrad, torch):
        m = lib.optim.lr_scheduler
        optimizer, other = _optimizer(lib), _optimizer(lib)
        with pytest.raises(ValueError, match="number of milestones"):
            m.SequentialLR(optimizer, [m.StepLR(optimizer, 2), m.StepLR(optimizer, 3)],
                           milestones=[])
        with pytest.raises(ValueError, match="same optimizer"):
            m.ChainedScheduler([m.StepLR(optimizer, 2), m.StepLR(other, 3)])
        with pytest.raises(ValueError, match="ReduceLROnPlateau"):
            m.ChainedScheduler([m.ReduceLROnPlateau(optimizer)])


@pytest.mark.parametrize("epochs", [[0.5, 1.5, 2.25, 7.0, 12.5, 3.0], [0, 3, 9, 21, 44]])
def test_warm_restarts_with_fractional_epochs_equal_torch(epochs):
    runs = []
    for lib in (hookgrad, torch):
        optimizer = _optimizer(lib)
        scheduler = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(optimizer, T_0=3,
                                                                       T_mult=2)
        lrs = []
        for epoch in epochs:
            optimizer.step()
            scheduler.step(epoch)
            lrs.append(scheduler.get_last_lr())
        runs.append(lrs)
    assert runs[0] == runs[1]
