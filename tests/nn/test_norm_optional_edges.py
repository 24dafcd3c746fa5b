"""Batch, layer, group and instance norm with weight and/or bias left out, against torch: the
node keeps three edges (input, weight, bias) with ``(None, 0)`` where a parameter is missing,
a node hook sees three gradients, and the values and gradients are torch's."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, graph_names, graph_edges

SHAPE = (2, 4, 3)

# (name, call(lib, F, x, weight, bias), parameter shape)
NORMS = [
    ("layer_norm", lambda lib, F, x, w, b: F.layer_norm(x, (3,), w, b), (3,)),
    ("layer_norm_2d", lambda lib, F, x, w, b: F.layer_norm(x, (4, 3), w, b), (4, 3)),
    ("group_norm", lambda lib, F, x, w, b: F.group_norm(x, 2, w, b), (4,)),
    ("instance_norm", lambda lib, F, x, w, b: F.instance_norm(x, weight=w, bias=b), (4,)),
    ("batch_norm_train",
     lambda lib, F, x, w, b: F.batch_norm(x, None, None, w, b, training=True), (4,)),
    ("batch_norm_eval",
     lambda lib, F, x, w, b: F.batch_norm(x, lib.zeros(4, dtype=lib.float64),
                                          lib.ones(4, dtype=lib.float64), w, b), (4,)),
]

# which parameters are given, and whether each needs a gradient
PARAMS = {
    "both": ((True, True), (True, True)),
    "weight_only": ((True, False), (True, False)),
    "bias_only": ((False, True), (False, True)),
    "neither": ((False, False), (False, False)),
    "weight_frozen_bias_none": ((True, False), (False, False)),
    "weight_none_bias_frozen": ((False, True), (False, False)),
}


def run(lib, call, params, x_array, w_array, b_array, ones_weight=False):
    """Output, gradients of the tensors that need one, and which gradients a hook on the norm's
    node saw. ``ones_weight`` stands a frozen weight of ones in for a missing one."""
    (has_w, has_b), (grad_w, grad_b) = params
    x = lib.tensor(x_array, requires_grad=True)
    w = lib.tensor(w_array, requires_grad=grad_w) if has_w else None
    if ones_weight:
        w = lib.ones(w_array.shape, dtype=lib.float64)
    b = lib.tensor(b_array, requires_grad=grad_b) if has_b else None
    out = call(lib, lib.nn.functional, x, w, b)
    seen = []
    node = out.grad_fn
    while node.name() == "ViewBackward0":  # instance norm: the norm node is under a view
        node = node.next_functions[0][0]
    node.register_hook(lambda grad_inputs, grad_outputs: seen.append(
        tuple(g is not None for g in grad_inputs)))
    graph = (graph_names(out.grad_fn, 4), graph_edges(out.grad_fn))
    (out * lib.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape))).sum().backward()
    grads = [t.grad for t in (x, w, b) if t is not None and t.requires_grad]
    return out, graph, grads, seen


# torch 2.13's CPU group norm fails in backward when the weight is missing and the bias needs a
# gradient ("tensor does not have a device"); hookgrad computes the gradients, checked against
# torch's with a frozen weight of ones (the same function)
TORCH_FAILS = {("group_norm", "bias_only")}


@pytest.mark.parametrize("params", list(PARAMS), ids=list(PARAMS))
@pytest.mark.parametrize("norm", NORMS, ids=[n[0] for n in NORMS])
def test_missing_affine_parameters_keep_empty_edges(rng, norm, params):
    name, call, shape = norm
    x_array = rng.standard_normal(SHAPE) * 2 + 0.5
    w_array, b_array = rng.standard_normal(shape), rng.standard_normal(shape)
    h_out, h_graph, h_grads, h_seen = run(hookgrad, call, PARAMS[params], x_array, w_array,
                                          b_array)
    if (name, params) in TORCH_FAILS:
        t_x = torch.tensor(x_array, requires_grad=True)
        t_b = torch.tensor(b_array, requires_grad=True)
        t_out = call(torch, torch.nn.functional, t_x, None, t_b)
        assert (graph_names(t_out.grad_fn, 4), graph_edges(t_out.grad_fn)) == h_graph
        assert_close(h_out, t_out, rtol=1e-10, atol=1e-12)
        with pytest.raises(RuntimeError, match="does not have a device"):
            t_out.sum().backward()
        t_out, _, t_grads, _ = run(torch, call, PARAMS[params], x_array, w_array, b_array,
                                   ones_weight=True)
        assert h_seen == [(True, False, True)]
    else:
        t_out, t_graph, t_grads, t_seen = run(torch, call, PARAMS[params], x_array, w_array,
                                              b_array)
        assert h_graph == t_graph
        assert h_seen == t_seen
    assert_close(h_out, t_out, rtol=1e-10, atol=1e-12)
    assert len(h_grads) == len(t_grads)
    for h, t in zip(h_grads, t_grads):
        assert_close(h, t, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("build", [
    lambda lib: lib.nn.LayerNorm(3, elementwise_affine=False, dtype=lib.float64),
    lambda lib: lib.nn.LayerNorm(3, bias=False, dtype=lib.float64),
    lambda lib: lib.nn.GroupNorm(2, 4, affine=False, dtype=lib.float64),
    lambda lib: lib.nn.InstanceNorm1d(4),
    lambda lib: lib.nn.InstanceNorm1d(4, affine=True, dtype=lib.float64),
    lambda lib: lib.nn.BatchNorm1d(4, affine=False, dtype=lib.float64),
    lambda lib: lib.nn.BatchNorm1d(4, affine=False, dtype=lib.float64).eval(),
], ids=["layer_norm", "layer_norm_no_bias", "group_norm", "instance_norm",
        "instance_norm_affine", "batch_norm", "batch_norm_eval"])
def test_modules_without_affine_match_torch_graphs(rng, build):
    x_array = rng.standard_normal(SHAPE)
    outs = []
    for lib in (hookgrad, torch):
        x = lib.tensor(x_array, requires_grad=True)
        out = build(lib)(x)
        out.pow(2).sum().backward()
        outs.append((out, x.grad))
    (h_out, h_grad), (t_out, t_grad) = outs
    assert graph_edges(h_out.grad_fn, 4) == graph_edges(t_out.grad_fn, 4)
    assert_close(h_out, t_out, rtol=1e-10, atol=1e-12)
    assert_close(h_grad, t_grad, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("norm", NORMS[:3], ids=[n[0] for n in NORMS[:3]])
def test_grad_of_input_alone_with_empty_edges(rng, norm):
    """autograd.grad asks for the input only: the empty edges take no part."""
    _, call, shape = norm
    x_array, b_array = rng.standard_normal(SHAPE), rng.standard_normal(shape)
    grads = []
    for lib in (hookgrad, torch):
        x = lib.tensor(x_array, requires_grad=True)
        b = lib.tensor(b_array, requires_grad=True)
        out = call(lib, lib.nn.functional, x, None, b)
        grads.append(lib.autograd.grad(out.pow(3).sum(), [x], create_graph=True)[0])
    assert_close(grads[0], grads[1], rtol=1e-9, atol=1e-11)
