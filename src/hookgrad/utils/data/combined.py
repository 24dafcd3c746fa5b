"""Datasets made of other datasets: ChainDataset (iterable datasets one after another) and
StackDataset (several map-style datasets read at the same index, as a tuple or a dict)."""
from __future__ import annotations

from typing import Any, Iterable, Iterator

from . import Dataset, IterableDataset


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
