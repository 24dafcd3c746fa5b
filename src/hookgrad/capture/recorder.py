"""``capture``: record module inputs, outputs and their gradients with public hooks only.

Per selected module: a forward pre-hook (counts the call, copies the inputs before ``forward``
can modify them in place), a forward hook (copies the outputs and puts a tensor hook on each
output that needs a gradient), and, for ``grad_input``, a full backward hook. The output tensor
hooks see ``grad_output`` and tell the full backward hook which call it belongs to: the engine
runs nodes newest first, so a call's ``grad_input`` arrives right after its own ``grad_output``.
A forward pre-hook on the root model advances the step. Every handle is removed on exit.

The same code serves hookgrad and PyTorch models: both have these hooks under the same names, and
what differs (which objects are tensors, how a tensor becomes a NumPy copy, DDP's wrapper) is
asked of the backend chosen by the model's type (``_backend.py``).
"""
from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from ._backend import Backend, module_backend, tensors_in
from .disk import DiskWriter, PathLike, read_array, read_index
from .disk import load as load_run
from .ops import OpRecorder, OpSpecs, known_op_names, parse_ops
from .storage import KINDS, CaptureKeyError, KeyStats, Reader, Record, Stats, close_names_error

Module = Any  # an nn.Module of hookgrad or of torch
Tensor = Any  # a Tensor of the same framework
Selector = Union[str, "re.Pattern[str]", type, Module]
Layers = Union[None, Selector, Sequence[Selector], Mapping]


class _EveryLeaf:
    """The default of ``layers``: every leaf module, or no module when ``ops`` is given."""

    def __repr__(self) -> str:
        return "<every leaf module, or none when ops are given>"


EVERY_LEAF: Any = _EveryLeaf()


# -- choosing modules ----------------------------------------------------------------------------
def _matches(selector: Selector, name: str, module: Module) -> bool:
    # names and patterns select submodules; the root (named "") only by "" or by type
    if isinstance(selector, str):
        return name == selector if not name else fnmatch.fnmatchcase(name, selector)
    if isinstance(selector, re.Pattern):
        return bool(name) and selector.fullmatch(name) is not None
    if isinstance(selector, type):
        return isinstance(module, selector)
    return module is selector


def _is_selector(selector: Any, backend: Backend) -> bool:
    return isinstance(selector, (str, re.Pattern, type)) or backend.is_module(selector)


def select_modules(model: Module, layers: Iterable[Selector]) -> List[Tuple[str, Module, Any]]:
    """``(name, module, selector)`` for every module a selector matches, first name first; a
    selector that matches nothing is a ``KeyError`` listing the closest module names.

    ``model`` is a hookgrad or torch ``nn.Module``. A model wrapped in torch's
    ``DistributedDataParallel`` (or ``DataParallel``) is named as the model it wraps (``"fc"``,
    not ``"module.fc"``); names written with the ``module.`` prefix are accepted too."""
    backend = module_backend(model, "select_modules")
    root = backend.naming_root(model)
    prefix = backend.wrapper_prefix(model)
    named = list(root.named_modules(remove_duplicate=False))
    chosen: Dict[int, Tuple[str, Module, Any]] = {}
    for selector in layers:
        if not _is_selector(selector, backend):
            raise TypeError("layers are module names (globs), compiled regexes, Module types or "
                            f"modules, got {type(selector).__name__}")
        target = root if selector is model else selector
        hits = [(name, module) for name, module in named if _matches(target, name, module)]
        if not hits and prefix and isinstance(selector, str) and selector.startswith(prefix):
            target = selector[len(prefix):]
            hits = [(name, module) for name, module in named if _matches(target, name, module)]
        if not hits:
            if isinstance(selector, type):
                present = sorted({type(module).__name__ for _, module in named})
                raise close_names_error("module type", selector.__name__, present)
            if backend.is_module(selector):
                raise CaptureKeyError("the module given is not part of the model")
            wanted = selector if isinstance(selector, str) else selector.pattern
            raise close_names_error("module", wanted, [name for name, _ in named if name])
        for name, module in hits:
            chosen.setdefault(id(module), (name, module, selector))
    return list(chosen.values())


def _layers_and_kinds(layers: Layers, kinds: Sequence[str],
                      backend: Backend) -> List[Tuple[Selector, tuple]]:
    def check(values: Any) -> tuple:
        values = (values,) if isinstance(values, str) else tuple(values)
        for kind in values:
            if kind not in KINDS:
                raise ValueError(f"unknown kind {kind!r}; kinds are {', '.join(KINDS)}")
        return values

    if layers is None:
        return [("*", check(kinds))]
    if isinstance(layers, Mapping):
        return [(selector, check(value)) for selector, value in layers.items()]
    if _is_selector(layers, backend):
        layers = [layers]
    return [(selector, check(kinds)) for selector in layers]


# -- flattening module values --------------------------------------------------------------------
def _positions(value: tuple) -> List[Tuple[str, Any]]:
    """Positions of a tuple of module arguments (or gradients): none for a single one."""
    if len(value) == 1:
        return [("", value[0])]
    return [(str(index), item) for index, item in enumerate(value)]


class _Selected:
    """The per-module state: its name, kinds, call counter and handles."""

    __slots__ = ("name", "module", "kinds", "step", "calls", "open_calls", "backward_call",
                 "handles")

    def __init__(self, name: str, module: Module, kinds: tuple) -> None:
        self.name, self.module, self.kinds = name, module, kinds
        self.step = -1
        self.calls = 0
        self.open_calls: List[int] = []
        self.backward_call: Optional[Tuple[int, int]] = None
        self.handles: list = []


class capture(Reader):
    """Record what selected modules receive and return, and the gradients flowing through them.

    ``with capture(model, layers=["conv1", "blocks.*.attn"], kinds=("output", "grad_output"))
    as cap:`` then run forward/backward as usual; ``cap["conv1.output"]`` is a list of NumPy
    copies, one per call (ordered by step, then call), ``cap.keys()``, ``print(cap.summary())``.

    ``layers``: names with globs (``fnmatch``, ``*`` also crosses dots), compiled regexes (full
    match), Module types, modules, or a dict ``{selector: kinds}``; ``None`` selects every leaf
    module, as does the default unless ``ops`` is given. Globs and regexes match submodules
    only; ``""`` (or the model itself) is the root, whose keys are the bare kinds
    (``"output"``). ``kinds``: any of ``input``, ``output``, ``grad_input``, ``grad_output``
    (as torch's full backward hooks define them: ``grad_input`` has zeros for inputs that need
    no gradient; ``None`` gradients are not recorded). Keys are
    ``<module>.<kind>``, with ``.<position>`` appended when a module takes or returns several
    tensors. ``to="run1/"`` streams each record to disk as it arrives and keeps no array in
    memory; read it back with ``capture.load``.
    Steps advance at each forward of ``model`` (``auto_step``) and with ``cap.step()``.

    ``ops=["matmul", "softmax"]`` also records functional calls made inside ``forward``
    (``torch.softmax``, ``F.softmax`` and ``x.softmax`` are all ``"softmax"``; ``a @ b`` is
    ``"matmul"``), through a ``TorchFunctionMode`` active for the block, under the innermost
    running module: ``"attn/matmul:1.output"`` is the second ``matmul`` in ``attn``'s
    ``forward``, with ``Record.call`` the call of ``attn``. ``"attn/softmax"`` (a module glob,
    then ``/``) records only inside those modules; a dict ``{op: kinds}`` chooses kinds per op
    (``input``, ``output``, ``grad_output``). With ``ops`` and no ``layers``, no module is
    recorded. Without ``ops`` no mode is entered (see ``ops.py``).

    ``model`` may be a PyTorch ``nn.Module`` (also one wrapped in ``DistributedDataParallel``,
    named as the model it wraps): the same torch hooks are used, and each tensor is detached and
    copied to the CPU by torch before it becomes a NumPy array. bfloat16 (and float8, complex32),
    which NumPy lacks, are stored upcast to float32 (complex64), exactly, with the tensor's dtype
    kept in ``Record.source_dtype``; ``load(path, framework="torch")`` gives them back as torch
    tensors of that dtype.
    """

    load = staticmethod(load_run)

    def __init__(self, model: Module, layers: Layers = EVERY_LEAF,
                 kinds: Sequence[str] = KINDS, to: Optional[PathLike] = None, *,
                 ops: OpSpecs = None, auto_step: bool = True,
                 format: Optional[str] = None,  # noqa: A002
                 overwrite: bool = False) -> None:
        self._backend = module_backend(model, "capture")
        self.model = model
        self.auto_step = auto_step
        self._selected: List[_Selected] = []
        self._ops: Optional[OpRecorder] = None
        self._op_specs: list = []
        if ops is not None:
            backend = self._backend
            self._op_specs = parse_ops(
                ops, kinds, lambda: known_op_names(*backend.op_namespaces()),
                lambda glob: select_modules(model, [glob]))  # raises when nothing matches
        if layers is EVERY_LEAF:
            layers = [] if ops is not None else None
        chosen: Dict[int, _Selected] = {}
        leaves_only = layers is None
        for selector, selector_kinds in _layers_and_kinds(layers, kinds, self._backend):
            for name, module, _ in select_modules(model, [selector]):
                if leaves_only and next(module.children(), None) is not None:
                    continue
                if id(module) in chosen:
                    entry = chosen[id(module)]
                    entry.kinds = entry.kinds + tuple(k for k in selector_kinds
                                                      if k not in entry.kinds)
                else:
                    chosen[id(module)] = _Selected(name, module, selector_kinds)
        self._selected = list(chosen.values())
        self._to = to
        self._format = format
        self._overwrite = overwrite
        self._writer: Optional[DiskWriter] = None
        self._memory: List[Tuple[Record, np.ndarray]] = []
        self._key_stats_live: Dict[str, KeyStats] = {}
        self._step = 0
        self._root_calls = 0
        self._root_handle: Any = None
        self._tensor_handles: list = []
        self._active = False

    # -- lifecycle -------------------------------------------------------------------------
    def __enter__(self) -> "capture":
        if self._active:
            raise RuntimeError("this capture is already active")
        if self._to is not None:
            meta = {"framework": self._backend.framework,
                    "modules": {entry.name: type(entry.module).__name__
                                for entry in self._selected},
                    "kinds": {entry.name: list(entry.kinds) for entry in self._selected}}
            if self._op_specs:
                meta["ops"] = {f"{glob}/{name}" if glob else name: list(kinds)
                               for glob, name, kinds in self._op_specs}
            self._writer = DiskWriter(self._to, meta, self._format, self._overwrite)
        self._active = True
        try:
            if self.auto_step:
                self._root_handle = self.model.register_forward_pre_hook(self._on_root_forward)
            for entry in self._selected:
                self._register(entry)
            if self._op_specs:
                self._ops = OpRecorder(self, self._backend.naming_root(self.model),
                                       self._op_specs)
                self._ops.start(self._backend.function_mode())
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def close(self) -> None:
        """Remove every hook this capture registered (also called on exit)."""
        self._active = False
        if self._ops is not None:
            self._ops.stop()
            self._ops = None
        if self._root_handle is not None:
            self._root_handle.remove()
            self._root_handle = None
        for entry in self._selected:
            for handle in entry.handles:
                handle.remove()
            entry.handles.clear()
            entry.open_calls.clear()
        for handle in self._tensor_handles:
            handle.remove()
        self._tensor_handles.clear()
        if self._writer is not None:
            self._writer.close()

    def _register(self, entry: _Selected) -> None:
        module = entry.module
        entry.handles.append(module.register_forward_pre_hook(
            lambda mod, args: self._on_forward_pre(entry, args)))
        entry.handles.append(module.register_forward_hook(
            lambda mod, args, output: self._on_forward(entry, output), always_call=True))
        if "grad_input" in entry.kinds:
            try:
                entry.handles.append(module.register_full_backward_hook(
                    lambda mod, grad_input, grad_output: self._on_grad_input(entry,
                                                                             grad_input)))
            except RuntimeError as error:
                raise RuntimeError(f"cannot capture {entry.name}.grad_input: {error} (the module "
                                   "has register_backward_hook hooks; drop 'grad_input' from "
                                   "kinds or remove them)") from error

    # -- steps -----------------------------------------------------------------------------
    def step(self) -> int:
        """Start a new step; returns its number. Records are tagged with the current step."""
        self._step += 1
        self._prune_tensor_handles()
        return self._step

    @property
    def current_step(self) -> int:
        return self._step

    def _on_root_forward(self, module: Module, args: tuple) -> None:
        if self._root_calls:
            self.step()
        self._root_calls += 1

    def _prune_tensor_handles(self) -> None:
        # a handle whose tensor's graph is gone can no longer fire: forget it (bounded memory)
        self._tensor_handles = [handle for handle in self._tensor_handles
                                if handle.hooks_dict_ref() is not None]

    def _call_index(self, entry: _Selected) -> int:
        if entry.step != self._step:
            entry.step, entry.calls = self._step, 0
        call = entry.calls
        entry.calls += 1
        return call

    # -- hooks -----------------------------------------------------------------------------
    def _on_forward_pre(self, entry: _Selected, args: tuple) -> None:
        call = self._call_index(entry)
        entry.open_calls.append(call)
        if "input" in entry.kinds:
            for position, value in _positions(args):
                for inner, tensor in tensors_in(value, self._backend, position):
                    self._add(entry, "input", inner, call, self._step, tensor)

    def _on_forward(self, entry: _Selected, output: Any) -> None:
        if not entry.open_calls:  # the pre-hook did not run (registered mid-call)
            return
        call = entry.open_calls.pop()
        tensors = tensors_in(output, self._backend)
        if len(tensors) == 1 and isinstance(output, (tuple, list)) and len(output) == 1:
            tensors = [("", tensors[0][1])]
        if "output" in entry.kinds:
            for position, tensor in tensors:
                self._add(entry, "output", position, call, self._step, tensor)
        if "grad_output" in entry.kinds or "grad_input" in entry.kinds:
            step = self._step
            with self._backend.unseen():  # not the model's work: no mode is shown it
                for position, tensor in tensors:
                    if tensor.requires_grad:
                        self._tensor_handles.append(tensor.register_hook(
                            self._grad_output_hook(entry, position, call, step)))

    def _grad_output_hook(self, entry: _Selected, position: str, call: int,
                          step: int) -> Callable[[Tensor], None]:
        def hook(grad: Tensor) -> None:
            if not self._active:
                return
            entry.backward_call = (step, call)
            if "grad_output" in entry.kinds:
                self._add(entry, "grad_output", position, call, step, grad)

        return hook

    def _on_grad_input(self, entry: _Selected, grad_input: tuple) -> None:
        if not self._active or all(grad is None for grad in grad_input):
            return
        step, call = entry.backward_call or (self._step, -1)
        for position, grad in _positions(grad_input):
            if self._backend.is_tensor(grad):
                self._add(entry, "grad_input", position, call, step, grad)

    # -- storing ---------------------------------------------------------------------------
    def _add(self, entry: _Selected, kind: str, position: str, call: int, step: int,
             tensor: Tensor) -> None:
        self._store(entry.name, kind, position, call, step, tensor)

    def _grad_hook(self, name: str, position: str, call: int,
                   step: int) -> Callable[[Tensor], None]:
        """A tensor hook recording ``grad_output`` of an op's output (see ``ops.py``)."""
        def hook(grad: Tensor) -> None:
            if self._active:
                self._store(name, "grad_output", position, call, step, grad)

        return hook

    def _store(self, name: str, kind: str, position: str, call: int, step: int,
               tensor: Tensor) -> None:
        # the copy runs ops (detach, to, ...): no mode, an ops capture's included, may see them
        with self._backend.unseen():
            array, source_dtype = self._backend.to_numpy(tensor)
        key = f"{name}.{kind}" if name else kind
        if position:
            key += "." + position
        record = Record(key, name, kind, position, call, step, array.shape,
                        array.dtype.name, Stats.of(array), source_dtype=source_dtype)
        stats = self._key_stats_live.get(key)
        if stats is None:
            stats = self._key_stats_live[key] = KeyStats(record.dtype, record.source_dtype)
        stats.add(record)
        if self._writer is not None:
            self._writer.write(record, array)
        else:
            self._memory.append((record, array))

    # -- reading (Reader) ------------------------------------------------------------------
    def _key_stats(self) -> Dict[str, KeyStats]:
        return self._key_stats_live

    def _records(self) -> List[Record]:
        if self._writer is not None:
            return read_index(self._writer.root)
        return [record for record, _ in self._memory]

    def _load(self, record: Record) -> np.ndarray:
        if self._writer is not None:
            return read_array(self._writer.root, record)
        for stored, array in self._memory:
            if stored is record:
                return array
        raise KeyError(record.key)

    def __getitem__(self, key: str) -> List[np.ndarray]:
        """One array per call of the module, ordered by step, then call."""
        if self._writer is not None:
            return super().__getitem__(key)
        self._check_key(key)
        pairs = [(record, array) for record, array in self._memory if record.key == key]
        pairs.sort(key=lambda pair: (pair[0].step, pair[0].call))
        return [array for _, array in pairs]

    @property
    def path(self) -> Optional[str]:
        return None if self._writer is None else str(self._writer.root)

    @property
    def framework(self) -> str:
        """``"hookgrad"`` or ``"torch"``: the framework of the model captured."""
        return self._backend.framework

    @property
    def modules(self) -> Dict[str, Module]:
        """The selected modules by name."""
        return {entry.name: entry.module for entry in self._selected}

    def __repr__(self) -> str:
        where = f"to {self.path!r}" if self._writer is not None else "in memory"
        state = "active" if self._active else "closed"
        ops = f" and {_count(len(self._op_specs), 'op')}" if self._op_specs else ""
        return (f"<capture of {_count(len(self._selected), 'module')}{ops} {where}, {state}, "
                f"{_count(len(self._key_stats_live), 'key')}, step {self._step}>")


def _count(number: int, noun: str) -> str:
    """"1 module", "2 modules"."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"
