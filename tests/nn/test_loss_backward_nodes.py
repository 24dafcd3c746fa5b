"""The losses' first gradients under create_graph are torch's single nodes
(MseLossBackwardBackward0, SmoothL1LossBackwardBackward0, HuberLossBackwardBackward0,
BinaryCrossEntropyBackwardBackward0): same names, edges, saved tensors and settings, an in-place
write to a saved tensor refusing a later backward, and second and third derivatives equal to
torch's. Every case runs in torch and hookgrad on the same inputs."""
import numpy as np
import pytest
import torch

import hookgrad
from conftest import backward_outcome, graph_names

REDUCTIONS = ("none", "mean", "sum")
_rng = np.random.default_rng(7)
# values spread over both sides of beta/delta (0.3), and probabilities with some near 0 and 1
X = _rng.standard_normal((3, 4))
T = _rng.standard_normal((3, 4))
P = np.concatenate([_rng.uniform(0.05, 0.95, 9), [1e-7, 1 - 1e-7, 0.5]]).reshape(3, 4)
Q = _rng.random((3, 4))
W = _rng.uniform(0.5, 2.0, (3, 4))


def _f(lib):
    return lib.nn.functional


LOSSES = {  # name: (input, target, loss(lib, x, t, reduction))
    "mse": (X, T, lambda lib, x, t, r: _f(lib).mse_loss(x, t, reduction=r)),
    "smooth_l1": (X, T, lambda lib, x, t, r: _f(lib).smooth_l1_loss(x, t, reduction=r,
                                                                     beta=0.3)),
    "huber": (X, T, lambda lib, x, t, r: _f(lib).huber_loss(x, t, reduction=r, delta=0.3)),
    "bce": (P, Q, lambda lib, x, t, r: _f(lib).binary_cross_entropy(x, t, reduction=r)),
    "bce_weighted": (P, Q, lambda lib, x, t, r: _f(lib).binary_cross_entropy(
        x, t, lib.tensor(W), reduction=r)),
    "bce_row_weight": (P, Q, lambda lib, x, t, r: _f(lib).binary_cross_entropy(
        x, t, lib.tensor(W[0]), reduction=r)),
}
CASES = [(name, r) for name in LOSSES for r in REDUCTIONS]
# torch's gradient for the target: the same node again for the losses of x - y; a composite of
# -logit(x) for binary cross entropy (there 'mean' ends in torch's DivBackward1, the division
# by a C++ scalar, which Python cannot call: we record DivBackward0)
SYMMETRIC = ("mse", "smooth_l1", "huber")


def _first(lib, name, reduction, dtype=None, flags=(True, True, True)):
    x_values, t_values, loss = LOSSES[name]
    dtype = dtype or lib.float64
    x = lib.tensor(x_values, dtype=dtype, requires_grad=flags[0])
    t = lib.tensor(t_values, dtype=dtype, requires_grad=flags[1])
    y = loss(lib, x, t, reduction)
    grad_output = lib.tensor(np.linspace(0.5, 2.0, y.numel()).reshape(tuple(y.shape)),
                             dtype=dtype, requires_grad=flags[2])
    wanted = [v for v, f in zip((x, t), flags) if f]
    return x, t, grad_output, lib.autograd.grad(y, wanted, grad_output, create_graph=True)


def _saved(node):
    found = {}
    for name in ("grad_output", "self", "target", "weight", "reduction", "beta", "delta"):
        try:
            value = getattr(node, "_saved_" + name)
        except AttributeError:
            continue
        found[name] = value.detach().numpy().copy() if hasattr(value, "detach") else value
    return found


@pytest.mark.parametrize("name,reduction", CASES)
def test_first_gradient_is_torchs_node_with_its_saved_tensors(name, reduction):
    results = []
    for lib in (hookgrad, torch):
        _, _, _, (grad_x, grad_t) = _first(lib, name, reduction)
        target_graph = graph_names(grad_t.grad_fn, 1) if name in SYMMETRIC else None
        results.append((graph_names(grad_x.grad_fn, 1), target_graph,
                        _saved(grad_x.grad_fn), _saved(grad_t.grad_fn)))
    ours, theirs = results
    assert ours[:2] == theirs[:2]
    for our_saved, their_saved in ((ours[2], theirs[2]), (ours[3], theirs[3]) if
                                   name in SYMMETRIC else ({}, {})):
        assert our_saved.keys() == their_saved.keys()
        for key in their_saved:
            if their_saved[key] is None or np.isscalar(their_saved[key]):
                assert our_saved[key] == their_saved[key], key
            else:
                np.testing.assert_array_equal(our_saved[key], their_saved[key], err_msg=key)


@pytest.mark.parametrize("flags", [(True, False, True), (True, True, False), (False, True, True)])
@pytest.mark.parametrize("name", ["mse", "huber", "bce_weighted"])
def test_edges_follow_what_requires_grad(name, flags):
    graphs = []
    for lib in (hookgrad, torch):
        _, _, _, grads = _first(lib, name, "mean", flags=flags)
        # of binary cross entropy, only the input's gradient is torch's node
        nodes = grads[:1] if name.startswith("bce") and flags[0] else (
            [] if name.startswith("bce") else grads)
        graphs.append([graph_names(g.grad_fn, 1) for g in nodes]
                      + [g.requires_grad for g in grads])
    assert graphs[0] == graphs[1]


def _derivatives(lib, name, reduction, dtype=None):
    x, t, grad_output, (grad_x, grad_t) = _first(lib, name, reduction, dtype)
    mix_x = lib.tensor(np.cos(np.arange(12.0)).reshape(3, 4), dtype=grad_x.dtype)
    mix_t = lib.tensor(np.sin(np.arange(12.0)).reshape(3, 4), dtype=grad_x.dtype)
    second = lib.autograd.grad((grad_x * mix_x).sum() + (grad_t * mix_t).sum(),
                               (x, t, grad_output), create_graph=True)
    third = lib.autograd.grad(sum((s * s).sum() for s in second), (x, t, grad_output))
    return [g.detach().numpy().copy() for g in (grad_x, grad_t) + second + third]


@pytest.mark.parametrize("name,reduction", CASES)
def test_second_and_third_derivatives_match_torch_in_double(name, reduction):
    ours, theirs = (_derivatives(lib, name, reduction) for lib in (hookgrad, torch))
    for index, (our, their) in enumerate(zip(ours, theirs)):
        np.testing.assert_allclose(our, their, rtol=1e-11, atol=1e-300, err_msg=str(index))


@pytest.mark.parametrize("name,reduction", CASES)
def test_second_and_third_derivatives_match_torch_in_float(name, reduction):
    ours = _derivatives(hookgrad, name, reduction, hookgrad.float32)
    theirs = _derivatives(torch, name, reduction, torch.float32)
    for index, (our, their) in enumerate(zip(ours, theirs)):
        assert our.dtype == np.float32
        scale = np.nanmax(np.abs(their))
        np.testing.assert_allclose(our, their, rtol=1e-4, atol=1e-5 * scale, err_msg=str(index))


@pytest.mark.parametrize("name,reduction", [(n, r) for n in ("mse", "smooth_l1", "huber",
                                                              "bce_weighted") for r in
                                            REDUCTIONS])
def test_gradcheck_and_gradgradcheck(name, reduction):
    x_values, t_values, loss = LOSSES[name]
    x = hookgrad.tensor(x_values, requires_grad=True)
    t = hookgrad.tensor(t_values, requires_grad=True)
    if name.startswith("bce"):  # away from 0 and 1, where the finite differences step out
        x = hookgrad.tensor(np.clip(x_values, 0.1, 0.9), requires_grad=True)

    def function(x, t):
        return loss(hookgrad, x, t, reduction)

    assert hookgrad.autograd.gradcheck(function, (x, t))
    assert hookgrad.autograd.gradgradcheck(function, (x, t))


def _modified(lib, name, which):
    x, t, grad_output, (grad_x, _) = _first(lib, name, "none")
    with lib.no_grad():
        {"self": x, "target": t, "grad_output": grad_output}[which].mul_(0.5)
    return backward_outcome(grad_x)


@pytest.mark.parametrize("which", ["self", "target", "grad_output"])
@pytest.mark.parametrize("name", ["mse", "smooth_l1", "huber", "bce"])
def test_in_place_write_to_a_saved_tensor_refuses_backward(name, which):
    assert _modified(hookgrad, name, which) == _modified(torch, name, which) == "refused"


@pytest.mark.parametrize("name", ["mse", "smooth_l1", "huber", "bce_weighted"])
def test_without_create_graph_no_node_is_recorded(name):
    x_values, t_values, loss = LOSSES[name]
    grads = []
    for lib in (hookgrad, torch):
        x = lib.tensor(x_values, requires_grad=True)
        (grad,) = lib.autograd.grad(loss(lib, x, lib.tensor(t_values), "mean"), x)
        assert grad.grad_fn is None and not grad.requires_grad
        grads.append(grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


@pytest.mark.parametrize("shape", [(), (4, 3)])
@pytest.mark.parametrize("name", ["mse", "smooth_l1", "huber", "bce"])
def test_zero_dim_and_transposed_inputs(name, shape):
    results = []
    for lib in (hookgrad, torch):
        x_values, t_values, loss = LOSSES[name]
        x = lib.tensor(x_values[0, 0] if shape == () else x_values.T.copy(), requires_grad=True)
        t = lib.tensor(t_values[0, 0] if shape == () else t_values.T.copy(), requires_grad=True)
        if shape:  # transposed views: the kernels' results are row-major all the same
            x, t = x.t(), t.t()
        grads = lib.autograd.grad(loss(lib, x, t, "mean"), (x, t), create_graph=True)
        results.append([(g.grad_fn.name() if name in SYMMETRIC or g is grads[0] else None,
                         tuple(g.shape), g.is_contiguous(), g.detach().numpy().copy())
                        for g in grads])
    for ours, theirs in zip(*results):
        assert ours[:3] == theirs[:3]
        np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-12)
