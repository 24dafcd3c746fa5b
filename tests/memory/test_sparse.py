"""quantize's sparse storage of exact zeros (memory/savers/_sparse.py): sparse and dense decode
alike except that zeros are exact, the smaller form is chosen, its bytes are counted as
stored, and hookgrad's NumPy kernels and torch's give the same values and gradients."""
import math

import ml_dtypes
import numpy as np
import pytest
import torch

import hookgrad
from hookgrad import memory
from hookgrad.memory.savers._sparse import dense_bytes, sparse_bytes
from hookgrad.memory.savers.quantize import (NumpyKernels, TorchKernels, quantize_array,
                                             quantize_groups)

TORCH = TorchKernels(torch)
MODES = [("tensor", None), ("channel", 1), ("channel", 0), ("group", 8), ("group", 6)]
MODE_IDS = ["tensor", "channel1", "channel0", "group8", "group6"]


def _encode(values, bits, mode, sparse, seed=None, kernels=NumpyKernels):
    per, where = mode
    if per == "group":
        return quantize_groups(values, bits, where, kernels, seed, sparse)
    return quantize_array(values, bits, where, kernels, seed, sparse)


def _rows(stored):
    return getattr(stored, "rows", stored)


def _with_zeros(rng, shape, fraction, relu=False):
    values = rng.standard_normal(shape)
    if relu:
        values = np.abs(values)
    return np.where(rng.random(shape) < fraction, 0.0, values).astype(np.float32)


@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
@pytest.mark.parametrize("bits", [8, 4, 2])
@pytest.mark.parametrize("seed", [None, 5], ids=["nearest", "stochastic"])
@pytest.mark.parametrize("relu", [True, False], ids=["relu", "signed"])
@pytest.mark.parametrize("lib", [hookgrad, torch], ids=["hookgrad", "torch"])
def test_sparse_decodes_nonzeros_as_dense_and_zeros_exactly(rng, mode, bits, seed, relu, lib):
    values = _with_zeros(rng, (12, 10, 3), 0.6, relu)
    given, kernels = (torch.from_numpy(values), TORCH) if lib is torch else (values, NumpyKernels)
    dense = _encode(given, bits, mode, False, seed, kernels)
    sparse = _encode(given, bits, mode, True, seed, kernels)
    assert _rows(sparse).mask is not None and _rows(dense).mask is None
    decoded, exact = sparse.decode(), dense.decode()
    if lib is torch:
        decoded, exact = decoded.numpy(), exact.numpy()
    assert decoded.dtype == values.dtype and decoded.shape == values.shape
    nonzero = values != 0
    np.testing.assert_array_equal(decoded[nonzero], exact[nonzero])
    np.testing.assert_array_equal(decoded[~nonzero], 0)
    assert not np.signbit(decoded[~nonzero]).any()
    if relu:  # a ReLU's mask ``result > 0`` stays exact in both
        np.testing.assert_array_equal(decoded > 0, values > 0)
        np.testing.assert_array_equal(exact > 0, values > 0)


@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
@pytest.mark.parametrize("bits", [8, 4, 2])
@pytest.mark.parametrize("relu", [True, False], ids=["relu", "signed"])
def test_torch_kernels_decode_what_numpy_kernels_decode(rng, mode, bits, relu):
    values = _with_zeros(rng, (9, 14, 4), 0.5, relu)
    for sparse in (True, None):
        ours = _encode(values, bits, mode, sparse)
        theirs = _encode(torch.from_numpy(values), bits, mode, sparse, kernels=TORCH)
        np.testing.assert_array_equal(theirs.decode().numpy(), ours.decode())
        assert theirs.nbytes == ours.nbytes and theirs.kind == ours.kind


@pytest.mark.parametrize("bits", [8, 4, 2])
def test_the_smaller_form_is_chosen_around_the_break_even(bits):
    count = 4096
    values = np.arange(1, count + 1, dtype=np.float32)
    break_even = count // bits  # zeros at which mask + codes equal every code
    for zeros in range(break_even - 9, break_even + 10):
        given = values.copy()
        given[:zeros] = 0
        chosen = quantize_array(given, bits, None)
        forced = {s: quantize_array(given, bits, None, sparse=s).nbytes for s in (True, False)}
        assert forced[True] == sparse_bytes(count, count - zeros, bits) + 8
        assert forced[False] == dense_bytes(count, bits) + 8
        assert chosen.nbytes == min(forced.values())
        assert (chosen.mask is not None) == (forced[True] < forced[False])
    assert dense_bytes(count, bits) == sparse_bytes(count, count - break_even, bits)


@pytest.mark.parametrize("bits", [8, 4, 2])
@pytest.mark.parametrize("count", [1, 7, 9, 1001])
def test_stored_bytes_are_mask_codes_and_scales(rng, bits, count):
    values = _with_zeros(rng, (count,), 0.7, relu=True)
    nonzero = int(np.count_nonzero(values))
    stored = quantize_array(values, bits, None, sparse=True)
    assert stored.nbytes == math.ceil(count / 8) + math.ceil(nonzero * bits / 8) + 2 * 4
    assert stored.kind == f"int{bits} sparse"
    x = hookgrad.tensor(values, requires_grad=True)
    with memory.ledger() as led:
        with memory.quantize(bits, per="tensor", sparse=True):
            y = (x * 1).relu()  # ReluBackward0 saves its output, here ``values``
    assert led.total == stored.nbytes
    y.sum().backward()


@pytest.mark.parametrize("lib", [hookgrad, torch], ids=["hookgrad", "torch"])
@pytest.mark.parametrize("sparse", [None, True])
def test_all_zero_and_no_zero_tensors(lib, sparse):
    kernels = TORCH if lib is torch else NumpyKernels
    for values in (np.zeros((6, 5), np.float32), np.full((6, 5), 2.5, np.float32)):
        given = torch.from_numpy(values) if lib is torch else values
        for mode in MODES:
            stored = _encode(given, 8, mode, sparse, kernels=kernels)
            decoded = stored.decode()
            decoded = decoded.numpy() if lib is torch else decoded
            np.testing.assert_array_equal(decoded, values)
            if sparse is None:  # no zero: dense; all zeros: a mask and no code
                assert (_rows(stored).mask is not None) == (not values.any())


@pytest.mark.parametrize("seed", [None, 2], ids=["nearest", "stochastic"])
@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
def test_negative_zero_is_kept_as_dense_keeps_it(rng, mode, seed):
    # -0.0 keeps its code: where a slice's minimum is 0 (a ReLU's output) dense and sparse
    # both give +0.0 and ReLU's mask stays exact; elsewhere both give dense's value
    relu = _with_zeros(rng, (8, 16), 0.5, relu=True)
    relu[:, 3] = -0.0
    relu[2, :5] = -0.0
    signed = relu.copy()
    signed[0, 0] = -1.0
    for values in (relu, signed):
        dense = _encode(values, 8, mode, False, seed).decode()
        stored = _encode(values, 8, mode, True, seed)
        sparse = stored.decode()
        kept = (values != 0) | np.signbit(values)
        np.testing.assert_array_equal(sparse[kept], dense[kept])
        np.testing.assert_array_equal(sparse[~kept], 0)
        if values is relu:
            np.testing.assert_array_equal(sparse, dense)
            np.testing.assert_array_equal(sparse > 0, values > 0)
        if seed is not None and _rows(_encode(values, 8, mode, False, seed)).positive \
                is not None:  # a -0.0 where the minimum is 0: the masks cannot fold
            assert _rows(stored).positive is not None


def test_stochastic_rounding_folds_the_relu_mask_into_the_nonzero_mask(rng):
    values = _with_zeros(rng, (16, 64), 0.1, relu=True)
    values[:, ::5] *= 1e-4  # positive values below a step: their codes are often 0
    dense = quantize_array(values, 2, 1, seed=3, sparse=False)
    sparse = quantize_array(values, 2, 1, seed=3)
    assert dense.positive is not None and sparse.positive is None and sparse.folded
    assert sparse.nbytes < dense.nbytes  # one bitmask instead of two: sparse at 10 % zeros
    np.testing.assert_array_equal(sparse.decode() > 0, values > 0)
    np.testing.assert_array_equal(sparse.decode(), dense.decode())


@pytest.mark.parametrize("lib", [hookgrad, torch], ids=["hookgrad", "torch"])
@pytest.mark.parametrize("per", ["tensor", "channel", "group"])
def test_non_finite_values_are_still_kept_exact(lib, per):
    values = np.zeros((4, 8), np.float32)
    values[0, :3] = [np.nan, np.inf, 1.0]
    framework = "torch" if lib is torch else "hookgrad"
    x = lib.tensor(values, requires_grad=True)
    saver = memory.quantize(8, per=per, group_size=4, sparse=True, framework=framework)
    with saver:
        z = (x * 1).sin()  # SinBackward0 saves its input
    np.testing.assert_array_equal(z.grad_fn._saved_self.detach().numpy(), values)


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
@pytest.mark.parametrize("lib", [hookgrad, torch], ids=["hookgrad", "torch"])
def test_every_float_dtype_round_trips_with_zeros_exact(rng, dtype, lib):
    values = _with_zeros(rng, (10, 12), 0.5, relu=True)
    numpy_dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    given = values.astype(numpy_dtype)
    kernels = NumpyKernels
    if lib is torch:
        given = torch.from_numpy(values).to(getattr(torch, dtype))
        kernels = TORCH
    for mode in MODES:
        dense = _encode(given, 8, mode, False, kernels=kernels).decode()
        sparse = _encode(given, 8, mode, True, kernels=kernels).decode()
        assert sparse.dtype == given.dtype
        if lib is torch:
            dense, sparse = dense.float().numpy(), sparse.float().numpy()
        else:
            dense, sparse = dense.astype(np.float64), sparse.astype(np.float64)
        np.testing.assert_array_equal(sparse, dense)  # ReLU-like: zeros exact in both
        np.testing.assert_array_equal(sparse == 0, values == 0)


@pytest.mark.parametrize("lib", [hookgrad, torch], ids=["hookgrad", "torch"])
def test_non_contiguous_inputs(rng, lib):
    values = _with_zeros(rng, (7, 9, 6), 0.6)
    kernels = TORCH if lib is torch else NumpyKernels
    given = torch.from_numpy(values) if lib is torch else values
    given = given.transpose(0, 2) if lib is torch else given.transpose(2, 1, 0)
    expected = values.transpose(2, 1, 0)
    for mode in MODES:
        for bits in (8, 2):
            sparse = _encode(given, bits, mode, True, kernels=kernels).decode()
            dense = _encode(given, bits, mode, False, kernels=kernels).decode()
            sparse, dense = (sparse.numpy(), dense.numpy()) if lib is torch else (sparse, dense)
            np.testing.assert_array_equal(sparse[expected != 0], dense[expected != 0])
            np.testing.assert_array_equal(sparse[expected == 0], 0)


def test_the_argument_is_checked_and_shown():
    with pytest.raises(ValueError):
        memory.quantize(8, sparse="yes")
    assert repr(memory.quantize(8, sparse=False)) == "quantize(8, per='channel', sparse=False)"
    assert repr(memory.quantize(8)) == "quantize(8, per='channel')"


def _models(lib):
    nn = lib.nn
    mlp = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                        nn.Linear(32, 4))
    cnn = nn.Sequential(nn.Conv2d(2, 6, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                        nn.Conv2d(6, 8, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 2 * 2, 3))
    return {"mlp": (mlp, (24, 16)), "cnn": (cnn, (5, 2, 8, 8))}


def _gradients(lib, name, sparse):
    """Parameter gradients of a model built from one set of weights in ``lib``, under
    quantize(8, per="tensor") with ``sparse`` (the string "none": no policy). Per tensor, as
    per channel a saved view (the CNN's flattened features) is laid out differently in the
    two frameworks: hookgrad stores the buffer it views, torch the view."""
    model, shape = _models(lib)[name]
    rng = np.random.default_rng(7)
    with lib.no_grad():
        for parameter in model.parameters():
            parameter.copy_(lib.from_numpy(rng.standard_normal(tuple(parameter.shape)) / 3))
    model = model.to(lib.float64)
    x = lib.from_numpy(rng.standard_normal(shape))
    if sparse == "none":
        loss = model(x).pow(2).sum()
    else:
        with memory.policy({"*": memory.quantize(8, per="tensor", sparse=sparse)},
                           model):
            loss = model(x).pow(2).sum()
    loss.backward()
    return [parameter.grad.detach().numpy().copy() for parameter in model.parameters()]


@pytest.mark.parametrize("name", ["mlp", "cnn"])
def test_gradients_sparse_on_off_and_exact_in_both_frameworks(name):
    error = {}
    for lib in (hookgrad, torch):
        exact = _gradients(lib, name, "none")
        for sparse in (True, False, None):
            grads = _gradients(lib, name, sparse)
            error[lib, sparse] = max(float(np.abs(g - e).max() / np.abs(e).max())
                                     for g, e in zip(grads, exact))
            other = _gradients(torch if lib is hookgrad else hookgrad, name, sparse)
            for mine, theirs in zip(grads, other):  # the same codes in both frameworks
                np.testing.assert_allclose(mine, theirs, rtol=1e-9, atol=1e-12)
        assert error[lib, True] <= error[lib, False] * (1 + 1e-9) + 1e-15
        assert error[lib, None] <= error[lib, False] * (1 + 1e-9) + 1e-15
        assert 0 < error[lib, False] < 5e-2


@pytest.mark.parametrize("seed", [None, 4], ids=["nearest", "stochastic"])
@pytest.mark.parametrize("group", [8, 6])
@pytest.mark.parametrize("bits", [8, 2])
def test_groups_encoded_in_blocks_decode_as_in_one_block(monkeypatch, rng, seed, group, bits):
    # NumPy lays grouped codes out a block at a time: each block's share of the kept codes
    # must come back to it (stochastic noise is drawn per block, so only nearest's codes match
    # across block sizes; stochastic is checked against its own dense run)
    import importlib
    quantizer = importlib.import_module("hookgrad.memory.savers.quantize")
    values = _with_zeros(rng, (30, 5, 7), 0.6, relu=True)
    values[3, 2, :] = -0.5  # one row whose minimum is negative
    whole = quantizer.quantize_groups(values, bits, group, seed=seed, sparse=True).decode()
    monkeypatch.setattr(quantizer, "ENCODE_BLOCK_BYTES", values[0].nbytes * 2)
    stored = quantizer.quantize_groups(values, bits, group, seed=seed, sparse=True)
    dense = quantizer.quantize_groups(values, bits, group, seed=seed, sparse=False).decode()
    blocks = stored.decode()
    if seed is None:
        np.testing.assert_array_equal(blocks, whole)
    np.testing.assert_array_equal(blocks[values != 0], dense[values != 0])
    np.testing.assert_array_equal(blocks[values == 0], 0)
    relu = [0, 1, 3, 4]  # groups run along the batch: those through the -0.5 are not ReLU's
    np.testing.assert_array_equal(blocks[:, relu] > 0, values[:, relu] > 0)


@pytest.mark.parametrize("axis", [1, None])
def test_large_activations_encoded_in_blocks_store_sparse_alike(monkeypatch, rng, axis):
    import importlib
    quantizer = importlib.import_module("hookgrad.memory.savers.quantize")
    values = _with_zeros(rng, (40, 6, 9), 0.5, relu=True)
    whole = quantizer.quantize_array(values, 4, axis)
    monkeypatch.setattr(quantizer, "ENCODE_BLOCK_BYTES", values[0].nbytes * 3)
    blocks = quantizer.quantize_array(values, 4, axis)
    assert blocks.mask is not None and blocks.nbytes == whole.nbytes
    np.testing.assert_array_equal(blocks.decode(), whole.decode())
