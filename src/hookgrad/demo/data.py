"""The data: scikit-learn's bundled 8x8 handwritten digits (no download), or, without
scikit-learn, synthetic 8x8 digits drawn from a 3x5 font with random shifts and noise."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .optional import Notes, optional_import

# 3x5 glyphs of 0-9, row by row
_FONT = ["111101101101111", "010110010010111", "111001111100111", "111001111001111",
         "101101111001001", "111100111001111", "111100111101111", "111001010010010",
         "111101111101111", "111101111001111"]


class Digits(NamedTuple):
    train_x: np.ndarray  # (n, 1, 8, 8) float32, standardised
    train_y: np.ndarray  # (n,) int64
    test_x: np.ndarray
    test_y: np.ndarray
    source: str


def synthetic_digits(count: int, rng: np.random.Generator) -> tuple:
    """``count`` 8x8 images valued 0-16 like load_digits: a glyph widened to 6x5, shifted at
    random, with Gaussian noise."""
    glyphs = np.array([[int(c) for c in g] for g in _FONT], dtype=np.float64).reshape(10, 5, 3)
    glyphs = np.kron(glyphs, np.ones((1, 1, 2))) * 16  # (10, 5, 6)
    labels = rng.integers(0, 10, count)
    images = np.zeros((count, 8, 8))
    rows, cols = rng.integers(0, 4, count), rng.integers(0, 3, count)
    for top in range(4):  # a loop over offsets, not over images
        for left in range(3):
            chosen = (rows == top) & (cols == left)
            images[chosen, top:top + 5, left:left + 6] = glyphs[labels[chosen]]
    images += rng.normal(0, 3, images.shape)
    return np.clip(images, 0, 16).reshape(count, 64), labels


def load(seed: int, notes: Notes) -> Digits:
    """Shuffle with ``seed`` and split 80/20 (train / test), standardised by the train set."""
    rng = np.random.default_rng(seed)
    datasets = optional_import("sklearn.datasets", "scikit-learn",
                               "training on synthetic 8x8 digits instead of load_digits", notes)
    if datasets is not None:
        images, labels = datasets.load_digits(return_X_y=True)
        source = "scikit-learn load_digits (1,797 8x8 handwritten digits)"
    else:
        images, labels = synthetic_digits(1797, rng)
        source = "synthetic 8x8 digits (scikit-learn not installed)"
    order = rng.permutation(len(images))
    images = images[order].astype(np.float32) / np.float32(16)
    labels = labels[order].astype(np.int64)
    split = int(len(images) * 0.8)
    mean, std = images[:split].mean(), images[:split].std()
    images = ((images - mean) / std).astype(np.float32).reshape(-1, 1, 8, 8)
    return Digits(images[:split], labels[:split], images[split:], labels[split:], source)
