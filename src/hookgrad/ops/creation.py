"""Tensor factories, with torch's dtype inference (Python floats become float32 by default)."""
from __future__ import annotations

from typing import Optional

import numpy as np

from .. import _dtype
from ..tensor import Tensor


class device:
    """Only ``cpu`` exists here; kept so ``tensor.to(device)`` code runs unchanged."""

    __slots__ = ("type", "index")

    def __init__(self, type: str = "cpu", index: Optional[int] = None):
        if isinstance(type, device):
            type, index = type.type, type.index
        self.type = str(type).split(":")[0]
        self.index = index

    def __repr__(self) -> str:
        return f"device(type='{self.type}')"

    def __str__(self) -> str:
        return self.type

    def __eq__(self, other) -> bool:
        return str(self) == str(other)

    def __hash__(self) -> int:
        return hash(self.type)


def _infer_dtype(data) -> np.dtype:
    """torch.tensor's rule: any float gives the default dtype, else int64, else bool."""
    flat = data
    kinds = set()
    stack = [flat]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, Tensor):
            kinds.add(item._data.dtype)
        elif isinstance(item, np.ndarray):
            kinds.add(item.dtype)
        elif isinstance(item, (bool, np.bool_)):
            kinds.add("b")
        elif isinstance(item, (int, np.integer)):
            kinds.add("i")
        elif isinstance(item, (float, np.floating)):
            kinds.add("f")
        else:
            raise TypeError(f"Could not infer dtype of {type(item).__name__}")
    arrays = [k for k in kinds if isinstance(k, np.dtype)]
    if arrays and len(kinds) == len(arrays):
        return np.result_type(*arrays)
    if "f" in kinds or any(k.kind == "f" for k in arrays):
        floats = [k for k in arrays if k.kind == "f"]
        return np.result_type(*floats) if floats else _dtype.get_default_dtype().numpy
    if "i" in kinds or any(k.kind in "iu" for k in arrays):
        return np.dtype(np.int64)
    if kinds:
        return np.dtype(np.bool_)
    return _dtype.get_default_dtype().numpy


def _unwrap(data):
    if isinstance(data, Tensor):
        return data._data
    if isinstance(data, (list, tuple)):
        return [_unwrap(item) for item in data]
    return data


def _to_array(data, dtype=None) -> np.ndarray:
    np_dtype = None if dtype is None else _dtype.to_numpy_dtype(dtype)
    if isinstance(data, np.ndarray):
        if data.dtype.kind not in "biuf":
            raise TypeError(f"can't convert np.ndarray of type {data.dtype}")
        return np.array(data, dtype=np_dtype or data.dtype, copy=True)
    if isinstance(data, Tensor):
        return np.array(data._data, dtype=np_dtype or data._data.dtype, copy=True)
    if np_dtype is None:
        np_dtype = _infer_dtype(data)
    try:
        array = np.array(_unwrap(data), dtype=np_dtype)
    except ValueError as error:
        raise ValueError(f"expected sequence of equal-length lists ({error})") from None
    return array


def tensor(data, *, dtype=None, device=None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """A new tensor that owns a copy of ``data``."""
    result = Tensor._make(_to_array(data, dtype))
    if requires_grad:
        result.requires_grad_(True)
    return result


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Shares memory with a NumPy array (or returns the tensor) when no conversion is needed."""
    if isinstance(data, Tensor):
        return data if dtype is None or data.dtype is dtype else data.to(dtype)
    if isinstance(data, np.ndarray) and (dtype is None or
                                          data.dtype == _dtype.to_numpy_dtype(dtype)):
        return Tensor._make(data)
    return tensor(data, dtype=dtype)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor on the same memory as ``array`` (writes show through both ways)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    _dtype.from_numpy_dtype(array.dtype)
    return Tensor._make(array)


def _size(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    return tuple(int(s) for s in size)


def _float_dtype(dtype) -> np.dtype:
    return _dtype.get_default_dtype().numpy if dtype is None else _dtype.to_numpy_dtype(dtype)


def _factory(array: np.ndarray, requires_grad: bool) -> Tensor:
    result = Tensor._make(array)
    if requires_grad:
        result.requires_grad_(True)
    return result


def zeros(*size, dtype=None, device=None, requires_grad: bool = False, out=None) -> Tensor:
    return _factory(np.zeros(_size(size), _float_dtype(dtype)), requires_grad)


def ones(*size, dtype=None, device=None, requires_grad: bool = False, out=None) -> Tensor:
    return _factory(np.ones(_size(size), _float_dtype(dtype)), requires_grad)


def empty(*size, dtype=None, device=None, requires_grad: bool = False, **kwargs) -> Tensor:
    return _factory(np.empty(_size(size), _float_dtype(dtype)), requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    if dtype is None:
        dtype = _dtype.result_type(fill_value)
    return _factory(np.full(_size((size,)), fill_value, _dtype.to_numpy_dtype(dtype)),
                    requires_grad)


def _like(input: Tensor, dtype) -> np.dtype:
    return input._data.dtype if dtype is None else _dtype.to_numpy_dtype(dtype)


def zeros_like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False,
               memory_format=None) -> Tensor:
    return _factory(np.zeros(input._data.shape, _like(input, dtype)), requires_grad)


def ones_like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False,
              memory_format=None) -> Tensor:
    return _factory(np.ones(input._data.shape, _like(input, dtype)), requires_grad)


def empty_like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False,
               memory_format=None) -> Tensor:
    return _factory(np.empty(input._data.shape, _like(input, dtype)), requires_grad)


def full_like(input: Tensor, fill_value, *, dtype=None, device=None,
              requires_grad: bool = False, memory_format=None) -> Tensor:
    return _factory(np.full(input._data.shape, fill_value, _like(input, dtype)), requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None,
           requires_grad: bool = False) -> Tensor:
    if end is None:
        start, end = 0, start
    if dtype is None:
        dtype = _dtype.result_type(start, end, step)
    np_dtype = _dtype.to_numpy_dtype(dtype)
    if np_dtype.kind == "f":
        count = int(np.ceil((end - start) / step))
        array = (start + np.arange(max(count, 0), dtype=np.float64) * step).astype(np_dtype)
    else:
        array = np.arange(start, end, step, dtype=np_dtype)
    return _factory(array, requires_grad)


def linspace(start, end, steps: int, *, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    np_dtype = _float_dtype(dtype)
    # torch fills the first half from the start and the second half from the end
    index = np.arange(steps, dtype=np.float64)
    step = (end - start) / (steps - 1) if steps > 1 else 0.0
    half = steps // 2
    values = np.where(index < half, start + step * index, end - step * (steps - 1 - index))
    return _factory(values.astype(np_dtype), requires_grad)


def eye(n: int, m: Optional[int] = None, *, dtype=None, device=None,
        requires_grad: bool = False) -> Tensor:
    return _factory(np.eye(n, m, dtype=_float_dtype(dtype)), requires_grad)


# ---------------------------------------------------------------------------------------------
# Random numbers: hookgrad's own generator (torch's stream is not reproduced).
# ---------------------------------------------------------------------------------------------
class Generator:
    def __init__(self, device: str = "cpu"):
        self._seed = 0
        self._rng = np.random.default_rng(0)

    def manual_seed(self, seed: int) -> "Generator":
        self._seed = int(seed)
        self._rng = np.random.default_rng(int(seed))
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
    return default_generator.manual_seed(seed)


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def _rng(generator: Optional[Generator]):
    return (generator or default_generator)._rng


def rand(*size, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    np_dtype = _float_dtype(dtype)
    return _factory(_rng(generator).random(_size(size), dtype=np.float64).astype(np_dtype),
                    requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    np_dtype = _float_dtype(dtype)
    return _factory(_rng(generator).standard_normal(_size(size)).astype(np_dtype), requires_grad)


def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad: bool = False) -> Tensor:
    if size is None:
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    np_dtype = np.dtype(np.int64) if dtype is None else _dtype.to_numpy_dtype(dtype)
    return _factory(_rng(generator).integers(low, high, size=_size((size,))).astype(np_dtype),
                    requires_grad)


def randperm(n: int, *, generator=None, dtype=None, device=None) -> Tensor:
    np_dtype = np.dtype(np.int64) if dtype is None else _dtype.to_numpy_dtype(dtype)
    return Tensor._make(_rng(generator).permutation(n).astype(np_dtype))


def rand_like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return rand(input._data.shape, dtype=dtype or input.dtype, requires_grad=requires_grad)


def randn_like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return randn(input._data.shape, dtype=dtype or input.dtype, requires_grad=requires_grad)


def randint_like(input: Tensor, low, high=None, *, dtype=None, device=None) -> Tensor:
    return randint(low, high, input._data.shape, dtype=dtype or input.dtype)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None) -> Tensor:
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        m = mean._data if isinstance(mean, Tensor) else mean
        s = std._data if isinstance(std, Tensor) else std
        ref = mean if isinstance(mean, Tensor) else std
        return Tensor._make((m + s * _rng(generator).standard_normal(np.broadcast_shapes(
            np.shape(m), np.shape(s)))).astype(ref._data.dtype))
    return _factory((mean + std * _rng(generator).standard_normal(_size((size,)))).astype(
        _float_dtype(dtype)), False)


def bernoulli(input: Tensor, p=None, *, generator=None) -> Tensor:
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
