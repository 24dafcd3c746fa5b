"""The base of every sampler (torch.utils.data.sampler.Sampler)."""
from __future__ import annotations

from typing import Any, Generic, Iterator, Optional, TypeVar

T = TypeVar("T")


class Sampler(Generic[T]):
    """Yields dataset indices (or, for a batch sampler, lists of them)."""

    def __init__(self, data_source: Optional[Any] = None) -> None:
        pass

    def __iter__(self) -> Iterator[T]:
        raise NotImplementedError
