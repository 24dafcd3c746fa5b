"""The layout of cat's and stack's results against torch's, on generated stride patterns.

torch lays out cat's result channels-last when every input suggests that memory format (a
skipped 1-D empty input too), else row-major; stack is cat along the dim, seen with that dim
split, or for a new last dim cat of the inputs unsqueezed there. Inputs are made in both
libraries with ``as_strided`` over the same values, so each case reaches the rule with exactly
torch's strides: permuted dense orders (channels-last among them), step slices, size-1 dims
with any stride. Values, ``stride()``, ``is_contiguous()`` and the gradients must agree.
"""
import random

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close


def _layout(rng: random.Random, shape: tuple) -> tuple:
    """Strides for ``shape``: a dense order (often channels-last-like), maybe a gap, size-1
    dims with any stride; and the storage size they need."""
    order = list(range(len(shape)))
    if len(shape) >= 4 and rng.random() < 0.5:  # channels fastest, then the spatial dims, N
        order = [0] + list(range(2, len(shape))) + [1]
    elif rng.random() < 0.5:
        rng.shuffle(order)
    strides, step = [0] * len(shape), 1
    for d in reversed(order):
        if shape[d] == 1 and rng.random() < 0.4:
            strides[d] = rng.choice([1, 2, 7])
            continue
        gap = 2 if rng.random() < 0.1 else 1
        strides[d] = step * gap
        step *= shape[d] * gap
    extent = 1 + sum((n - 1) * s for n, s in zip(shape, strides))
    return tuple(strides), extent


def _pair(rng: random.Random, shape: tuple, strides: tuple, extent: int, seed: int):
    values = np.random.default_rng(seed).standard_normal(extent)
    made = []
    for lib in (torch, hookgrad):
        base = lib.tensor(values.copy())
        made.append(lib.as_strided(base, shape, strides).detach().requires_grad_(True))
    return made


def _case(seed: int):
    rng = random.Random(seed)
    ndim = rng.choice([2, 3, 4, 4, 4, 5])
    shape = tuple(rng.choice([1, 2, 3]) for _ in range(ndim))
    count = rng.randint(1, 3)
    same = rng.random() < 0.6  # every input laid out alike (the channels-last case)
    first = _layout(rng, shape)
    layouts = [first if same or i == 0 else _layout(rng, shape) for i in range(count)]
    return rng, shape, [_pair(rng, shape, s, e, seed * 10 + i) for i, (s, e) in
                        enumerate(layouts)]


def _check(result_t, result_h, inputs):
    assert tuple(result_h.stride()) == tuple(result_t.stride()), \
        f"{tuple(result_h.stride())} != {tuple(result_t.stride())}"
    assert result_h.is_contiguous() == result_t.is_contiguous()
    assert_close(result_h, result_t, 0, 0)
    weight = np.random.default_rng(0).standard_normal(tuple(result_t.shape))
    grads_t = torch.autograd.grad(result_t, [t for t, _ in inputs], torch.tensor(weight))
    grads_h = hookgrad.autograd.grad(result_h, [h for _, h in inputs], hookgrad.tensor(weight))
    for g_h, g_t in zip(grads_h, grads_t):
        assert_close(g_h, g_t, 0, 0)


@pytest.mark.parametrize("seed", range(150))
def test_cat_layout_matches_torch(seed):
    rng, shape, inputs = _case(seed)
    dim = rng.randrange(-len(shape), len(shape))
    _check(torch.cat([t for t, _ in inputs], dim), hookgrad.cat([h for _, h in inputs], dim),
           inputs)


@pytest.mark.parametrize("seed", range(150))
def test_stack_layout_matches_torch(seed):
    rng, shape, inputs = _case(seed)
    dim = rng.randrange(-len(shape) - 1, len(shape) + 1)  # the new last dim too
    _check(torch.stack([t for t, _ in inputs], dim),
           hookgrad.stack([h for _, h in inputs], dim), inputs)


@pytest.mark.parametrize("memory_format", ["channels_last", "channels_last_3d"])
def test_channels_last_inputs_give_channels_last_results(memory_format):
    # the fuzzer's case: stack of a permuted tensor that reads as channels-last
    shape = (2, 3, 4, 5) if memory_format == "channels_last" else (2, 3, 4, 5, 2)
    values = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    made = {lib: lib.tensor(values).to(memory_format=getattr(lib, memory_format))
            for lib in (torch, hookgrad)}
    for dim in range(-len(shape) - 1, len(shape) + 1):
        expected = torch.stack([made[torch]] * 2, dim)
        result = hookgrad.stack([made[hookgrad]] * 2, dim)
        assert tuple(result.stride()) == tuple(expected.stride()), dim
    for dim in range(len(shape)):
        mixed_t = torch.cat([made[torch], torch.tensor(values)], dim)
        mixed_h = hookgrad.cat([made[hookgrad], hookgrad.tensor(values)], dim)
        assert tuple(mixed_h.stride()) == tuple(mixed_t.stride())
        empty_t = torch.cat([made[torch], torch.tensor([])], dim)  # a skipped input counts
        empty_h = hookgrad.cat([made[hookgrad], hookgrad.tensor([])], dim)
        assert tuple(empty_h.stride()) == tuple(empty_t.stride())
