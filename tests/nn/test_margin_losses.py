"""The fused margin losses (soft margin, multi margin, multilabel margin) against torch: the
node each records, its saved attributes and edges, values and gradients for every reduction,
with and without class weights, in float32 and float64, and what double backward does (soft
margin's gradient is differentiable again; torch raises for the two multi-class losses)."""
import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_same_error, compare, compare_double_backward, graph_edges

R = np.random.default_rng(11)
X = R.standard_normal((4, 5))
SIGNS = np.where(R.random((4, 5)) < .5, -1.0, 1.0)
CLASSES = [0, 4, 2, 2]
WEIGHT = R.random(5) + .2
LABELS = [[3, 0, -1, 1], [1, 2, 3, 4], [0, 0, 2, -1], [-1, 3, 2, 1]]
LABELS = [row + [0] * (5 - len(row)) for row in LABELS]  # a row's targets end at its first -1
REDUCTIONS = ["none", "mean", "sum"]


def F(lib):
    return lib.nn.functional


def _weight(lib, a):
    return lib.tensor(WEIGHT).to(a.dtype)


CASES = {
    "soft_margin": lambda lib, r, a: F(lib).soft_margin_loss(a, lib.tensor(SIGNS).to(a.dtype),
                                                             reduction=r),
    "soft_margin double target": lambda lib, r, a: F(lib).soft_margin_loss(
        a, lib.tensor(SIGNS * 0.7), reduction=r),
    "multi_margin": lambda lib, r, a: F(lib).multi_margin_loss(a, lib.tensor(CLASSES),
                                                               reduction=r),
    "multi_margin weight": lambda lib, r, a: F(lib).multi_margin_loss(
        a, lib.tensor(CLASSES), weight=_weight(lib, a), margin=0.6, reduction=r),
    "multi_margin p=2": lambda lib, r, a: F(lib).multi_margin_loss(
        a, lib.tensor(CLASSES), p=2, margin=1.3, reduction=r),
    "multi_margin p=2 weight": lambda lib, r, a: F(lib).multi_margin_loss(
        a, lib.tensor(CLASSES), p=2, weight=_weight(lib, a), reduction=r),
    "multi_margin one sample": lambda lib, r, a: F(lib).multi_margin_loss(
        a[1], lib.tensor([3]), reduction=r),
    "multilabel_margin": lambda lib, r, a: F(lib).multilabel_margin_loss(
        a, lib.tensor(LABELS), reduction=r),
    "multilabel_margin one sample": lambda lib, r, a: F(lib).multilabel_margin_loss(
        a[0], lib.tensor(LABELS[0]), reduction=r),
}
TWICE_DIFFERENTIABLE = {"soft_margin", "soft_margin double target"}


def _saved(node) -> dict:
    """The node's ``_saved_*`` attributes, tensors as float64 arrays with their dtype."""
    kept = {}
    for name in dir(node):
        if not name.startswith("_saved_"):
            continue
        value = getattr(node, name)
        if hasattr(value, "detach"):
            value = (str(value.dtype).split(".")[-1], tuple(value.shape),
                     value.detach().numpy().astype(np.float64).tolist())
        kept[name] = value
    return kept


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_margin_loss_node_values_and_gradients(case, reduction, dtype):
    fn = CASES[case]
    compare(lambda lib, a: fn(lib, reduction, a), X.astype(dtype))
    node, theirs = [fn(lib, reduction, lib.tensor(X.astype(dtype), requires_grad=True)).grad_fn
                    for lib in (hookgrad, torch)]
    assert node.name() == theirs.name()
    assert graph_edges(node) == graph_edges(theirs)
    torch_saved = _saved(theirs)
    assert set(torch_saved) <= set(dir(node))
    assert {name: _saved(node).get(name) for name in torch_saved} == torch_saved


def _double_backward_outcome(lib, case, reduction):
    x = lib.tensor(X.copy(), requires_grad=True)
    loss = CASES[case](lib, reduction, x)
    (first,) = lib.autograd.grad(loss.sum(), x, create_graph=True)
    try:
        lib.autograd.grad((first * first).sum(), x)
    except RuntimeError as error:
        return first.grad_fn.name(), str(error)
    return first.grad_fn.name(), "ok"


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_margin_loss_double_backward(case, reduction):
    outcome = _double_backward_outcome(hookgrad, case, reduction)
    assert outcome == _double_backward_outcome(torch, case, reduction)
    assert (outcome[1] == "ok") == (case in TWICE_DIFFERENTIABLE)
    if case in TWICE_DIFFERENTIABLE:
        compare_double_backward(lambda lib, a: CASES[case](lib, reduction, a), X)


def test_soft_margin_gradient_node_saves_torchs_tensors():
    for lib in (torch, hookgrad):
        x = lib.tensor(X.copy(), requires_grad=True)
        (first,) = lib.autograd.grad(F(lib).soft_margin_loss(x, lib.tensor(SIGNS)), x,
                                     create_graph=True)
        if lib is torch:
            expected = (first.grad_fn.name(), graph_edges(first.grad_fn), _saved(first.grad_fn))
        else:
            assert (first.grad_fn.name(), graph_edges(first.grad_fn),
                    _saved(first.grad_fn)) == expected


def test_margin_loss_gradcheck():
    x = hookgrad.tensor(X.copy(), requires_grad=True)
    for case in CASES:
        for reduction in REDUCTIONS:
            assert hookgrad.autograd.gradcheck(lambda a: CASES[case](hookgrad, reduction, a), (x,))


ERRORS = {
    "multi_margin weight dtype": lambda lib: F(lib).multi_margin_loss(
        lib.tensor(X), lib.tensor(CLASSES), weight=lib.tensor(WEIGHT).float()),
    "multi_margin int32 target": lambda lib: F(lib).multi_margin_loss(
        lib.tensor(X), lib.tensor(CLASSES).int()),
    "multilabel_margin out of range": lambda lib: F(lib).multilabel_margin_loss(
        lib.tensor(X), lib.tensor([[5, -1, 0, 0, 0]] * 4)),
    "soft_margin target requires grad": lambda lib: F(lib).soft_margin_loss(
        lib.tensor(X), lib.tensor(SIGNS, requires_grad=True)),
}


@pytest.mark.parametrize("case", ERRORS, ids=str)
def test_margin_loss_errors(case):
    assert_same_error(ERRORS[case])
