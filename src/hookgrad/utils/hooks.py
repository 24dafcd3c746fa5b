"""RemovableHandle: the one way every hook in hookgrad is registered and removed."""
from __future__ import annotations

import weakref
from collections import OrderedDict
from typing import Any, Callable


class RemovableHandle:
    """Removes a hook from the dicts it was added to.

    Holds only weak references to those dicts, so a handle never keeps a graph or a module alive.
    ``remove()`` may be called any number of times; ``with handle:`` removes on exit.
    """

    next_id: int = 0

    def __init__(self, hooks_dict: Any, *, extra_dict: Any = None) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        self.extra_dict_ref: tuple = ()
        if extra_dict is not None:
            extras = extra_dict if isinstance(extra_dict, list) else [extra_dict]
            self.extra_dict_ref = tuple(weakref.ref(d) for d in extras)

    def remove(self) -> None:
        hooks_dict = self.hooks_dict_ref()
        if hooks_dict is not None and self.id in hooks_dict:
            del hooks_dict[self.id]
        for ref in self.extra_dict_ref:
            extra = ref()
            if extra is not None and self.id in extra:
                del extra[self.id]

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


