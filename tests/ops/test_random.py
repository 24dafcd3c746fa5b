"""Random draws equal torch's on the CPU, bit for bit, for the same seed and call sequence.

Each case is a lambda ``f(L)`` run once under hookgrad and once under torch after the same
``manual_seed``; results must have the same dtype, shape and bytes, and the generators must be
left in the same place (a draw after the case matches too).
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad

SEEDS = [0, 1, 1234, 2 ** 40 + 7]
SIZES = [0, 1, 2, 3, 15, 16, 17, 31, 33, 100, 1000, (4, 5), (2, 3, 7), (16, 3)]
DTYPES = ["float32", "float64"]


def _array(value) -> np.ndarray:
    if isinstance(value, (list, tuple)):
        return np.concatenate([_array(item).reshape(-1) for item in value]) if value else \
            np.zeros(0)
    return np.asarray(value.detach().numpy() if hasattr(value, "detach") else value)


def assert_same_stream(case, seed: int = 0) -> None:
    hookgrad.manual_seed(seed)
    ours = _array(case(hookgrad))
    after_ours = hookgrad.randint(0, 2 ** 31, (3,)).numpy()
    torch.manual_seed(seed)
    theirs = _array(case(torch))
    after_theirs = torch.randint(0, 2 ** 31, (3,)).numpy()
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    assert ours.tobytes() == theirs.tobytes(), np.argwhere(ours != theirs)[:5]
    assert np.array_equal(after_ours, after_theirs), "the generators ended in different places"


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size", SIZES, ids=str)
@pytest.mark.parametrize("draw", ["rand", "randn"])
def test_factory_draws(draw, size, dtype, seed):
    assert_same_stream(lambda L: getattr(L, draw)(size, dtype=getattr(L, dtype)), seed)


@pytest.mark.parametrize("size", [1, 5, 16, 17, 40])
@pytest.mark.parametrize("draw", [lambda L, n: L.rand(n, dtype=L.float16),
                                  lambda L, n: L.randn(n, dtype=L.float16),
                                  lambda L, n: L.empty(n, dtype=L.float16).uniform_(-2, 3),
                                  lambda L, n: L.empty(n, dtype=L.float16).normal_(1, 2)],
                         ids=["rand", "randn", "uniform_", "normal_"])
def test_float16_draws(draw, size):
    """float16 computes in float32; normal_ fills only whole blocks before the redrawn tail."""
    assert_same_stream(lambda L: draw(L, size))


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_mixed_sequence_keeps_in_step(seed):
    """Scalar normals leave a cached value the next scalar draw uses; block normals and
    uniforms do not touch it."""
    def sequence(L):
        return [L.randn(3), L.rand(17), L.randn(1), L.randn(40, dtype=L.float64), L.randn(5),
                L.randint(0, 7, (9,)), L.randn(2, dtype=L.float64), L.randperm(20),
                L.rand(4, 4, dtype=L.float64), L.randn(15), L.randn(16), L.randn(1)]

    assert_same_stream(sequence, seed)


@pytest.mark.filterwarnings("ignore:.*out of bounds")  # torch warns about float32's range
@pytest.mark.parametrize("low,high", [(0, 10), (-5, 5), (0, 2 ** 28), (3, 2 ** 31),
                                      (-2 ** 40, 2 ** 40), (0, 2 ** 63 - 1)], ids=str)
@pytest.mark.parametrize("dtype", ["int64", "int32", "float32", "float64"])
def test_randint(low, high, dtype):
    if dtype != "int64" and high - low > 2 ** 24:
        high = low + 2 ** 20
    if dtype == "int32" and (low < -2 ** 31 or high > 2 ** 31):
        low, high = -5, 5
    assert_same_stream(lambda L: L.randint(low, high, (37,), dtype=getattr(L, dtype)))


@pytest.mark.parametrize("n", [0, 1, 2, 10, 1000, 70000])
def test_randperm(n):
    assert_same_stream(lambda L: L.randperm(n))


@pytest.mark.parametrize("case", [
    lambda L: L.rand_like(L.ones(6, 5)), lambda L: L.randn_like(L.ones(3, 7, dtype=L.float64)),
    lambda L: L.randint_like(L.ones(3, 4), 10), lambda L: L.randint_like(L.ones(3), 2, 9),
    lambda L: L.rand_like(L.ones(6, 5).t()), lambda L: L.randn_like(L.ones(8, 5).t()),
], ids=["rand", "randn", "randint", "randint_low", "rand_t", "randn_t"])
def test_like_factories_follow_the_input_layout(case):
    assert_same_stream(case)


@pytest.mark.parametrize("case", [
    lambda L: L.normal(0.5, 2.0, (20,)), lambda L: L.normal(0.5, 2.0, (7,)),
    lambda L: L.normal(L.arange(20.), 0.5), lambda L: L.normal(2.0, L.rand(3, 7)),
    lambda L: L.normal(L.arange(20.).reshape(4, 5), L.rand(5)),
    lambda L: L.normal(L.zeros(3, dtype=L.float64), L.ones(3, dtype=L.float64)),
], ids=["numbers", "numbers_small", "tensor_mean", "tensor_std", "both", "double"])
def test_normal_overloads(case):
    assert_same_stream(case)


FILLS = {
    "uniform_": lambda t: t.uniform_(-0.3, 1.7),
    "normal_": lambda t: t.normal_(0.7, 0.3),
    "exponential_": lambda t: t.exponential_(1.5),
    "cauchy_": lambda t: t.cauchy_(0.5, 2.0),
    "log_normal_": lambda t: t.log_normal_(0.5, 0.7),
    "geometric_": lambda t: t.geometric_(0.3),
    "bernoulli_": lambda t: t.bernoulli_(0.3),
    "random_": lambda t: t.random_(),
    "random_to": lambda t: t.random_(7),
    "random_from_to": lambda t: t.random_(-3, 12),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size", [1, 5, 16, 33, 1000, (6, 5)], ids=str)
@pytest.mark.parametrize("fill", FILLS, ids=str)
def test_inplace_fills(fill, size, dtype):
    assert_same_stream(lambda L: FILLS[fill](L.empty(size, dtype=getattr(L, dtype))))


@pytest.mark.parametrize("view", ["t", "slice", "column"])
@pytest.mark.parametrize("fill", ["uniform_", "normal_", "bernoulli_"])
def test_fills_on_views_use_torchs_order(fill, view):
    """A transposed view is filled in memory order; normal_ on a non-contiguous view takes the
    scalar path even for 16 or more elements."""
    make = {"t": lambda L: L.zeros(8, 6).t(), "slice": lambda L: L.zeros(40, 5)[::2],
            "column": lambda L: L.zeros(20, 3)[:, 1]}[view]

    def case(L):
        base = make(L)
        FILLS[fill](base)
        return base.contiguous()

    assert_same_stream(case)


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8", "bool",
                                   "float32", "float64"])
def test_random_default_range_per_dtype(dtype):
    assert_same_stream(lambda L: L.empty(50, dtype=getattr(L, dtype)).random_())


def test_random_full_and_open_ranges():
    assert_same_stream(lambda L: [L.empty(9, dtype=L.int64).random_(-2 ** 63, None),
                                  L.empty(9, dtype=L.int64).random_(3, None),
                                  L.empty(9, dtype=L.int64).geometric_(0.2)])


@pytest.mark.parametrize("case", [
    lambda L: L.bernoulli(L.rand(5, 7)), lambda L: L.bernoulli(L.rand(5, 7, dtype=L.float64)),
    lambda L: L.bernoulli(L.ones(5, 7), p=0.2), lambda L: L.rand(4, 6).bernoulli_(L.rand(6)),
    lambda L: L.zeros(6, 4).t().bernoulli_(L.rand(4, 6)),
    lambda L: L.bernoulli(L.rand(5, 6).t()), lambda L: L.rand(5, 6).t().bernoulli(p=0.3),
], ids=["tensor", "tensor_double", "number", "broadcast_p", "transposed_self", "transposed_p",
        "method"])
def test_bernoulli(case):
    assert_same_stream(case)


@pytest.mark.parametrize("case", [
    lambda L: L.multinomial(L.rand(4, 9), 5), lambda L: L.multinomial(L.rand(9), 9),
    lambda L: L.multinomial(L.rand(9), 1, replacement=True),
    lambda L: L.multinomial(L.rand(3, 9), 20, replacement=True),
    lambda L: L.multinomial(L.rand(3, 9, dtype=L.float64), 4, replacement=True),
    lambda L: L.multinomial(L.tensor([0.0, 1.0, 3.0, 0.0]), 30, replacement=True),
], ids=["rows", "all", "one", "replacement", "double", "zeros"])
def test_multinomial(case):
    assert_same_stream(case)


@pytest.mark.parametrize("call", [
    "L.multinomial(L.tensor([1.0, -1.0]), 1)", "L.multinomial(L.tensor([0.0, 0.0]), 1)",
    "L.multinomial(L.tensor([1.0, 2.0]), 3)", "L.empty(3).uniform_(2, 1)",
    "L.empty(3).normal_(0, -1)", "L.empty(3).exponential_(-1)", "L.empty(3).bernoulli_(1.5)",
    "L.empty(3).random_(5, 2)", "L.empty(3).geometric_(1.5)", "L.randint(5, 5, (2,))",
])
def test_bad_arguments_raise_like_torch(call):
    errors = []
    for lib in (hookgrad, torch):
        with pytest.raises(Exception) as info:
            eval(call, {"L": lib})
        errors.append(info.type)
    assert errors[0] is errors[1]


@pytest.mark.parametrize("rate", [0.0, 0.5, 3.0, 9.9, 10.0, 50.0, 1e4])
@pytest.mark.parametrize("dtype", DTYPES)
def test_poisson(rate, dtype):
    assert_same_stream(lambda L: L.poisson(L.full((60,), rate, dtype=getattr(L, dtype))))


def test_poisson_of_mixed_and_transposed_rates():
    assert_same_stream(lambda L: L.poisson((L.rand(5, 6) * 20).t()))


# -- generators ---------------------------------------------------------------------------------
def test_generator_objects_give_torchs_stream():
    ours, theirs = hookgrad.Generator().manual_seed(7), torch.Generator().manual_seed(7)
    for draw in ("rand", "randn"):
        for size in (3, 20):
            a = getattr(hookgrad, draw)(size, generator=ours).numpy()
            b = getattr(torch, draw)(size, generator=theirs).numpy()
            assert a.tobytes() == b.tobytes()
    assert hookgrad.randperm(30, generator=ours).tolist() == \
        torch.randperm(30, generator=theirs).tolist()
    assert hookgrad.empty(5).normal_(generator=ours).tolist() == \
        torch.empty(5).normal_(generator=theirs).tolist()


def test_seed_values_like_torch():
    assert hookgrad.Generator().initial_seed() == torch.Generator().initial_seed()
    assert hookgrad.manual_seed(-1).initial_seed() == torch.manual_seed(-1).initial_seed()
    assert hookgrad.initial_seed() == 2 ** 64 - 1
    for bad in (2 ** 64, -2 ** 63 - 1):
        with pytest.raises(ValueError):
            hookgrad.manual_seed(bad)
    seed = hookgrad.seed()
    assert hookgrad.initial_seed() == seed
    assert hookgrad.randn(5).tolist() == torch.randn(5, generator=torch.Generator().manual_seed(
        seed)).tolist()


@pytest.mark.parametrize("consumed", [0, 1, 3, 623, 624, 625, 1300])
def test_state_bytes_equal_torchs(consumed):
    ours, theirs = hookgrad.Generator().manual_seed(11), torch.Generator().manual_seed(11)
    hookgrad.randint(0, 10, (consumed,), generator=ours)
    torch.randint(0, 10, (consumed,), generator=theirs)
    hookgrad.randn(3, generator=ours)  # leaves a cached normal in the state
    torch.randn(3, generator=theirs)
    state = ours.get_state()
    assert state.dtype == hookgrad.uint8 and tuple(state.shape) == (5056,)
    assert state.numpy().tobytes() == theirs.get_state().numpy().tobytes()


def test_state_moves_between_libraries():
    hookgrad.manual_seed(3)
    hookgrad.randn(5)
    loaded = torch.Generator()
    loaded.set_state(torch.from_numpy(hookgrad.get_rng_state().numpy().copy()))
    assert hookgrad.randn(9).tolist() == torch.randn(9, generator=loaded).tolist()
    torch.manual_seed(4)
    torch.randn(1)
    hookgrad.set_rng_state(torch.get_rng_state())
    assert hookgrad.randn(7).tolist() == torch.randn(7).tolist()


def test_get_set_state_replays_the_stream():
    hookgrad.manual_seed(0)
    hookgrad.randn(1)
    state = hookgrad.get_rng_state()
    first = hookgrad.randn(6).tolist()
    hookgrad.set_rng_state(state)
    assert hookgrad.randn(6).tolist() == first


@pytest.mark.parametrize("bad,error", [
    (lambda L: L.zeros(10, dtype=L.uint8), RuntimeError),
    (lambda L: L.zeros(5056), TypeError),
    (lambda L: [1, 2], TypeError),
])
def test_bad_states_raise_like_torch(bad, error):
    for lib in (hookgrad, torch):
        with pytest.raises(error):
            lib.set_rng_state(bad(lib))


def test_fork_rng_restores_the_stream():
    results = []
    for lib in (hookgrad, torch):
        lib.manual_seed(0)
        with lib.random.fork_rng():
            lib.randn(10)
        results.append(lib.randn(3).tolist())
    torch.manual_seed(0)
    assert results[0] == results[1] == torch.randn(3).tolist()
    assert hookgrad.random.initial_seed() == 0
    assert hookgrad.default_generator.initial_seed() == 0


def test_cuda_generator_raises_like_torch():
    for lib in (hookgrad, torch):
        with pytest.raises(RuntimeError):
            lib.Generator("cuda")


@pytest.mark.parametrize("case", [
    lambda L, a, b: L.normal(a, 1.5), lambda L, a, b: L.normal(0.5, b),
    lambda L, a, b: L.normal(a, b), lambda L, a, b: L.bernoulli(b / 2),
    lambda L, a, b: L.poisson(b * 3), lambda L, a, b: L.normal(a[:1], b),
], ids=["mean", "std", "both", "bernoulli", "poisson", "broadcast"])
def test_samples_of_tensor_parameters_carry_zero_gradients(case):
    outcomes = []
    for lib in (hookgrad, torch):
        lib.manual_seed(0)
        a = lib.zeros(4, requires_grad=True)
        b = lib.ones(4, requires_grad=True)
        result = case(lib, a, b)
        result.sum().backward()
        outcomes.append((result.detach().numpy().tobytes(), type(result.grad_fn).__name__,
                         None if a.grad is None else a.grad.tolist(),
                         None if b.grad is None else b.grad.tolist()))
    assert outcomes[0] == outcomes[1]


def test_randint_calling_conventions():
    assert_same_stream(lambda L: [L.randint(10, (3,)), L.randint(10, size=(3,)),
                                  L.randint(high=5, size=(2,)), L.randint(2, 9, size=(2,)),
                                  L.randint(low=1, high=4, size=(2,)), L.rand(size=(2, 2)),
                                  L.randn(size=(3,))])
