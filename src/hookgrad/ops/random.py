"""Random tensors and in-place random fills with torch's CPU stream.

After ``manual_seed(s)`` every function here returns what torch returns on the CPU after the
same seed and the same calls, bit for bit in float32 and float64: the words come from torch's
mt19937 (``_generator``), and ``_distributions`` turns them into samples the way torch's CPU
kernels do. The in-place fills live in ``_random_fills``; here are the factories, ``normal``,
``bernoulli``, ``multinomial`` and ``poisson``. A sample drawn from tensor parameters (``normal``
with a tensor mean, ``bernoulli``, ``poisson``) carries a zero gradient to them, as in torch.
"""
from __future__ import annotations

import numpy as np

from .. import _device, _dtype
from .. import _memory_format as _mf
from .._generator import (Generator, default_generator, get_rng_state,  # noqa: F401
                          initial_seed, manual_seed, resolve, seed, set_rng_state)
from ..tensor import Tensor
from . import _distributions as D
from ._random_fills import (Bernoulli, BernoulliTensor, Normal, Random, Uniform,  # noqa: F401
                            _check_std, _float_range, _fill, bernoulli_, cauchy_, exponential_,
                            geometric_, log_normal_, normal_, random_, uniform_)
from .creation import _finish, _float_dtype, _size, empty_like_array
from ._base import Op, not_implemented
from ._util import broadcast_error


# -- factories ----------------------------------------------------------------------------------
def _random_float(dtype, kernel: str) -> np.dtype:
    np_dtype = _float_dtype(dtype)
    if np_dtype.kind not in "fV":
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
    elif high is None:  # randint(high, size=...)
        low, high = 0, low
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


def _like(input: Tensor, dtype, device, memory_format, fn: str) -> np.ndarray:
    """torch's empty_like: the input's layout when its strides are a permutation of a dense
    layout (so the fill order follows it), else C order; or the layout ``memory_format``
    names."""
    _device.check(device)
    return empty_like_array(input, dtype, memory_format, fn)


def rand_like(input: Tensor, *, dtype=None, layout=None, device=None,
              requires_grad: bool = False, memory_format=_mf.preserve_format,
              generator=None) -> Tensor:
    """Uniform ``[0, 1)`` draws with ``input``'s shape, from torch's stream."""
    array = _like(input, dtype, device, memory_format, "rand_like")
    if array.dtype.kind not in "fV":
        raise not_implemented("check_uniform_bounds", array.dtype)
    Uniform._draw(resolve(generator), array, 0.0, 1.0)
    return _finish(array, requires_grad)


def randn_like(input: Tensor, *, dtype=None, layout=None, device=None,
               requires_grad: bool = False, memory_format=_mf.preserve_format,
              generator=None) -> Tensor:
    """Standard normal draws with ``input``'s shape, from torch's stream."""
    array = _like(input, dtype, device, memory_format, "randn_like")
    if array.dtype.kind not in "fV":
        raise not_implemented("normal_kernel_cpu", array.dtype)
    Normal._draw(resolve(generator), array, 0.0, 1.0)
    return _finish(array, requires_grad)


def randint_like(input: Tensor, low, high=None, *, dtype=None, layout=None, device=None,
                 requires_grad: bool = False, memory_format=_mf.preserve_format,
                 generator=None) -> Tensor:
    """Integers in ``[low, high)`` with ``input``'s shape, from torch's stream."""
    if high is None:
        low, high = 0, low
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= "
                           f"to={high}")
    array = _like(input, dtype, device, memory_format, "randint_like")
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
    if not std_tensor:
        _check_std(std)
    cls = NormalTensorTensor if mean_tensor and std_tensor else (
        NormalTensorFloat if mean_tensor else NormalFloatTensor)
    return cls.apply(mean, std, generator)


class _Sample(Op):
    """A draw whose parameters are tensors; torch defines its derivative as zero, so the
    result requires grad when a parameter does and backward gives zeros."""

    @staticmethod
    def backward(ctx, grad):
        zero = Tensor._make(np.zeros_like(grad._data))
        return tuple(zero if needs else None for needs in ctx.needs_input_grad)


class NormalTensorFloat(_Sample):
    node_name = "NormalBackward1"

    @staticmethod
    def forward(ctx, mean, std, generator):
        return _normal_from(mean, std, generator)


class NormalFloatTensor(NormalTensorFloat):
    node_name = "NormalBackward2"


class NormalTensorTensor(NormalTensorFloat):
    node_name = "NormalBackward3"


def _normal_from(mean, std, generator) -> np.ndarray:
    """torch's order: N(0, 1) (or N(0, std) for a number std) into the result, in the tensor
    parameter's dtype, then scaled by std and shifted by mean."""
    means, stds = np.asarray(mean), np.asarray(std)
    try:
        shape = np.broadcast_shapes(means.shape, stds.shape)
    except ValueError:
        raise broadcast_error("normal", means.shape, stds.shape) from None
    np_dtype = (mean if isinstance(mean, np.ndarray) else std).dtype
    array = np.empty(shape, np_dtype)
    with np.errstate(all="ignore"):
        if not isinstance(std, np.ndarray):
            Normal._draw(generator, array, 0.0, float(std))
            return (array + means).astype(np_dtype)
        Normal._draw(generator, array, 0.0, 1.0)
        return ((array * stds).astype(np_dtype) + means).astype(np_dtype)


class BernoulliSample(_Sample):
    node_name = "BernoulliBackward0"

    @staticmethod
    def forward(ctx, probabilities, generator):
        array = np.empty(probabilities.shape, probabilities.dtype)  # C order, as torch's
        BernoulliTensor._draw(generator, array, probabilities)
        return array


class PoissonSample(_Sample):
    node_name = "PoissonBackward0"

    @staticmethod
    def forward(ctx, rates, generator):
        values = D.poisson(generator, np.ascontiguousarray(rates))  # a C-ordered result
        return values.astype(rates.dtype).reshape(rates.shape)


def bernoulli(input: Tensor, p=None, *, generator=None, out=None) -> Tensor:
    """1 with probability ``input`` (each element its own; or the number ``p``), else 0, in
    input's dtype (a C-ordered result, as torch's)."""
    generator = resolve(generator)
    if p is None:
        if input._data.dtype.kind not in "fV":
            raise not_implemented("bernoulli_tensor_cpu_p_", input._data.dtype)
        return BernoulliSample.apply(input, generator)
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    array = np.empty(input._data.shape, input._data.dtype)
    Bernoulli._draw(generator, array, float(p))
    return Tensor._make(array)


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator=None, out=None) -> Tensor:
    """Indices drawn by the rows' weights. Without replacement (or one sample) torch takes
    the largest p / q with q ~ Exp(1); with replacement it inverts each row's running sum."""
    probs = input._data
    if probs.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if probs.dtype.kind not in "fV":
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
    if rates.dtype.kind not in "fV":
        raise not_implemented("poisson_cpu", rates.dtype)
    if rates.size and float(np.min(rates)) < 0:
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    return PoissonSample.apply(input, resolve(generator))


METHODS = {"uniform_": uniform_, "normal_": normal_, "exponential_": exponential_,
           "cauchy_": cauchy_, "log_normal_": log_normal_, "geometric_": geometric_,
           "bernoulli_": bernoulli_, "random_": random_,
           "bernoulli": bernoulli, "multinomial": multinomial}
