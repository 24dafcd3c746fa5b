"""Datasets, samplers and DataLoader with torch's names and batching rules (``default_collate``).

Loading runs in the calling process: ``num_workers`` is accepted for compatibility. For a
map-style dataset the batches are torch's, and so is their order under ``shuffle`` (and the
split of ``random_split``) for the same seed: samplers draw from torch's stream as torch's do.
"""
from __future__ import annotations

import collections.abc
import copy
import itertools
import math
import re
from typing import Any, Callable, Generic, Iterable, Iterator, Optional, Sequence, TypeVar

import numpy as np

from ..._warnings import warn
from ... import _dtype
from ... import _generator
from ...ops import creation
from ...ops import random as _random
from ...ops.join import stack
from ...tensor import Tensor
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset,  # noqa: F401
                      StackDataset, Subset, TensorDataset)
from .distributed import DistributedSampler  # noqa: F401
from .sampler import Sampler

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
           "DistributedSampler", "IterableDataset", "StackDataset",
           "RandomSampler", "Sampler", "SequentialSampler", "Subset", "SubsetRandomSampler",
           "TensorDataset", "WeightedRandomSampler", "default_collate", "default_convert",
           "get_worker_info", "random_split"]

T = TypeVar("T")


def random_split(dataset: Dataset, lengths: Sequence, generator=None) -> list:
    """Split into non-overlapping ``Subset``s of the given lengths, or of fractions of
    ``len(dataset)`` that sum to 1 (left-over items go one each to the first splits)."""
    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        counts = []
        for i, fraction in enumerate(lengths):
            if fraction < 0 or fraction > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            counts.append(math.floor(len(dataset) * fraction))
        for i in range(len(dataset) - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
        for i, length in enumerate(lengths):
            if length == 0:
                warn(f"Length of split at index {i} is 0. This might result in an "
                     "empty dataset.")
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    order = _random.randperm(sum(lengths), generator=generator).tolist()
    ends = itertools.accumulate(lengths)
    return [Subset(dataset, order[end - length:end]) for end, length in zip(ends, lengths)]


# -- samplers ------------------------------------------------------------------------------------
class SequentialSampler(Sampler[int]):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source) -> None:
        self.data_source = data_source

    def __len__(self) -> int:
        return len(self.data_source)

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

def _draw_seed(generator=None) -> int:
    """torch's ``empty((), dtype=int64).random_(generator=generator).item()``."""
    return int(creation.empty((), dtype=_dtype.int64).random_(generator=generator).item())


def _fresh_generator() -> _generator.Generator:
    """A generator seeded from the default one when the pass starts, so ``manual_seed`` fixes
    every epoch's order while each epoch still differs (torch's RandomSampler does the same)."""
    return _generator.Generator().manual_seed(_draw_seed())


class RandomSampler(Sampler[int]):
    """A random permutation per pass (or draws with replacement), ``num_samples`` long."""

    def __init__(self, data_source, replacement: bool = False,
                 num_samples: Optional[int] = None, generator=None) -> None:
        self.data_source, self.generator = data_source, generator
        self.replacement, self._num_samples = replacement, num_samples
        if not isinstance(self.replacement, bool):
            raise TypeError("replacement should be a boolean value, but got "
                            f"replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        """How many indices one pass draws: ``len(data_source)`` unless ``num_samples`` was given.
        """
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        generator = self.generator if self.generator is not None else _fresh_generator()
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from _random.randint(0, n, (32,), generator=generator).tolist()
            yield from _random.randint(0, n, (self.num_samples % 32,),
                                        generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from _random.randperm(n, generator=generator).tolist()
            yield from _random.randperm(n, generator=generator).tolist()[:self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class WeightedRandomSampler(Sampler[int]):
    """``num_samples`` indices drawn by ``weights`` (float64), through ``multinomial``."""

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator=None) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or \
                num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError("replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        weights = creation.as_tensor(weights, dtype=_dtype.float64)
        if weights.ndim != 1:
            raise ValueError("weights should be a 1d sequence but given weights have shape "
                             f"{tuple(weights.shape)}")
        self.weights = weights
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        yield from _random.multinomial(self.weights, self.num_samples, self.replacement,
                                       generator=self.generator).tolist()

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given indices in a random order."""

    def __init__(self, indices: Sequence[int], generator=None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in _random.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class BatchSampler(Sampler[list]):
    """Groups a sampler's indices into lists of ``batch_size``; ``drop_last`` drops a short
    final batch."""

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError("batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list]:
        indices = iter(self.sampler)
        batch = list(itertools.islice(indices, self.batch_size))
        while batch and (len(batch) == self.batch_size or not self.drop_last):
            yield batch
            batch = list(itertools.islice(indices, self.batch_size))

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size


# -- collation -----------------------------------------------------------------------------------
_COLLATE_ERROR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
                  "lists; found {}")
_STRING_OR_OBJECT = re.compile(r"[SaUO]")


def default_collate(batch: list) -> Any:
    """Stack a list of samples into a batch, keeping the samples' structure.

    Tensors and NumPy arrays are stacked on a new first dim; Python floats become a float64
    tensor, ints (and bools) an int64 (bool) tensor; strings stay a list; dicts, namedtuples and
    sequences are collated field by field (a tuple sample gives a list, as in torch).
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(batch, 0)
    if isinstance(elem, np.ndarray):
        if _STRING_OR_OBJECT.search(elem.dtype.str) is not None:
            raise TypeError(_COLLATE_ERROR.format(elem.dtype))
        return default_collate([creation.as_tensor(b) for b in batch])
    if isinstance(elem, (np.bool_, np.number, np.object_)):
        return creation.as_tensor(np.asarray(batch))
    if isinstance(elem, float):
        return creation.tensor(batch, dtype=_dtype.float64)
    if isinstance(elem, int):
        return creation.tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        fields = {key: default_collate([d[key] for d in batch]) for key in elem}
        return _rebuild_mapping(elem, fields)
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return type(elem)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if not all(len(sample) == size for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [default_collate(samples) for samples in zip(*batch)]
        if isinstance(elem, tuple):
            return columns  # torch returns a list here, for backwards compatibility
        return _rebuild_sequence(elem, columns)
    raise TypeError(_COLLATE_ERROR.format(type(elem)))


def default_convert(data: Any) -> Any:
    """What an unbatched loader (``batch_size=None``) yields: NumPy arrays and scalars become
    tensors, containers are converted element by element, anything else is left as is."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray):
        if _STRING_OR_OBJECT.search(data.dtype.str) is not None:
            return data
        return creation.as_tensor(data)
    if isinstance(data, (np.bool_, np.number)):
        return creation.as_tensor(np.asarray(data))
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data


def _rebuild_mapping(elem: collections.abc.Mapping, fields: dict) -> Any:
    try:
        if isinstance(elem, collections.abc.MutableMapping):
            clone = copy.copy(elem)
            clone.update(fields)
            return clone
        return type(elem)(fields)
    except TypeError:
        return fields


def _rebuild_sequence(elem: collections.abc.Sequence, items: list) -> Any:
    try:
        if isinstance(elem, collections.abc.MutableSequence):
            clone = copy.copy(elem)
            for i, item in enumerate(items):
                clone[i] = item
            return clone
        return type(elem)(items)
    except TypeError:
        return items


def get_worker_info() -> None:
    """Always None: hookgrad loads in the main process."""


# -- the loader ----------------------------------------------------------------------------------
def _refuse_for_iterable(**options: Any) -> None:
    for name, value in options.items():
        if value is not None:
            raise ValueError(f"DataLoader with IterableDataset: expected unspecified {name} "
                             f"option, but got {name}={value}")


class DataLoader(Generic[T]):
    """Iterates over ``dataset`` in batches of ``batch_size`` made by ``collate_fn``.

    ``shuffle=True`` draws a new permutation each epoch (from ``generator``, or from the default
    generator, so ``hookgrad.manual_seed`` makes the epochs reproducible); ``drop_last`` drops a
    short final batch; ``batch_size=None`` yields single samples through ``default_convert``.
    """

    def __init__(self, dataset: Dataset, batch_size: Optional[int] = 1,
                 shuffle: Optional[bool] = None, sampler=None, batch_sampler=None,
                 num_workers: int = 0, collate_fn: Optional[Callable] = None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Optional[Callable] = None, multiprocessing_context=None,
                 generator=None, *, prefetch_factor: Optional[int] = None,
                 persistent_workers: bool = False, pin_memory_device: str = "",
                 in_order: bool = True) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set "
                             "prefetch_factor to None.")
        if prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset, self.generator = dataset, generator
        self.num_workers, self.timeout = num_workers, timeout
        self.pin_memory, self.worker_init_fn = pin_memory, worker_init_fn
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            # The dataset decides its own order, so nothing that picks indices may be given.
            _refuse_for_iterable(shuffle=None if shuffle in (False, None) else shuffle,
                                 sampler=sampler, batch_sampler=batch_sampler)
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None and not self._iterable:
            sampler = (RandomSampler(dataset, generator=generator) if shuffle
                       else SequentialSampler(dataset))
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.sampler, self.batch_sampler = sampler, batch_sampler
        self.batch_size, self.drop_last = batch_size, drop_last
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None or (self._iterable and self.batch_size is not None)

    def __iter__(self) -> Iterator:
        # torch's iterator draws its workers' base seed when it is made, before the sampler's
        # first draw; the draw is kept so both libraries' streams stay in step.
        self._base_seed = _draw_seed(self.generator)
        if self._iterable:
            return self._iterate_stream()
        return self._iterate_map()

    def _iterate_map(self) -> Iterator:
        dataset = self.dataset
        if not self._auto_collation:
            for index in self.sampler:
                yield self.collate_fn(dataset[index])
            return
        fetch_many = getattr(dataset, "__getitems__", None)
        for indices in self.batch_sampler:
            samples = fetch_many(indices) if callable(fetch_many) else [dataset[i] for i in indices]
            yield self.collate_fn(samples)

    def _iterate_stream(self) -> Iterator:
        stream = iter(self.dataset)
        if self.batch_size is None:
            for sample in stream:
                yield self.collate_fn(sample)
            return
        while True:
            samples = list(itertools.islice(stream, self.batch_size))
            if not samples or (self.drop_last and len(samples) < self.batch_size):
                return
            yield self.collate_fn(samples)

    def __len__(self) -> int:
        if self._iterable:
            length = len(self.dataset)
            if self.batch_size is None:
                return length
            if self.drop_last:
                return length // self.batch_size
            return -(-length // self.batch_size)
        return len(self.batch_sampler if self._auto_collation else self.sampler)

