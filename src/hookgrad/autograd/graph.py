"""torch.autograd.graph's public names: saved-tensor hooks, Node, gradient edges, hooks over
several tensors, and a picture of the graph.

The machinery lives in ``node.py`` (nodes), ``saved.py`` (the single door) and ``tensor_hooks.py``;
this module is the public face tools are written against.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Iterable, NamedTuple, Optional

from .._dtype import legacy_type_name  # noqa: F401  (torch's Tensor.type() names, for messages)
from ..tensor import Tensor
from .node import AccumulateGrad, GraphRoot, Node  # noqa: F401
from .node import current_graph_task as _current_graph_task
from .saved import (SavedTensorInfo, compose_hooks, current_saved_tensor,  # noqa: F401
                    disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks,
                    storage_key)
from .tensor_hooks import grad_accumulator, grad_edge

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks",
           "register_multi_grad_hook", "GradientEdge", "get_gradient_edge", "Node",
           "increment_version", "current_saved_tensor", "SavedTensorInfo", "compose_hooks",
           "storage_key", "to_dot"]


def get_gradient_edge(tensor: Any) -> "GradientEdge":
    """torch.autograd.graph.get_gradient_edge: the (node, output_nr) a tensor's grad flows to."""
    edge = grad_edge(tensor)
    if edge is None:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does "
                           "not require gradients")
    return GradientEdge(*edge)


class GradientEdge(NamedTuple):
    """Where a tensor's gradient flows: input ``output_nr`` of ``node`` (torch's fields; the
    ownership token is torch's too and always ``None`` here)."""

    node: Node
    output_nr: int
    ownership_token: Optional[Any] = None


# ---------------------------------------------------------------------------------------------
# Hooks over several tensors, and a picture of the graph
# ---------------------------------------------------------------------------------------------
class _MultiHandle:
    """One handle for a hook registered on several tensors."""

    def __init__(self, handles):
        self.handles = tuple(handles)

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def register_multi_grad_hook(tensors: Iterable[Any], fn: Callable, *,
                             mode: str = "all") -> "_MultiHandle":
    """Call ``fn`` once per backward over several tensors.

    ``mode="all"``: ``fn(grads)`` after the gradients of all of ``tensors`` that this backward
    computes are ready; ``grads`` has ``None`` for the others. ``mode="any"``: ``fn(grad)`` with
    the first gradient computed. Returns one handle that removes every per-tensor hook.
    """
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    count = len(tensors)
    # only "all" needs the tensors at backward time; "any" keeps none, so a hook stored on a
    # tensor does not hold that tensor in a reference cycle
    watched = tensors if mode == "all" else ()
    lock = threading.Lock()
    state: dict = {}

    def expected_count(task) -> int:
        expected = 0
        for tensor in watched:
            edge = grad_edge(tensor) if tensor.requires_grad else None
            if edge is not None and edge[0] in task.nodes:
                expected += 1
        return expected

    def make_hook(index: int):
        def hook(grad):
            task = _current_graph_task()
            key = task.id if task is not None else None
            with lock:
                entry = state.setdefault(key, {"grads": [None] * count, "seen": 0,
                                               "done": False})
                if mode == "any":
                    if entry["done"]:
                        return None
                    entry["done"] = True
                    call_with = grad
                else:
                    entry["grads"][index] = grad
                    entry["seen"] += 1
                    if entry["seen"] < expected_count(task):
                        return None
                    call_with = tuple(entry["grads"])
                    del state[key]
            fn(call_with)
            return None

        return hook

    handles = [tensor.register_hook(make_hook(i)) for i, tensor in enumerate(tensors)
               if tensor.requires_grad]
    return _MultiHandle(handles)


def to_dot(tensor, show_saved: bool = True) -> str:
    """The backward graph of ``tensor`` as Graphviz DOT text; each node lists its saved tensors
    (shape, dtype, bytes) so the memory a graph keeps alive can be read off the picture."""
    lines = ["digraph backward {", '  node [shape=box, fontname="monospace"];']
    root = tensor.grad_fn if tensor.grad_fn is not None else (
        grad_accumulator(tensor) if tensor.requires_grad else None)
    if root is None:
        lines.append("}")
        return "\n".join(lines)
    ids: dict = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if node in ids:
            continue
        ids[node] = f"n{len(ids)}"
        label = [node.name()]
        if isinstance(node, AccumulateGrad):
            data = node.variable._data
            label.append(f"variable {list(data.shape)} {data.dtype}")
        if show_saved:
            names = getattr(getattr(type(node), "_forward_cls", None), "saved_names", ())
            for i, saved in enumerate(node._saved):
                if saved is None:
                    continue
                name = names[i] if i < len(names) else f"saved{i}"
                state = "freed" if saved._freed else ("packed" if saved._hooked else "held")
                label.append(f"{name}: {list(saved.shape)} {saved._dtype} {saved.nbytes} B "
                             f"({state})")
        text = "\\n".join(label).replace('"', '\\"')
        lines.append(f'  {ids[node]} [label="{text}"];')
        for child, _ in node.next_functions:
            if child is not None:
                stack.append(child)
    for node, name in ids.items():
        for child, nr in node.next_functions:
            if child is not None:
                lines.append(f"  {ids[child]} -> {name};")
    lines.append("}")
    return "\n".join(lines)


def increment_version(tensor: Any) -> None:
    """Mark ``tensor`` (or each tensor of an iterable) as modified in place, as
    torch.autograd.graph.increment_version: for code that writes a tensor's memory behind
    autograd's back, so a saved copy of it is refused in backward instead of read stale."""
    tensors = (tensor,) if isinstance(tensor, Tensor) else tuple(tensor)
    for each in tensors:
        each._version_counter[0] += 1
