"""The single door for saved tensors: SavedTensor and the saved-tensor hooks.

Every tensor that an op or a custom Function keeps for backward becomes a ``SavedTensor`` here
(``save_builtin`` / ``save_user``, called by ``Function.apply``). ``SavedTensor.__init__`` is the
only place a pack hook runs and a version is recorded; ``SavedTensor.unpack`` is the only place an
unpack hook runs and a version is checked.
"""
from __future__ import annotations

import threading
import weakref
from typing import Any, Callable, NamedTuple, Optional

import numpy as np

from .._dtype import legacy_type_name
from ..tensor import Tensor, root_array
from .._grad_state import INFERENCE_SAVE_ERROR, InferenceVersion
from .grad_mode import _state as _grad_state
from .node import forward_name
from .tensor_hooks import grad_edge

ERR_FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)

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
    return id(root_array(array))


# ---------------------------------------------------------------------------------------------
# SavedTensor: the single door.
# ---------------------------------------------------------------------------------------------
class SavedTensor:
    """A tensor saved for backward. Records the version at save time; runs the pack hook."""

    __slots__ = ("_tensor", "_data", "_packed", "_unpack_hook", "_version_counter", "_version",
                 "_is_output", "_output_nr", "_edge", "_freed", "_shape", "_dtype", "_source",
                 "_root_ref", "_hooked", "_is_leaf", "__weakref__")

    def __init__(self, tensor, node, is_output: bool, is_input: bool = True,
                 version: Optional[int] = None):
        self._version_counter = counter = tensor._version_counter
        if type(counter) is InferenceVersion:
            raise RuntimeError(INFERENCE_SAVE_ERROR)
        self._freed = False
        self._is_output = is_output
        # ``version``: the tensor's version when the op read it, if the op has changed it since
        self._version = tensor._version_counter[0] if version is None else version
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
        # the edge a hooked unpack re-attaches to an input (``_pack_edge``); without hooks the
        # input itself is kept, history and all, and needs none
        self._edge = None
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
        self._pack_edge(tensor)
        self._pack(pair, tensor, node, is_input)

    def _pack_edge(self, tensor) -> None:
        """Before packing: the input's history, for unpacking (as torch, read when the hooks are
        set); an output's history is the saving node itself, re-attached at unpack time instead
        of stored (that would form a cycle)."""
        if not self._is_output:
            self._edge = grad_edge(tensor)

    def _pack(self, pair: tuple, tensor, node, is_input: bool) -> None:
        pack_hook, unpack_hook = pair
        info = SavedTensorInfo(node, tensor._grad_fn is None and tensor._requires_grad, is_input,
                               self._is_output, storage_key(tensor._data), tensor._data.nbytes)
        previous, _hook_state.current = _hook_state.current, info
        grad_enabled, _grad_state.enabled = _grad_state.enabled, False  # as torch: no recording
        version = tensor._version_counter[0]
        try:
            self._packed = pack_hook(tensor)
        finally:
            _hook_state.current = previous
            _grad_state.enabled = grad_enabled
        # the tensor is the caller's own (or the op's input): writing to it would corrupt it
        if tensor._version_counter[0] != version:
            raise RuntimeError(
                "A saved tensor pack hook is modifying its input in place. Tensors provided as "
                "input to pack hook cannot be modified by in-place operations as this can lead "
                "to unexpected side-effects. Please open an issue if you need to perform in-place "
                "operations on the input to a pack hook.")
        self._unpack_hook = unpack_hook
        self._hooked = True
        self._root_ref = weakref.ref(root_array(tensor._data))

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
        if self._tensor is not None:
            self._pack_edge(self._tensor)
        # the pack hook sees the data without history, as torch passes it
        tensor = self._tensor.detach() if self._tensor is not None else Tensor._make(self._data)
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
        return _make_saved(self._data, self._version_counter, node, self._output_nr)

    def plain_like(self, shape: tuple, dtype: np.dtype) -> bool:
        """Whether ``unpack_array`` may give this saved tensor's array to a formula running on
        arrays next to a gradient of ``shape`` and ``dtype``: kept without hooks, not freed,
        and of that shape, dtype and a row-major layout (so NumPy's elementwise results are
        laid out and typed exactly as torch's)."""
        if self._hooked or self._freed:
            return False
        data = self._data if self._tensor is None else self._tensor._data
        return data.shape == shape and data.dtype is dtype and data.flags.c_contiguous

    def unpack_array(self, node=None) -> np.ndarray:
        """``unpack`` for a formula running on arrays (after ``plain_like``): the version is
        checked the same way, the array is given without a Tensor around it."""
        if self._version_counter[0] != self._version:
            self._raise_modified(node)
        return self._data if self._tensor is None else self._tensor._data

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
        # the result keeps the versions of what the hook gave back, as in torch: the original's
        # when it returned the original (or a detached alias), its own when it made a copy
        versions = result._version_counter
        if self._is_output:
            return _make_saved(data, versions, node, self._output_nr)
        if self._edge is None:
            return result
        return _make_saved(data, versions, self._edge[0], self._edge[1],
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
            message += f", which is output {self._output_nr} of {forward_name(source)},"
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


def save_tensor(tensor: Tensor) -> SavedTensor:
    """Keep ``tensor`` for later through the single door, owned by no node: the pack hooks in
    effect run now, and ``.unpack()`` runs the unpack hook and checks the version.

    For code that keeps tensors across a backward call outside any op, as activation
    checkpointing keeps a region's inputs::

        saved = save_tensor(x)
        ...
        x_again = saved.unpack()
    """
    return SavedTensor(tensor, None, is_output=False)


def _hook_name(hook) -> str:
    return getattr(hook, "__name__", type(hook).__name__)


def _make_saved(array, version_counter, grad_fn, output_nr, leaf_accumulator=False) -> Tensor:
    """The tensor an unpack gives back: ``array`` re-attached to its version counter and to
    the edge its gradient flows into."""
    tensor = Tensor._make(array)
    tensor._version_counter = version_counter
    if leaf_accumulator:
        tensor._requires_grad = True
        tensor._extras().grad_accumulator = grad_fn
    elif grad_fn is not None:
        tensor._grad_fn = grad_fn
        tensor._output_nr = output_nr
    return tensor


# ---------------------------------------------------------------------------------------------
# What a Function's forward asked to save, through the door
# ---------------------------------------------------------------------------------------------
def _saved_output(node, args, raw_outputs, results, item, version=None):
    """A SavedTensor for ``item`` if it is one of the outputs (or its array), else ``None``."""
    for raw, result in zip(raw_outputs, results):
        if item is raw or item is result:
            return SavedTensor(result, node, is_output=result._grad_fn is node,
                               is_input=_is_one_of(result, args), version=version)
    return None


def _is_one_of(tensor, args: tuple) -> bool:
    for arg in args:
        if arg is tensor:
            return True
    return False


def save_user(node, args, raw_outputs, results, to_save) -> tuple:
    """A custom Function saved tensors: outputs keep only their array (the node is their
    history), anything else is saved as the tensor it is."""
    for position, item in enumerate(to_save):
        if item is not None and not isinstance(item, Tensor):
            raise TypeError("save_for_backward can only save variables, but argument "
                            f"{position} is of type {type(item).__name__}")
    saved = []
    for item in to_save:
        if item is None:
            saved.append(None)
            continue
        entry = _saved_output(node, args, raw_outputs, results, item)
        if entry is None:
            entry = SavedTensor(item, node, is_output=False, is_input=any(item is a for a in args))
        saved.append(entry)
    return tuple(saved)


def save_builtin(node, args, arrays, raw_outputs, results, to_save, inplace: bool) -> tuple:
    """A built-in op saved arrays (or a tensor it was handed): each is matched to the output
    or input it is, so that it keeps that tensor's version counter and history. An input is
    matched by its position (``arrays[i]`` is the array forward got for ``args[i]``), never by
    the array alone: tensors sharing one ndarray (``x`` and ``x.detach()``) have different
    histories.

    An in-place op saved its inputs before writing, as torch does: an input that shares the
    written tensor's versions is recorded at the version before this op (so ``x.mul_(x)``
    fails the check in backward as in torch)."""
    written = args[0]._version_counter if inplace else None
    saved = []
    for item in to_save:
        if item is None:
            saved.append(None)
            continue
        overwritten = written is not None and any(
            isinstance(a, Tensor) and arr is item for a, arr in zip(args[1:], arrays[1:]))
        entry = _saved_output(node, args, raw_outputs, results, item,
                              written[0] - 1 if overwritten else None)
        if entry is None:
            entry = _saved_input(node, args, arrays, item, written)
        saved.append(entry)
    return tuple(saved)


# Arrays that stand for a caller's tensor in a built-in op's forward: an op that takes an index
# tensor reads it as its array before it is applied (``array_for_forward``). Saved, such an array
# is that tensor, with its version counter, so changing the indices before backward is torch's
# error rather than the gradient of other indices. Keyed by the array's id, checked by identity.
_array_owners: "weakref.WeakValueDictionary" = weakref.WeakValueDictionary()


def array_for_forward(tensor: Tensor) -> np.ndarray:
    """``tensor``'s array, to pass to a built-in op's forward where the op takes it as an array
    (an index): if forward saves it, the tensor is saved, version and all."""
    array = tensor._data
    _array_owners[id(array)] = tensor
    return array


def _saved_input(node, args, arrays, item, written) -> SavedTensor:
    if isinstance(item, Tensor):  # a clone taken by the caller before an in-place write
        return SavedTensor(item, node, is_output=False)
    for arg, array in zip(args, arrays):
        if isinstance(arg, Tensor) and array is item:
            version = written[0] - 1 if arg._version_counter is written else None
            return SavedTensor(arg, node, is_output=False, version=version)
    owner = _array_owners.get(id(item))
    if owner is not None and owner._data is item:
        return SavedTensor(owner, node, is_output=False)
    return SavedTensor(Tensor._make(item), node, False, is_input=False)  # an intermediate
