"""torch.utils.data.dataset's classes: map-style and iterable datasets, and the datasets made
of others (TensorDataset, Subset, ConcatDataset, ChainDataset, StackDataset)."""
from __future__ import annotations

import bisect
import itertools
from typing import Any, Generic, Iterable, Iterator, Sequence, TypeVar

from ...tensor import Tensor

T = TypeVar("T")


# -- datasets ------------------------------------------------------------------------------------
class Dataset(Generic[T]):
    """A map-style dataset: ``dataset[i]`` for ``i`` in ``range(len(dataset))``."""

    def __getitem__(self, index) -> T:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: "Dataset") -> "ConcatDataset":
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T]):
    """A stream of samples: ``iter(dataset)``; the loader batches consecutive samples."""

    def __iter__(self) -> Iterator[T]:
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other: "Dataset") -> "ChainDataset":
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Sample ``i`` is ``tuple(t[i] for t in tensors)``; all tensors share the first dim."""

    def __init__(self, *tensors: Tensor) -> None:
        if not all(tensors[0].size(0) == t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index) -> tuple:
        return tuple(tensor[index] for tensor in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0)


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, index):
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __getitems__(self, indices: list) -> list:
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset):
    """Datasets one after another; ``cumulative_sizes[k]`` is where dataset ``k`` ends."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        if any(isinstance(d, IterableDataset) for d in self.datasets):
            raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, index: int):
        if index < 0:
            if -index > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            index = len(self) + index
        which = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[which - 1] if which > 0 else 0
        return self.datasets[which][index - start]


class ChainDataset(IterableDataset):
    """Iterates each of ``datasets`` in turn (each must be an IterableDataset, checked as it is
    reached); ``len`` is the sum of their lengths."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        super().__init__()
        self.datasets = datasets

    def __iter__(self) -> Iterator:
        for dataset in self.datasets:
            if not isinstance(dataset, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from dataset

    def __len__(self) -> int:
        total = 0
        for dataset in self.datasets:
            if not isinstance(dataset, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(dataset)
        return total


class StackDataset(Dataset):
    """Sample ``i`` gathers sample ``i`` of every dataset: a tuple for positional datasets,
    a dict for keyword ones (not both). All must have the same length."""

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via "
                             "``kwargs``) like input/output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        members = args or tuple(kwargs.values())
        self._length = len(members[0])
        if any(len(dataset) != self._length for dataset in members):
            raise ValueError("Size mismatch between datasets")
        self.datasets: Any = args if args else kwargs

    def __getitem__(self, index: int):
        if isinstance(self.datasets, dict):
            return {key: dataset[index] for key, dataset in self.datasets.items()}
        return tuple(dataset[index] for dataset in self.datasets)

    def __getitems__(self, indices: list) -> list:
        """Samples for a batch of indices, each dataset read with its own ``__getitems__``
        when it has one."""
        named = isinstance(self.datasets, dict)
        items = self.datasets.items() if named else enumerate(self.datasets)
        columns = {}
        for key, dataset in items:
            fetch_many = getattr(dataset, "__getitems__", None)
            if callable(fetch_many):
                values = fetch_many(indices)
                if len(values) != len(indices):
                    raise ValueError(f"Nested dataset's output size mismatch. Expected "
                                     f"{len(indices)}, got {len(values)}")
            else:
                values = [dataset[index] for index in indices]
            columns[key] = values
        if named:
            return [{key: values[row] for key, values in columns.items()}
                    for row in range(len(indices))]
        return [tuple(values[row] for values in columns.values()) for row in range(len(indices))]

    def __len__(self) -> int:
        return self._length
