"""The backward graph's nodes: Node (a tensor's ``grad_fn``), AccumulateGrad (a leaf's sink),
GraphRoot, and the GraphTask each backward call runs under.

A node knows its edges (``next_functions``), its hooks and its saved tensors; it knows no op and
no Tensor internals beyond the attributes a tensor has.
"""
from __future__ import annotations

import itertools
import re
import sys
import threading
from collections import OrderedDict
from typing import Callable, Optional

import numpy as np

from .._memory_format import contiguous_format
from ..tensor import Tensor
from ..utils.hooks import RemovableHandle, add_hook
from .grad_mode import _state as _grad_state

_sequence = itertools.count()


class Node:
    """A backward function in the graph (``tensor.grad_fn``).

    ``next_functions`` holds one ``(node, output_nr)`` edge per differentiable forward input.
    """

    __slots__ = ("next_functions", "_saved", "_pre_hooks", "_post_hooks", "_tensor_pre_hooks",
                 "_retains_grad_hooks", "_metadata", "_sequence_nr", "_input_meta", "_hooked",
                 "__weakref__")

    # one (shape, dtype) per forward output, set by the nodes that have several or know them;
    # a node without it takes one gradient (the engine reads this, never a missing attribute)
    _output_meta: tuple = ()

    def _init_node(self) -> None:
        self.next_functions = ()
        self._saved = ()
        self._pre_hooks = None
        self._post_hooks = None
        self._tensor_pre_hooks = None
        self._retains_grad_hooks = None
        self._metadata = None
        self._sequence_nr = next(_sequence)
        self._input_meta = ()
        # set once any hook store is attached: the engine's one test for "no hook work here"
        self._hooked = False

    def name(self) -> str:
        """The node's class name as torch prints it (``MulBackward0``)."""
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{self.name()} object at {hex(id(self))}>"

    @property
    def metadata(self) -> dict:
        """A dict for the user's own data about this node (torch's ``Node.metadata``)."""
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def register_hook(self, fn: Callable) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs) -> tuple | None`` runs after this node's backward.

        ``grad_inputs`` are the gradients it computed for its forward inputs; a returned tuple
        replaces them. Example: ``y.grad_fn.register_hook(lambda gi, go: (gi[0] * 2,))``.
        """
        if self._post_hooks is None:
            self._post_hooks = OrderedDict()
        self._hooked = True
        return add_hook(self._post_hooks, fn)

    def register_prehook(self, fn: Callable) -> RemovableHandle:
        """``fn(grad_outputs) -> tuple | None`` runs before this node's backward; a returned tuple
        replaces the incoming gradients."""
        if self._pre_hooks is None:
            self._pre_hooks = OrderedDict()
        self._hooked = True
        return add_hook(self._pre_hooks, fn)

    def _tensor_hooks_for(self, output_nr: int, store: "OrderedDict") -> None:
        """Attach a tensor's own hook dict (shared, so later registrations are seen)."""
        if self._tensor_pre_hooks is None:
            self._tensor_pre_hooks = {}
        self._tensor_pre_hooks[output_nr] = store
        self._hooked = True

    def _register_retains_grad(self, output_nr: int, fn: Callable) -> None:
        if self._retains_grad_hooks is None:
            self._retains_grad_hooks = {}
        self._retains_grad_hooks[output_nr] = fn
        self._hooked = True

    def release_variables(self) -> None:
        """Frees what the node saved for backward (done after a backward pass without
        ``retain_graph``)."""
        for saved in self._saved:
            if saved is not None:
                saved.release()

    def apply(self, grad_outputs: tuple) -> tuple:
        """Gradients of the node's inputs from the gradients of its outputs."""
        raise NotImplementedError

    def __call__(self, *grad_outputs):
        result = self.apply(grad_outputs)
        return result[0] if len(result) == 1 else result

    def _register_hook_dict(self, tensor) -> None:  # torch API used by some libraries
        tensor._ensure_hooks_attached()


class AccumulateGrad(Node):
    """The node that adds a gradient into a leaf's ``.grad``; ``.variable`` is the leaf."""

    __slots__ = ("variable",)

    def __init__(self, variable):
        self._init_node()
        self._sequence_nr = float("inf")  # as in torch: runs as soon as it is ready
        self.variable = variable
        self._input_meta = ((variable._data.shape, variable._data.dtype),)

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {hex(id(self))}>"

    def apply(self, grad_outputs: tuple) -> tuple:
        grad = grad_outputs[0]
        if grad is None:
            return ()
        variable = self.variable
        # torch steals a gradient that nothing else refers to instead of copying it; the
        # references here are the engine's list and tuple, ``grad`` and getrefcount's argument
        steal = REFCOUNTS_EXACT and sys.getrefcount(grad) <= _ENGINE_REFS
        accumulate_grad(variable, grad, steal)
        hooks = variable._extra.post_accumulate_hooks if variable._extra is not None else None
        if hooks:
            for hook in tuple(hooks.values()):
                result = hook(variable)
                if result is None:
                    continue
                if not isinstance(result, Tensor):
                    raise TypeError(f"expected Variable, but hook returned "
                                    f"'{type(result).__name__}'")
                raise RuntimeError("Tensor post accumulate grad hooks should return None.")
        return ()


_ENGINE_REFS = 4
# the reference counts above were counted on CPython up to 3.13; 3.14 may leave stack references
# uncounted, so a count could look owned while something else holds the tensor: reuse nothing
# there (correct, only a copy more)
REFCOUNTS_EXACT = sys.implementation.name == "cpython" and sys.version_info < (3, 14)


def _stealable(variable: Tensor, grad: Tensor) -> bool:
    """Torch's rule for keeping the incoming buffer as ``.grad``: a plain tensor with the
    variable's layout (dense, same strides), whose array no other tensor wraps."""
    data = grad._data
    # three references to the array: the tensor's, ``data`` and getrefcount's argument
    return (grad._grad_fn is None and not grad._requires_grad and grad._extra is None
            and data.flags.writeable and data.flags.c_contiguous
            and data.strides == variable._data.strides and sys.getrefcount(data) <= 3)


def _dense_order(variable: np.ndarray):
    """The variable's dimensions outermost first when its memory is dense (no overlap, no gap:
    a row-major, transposed or permuted tensor), else None (expanded, strided slices)."""
    strides, shape = variable.strides, variable.shape
    order = sorted(range(variable.ndim), key=lambda d: -abs(strides[d]))
    expected = variable.itemsize
    for d in reversed(order):
        if shape[d] != 1 and strides[d] != expected:
            return None
        expected *= shape[d]
    return order


def _empty_laid_out_like(variable: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """An empty array for ``grad`` with the variable's strides when the variable is dense (a
    transposed leaf gets a transposed ``.grad``, as torch's layout contract says), else
    C-contiguous."""
    order = None if variable.flags.c_contiguous or variable.shape != grad.shape \
        else _dense_order(variable)
    if order is None:
        return np.empty(grad.shape, grad.dtype)
    buffer = np.empty([variable.shape[d] for d in order], grad.dtype)
    return buffer.transpose(np.argsort(order))


def _laid_out_like(variable: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """A copy of ``grad`` laid out as :func:`_empty_laid_out_like` says."""
    result = _empty_laid_out_like(variable, grad)
    result[...] = grad
    return result


def _recorded_copy(variable: np.ndarray, grad: Tensor) -> Tensor:
    """torch's first ``.grad`` of a gradient that has a graph (create_graph): always a deep
    copy, recorded: into the variable's strides when its memory is dense
    (``CopyBackwards``), else a contiguous clone (``CloneBackward0``)."""
    if variable.shape == grad._data.shape and _dense_order(variable) is None:
        return grad.clone(memory_format=contiguous_format)
    return Tensor._make(_empty_laid_out_like(variable, grad._data)).copy_(grad)


def accumulate_grad(variable: Tensor, grad: Tensor, steal: bool = False) -> None:
    """A fresh tensor the first time, then add (out of place when building a graph of the
    gradient, as torch does). With ``steal``, the caller holds the only reference to ``grad``
    and, as torch, it becomes ``.grad`` itself when its layout allows."""
    if variable._grad is None:
        if _grad_state.enabled and (grad._requires_grad or grad._grad_fn is not None):
            variable._grad = _recorded_copy(variable._data, grad)
        elif steal and not _grad_state.enabled and _stealable(variable, grad):
            variable._grad = grad
        else:
            variable._grad = Tensor._make(_laid_out_like(variable._data, grad._data))
    elif _grad_state.enabled:
        variable._grad = variable._grad + grad
    else:
        variable._grad._data += grad._data
        variable._grad._version_counter[0] += 1


class GraphRoot(Node):
    """Feeds the initial gradients of a backward call (torch's GraphRoot)."""

    __slots__ = ()

    def name(self) -> str:
        return "GraphRoot"


def forward_name(node) -> str:
    """``MulBackward0`` -> ``Mul``: the forward op a node belongs to, as torch's messages say."""
    return re.sub(r"Backward\d*$", "", node.name())


class GraphTask:
    """What one backward call will run; visible to hooks (multi-grad hooks need it).

    ``executes`` is the set of nodes that run when only some inputs' gradients are wanted
    (``autograd.grad``, ``backward(inputs=...)``), or ``None`` when every reachable node runs;
    ``running`` is the node the engine is running now (so a node can tell that it is asked by
    the engine, not called from another node's backward).
    """

    __slots__ = ("id", "nodes", "executes", "running")

    _ids = itertools.count()

    def __init__(self, nodes, executes=None):
        self.id = next(GraphTask._ids)
        self.nodes = nodes
        self.executes = executes
        self.running = None


class _Tasks(threading.local):
    def __init__(self):
        self.stack: list = []


tasks = _Tasks()

# how many backward calls, in any thread, run only part of the graph now (autograd.grad,
# backward(inputs=...)): while none does, a node need not look up the running task to learn
# which of its inputs are wanted. Changed under the lock; read without it (a stale nonzero only
# costs that lookup)
partial_runs = [0]
partial_runs_lock = threading.Lock()


def current_graph_task() -> Optional[GraphTask]:
    return tasks.stack[-1] if tasks.stack else None
