"""The masking gradients (relu, threshold, hardtanh, the shrinks) when the incoming gradient is
not the engine's to overwrite (the caller's, or a view): a copy cleared where the mask holds,
as bits (``_pattern_backward.clear_where``). Checked against torch bit for bit on gradients
holding inf, NaN and -0.0, in every float dtype, in C, transposed and channels-last layouts."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad
from hookgrad.ops._pattern_backward import clear_where

ACTIVATIONS = {
    "relu": lambda lib, t: lib.relu(t),
    "threshold": lambda lib, t: lib.nn.functional.threshold(t, 0.25, -2.0),
    "hardtanh": lambda lib, t: lib.nn.functional.hardtanh(t, -0.5, 0.75),
    "hardshrink": lambda lib, t: lib.nn.functional.hardshrink(t, 0.3),
    "softshrink": lambda lib, t: lib.nn.functional.softshrink(t, 0.3),
    "relu6": lambda lib, t: lib.nn.functional.relu6(t),
}
DTYPES = ["float16", "bfloat16", "float32", "float64"]


def _values(shape, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    flat = x.reshape(-1)
    flat[::7] = 0.0
    flat[3::11] = -0.0
    return x


def _grad(shape, seed):
    g = np.random.default_rng(seed + 1).standard_normal(shape)
    flat = g.reshape(-1)
    flat[1::5] = np.inf
    flat[2::13] = np.nan
    flat[4::9] = -0.0
    flat[5::17] = -np.inf
    return g


def _layout(lib, t, layout):
    if layout == "transposed":
        return t.transpose(0, 1)
    if layout == "channels_last":
        return t.contiguous(memory_format=lib.channels_last)
    return t


def _run(lib, name, x, g, dtype, layout):
    t = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
    grad = _layout(lib, lib.tensor(g, dtype=getattr(lib, dtype)), layout)
    out = ACTIVATIONS[name](lib, _layout(lib, t, layout))
    out.backward(grad)  # the caller's gradient: never overwritten
    return t.grad, grad


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "channels_last"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_masking_gradients_of_a_callers_gradient_equal_torchs(name, dtype, layout):
    shape = (4, 6, 5, 3)
    x, g = _values(shape, 0), _grad(shape, 0)
    if layout == "transposed":
        x, g = x.transpose(1, 0, 2, 3).copy(), g.transpose(1, 0, 2, 3).copy()
    ours, our_grad = _run(hookgrad, name, x, g, dtype, layout)
    theirs, their_grad = _run(torch, name, x, g, dtype, layout)
    expected = theirs.float().numpy() if dtype == "bfloat16" else theirs.numpy()
    actual = ours.float().numpy() if dtype == "bfloat16" else ours.numpy()
    # zeros are +0 where the mask clears, the rest is grad as it came (a NaN's sign and
    # payload aside: torch's bfloat16 kernel writes its own NaN pattern)
    np.testing.assert_array_equal(actual, expected)
    number = ~np.isnan(expected)
    np.testing.assert_array_equal(np.signbit(actual[number]), np.signbit(expected[number]))
    assert ours.stride() == theirs.stride()
    # the caller's gradient is as it was
    given = _layout(hookgrad, hookgrad.tensor(g, dtype=getattr(hookgrad, dtype)), layout)
    np.testing.assert_array_equal(our_grad.float().numpy(), given.float().numpy())


def test_a_large_gradient_through_the_bit_path_equals_torchs():
    # a ReLU's mask as good as random over a million values, the incoming gradient a view
    x, g = _values((64, 16, 32, 32), 3), _grad((64, 16, 32, 32), 3)
    ours, _ = _run(hookgrad, "relu", x, g, "float32", "contiguous")
    theirs, _ = _run(torch, "relu", x, g, "float32", "contiguous")
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32])
def test_clear_where_is_a_masked_zeroing(dtype):
    rng = np.random.default_rng(5)
    values = (rng.standard_normal((7, 9)) * 10).astype(dtype)
    mask = rng.random((7, 9)) < 0.5
    expected = np.where(mask, np.zeros((), dtype), values)
    clear_where(values, mask)
    np.testing.assert_array_equal(values, expected)
    view = np.zeros((9, 7), dtype).T  # not C-ordered: still in place
    view[...] = expected + 1
    clear_where(view, mask)
    np.testing.assert_array_equal(view, np.where(mask, 0, expected + 1))


@pytest.mark.parametrize("bound", [0.1, 0.3, 0.7, 1.1, 2.5e-3])
@pytest.mark.parametrize("dtype", DTYPES)
def test_inputs_that_round_onto_the_bound_are_placed_as_torch_places_them(bound, dtype):
    """An input that is the bound rounded to its dtype: torch's threshold and hardtanh
    gradients compare half precision in float32, its shrinks in the dtype itself."""
    bounded = {
        "hardtanh": lambda lib, t: lib.nn.functional.hardtanh(t, -bound, bound),
        "softshrink": lambda lib, t: lib.nn.functional.softshrink(t, bound),
        "hardshrink": lambda lib, t: lib.nn.functional.hardshrink(t, bound),
        "threshold": lambda lib, t: lib.nn.functional.threshold(t, bound, 5.0),
    }
    values = np.array([bound, -bound, np.nextafter(bound, 1), np.nextafter(-bound, -1), 0.0])
    for name, fn in bounded.items():
        grads = []
        for lib in (hookgrad, torch):
            t = lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True)
            (grad,) = lib.autograd.grad(fn(lib, t).sum(), t)
            grads.append(grad.float().numpy() if dtype == "bfloat16" else grad.numpy())
        np.testing.assert_array_equal(grads[0], grads[1], err_msg=f"{name} {dtype} {bound}")


def test_the_masking_copy_adds_no_activation_sized_mask_to_the_peak():
    """The gradient (16 MiB) is the one new activation-sized array: the mask and its words are
    made a block at a time (np.where's whole boolean mask alone would be 4 MiB more)."""
    from conftest import traced_peak

    x = hookgrad.randn(64, 64, 32, 32)
    x.requires_grad_(True)
    out = hookgrad.relu(x)
    grad = hookgrad.ones(64, 64, 32, 32)
    size = grad.numel() * 4
    peak = traced_peak(lambda: out.backward(grad))
    assert peak < size + 2 * (1 << 20), (peak, size)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", [
    lambda lib, t: lib.relu(t),
    lambda lib, t: t.clone().relu_(),
    lambda lib, t: lib.clamp(t, min=0.0),
    lambda lib, t: lib.clamp(t, min=-0.0),
    lambda lib, t: lib.clamp(t, max=0.0),
    lambda lib, t: lib.clamp(t, max=-0.0),
    lambda lib, t: lib.clamp(t, min=-0.0, max=0.0),
    lambda lib, t: lib.clamp(t, min=0.5, max=-1.0),  # min above max: max wins
    lambda lib, t: lib.clamp(t, min=float("nan")),
], ids=["relu", "relu_", "min0", "min-0", "max0", "max-0", "both", "crossed", "nan"])
def test_relu_and_clamp_keep_x_unless_strictly_outside_as_torch(op, dtype):
    """torch's relu and number-bounded clamp return x itself where it equals a bound: -0.0 stays
    -0.0 against a bound of +0.0 and the other way round (np.maximum gives +0.0)."""
    values = np.array([-0.0, 0.0, np.nan, -np.inf, np.inf, 1.0, -1.0, 0.5, -2.0, 3.0, 1e-30])
    results = []
    for lib in (hookgrad, torch):
        out = op(lib, lib.tensor(values, dtype=getattr(lib, dtype)))
        results.append(out.float().numpy())
    ours, theirs = results
    np.testing.assert_array_equal(ours, theirs)
    number = ~np.isnan(theirs)
    np.testing.assert_array_equal(np.signbit(ours[number]), np.signbit(theirs[number]))
