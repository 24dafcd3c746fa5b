"""nll_loss and cross_entropy with class weights that require grad, against torch: torch has no
derivative for them and refuses (under grad mode, before the kernel's own checks, naming the 1d
or 2d kernel); under no_grad, with a frozen weight or with probability targets they work."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, error_of

# (name, call(lib, F, x, target, weight)); x is (5, 3) or (2, 3, 4[, ...]) by ``inputs``
CALLS = {
    "nll_mean": lambda lib, F, x, t, w: F.nll_loss(
        x.log_softmax(min(1, x.ndim - 1)), t, weight=w),
    "nll_sum": lambda lib, F, x, t, w: F.nll_loss(x, t, weight=w, reduction="sum"),
    "nll_none": lambda lib, F, x, t, w: F.nll_loss(x, t, weight=w, reduction="none"),
    "nll_ignore": lambda lib, F, x, t, w: F.nll_loss(x, t, weight=w, ignore_index=1),
    "cross_entropy": lambda lib, F, x, t, w: F.cross_entropy(x, t, weight=w),
    "cross_entropy_smoothing":
        lambda lib, F, x, t, w: F.cross_entropy(x, t, weight=w, label_smoothing=0.2),
    "nll_module": lambda lib, F, x, t, w: lib.nn.NLLLoss(weight=w)(x, t),
    "cross_entropy_module": lambda lib, F, x, t, w: lib.nn.CrossEntropyLoss(weight=w)(x, t),
}

# input shape, target shape
INPUTS = {"1d": ((3,), ()), "2d": ((5, 3), (5,)), "3d": ((2, 3, 4), (2, 4)),
          "4d": ((2, 3, 2, 2), (2, 2, 2)), "5d": ((2, 3, 2, 1, 2), (2, 2, 1, 2)),
          "empty": ((0, 3), (0,))}


def build(lib, inputs, x_grad, weight_grad, seed=0, target_dtype="int64", weight_size=3):
    rng = np.random.default_rng(seed)
    x_shape, t_shape = INPUTS[inputs]
    x = lib.tensor(rng.standard_normal(x_shape), requires_grad=x_grad)
    t = lib.tensor(rng.integers(0, 3, t_shape).astype(target_dtype))
    w = lib.tensor(rng.random(weight_size) + 0.5, requires_grad=weight_grad)
    return x, t, w


@pytest.mark.parametrize("x_grad", [True, False])
@pytest.mark.parametrize("inputs", list(INPUTS))
@pytest.mark.parametrize("name", list(CALLS))
def test_weight_that_requires_grad_is_refused_as_torch(name, inputs, x_grad):
    errors = []
    for lib in (hookgrad, torch):
        x, t, w = build(lib, inputs, x_grad, True)
        errors.append(error_of(lambda: CALLS[name](lib, lib.nn.functional, x, t, w)))
    assert errors[1] is not None and "not differentiable" in errors[1][1]
    assert errors[0] == errors[1]


@pytest.mark.parametrize("weight_grad", [True, False])
@pytest.mark.parametrize("name", ["nll_sum", "cross_entropy", "cross_entropy_smoothing"])
def test_weight_that_requires_grad_under_no_grad_or_frozen_works(name, weight_grad):
    outs = []
    for lib in (hookgrad, torch):
        x, t, w = build(lib, "3d", True, weight_grad)
        if weight_grad:
            with lib.no_grad():
                outs.append((CALLS[name](lib, lib.nn.functional, x, t, w), None))
        else:
            loss = CALLS[name](lib, lib.nn.functional, x, t, w)
            loss.backward()
            outs.append((loss, x.grad))
    assert_close(outs[0][0], outs[1][0], rtol=1e-10, atol=1e-12)
    if not weight_grad:
        assert_close(outs[0][1], outs[1][1], rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("what", ["target_dtype", "weight_size", "batch"])
def test_order_of_checks_is_torchs(what):
    """The batch size check comes before the refusal; target dtype and weight size after."""
    errors = []
    for lib in (hookgrad, torch):
        if what == "target_dtype":
            x, t, w = build(lib, "2d", True, True, target_dtype="int32")
        elif what == "weight_size":
            x, t, w = build(lib, "2d", True, True, weight_size=4)
        else:
            x, t, w = build(lib, "2d", True, True)
            t = t[:3]
        errors.append(error_of(lambda: lib.nn.functional.nll_loss(x, t, weight=w)))
    assert errors[1] is not None
    assert errors[0] == errors[1]
    # without the weight's requires_grad the kernel's own error comes out, as torch's
    errors = []
    for lib in (hookgrad, torch):
        x, t, w = build(lib, "2d", True, False,
                        target_dtype="int32" if what == "target_dtype" else "int64",
                        weight_size=4 if what == "weight_size" else 3)
        if what == "batch":
            t = t[:3]
        errors.append(error_of(lambda: lib.nn.functional.nll_loss(x, t, weight=w)))
    assert errors[1] is not None and errors[0] == errors[1]


@pytest.mark.parametrize("smoothing", [0.0, 0.2])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_probability_targets_differentiate_the_weight_as_torch(smoothing, reduction):
    """Soft targets take torch's composite path: the weight's gradient exists there."""
    results = []
    for lib in (hookgrad, torch):
        rng = np.random.default_rng(1)
        x = lib.tensor(rng.standard_normal((4, 3, 2)), requires_grad=True)
        target = lib.tensor(rng.random((4, 3, 2))).softmax(1)
        w = lib.tensor(rng.random(3) + 0.5, requires_grad=True)
        loss = lib.nn.functional.cross_entropy(x, target, weight=w, reduction=reduction,
                                               label_smoothing=smoothing)
        loss.sum().backward()
        results.append((loss, x.grad, w.grad, loss.grad_fn.name()))
    (h_loss, h_x, h_w, h_name), (t_loss, t_x, t_w, t_name) = results
    assert h_name == t_name
    assert_close(h_loss, t_loss, rtol=1e-10, atol=1e-12)
    assert_close(h_x, t_x, rtol=1e-9, atol=1e-11)
    assert_close(h_w, t_w, rtol=1e-9, atol=1e-11)
