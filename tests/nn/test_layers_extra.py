"""Bilinear (functional and module) and the parameter containers ParameterList/ParameterDict
against torch: values, gradients, double backward, init draws, reprs, state_dict, errors."""
from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, assert_same_error, compare, double_backward, init_draws


def F(lib):
    return lib.nn.functional


@pytest.mark.parametrize("batch", [(3,), (), (2, 3), (0,)])
def test_bilinear(rng, batch):
    x1, x2 = rng.standard_normal(batch + (4,)), rng.standard_normal(batch + (5,))
    w, b = rng.standard_normal((2, 4, 5)), rng.standard_normal(2)
    compare(lambda lib, x1, x2, w, b: F(lib).bilinear(x1, x2, w, b), x1, x2, w, b)
    compare(lambda lib, x1, x2, w: F(lib).bilinear(x1, x2, w), *(a.astype(np.float32)
                                                                 for a in (x1, x2, w)))
    if batch != (0,):
        double_backward(lambda lib, x1, x2, w, b: F(lib).bilinear(x1, x2, w, b), x1, x2, w, b)


def _graph_with_saved(node, depth: int = 4):
    """Each node's name and ``_saved_*`` attributes (tensors as their shape and values), with
    its children's, ``depth`` levels down."""
    if node is None:
        return None
    kept = {}
    for name in dir(node):
        if name.startswith("_saved_"):
            value = getattr(node, name)
            if hasattr(value, "detach"):
                value = (tuple(value.shape), value.detach().numpy().tolist())
            kept[name] = value
    name = node.name().replace("torch::autograd::", "")
    if depth == 0:
        return name, kept
    return [name, kept, [(_graph_with_saved(child, depth - 1), nr)
                         for child, nr in node.next_functions]]


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("batch", [(3,), (), (2, 3)])
def test_bilinear_records_torchs_trilinear_node(rng, batch, bias):
    x1, x2 = rng.standard_normal(batch + (4,)), rng.standard_normal(batch + (5,))
    w, b = rng.standard_normal((2, 4, 5)), rng.standard_normal(2)
    graphs = []
    for lib in (hookgrad, torch):
        tensors = [lib.tensor(a, requires_grad=True) for a in (x1, x2, w, b)]
        out = F(lib).bilinear(*tensors[:3], tensors[3] if bias else None)
        graphs.append(_graph_with_saved(out.grad_fn))
    assert graphs[0] == graphs[1]


BILINEAR_BAD = [((3, 4), (1, 3, 5), (2, 4, 5), None), ((3, 4), (2, 5), (2, 4, 5), None),
                ((3, 4), (3, 4), (2, 4, 5), None), ((3, 5), (3, 5), (2, 4, 5), None),
                ((3, 4), (3, 5), (2, 4, 5), (3,)), ((3, 4), (3, 5), (2, 4, 5), (1, 2))]


@pytest.mark.parametrize("s1,s2,sw,sb", BILINEAR_BAD)
def test_bilinear_errors(rng, s1, s2, sw, sb):
    arrays = [rng.standard_normal(s) for s in (s1, s2, sw)]
    bias = None if sb is None else rng.standard_normal(sb)
    assert_same_error(lambda lib: F(lib).bilinear(
        *[lib.tensor(a) for a in arrays], None if bias is None else lib.tensor(bias)))
    assert_same_error(lambda lib: F(lib).bilinear(
        lib.tensor(rng.standard_normal((3, 4))), lib.tensor(rng.standard_normal((3, 5)),
                                                            dtype=lib.float32),
        lib.tensor(rng.standard_normal((2, 4, 5)))))


@pytest.mark.parametrize("args", [(3, 4, 2), (2, 5, 3, False), (1, 1, 1)])
def test_bilinear_module(rng, args):
    built = [init_draws(lib, lambda: lib.nn.Bilinear(*args)) for lib in (hookgrad, torch)]
    (ours, our_draws), (theirs, their_draws) = built
    assert our_draws == their_draws
    assert repr(ours) == repr(theirs)
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
    with torch.no_grad():
        for name, value in ours.state_dict().items():
            theirs.state_dict()[name].copy_(torch.from_numpy(value.numpy().copy()))
    x1 = rng.standard_normal((4, args[0])).astype(np.float32)
    x2 = rng.standard_normal((4, args[1])).astype(np.float32)
    compare(lambda lib, a, b: (ours if lib is hookgrad else theirs)(a, b), x1, x2)
    assert_same_error(lambda lib: lib.nn.Bilinear(0, 2, 3))


# -- ParameterList ------------------------------------------------------------------------------
def _both(build):
    return build(hookgrad), build(torch)


def test_parameter_list_basics(rng):
    values = [rng.standard_normal((2, 3)), rng.standard_normal(4).astype(np.float32)]
    ours, theirs = _both(lambda lib: lib.nn.ParameterList(
        [lib.tensor(values[0]), lib.nn.Parameter(lib.tensor(values[1])), "text", 3]))
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert len(ours) == len(theirs) == 4
    assert isinstance(ours[0], hookgrad.nn.Parameter) and ours[0].requires_grad
    assert ours[-2] == "text" and ours[3] == 3
    sliced = ours[1:3]
    assert type(sliced) is hookgrad.nn.ParameterList and len(sliced) == 2
    assert repr(sliced) == repr(theirs[1:3])
    ours.append(hookgrad.ones(2))
    theirs.append(torch.ones(2))
    ours += [hookgrad.zeros(1)]
    theirs += [torch.zeros(1)]
    ours[0] = hookgrad.ones(5)
    theirs[0] = torch.ones(5)
    assert repr(ours) == repr(theirs)
    assert [type(v).__name__ for v in ours] == [type(v).__name__ for v in theirs]
    assert [d for d in dir(ours) if d.isdigit()] == []


def test_parameter_list_errors():
    for fn in (lambda lib: lib.nn.ParameterList([lib.ones(1)])[2],
               lambda lib: lib.nn.ParameterList().extend(lib.ones(2)),
               lambda lib: lib.nn.ParameterList([lib.tensor([1, 2])]),
               lambda lib: lib.nn.ParameterList()(1),
               lambda lib: lib.nn.ParameterList().extend(5)):
        assert_same_error(fn)


def test_parameter_list_in_a_model_trains(rng):
    """Gradients reach parameters held in a list, and an optimizer sees them."""
    weights = [rng.standard_normal((3, 3)) for _ in range(2)]
    x = rng.standard_normal((4, 3))
    grads = []
    for lib in (hookgrad, torch):
        params = lib.nn.ParameterList([lib.tensor(w) for w in weights])
        out = lib.tensor(x)
        for p in params:
            out = out @ p
        out.sum().backward()
        grads.append([p.grad for p in params])
        assert len(list(params.parameters())) == 2
    for ours, theirs in zip(*grads):
        assert_close(ours, theirs)


# -- ParameterDict ------------------------------------------------------------------------------
def test_parameter_dict_basics(rng):
    w = rng.standard_normal((2, 3))

    def build(lib):
        return lib.nn.ParameterDict({"b": lib.nn.Parameter(lib.tensor(w)),
                                     "a": lib.zeros(2, dtype=lib.float64), "c": 3})

    ours, theirs = _both(build)
    assert repr(ours) == repr(theirs)
    assert list(ours) == list(theirs) == ["a", "b", "c"]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert "a" in ours and "z" not in ours and len(ours) == 3
    assert list(reversed(ours)) == list(reversed(theirs))
    assert ours.get("z", 7) == 7 and ours.setdefault("d", None) is None
    theirs.setdefault("d", None)
    ordered = OrderedDict([("y", hookgrad.ones(1)), ("x", hookgrad.ones(2))])
    ours.update(ordered)
    theirs.update(OrderedDict([("y", torch.ones(1)), ("x", torch.ones(2))]))
    ours.update([("p", hookgrad.ones(3))])
    theirs.update([("p", torch.ones(3))])
    assert list(ours.keys()) == list(theirs.keys())
    assert repr(ours) == repr(theirs)
    assert ours.pop("y").shape == (1,) and theirs.pop("y").shape == (1,)
    assert ours.popitem()[0] == theirs.popitem()[0]
    del ours["a"]
    del theirs["a"]
    assert repr(ours) == repr(theirs)
    merged = [d | lib.nn.ParameterDict({"q": lib.ones(1)}) for d, lib in ((ours, hookgrad),
                                                                          (theirs, torch))]
    assert repr(merged[0]) == repr(merged[1])
    assert list(ours.copy().keys()) == list(theirs.copy().keys())
    assert list(ours.fromkeys(["u", "v"], 1).items()) == list(theirs.fromkeys(["u", "v"],
                                                                              1).items())
    ours.clear()
    theirs.clear()
    assert len(ours) == len(theirs) == 0 and list(ours.state_dict()) == []


def test_parameter_dict_errors():
    for fn in (lambda lib: lib.nn.ParameterDict({"a": lib.ones(1)})[1],
               lambda lib: lib.nn.ParameterDict(5),
               lambda lib: lib.nn.ParameterDict([("a", lib.ones(1), 1)]),
               lambda lib: lib.nn.ParameterDict([5]),
               lambda lib: lib.nn.ParameterDict()(1),
               lambda lib: lib.nn.ParameterDict()["missing"]):
        assert_same_error(fn)


def test_parameter_dict_state_dict_round_trip(rng):
    source = hookgrad.nn.ParameterDict({"w": hookgrad.tensor(rng.standard_normal(3))})
    target = hookgrad.nn.ParameterDict({"w": hookgrad.zeros(3, dtype=hookgrad.float64)})
    target.load_state_dict(source.state_dict())
    np.testing.assert_array_equal(target["w"].detach().numpy(), source["w"].detach().numpy())
