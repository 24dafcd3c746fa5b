"""Which module is running: one pair of global module forward hooks, shared by every user.

The ledger, policies and the planner's profiler all need "the innermost module now" (to file a
saved tensor under it, or to choose its saver). They share one tracker: the first user installs
a global forward pre-hook and an ``always_call`` forward hook, the last one removes them, so
nothing is installed (and nothing costs) when no memory tool is active.

Names are those of ``root.named_modules()``, where the root is the module called with nothing
running (the model); a module called from inside that is not registered under the root is named
``<parent>.<ClassName>``.
"""
from __future__ import annotations

import threading
from typing import Any, List, Optional, Tuple

from ._backend import get_backend

_lock = threading.Lock()


class _Stack(threading.local):
    def __init__(self):
        self.frames: List[Tuple[Any, str]] = []  # (module, name), innermost last
        self.names: dict = {}  # id(module) -> name, for the current root
        self.root_args: tuple = ()  # what the current root was called with


class ModuleTracker:
    """The running modules of one framework (module hooks come from its backend)."""

    def __init__(self, framework: str = "hookgrad"):
        self.framework = framework
        self.users = 0
        self.handles: list = []
        self.listeners: List[Any] = []  # objects with enter(module, name, is_root), exit(...)
        self.state = _Stack()

    def acquire(self, listener: Any = None) -> None:
        with _lock:
            if self.users == 0:
                self.state.frames.clear()
                self.handles = get_backend(self.framework).module_hooks(self._pre, self._post)
            self.users += 1
            if listener is not None:
                self.listeners = self.listeners + [listener]

    def release(self, listener: Any = None) -> None:
        with _lock:
            if listener is not None:
                self.listeners = [x for x in self.listeners if x is not listener]
            self.users -= 1
            if self.users == 0:
                for handle in self.handles:
                    handle.remove()
                self.handles = []
                self.state.frames.clear()

    def current(self) -> Optional[Tuple[Any, str]]:
        frames = self.state.frames
        return frames[-1] if frames else None

    def frames(self) -> List[Tuple[Any, str]]:
        return self.state.frames

    def _pre(self, module, args) -> None:
        state = self.state
        is_root = not state.frames
        if is_root:
            state.names = {id(m): n for n, m in module.named_modules()}
            state.root_args = args
        name = state.names.get(id(module))
        if name is None:
            parent = state.frames[-1][1] if state.frames else ""
            name = f"{parent}.{type(module).__name__}" if parent else type(module).__name__
        state.frames.append((module, name))
        for listener in self.listeners:
            listener.enter(module, name, is_root)

    def _post(self, module, args, output) -> None:
        frames = self.state.frames
        for position in range(len(frames) - 1, -1, -1):
            if frames[position][0] is module:
                name = frames[position][1]
                del frames[position:]
                for listener in self.listeners:
                    listener.exit(module, name, not frames)
                if not frames:
                    # the root's arguments are read while it starts only; kept longer, a
                    # checkpoint's rerun (each module a root of its own) would keep the
                    # previous module's output, and through its grad_fn that module's whole
                    # recomputed graph and saved tensors, alive
                    self.state.root_args = ()
                break


_trackers = {"hookgrad": ModuleTracker("hookgrad"), "torch": ModuleTracker("torch")}
tracker = _trackers["hookgrad"]


def tracker_for(framework: str) -> ModuleTracker:
    """The shared tracker of ``framework`` ("hookgrad" or "torch")."""
    return _trackers[framework]


def display_name(name: Optional[str], module: Any = None) -> str:
    """How a module path prints: the root is shown by its class name."""
    if name is None:
        return "(no module)"
    if name == "":
        return f"({type(module).__name__})" if module is not None else "(root)"
    return name

