"""RemovableHandle: the one way every hook in hookgrad is registered and removed."""
from __future__ import annotations

import itertools
import weakref
from collections import OrderedDict
from typing import Any, Callable


class RemovableHandle:
    """Removes a hook from the dicts it was added to.

    Holds only weak references to those dicts, so a handle never keeps a graph or a module alive.
    ``remove()`` may be called any number of times; ``with handle:`` removes on exit.
    """

    _counter = itertools.count()

    def __init__(self, hooks_dict: Any, *, extra_dict: Any = None) -> None:
        # Ids only grow, so a removed hook's id is never handed out again.
        self.id = next(RemovableHandle._counter)
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        if extra_dict is None:
            also_in = ()
        elif isinstance(extra_dict, list):
            also_in = extra_dict
        else:
            also_in = (extra_dict,)
        self.extra_dict_ref: tuple = tuple(map(weakref.ref, also_in))

    def remove(self) -> None:
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            store = ref()
            if store is not None:
                store.pop(self.id, None)

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc) -> None:
        self.remove()

    def __repr__(self) -> str:
        return f"<RemovableHandle id={self.id}>"



def add_hook(hooks: "OrderedDict[int, Callable]", hook: Callable, *, prepend: bool = False,
             extra_dict: Any = None) -> RemovableHandle:
    """Register ``hook`` in ``hooks`` and return its handle; ``prepend`` puts it first."""
    handle = RemovableHandle(hooks, extra_dict=extra_dict)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


