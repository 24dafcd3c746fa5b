"""Optimizer base behaviour against torch: construction errors, groups, zero_grad, step hooks,
state_dict hooks, repr."""
from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest
import torch

import hookgrad
from conftest import error_of


def _leaf(lib, n=3):
    return lib.tensor(np.arange(n, dtype=np.float32) + 1.0, requires_grad=True)


def _two_groups_sharing(lib, param):
    return lib.optim.SGD([{"params": [param]}, {"params": [param]}], lr=0.1)


ERROR_CASES = {
    "empty parameter list": lambda lib: lib.optim.SGD([], lr=0.1),
    "non-leaf": lambda lib: lib.optim.SGD([_leaf(lib) * 2], lr=0.1),
    "tensor instead of iterable": lambda lib: lib.optim.SGD(_leaf(lib), lr=0.1),
    "non-tensor parameter": lambda lib: lib.optim.SGD([1.0], lr=0.1),
    "set inside a group": lambda lib: lib.optim.SGD([{"params": {_leaf(lib)}}], lr=0.1),
    "same parameter in two groups": lambda lib: _two_groups_sharing(lib, _leaf(lib)),
    "names on some parameters only": lambda lib: lib.optim.SGD(
        [("w", _leaf(lib)), _leaf(lib)], lr=0.1),
    "named and unnamed groups": lambda lib: lib.optim.SGD(
        [("w", _leaf(lib))], lr=0.1).add_param_group({"params": [_leaf(lib)]}),
    "group that is not a dict": lambda lib: lib.optim.SGD(
        [_leaf(lib)], lr=0.1).add_param_group([_leaf(lib)]),
    "negative lr": lambda lib: lib.optim.SGD([_leaf(lib)], lr=-1),
    "negative momentum": lambda lib: lib.optim.SGD([_leaf(lib)], lr=0.1, momentum=-1),
    "negative weight decay": lambda lib: lib.optim.SGD([_leaf(lib)], weight_decay=-1),
    "nesterov without momentum": lambda lib: lib.optim.SGD([_leaf(lib)], nesterov=True),
    "nesterov with dampening": lambda lib: lib.optim.SGD(
        [_leaf(lib)], momentum=0.9, dampening=0.1, nesterov=True),
    "adam beta1 out of range": lambda lib: lib.optim.Adam([_leaf(lib)], betas=(1.0, 0.9)),
    "adam beta2 out of range": lambda lib: lib.optim.Adam([_leaf(lib)], betas=(0.9, 1.0)),
    "adam integer beta": lambda lib: lib.optim.Adam([_leaf(lib)], betas=(0, 0.9)),
    "adam negative eps": lambda lib: lib.optim.Adam([_leaf(lib)], eps=-1e-8),
    "adamw negative lr": lambda lib: lib.optim.AdamW([_leaf(lib)], lr=-1e-3),
    "rmsprop negative alpha": lambda lib: lib.optim.RMSprop([_leaf(lib)], alpha=-0.1),
    "rmsprop negative momentum": lambda lib: lib.optim.RMSprop([_leaf(lib)], momentum=-0.1),
    "load: group count": lambda lib: lib.optim.SGD([_leaf(lib)]).load_state_dict(
        lib.optim.SGD([{"params": [_leaf(lib)]}, {"params": [_leaf(lib)]}]).state_dict()),
    "load: group size": lambda lib: lib.optim.SGD([_leaf(lib)]).load_state_dict(
        lib.optim.SGD([_leaf(lib), _leaf(lib)]).state_dict()),
}


@pytest.mark.parametrize("case", list(ERROR_CASES))
def test_bad_construction_raises_like_torch(case):
    expected = error_of(lambda: ERROR_CASES[case](torch))
    assert expected is not None
    assert error_of(lambda: ERROR_CASES[case](hookgrad)) == expected


def test_duplicate_parameter_in_a_group_warns_like_torch():
    for lib in (torch, hookgrad):
        p = _leaf(lib)
        with pytest.warns(UserWarning, match="duplicate parameters"):
            lib.optim.SGD([p, p], lr=0.1)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop"])
def test_groups_are_filled_with_the_defaults_like_torch(name):
    groups = []
    for lib in (torch, hookgrad):
        optimizer = getattr(lib.optim, name)([_leaf(lib)], lr=0.5)
        optimizer.add_param_group({"params": [_leaf(lib)], "lr": 0.25})
        groups.append([{k: v for k, v in g.items() if k != "params"}
                       for g in optimizer.param_groups])
    assert groups[1] == groups[0]


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop"])
def test_repr_matches_torch(name):
    reprs = [repr(getattr(lib.optim, name)([_leaf(lib)], lr=0.5)) for lib in (torch, hookgrad)]
    assert reprs[1] == reprs[0]


def test_named_parameters_keep_their_names_in_state_dict():
    dicts = [lib.optim.SGD([("w", _leaf(lib)), ("b", _leaf(lib))], lr=0.1).state_dict()
             for lib in (torch, hookgrad)]
    assert dicts[1] == dicts[0]


def test_zero_grad_sets_grads_to_none_by_default():
    p = _leaf(hookgrad)
    p.grad = hookgrad.ones(3)
    hookgrad.optim.SGD([p], lr=0.1).zero_grad()
    assert p.grad is None


def test_zero_grad_without_set_to_none_zeroes_in_place_and_detaches():
    p = _leaf(hookgrad)
    x = _leaf(hookgrad)
    (p * x).sum().backward(create_graph=True)
    grad = p.grad
    assert grad.requires_grad
    hookgrad.optim.SGD([p], lr=0.1).zero_grad(set_to_none=False)
    assert p.grad is grad and not grad.requires_grad and grad.grad_fn is None
    np.testing.assert_array_equal(grad.numpy(), np.zeros(3, np.float32))


def test_parameters_without_grad_are_skipped_and_get_no_state():
    p, q = _leaf(hookgrad), _leaf(hookgrad)
    optimizer = hookgrad.optim.Adam([p, q])
    p.grad = hookgrad.ones(3)
    before = q.detach().numpy().copy()
    optimizer.step()
    np.testing.assert_array_equal(q.detach().numpy(), before)
    assert q not in optimizer.state and p in optimizer.state


def test_step_hooks_run_in_torch_order_and_can_be_removed():
    events = {}
    for lib in (torch, hookgrad):
        log = events[lib] = []
        p = _leaf(lib)
        p.grad = lib.ones(3)
        optimizer = lib.optim.SGD([p], lr=0.1)
        module = importlib.import_module(lib.__name__ + ".optim.optimizer")
        handles = [
            module.register_optimizer_step_pre_hook(
                lambda opt, args, kwargs, log=log: log.append("global pre")),
            module.register_optimizer_step_post_hook(
                lambda opt, args, kwargs, log=log: log.append("global post")),
            optimizer.register_step_pre_hook(lambda opt, args, kwargs, log=log: log.append(
                ("pre", args == (opt,), kwargs))),
            optimizer.register_step_post_hook(lambda opt, args, kwargs, log=log: log.append(
                ("post", args == (opt,), kwargs))),
        ]
        optimizer.step()
        for handle in handles:
            handle.remove()
        optimizer.step()
    assert events[hookgrad] == events[torch]
    assert len(events[torch]) == 4


def test_a_post_hook_added_by_a_pre_hook_runs_in_that_step_as_in_torch():
    """Without any hook the step only checks the hook stores; the post-hooks are read after the
    step, so one a pre-hook adds runs in the same step, as in torch."""
    events = {}
    for lib in (torch, hookgrad):
        log = events[lib] = []
        p = _leaf(lib)
        p.grad = lib.ones(3)
        optimizer = lib.optim.SGD([p], lr=0.1)
        optimizer.step()  # no hook: nothing logged, the update still made

        def pre(opt, args, kwargs, log=log):
            log.append("pre")
            opt.register_step_post_hook(lambda *_: log.append("post"))

        handle = optimizer.register_step_pre_hook(pre)
        optimizer.step()
        handle.remove()
        log.append(p.detach().numpy().tolist())
    assert events[hookgrad] == events[torch] == ["pre", "post", events[torch][-1]]


def test_step_pre_hook_may_replace_the_arguments():
    p = _leaf(hookgrad)
    p.grad = hookgrad.ones(3)
    optimizer = hookgrad.optim.SGD([p], lr=0.1)
    optimizer.register_step_pre_hook(lambda opt, args, kwargs: ((opt,), {"closure": lambda: 7}))
    assert optimizer.step() == 7


def test_step_pre_hook_returning_something_else_is_an_error():
    for lib in (torch, hookgrad):
        p = _leaf(lib)
        optimizer = lib.optim.SGD([p], lr=0.1)
        optimizer.register_step_pre_hook(lambda opt, args, kwargs: 3)
        with pytest.raises(RuntimeError, match="must return None or a tuple"):
            optimizer.step()


def test_state_dict_hooks_see_and_replace_the_dict():
    p = _leaf(hookgrad)
    optimizer = hookgrad.optim.SGD([p], lr=0.1)
    log = []
    optimizer.register_state_dict_pre_hook(lambda opt: log.append("pre"))
    optimizer.register_state_dict_post_hook(lambda opt, sd: {**sd, "extra": 1})
    optimizer.register_load_state_dict_pre_hook(
        lambda opt, sd: log.append(("load pre", sd["extra"])))
    optimizer.register_load_state_dict_post_hook(lambda opt: log.append("load post"))
    state = optimizer.state_dict()
    optimizer.load_state_dict(state)
    assert log == ["pre", ("load pre", 1), "load post"]


def test_step_of_a_subclass_defined_later_also_runs_hooks():
    class Halving(hookgrad.optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {})

        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    p.grad = p.grad / 2 if p.grad is not None else None

    p = _leaf(hookgrad)
    p.grad = hookgrad.ones(3)
    optimizer = Halving([p])
    seen = []
    optimizer.register_step_post_hook(lambda opt, a, k: seen.append(opt))
    optimizer.step()
    assert seen == [optimizer]


def test_tensor_lr_is_accepted_like_torch():
    results = []
    for lib in (torch, hookgrad):
        p = lib.tensor([1.0, 2.0], requires_grad=True)
        optimizer = lib.optim.SGD([p], lr=lib.tensor(0.5))
        p.grad = lib.tensor([1.0, 1.0])
        optimizer.step()
        results.append(p.detach().numpy().tolist())
    assert results[1] == results[0]


def test_differentiable_is_rejected_clearly():
    with pytest.raises(ValueError, match="differentiable"):
        hookgrad.optim.SGD([_leaf(hookgrad)], differentiable=True)


def test_step_runs_under_no_grad():
    p = _leaf(hookgrad)
    p.grad = hookgrad.ones(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hookgrad.optim.RMSprop([p], momentum=0.5, centered=True).step()
    assert p.grad_fn is None and p.is_leaf
