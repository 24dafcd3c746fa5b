"""Per-group quantization a block at a time: the same codes as laying the whole activation out
as rows, with transient memory bounded by the block, not by the activation."""
import importlib
import tracemalloc

import numpy as np
import pytest

# the module (the package exports the saver class under the same name)
Q = importlib.import_module("hookgrad.memory.savers.quantize")


def _reference(values: np.ndarray, bits: int, group: int) -> np.ndarray:
    """Groups along the largest dim, rounded to nearest, a positive value never code 0 where
    its group's minimum is 0: written directly over the whole array."""
    values = values.astype(np.float32).reshape(values.shape or (1,))
    axis = int(np.argmax(values.shape))
    moved = np.moveaxis(values, axis, -1)
    length = moved.shape[-1]
    pad = (-length) % group
    padded = np.concatenate([moved, np.repeat(moved[..., -1:], pad, axis=-1)], axis=-1)
    rows = padded.reshape(-1, group)
    low = rows.min(1, keepdims=True)
    levels = (1 << bits) - 1
    scale = (rows.max(1, keepdims=True) - low) / levels
    scale[scale <= 0] = 1
    codes = np.clip(np.rint((rows - low) / scale), 0, levels)
    codes = np.where((low == 0) & (rows > 0), np.maximum(codes, 1), codes)
    decoded = (codes * scale + low).reshape(padded.shape)[..., :length]
    return np.moveaxis(decoded, -1, axis)


SHAPES = [(64, 8, 16, 16), (3, 7, 200), (1000,), (5, 130), (2, 3, 4), (130, 3), (1, 1, 300)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("bits,group", [(2, 64), (2, 6), (4, 128), (8, 3)])
@pytest.mark.parametrize("relu", [False, True])
def test_blocks_give_the_whole_array_codes(shape, bits, group, relu, monkeypatch):
    monkeypatch.setattr(Q, "ENCODE_BLOCK_BYTES", 4096)  # many blocks even for small shapes
    values = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    if relu:
        values = np.maximum(values, 0)
    decoded = Q.quantize_groups(values, bits, group).decode()
    assert decoded.shape == values.shape and decoded.dtype == values.dtype
    np.testing.assert_allclose(decoded, _reference(values, bits, group).reshape(values.shape),
                               rtol=1e-6, atol=1e-6)


def test_stochastic_blocks_stay_unbiased_and_keep_the_mask(monkeypatch):
    monkeypatch.setattr(Q, "ENCODE_BLOCK_BYTES", 4096)
    values = np.maximum(np.random.default_rng(1).standard_normal((16, 4, 40)), 0)
    values = values.astype(np.float32)
    decoded = np.array([Q.quantize_groups(values, 2, 64, seed=s).decode() for s in range(400)])
    assert np.abs(decoded.mean(0) - values).max() < 0.1 * values.max()
    assert ((decoded > 0) == (values > 0)).all()  # the ReLU mask is exact in every draw


def test_transient_memory_is_bounded_by_the_block():
    values = np.maximum(np.random.default_rng(2).standard_normal((64, 32, 32, 32)), 0)
    values = values.astype(np.float32)  # 8 MiB, largest dim the batch (not the last)
    tracemalloc.start()
    stored = Q.quantize_groups(values, 2, 64, seed=0)
    kept, encode_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    tracemalloc.start()
    decoded = stored.decode()
    _, decode_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    block = Q.ENCODE_BLOCK_BYTES
    assert kept <= values.nbytes / 7  # 2 bits, a mask bit and a scale/offset pair per 64
    assert encode_peak <= kept + 6 * block  # was a whole copy of the activation and more
    assert decode_peak <= decoded.nbytes + 4 * block + kept
