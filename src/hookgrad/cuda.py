"""``torch.cuda`` as torch's CPU-only build answers it: nothing is available, queries that need
a GPU raise ``AssertionError("Torch not compiled with CUDA enabled")``, and the calls torch
treats as harmless without a GPU (seeding, cache and memory counters) do nothing.

So ``device = "cuda" if torch.cuda.is_available() else "cpu"`` picks the CPU, and a script that
insists on CUDA fails at once with torch's message instead of running somewhere else.
"""
from __future__ import annotations

from typing import Any

from ._device import NO_CUDA


def _lazy_init() -> None:
    raise AssertionError(NO_CUDA)


def is_available() -> bool:
    """False: hookgrad computes on the CPU only."""
    return False


def device_count() -> int:
    """0: hookgrad has no GPU backend."""
    return 0


def is_initialized() -> bool:
    """False: CUDA is never initialised."""
    return False


def init() -> None:
    """Raises torch's CPU-build error: there is no CUDA to initialise."""
    _lazy_init()


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False: no CUDA device, so no CUDA bfloat16."""
    return False


def _needs_gpu(name: str):
    def call(*args: Any, **kwargs: Any):
        _lazy_init()

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"Needs a GPU: raises torch's error (``{NO_CUDA}``)."
    return call


current_device = _needs_gpu("current_device")
get_device_name = _needs_gpu("get_device_name")
get_device_capability = _needs_gpu("get_device_capability")
get_device_properties = _needs_gpu("get_device_properties")
synchronize = _needs_gpu("synchronize")
current_stream = _needs_gpu("current_stream")
default_stream = _needs_gpu("default_stream")
get_rng_state = _needs_gpu("get_rng_state")
get_rng_state_all = _needs_gpu("get_rng_state_all")
set_rng_state = _needs_gpu("set_rng_state")
set_rng_state_all = _needs_gpu("set_rng_state_all")
set_device = _needs_gpu("set_device")
mem_get_info = _needs_gpu("mem_get_info")


def _nothing(name: str, value: Any = None):
    def call(*args: Any, **kwargs: Any):
        return value

    call.__name__ = call.__qualname__ = name
    call.__doc__ = "Without a GPU there is nothing to do (torch's CPU build returns the same)."
    return call


manual_seed = _nothing("manual_seed")
manual_seed_all = _nothing("manual_seed_all")
seed = _nothing("seed")
seed_all = _nothing("seed_all")
empty_cache = _nothing("empty_cache")
memory_allocated = _nothing("memory_allocated", 0)
max_memory_allocated = _nothing("max_memory_allocated", 0)
memory_reserved = _nothing("memory_reserved", 0)
max_memory_reserved = _nothing("max_memory_reserved", 0)


class device:
    """``with torch.cuda.device(i):`` is built freely; entering it with an index >= 0 raises
    torch's RuntimeError (a negative index or None selects nothing)."""

    def __init__(self, device: Any):
        self.idx = -1 if device is None else getattr(device, "index", device)
        self.idx = -1 if self.idx is None else int(self.idx)

    def __enter__(self):
        if self.idx >= 0:
            raise RuntimeError("PyTorch was compiled without CUDA support")

    def __exit__(self, *exc) -> None:
        return None
