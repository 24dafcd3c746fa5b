"""ledger(): an account of every tensor saved for backward, by module, in bytes.

It is one saved-tensor hook pair (composed after any enclosing one) and the shared module
tracker. Each saved tensor becomes a ``Record`` and is returned inside a ``Held`` box; when
autograd frees the saved tensor (after backward, or when the graph is dropped) the box dies and
the ledger books the release, so ``peak`` is the most saved bytes alive at once.

Only memory that saving keeps alive is counted: parameters and buffers (and views of them) are
listed with ``counted == 0``, and a buffer saved twice (a ReLU's output that the next Linear
saves again) is counted once. What is counted is what is *held*: after a saver packed a tensor,
its packed size (``Packed.buffers()``), not the tensor's.

On torch the same code runs through torch's public hooks: module names come from global module
hooks, parameters and buffers are found by their storage (``untyped_storage().data_ptr()``),
and the op is the saved tensor's own ``grad_fn`` (torch does not tell a pack hook which node is
saving). A torch ledger also measures the real peak of the memory the framework allocated while
it was open (``measured_peak``): the profiler's memory events on CPU, ``max_memory_allocated``
on a GPU.
"""
from __future__ import annotations

import json
import threading
import weakref
from collections import OrderedDict
from typing import Any, Dict, List, Optional

from ._backend import Backend, backend_for, backend_of_tensor
from ._modules import tracker_for
from ._packed import Held, Packed, opened_record, take_note

NOT_COUNTED = ("parameter", "buffer")


class Record:
    """One saved tensor. ``nbytes``: its own size; ``held``: what its saved form keeps resident;
    ``counted``: what it added to the ledger's total (0 for parameters and repeated buffers)."""

    __slots__ = ("index", "op", "module", "module_type", "shape", "dtype", "nbytes", "held",
                 "disk", "counted", "kind", "stored_as", "alias_of", "keys", "released", "note")

    def __init__(self, index: int, op: str, module: Optional[str], module_type: Optional[str]):
        self.index = index
        self.op = op
        self.module = module
        self.module_type = module_type
        self.shape: Optional[tuple] = None
        self.dtype: Optional[str] = None
        self.nbytes = 0
        self.held = 0
        self.disk = 0
        self.counted = 0
        self.kind = "activation"
        self.stored_as = "tensor"
        self.alias_of: Optional[int] = None
        self.keys: tuple = ()
        self.released = False
        self.note = ""  # why a saver left it as it is (a dtype it cannot encode...)

    def as_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.__slots__ if name != "keys"}

    @property
    def buffers(self) -> tuple:
        """The buffer keys its saved form holds (equal keys: one buffer)."""
        return tuple(key for key, _size in self.keys)

    def __repr__(self) -> str:
        return (f"Record({self.index}, {self.op}, module={self.module!r}, shape={self.shape}, "
                f"{self.dtype}, nbytes={self.nbytes}, held={self.held}, kind={self.kind})")


def format_bytes(value: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(value) < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return str(value)


class Ledger:
    """Records saved tensors while active; see ``ledger()``."""

    def __init__(self, framework: str = "hookgrad", measure: Optional[bool] = None,
                 device: Any = None):
        self.backend: Backend = backend_for(framework=framework)
        self.framework = framework
        self.measure = True if measure is None else bool(measure)
        self.device = device
        self.measured_peak: Optional[int] = None  # bytes, after the block ends
        # hookgrad: what the measured peak is made of, and where the step was when it came
        self.peak_split: Optional[dict] = None
        self._meter: Any = None
        self._where = "(start)"
        self._params: list = []
        self._grads_at_start = 0
        self._inputs_live = 0
        self._saved_then = 0
        # hookgrad, measured, at every event: (where, saved, gradients, all traced bytes now,
        # the traced peak since the previous event, saved bytes alive per module)
        self.timeline: List[tuple] = []
        self._module_live: Dict[str, int] = {}  # module -> saved bytes alive (inputs left out)
        self._meters: list = []
        self.records: List[Record] = []
        self.current = 0
        self.total = 0
        self._peak = 0
        self._live: Dict[Any, list] = {}  # buffer key -> [users, bytes, first record index]
        self._known: Dict[int, str] = {}  # storage key -> 'parameter' / 'buffer'
        self._inputs: Optional[set] = None  # storage keys of what the running root was given
        self._roots: set = set()
        self._lock = threading.RLock()
        self._contexts: list = []

    # -- context ---------------------------------------------------------------------------
    def __enter__(self) -> "Ledger":
        tracker_for(self.framework).acquire(self)
        context = self.backend.saved_tensors_hooks(self._pack, self._unpack)
        context.__enter__()
        self._contexts.append(context)
        meter = self.backend.peak_meter(self.device) if self.measure else None
        if meter is not None:
            meter.__enter__()
        self._meters.append(meter)
        self._meter = meter if hasattr(meter, "poll") else None
        return self

    def __exit__(self, *exc) -> bool:
        meter = self._meters.pop()
        try:
            if meter is not None:
                self._poll("(end)")
                meter.__exit__(*exc)
                self.measured_peak = meter.peak
                if self.peak_split is not None and meter.peak is not None:
                    split = self.peak_split
                    split["peak"] = meter.peak
                    split["transient"] = max(0, meter.peak - split["saved"]
                                             - split["gradients"])
            self._meter = None
        finally:
            self._contexts.pop().__exit__(*exc)
            tracker_for(self.framework).release(self)
        return False

    # -- module tracker listener: learn what the model owns ------------------------------------
    # -- what holds the measured peak (hookgrad: tracemalloc, polled at every event) ------------
    def _poll(self, where: str) -> None:
        """Called at each event (a module entered or left, a tensor saved, unpacked or
        freed): if the traced peak rose since the last event, it came while the step was at
        the *previous* event's place; note that place and what was alive then."""
        meter = self._meter
        if meter is None:
            return
        grads = sum(self.backend.nbytes(p.grad) for p in self._params
                    if p.grad is not None) - self._grads_at_start
        saved = max(0, self.current - self._inputs_live)
        rose = meter.poll()
        # the highest since the last event came while the step was at the last event's place
        self.timeline.append((where, saved, max(0, grads), meter.current(),
                              max(0, meter.last_peak),
                              {name: size for name, size in self._module_live.items() if size}))
        if rose:
            self.peak_split = {"saved": self._saved_then, "gradients": max(0, grads),
                               "where": self._where}
        self._where = where
        # saved bytes only change at events: what is alive now is what the next rise meets
        self._saved_then = max(0, self.current - self._inputs_live)

    def enter(self, module, name: str, is_root: bool) -> None:
        if self._meter is not None:
            if is_root and not self._params:
                self._params = list(module.parameters())
                self._grads_at_start = sum(self.backend.nbytes(p.grad) for p in self._params
                                           if p.grad is not None)
            self._poll(f"forward of {name or type(module).__name__}")
        if is_root and self.backend.name == "torch":  # torch's hooks do not say what is input
            args = tracker_for(self.framework).state.root_args
            self._inputs = {self.backend.storage_key(a) for a in args
                            if self.backend.is_tensor(a)}
        if is_root and id(module) not in self._roots:
            self._roots.add(id(module))
            key = self.backend.storage_key
            for parameter in module.parameters():
                self._known[key(parameter)] = "parameter"
            for buffer in module.buffers():
                self._known[key(buffer)] = "buffer"

    def exit(self, module, name: str, is_root: bool) -> None:
        if self._meter is not None:
            self._poll(f"after forward of {name or type(module).__name__}")

    # -- hooks -----------------------------------------------------------------------------
    def _pack(self, value: Any) -> Held:
        backend = self.backend
        inner = value.innermost() if isinstance(value, Held) else value
        tensor_backend = backend_of_tensor(inner)
        info = backend.current_info()
        frame = tracker_for(self.framework).current()
        op = (tensor_backend.op_name(inner, info) if tensor_backend is not None
              else backend.op_name(inner, info) if info is not None else "(packed)")
        with self._lock:
            record = Record(len(self.records), op, frame[1] if frame else None,
                            type(frame[0]).__name__ if frame else None)
            self.records.append(record)
        self._settle()
        origin = None
        record.note = take_note(value)  # a saver before this ledger left it as it is
        if tensor_backend is not None:
            record.kind = tensor_backend.kind_of(inner, info, self._known, self._inputs)
            if not isinstance(value, Held):
                value = tensor_backend.as_packable(inner, info)
                if value is not inner:
                    origin = weakref.ref(inner)
        self._describe(record, inner, info, tensor_backend)
        box = Held(value, record, self, origin)
        self._account(record, inner)
        if self._meter is not None:
            self._poll(f"forward: {op} in {record.module or '(no module)'}")
        return box

    def _unpack(self, value: Any) -> Any:
        if self._meter is not None:
            # a saver inside this ledger opened the box first and said which it was
            record = value.record if isinstance(value, Held) else opened_record(value)
            if record is not None:
                self._poll(f"backward: {record.op} of {record.module or '(no module)'}")
            else:
                self._poll("backward")
        return value.value if isinstance(value, Held) else value

    def _describe(self, record: Record, inner: Any, info, backend: Optional[Backend]) -> None:
        if backend is not None:
            record.shape = tuple(inner.shape)
            record.dtype = str(inner.dtype).replace("torch.", "")
            record.nbytes = backend.nbytes(inner)
            return
        record.shape = tuple(getattr(inner, "shape", ())) or None
        dtype = getattr(inner, "dtype", None)
        record.dtype = None if dtype is None else str(dtype).replace("torch.", "")
        record.nbytes = info.nbytes if info is not None else getattr(inner, "nbytes", 0)

    def _buffers(self, record: Record, inner: Any) -> tuple:
        if record.kind in NOT_COUNTED:
            return ()
        backend = backend_of_tensor(inner)
        if backend is not None:
            return ((("storage", backend.storage_key(inner)), backend.nbytes(inner)),)
        if isinstance(inner, Packed):
            return tuple((("packed", key), size) for key, size in inner.buffers())
        return ((("object", id(inner)), record.nbytes),)

    def _account(self, record: Record, inner: Any) -> None:
        keys = self._buffers(record, inner)
        if isinstance(inner, Packed):
            record.stored_as = inner.kind
            record.disk = inner.disk_nbytes
            record.held = inner.nbytes
            record.note = inner.note or record.note
        else:
            record.stored_as = "tensor"
            record.disk = 0
            record.held = record.nbytes
        with self._lock:
            record.keys = keys
            for key, size in keys:
                entry = self._live.get(key)
                if entry is None:
                    # the module saving a buffer first holds all of it in the timeline
                    entry = self._live[key] = [1, size, record.index, record.kind == "input",
                                               _module_label(record)]
                    self._inputs_live += size if record.kind == "input" else 0
                    added = size
                else:
                    entry[0] += 1
                    added = max(0, size - entry[1])
                    entry[1] += added
                    record.alias_of = entry[2]
                if not entry[3]:
                    self._module_live[entry[4]] = self._module_live.get(entry[4], 0) + added
                record.counted += added
                self.current += added
                self.total += added

    def _settle(self) -> None:
        # a saver after this ledger may still repack the last record within the same pack call,
        # so the peak is taken when the next event comes, not at once
        if self.current > self._peak:
            self._peak = self.current

    @property
    def peak(self) -> int:
        """The most bytes held by saved tensors at once."""
        return max(self._peak, self.current)

    def _drop(self, record: Record) -> None:
        with self._lock:
            for key, _size in record.keys:
                entry = self._live.get(key)
                if entry is None:
                    continue
                entry[0] -= 1
                if entry[0] == 0:
                    self.current -= entry[1]
                    if entry[3]:
                        self._inputs_live -= entry[1]
                    else:
                        self._module_live[entry[4]] -= entry[1]
                    del self._live[key]

    def _repacked(self, box: Held) -> None:
        """A saver after this ledger packed the tensor: hold its packed form instead."""
        record = box.record
        self._drop(record)
        with self._lock:
            self.total -= record.counted
            record.counted = 0
            record.alias_of = None
        self._account(record, box.innermost())

    def _released(self, record: Record) -> None:
        try:
            if record.released:
                return
            self._settle()
            self._drop(record)
            record.released = True
            if self._meter is not None:
                self._poll(f"backward: {record.op} of {record.module or '(no module)'}")
        except Exception:  # noqa: BLE001 - interpreter shutdown: nothing left to account
            pass

    # -- reports ---------------------------------------------------------------------------
    def by_module(self) -> "OrderedDict[str, dict]":
        """Per module (innermost when saved): tensors, bytes, counted bytes, parameter bytes,
        ops; sorted by counted bytes, largest first."""
        rows: Dict[str, dict] = {}
        for record in self.records:
            name = _module_label(record)
            row = rows.setdefault(name, {"type": record.module_type, "tensors": 0,
                                         "activation_bytes": 0, "counted": 0, "disk": 0,
                                         "parameter_bytes": 0, "ops": []})
            row["tensors"] += 1
            if record.kind in NOT_COUNTED:
                row["parameter_bytes"] += record.nbytes
            elif record.alias_of is None:
                row["activation_bytes"] += record.nbytes
            row["counted"] += record.counted
            row["disk"] += record.disk
            if record.op not in row["ops"]:
                row["ops"].append(record.op)
        ordered = sorted(rows.items(), key=lambda item: (-item[1]["counted"],
                                                         -item[1]["activation_bytes"]))
        return OrderedDict(ordered)

    def table(self, limit: Optional[int] = None) -> str:
        """A printable table per module, largest held bytes first, with total and peak."""
        rows = list(self.by_module().items())
        if limit is not None:
            rows = rows[:limit]
        header = ("module", "type", "saved", "activations", "held", "on disk",
                  "params (not counted)", "ops")
        lines = [header]
        for name, row in rows:
            lines.append((name, row["type"] or "", str(row["tensors"]),
                          format_bytes(row["activation_bytes"]), format_bytes(row["counted"]),
                          format_bytes(row["disk"]) if row["disk"] else "-",
                          format_bytes(row["parameter_bytes"]) if row["parameter_bytes"] else "-",
                          ", ".join(row["ops"])))
        widths = [max(len(line[i]) for line in lines) for i in range(len(header) - 1)]
        text = []
        for line in lines:
            cells = [cell.ljust(width) if i < 2 else cell.rjust(width)
                     for i, (cell, width) in enumerate(zip(line, widths))]
            text.append("  ".join(cells + [line[-1]]).rstrip())
        text.insert(1, "-" * len(text[0]))
        text.append(f"total held {format_bytes(self.total)}, peak {format_bytes(self.peak)}, "
                    f"now {format_bytes(self.current)} ({len(self.records)} saved tensors)")
        notes: Dict[str, int] = {}
        for record in self.records:
            if record.note:
                notes[record.note] = notes.get(record.note, 0) + 1
        for note, count in notes.items():
            text.append(f"{count} saved tensor{'s' if count > 1 else ''} not encoded: {note}")
        if self.measured_peak is not None:
            text.append(f"measured peak of allocated memory {format_bytes(self.measured_peak)}"
                        + self.split_text())
        return "\n".join(text)

    def split_text(self) -> str:
        """The measured peak's parts, as ``led.table()`` prints them ("" if not measured)."""
        split = self.peak_split
        if not split or "peak" not in split:
            return ""
        return (f": saved activations {format_bytes(split['saved'])}, gradients "
                f"{format_bytes(split['gradients'])}, transient workspaces "
                f"{format_bytes(split['transient'])}; reached at {split['where']}")

    def timeline_png(self, path: str, title: str = "memory through one step",
                     modules: int = 6) -> str:
        """Draw ``timeline`` as a PNG: bytes alive at every event of the step, stacked as
        saved activations per module (the ``modules`` largest, the rest together), gradients
        and transient workspaces, with the peak between events as a line. Needs matplotlib
        (``hookgrad[demo]``); ``memory.timeline_png`` puts several ledgers on one figure."""
        from ._timeline import timeline_png  # needs matplotlib, only when asked

        return timeline_png({title: self}, path, modules=modules)

    def to_json(self, **kwargs) -> str:
        return json.dumps({"total": self.total, "peak": self.peak, "current": self.current,
                           "measured_peak": self.measured_peak, "peak_split": self.peak_split,
                           "modules": self.by_module(),
                           "records": [r.as_dict() for r in self.records]}, **kwargs)

    def __repr__(self) -> str:
        return (f"<Ledger {len(self.records)} saved tensors, total {format_bytes(self.total)}, "
                f"peak {format_bytes(self.peak)}>")


def _module_label(record: Record) -> str:
    """The name a record is filed under: its module's, ``(Type)`` for the root."""
    if record.module is None:
        return "(no module)"
    return record.module or f"({record.module_type})"


def ledger(model: Any = None, framework: Optional[str] = None, measure: Optional[bool] = None,
           device: Any = None) -> Ledger:
    """Record every tensor saved for backward while active (on a torch model: pass ``model`` or
    ``framework="torch"``)::

        with memory.ledger() as led:
            loss = model(x).sum()
            loss.backward()
        print(led.table())        # per module, largest first
        led.total, led.peak       # bytes kept alive by saving (parameters not counted)

    Compose it with savers and policies in either order; it records what they hold. On torch it
    also measures the block's real peak of allocated memory (``led.measured_peak``; turn off
    with ``measure=False``: on CPU it runs torch's profiler); ``device`` picks the GPU to ask.
    """
    framework = framework or (backend_for(model).name if model is not None else "hookgrad")
    if device is None and model is not None:
        device = backend_for(framework=framework).device_of(model)
    return Ledger(framework, measure, device)
