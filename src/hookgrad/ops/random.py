"""Random numbers: the generator and the random factories (rand, randn, randint, randperm, normal,
bernoulli, multinomial) and the RNG state functions.

Draws come from hookgrad's own generator (NumPy's PCG64): ``manual_seed`` makes them
reproducible, but they are not torch's stream.
"""
from __future__ import annotations

import numpy as np

from .. import _dtype
from ..tensor import Tensor
from .creation import _finish, _float_dtype, _size


# ---------------------------------------------------------------------------------------------
# Random numbers: hookgrad's own generator (torch's stream is not reproduced).
# ---------------------------------------------------------------------------------------------
class Generator:
    """A seedable source of random numbers (NumPy's PCG64 underneath)."""

    def __init__(self, device: str = "cpu"):
        self._seed = 67280421310721  # torch's default seed, so initial_seed() looks familiar
        self._rng = np.random.default_rng(self._seed)

    def manual_seed(self, seed: int) -> Generator:
        self._seed = int(seed)
        self._rng = np.random.default_rng(int(seed) % 2 ** 64)
        return self

    def initial_seed(self) -> int:
        return self._seed

    def seed(self) -> int:
        seed = int(np.random.SeedSequence().entropy % (2 ** 63))
        self.manual_seed(seed)
        return seed

    def get_state(self):
        return self._rng.bit_generator.state

    def set_state(self, state) -> None:
        self._rng.bit_generator.state = state


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Seed the default generator: the same seed gives the same draws."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def _rng(generator: Generator | None):
    return (generator or default_generator)._rng


def _random_float(dtype, kernel: str) -> np.dtype:
    np_dtype = _float_dtype(dtype)
    if np_dtype.kind != "f":
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{_dtype.scalar_type_name(np_dtype)}'")
    return np_dtype


def rand(*size, generator=None, dtype=None, device=None, requires_grad: bool = False,
         out=None) -> Tensor:
    """Uniform on [0, 1)."""
    np_dtype = _random_float(dtype, "check_uniform_bounds")
    shape = _size(size, "rand")
    return _finish(_rng(generator).random(shape, dtype=np.float64).astype(np_dtype),
                   requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad: bool = False,
          out=None) -> Tensor:
    """Standard normal."""
    np_dtype = _random_float(dtype, "normal_kernel_cpu")
    shape = _size(size, "randn")
    return _finish(_rng(generator).standard_normal(shape).astype(np_dtype), requires_grad)


def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad: bool = False) -> Tensor:
    """Integers in [low, high); ``randint(high, size)`` starts at 0."""
    if size is None:
        low, high, size = 0, low, high
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= "
                           f"to={high}")
    np_dtype = np.dtype(np.int64) if dtype is None else _dtype.to_numpy_dtype(dtype)
    draws = _rng(generator).integers(low, high, size=_size((size,), "randint"))
    return _finish(draws.astype(np_dtype), requires_grad)


def randperm(n: int, *, generator=None, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """A random permutation of 0 .. n-1."""
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    np_dtype = np.dtype(np.int64) if dtype is None else _dtype.to_numpy_dtype(dtype)
    return _finish(_rng(generator).permutation(n).astype(np_dtype), requires_grad)


def rand_like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False,
              memory_format=None) -> Tensor:
    return rand(input._data.shape, dtype=dtype or input.dtype, requires_grad=requires_grad)


def randn_like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False,
               memory_format=None) -> Tensor:
    return randn(input._data.shape, dtype=dtype or input.dtype, requires_grad=requires_grad)


def randint_like(input: Tensor, low, high=None, *, dtype=None, device=None,
                 requires_grad: bool = False, memory_format=None) -> Tensor:
    if high is None:
        low, high = 0, low
    return randint(low, high, input._data.shape, dtype=dtype or input.dtype,
                   requires_grad=requires_grad)


def _check_std(std) -> None:
    smallest = float(np.min(std)) if np.size(std) else 0.0
    if smallest < 0:
        shown = int(smallest) if smallest == int(smallest) else smallest
        raise RuntimeError(f"normal expects std >= 0.0, but found std {shown}")


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None,
           requires_grad: bool = False) -> Tensor:
    """Normal draws with the given mean and std (numbers, or tensors that broadcast)."""
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        m = mean._data if isinstance(mean, Tensor) else mean
        s = std._data if isinstance(std, Tensor) else std
        _check_std(s)
        ref = mean if isinstance(mean, Tensor) else std
        try:
            shape = np.broadcast_shapes(np.shape(m), np.shape(s))
        except ValueError:
            from ._util import broadcast_error

            raise broadcast_error("normal", np.shape(m), np.shape(s)) from None
        draws = _rng(generator).standard_normal(shape)
        return Tensor._make(np.asarray(m + s * draws).astype(ref._data.dtype))
    _check_std(std)
    draws = _rng(generator).standard_normal(_size((size,), "normal"))
    return _finish((mean + std * draws).astype(_float_dtype(dtype)), requires_grad)


def bernoulli(input: Tensor, p=None, *, generator=None) -> Tensor:
    """1 with probability ``input`` (or ``p``), else 0, in input's dtype."""
    probability = input._data if p is None else p
    draws = _rng(generator).random(input._data.shape) < probability
    return Tensor._make(draws.astype(input._data.dtype))


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator=None) -> Tensor:
    probs = input._data.astype(np.float64)
    rng = _rng(generator)
    rows = probs.reshape(-1, probs.shape[-1])
    picks = [rng.choice(rows.shape[1], num_samples, replace=replacement, p=row / row.sum())
             for row in rows]  # one draw call per row of probabilities, not per element
    return Tensor._make(np.array(picks, dtype=np.int64).reshape(probs.shape[:-1] +
                                                               (num_samples,)))


def get_rng_state() -> Tensor:
    """The default generator's state as a uint8 tensor (torch's ByteTensor of the state)."""
    import pickle

    return Tensor._make(np.frombuffer(pickle.dumps(default_generator.get_state()),
                                      dtype=np.uint8).copy())


def set_rng_state(new_state: Tensor) -> None:
    """Restore a state taken by ``get_rng_state``."""
    import pickle

    default_generator.set_state(pickle.loads(new_state._data.tobytes()))
