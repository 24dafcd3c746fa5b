"""torch's CPU random generator: the same mt19937 stream, seeds and state bytes.

torch's CPU generator is the standard 32-bit Mersenne Twister seeded by ``init_genrand`` with
the seed's low 32 bits; NumPy's ``MT19937`` with its legacy seeding is the same engine, so the
words come from NumPy in bulk (``random_raw``). What torch adds on top is kept here: the 64-bit
seed it reports, the cached second value of a scalar Box-Muller pair (one for double, one for
float), and the 5056-byte state layout ``get_state`` returns:

    offset    0  uint64  initial seed        offset 5016  double  unused (0)
    offset    8  int32   words left + 1      offset 5024  double  cached double normal
    offset   12  int32   seeded (1)          offset 5032  double  unused (0)
    offset   16  uint64  next word index     offset 5040  int32   cached double is valid
    offset   24  uint64  key[624]            offset 5048  float   cached float normal
                                             offset 5052  bool    cached float is valid
"""
from __future__ import annotations

import os

import numpy as np

from .tensor import Tensor
from ._device import device

_STATE_WORDS = 624
STATE_SIZE = 5056
_SEED_LOW, _SEED_HIGH = -(2 ** 63), 2 ** 64 - 1
DEFAULT_SEED = 67280421310721  # what torch's default generator reports before any seeding


class Generator:
    """A CPU random generator with torch's stream: ``Generator().manual_seed(s)`` draws the same
    numbers as ``torch.Generator().manual_seed(s)``; ``get_state``/``set_state`` exchange
    torch's 5056-byte state, so a state may move between the two libraries."""

    def __init__(self, device="cpu"):
        if str(getattr(device, "type", device)).split(":")[0] != "cpu":
            raise RuntimeError(_NO_CUDA_GENERATOR)
        self._engine = np.random.MT19937(0)
        self.device = _cpu_device()
        self.manual_seed(DEFAULT_SEED)

    # -- seeding ----------------------------------------------------------------------------
    def manual_seed(self, seed) -> Generator:
        """Restart the stream from ``seed`` (any int in [-2**63, 2**64)); returns self."""
        seed = _check_seed(seed)
        self._seed = seed % 2 ** 64
        self._engine._legacy_seeding(self._seed & 0xFFFFFFFF)
        self._fresh = True  # torch marks a never-used key with index 0, a used-up one with 624
        self._double_normal = None
        self._float_normal = None
        return self

    def seed(self) -> int:
        """Seed from the operating system's entropy and return that seed (torch's ``seed``)."""
        value = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(value)
        return value

    def initial_seed(self) -> int:
        """The seed this generator was last seeded with."""
        return self._seed

    # -- state ------------------------------------------------------------------------------
    def get_state(self) -> Tensor:
        """torch's CPU generator state: a uint8 tensor of 5056 bytes."""
        state = self._engine.state["state"]
        position = int(state["pos"])
        buffer = np.zeros(STATE_SIZE, np.uint8)
        if position >= _STATE_WORDS:
            left, index = 1, 0 if self._fresh else _STATE_WORDS
        else:
            left, index = _STATE_WORDS + 1 - position, position
        buffer[0:8].view(np.uint64)[0] = self._seed
        buffer[8:16].view(np.int32)[:] = (left, 1)
        buffer[16:24].view(np.uint64)[0] = index
        buffer[24:5016].view(np.uint64)[:] = state["key"].astype(np.uint64)
        if self._double_normal is not None:
            buffer[5024:5032].view(np.float64)[0] = self._double_normal
            buffer[5040:5044].view(np.int32)[0] = 1
        if self._float_normal is not None:
            buffer[5048:5052].view(np.float32)[0] = self._float_normal
            buffer[5052] = 1
        return Tensor._make(buffer)

    def set_state(self, new_state: Tensor) -> Generator:
        """Restore a state from ``get_state`` (this library's or torch's)."""
        if isinstance(new_state, Tensor):
            data = new_state._data
        elif hasattr(new_state, "numpy") and hasattr(new_state, "dtype"):  # a torch tensor
            data = new_state.detach().cpu().numpy()
        else:
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        if data.dtype != np.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        if data.size != STATE_SIZE:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {STATE_SIZE} but found "
                               f"the input RNG state size to be {data.size}")
        buffer = np.ascontiguousarray(data.reshape(-1))
        left, seeded = (int(v) for v in buffer[8:16].view(np.int32))
        index = int(buffer[16:24].view(np.uint64)[0])
        if not (seeded == 1 and 0 < left <= _STATE_WORDS and index <= _STATE_WORDS):
            raise RuntimeError("Invalid mt19937 state")
        key = (buffer[24:5016].view(np.uint64) & 0xFFFFFFFF).astype(np.uint32)
        position = _STATE_WORDS if left == 1 else index
        self._engine.state = {"bit_generator": "MT19937",
                              "state": {"key": key, "pos": position}}
        self._seed = int(buffer[0:8].view(np.uint64)[0])
        self._fresh = left == 1 and index == 0
        self._double_normal = (float(buffer[5024:5032].view(np.float64)[0])
                               if buffer[5040:5044].view(np.int32)[0] else None)
        self._float_normal = (np.float32(buffer[5048:5052].view(np.float32)[0])
                              if buffer[5052] else None)
        return self

    def clone_state(self) -> Generator:
        """A new generator at this one's exact position (torch's ``graphsafe_get_state``)."""
        copy = Generator()
        copy.set_state(self.get_state())
        return copy

    def __repr__(self) -> str:
        return f"<hookgrad.Generator object at {id(self):#x}>"

    # -- raw words: the one place the engine is advanced ---------------------------------------
    def _random(self, count: int) -> np.ndarray:
        """``count`` 32-bit words as uint64 (torch's ``random()``)."""
        if count <= 0:
            return np.zeros(0, np.uint64)
        self._fresh = False
        return self._engine.random_raw(count)

    def _random64(self, count: int) -> np.ndarray:
        """``count`` 64-bit words, each the next two 32-bit words, high first (``random64()``)."""
        words = self._random(2 * count)
        return (words[0::2] << np.uint64(32)) | words[1::2]


def _check_seed(seed) -> int:
    if isinstance(seed, Tensor):
        seed = seed.item()
    try:
        seed = int(seed)
    except (TypeError, ValueError):
        raise TypeError(f"manual_seed expected a long, but got {type(seed).__name__}") from None
    if not _SEED_LOW <= seed <= _SEED_HIGH:
        raise ValueError("Overflow when unpacking long long")
    return seed


_NO_CUDA_GENERATOR = (
    "Cannot get CUDA generator without ATen_cuda library. PyTorch splits its backend into two "
    "shared libraries: a CPU library and a CUDA library; this error has occurred because you "
    "are trying to use some CUDA functionality, but the CUDA library has not been loaded by the "
    "dynamic linker for some reason.  The CUDA library MUST be loaded, EVEN IF you don't "
    "directly use any symbols from the CUDA library! One common culprit is a lack of "
    "-Wl,--no-as-needed in your link arguments; many dynamic linkers will delete dynamic "
    "library dependencies if you don't depend on any of their symbols.  You can check if this "
    "has occurred by using ldd on your binary to see if there is a dependency on *_cuda.so "
    "library.")


def _cpu_device():
    return device("cpu")


default_generator = Generator()
default_generator.manual_seed(int.from_bytes(os.urandom(8), "little"))  # as torch: unseeded


def manual_seed(seed) -> Generator:
    """Seed the default generator; the draws that follow equal torch's after the same seed."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seed the default generator from entropy and return the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The seed the default generator was last seeded with."""
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The default generator's state: torch's 5056-byte uint8 tensor."""
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    """Restore the default generator from ``get_rng_state`` (or ``torch.get_rng_state``)."""
    default_generator.set_state(new_state)


def resolve(generator: Generator | None) -> Generator:
    """The generator a draw uses: the one given, else the default one."""
    if generator is None:
        return default_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"expected a torch.Generator, but got {type(generator).__name__}")
    return generator
