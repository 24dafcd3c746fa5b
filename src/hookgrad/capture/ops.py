"""Recording functional calls inside ``forward``: ``capture(model, ops=["matmul", "softmax"])``.

Module hooks only see module boundaries; a ``softmax`` computed inside an attention's
``forward`` is invisible to them. The one public place where every function call can be seen
is ``TorchFunctionMode`` (``hookgrad.overrides``'s, or torch's own ``torch.overrides`` one for
a torch model), so an ops capture enters such a mode for the length of the block and keeps a
stack of the modules whose ``forward`` is running (a forward pre-hook pushes, a forward hook
with ``always_call=True`` pops). A call whose name was asked for is recorded under the
innermost running module: ``"encoder.attn/matmul:1.output"`` is the output of the second
``matmul`` called by ``encoder.attn``'s ``forward``, and its ``Record.call`` is which call of
``encoder.attn`` it was, so it lines up with ``cap["encoder.attn.output"]``.

Names are matched the way they are spelled in torch, whatever the spelling of the call:
``torch.softmax``, ``F.softmax`` and ``x.softmax`` are all ``"softmax"``; ``a @ b`` is
``"matmul"`` (torch's mode sees it as ``Tensor.matmul``); operators are the functions torch
names them after (``a + b`` is ``"add"``, ``a += b`` is ``"add_"``, ``a / b`` is ``"div"``).

Calls made while the mode handles a call (the op's own implementation, or this capture copying
tensors) are not seen again: the mode is off the stack while its handler runs, as in torch, and
the capture's own copying runs with every mode off the stack (``Backend.unseen``), so module
records never show up as op records and a user's own mode never sees them.
"""
from __future__ import annotations

import fnmatch
import warnings
from collections.abc import Mapping
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from ._backend import tensors_in
from .storage import KINDS, close_names_error

OpSpecs = Union[None, str, Sequence[str], Mapping]

# operator methods and the torch function each one is named after; "__r<op>__" is the same
# function with the operands swapped, "__i<op>__" its in-place form ("add_")
_OPERATORS = {"add": "add", "sub": "sub", "mul": "mul", "matmul": "matmul", "truediv": "div",
              "div": "div", "floordiv": "floor_divide", "mod": "remainder", "pow": "pow",
              "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
              "lshift": "bitwise_left_shift", "rshift": "bitwise_right_shift"}
_UNARY = {"neg": "neg", "pos": "positive", "abs": "abs", "invert": "bitwise_not"}
# how people qualify a torch function in code; the qualification does not restrict the match
_PREFIXES = ("torch.nn.functional.", "nn.functional.", "torch.Tensor.", "torch.", "Tensor.",
             "F.")
OP_KINDS = ("input", "output", "grad_output")


def op_name(func: Callable) -> str:
    """The name ``func`` is asked for by: its ``__name__``, operators renamed to their
    function (``__matmul__``/``__rmatmul__`` -> ``matmul``, ``__iadd__`` -> ``add_``)."""
    return canonical(getattr(func, "__name__", ""))


def canonical(name: str) -> str:
    """A user's or a function's spelling of an op, reduced to the one name matched."""
    for prefix in _PREFIXES:
        if name.startswith(prefix):
            name = name[len(prefix):]
            break
    if not (name.startswith("__") and name.endswith("__") and len(name) > 4):
        return name
    bare = name[2:-2]
    if bare in _OPERATORS:
        return _OPERATORS[bare]
    if bare in _UNARY:
        return _UNARY[bare]
    if bare[:1] == "r" and bare[1:] in _OPERATORS:
        return _OPERATORS[bare[1:]]
    if bare[:1] == "i" and bare[1:] in _OPERATORS:
        return _OPERATORS[bare[1:]] + "_"
    return bare  # __getitem__ -> getitem


def known_op_names(*namespaces: Any) -> List[str]:
    """Every name a call can be recorded under: the public callables of the framework's
    top-level namespace, ``nn.functional`` and ``Tensor`` (classes excluded), plus operators."""
    names = set(_OPERATORS.values()) | set(_UNARY.values())
    names |= {name + "_" for name in _OPERATORS.values()}
    with warnings.catch_warnings():  # some attributes warn on access (deprecations)
        warnings.simplefilter("ignore")
        for namespace in namespaces:
            for name in dir(namespace):
                if name.startswith("_"):
                    if name.startswith("__") and name.endswith("__"):
                        names.add(canonical(name))
                    continue
                value = getattr(namespace, name, None)
                if callable(value) and not isinstance(value, type):
                    names.add(name)
    return sorted(names)


def parse_ops(ops: OpSpecs, kinds: Sequence[str], known: Callable[[], List[str]],
              check_module: Callable[[str], Any]) -> List[Tuple[str, str, tuple]]:
    """``(module glob or "", op name, kinds)`` per spec. A spec is ``"softmax"`` (anywhere in
    the model) or ``"blocks.*.attn/softmax"`` (only in modules the glob matches). ``kinds`` is
    capture's ``kinds`` (``grad_input`` dropped: an op has no module boundary to see it at),
    or per spec when ``ops`` is a dict."""
    if isinstance(ops, str):
        items = [(ops, None)]
    elif isinstance(ops, Mapping):
        items = list(ops.items())
    else:
        items = [(spec, None) for spec in ops]
    for kind in kinds:
        if kind not in KINDS:
            raise ValueError(f"unknown kind {kind!r}; kinds are {', '.join(KINDS)}")
    names: Optional[set] = None
    specs = []
    for spec, spec_kinds in items:
        if not isinstance(spec, str):
            raise TypeError(f"ops are names like 'softmax' or 'attn/matmul', got "
                            f"{type(spec).__name__}")
        if spec_kinds is None:
            chosen = tuple(kind for kind in kinds if kind != "grad_input")
        else:
            chosen = (spec_kinds,) if isinstance(spec_kinds, str) else tuple(spec_kinds)
            for kind in chosen:
                if kind not in OP_KINDS:
                    extra = (" (an op has no module boundary: ask for its inputs' gradients "
                             "at the module that computes them)") if kind in KINDS else ""
                    raise ValueError(f"unknown kind {kind!r} for op {spec!r}; ops record "
                                     f"{', '.join(OP_KINDS)}{extra}")
        module, _, name = spec.rpartition("/")
        name = canonical(name)
        if names is None:
            names = set(known())
        if name not in names:
            raise close_names_error("op", name, sorted(names))
        if module:
            check_module(module)
        specs.append((module, name, chosen))
    return specs


class _Frame:
    """One running ``forward``: the module's name, which call of it this is, and how many
    times each recorded op was called in it so far."""

    __slots__ = ("module", "name", "call", "counts")

    def __init__(self, module: Any, name: str, call: int) -> None:
        self.module, self.name, self.call = module, name, call
        self.counts: Dict[str, int] = {}


class OpRecorder:
    """The module stack and the function mode of one capture; ``owner`` is the capture, asked
    to store tensors (``_store``), for the step, and to keep the gradient hooks' handles."""

    def __init__(self, owner: Any, root: Any, specs: List[Tuple[str, str, tuple]]) -> None:
        self.owner = owner
        self.root = root
        self.specs = specs
        self.names = {name for _, name, _ in specs}
        self.frames: List[_Frame] = []
        self.handles: list = []
        self.mode: Any = None
        self._kinds: Dict[Tuple[str, str], tuple] = {}
        self._module_calls: Dict[str, Tuple[int, int]] = {}

    # -- lifecycle -------------------------------------------------------------------------
    def start(self, mode_base: type) -> None:
        for name, module in self.root.named_modules():
            # registered after the capture's step hook on the root: a frame opened by a new
            # forward belongs to the new step
            self.handles.append(module.register_forward_pre_hook(
                lambda mod, args, name=name: self._enter(mod, name)))
            self.handles.append(module.register_forward_hook(
                lambda mod, args, output: self._leave(mod), always_call=True))
        self.mode = _mode_class(mode_base)(self)
        self.mode.__enter__()

    def stop(self) -> None:
        if self.mode is not None:
            mode, self.mode = self.mode, None
            mode.__exit__(None, None, None)
        for handle in self.handles:
            handle.remove()
        self.handles.clear()
        self.frames.clear()

    # -- the module stack ------------------------------------------------------------------
    def _enter(self, module: Any, name: str) -> None:
        step = self.owner.current_step
        last_step, calls = self._module_calls.get(name, (step, 0))
        if last_step != step:
            calls = 0
        self._module_calls[name] = (step, calls + 1)
        self.frames.append(_Frame(module, name, calls))

    def _leave(self, module: Any) -> None:
        if self.frames and self.frames[-1].module is module:
            self.frames.pop()

    # -- recording a call ------------------------------------------------------------------
    def wanted(self, name: str) -> tuple:
        """The kinds to record for op ``name`` called in the innermost running module."""
        if name not in self.names or not self.frames:
            return ()
        module = self.frames[-1].name
        kinds = self._kinds.get((module, name))
        if kinds is None:
            kinds = ()
            for glob, spec_name, spec_kinds in self.specs:
                if spec_name == name and (not glob or (fnmatch.fnmatchcase(module, glob)
                                                       if module else glob == "")):
                    kinds += tuple(kind for kind in spec_kinds if kind not in kinds)
            self._kinds[(module, name)] = kinds
        return kinds

    def record(self, func: Callable, name: str, kinds: tuple, args: tuple,
               kwargs: dict) -> Any:
        owner, frame = self.owner, self.frames[-1]
        index = frame.counts.get(name, 0)
        frame.counts[name] = index + 1
        site = f"{frame.name}/{name}:{index}" if frame.name else f"{name}:{index}"
        call, step, backend = frame.call, owner.current_step, owner._backend
        if "input" in kinds:  # copied before the op runs: an in-place op may change them
            found = tensors_in(list(args), backend) + tensors_in(kwargs, backend)
            if len(found) == 1:
                found = [("", found[0][1])]
            for position, tensor in found:
                owner._store(site, "input", position, call, step, tensor)
        output = func(*args, **kwargs)
        tensors = tensors_in(output, backend)
        if len(tensors) == 1:
            tensors = [("", tensors[0][1])]
        if "output" in kinds:
            for position, tensor in tensors:
                owner._store(site, "output", position, call, step, tensor)
        if "grad_output" in kinds:
            with backend.unseen():
                for position, tensor in tensors:
                    if tensor.requires_grad:
                        owner._tensor_handles.append(tensor.register_hook(
                            owner._grad_hook(site, position, call, step)))
        return output


_MODE_CLASSES: Dict[type, type] = {}


def _mode_class(base: type) -> type:
    """The recording mode as a subclass of ``base`` (hookgrad's or torch's
    ``TorchFunctionMode``), built once per base."""
    if base not in _MODE_CLASSES:
        class CaptureOpsMode(base):  # type: ignore[misc, valid-type]
            def __init__(self, recorder: OpRecorder) -> None:
                super().__init__()
                self.recorder = recorder

            def __torch_function__(self, func, types, args=(), kwargs=None):
                kwargs = kwargs or {}
                name = op_name(func)
                kinds = self.recorder.wanted(name)
                if kinds:
                    return self.recorder.record(func, name, kinds, args, kwargs)
                return func(*args, **kwargs)

        _MODE_CLASSES[base] = CaptureOpsMode
    return _MODE_CLASSES[base]
