"""embedding_bag and EmbeddingBag against torch: every mode with offsets, 2-D input,
per_sample_weights, padding_idx, include_last_offset, empty bags, scale_grad_by_freq,
max_norm; gradients in the weight and in per_sample_weights; errors; module repr and init."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, assert_same_error, compare, init_draws


def F(lib):
    return lib.nn.functional


INDICES = np.array([1, 2, 4, 5, 4, 3, 2, 9, 0, 4])
OFFSETS = {  # include_last_offset -> offsets (an empty bag in the middle, one at the end)
    False: np.array([0, 3, 3, 7, 10]),
    True: np.array([0, 3, 3, 7, 10]),
}


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("include_last", [False, True])
@pytest.mark.parametrize("padding_idx", [None, 4, -1])
def test_embedding_bag_offsets(rng, mode, include_last, padding_idx):
    weight = rng.standard_normal((10, 3))
    offsets = OFFSETS[include_last]

    def fn(lib, w):
        return F(lib).embedding_bag(lib.tensor(INDICES), w, lib.tensor(offsets), mode=mode,
                                    include_last_offset=include_last, padding_idx=padding_idx)

    compare(fn, weight)
    compare(fn, weight.astype(np.float32))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_2d_input(rng, mode):
    weight = rng.standard_normal((7, 4))
    indices = rng.integers(0, 7, (3, 5))
    compare(lambda lib, w: F(lib).embedding_bag(lib.tensor(indices), w, mode=mode), weight)
    compare(lambda lib, w: lib.nn.functional.embedding_bag(lib.tensor(indices).int(), w,
                                                           mode=mode, padding_idx=2), weight)


@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding_bag_per_sample_weights(rng, padding_idx):
    weight = rng.standard_normal((10, 3))
    psw = rng.standard_normal(INDICES.size)

    def fn(lib, w, p):
        return F(lib).embedding_bag(lib.tensor(INDICES), w, lib.tensor(OFFSETS[False]),
                                    mode="sum", per_sample_weights=p, padding_idx=padding_idx)

    compare(fn, weight, psw)
    indices = rng.integers(0, 10, (2, 4))
    compare(lambda lib, w, p: F(lib).embedding_bag(lib.tensor(indices), w, mode="sum",
                                                   per_sample_weights=p),
            weight, rng.standard_normal((2, 4)))


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_embedding_bag_scale_grad_by_freq(rng, mode):
    compare(lambda lib, w: F(lib).embedding_bag(lib.tensor(INDICES), w,
                                                lib.tensor(OFFSETS[False]), mode=mode,
                                                scale_grad_by_freq=True, padding_idx=2),
            rng.standard_normal((10, 3)))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_max_norm(rng, mode):
    weight = rng.standard_normal((10, 3)) * 2
    results = []
    for lib in (hookgrad, torch):
        w = lib.tensor(weight.copy())
        out = F(lib).embedding_bag(lib.tensor(INDICES), w, lib.tensor(OFFSETS[False]),
                                   max_norm=1.5, norm_type=1.5, mode=mode)
        results.append((out, w))
    for ours, theirs in zip(*results):
        assert_close(ours, theirs)


def test_embedding_bag_edge_shapes(rng):
    weight = rng.standard_normal((10, 3))
    for offsets, include_last in (([0, 8], True), ([0, 3, 3], True), ([0, 4, 4, 8], True),
                                  ([0], False)):
        compare(lambda lib, w: F(lib).embedding_bag(
            lib.tensor(INDICES[:8]), w, lib.tensor(offsets, dtype=lib.int64),
            include_last_offset=include_last), weight)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_double_backward_by_gradgradcheck(rng, mode):
    """torch has no double backward for embedding_bag; ours (a composition) is checked
    numerically instead, in the weight and in per_sample_weights."""
    weight = hookgrad.tensor(rng.standard_normal((10, 3)), requires_grad=True)
    psw = hookgrad.tensor(rng.standard_normal(INDICES.size), requires_grad=True)
    offsets = hookgrad.tensor(OFFSETS[False])

    def fn(w, p):
        return F(hookgrad).embedding_bag(hookgrad.tensor(INDICES), w, offsets, mode=mode,
                                         per_sample_weights=p if mode == "sum" else None)

    assert hookgrad.autograd.gradcheck(fn, (weight, psw))
    assert hookgrad.autograd.gradgradcheck(fn, (weight, psw))


ERRORS = [
    dict(offsets=[1, 4]), dict(offsets=[0, 11]), dict(indices=[-1, 2]), dict(indices=[1.0, 2.0]),
    dict(indices=[3, 10], mode="sum"), dict(indices=[3, 10], mode="max"),
    dict(indices=[-1, 1], mode="sum", dtype=np.float32),
    dict(padding_idx=10), dict(padding_idx=-11), dict(mode="median"),
    dict(mode="max", scale_grad_by_freq=True), dict(mode="max", sparse=True),
    dict(mode="mean", per_sample_weights=True), dict(offsets=None),
    dict(offsets=[[0, 2]]), dict(indices=[[[1]]]),
    dict(weight_shape=(10,)), dict(per_sample_weights="short"),
    dict(per_sample_weights="float32", mode="sum"),
]


@pytest.mark.parametrize("case", ERRORS)
def test_embedding_bag_errors(rng, case):
    weight = rng.standard_normal(case.get("weight_shape", (10, 3))).astype(
        case.get("dtype", np.float64))
    indices = case.get("indices", INDICES[:4])
    offsets = case.get("offsets", [0, 2])
    psw = case.get("per_sample_weights")

    def fn(lib):
        i = lib.tensor(indices)
        if psw is True:
            p = lib.ones(i.shape, dtype=lib.float64)
        elif psw == "short":
            p = lib.ones(1, dtype=lib.float64)
        elif psw == "float32":
            p = lib.ones(i.shape)
        else:
            p = None
        return F(lib).embedding_bag(i, lib.tensor(weight),
                                    None if offsets is None else lib.tensor(offsets),
                                    mode=case.get("mode", "mean"),
                                    scale_grad_by_freq=case.get("scale_grad_by_freq", False),
                                    sparse=case.get("sparse", False), per_sample_weights=p,
                                    padding_idx=case.get("padding_idx"))

    assert_same_error(fn)


CONFIGS = [dict(), dict(mode="sum", padding_idx=2), dict(mode="max", max_norm=1.0),
           dict(norm_type=1.0, scale_grad_by_freq=True, include_last_offset=True,
                padding_idx=-1)]


def test_embedding_bag_2d_input_with_offsets():
    """The message names the offsets' class, which is each library's own Tensor."""
    messages = []
    for lib in (hookgrad, torch):
        with pytest.raises(ValueError) as info:
            F(lib).embedding_bag(lib.tensor([[1, 2]]), lib.ones(4, 2), lib.tensor([0]))
        messages.append(str(info.value).replace(str(type(lib.ones(1))), "<Tensor>"))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("config", CONFIGS)
def test_embedding_bag_module(rng, config):
    built = [init_draws(lib, lambda: lib.nn.EmbeddingBag(10, 3, **config))
             for lib in (hookgrad, torch)]
    (ours, our_draws), (theirs, their_draws) = built
    assert our_draws == their_draws
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    weight = rng.standard_normal((10, 3)).astype(np.float32)
    if "padding_idx" in config:
        weight[config["padding_idx"]] = 0
    for module, lib in ((ours, hookgrad), (theirs, torch)):
        with lib.no_grad():
            module.weight.copy_(lib.tensor(weight.copy()))
    offsets = OFFSETS[config.get("include_last_offset", False)]
    compare(lambda lib, i, o: (ours if lib is hookgrad else theirs)(i, o), INDICES, offsets,
            grad=False)
    padded = [lib.nn.EmbeddingBag(5, 2, padding_idx=1) for lib in (hookgrad, torch)]
    assert not padded[0].weight.detach().numpy()[1].any()
    assert_same_error(lambda lib: lib.nn.EmbeddingBag(5, 2, padding_idx=5))


def test_embedding_bag_from_pretrained(rng):
    weight = rng.standard_normal((6, 2))
    bags = [lib.nn.EmbeddingBag.from_pretrained(lib.tensor(weight), mode="max")
            for lib in (hookgrad, torch)]
    assert repr(bags[0]) == repr(bags[1])
    assert bags[0].weight.requires_grad is bags[1].weight.requires_grad is False
    indices = np.array([[0, 5], [3, 3]])
    compare(lambda lib, i: bags[lib is torch](i), indices, grad=False)
