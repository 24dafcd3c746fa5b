"""ASGD, Rprop and Adafactor: argument checks with torch's messages and state layouts that load
both ways (the step-by-step runs are in test_optim_steps.py)."""
import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close

BAD_OPTIONS = [
    ("ASGD", dict(lr=-0.1)), ("ASGD", dict(weight_decay=-1.0)),
    ("ASGD", dict(lr=float("nan"))),
    ("Rprop", dict(lr=-0.1)), ("Rprop", dict(etas=(1.2, 0.5))), ("Rprop", dict(etas=(0.0, 1.2))),
    ("Rprop", dict(etas=(0.5, 1.0))),
    ("Adafactor", dict(lr=-0.1)), ("Adafactor", dict(beta2_decay=0.5)),
    ("Adafactor", dict(eps=(-1.0, 1e-3))), ("Adafactor", dict(eps=(None, -1.0))),
    ("Adafactor", dict(d=0.5)), ("Adafactor", dict(weight_decay=-0.1)),
]


@pytest.mark.parametrize("name, options", BAD_OPTIONS)
def test_bad_hyperparameters_raise_torchs_error(name, options):
    with pytest.raises(ValueError) as expected:
        getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], **options)
    with pytest.raises(ValueError) as got:
        getattr(hookgrad.optim, name)([hookgrad.zeros(2, requires_grad=True)], **options)
    assert str(got.value) == str(expected.value)


def test_tensor_lr_must_have_one_element():
    for name in ("ASGD", "Rprop", "Adafactor"):
        with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
            getattr(hookgrad.optim, name)([hookgrad.zeros(2, requires_grad=True)],
                                          lr=hookgrad.ones(2))


@pytest.mark.parametrize("name", ["ASGD", "Rprop", "Adafactor"])
def test_defaults_match_torch(name):
    hg = getattr(hookgrad.optim, name)([hookgrad.zeros(2, requires_grad=True)])
    th = getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)])
    assert hg.defaults == th.defaults


@pytest.mark.parametrize("name", ["ASGD", "Rprop", "Adafactor"])
def test_state_dicts_load_both_ways(name):
    rng = np.random.default_rng(1)
    start = [rng.standard_normal((3, 4)), rng.standard_normal(5)]
    grads = [rng.standard_normal((3, 4)), rng.standard_normal(5)]

    def run(lib, optimizer, params):
        for _ in range(4):
            for param, grad in zip(params, grads):
                param.grad = lib.tensor(grad)
            optimizer.step()

    th_params = [torch.tensor(v, requires_grad=True) for v in start]
    th_opt = getattr(torch.optim, name)(th_params, lr=0.05)
    run(torch, th_opt, th_params)
    hg_params = [hookgrad.tensor(v, requires_grad=True) for v in start]
    hg_opt = getattr(hookgrad.optim, name)(hg_params, lr=0.05)
    run(hookgrad, hg_opt, hg_params)
    th_state, hg_state = th_opt.state_dict(), hg_opt.state_dict()
    # torch's state into hookgrad and hookgrad's into torch, then four more steps each
    hg_loaded = getattr(hookgrad.optim, name)(
        [hookgrad.tensor(p.detach().numpy(), requires_grad=True) for p in th_params])
    hg_loaded.load_state_dict({"state": {i: {k: hookgrad.tensor(v.numpy()) for k, v in e.items()}
                                         for i, e in th_state["state"].items()},
                               "param_groups": th_state["param_groups"]})
    th_loaded = getattr(torch.optim, name)(
        [torch.tensor(p.detach().numpy(), requires_grad=True) for p in hg_params])
    th_loaded.load_state_dict({"state": {i: {k: torch.tensor(v.numpy()) for k, v in e.items()}
                                         for i, e in hg_state["state"].items()},
                               "param_groups": hg_state["param_groups"]})
    hg_new = hg_loaded.param_groups[0]["params"]
    th_new = th_loaded.param_groups[0]["params"]
    run(hookgrad, hg_loaded, hg_new)
    run(torch, th_loaded, th_new)
    for h, t in zip(hg_new, th_new):
        assert_close(h, t)
    for index, th_entry in th_loaded.state_dict()["state"].items():
        hg_entry = hg_loaded.state_dict()["state"][index]
        assert list(hg_entry) == list(th_entry)
        for key, value in th_entry.items():
            assert hg_entry[key].dtype == getattr(hookgrad, str(value.dtype).split(".")[1])
            assert_close(hg_entry[key], value, what=key)


def test_asgd_averages_only_after_t0():
    values = np.array([1.0, -2.0, 0.5])
    results = []
    for lib in (hookgrad, torch):
        param = lib.tensor(values.copy(), requires_grad=True)
        optimizer = lib.optim.ASGD([param], lr=0.1, t0=2)
        for _ in range(6):
            param.grad = param.detach() * 2
            optimizer.step()
        results.append(optimizer.state[param]["ax"])
    assert_close(*results)


def test_adafactor_factors_matrices_and_keeps_vectors_whole():
    params = [hookgrad.zeros(2, 3, 4, requires_grad=True), hookgrad.zeros(4, requires_grad=True)]
    optimizer = hookgrad.optim.Adafactor(params)
    for param in params:
        param.grad = hookgrad.ones_like(param)
    optimizer.step()
    assert optimizer.state[params[0]]["row_var"].shape == (2, 3, 1)
    assert optimizer.state[params[0]]["col_var"].shape == (2, 1, 4)
    assert optimizer.state[params[1]]["variance"].shape == (4,)

