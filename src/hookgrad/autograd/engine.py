"""The engine: the only code that walks the backward graph. It knows no op.

Order of work for each node, as in PyTorch (``torch/csrc/autograd/engine.cpp``):
  1. tensor pre-hooks (``Tensor.register_hook``) on each incoming gradient, in registration order
  2. retain_grad hooks (so ``.grad`` of a non-leaf sees what its own hooks returned)
  3. capture for ``autograd.grad`` / ``backward(inputs=...)``
  4. node pre-hooks (``grad_fn.register_prehook``)
  5. the node itself (for AccumulateGrad: add into ``.grad``, then post-accumulate-grad hooks)
  6. check the node's gradients against its inputs' shapes and dtypes (sum broadcast, cast)
  7. node post-hooks (``grad_fn.register_hook``)
  8. free the node's saved tensors unless ``retain_graph``
Nodes run in dependency order; among ready nodes, the most recently created first, and
AccumulateGrad as soon as it is ready (torch's ready-queue priority).
"""
from __future__ import annotations

import heapq
import itertools
from typing import Optional, Sequence

import numpy as np

from .._dtype import legacy_type_name
from ..tensor import Tensor
from .anomaly_mode import _flags as _anomaly_flags
from .grad_mode import _state
from .node import (AccumulateGrad, GraphTask, current_graph_task, partial_runs,
                   partial_runs_lock, tasks)
from .tensor_hooks import grad_accumulator, grad_edge

__all__ = ["backward", "grad", "run", "current_graph_task", "will_execute_node", "GraphTask"]


def will_execute_node(node) -> bool:
    """Inside backward: whether ``node`` runs in the current backward call (torch's
    ``_will_engine_execute_node``)."""
    task = current_graph_task()
    if task is None:
        raise RuntimeError("_will_engine_execute_node should only be called during the backward "
                           "pass")
    return node in task.nodes


def _as_tuple(tensors) -> tuple:
    if isinstance(tensors, Tensor):
        return (tensors,)
    return tuple(tensors)


def _make_grads(outputs: tuple, grad_outputs: tuple) -> list:
    grads = []
    for i, (output, grad) in enumerate(zip(outputs, grad_outputs)):
        if grad is None:
            if output._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if output._data.dtype.kind not in "fcV":
                raise RuntimeError(f"grad can be implicitly created only for real scalar "
                                   f"outputs but got {output.dtype}")
            ones = np.empty_like(output._data)  # ones_like's result, without its Python layer
            ones.fill(1)
            grads.append(Tensor._make(ones))
            continue
        if not isinstance(grad, Tensor):
            grad = Tensor._make(np.asarray(grad, dtype=output._data.dtype))
        if grad._data.shape != output._data.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                               f"{grad.shape} and output[{i}] has a shape of {output.shape}.")
        if grad._data.dtype != output._data.dtype:
            # as every gradient a node hands on (``_validate``): cast to the dtype of the node
            # input it flows into, i.e. the output's (recorded, so create_graph sees it)
            grad = grad.to(output._data.dtype)
        grads.append(grad)
    return grads


def _root_edges(outputs: tuple) -> list:
    edges = []
    for i, output in enumerate(outputs):
        edge = grad_edge(output)
        if edge is None:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have "
                               "a grad_fn")
        edges.append(edge)
    return edges


def _input_edges(inputs: tuple) -> list:
    edges = []
    for tensor in inputs:
        if not isinstance(tensor, Tensor):
            raise RuntimeError("all inputs have to be Tensors or GradientEdges, but got "
                               f"{type(tensor).__name__}")
        if not tensor.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        node = tensor.grad_fn
        edges.append((node, tensor._output_nr) if node is not None
                     else (grad_accumulator(tensor), 0))
    return edges


def backward(tensors, grad_tensors=None, retain_graph: Optional[bool] = None,
             create_graph: bool = False, grad_variables=None, inputs=None) -> None:
    """Accumulate d(tensors)/d(leaf) into each leaf's ``.grad`` (torch.autograd.backward)."""
    outputs = _as_tuple(tensors)
    if grad_tensors is None:
        grad_tensors = (None,) * len(outputs)
    else:
        grad_tensors = _as_tuple(grad_tensors) if not isinstance(grad_tensors, (list, tuple)) \
            else tuple(grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    grads = _make_grads(outputs, grad_tensors)
    roots = _root_edges(outputs)
    targets = None
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if len(inputs) == 0:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
        targets = _input_edges(inputs)
        for tensor in inputs:
            if tensor.grad_fn is not None:
                # as torch: a non-leaf input keeps its .grad from now on (retain_grad), so a
                # later backward through it accumulates there too
                tensor.retain_grad()
    run(roots, grads, retain_graph, create_graph, targets)


def tensor_backward(self: Tensor, gradient: Optional[Tensor] = None,
                    retain_graph: Optional[bool] = None, create_graph: bool = False,
                    inputs=None) -> None:
    """``Tensor.backward``: accumulate the gradient of this tensor into the leaves' ``.grad``."""
    backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def grad(outputs, inputs, grad_outputs=None, retain_graph: Optional[bool] = None,
         create_graph: bool = False, only_inputs: bool = True, allow_unused: Optional[bool] = None,
         is_grads_batched: bool = False, materialize_grads: bool = False) -> tuple:
    """The gradients of ``outputs`` w.r.t. ``inputs``, without touching any ``.grad``."""
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    if retain_graph is None:
        retain_graph = create_graph
    grads = _make_grads(outputs, grad_outputs)
    roots = _root_edges(outputs)
    targets = _input_edges(inputs)
    captured = run(roots, grads, retain_graph, create_graph, targets, accumulate=False)
    result = []
    for i, (tensor, value) in enumerate(zip(inputs, captured)):
        if value is None:
            if materialize_grads:
                value = Tensor._make(np.zeros_like(tensor._data))
            elif not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have "
                                   "been used in the graph. Set allow_unused=True if this is the "
                                   "desired behavior.")
        result.append(value)
    return tuple(result)


def _collect(roots: list):
    """All nodes reachable from the roots, and each node's parents, without recursion."""
    parents = {}
    order = []
    stack = []
    for node, _ in roots:
        if node is not None and node not in parents:
            parents[node] = []
            stack.append(node)
    while stack:
        node = stack.pop()
        order.append(node)
        for child, _ in node.next_functions:
            if child is None:
                continue
            if child not in parents:
                parents[child] = []
                stack.append(child)
            parents[child].append(node)
    return order, parents


def _count(roots: list) -> dict:
    """Every node reachable from the roots, mapped to the number of edges into it (what
    ``_collect`` gives when no parent list is needed: a plain ``backward()``)."""
    counts = {}
    stack = []
    for node, _ in roots:
        if node is not None and node not in counts:
            counts[node] = 0
            stack.append(node)
    while stack:
        for child, _ in stack.pop().next_functions:
            if child is None:
                continue
            count = counts.get(child)
            if count is None:
                counts[child] = 1
                stack.append(child)
            else:
                counts[child] = count + 1
    return counts


def _needed(parents: dict, targets: list) -> set:
    needed = set()
    stack = [node for node, _ in targets if node in parents]
    while stack:
        node = stack.pop()
        if node in needed:
            continue
        needed.add(node)
        stack.extend(parents[node])
    return needed


def run(roots: list, root_grads: Sequence, keep_graph: bool, create_graph: bool,
        targets: Optional[list] = None, accumulate: bool = True) -> list:
    """Run backward from ``roots`` (edges) seeded with ``root_grads``.

    With ``targets`` (edges of the tensors asked for), only nodes that lead to a target run, and
    the gradient arriving at each target is returned; with ``accumulate`` false, target leaves
    are not accumulated into (``autograd.grad``).
    """
    captures = {}
    if targets is None:  # every reachable node runs; an edge into a child is a dependency
        executes = None
        dependencies = reachable = _count(roots)
    else:
        order, parents = _collect(roots)
        reachable = parents
        executes = _needed(parents, targets)
        for index, (node, nr) in enumerate(targets):
            captures.setdefault(node, []).append((nr, index))
        dependencies = {}
        for node in order:
            if node not in executes:
                continue
            for child, _ in node.next_functions:
                if child is not None and child in executes:
                    dependencies[child] = dependencies.get(child, 0) + 1

    captured = [None] * (len(targets) if targets is not None else 0)
    buffers = {}
    for (node, nr), grad in zip(roots, root_grads):
        _add_to_buffer(buffers, node, nr, grad)
    tie = itertools.count()
    ready = []
    for node in buffers:
        if dependencies.get(node, 0) == 0:
            heapq.heappush(ready, (-node._sequence_nr, next(tie), node))

    previous_mode = _state.enabled
    _state.enabled = create_graph
    task = GraphTask(executes if executes is not None else reachable, executes)
    if executes is not None:
        with partial_runs_lock:
            partial_runs[0] += 1
    tasks.stack.append(task)
    pop, push = heapq.heappop, heapq.heappush
    # ``held``: the one node that became ready while no other was waiting. It would be the
    # next popped anyway, so it skips the heap (a chain of single-input nodes never uses it)
    held = None
    try:
        while held is not None or ready:
            if held is not None:
                node, held = held, None
            else:
                node = pop(ready)[2]
            grads = buffers.pop(node)
            task.running = node
            if node._hooked or captures:
                outputs = _run_node(node, grads, task, captures.get(node), captured, accumulate,
                                    keep_graph)
                grads = None  # the node's incoming gradients die before its outputs are summed
                if outputs is None:
                    continue
            else:  # no hook on this node and nothing to capture: steps 5, 6 and 8 only
                outputs = _validate(node, node.apply(tuple(grads)))
                if _anomaly_flags[0] and _anomaly_flags[1]:
                    _check_nan(node, outputs)
                grads = None
                if not keep_graph:
                    node.release_variables()
            for (child, nr), grad in zip(node.next_functions, outputs):
                if child is None or (executes is not None and child not in executes):
                    continue
                slots = buffers.get(child)
                if slots is None:
                    meta = child._output_meta  # _num_inputs, inline
                    slots = buffers[child] = [None] * (len(meta) if meta else 1)
                if grad is not None:
                    if nr < len(slots) and slots[nr] is None:
                        slots[nr] = grad  # the common case, inline
                    else:
                        _add_to_buffer(buffers, child, nr, grad)
                remaining = dependencies[child] - 1
                dependencies[child] = remaining
                if remaining == 0:
                    if held is None and not ready:
                        held = child
                    else:
                        if held is not None:
                            push(ready, (-held._sequence_nr, next(tie), held))
                            held = None
                        push(ready, (-child._sequence_nr, next(tie), child))
            grad = outputs = grads = None  # the buffers own them now: AccumulateGrad may steal one
    finally:
        _state.enabled = previous_mode
        tasks.stack.pop()
        if executes is not None:
            with partial_runs_lock:
                partial_runs[0] -= 1
    return captured


def _run_node(node, grads: list, task: GraphTask, captures, captured: list, accumulate: bool,
              keep_graph: bool):
    """One node's turn, in torch's order. Returns its gradients for its inputs, or ``None``
    when the node itself does not run (a capture point of ``autograd.grad``)."""
    # 0. autograd.grad captures an input whose node must run anyway (a gradient further up is
    #    wanted too) before that node's hooks, as torch does: those hooks then run once, with
    #    the node; a capture point whose node does not run sees its hooks' results (step 3)
    early = (captures is not None and not accumulate and not isinstance(node, AccumulateGrad)
             and any(child in task.executes for child, _ in node.next_functions))
    if early:
        for nr, index in captures:
            captured[index] = grads[nr]
    # 1. tensor pre-hooks (Tensor.register_hook), in registration order, per output of the node;
    #    an output that got no gradient (one of unbind's, say) is called with None, as in torch
    tensor_hooks = node._tensor_pre_hooks
    if tensor_hooks:
        for nr, hooks in tensor_hooks.items():
            if nr >= len(grads) or not hooks:
                continue
            value = grads[nr]
            for hook in tuple(hooks.values()):  # a copy: a hook may remove itself
                result = hook(value)
                if result is not None:
                    if value is None:
                        raise RuntimeError("can't replace a None gradient with a non-None value")
                    value = _check_hook_result(hook, value, result)
            grads[nr] = value
    # 2. retain_grad, so a non-leaf's .grad sees what its own hooks returned
    retains = node._retains_grad_hooks
    if retains:
        for nr, hook in retains.items():
            if nr < len(grads) and grads[nr] is not None:
                hook(grads[nr])
    # 3. capture for autograd.grad / backward(inputs=...)
    if captures is not None and not early:
        for nr, index in captures:
            captured[index] = grads[nr]
        if isinstance(node, AccumulateGrad):
            if not accumulate:  # autograd.grad never touches .grad
                return None
        elif not accumulate and not any(child in task.executes for child, _ in node.next_functions):
            return None  # only a capture point of autograd.grad: its backward is not needed
        # backward(inputs=(non_leaf,)) runs the non-leaf's node, with its hooks, as torch does;
        # its gradients then flow nowhere, as no child of it is to be executed
    grad_outputs = tuple(grads)
    # 4. node pre-hooks (grad_fn.register_prehook)
    if node._pre_hooks:
        for hook in tuple(node._pre_hooks.values()):
            result = hook(grad_outputs)
            if result is not None:
                grad_outputs = _check_hook_tuple(hook, grad_outputs, result)
    # 5. the node itself (AccumulateGrad: add into .grad, then post-accumulate-grad hooks)
    outputs = node.apply(grad_outputs)
    # 6. its gradients checked against its inputs' shapes and dtypes (sum broadcast, cast)
    outputs = _validate(node, outputs)
    if _anomaly_flags[0] and _anomaly_flags[1]:  # anomaly mode's NaN check, as torch's
        _check_nan(node, outputs)
    # 7. node post-hooks (grad_fn.register_hook)
    if node._post_hooks:
        for hook in tuple(node._post_hooks.values()):
            result = hook(outputs, grad_outputs)
            if result is not None:
                outputs = _check_hook_tuple(hook, outputs, result)
    # 8. free the node's saved tensors unless the graph is kept
    if not keep_graph:
        node.release_variables()
    return outputs


def _num_inputs(node) -> int:
    meta = node._output_meta
    if meta:
        return len(meta)
    return 1


def _add_to_buffer(buffers: dict, node, nr: int, grad) -> None:
    slots = buffers.get(node)
    if slots is None:
        slots = buffers[node] = [None] * _num_inputs(node)
    while len(slots) <= nr:
        slots.append(None)
    existing = slots[nr]
    slots[nr] = grad if existing is None else existing + grad


def _check_hook_result(hook, old, new):
    if not isinstance(new, Tensor):
        raise TypeError(f"hook '{_name(hook)}' returned {type(new).__name__}, expected a Tensor "
                        "or None")
    if new._data.shape != old._data.shape:
        raise RuntimeError(f"hook '{_name(hook)}' has changed the size of value")
    if new._data.dtype != old._data.dtype:
        raise RuntimeError(f"hook '{_name(hook)}' has changed the type of value (was "
                           f"{legacy_type_name(old._data)} got {legacy_type_name(new._data)})")
    return new


def _name(hook) -> str:
    return getattr(hook, "__name__", type(hook).__name__)


def _check_hook_tuple(hook, old: tuple, new) -> tuple:
    new = tuple(new) if isinstance(new, (list, tuple)) else (new,)
    if len(new) != len(old):
        raise RuntimeError(f"hook '{_name(hook)}' has returned an incorrect number of values "
                           f"(got {len(new)}, but expected {len(old)})")
    return tuple(None if n is None else (n if o is None else _check_hook_result(hook, o, n))
                 for o, n in zip(old, new))


def _check_nan(node, outputs: tuple) -> None:
    """Anomaly mode with ``check_nan``: a node that returned a NaN gradient is an error."""
    for index, grad in enumerate(outputs):
        if isinstance(grad, Tensor) and grad._data.dtype.kind == "f" and \
                np.isnan(grad._data).any():
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its "
                               f"{index}th output.")


def _validate(node, outputs) -> tuple:
    """torch's validate_outputs: one gradient per edge, reduced to the input's shape, cast to
    its dtype; a gradient that cannot be reduced is an error naming the node."""
    edges = node.next_functions
    if len(outputs) != len(edges):
        raise RuntimeError(f"function {node.name()} returned an incorrect number of gradients "
                           f"(expected {len(edges)}, got {len(outputs)})")
    metas = node._input_meta
    for grad, meta in zip(outputs, metas):  # the common case: every gradient already right
        if grad is None:
            continue
        if type(grad) is not Tensor or meta is None:
            break
        array = grad._data
        if array.shape != meta[0] or (array.dtype is not meta[1] and array.dtype != meta[1]):
            break
    else:
        return outputs if type(outputs) is tuple else tuple(outputs)
    if not edges:
        return tuple(outputs)
    result = []
    for i, grad in enumerate(outputs):
        if grad is None or edges[i][0] is None:  # kept for post-hooks, routed nowhere
            result.append(grad)
            continue
        if type(grad) is Tensor:  # the common case: shape and dtype already right
            array = grad._data
            meta = metas[i]
            if array.shape == meta[0] and array.dtype == meta[1]:
                result.append(grad)
                continue
        if not hasattr(grad, "_data"):
            raise TypeError(f"function {node.name()} returned a gradient of type "
                            f"{type(grad).__name__} at index {i}, expected a Tensor or None")
        shape, dtype = metas[i]
        if grad._data.shape != shape:
            if not _expandable(shape, grad._data.shape):
                raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index "
                                   f"{i} - got {list(grad._data.shape)} but expected shape "
                                   f"compatible with {list(shape)}")
            grad = grad.sum_to_size(shape)
        if grad._data.dtype != dtype:
            grad = grad.to(dtype)
        result.append(grad)
    return tuple(result)


def _expandable(shape: tuple, target: tuple) -> bool:
    if len(shape) > len(target):
        return False
    for size, target_size in zip(reversed(shape), reversed(target)):
        if size != target_size and size != 1:
            return False
    return True
