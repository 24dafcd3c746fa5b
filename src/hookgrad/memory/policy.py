"""policy({...}): a saver per module, chosen by name glob or type, in one context manager.

While active, the shared module tracker knows the running modules; the policy's pack hook asks
for the innermost one and walks outwards to the first module that some rule matches (rules are
tried in order: the first match wins). ``None`` stores the tensor as it is. ``recompute()``
checkpoints the matching modules instead: their ``forward`` is wrapped with
``utils.checkpoint`` while the policy is active and restored on exit::

    rules = {"features.*": memory.quantize(8), nn.Linear: memory.offload(), "head": None}
    with memory.policy(rules):
        loss = model(x).sum()
    loss.backward()

A key that matches no module of the model(s) run inside the block (or of ``model``) is an
error when the block ends: a ``KeyError`` naming the closest module names or types.
``{"": recompute()}`` checkpoints the model itself, with or without ``model=``.

On a torch model the same rules run through torch's hooks (``policy(rules, model=model)``, or
``framework="torch"``; a rule keyed by a torch module type also says so), and ``recompute()``
uses ``torch.utils.checkpoint.checkpoint(use_reentrant=False)``.
"""
from __future__ import annotations

import fnmatch
import sys
import weakref
from typing import Any, Iterable, List, Mapping, Optional, Tuple, Union

from ._backend import Backend, backend_for, backend_of_tensor, framework_of_rules
from ..capture.storage import close_names_error
from ._chunked import check_chunkable, chunked_forward
from ._modules import tracker_for
from ._packed import unpack_any
from .savers.base import Saver

_NO_MATCH = object()


class recompute:
    """A policy entry: don't save the module's activations, run its forward again in backward
    (``utils.checkpoint``). ``segments=k`` on a ``Sequential`` checkpoints its children in ``k``
    runs instead (like ``checkpoint_sequential``: the last run is not checkpointed).
    ``chunks=k`` also runs the module on ``k`` slices of its batch, one after another, in
    forward and in backward's rerun, so that only one slice's intermediate results are alive
    at a time: the step's peak falls, not only the saved bytes (``_chunked``; for modules that
    take one batched tensor and treat each sample on its own)."""

    def __init__(self, segments: Optional[int] = None, use_reentrant: bool = False,
                 chunks: Optional[int] = None):
        if segments is not None and segments < 1:
            raise ValueError(f"segments must be >= 1, got {segments}")
        if chunks is not None and (chunks < 1 or segments is not None):
            raise ValueError(f"chunks must be >= 1 and not combined with segments, got "
                             f"chunks={chunks}, segments={segments}")
        self.segments = segments
        self.use_reentrant = use_reentrant
        self.chunks = chunks

    def __repr__(self) -> str:
        if self.chunks is not None:
            return f"recompute(chunks={self.chunks})"
        return "recompute()" if self.segments is None else f"recompute(segments={self.segments})"


Entry = Union[Saver, recompute, None]
Key = Union[str, type]


class _Rerun:
    """Counts functions running under a checkpoint: modules they call in backward's rerun
    look like new roots to the tracker and must not be wrapped again."""

    def __init__(self):
        self.depth = 0

    def wrap(self, function):
        def run(*args, **kwargs):
            self.depth += 1
            try:
                return function(*args, **kwargs)
            finally:
                self.depth -= 1
        return run


def _checkpointed(original, entry: recompute, name: str, backend: Backend, rerun: _Rerun):
    function = rerun.wrap(original)

    def forward(*args, **kwargs):
        # checkpoint saves the inputs through saved-tensor hooks: a ledger sees them
        return backend.checkpoint(function, *args, use_reentrant=entry.use_reentrant, **kwargs)

    return forward


def _segmented(module, entry: recompute, name: str, backend: Backend, rerun: _Rerun):
    checkpoint = backend.checkpoint
    children = list(module.children())
    count = min(entry.segments, len(children)) or 1
    size = -(-len(children) // count)
    runs = [children[i:i + size] for i in range(0, len(children), size)]

    def run(layers):
        def apply(value):
            for layer in layers:
                value = layer(value)
            return value
        return rerun.wrap(apply)

    def forward(value):
        for index, layers in enumerate(runs):
            if index == len(runs) - 1:
                value = run(layers)(value)
            else:
                value = checkpoint(run(layers), value, use_reentrant=entry.use_reentrant)
        return value

    return forward


class Policy:
    """Rules ``{key: entry}``: ``key`` a module name glob (``"features.*"``, matched against
    ``named_modules()`` names) or a module type; ``entry`` a saver, ``recompute()`` or ``None``."""

    def __init__(self, rules: Union[Mapping[Key, Entry], Iterable[Tuple[Key, Entry]]],
                 model: Any = None, framework: Optional[str] = None):
        items = list(rules.items()) if isinstance(rules, Mapping) else list(rules)
        for key, entry in items:
            if not isinstance(key, (str, type)):
                raise TypeError(f"policy keys are name globs or module types, got {key!r}")
            if entry is not None and not isinstance(entry, (Saver, recompute)):
                raise TypeError(f"policy entries are savers, recompute() or None, got {entry!r}")
        self.rules: List[Tuple[Key, Entry]] = items
        self.model = model
        if framework is None and model is None:
            framework = framework_of_rules(key for key, _ in items)
        self.backend = backend_for(model, framework=framework)
        self.framework = self.backend.name
        self._rerun = _Rerun()
        self._cache: dict = {}
        self._patched: list = []
        self._patched_roots: set = set()
        self._contexts: list = []
        self._tables: list = []
        self._recomputes = any(isinstance(e, recompute) for _, e in items)
        self._unmatched: List[Key] = []
        self._seen: dict = {}  # module name -> type name, of every module seen while active
        self._regions: list = []  # (root, end of its checkpoint) for a running torch root

    # -- every key must match something ---------------------------------------------------------
    def _key_matches(self, key: Key, module: Any, name: str) -> bool:
        if isinstance(key, str):
            return fnmatch.fnmatchcase(name, key)
        return isinstance(module, key)

    def _learn(self, modules: Iterable[Tuple[str, Any]]) -> None:
        """Strike off the keys some of ``modules`` match; remember the names for the error."""
        for name, module in modules:
            self._seen.setdefault(name, type(module).__name__)
            if self._unmatched:
                self._unmatched = [key for key in self._unmatched
                                   if not self._key_matches(key, module, name)]

    def _check_keys(self) -> None:
        """A key that matched no module would do nothing without a word: say so, with the
        names (or types) closest to it, as ``capture`` does."""
        if not self._unmatched or not self._seen:
            return  # no module ran (nothing to match against)
        key = self._unmatched[0]
        self._unmatched = []
        if isinstance(key, str):
            raise close_names_error("policy key: module", key,
                                    [name for name in self._seen if name])
        raise close_names_error("policy key: module type", key.__name__,
                                sorted(set(self._seen.values())))

    # -- matching ----------------------------------------------------------------------------
    def entry_for(self, module: Any, name: str) -> Any:
        """The entry of the first rule matching this module itself, or a no-match marker."""
        for key, entry in self.rules:
            if isinstance(key, str):
                if fnmatch.fnmatchcase(name, key):
                    return entry
            elif isinstance(module, key):
                return entry
        return _NO_MATCH

    def resolve(self, frames: list) -> Entry:
        """The entry for a tensor saved while ``frames`` run: innermost module outwards."""
        cache = self._cache
        for module, name in reversed(frames):
            key = (id(module), name)
            entry = cache.get(key, _NO_MATCH)
            if entry is _NO_MATCH:
                entry = cache[key] = self.entry_for(module, name)
            if entry is not _NO_MATCH:
                return entry
        return None

    # -- context -----------------------------------------------------------------------------
    def __enter__(self) -> "Policy":
        tracker_for(self.framework).acquire(self)
        context = self.backend.saved_tensors_hooks(self._pack, unpack_any)
        context.__enter__()
        self._contexts.append(context)
        # one buffer saved under two rules (a ReLU's output, saved again by the next layer) is
        # stored once: the savers share one table of what is stored while the policy is active
        shared: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self._tables = []
        for saver in {id(e): e for _, e in self.rules if isinstance(e, Saver)}.values():
            self._tables.append((saver, saver._stored))
            saver._stored = shared
        self._unmatched = [key for key, _ in self.rules]
        self._seen = {}
        if self.model is not None:
            try:
                self._learn(self.model.named_modules())
                self._patch(self.model)
            except BaseException:  # a module refused (recompute(chunks=...)): undo the above
                self.__exit__(*sys.exc_info())
                raise
        return self

    def __exit__(self, *exc) -> bool:
        try:
            self._restore()
            for saver, table in self._tables:
                saver._stored = table
        finally:
            self._contexts.pop().__exit__(*exc)
            tracker_for(self.framework).release(self)
            self._cache.clear()
            while self._regions:  # an error left a root's checkpoint open
                self._regions.pop()[1]()
        if exc[0] is None:
            self._check_keys()
        else:
            self._unmatched = []
        return False

    def enter(self, module, name: str, is_root: bool) -> None:
        if is_root and self._rerun.depth == 0:
            self._learn(module.named_modules())
        elif self._unmatched and name not in self._seen:
            self._learn(((name, module),))  # called from inside, not registered under the root
        if is_root:
            self._cache.clear()  # names are relative to the root being run
            # a checkpoint reruns submodules during backward, each seen as a root: never wrap
            # those (the rerun must save what the forward saved), nor anything but ``model``
            if (self._recomputes and self.model is None and self._rerun.depth == 0
                    and id(module) not in self._patched_roots):
                self._patch(module)
                self._checkpoint_running_root(module)

    def exit(self, module, name: str, is_root: bool) -> None:
        if is_root and self._regions and self._regions[-1][0] is module:
            self._regions.pop()[1]()

    def _checkpoint_running_root(self, root) -> None:
        """``{"": recompute()}`` without ``model=``: the root is already being called. hookgrad
        has not looked up its forward yet (``_patch`` wrapped it); torch has, so the root's run
        becomes a checkpoint region that its forward hook ends."""
        entry = self.entry_for(root, "")
        if not isinstance(entry, recompute) or self.backend.wraps_running_forward:
            return
        if entry.segments is not None or entry.chunks is not None:
            raise ValueError(f"{entry!r} on the model itself needs the model: pass "
                             "policy(rules, model=model)")
        args = tracker_for(self.framework).state.root_args
        finish = self.backend.checkpoint_running(self._rerun.wrap(root.forward), args)
        if finish is None:  # pragma: no cover - a torch without the generator
            raise RuntimeError("recompute() on the model itself needs the model on this torch: "
                               "pass policy(rules, model=model)")
        self._regions.append((root, finish))

    def _patch(self, root) -> None:
        self._patched_roots.add(id(root))
        done: List[str] = []
        for name, module in root.named_modules():
            if any(name == d or name.startswith(d + ".") for d in done):
                continue  # inside a module that is recomputed already
            entry = self.entry_for(module, name)
            if not isinstance(entry, recompute) or (
                    module is root and self.model is None
                    and not self.backend.wraps_running_forward):
                continue  # torch fetched the running root's forward: see below
            previous = module.__dict__.get("forward")
            if entry.chunks is not None:
                check_chunkable(module, name)
                wrapped = chunked_forward(self.backend.lib, self._rerun.wrap(module.forward),
                                          module, entry.chunks, name)
            elif entry.segments is not None and hasattr(module, "__getitem__"):
                wrapped = _segmented(module, entry, name, self.backend, self._rerun)
            else:
                wrapped = _checkpointed(module.forward, entry, name, self.backend, self._rerun)
            object.__setattr__(module, "forward", wrapped)
            self._patched.append((module, previous))
            done.append(name)

    def _restore(self) -> None:
        for module, previous in reversed(self._patched):
            if previous is None:
                module.__dict__.pop("forward", None)
            else:
                object.__setattr__(module, "forward", previous)
        self._patched = []
        self._patched_roots.clear()

    # -- the pack hook -----------------------------------------------------------------------
    def _pack(self, value: Any) -> Any:
        frames = tracker_for(self.framework).frames()
        entry = self.resolve(frames) if frames else None
        if isinstance(entry, Saver):
            return entry.pack(value)
        backend = backend_of_tensor(value)
        if backend is not None:
            return backend.as_packable(value, backend.current_info())
        return value

    def __repr__(self) -> str:
        lines = ["policy({"]
        for key, entry in self.rules:
            shown = repr(key) if isinstance(key, str) else key.__name__
            lines.append(f"    {shown}: {entry!r},")
        lines.append("})")
        return "\n".join(lines)


def policy(rules: Union[Mapping[Key, Entry], Iterable[Tuple[Key, Entry]]],
           model: Any = None, framework: Optional[str] = None) -> Policy:
    """A saver (or ``recompute()``, or ``None``) per module by name glob or type; first match
    wins, the innermost running module first. Pass ``model`` to wrap recomputed modules on
    entry (needed when the rule matches the model itself); otherwise they are wrapped when the
    model is first called inside the context. The framework is the model's (a torch model:
    torch's hooks), else ``framework`` ("hookgrad" by default)."""
    return Policy(rules, model, framework)
