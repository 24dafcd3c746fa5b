"""The backward graph: Node, SavedTensor (the single door for saved tensors) and saved-tensor hooks.

Every tensor that an op or a custom Function keeps for backward becomes a ``SavedTensor`` here, in
``SavedTensor.__init__``. That is the only place a pack hook runs and the only place a version is
recorded; ``SavedTensor.unpack`` is the only place an unpack hook runs and a version is checked.
"""
from __future__ import annotations

import itertools
import re
import threading
import weakref
from collections import OrderedDict
from typing import Any, Callable, NamedTuple, Optional

import numpy as np

from ..utils.hooks import RemovableHandle, add_hook
from .grad_mode import _state as _grad_state

_sequence = itertools.count()

ERR_FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)

_LEGACY_TYPE = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
                "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def legacy_type_name(array: np.ndarray) -> str:
    """torch's ``Tensor.type()`` string, used in its error messages."""
    return f"torch.{_LEGACY_TYPE.get(array.dtype.name, array.dtype.name)}Tensor"


# ---------------------------------------------------------------------------------------------
# Saved-tensor hooks: a thread-local stack of (pack, unpack) pairs; the innermost pair applies.
# ---------------------------------------------------------------------------------------------
class _HookState(threading.local):
    def __init__(self):
        self.stack: list = []
        self.top: Optional[tuple] = None  # stack[-1], kept so the per-save check is one lookup
        self.disabled: Optional[str] = None
        self.current: Optional["SavedTensorInfo"] = None


_hook_state = _HookState()


def _push(pair: tuple) -> None:
    if _hook_state.disabled is not None:
        raise RuntimeError(_hook_state.disabled)
    _hook_state.stack.append(pair)
    _hook_state.top = pair


def _pop() -> None:
    _hook_state.stack.pop()
    _hook_state.top = _hook_state.stack[-1] if _hook_state.stack else None


def compose_hooks(*pairs: tuple) -> tuple:
    """One (pack, unpack) pair that applies ``pairs`` in order: pack first to last, unpack last
    to first. ``compose_hooks((cast_pack, cast_unpack), (disk_pack, disk_unpack))`` casts, then
    writes the cast tensor to disk."""
    packs = [p for p, _ in pairs]
    unpacks = [u for _, u in reversed(pairs)]

    def pack_hook(value):
        for pack in packs:
            value = pack(value)
        return value

    def unpack_hook(value):
        for unpack in unpacks:
            value = unpack(value)
        return value

    return pack_hook, unpack_hook


class saved_tensors_hooks:
    """Set a pair of pack / unpack hooks for every tensor saved for backward in this context.

    ``pack_hook(tensor) -> Any`` runs each time an op or ``ctx.save_for_backward`` saves a tensor;
    what it returns is stored instead. ``unpack_hook(packed) -> Tensor`` runs when backward (or
    ``ctx.saved_tensors``) needs the tensor back, and must return a tensor with the same content,
    shape and dtype. Nested contexts follow torch: the innermost pair applies. Pass
    ``compose=True`` to apply this pair *after* the enclosing one instead (pack outer to inner,
    unpack inner to outer)::

        with saved_tensors_hooks(lambda t: t.numpy().copy(), hookgrad.from_numpy):
            y = (x * w).sum()
    """

    def __init__(self, pack_hook: Callable[[Any], Any], unpack_hook: Callable[[Any], Any],
                 compose: bool = False):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook
        self.compose = compose

    def __enter__(self):
        pair = (self.pack_hook, self.unpack_hook)
        if self.compose and _hook_state.top is not None:
            pair = compose_hooks(_hook_state.top, pair)
        _push(pair)
        return self

    def __exit__(self, *exc):
        _pop()
        return False


class save_on_cpu(saved_tensors_hooks):
    """torch's ``save_on_cpu``: saved tensors are kept as private copies (on this CPU-only engine
    the copy is what makes them independent of later in-place changes, as in torch)."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda"):
        def pack_to_cpu(tensor):
            return tensor.device, tensor.detach().clone()

        def unpack_from_cpu(packed):
            _device, tensor = packed
            return tensor

        super().__init__(pack_to_cpu, unpack_from_cpu)


class disable_saved_tensors_hooks:
    """Inside this context, setting saved-tensor hooks raises ``RuntimeError(error_message)``."""

    def __init__(self, error_message: str):
        self.error_message = error_message

    def __enter__(self):
        self.prev = _hook_state.disabled
        if _hook_state.stack:
            raise RuntimeError(self.error_message)
        _hook_state.disabled = self.error_message
        return self

    def __exit__(self, *exc):
        _hook_state.disabled = self.prev
        return False


class SavedTensorInfo(NamedTuple):
    """What a pack hook may ask about the tensor being saved (``current_saved_tensor()``)."""

    node: Any  # the backward node that is saving (its name: node.name())
    is_parameter: bool  # a leaf that requires grad: alive anyway, usually not worth packing
    is_input: bool  # one of the saving op's inputs
    is_output: bool  # one of the saving op's outputs
    storage_key: int  # equal for tensors that are views of one buffer
    nbytes: int  # bytes of the tensor's own elements


def current_saved_tensor() -> Optional[SavedTensorInfo]:
    """Inside a pack hook: which node is saving and what the tensor is; ``None`` elsewhere.

    Lets a saver skip parameters (``info.is_parameter``) and store views of one buffer once
    (``info.storage_key``) without guessing from the tensor alone.
    """
    return _hook_state.current


def storage_key(array: np.ndarray) -> int:
    """An id for the buffer an array views: equal for all views of one allocation."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return id(array)


def _root_array(array: np.ndarray) -> np.ndarray:
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


# ---------------------------------------------------------------------------------------------
# SavedTensor: the single door.
# ---------------------------------------------------------------------------------------------
class SavedTensor:
    """A tensor saved for backward. Records the version at save time; runs the pack hook."""

    __slots__ = ("_tensor", "_data", "_packed", "_unpack_hook", "_version_counter", "_version",
                 "_is_output", "_output_nr", "_edge", "_freed", "_shape", "_dtype", "_source",
                 "_root_ref", "_hooked", "_is_leaf", "__weakref__")

    def __init__(self, tensor, node, is_output: bool, is_input: bool = True):
        self._freed = False
        self._is_output = is_output
        self._version_counter = tensor._version_counter
        self._version = tensor._version_counter[0]
        data = tensor._data
        self._shape = data.shape
        self._dtype = data.dtype
        self._output_nr = tensor._output_nr
        self._is_leaf = tensor._grad_fn is None
        # what to print if a version check fails: "which is output 0 of MulBackward0"
        self._source = None if is_output or tensor._grad_fn is None else tensor._grad_fn
        self._packed = None
        self._unpack_hook = None
        self._root_ref = None
        self._hooked = False
        # keep the input's history for unpacking; an output's history is the saving node itself,
        # so it is re-attached at unpack time instead of stored (that would form a cycle)
        self._edge = None if is_output else _grad_edge(tensor)
        pair = _hook_state.top
        if pair is None:
            if is_output:  # keep the array only: a Tensor would hold its grad_fn, i.e. the node
                self._tensor = None
                self._data = data
            else:
                self._tensor = tensor
                self._data = None
            return
        self._tensor = None
        self._data = None
        self._pack(pair, tensor, node, is_input)

    def _pack(self, pair: tuple, tensor, node, is_input: bool) -> None:
        pack_hook, unpack_hook = pair
        info = SavedTensorInfo(node, tensor._grad_fn is None and tensor._requires_grad, is_input,
                               self._is_output, storage_key(tensor._data), tensor._data.nbytes)
        previous, _hook_state.current = _hook_state.current, info
        grad_enabled, _grad_state.enabled = _grad_state.enabled, False  # as torch: no recording
        try:
            self._packed = pack_hook(tensor)
        finally:
            _hook_state.current = previous
            _grad_state.enabled = grad_enabled
        self._unpack_hook = unpack_hook
        self._hooked = True
        self._root_ref = weakref.ref(_root_array(tensor._data))

    @property
    def shape(self) -> tuple:
        return self._shape

    @property
    def nbytes(self) -> int:
        return int(np.prod(self._shape, dtype=np.int64)) * self._dtype.itemsize

    def register_hooks(self, pack_hook: Callable, unpack_hook: Callable) -> None:
        """Pack this one saved tensor now with ``pack_hook``; ``unpack_hook`` reads it back."""
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("register_hooks() expects two callables (pack_hook, unpack_hook)")
        if self._freed:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor after it has been freed. Saved "
                "intermediate values of the graph are freed when you call .backward() or "
                "autograd.grad(). Specify retain_graph=True if you need to backward through the "
                "graph a second time or if you need to access saved variables after calling "
                "backward.")
        if self._hooked:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already "
                               "been set. Hint: only one pair of hooks is allowed at a time.")
        # the pack hook sees the data without history, as torch passes it
        tensor = self._tensor.detach() if self._tensor is not None else _plain_tensor(self._data)
        self._tensor = None
        self._data = None
        self._pack((pack_hook, unpack_hook), tensor, None, not self._is_output)

    def unpack(self, node=None):
        """The saved tensor, checked; ``node`` is the owner, re-attached to saved outputs."""
        if self._freed:
            raise RuntimeError(ERR_FREED)
        if self._hooked:
            return self._unpack_hooked(node)
        if self._version_counter[0] != self._version:
            self._raise_modified(node)
        if self._tensor is not None:
            return self._tensor
        return _make_tensor(self._data, self._version_counter, node, self._output_nr)

    def _unpack_hooked(self, node):
        hook = self._unpack_hook
        result = hook(self._packed)
        data = getattr(result, "_data", None)
        if not isinstance(data, np.ndarray):
            raise TypeError(f"Output of saved tensor unpack_hook '{_hook_name(hook)}' expected to "
                            f"be a Tensor but got result of type {type(result).__name__}")
        if data.shape != self._shape or data.dtype != self._dtype:
            raise RuntimeError(
                f"unpack hook '{_hook_name(hook)}' returned a tensor of shape {list(data.shape)} "
                f"and dtype {data.dtype}, but the saved tensor had shape {list(self._shape)} and "
                f"dtype {self._dtype}; an unpack hook must give back what was packed")
        # torch skips this check when hooks are set; we keep it when the memory is still shared
        if self._version_counter[0] != self._version:
            root = self._root_ref()
            if root is not None and np.shares_memory(root, data):
                self._raise_modified(node)
        if self._is_output:
            return _make_tensor(data, self._version_counter, node, self._output_nr)
        if self._edge is None:
            return result
        return _make_tensor(data, self._version_counter, self._edge[0], self._edge[1],
                            leaf_accumulator=self._is_leaf)

    def _raise_modified(self, node) -> None:
        data = self._tensor._data if self._tensor is not None else self._data
        shape = list(self._shape)
        kind = legacy_type_name(data) if data is not None else f"torch.{self._dtype}"
        message = ("one of the variables needed for gradient computation has been modified by an "
                   f"inplace operation: [{kind} {shape}]")
        # torch names the node that saved an output, and the current producer of a saved input
        if self._is_output:
            source = node
        elif self._tensor is not None:
            source = self._tensor.grad_fn
        else:
            source = self._source
        if source is not None:
            message += f", which is output {self._output_nr} of {_forward_name(source)},"
        message += (f" is at version {self._version_counter[0]}; expected version {self._version} "
                    "instead. Hint: enable anomaly detection to find the operation that failed to "
                    "compute its gradient, with torch.autograd.set_detect_anomaly(True, "
                    "check_nan=False).")
        raise RuntimeError(message)

    def release(self) -> None:
        self._freed = True
        self._tensor = None
        self._data = None
        self._packed = None
        self._edge = None


def _forward_name(node) -> str:
    """``MulBackward0`` -> ``Mul``: the forward op a node belongs to, as torch's messages say."""
    return re.sub(r"Backward\d*$", "", node.name())


def _hook_name(hook) -> str:
    return getattr(hook, "__name__", type(hook).__name__)


def _grad_edge(tensor):
    """The (node, output_nr) that a tensor's gradient flows into, or None if it needs none."""
    node = tensor._grad_fn if tensor._base is None else tensor.grad_fn  # views: not stale
    if node is not None:
        return node, tensor._output_nr
    if tensor._requires_grad:
        return tensor._grad_accumulator(), 0
    return None


# Tensor construction is injected by tensor.py to avoid a circular import.
_make_tensor: Callable = None  # type: ignore[assignment]
_plain_tensor: Callable = None  # type: ignore[assignment]


# ---------------------------------------------------------------------------------------------
# Nodes
# ---------------------------------------------------------------------------------------------
class Node:
    """A backward function in the graph (``tensor.grad_fn``).

    ``next_functions`` holds one ``(node, output_nr)`` edge per differentiable forward input.
    """

    __slots__ = ("next_functions", "_saved", "_pre_hooks", "_post_hooks", "_tensor_pre_hooks",
                 "_retains_grad_hooks", "_metadata", "_sequence_nr", "_input_meta",
                 "__weakref__")

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

    def name(self) -> str:
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
        return add_hook(self._post_hooks, fn)

    def register_prehook(self, fn: Callable) -> RemovableHandle:
        """``fn(grad_outputs) -> tuple | None`` runs before this node's backward; a returned tuple
        replaces the incoming gradients."""
        if self._pre_hooks is None:
            self._pre_hooks = OrderedDict()
        return add_hook(self._pre_hooks, fn)

    def _tensor_hooks_for(self, output_nr: int, store: "OrderedDict") -> None:
        """Attach a tensor's own hook dict (shared, so later registrations are seen)."""
        if self._tensor_pre_hooks is None:
            self._tensor_pre_hooks = {}
        self._tensor_pre_hooks[output_nr] = store

    def _register_retains_grad(self, output_nr: int, fn: Callable) -> None:
        if self._retains_grad_hooks is None:
            self._retains_grad_hooks = {}
        self._retains_grad_hooks[output_nr] = fn

    def release_variables(self) -> None:
        for saved in self._saved:
            if saved is not None:
                saved.release()

    def apply(self, grad_outputs: tuple) -> tuple:
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
        variable._accumulate_grad(grad)
        hooks = variable._post_accumulate_hooks()
        if hooks:
            for hook in tuple(hooks.values()):
                hook(variable)
        return ()


class GraphRoot(Node):
    """Feeds the initial gradients of a backward call (torch's GraphRoot)."""

    __slots__ = ()

    def name(self) -> str:
        return "GraphRoot"


def get_gradient_edge(tensor):
    """torch.autograd.graph.get_gradient_edge: the (node, output_nr) a tensor's grad flows to."""
    edge = _grad_edge(tensor)
    if edge is None:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does "
                           "not require gradients")
    return GradientEdge(*edge)


class GradientEdge(NamedTuple):
    node: Node
    output_nr: int


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


def register_multi_grad_hook(tensors, fn: Callable, *, mode: str = "all"):
    """Call ``fn`` once per backward over several tensors.

    ``mode="all"``: ``fn(grads)`` after the gradients of all of ``tensors`` that this backward
    computes are ready; ``grads`` has ``None`` for the others. ``mode="any"``: ``fn(grad)`` with
    the first gradient computed. Returns one handle that removes every per-tensor hook.
    """
    import threading as _threading

    from .engine import current_graph_task

    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    lock = _threading.Lock()
    state: dict = {}

    def expected_count(task) -> int:
        count = 0
        for tensor in tensors:
            edge = _grad_edge(tensor) if tensor.requires_grad else None
            if edge is not None and edge[0] in task.nodes:
                count += 1
        return count

    def make_hook(index: int):
        def hook(grad):
            task = current_graph_task()
            key = task.id if task is not None else None
            with lock:
                entry = state.setdefault(key, {"grads": [None] * len(tensors), "seen": 0,
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
        tensor._grad_accumulator() if tensor.requires_grad else None)
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


def increment_version(tensor) -> None:
    """Mark ``tensor`` as modified in place (torch.autograd.graph.increment_version)."""
    tensor._version_counter[0] += 1
