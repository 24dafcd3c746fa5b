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

import threading
from typing import Any, Callable, Iterable, Optional


class Packed:
    """Base of what memory savers store for one saved tensor."""

    __slots__ = ()

    kind = "packed"  # a short word for the ledger's table ("int8", "bfloat16", "disk", ...)
    note = ""  # why it is not stored as asked (a quantizer keeping non-finite values exact)

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

    def unpack(self) -> Any:
        raise NotImplementedError


class Held:
    """The ledger's box around one saved value; its death is the saved tensor's release."""

    __slots__ = ("value", "record", "ledger", "origin", "__weakref__")

    def __init__(self, value: Any, record: Any, ledger: Any, origin: Any = None):
        self.value = value
        self.record = record
        self.ledger = ledger
        # a weak reference to the tensor the hook was given, when ``value`` is a detached alias
        # of it: a saver recognises one tensor saved twice by it
        self.origin = origin

    def original(self) -> Any:
        """The tensor the first hook was given, if it is still alive (else None)."""
        box = self
        while isinstance(box, Held):
            if box.origin is not None:
                return box.origin()
            box = box.value
        return None

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


class _Note(threading.local):
    def __init__(self):
        self.last: Optional[tuple] = None  # (id of the value handed on, why)
        self.opened: Optional[tuple] = None  # (id of the tensor handed on, the box's record)


_note = _Note()


def note_kept(value: Any, why: str) -> Any:
    """A saver leaves ``value`` as it is: say why to the next hook (a ledger records it). Hooks
    compose synchronously, so the next pack hook on this thread is the one handed ``value``."""
    _note.last = (id(value), why)
    return value


def take_note(value: Any) -> str:
    """Why a saver left ``value`` as it is ("" if none said so)."""
    last = _note.last
    if last is None or last[0] != id(value):
        return ""
    _note.last = None
    return last[1]


def unpack_any(value: Any) -> Any:
    """The one unpack hook of the memory package: boxes are opened, packed objects unpacked.
    A ledger's box opened here (a saver inside the ledger unpacks first) leaves its record
    for that ledger's own unpack hook, which runs next (``opened_record``)."""
    record = value.record if isinstance(value, Held) else None
    while isinstance(value, Held):
        value = value.value
    if isinstance(value, Packed):
        value = value.unpack()
    if record is not None:
        _note.opened = (id(value), record)
    return value


def opened_record(value: Any) -> Any:
    """The record of the ledger box ``value`` came out of, if a saver just opened it."""
    opened = _note.opened
    if opened is None or opened[0] != id(value):
        return None
    _note.opened = None
    return opened[1]
