"""Strides of views where NumPy and torch choose differently: size-1 dimensions (reshape and
view follow torch's chunk rule, unsqueeze of a diagonal or of an ``as_strided`` view) and empty
slices (torch keeps ``stride * step``). Elementwise results rank those strides, so they must be
torch's exactly.

Each chain of view calls runs in hookgrad and torch on the same values; shape, ``stride()``,
``is_contiguous()`` and values must agree.
"""
import random

import numpy as np
import pytest
import torch

import hookgrad


def _step(rng: random.Random, shape: tuple) -> str:
    """One random view call that is legal for ``shape``."""
    ndim = len(shape)
    calls = ["unsqueeze", "as_strided"]
    if ndim:
        calls += ["slice", "squeeze", "expand", "select", "reshape", "flatten", "narrow"]
    if ndim >= 2:
        calls += ["permute", "transpose", "diagonal"]
    call = rng.choice(calls)
    if call == "unsqueeze":
        return f".unsqueeze({rng.randint(0, ndim)})"
    if call == "as_strided":
        size = [rng.choice([1, 1, 2, 3]) for _ in range(rng.randint(1, 3))]
        stride = [rng.choice([0, 1, 2, 5, 7]) if n == 1 else rng.choice([1, 2, 3]) for n in size]
        return f".contiguous().as_strided({size}, {stride})"
    if call == "permute":
        order = list(range(ndim))
        rng.shuffle(order)
        return f".permute({order})"
    if call == "transpose":
        return f".transpose({rng.randrange(ndim)}, {rng.randrange(ndim)})"
    if call == "diagonal":
        return ".diagonal(0, 0, 1)"
    d = rng.randrange(ndim)
    if call == "slice":
        return "[" + ", ".join([":"] * d + [f"{rng.choice([0, 1])}::{rng.choice([1, 2, 3])}"]) + "]"
    if call == "squeeze":
        return f".squeeze({d})"
    if call == "expand":
        ones = [i for i, n in enumerate(shape) if n == 1]
        if not ones:
            return ".unsqueeze(0).expand(2, *[-1] * %d)" % ndim
        target = list(shape)
        target[rng.choice(ones)] = rng.choice([1, 2, 3])
        return f".expand({target})"
    if call == "select":
        return f".select({d}, {rng.randrange(shape[d])})" if shape[d] else ""
    if call == "reshape":
        target = [n for n in shape if n != 1]
        for _ in range(rng.randint(0, 2)):
            target.insert(rng.randint(0, len(target)), 1)
        return f".reshape({target})" if rng.random() < 0.7 else f".reshape({list(shape)[::-1]})"
    if call == "flatten":
        return ".flatten()"
    return f".narrow({d}, 0, {rng.randint(0, shape[d])})" if shape[d] else ""


def _chain(seed: int) -> tuple:
    """A base shape and a chain of view calls on it that torch accepts."""
    rng = random.Random(seed)
    shape = tuple(rng.choice([0, 1, 2, 3] if rng.random() < 0.1 else [1, 1, 2, 3, 4])
                  for _ in range(rng.randint(0, 4)))
    expr = "x"
    for _ in range(rng.randint(1, 5)):
        current = tuple(eval(expr, {"x": torch.zeros(shape)}).shape)
        step = _step(rng, current)
        try:
            result = eval(expr + step, {"x": torch.zeros(shape)})
        except (RuntimeError, IndexError):
            continue
        if result.numel() == 0 and not any(result.stride()):
            continue  # (an empty view with all-zero strides reads as row-major here)
        expr += step
    return shape, expr


def _run(lib, shape: tuple, expr: str):
    x = lib.arange(float(np.prod(shape, dtype=int))).reshape(shape)
    result = eval(expr, {"x": x})
    return tuple(result.shape), tuple(result.stride()), result.is_contiguous(), result.tolist()


@pytest.mark.parametrize("seed", range(300))
def test_view_chain_strides_match_torch(seed):
    shape, expr = _chain(seed)
    assert _run(hookgrad, shape, expr) == _run(torch, shape, expr), expr


@pytest.mark.parametrize("expr", [
    "x.transpose(1, 0).diagonal(0, 0, 1).unsqueeze(1)",
    "x.contiguous().as_strided([1, 1, 1], [7, 0, 3]).reshape([1, 1, 1])",
    "x.contiguous().as_strided([2, 1, 2], [2, 1, 2]).reshape([2, 1, 2])",
    "x.unsqueeze(2).diagonal(0, 0, 1).reshape([1, 2, 1])",
    "x.contiguous().as_strided([1], [5]).unsqueeze(1).reshape([1, 1])",
    "x.permute(1, 0).reshape(2, 1, 3)",
    "x[:, 3::2]",
    "x[2:, 1::2]",
    "x.unsqueeze(0)[1::3].unsqueeze(1)",
])
def test_size_one_and_empty_view_strides(expr):
    assert _run(hookgrad, (3, 2), expr) == _run(torch, (3, 2), expr)


def test_reshape_that_copies_is_row_major_and_right():
    """reshape of a permuted tensor that no view can express copies row-major first."""
    def run(lib):
        x = lib.arange(24.0).reshape(3, 2, 1, 4).permute(0, 3, 2, 1)
        result = x.reshape(2, 1, 4, 3)
        return result.stride(), result.is_contiguous(), result.tolist()

    assert run(hookgrad) == run(torch)
