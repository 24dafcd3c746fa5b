"""In-place random fills (``uniform_``, ``normal_``, ``bernoulli_``, ``random_`` ...) with
torch's CPU stream, as in-place ops with torch's node names; no gradient flows to the old values.

Elements are filled in torch's order: memory order for a tensor whose strides are permuted
(``x.t().uniform_()``), and ``normal_`` on a non-contiguous tensor takes torch's scalar path.
"""
from __future__ import annotations


import numpy as np

from .._warnings import warn
from .._generator import resolve
from ..tensor import Tensor
from . import _distributions as D
from ._base import Op, not_implemented


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
class _RandomFill(Op):
    _inplace = True
    _kernel = ""  # torch's kernel name in the error for an unsupported dtype

    @classmethod
    def forward(cls, ctx, self, *args):
        if self.dtype.kind not in "fV" and cls._kernel:
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
    if dtype.kind in "fV":
        return 2 ** D.float_digits(dtype) + 1
    if dtype.kind == "b":
        return 2
    return int(np.iinfo(dtype).max) + 1


_UNSET = object()


_CPP_NAMES = {"float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
              "float64": "double"}


def _warn_beyond_exact_integers(low: int, high: int, digits: int, np_dtype: np.dtype) -> None:
    """torch warns (not raises) when an end of an integer range lies past the integers the
    float dtype represents exactly; the draw still goes ahead."""
    bound = 1 << digits
    for value, name in ((low, "from"), (high - 1, "to - 1")):
        if not -bound <= value <= bound:
            warn(f"{name} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision "
                 f"limitations {_CPP_NAMES[np_dtype.name]} can support discrete uniform "
                 "distribution only within this range. This warning will become an "
                 "error in version 1.7 release, please fix the code in advance",
                 UserWarning)


def _float_range(low: int, high: int, np_dtype: np.dtype) -> tuple[int, int]:
    """torch moves [low, high) inward for a float dtype until both ends survive the cast, so
    no drawn integer rounds onto ``high``."""
    if np_dtype.kind not in "fV":
        return low, high
    digits = D.float_digits(np_dtype)
    _warn_beyond_exact_integers(low, high, digits, np_dtype)
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
            elif np_dtype.kind in "fV":
                high = min(2 ** D.float_digits(np_dtype), 2 ** 63 - 1) + 1
            else:
                high = _random_top(np_dtype)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= "
                           f"to={high}")
    if cls is Random and to is not None:
        low, high = _float_range(int(low), int(high), np_dtype)
    return cls.apply(input, int(low), int(high), generator)
