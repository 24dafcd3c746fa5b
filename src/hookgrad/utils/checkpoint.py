"""Activation checkpointing: keep only a region's inputs, recompute the rest during backward.

Written only against public API (``Function``, ``saved_tensors_hooks``,
``register_multi_grad_hook``), so it doubles as a worked example of those hooks.

The non-reentrant variant (``use_reentrant=False``) is torch's design built on saved-tensor hooks:
the region's inputs are saved by a ``Function`` whose node no backward reaches (so they pass the
single door, and an enclosing pack hook sees them); while the region runs forward, the pack hook
stores an empty ``_Holder`` instead of each tensor. A hook on the region's outputs marks each
backward call that enters the region; the first unpack in that call reruns the region once
(under ``enable_grad``, with the forward's RNG state) with a second pack hook that files each
recomputed tensor into the holder of the same index, and stops as soon as the last one is
filled. The reentrant variant is a Function that reruns the region inside its ``backward`` and
differentiates it there.
"""
from __future__ import annotations

import contextlib
import warnings
import weakref
from typing import Any, Callable, ContextManager, Dict, Iterable, Iterator, List, Tuple

import hookgrad
from hookgrad.autograd import Function, enable_grad, no_grad
from hookgrad.autograd.graph import register_multi_grad_hook, saved_tensors_hooks

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction",
           "check_backward_validity", "detach_variable", "noop_context_fn",
           "set_checkpoint_early_stop", "set_checkpoint_debug_enabled"]

_enable_checkpoint_early_stop = None
_checkpoint_debug_enabled = None
_DEFAULT_DETERMINISM_MODE = "default"


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool) -> Iterator[None]:
    """Whether non-reentrant checkpoints made in this context stop recomputing early."""
    global _enable_checkpoint_early_stop
    previous = _enable_checkpoint_early_stop
    _enable_checkpoint_early_stop = enable
    try:
        yield
    finally:
        _enable_checkpoint_early_stop = previous


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: Any) -> Iterator[None]:
    """Overrides ``debug`` of checkpoints made in this context (accepted, no extra logs here)."""
    global _checkpoint_debug_enabled
    previous = _checkpoint_debug_enabled
    _checkpoint_debug_enabled = enabled
    try:
        yield
    finally:
        _checkpoint_debug_enabled = previous


def noop_context_fn() -> Tuple[ContextManager, ContextManager]:
    """The default ``context_fn``: no context around the forward or the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs: Tuple[Any, ...]) -> Tuple[Any, ...]:
    """Each tensor detached but keeping ``requires_grad``: the reentrant rerun starts a graph
    of its own from these, so its backward stops at them."""
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    result = []
    for item in inputs:
        if isinstance(item, hookgrad.Tensor):
            detached = item.detach()
            detached.requires_grad = item.requires_grad
            item = detached
        result.append(item)
    return tuple(result)


def check_backward_validity(inputs: Iterable[Any]) -> None:
    """Warn (as torch) when no input needs a gradient: the reentrant variant then gives none."""
    if not any(i.requires_grad for i in inputs if isinstance(i, hookgrad.Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)


class CheckpointError(RuntimeError):
    """The recomputation did not save what the forward saved (count or metadata), or a saved
    tensor was unpacked twice in one backward call."""


# -- use_reentrant=True: a Function that reruns the region in its backward ---------------------
class CheckpointFunction(Function):
    """``use_reentrant=True``: keeps the inputs, runs the region without recording, and in
    backward reruns it with grad on and differentiates that rerun."""

    @staticmethod
    def forward(ctx: Any, run_function: Callable, preserve_rng_state: bool, *args: Any) -> Any:
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.fwd_rng_state = hookgrad.default_generator.get_state()
        ctx.inputs = [None if isinstance(a, hookgrad.Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, hookgrad.Tensor)]
        ctx.save_for_backward(*[args[i] for i in ctx.tensor_indices])
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> tuple:
        inputs = list(ctx.inputs)
        for index, tensor in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[index] = tensor
        with _forked_rng(ctx.fwd_rng_state if ctx.preserve_rng_state else None):
            detached = detach_variable(tuple(inputs))
            with enable_grad():
                outputs = ctx.run_function(*detached)
        if isinstance(outputs, hookgrad.Tensor):
            outputs = (outputs,)
        pairs = [(out, grad) for out, grad in zip(outputs, grad_outputs)
                 if isinstance(out, hookgrad.Tensor) and out.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not "
                               "necessary")
        hookgrad.autograd.backward([out for out, _ in pairs], [grad for _, grad in pairs])
        grads = tuple(item.grad if isinstance(item, hookgrad.Tensor) else None
                      for item in detached)
        return (None, None) + grads


@contextlib.contextmanager
def _forked_rng(state: Any) -> Iterator[None]:
    """Run with the generator set to ``state`` (if given), then restore the current state."""
    if state is None:
        yield
        return
    generator = hookgrad.default_generator
    current = generator.get_state()
    generator.set_state(state)
    try:
        yield
    finally:
        generator.set_state(current)


# -- use_reentrant=False: saved-tensor hooks ---------------------------------------------------
class _Handle:
    """Identifies one recomputed tensor of one backward call (a weak-dict key)."""

    __slots__ = ("__weakref__",)


class _Holder:
    """What the pack hook stores instead of a tensor: per backward call, the handle under which
    the recomputed tensor is filed."""

    __slots__ = ("handles", "__weakref__")

    def __init__(self) -> None:
        self.handles: Any = weakref.WeakKeyDictionary()  # backward call -> _Handle


class _StopRecomputationError(Exception):
    pass


class _BackwardCall:
    """One backward call through a checkpointed region (a weak-dict key: what the call
    recomputed lives as long as the call's id is held)."""

    __slots__ = ("__weakref__",)


class _NoopSaveInputs(Function):
    """Keeps a region's inputs for recomputation. Its output is held only by the region's frame,
    so no backward ever reaches this node: it exists to own what it saved."""

    @staticmethod
    def forward(ctx: Any, dummy: Any, *args: Any) -> Any:
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, hookgrad.Tensor)]
        ctx.non_tensor_args = [None if isinstance(a, hookgrad.Tensor) else a for a in args]
        ctx.save_for_backward(*[args[i] for i in ctx.tensor_indices])
        return hookgrad.empty((0,))

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise AssertionError("the node that keeps a checkpoint's inputs is never differentiated")


def _tensors_in(value: Any) -> List[Any]:
    """The tensors of a region's result, however nested in tuples, lists and dicts."""
    if isinstance(value, hookgrad.Tensor):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (tuple, list)):
        return [t for item in value for t in _tensors_in(item)]
    return []


def _default_meta_extractor(tensor: "hookgrad.Tensor") -> Dict[str, Any]:
    return {"shape": tensor.shape, "dtype": tensor.dtype, "device": tensor.device}


_METADATA_FNS: Dict[str, Callable[[Any], Any]] = {
    _DEFAULT_DETERMINISM_MODE: _default_meta_extractor,
    "none": lambda _: None,
}

_DEBUG_TIP = ("\nTip: To see a more detailed error message, either pass `debug=True` to\n"
              "`torch.utils.checkpoint.checkpoint(...)` or wrap the code block\n"
              "with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to\n"
              "enable checkpoint-debug mode globally.\n")


class _CheckpointFrame:
    """One checkpointed region: its saved inputs, a weak holder per tensor packed in forward,
    and what each backward call (graph task) recomputed."""

    def __init__(self, recompute_fn: Callable, early_stop: bool,
                 metadata_fn: Callable[[Any], Any]) -> None:
        self.recompute_fn = recompute_fn
        self.early_stop = early_stop
        self.metadata_fn = metadata_fn
        self.saved_args: List[Tuple[bool, Any]] = []
        self.weak_holders: List[weakref.ref] = []
        self.x_metadatas: List[Any] = []
        # keyed by backward call; weakly, so a finished call's recomputed tensors go with it
        self.recomputed: Any = weakref.WeakKeyDictionary()
        self.recomp_counter: Any = weakref.WeakKeyDictionary()
        self.is_recomputed: Any = weakref.WeakKeyDictionary()
        self.forward_completed = False
        self.ignore_saved_mismatch = False
        self.input_saver: Any = None
        self.backward_call: Any = None
        self.output_hook: Any = None

    def save_inputs(self, *args: Any) -> None:
        # through ``ctx.save_for_backward``: the single door, so an enclosing pack hook sees them
        dummy = hookgrad.empty((0,), requires_grad=True)
        self.input_saver = _NoopSaveInputs.apply(dummy, *args)

    def get_inputs(self) -> List[Any]:
        ctx = self.input_saver.grad_fn
        inputs = list(ctx.non_tensor_args)
        for index, tensor in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[index] = tensor
        return inputs

    def mark_backward_calls(self, outputs: Any) -> None:
        """A new id each time a backward call reaches the region's outputs: what the region
        recomputed belongs to that call (a second ``backward`` recomputes again)."""
        tensors = [t for t in _tensors_in(outputs) if t.requires_grad]
        if not tensors:
            return
        frame_ref = weakref.ref(self)

        def entered(_grad: Any) -> None:
            frame = frame_ref()
            if frame is not None:
                frame.backward_call = _BackwardCall()

        self.output_hook = register_multi_grad_hook(tensors, entered, mode="any")

    def current_call(self) -> Any:
        """The backward call an unpack belongs to; an unpack outside any marked call (reading
        a saved tensor off a node by hand) gets a call of its own, as in torch."""
        return self.backward_call if self.backward_call is not None else _BackwardCall()

    def check_recomputed_tensors_match(self, gid: Any) -> None:
        if self.ignore_saved_mismatch:
            return
        if len(self.weak_holders) != self.recomp_counter[gid]:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                "original forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.weak_holders)}\n"
                f"Number of tensors saved during recomputation: {self.recomp_counter[gid]}.\n"
                + _DEBUG_TIP)
        mismatches = ""
        for index, weak_holder in enumerate(self.weak_holders):
            holder = weak_holder()
            if holder is None:
                continue
            recomputed = self.recomputed[gid][holder.handles[gid]]
            saved_meta, new_meta = self.x_metadatas[index], self.metadata_fn(recomputed)
            if saved_meta != new_meta:
                mismatches += (f"tensor at position {index}:\nsaved metadata: {saved_meta}\n"
                               f"recomputed metadata: {new_meta}\n")
        if mismatches:
            raise CheckpointError("torch.utils.checkpoint: Recomputed values for the following "
                                  "tensors have different metadata than during the forward "
                                  f"pass.\n{mismatches}.\n" + _DEBUG_TIP)


class _recomputation_hook(saved_tensors_hooks):  # noqa: N801 - torch's name
    """Active while the region reruns: files each tensor the rerun saves into the holder that
    the original forward left at the same position."""

    def __init__(self, frame_ref: weakref.ref, gid: Any) -> None:
        def pack_hook(tensor):
            tensor = tensor.detach() if tensor.requires_grad else tensor
            frame = frame_ref()
            index = frame.recomp_counter[gid]
            frame.recomp_counter[gid] += 1
            if index >= len(frame.weak_holders):
                if not frame.forward_completed:
                    frame.ignore_saved_mismatch = True
                    return tensor
                raise CheckpointError("torch.utils.checkpoint: trying to save more tensors "
                                      "during recomputation than during the original forward "
                                      "pass.\n" + _DEBUG_TIP)
            holder = frame.weak_holders[index]()
            if holder is not None:
                holder.handles[gid] = _Handle()
                frame.recomputed[gid][holder.handles[gid]] = tensor
            if frame.early_stop and frame.recomp_counter[gid] == len(frame.weak_holders):
                raise _StopRecomputationError
            return tensor

        super().__init__(pack_hook, lambda tensor: tensor)


class _checkpoint_hook(saved_tensors_hooks):  # noqa: N801 - torch's name
    """Active while the region runs forward: stores a holder instead of each saved tensor; the
    first unpack of a backward call triggers the recomputation."""

    def __init__(self, frame: _CheckpointFrame) -> None:
        def pack_hook(tensor):
            holder = _Holder()
            frame.weak_holders.append(weakref.ref(holder))
            with no_grad():
                frame.x_metadatas.append(frame.metadata_fn(tensor))
            return holder

        def unpack_hook(holder):
            gid = frame.current_call()
            if not frame.is_recomputed.get(gid, False):
                frame.recomputed[gid] = weakref.WeakKeyDictionary()
                frame.recomp_counter[gid] = 0
                args = frame.get_inputs()
                try:
                    with _recomputation_hook(weakref.ref(frame), gid), enable_grad():
                        frame.recompute_fn(*args)
                except _StopRecomputationError:
                    pass
                frame.is_recomputed[gid] = True
                frame.check_recomputed_tensors_match(gid)
            if holder.handles.get(gid) is None:
                raise CheckpointError("torch.utils.checkpoint: Unpack is being triggered for a "
                                      "tensor that was already unpacked once. If you are calling "
                                      "ctx.saved_tensors in backward, make sure to do so only "
                                      "once. Otherwise please open an issue with details on your "
                                      "use case.")
            result = frame.recomputed[gid][holder.handles[gid]]
            holder.handles[gid] = None
            return result

        super().__init__(pack_hook, unpack_hook)


def _checkpoint_without_reentrant(function: Callable, preserve_rng_state: bool,
                                  context_fn: Callable, determinism_check: str, debug: bool,
                                  early_stop: bool, args: tuple, kwargs: dict) -> Any:
    if (_checkpoint_debug_enabled if _checkpoint_debug_enabled is not None else debug) \
            and context_fn is not noop_context_fn:
        raise ValueError("debug=True is incompatible with non-default context_fn")
    if determinism_check not in _METADATA_FNS:
        raise ValueError(f"determinism_check should be one of {list(_METADATA_FNS)}, but got "
                         f"{determinism_check}")
    forward_context, recompute_context = context_fn()
    rng_state = hookgrad.default_generator.get_state() if preserve_rng_state else None

    def recompute_fn(*inputs: Any) -> None:
        with _forked_rng(rng_state), recompute_context:
            function(*inputs, **kwargs)

    stop = _enable_checkpoint_early_stop if _enable_checkpoint_early_stop is not None \
        else early_stop
    frame = _CheckpointFrame(recompute_fn, stop, _METADATA_FNS[determinism_check])
    if not hookgrad.is_grad_enabled():
        return function(*args, **kwargs)
    frame.save_inputs(*args)
    suppressed = True
    with _checkpoint_hook(frame), forward_context:
        result = function(*args, **kwargs)
        suppressed = False
    if suppressed:
        raise RuntimeError("torch.utils.checkpoint: the forward context provided by context_fn "
                           "suppressed an exception raised during the checkpointed forward. This "
                           "is not supported because checkpoint cannot return a value for a "
                           "failed forward.")
    frame.forward_completed = True
    frame.mark_backward_calls(result)
    return result


def checkpoint(function: Callable, *args: Any, use_reentrant: Any = None,
               context_fn: Callable[[], Tuple[ContextManager, ContextManager]] = noop_context_fn,
               determinism_check: str = _DEFAULT_DETERMINISM_MODE, debug: bool = False,
               early_stop: bool = True, **kwargs: Any) -> Any:
    """Run ``function(*args, **kwargs)`` keeping only its inputs for backward; what it would
    have saved is recomputed (once per backward call) when backward first needs it.

    Pass ``use_reentrant=False`` (recommended; torch warns when it is not given and then uses
    the reentrant variant). ``preserve_rng_state=True`` replays the forward's random numbers::

        out = checkpoint(block, x, use_reentrant=False)
    """
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed "
                      "explicitly. Starting in PyTorch 2.9, calling checkpoint without "
                      "use_reentrant will raise an exception. use_reentrant=False is "
                      "recommended, but if you need to preserve the current default behavior, "
                      "you can pass use_reentrant=True. Refer to docs for more details on the "
                      "differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    return _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check, debug,
                                         early_stop, args, kwargs)


def checkpoint_sequential(functions: Any, segments: int, input: Any, use_reentrant: Any = None,
                          **kwargs: Any) -> Any:
    """Split ``functions`` (a Sequential or a list) into ``segments`` runs; every run but the
    last is checkpointed."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter "
                      "should be passed explicitly. In version 2.9 we will raise an exception if "
                      "use_reentrant is not passed. use_reentrant=False is recommended, but if "
                      "you need to preserve the current default behavior, you can pass "
                      "use_reentrant=True. Refer to docs for more details on the differences "
                      "between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))

    def run_function(start: int, end: int, functions: List[Callable]) -> Callable:
        def forward(value):
            for index in range(start, end + 1):
                value = functions[index](value)
            return value

        return forward

    if isinstance(functions, hookgrad.nn.Sequential):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input,
                           use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)
