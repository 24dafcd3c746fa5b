"""Module hooks against torch: every scenario is written once as ``scenario(lib, log)``, run under
torch and hookgrad, and the two event logs (hook names, argument shapes, values, which entries are
None, object identities) must be equal."""
import warnings

import numpy as np
import pytest
import torch

import hookgrad


def describe(value):
    """A library-neutral picture of a hook argument."""
    if value is None:
        return None
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(describe(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((k, describe(v)) for k, v in value.items()))
    if isinstance(value, (torch.Tensor, hookgrad.Tensor)):
        array = value.detach().numpy().astype(np.float64).ravel()
        return ("T", tuple(value.shape), str(value.dtype), value.requires_grad,
                tuple(float(f"{v:.9g}") for v in array))
    return value


def model_classes(lib):
    """A Linear-like layer and an activation, defined the same way in both libraries."""

    class Lin(lib.nn.Module):
        def __init__(self, in_features, out_features, seed=0):
            super().__init__()
            rng = np.random.default_rng(seed)
            self.in_features, self.out_features = in_features, out_features
            self.weight = lib.nn.Parameter(lib.tensor(rng.standard_normal((out_features,
                                                                            in_features))))
            self.bias = lib.nn.Parameter(lib.tensor(rng.standard_normal(out_features)))

        def forward(self, x):
            return x @ self.weight.t() + self.bias

        def extra_repr(self):
            return f"in_features={self.in_features}, out_features={self.out_features}"

    class Tanh(lib.nn.Module):
        def forward(self, x):
            return x.tanh()

    return Lin, Tanh


def run_both(scenario):
    logs = []
    for lib in (torch, hookgrad):
        log = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scenario(lib, log)
        logs.append(log)
    return logs


def assert_same_log(scenario):
    torch_log, hookgrad_log = run_both(scenario)
    assert hookgrad_log == torch_log
    assert torch_log  # a scenario that logs nothing tests nothing


def inputs(lib, *shapes, requires_grad=True, seed=1):
    rng = np.random.default_rng(seed)
    return [lib.tensor(rng.standard_normal(shape), requires_grad=requires_grad)
            for shape in shapes]


def named(log, name):
    """Hooks that log ``(name, kind, arguments)`` for forward and backward hooks."""
    return {
        "pre": lambda m, args: log.append((name, "forward_pre", describe(args))),
        "fwd": lambda m, args, out: log.append((name, "forward", describe(args), describe(out))),
        "bpre": lambda m, go: log.append((name, "backward_pre", describe(go))),
        "bwd": lambda m, gi, go: log.append((name, "backward", describe(gi), describe(go))),
    }


def register_all(module, log, name):
    hooks = named(log, name)
    module.register_forward_pre_hook(hooks["pre"])
    module.register_forward_hook(hooks["fwd"])
    module.register_full_backward_pre_hook(hooks["bpre"])
    module.register_full_backward_hook(hooks["bwd"])


# -- order across modules --------------------------------------------------------------------
def nested_model_all_hooks(lib, log):
    Lin, Tanh = model_classes(lib)
    inner = lib.nn.Sequential(Lin(4, 3, seed=2), Tanh())
    model = lib.nn.Sequential(Lin(3, 4, seed=1), inner, Lin(3, 2, seed=3))
    for name, module in model.named_modules():
        register_all(module, log, name or "root")
    (x,) = inputs(lib, (5, 3))
    out = model(x)
    log.append(("out.grad_fn", out.grad_fn.name()))
    out.sum().backward()
    log.append(("x.grad", describe(x.grad)))
    log.append(("weight.grad", describe(model[0].weight.grad)))


def global_and_local_order(lib, log):
    mm = lib.nn.modules.module
    Lin, _ = model_classes(lib)
    model = Lin(3, 2)
    handles = [
        mm.register_module_forward_pre_hook(lambda m, a: log.append("global pre")),
        mm.register_module_forward_hook(lambda m, a, o: log.append("global fwd")),
        mm.register_module_full_backward_pre_hook(lambda m, g: log.append("global bpre")),
        mm.register_module_full_backward_hook(lambda m, gi, go: log.append("global bwd")),
        model.register_forward_pre_hook(lambda m, a: log.append("pre 1")),
        model.register_forward_pre_hook(lambda m, a: log.append("pre 0"), prepend=True),
        model.register_forward_hook(lambda m, a, o: log.append("fwd 1")),
        model.register_forward_hook(lambda m, a, o: log.append("fwd 0"), prepend=True),
        model.register_full_backward_pre_hook(lambda m, g: log.append("bpre 1")),
        model.register_full_backward_pre_hook(lambda m, g: log.append("bpre 0"), prepend=True),
        model.register_full_backward_hook(lambda m, gi, go: log.append("bwd 1")),
        model.register_full_backward_hook(lambda m, gi, go: log.append("bwd 0"), prepend=True),
    ]
    try:
        (x,) = inputs(lib, (2, 3))
        model(x).sum().backward()
    finally:
        for handle in handles:
            handle.remove()
    (x,) = inputs(lib, (2, 3))
    model(x).sum().backward()
    log.append("after removing the global hooks: local ones still ran above")


def module_used_twice(lib, log):
    Lin, _ = model_classes(lib)
    layer = Lin(3, 3)
    register_all(layer, log, "shared")
    (x,) = inputs(lib, (2, 3))
    out = layer(layer(x) * 2)
    out.sum().backward()
    log.append(("x.grad", describe(x.grad)))


@pytest.mark.parametrize("scenario", [nested_model_all_hooks, global_and_local_order,
                                      module_used_twice])
def test_hook_order_matches_torch(scenario):
    assert_same_log(scenario)
