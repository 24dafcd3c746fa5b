"""torch.random's names: seeding, the default generator's state, and ``fork_rng``."""
from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ._generator import (default_generator, Generator, get_rng_state,  # noqa: F401
                         initial_seed, manual_seed, seed, set_rng_state)

__all__ = ["fork_rng", "get_rng_state", "initial_seed", "manual_seed", "seed", "set_rng_state"]


@contextlib.contextmanager
def fork_rng(devices=None, enabled: bool = True, _caller: str = "fork_rng",
             _devices_kw: str = "devices", device_type: str = "cuda") -> Iterator[None]:
    """Run the block with the default generator's state saved and restored afterwards, so its
    draws leave the stream outside untouched (no CUDA generators exist to fork)."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
