"""Random tensors and in-place random fills with torch's CPU stream.

After ``manual_seed(s)`` every function here returns what torch returns on the CPU after the
same seed and the same calls, bit for bit in float32 and float64: the words come from torch's
mt19937 (``_generator``), and ``_distributions`` turns them into samples the way torch's CPU
kernels do. Elements are filled in torch's order: memory order for a tensor whose strides are
permuted (``x.t().uniform_()``), and ``normal_`` on a non-contiguous tensor takes torch's scalar
path. Fills are in-place ops with torch's node names; no gradient flows to the old values.
"""
from __future__ import annotations

import numpy as np

from .. import _device, _dtype
from .._generator import (Generator, default_generator, get_rng_state,  # noqa: F401
                          initial_seed, manual_seed, resolve, seed, set_rng_state)
from ..tensor import Tensor
from . import _distributions as D
from .creation import _finish, _float_dtype, _size
from .elementwise import _Op, not_implemented


# -- torch's fill order ----------------------------------------------------------------------
def _in_fill_order(array: np.ndarray) -> np.ndarray:
    """A view of ``array`` whose C order is the order torch's iterator visits its elements:
    axes sorted from the largest stride to the smallest (ties keep their order)."""
    axes = sorted(range(array.ndim), key=lambda axis: -abs(array.strides[axis]))
    return array.transpose(axes)


def _fill(array: np.ndarray, draw) -> np.ndarray:
    """Write ``draw(count)`` into ``array`` in torch's order."""
    view = _in_fill_order(array)
    view[...] = np.asarray(draw(array.size)).reshape(view.shape)
    return array


def _contiguous(array: np.ndarray) -> bool:
    return array.flags.c_contiguous


# -- in-place fills (Tensor methods) ------------------------------------------------------------
class _RandomFill(_Op):
    _inplace = True
    _kernel = ""  # torch's kernel name in the error for an unsupported dtype

    @classmethod
    def forward(cls, ctx, self, *args):
        if self.dtype.kind != "f" and cls._kernel:
            raise not_implemented(cls._kernel, self.dtype)
        *params, generator = args
        cls._draw(resolve(generator), self, *params)
        return self

    @staticmethod
    def backward(ctx, grad):
        return Tensor._make(np.zeros_like(grad._data))


class Uniform(_RandomFill):
    node_name = "UniformBackward0"
    _kernel = "check_uniform_bounds"

    @staticmethod
    def _draw(generator, self, low, high):
        _fill(self, lambda n: D.uniform(generator, n, self.dtype, low, high))


class Normal(_RandomFill):
    node_name = "NormalBackward0"
    _kernel = "normal_kernel_cpu"

    @staticmethod
    def _draw(generator, self, mean, std):
        contiguous = _contiguous(self)
        _fill(self, lambda n: D.normal(generator, n, self.dtype, mean, std, contiguous))


class Exponential(_RandomFill):
    node_name = "ExponentialBackward0"
    _kernel = "exponential_cpu"

    @staticmethod
    def _draw(generator, self, lambd):
        _fill(self, lambda n: D.exponential(generator, n, lambd))


class Cauchy(_RandomFill):
    node_name = "CauchyBackward0"
    _kernel = "cauchy_cpu"

    @staticmethod
    def _draw(generator, self, median, sigma):
        _fill(self, lambda n: D.cauchy(generator, n, median, sigma))


class LogNormal(_RandomFill):
    node_name = "LogNormalBackward0"
    _kernel = "log_normal_cpu"

    @staticmethod
    def _draw(generator, self, mean, std):
        _fill(self, lambda n: D.log_normal(generator, n, mean, std))


class Geometric(_RandomFill):
    node_name = "GeometricBackward0"

    @staticmethod
    def _draw(generator, self, p):
        _fill(self, lambda n: D.geometric(generator, n, p))


class Bernoulli(_RandomFill):
    node_name = "BernoulliBackward2"

    @staticmethod
    def _draw(generator, self, p):
        _fill(self, lambda n: D.bernoulli_scalar(generator, n, p))


class BernoulliTensor(_RandomFill):
    node_name = "BernoulliBackward1"

    @staticmethod
    def _draw(generator, self, p):
        try:
            probabilities = np.broadcast_to(p, self.shape)
        except ValueError:
            raise RuntimeError(f"The size of tensor a ({self.shape[-1] if self.ndim else 1}) "
                               f"must match the size of tensor b ({p.shape[-1]}) at "
                               "non-singleton dimension") from None
        axes = sorted(range(self.ndim), key=lambda axis: -abs(self.strides[axis]))
        ordered = probabilities.transpose(axes)  # self's fill order, not p's
        _fill(self, lambda n: D.bernoulli_tensor(generator, np.ascontiguousarray(ordered)))

    @staticmethod
    def backward(ctx, grad):
        return Tensor._make(np.zeros_like(grad._data)), None


class Random(_RandomFill):
    """integers drawn uniformly from [low, high), in self's dtype"""

    node_name = "RandomBackward0"

    @staticmethod
    def _draw(generator, self, low, high):
        if low == -(2 ** 63) and high == 2 ** 63:
            _fill(self, lambda n: D.random_full_range(generator, n, self.dtype))
        else:
            _fill(self, lambda n: D.random_from_to(generator, n, self.dtype, low, high - low))


class RandomTo(Random):
    node_name = "RandomBackward1"


class RandomFull(Random):
    node_name = "RandomBackward2"

    @staticmethod
    def _draw(generator, self, low, high):
        _fill(self, lambda n: D.random_default(generator, n, self.dtype))


def _from(kwargs: dict, default):
    return kwargs.pop("from", default)


def uniform_(input: Tensor, from_: float = 0.0, to: float = 1.0, *, generator=None,
             **kwargs) -> Tensor:
    """Fill with U[from, to)."""
    low = _from(kwargs, from_)
    if low > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={low} > to={to}")
    return Uniform.apply(input, float(low), float(to), generator)


def _check_std(std) -> None:
    smallest = float(np.min(std)) if np.size(std) else 0.0
    if smallest < 0:
        shown = int(smallest) if smallest == int(smallest) else smallest
        raise RuntimeError(f"normal expects std >= 0.0, but found std {shown}")


def normal_(input: Tensor, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
    """Fill with N(mean, std**2)."""
    _check_std(std)
    return Normal.apply(input, float(mean), float(std), generator)


def exponential_(input: Tensor, lambd: float = 1.0, *, generator=None) -> Tensor:
    """Fill with Exp(lambd)."""
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    return Exponential.apply(input, float(lambd), generator)


def cauchy_(input: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator=None
            ) -> Tensor:
    """Fill with Cauchy(median, sigma)."""
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    return Cauchy.apply(input, float(median), float(sigma), generator)


def log_normal_(input: Tensor, mean: float = 1.0, std: float = 2.0, *, generator=None
                ) -> Tensor:
    """Fill with exp(N(mean, std**2))."""
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    return LogNormal.apply(input, float(mean), float(std), generator)


def geometric_(input: Tensor, p: float, *, generator=None) -> Tensor:
    """Fill with the number of Bernoulli(p) trials up to the first success."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    return Geometric.apply(input, float(p), generator)


def bernoulli_(input: Tensor, p=0.5, *, generator=None) -> Tensor:
    """Fill with 1 with probability ``p`` (a number, or a tensor broadcast to input), else 0."""
    if isinstance(p, Tensor):
        return BernoulliTensor.apply(input, p._data, generator)
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    return Bernoulli.apply(input, float(p), generator)


def _random_top(dtype: np.dtype) -> int:
    """random_(to=None) ends past the largest integer the dtype holds exactly."""
    if dtype.kind == "f":
        return 2 ** (np.finfo(dtype).nmant + 1) + 1
    if dtype.kind == "b":
        return 2
    return int(np.iinfo(dtype).max) + 1


_UNSET = object()


def _float_range(low: int, high: int, np_dtype: np.dtype) -> tuple[int, int]:
    """torch moves [low, high) inward for a float dtype until both ends survive the cast, so
    no drawn integer rounds onto ``high``."""
    if np_dtype.kind != "f":
        return low, high
    digits = np.finfo(np_dtype).nmant + 1
    nearest_up = int(np_dtype.type(low + 1))
    if nearest_up < low:
        low = nearest_up + (1 << (abs(low + 1).bit_length() - 1 - digits + 1))
    nearest_down = int(np_dtype.type(high - 1))
    if nearest_down >= high:
        high = nearest_down - (1 << (abs(high - 1).bit_length() - 1 - digits + 1))
    if low >= high:
        raise RuntimeError("random_ expects 'from' casted to dtype to be less than 'to' casted "
                           f"to dtype, but got from={low} >= to={high}")
    return low, high


def random_(input: Tensor, from_=None, to=_UNSET, *, generator=None, **kwargs) -> Tensor:
    """random_() fills [0, 2**mantissa] (floats) or [0, max] (integers); random_(to) fills
    [0, to); random_(from, to) fills [from, to); random_(from, None) runs to the dtype's end."""
    from_ = _from(kwargs, from_)
    np_dtype = input._data.dtype
    if from_ is None and to is _UNSET:
        return RandomFull.apply(input, 0, _random_top(np_dtype), generator)
    if to is _UNSET or (from_ is None and to is not None):
        cls, low, high = RandomTo, 0, from_ if to is _UNSET else to
    else:
        cls, low, high = Random, 0 if from_ is None else from_, to
        if high is None:
            if low == -(2 ** 63):
                high = 2 ** 63
            elif np_dtype.kind == "f":
                high = min(2 ** (np.finfo(np_dtype).nmant + 1), 2 ** 63 - 1) + 1
            else:
                high = _random_top(np_dtype)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= "
                           f"to={high}")
    if cls is Random and to is not None:
        low, high = _float_range(int(low), int(high), np_dtype)
    return cls.apply(input, int(low), int(high), generator)



# -- factories ----------------------------------------------------------------------------------
def _random_float(dtype, kernel: str) -> np.dtype:
    np_dtype = _float_dtype(dtype)
    if np_dtype.kind != "f":
        raise not_implemented(kernel, np_dtype)
    return np_dtype


def _new(shape: tuple, np_dtype: np.dtype, device) -> np.ndarray:
    _device.check(device)
    return np.empty(shape, np_dtype)


def rand(*sizes, size=None, generator=None, out=None, dtype=None, layout=None,
         device=None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """Uniform on [0, 1): float32 from 24 bits of one word, float64 from 53 bits of two."""
    shape = _size(sizes if size is None else (size,), "rand")
    array = _new(shape, _random_float(dtype, "check_uniform_bounds"), device)
    Uniform._draw(resolve(generator), array, 0.0, 1.0)
    return _finish(array, requires_grad)


def randn(*sizes, size=None, generator=None, out=None, dtype=None, layout=None,
          device=None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """Standard normal (Box-Muller in blocks of 16 from 16 elements, pairs below)."""
    shape = _size(sizes if size is None else (size,), "randn")
    array = _new(shape, _random_float(dtype, "normal_kernel_cpu"), device)
    Normal._draw(resolve(generator), array, 0.0, 1.0)
    return _finish(array, requires_grad)


def randint(low=None, high=None, size=None, *, generator=None, out=None, dtype=None, layout=None,
            device=None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """Integers uniform on [low, high); ``randint(high, size)`` starts at 0."""
    if size is None:
        low, high, size = 0, low, high
    if size is None or high is None:
        raise TypeError("randint() missing required arguments 'high' and 'size'")
    low = 0 if low is None else low
    low, high = int(low), int(high)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= "
                           f"to={high}")
    np_dtype = np.dtype(np.int64) if dtype is None else _dtype.to_numpy_dtype(dtype)
    low, high = _float_range(low, high, np_dtype)
    array = _new(_size((size,), "randint"), np_dtype, device)
    Random._draw(resolve(generator), array, low, high)
    return _finish(array, requires_grad)


def randperm(n: int, *, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A random permutation of 0 .. n-1 (torch's forward Fisher-Yates, one word a step)."""
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    np_dtype = np.dtype(np.int64) if dtype is None else _dtype.to_numpy_dtype(dtype)
    _device.check(device)
    return _finish(D.randperm(resolve(generator), int(n)).astype(np_dtype), requires_grad)


def _like(input: Tensor, dtype, device) -> np.ndarray:
    """torch's empty_like: the input's layout when its strides are a permutation of a dense
    layout (so the fill order follows it), else C order."""
    _device.check(device)
    np_dtype = input._data.dtype if dtype is None else _dtype.to_numpy_dtype(dtype)
    return np.empty_like(input._data, dtype=np_dtype)


def rand_like(input: Tensor, *, dtype=None, layout=None, device=None,
              requires_grad: bool = False, memory_format=None, generator=None) -> Tensor:
    array = _like(input, dtype, device)
    if array.dtype.kind != "f":
        raise not_implemented("check_uniform_bounds", array.dtype)
    Uniform._draw(resolve(generator), array, 0.0, 1.0)
    return _finish(array, requires_grad)


def randn_like(input: Tensor, *, dtype=None, layout=None, device=None,
               requires_grad: bool = False, memory_format=None, generator=None) -> Tensor:
    array = _like(input, dtype, device)
    if array.dtype.kind != "f":
        raise not_implemented("normal_kernel_cpu", array.dtype)
    Normal._draw(resolve(generator), array, 0.0, 1.0)
    return _finish(array, requires_grad)


def randint_like(input: Tensor, low, high=None, *, dtype=None, layout=None, device=None,
                 requires_grad: bool = False, memory_format=None, generator=None) -> Tensor:
    if high is None:
        low, high = 0, low
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= "
                           f"to={high}")
    array = _like(input, dtype, device)
    low, high = _float_range(int(low), int(high), array.dtype)
    Random._draw(resolve(generator), array, low, high)
    return _finish(array, requires_grad)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None,
           layout=None, device=None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """normal(mean, std, size) with numbers, or with a tensor mean and/or std (broadcast):
    torch draws N(0, 1) (or N(0, std)) into the result, then scales and shifts it."""
    generator = resolve(generator)
    mean_tensor, std_tensor = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not (mean_tensor or std_tensor):
        _check_std(std)
        array = _new(_size((size,), "normal"), _random_float(dtype, "normal_kernel_cpu"),
                     device)
        Normal._draw(generator, array, float(mean), float(std))
        return _finish(array, requires_grad)
    if std_tensor and std._data.size and float(np.min(std._data)) < 0:
        raise RuntimeError("normal expects all elements of std >= 0.0")
    means = mean._data if mean_tensor else np.asarray(mean)
    stds = std._data if std_tensor else np.asarray(std)
    try:
        shape = np.broadcast_shapes(means.shape, stds.shape)
    except ValueError:
        from ._util import broadcast_error

        raise broadcast_error("normal", means.shape, stds.shape) from None
    np_dtype = (mean if mean_tensor else std)._data.dtype
    array = np.empty(shape, np_dtype)
    if not std_tensor:
        _check_std(std)
        Normal._draw(generator, array, 0.0, float(std))
        with np.errstate(all="ignore"):
            return Tensor._make((array + means).astype(np_dtype))
    Normal._draw(generator, array, 0.0, 1.0)
    with np.errstate(all="ignore"):
        scaled = (array * stds).astype(np_dtype)
        return Tensor._make((scaled + means).astype(np_dtype))


def bernoulli(input: Tensor, p=None, *, generator=None, out=None) -> Tensor:
    """1 with probability ``input`` (each element its own; or the number ``p``), else 0, in
    input's dtype (a C-ordered result, as torch's)."""
    array = np.empty(input._data.shape, input._data.dtype)
    generator = resolve(generator)
    if p is None:
        if input._data.dtype.kind != "f":
            raise not_implemented("bernoulli_tensor_cpu_p_", input._data.dtype)
        BernoulliTensor._draw(generator, array, input._data)
    else:
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
        Bernoulli._draw(generator, array, float(p))
    return Tensor._make(array)


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator=None, out=None) -> Tensor:
    """Indices drawn by the rows' weights. Without replacement (or one sample) torch takes
    the largest p / q with q ~ Exp(1); with replacement it inverts each row's running sum."""
    probs = input._data
    if probs.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if probs.dtype.kind != "f":
        raise RuntimeError("multinomial only supports floating-point dtypes for input, got: "
                           f"{_dtype.scalar_type_name(probs.dtype)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    categories = probs.shape[-1]
    if not replacement and num_samples > categories:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    rows = probs.reshape(-1, categories)
    generator = resolve(generator)
    if not replacement or num_samples == 1:
        if not (np.all(rows >= 0) and np.all(np.isfinite(rows))):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if np.any(rows.sum(axis=1) == 0):
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        waits = D.exponential(generator, rows.size, 1.0).astype(rows.dtype).reshape(rows.shape)
        with np.errstate(all="ignore"):
            keys = rows / waits
        picks = np.argsort(-keys, axis=1, kind="stable")[:, :num_samples]
    else:
        if np.any(rows < 0):
            raise RuntimeError("invalid multinomial distribution (encountering probability "
                               "entry < 0)")
        if not np.all(np.isfinite(rows)):
            raise RuntimeError("invalid multinomial distribution (encountering probability "
                               "entry = infinity or NaN)")
        if np.any(rows.sum(axis=1) <= 0):
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        picks = D.multinomial_with_replacement(generator, rows, num_samples)
    return Tensor._make(np.ascontiguousarray(picks, dtype=np.int64).reshape(
        probs.shape[:-1] + (num_samples,)))


def poisson(input: Tensor, generator=None) -> Tensor:
    """Poisson counts with the rates in ``input`` (torch's sampler, one element at a time)."""
    rates = input._data
    if rates.dtype.kind != "f":
        raise not_implemented("poisson_cpu", rates.dtype)
    if rates.size and float(np.min(rates)) < 0:
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    values = D.poisson(resolve(generator), np.ascontiguousarray(rates))  # a C-ordered result
    return Tensor._make(values.astype(rates.dtype).reshape(rates.shape))


METHODS = {"uniform_": uniform_, "normal_": normal_, "exponential_": exponential_,
           "cauchy_": cauchy_, "log_normal_": log_normal_, "geometric_": geometric_,
           "bernoulli_": bernoulli_, "random_": random_,
           "bernoulli": bernoulli, "multinomial": multinomial}
