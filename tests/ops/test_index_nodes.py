"""index, index_put and index_copy against torch: the float64 values and gradients, the second
derivatives, gradcheck, what pack hooks see, and the nodes of the graph and of its gradient's
graph (names, saved attributes, edges) — ``_saved_indices`` is torch's list, with None for the
dims an index leaves whole and a mask as one entry; index_copy keeps source for its formula."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import assert_same_error, compare, compare_double_backward, saved_log

import hookgrad

RNG = np.random.default_rng(21)
X = RNG.standard_normal((3, 4, 5))
MASK = X[..., 0] > 0
ROW_MASK = np.array([True, False, True])

KEYS = {
    "first dim": lambda lib: lib.tensor([2, 0, 2]),
    "second dim": lambda lib: (slice(None), lib.tensor([1, 3])),
    "after a slice": lambda lib: (slice(1, None), lib.tensor([0, 3])),
    "after an int": lambda lib: (1, lib.tensor([0, 0, 2])),
    "two tensors": lambda lib: (lib.tensor([0, 2]), slice(None), lib.tensor([4, 1])),
    "apart by None": lambda lib: (lib.tensor([0, 2]), None, lib.tensor([1, 1])),
    "ellipsis first": lambda lib: (Ellipsis, lib.tensor([1, 4])),
    "ellipsis then int": lambda lib: (Ellipsis, lib.tensor([1, 2]), 3),
    "mask": lambda lib: lib.tensor(MASK),
    "mask then tensor": lambda lib: (lib.tensor(MASK), lib.tensor([1, 4])[:int(MASK.sum())]
                                     if MASK.sum() <= 2 else lib.tensor(0)),
    "row mask and tensor": lambda lib: (lib.tensor(ROW_MASK), lib.tensor([1, 3])),
    "True": lambda lib: (True, lib.tensor([1, 2])),
    "int32": lambda lib: (slice(None), lib.tensor([1, 2], dtype=lib.int32)),
    "2-d index": lambda lib: lib.tensor([[0, 1], [2, 2]]),
}


def _x(lib):
    return lib.tensor(X, requires_grad=True)


def _shown(value):
    if isinstance(value, (torch.Tensor, hookgrad.Tensor)):
        return ("tensor", tuple(value.shape), str(value.dtype).split(".")[-1],
                value.detach().numpy().tolist())
    if isinstance(value, (tuple, list)):
        return tuple(_shown(item) for item in value)
    return value


def nodes(tensor) -> list:
    """Every node below ``tensor``: name, saved attributes and edges, depth first."""
    found = []

    def walk(node, depth):
        if node is None:
            found.append((depth, None))
            return
        name = type(node).__name__
        saved = () if name == "AccumulateGrad" else tuple(
            (key, _shown(getattr(node, key))) for key in sorted(dir(node))
            if key.startswith("_saved_"))
        found.append((depth, name, saved, tuple(nr for _, nr in node.next_functions)))
        for child, _ in node.next_functions:
            walk(child, depth + 1)

    walk(tensor.grad_fn, 0)
    return found


def _graphs(lib, build):
    """The nodes of ``build(lib)``'s result and of its first gradient's graph."""
    x = _x(lib)
    out = build(lib, x)
    weight = lib.tensor(np.random.default_rng(3).standard_normal(tuple(out.shape)),
                        requires_grad=True)
    (grad,) = lib.autograd.grad(out, [x], weight, create_graph=True)
    return nodes(out), nodes(grad)


@pytest.mark.parametrize("key", KEYS.values(), ids=KEYS.keys())
def test_getitem_graph_and_gradient_graph_as_torch(key):
    def build(lib, x):
        return x[key(lib)]

    assert _graphs(hookgrad, build) == _graphs(torch, build)


@pytest.mark.parametrize("key", KEYS.values(), ids=KEYS.keys())
def test_getitem_values_gradients_and_second_derivatives_as_torch(key):
    compare(lambda lib, x: x[key(lib)], X)
    compare_double_backward(lambda lib, x: x[key(lib)], X)


PUTS = {
    "one tensor": (lambda lib: (lib.tensor([2, 0]),), (2, 4, 5)),
    "two tensors": (lambda lib: (lib.tensor([0, 2, 0]), lib.tensor([1, 1, 1])), (3, 5)),
    "mask": (lambda lib: (lib.tensor(MASK),), (int(MASK.sum()), 5)),
    "broadcast value": (lambda lib: (lib.tensor([1]), lib.tensor([0, 3])), (5,)),
}


@pytest.mark.parametrize("accumulate", [False, True], ids=["write", "accumulate"])
@pytest.mark.parametrize("indices, value_shape", PUTS.values(), ids=PUTS.keys())
def test_index_put_as_torch(indices, value_shape, accumulate):
    values = RNG.standard_normal(value_shape)

    def build(lib, x, v):
        return x.index_put(indices(lib), v, accumulate=accumulate)

    compare(build, X, values)
    compare_double_backward(build, X, values)

    def graphs(lib):
        x, v = _x(lib), lib.tensor(values, requires_grad=True)
        out = build(lib, x, v)
        weight = lib.tensor(np.ones(tuple(out.shape)), requires_grad=True)
        grads = lib.autograd.grad(out, [x, v], weight, create_graph=True)
        return nodes(out), [nodes(g) for g in grads]

    assert graphs(hookgrad) == graphs(torch)


@pytest.mark.parametrize("key", [KEYS["second dim"], KEYS["mask"], KEYS["two tensors"]],
                         ids=["second dim", "mask", "two tensors"])
def test_setitem_with_an_index_records_torchs_node(key):
    def build(lib, x):
        y = x * 1
        y[key(lib)] = lib.tensor(0.5, dtype=lib.float64, requires_grad=True)
        return y

    assert _graphs(hookgrad, build) == _graphs(torch, build)


COPIES = {
    "dim 0": (0, [2, 0], (2, 4, 5)),
    "last dim": (-1, [4, 1, 0], (3, 4, 3)),
    "0-dim index": (1, 2, (3, 1, 5)),
}


@pytest.mark.parametrize("dim, index, source_shape", COPIES.values(), ids=COPIES.keys())
def test_index_copy_as_torch(dim, index, source_shape):
    source = RNG.standard_normal(source_shape)

    def build(lib, x, s):
        return x.index_copy(dim, lib.tensor(index), s)

    compare(build, X, source)
    compare_double_backward(build, X, source)

    def graphs(lib):
        x, s = _x(lib), lib.tensor(source, requires_grad=True)
        out = build(lib, x, s)
        weight = lib.tensor(np.ones(tuple(out.shape)), requires_grad=True)
        grads = lib.autograd.grad(out, [x, s], weight, create_graph=True)
        return nodes(out), [nodes(g) for g in grads]

    assert graphs(hookgrad) == graphs(torch)


@pytest.mark.parametrize("index", [[1], 1], ids=["1-d index", "0-dim index"])
def test_index_copy_of_a_0_dim_source_as_torch(index):
    def build(lib, x, s):
        return x.index_copy(0, lib.tensor(index), s)

    compare(build, X[0, 0], np.array(0.25))

    def graphs(lib):
        x = lib.tensor(X[0, 0], requires_grad=True)
        s = lib.tensor(0.25, dtype=lib.float64, requires_grad=True)
        out = build(lib, x, s)
        grads = lib.autograd.grad(out, [x, s], lib.ones(5, dtype=lib.float64,
                                                        requires_grad=True), create_graph=True)
        return nodes(out), [nodes(g) for g in grads]

    assert graphs(hookgrad) == graphs(torch)


def test_index_copy_into_a_0_dim_tensor_as_torch():
    compare(lambda lib, x, s: x.index_copy(0, lib.tensor(0), s), np.array(1.5), np.array([2.5]))


def test_index_copy_saves_source_only_when_its_gradient_is_wanted():
    for lib in (hookgrad, torch):
        wanted = lib.tensor(X[:2], requires_grad=True)
        node = _x(lib).index_copy(0, lib.tensor([0, 1]), wanted).grad_fn
        assert node._saved_source is wanted
        node = _x(lib).index_copy(0, lib.tensor([0, 1]), lib.tensor(X[:2])).grad_fn
        assert node._saved_source is None


def test_pack_hooks_see_torchs_saved_tensors():
    def each(lib, x, s):
        x[lib.tensor(MASK)].sum()
        x[:, lib.tensor([1, 3])].sum()
        x.index_put((lib.tensor([0]), lib.tensor([2])), s[0, 0, :1], accumulate=True)
        x.index_copy(0, lib.tensor([2, 0]), s)

    source = RNG.standard_normal((2, 4, 5))
    logs = [saved_log(lib, lambda *t: each(lib, *t), lib.tensor(X, requires_grad=True),
                      lib.tensor(source, requires_grad=True)) for lib in (hookgrad, torch)]
    assert logs[0] == logs[1]


def test_raw_saved_indices_hold_none_where_torch_shows_none():
    node = _x(hookgrad)[:, hookgrad.tensor([1, 2])].grad_fn
    raw = node._raw_saved_indices
    assert type(raw) is tuple and raw[0] is None and raw[1] is not None
    assert node._saved_indices[1].tolist() == [1, 2]


def test_saved_indices_after_backward_raise_torchs_error():
    def read(lib):
        out = _x(lib)[:, lib.tensor([1, 2])]
        out.sum().backward()
        return out.grad_fn._saved_indices

    assert_same_error(read)


def test_gradcheck_of_index_index_put_and_index_copy():
    x = hookgrad.tensor(X[:2, :3, :2], requires_grad=True)
    v = hookgrad.tensor(RNG.standard_normal((2, 2)), requires_grad=True)

    def fn(x, v):
        picked = x[:, hookgrad.tensor([2, 0, 2])]
        put = x.index_put((hookgrad.tensor([1, 0]), hookgrad.tensor([2, 2])), v,
                          accumulate=True)
        copied = x.index_copy(1, hookgrad.tensor([0, 1]), x[:, 1:] * 2)
        return picked.sum() + (put * put).sum() + (copied ** 2).sum()

    assert hookgrad.autograd.gradcheck(fn, (x, v))
    assert hookgrad.autograd.gradgradcheck(fn, (x, v))
