"""How ``Function.apply`` wires a node to its inputs and outputs: the edges to the inputs'
histories, the shapes backward checks gradients against, and what a user Function's outputs
become (a new history, an alias of a returned input, a tensor changed in place).

Kept apart from ``function.py`` so the apply paths there read as steps; this module imports
only Tensor and the autograd pieces below Function (hooks, views).
"""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from .tensor_hooks import grad_edge, history_moved
from .views import alias, check_inplace, make_view, rebase_history


def check_dirty_returned(dirty: tuple, raw_outputs: tuple) -> None:
    """A tensor marked dirty must be an output: its new history is this node, so one that is
    not returned would keep a history that no longer describes its values."""
    for tensor in dirty:
        if not any(tensor is out for out in raw_outputs):
            raise RuntimeError("Some elements marked as dirty during the forward method were not "
                               "returned as output. The inputs that are modified inplace must all "
                               "be outputs of the Function.")


def user_outputs(node, args, raw_outputs) -> list:
    dirty = node._dirty or ()
    non_diff = node._non_differentiable or ()
    results = []
    for index, out in enumerate(raw_outputs):
        if not isinstance(out, Tensor):
            results.append(out)
            continue
        is_dirty = any(out is d for d in dirty)
        if is_dirty:
            tensor = out
            if not (tensor._requires_grad and tensor._grad_fn is None and tensor._base is None):
                tensor._grad = None  # torch drops a dirty tensor's .grad (even if refused next)
            check_inplace(tensor, "has been")
            tensor._version_counter[0] += 1
        elif any(out is a for a in args):
            tensor = alias(out, node._forward_cls.__name__)  # an input returned as-is
        else:
            tensor = out
        if any(out is n for n in non_diff) or tensor._data.dtype.kind not in "fcV":
            tensor._grad_fn = None
        elif is_dirty and tensor._base is not None:
            rebase_history(tensor, node, index)
        else:
            old_node, old_nr = tensor._grad_fn, tensor._output_nr
            tensor._grad_fn = node
            tensor._output_nr = index
            if is_dirty:
                history_moved(tensor, old_node, old_nr)
        results.append(tensor)
    return results


_NO_EDGE = (None, 0)


def connect(node: object, args: tuple, positions: tuple) -> None:
    """The node's edges to its inputs' histories, and what backward checks gradients against."""
    needs = node.needs_input_grad
    edges = []
    meta = []
    for i in positions:
        if needs[i]:
            tensor = args[i]
            history = tensor._grad_fn
            if history is not None and tensor._base is None:  # no view to look up: inline
                edges.append((history, tensor._output_nr))
            else:
                edges.append(grad_edge(tensor))
            array = tensor._data
            meta.append((array.shape, array.dtype))
        else:
            edges.append(_NO_EDGE)
            meta.append(None)
    node.next_functions = tuple(edges)
    node._input_meta = tuple(meta)
    node._tensor_positions = positions


def builtin_inputs(cls, node, args: tuple, arrays: list) -> tuple:
    """Set ``node.needs_input_grad`` (some input needs a gradient) and return the positions
    that get an edge (tensors, and numbers torch wraps as tensors), with the edges and the
    input shapes backward checks against. The edge of a view that needs a gradient is left
    ``None`` and its index listed in the last item (``None`` when there is none):
    ``pending_edges`` looks it up after forward, so that forward's own refusals come first.
    Each distinct input tensor gets its own array object, so a saved array names the tensor
    it came from: ``x`` and ``x.detach()`` share one ndarray, yet only ``x`` has a history."""
    needs = []
    positions = []
    edges = []
    metas = []
    pending = None
    seen = None  # (array, tensor) of the tensors so far: few, a list beats a dict
    for i, arg in enumerate(args):
        if isinstance(arg, Tensor):
            positions.append(i)
            history = arg._grad_fn
            if arg._base is None:
                need = arg._requires_grad or history is not None
                if need:
                    edges.append((history, arg._output_nr) if history is not None
                                 else grad_edge(arg))
            else:
                need = arg._requires_grad or history is not None or arg.grad_fn is not None
                if need:
                    if pending is None:
                        pending = []
                    pending.append(len(edges))
                    edges.append(None)
            needs.append(need)
            array = arrays[i]
            if seen is None:
                seen = [(array, arg)]
            else:
                for other_array, other in seen:
                    if other_array is array and other is not arg:
                        arrays[i] = array = array.view()
                        break
                seen.append((array, arg))
            if need:
                metas.append((array.shape, array.dtype))
            else:
                edges.append(_NO_EDGE)
                metas.append(None)
        else:
            needs.append(False)
            if i in cls._wrapped_scalars:
                positions.append(i)
                edges.append(_NO_EDGE)
                metas.append(None)
    node.needs_input_grad = tuple(needs)
    return tuple(positions), edges, tuple(metas), pending


def pending_edges(edges: list, pending: list, args: tuple, positions: tuple) -> tuple:
    """The edges of the view inputs ``builtin_inputs`` left for after forward, filled in."""
    for k in pending:
        edges[k] = grad_edge(args[positions[k]])
    return tuple(edges)


def set_output_meta(node, results) -> None:
    node._output_meta = tuple((r._data.shape, r._data.dtype) if isinstance(r, Tensor) else None
                              for r in results)


def untracked_outputs(cls, args, outputs):
    """No input needs grad: plain tensors (views and in-place still share versions)."""
    if cls._inplace:
        target = args[0]
        target._version_counter[0] += 1
        return target
    if isinstance(outputs, tuple):
        return tuple(_plain_output(cls, args, out, i) for i, out in enumerate(outputs))
    return _plain_output(cls, args, outputs, 0)


def _plain_output(cls, args, array, index):
    """One output of an op that records nothing: a fresh tensor, or a view of its input."""
    if type(array) is not np.ndarray:  # NumPy hands back scalars for 0-dim results
        array = np.asarray(array)
    if cls._view_of is None:
        return Tensor._make(array)
    return make_view(array, args[cls._view_of], cls, args, index)


def builtin_outputs(cls, node, args, raw_outputs) -> list:
    """The outputs of a recorded built-in op, with this node as their history (an in-place op
    moves its target's history here; a view op makes views of its input)."""
    if cls._inplace:
        tensor = args[0]
        tensor._version_counter[0] += 1
        if tensor._data.dtype.kind not in "fcV":
            tensor._grad_fn = None
        elif tensor._base is not None:
            rebase_history(tensor, node, 0)
        else:
            old_node, old_nr = tensor._grad_fn, tensor._output_nr
            tensor._grad_fn = node
            tensor._output_nr = 0
            if tensor._hooks is not None or tensor._extra is not None:
                history_moved(tensor, old_node, old_nr)
        return [tensor]
    results = []
    view_of = cls._view_of
    for index, out in enumerate(raw_outputs):
        if type(out) is not np.ndarray:  # NumPy hands back scalars for 0-dim results
            out = np.asarray(out)
        if view_of is not None:
            tensor = make_view(out, args[view_of], cls, args, index)
        else:
            tensor = Tensor._make(out)
        if out.dtype.kind in "fcV":
            tensor._grad_fn = node
            tensor._output_nr = index
        results.append(tensor)
    return results
