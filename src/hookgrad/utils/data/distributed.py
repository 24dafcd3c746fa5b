"""DistributedSampler: each of ``num_replicas`` processes reads its own share of a dataset.

hookgrad has no process group, so ``num_replicas`` and ``rank`` must be given (left out, they
raise torch's error for an uninitialised default group). The shuffled order is torch's:
``randperm`` under a generator seeded with ``seed + epoch``."""
from __future__ import annotations

import math
from typing import Iterator, Optional

from ... import _generator
from ...ops import random as _random
from .dataset import Dataset
from .sampler import Sampler


def _no_process_group() -> ValueError:
    return ValueError("Default process group has not been initialized, please make sure to "
                      "call init_process_group.")


class DistributedSampler(Sampler[int]):
    """Indices for replica ``rank`` of ``num_replicas``: the (shuffled) index list is padded
    by repeating its start until it divides evenly (or cut, ``drop_last=True``), then replica
    ``rank`` takes every ``num_replicas``-th index from position ``rank``. Call
    ``set_epoch`` before each epoch for a new order."""

    def __init__(self, dataset: Dataset, num_replicas: Optional[int] = None,
                 rank: Optional[int] = None, shuffle: bool = True, seed: int = 0,
                 drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            raise _no_process_group()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        length = len(dataset)
        if drop_last and length % num_replicas:
            # the largest share every replica can fill without repeating an index
            self.num_samples = math.ceil((length - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(length / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def _order(self) -> list:
        length = len(self.dataset)
        if not self.shuffle:
            return list(range(length))
        generator = _generator.Generator()
        generator.manual_seed(self.seed + self.epoch)
        return _random.randperm(length, generator=generator).tolist()

    def __iter__(self) -> Iterator[int]:
        indices = self._order()
        if self.drop_last:
            indices = indices[:self.total_size]
        else:
            missing = self.total_size - len(indices)
            if missing > 0:
                repeats = math.ceil(missing / len(indices))
                indices += (indices * repeats)[:missing]
        if len(indices) != self.total_size:
            raise AssertionError(f"Expected {self.total_size} indices, got {len(indices)}")
        share = indices[self.rank:self.total_size:self.num_replicas]
        if len(share) != self.num_samples:
            raise AssertionError(f"Expected {self.num_samples} indices, got {len(share)}")
        return iter(share)

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """The epoch folded into the shuffle seed, so every replica reorders alike."""
        self.epoch = epoch
