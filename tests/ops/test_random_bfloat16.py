"""bfloat16 and float16 draws equal torch's bit for bit (torch draws a reduced-precision value in
float32 and rounds it once; integer-valued fills stay in the dtype's exact-integer range, with
torch's warning past it). Values are compared after an exact widening to float32, and the
generator must end where torch's does."""
from __future__ import annotations

import warnings

import pytest
import torch

import hookgrad
from test_random import FILLS, assert_same_stream

HALF_TYPES = ["bfloat16", "float16"]
SIZES = [1, 5, 15, 16, 17, 33, 100, (6, 7)]


def _widened(tensor):
    return tensor.float()  # exact for both half types


@pytest.mark.parametrize("dtype", HALF_TYPES)
@pytest.mark.parametrize("size", SIZES, ids=str)
@pytest.mark.parametrize("draw", ["rand", "randn"])
def test_factory_draws(draw, size, dtype):
    assert_same_stream(lambda L: _widened(getattr(L, draw)(size, dtype=getattr(L, dtype))))


@pytest.mark.parametrize("dtype", HALF_TYPES)
@pytest.mark.parametrize("low, high", [(0, 10), (-5, 5), (0, 256), (0, 1000), (-300, 7)])
def test_randint(low, high, dtype):
    assert_same_stream(lambda L: _widened(L.randint(low, high, (40,), dtype=getattr(L, dtype))))


@pytest.mark.parametrize("dtype", HALF_TYPES)
@pytest.mark.parametrize("size", [1, 5, 16, 33, (6, 5)], ids=str)
@pytest.mark.parametrize("fill", FILLS, ids=str)
def test_inplace_fills(fill, size, dtype):
    assert_same_stream(lambda L: _widened(FILLS[fill](L.empty(size, dtype=getattr(L, dtype)))))


@pytest.mark.parametrize("dtype", HALF_TYPES)
def test_like_factories_and_tensor_probabilities(dtype):
    def case(L):
        base = L.zeros(4, 9, dtype=getattr(L, dtype))
        probabilities = L.full((30,), 0.4, dtype=getattr(L, dtype))
        return [_widened(L.rand_like(base)), _widened(L.randn_like(base)),
                _widened(L.randint_like(base, 3, 50)), _widened(L.bernoulli(probabilities))]

    assert_same_stream(case)


@pytest.mark.parametrize("dtype", HALF_TYPES)
def test_random_to_the_end_of_the_exact_integers(dtype):
    assert_same_stream(lambda L: [_widened(L.empty(30, dtype=getattr(L, dtype)).random_(5, None)),
                                  _widened(L.empty(30, dtype=getattr(L, dtype)).random_(0, 300))])


def test_seeded_generator_object():
    def case(L):
        generator = L.Generator().manual_seed(7)
        return [_widened(L.randn(20, dtype=L.bfloat16, generator=generator)),
                _widened(L.rand(3, dtype=L.bfloat16, generator=generator))]

    assert_same_stream(case)


@pytest.mark.parametrize("call", [
    lambda L: L.randint(0, 5000, (4,), dtype=L.float16),
    lambda L: L.randint(-300, 7, (4,), dtype=L.bfloat16),
    lambda L: L.randint(-2 ** 60, 2 ** 60, (2,), dtype=L.float64),
    lambda L: L.empty(3).random_(-2 ** 30, 5),
    lambda L: L.randint_like(L.zeros(2, dtype=L.bfloat16), 0, 1000),
    lambda L: L.randint(0, 256, (3,), dtype=L.bfloat16),  # at the bound: no warning
])
def test_ranges_past_the_exact_integers_warn_as_torch(call):
    def messages(library):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call(library)
        return [str(w.message).split(" (Triggered internally")[0] for w in caught]

    assert messages(hookgrad) == messages(torch)


@pytest.mark.parametrize("dtype", HALF_TYPES)
@pytest.mark.parametrize("make", [
    lambda L, d: L.nn.Linear(5, 4, dtype=d).weight,
    lambda L, d: L.nn.Conv2d(2, 3, 3, dtype=d).bias,
    lambda L, d: L.nn.LSTM(3, 4, dtype=d).weight_hh_l0,
    lambda L, d: L.nn.Embedding(5, 4, dtype=d).weight,
    lambda L, d: L.nn.init.kaiming_normal_(L.empty(20, 8, dtype=d)),
    lambda L, d: L.nn.init.xavier_uniform_(L.empty(6, 8, dtype=d)),
    lambda L, d: L.nn.init.trunc_normal_(L.empty(30, dtype=d)),
], ids=["Linear", "Conv2d", "LSTM", "Embedding", "kaiming_normal_", "xavier_uniform_",
        "trunc_normal_"])
def test_default_and_explicit_initialisation(make, dtype):
    assert_same_stream(lambda L: _widened(make(L, getattr(L, dtype)).detach()))


@pytest.mark.parametrize("dtype", HALF_TYPES)
def test_sampling_from_half_probabilities(dtype):
    def case(L):
        weights = L.tensor([0.1, 0.5, 0.4], dtype=getattr(L, dtype))
        return [L.multinomial(weights, 6, replacement=True), L.multinomial(weights, 3),
                _widened(L.poisson(L.full((10,), 3.0, dtype=getattr(L, dtype))))]

    assert_same_stream(case)
