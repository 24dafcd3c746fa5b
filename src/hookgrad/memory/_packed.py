"""The small protocol that lets savers, policies and the ledger stack in any order.

A saver's pack hook returns a ``Packed`` object: it knows how many bytes it keeps resident
(``nbytes``), which buffers those bytes live in (``buffers()``, so two views stored once are
counted once) and how to give the tensor back (``unpack()``).

The ledger's pack hook returns a ``Held`` box around whatever it was given and watches the box's
lifetime: when autograd frees the saved tensor, the box dies and the ledger books the release.
A saver that runs *after* a ledger (``with ledger(): with quantize(8):``) is handed the box; it
packs the tensor inside and tells the ledger what it now holds (``Held.repack``), so the ledger
always records what is really kept, whichever context was entered first.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Optional

import numpy as np

from ..autograd.graph import SavedTensorInfo
from ..ops.creation import from_numpy
from ..tensor import Tensor


class Packed:
    """Base of what memory savers store for one saved tensor."""

    __slots__ = ()

    kind = "packed"  # a short word for the ledger's table ("int8", "bfloat16", "disk", ...)

    @property
    def nbytes(self) -> int:
        """Bytes this object keeps resident in memory (shared buffers included)."""
        return sum(size for _key, size in self.buffers())

    @property
    def disk_nbytes(self) -> int:
        """Bytes kept on disk instead of in memory (offload)."""
        return 0

    def buffers(self) -> Iterable[tuple]:
        """``(key, nbytes)`` per resident buffer; equal keys are one buffer."""
        return ()

    def unpack(self) -> Tensor:
        raise NotImplementedError


class Held:
    """The ledger's box around one saved value; its death is the saved tensor's release."""

    __slots__ = ("value", "record", "ledger", "__weakref__")

    def __init__(self, value: Any, record: Any, ledger: Any):
        self.value = value
        self.record = record
        self.ledger = ledger

    def innermost(self) -> Any:
        value = self.value
        while isinstance(value, Held):
            value = value.value
        return value

    def repack(self, pack: Callable[[Any], Any]) -> "Held":
        """Replace the innermost value by ``pack(value)`` and let every ledger on the way know."""
        if isinstance(self.value, Held):
            self.value.repack(pack)
        else:
            self.value = pack(self.value)
        self.ledger._repacked(self)
        return self

    def __del__(self):
        ledger = self.ledger
        if ledger is not None:
            ledger._released(self.record)


def unpack_any(value: Any) -> Tensor:
    """The one unpack hook of the memory package: boxes are opened, packed objects unpacked."""
    while isinstance(value, Held):
        value = value.value
    if isinstance(value, Packed):
        return value.unpack()
    return value


def array_of(tensor: Tensor) -> np.ndarray:
    """The NumPy array behind a tensor, without copying (public API only)."""
    return tensor.detach().numpy()


def tensor_of(array: np.ndarray) -> Tensor:
    return from_numpy(array)


def root_of(array: np.ndarray) -> np.ndarray:
    """The allocation an array views (what ``storage_key`` identifies)."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def kind_of(tensor: Tensor, info: Optional[SavedTensorInfo], known: Optional[dict] = None) -> str:
    """Why a saved tensor is alive: 'parameter' / 'buffer' (owned by the model, not counted),
    'input' (a leaf the caller passed in) or 'activation' (kept alive by saving it).

    ``known`` maps storage keys of the running model's parameters and buffers to their kind.
    """
    if info is not None and info.is_output:
        return "activation"
    if known:
        found = known.get(info.storage_key if info is not None else id(root_of(array_of(tensor))))
        if found is not None:
            return found
    if tensor.grad_fn is None and tensor.requires_grad:
        return "parameter"
    base = getattr(tensor, "_base", None)  # torch's public view base
    if base is not None and base.grad_fn is None:
        return "parameter" if base.requires_grad else "input"
    if tensor.grad_fn is None and (info is None or info.is_input):
        return "input"
    return "activation"
