"""Function: the one contract for built-in ops and user-defined autograd functions.

``apply`` is the one place a node is created and connected: it computes ``needs_input_grad``,
gives outputs their ``grad_fn``, bumps the versions of tensors changed in place, and hands what
forward saved to the single door (``saved.py``). There are two paths:

* user-defined ``Function``: forward runs on Tensors with grad mode off (``_apply_user``);
* ``BuiltinFunction`` (the base of every op in ``ops/``): forward runs on NumPy arrays, and when
  no input needs a gradient nothing is recorded at all (``BuiltinFunction.apply``, then
  ``record_builtin``).
"""
from __future__ import annotations

import functools
import inspect
from typing import Any

import numpy as np

from ..tensor import Tensor, has_internal_overlap
from . import grad_mode
from .grad_mode import _state
from .ctx import FunctionCtx
from .node import Node, partial_runs, tasks
from .outputs import (builtin_inputs, builtin_outputs, check_dirty_returned, connect,
                      pending_edges, set_output_meta, untracked_outputs, user_outputs)
from .saved import ERR_FREED, SavedTensor, save_builtin, save_user
from .tensor_hooks import grad_edge
from .views import check_inplace, check_rebase


def _zeros(meta: tuple, builtin: bool) -> Tensor:
    """The zero gradient of an output that got none. A built-in formula never reads the
    gradient of an integer output (max pooling's indices, sort's positions): it gets one
    read-only zero broadcast to the shape instead of an array of that size."""
    shape, dtype = meta
    if builtin and np.dtype(dtype).kind in "biu":
        return Tensor._make(np.broadcast_to(np.zeros((), dtype), shape))
    return Tensor._make(np.zeros(shape, dtype))


class BackwardCFunction(Node, FunctionCtx):
    """Base of every user Function's node class (``MyFnBackward``)."""

    _forward_cls: Any = None
    _tensor_positions: tuple = ()
    _output_meta: tuple = ()

    __init__ = Node._init_node  # one node per recorded op: no frame of its own

    def __repr__(self) -> str:
        return f"<torch.autograd.function.{self.name()} object at {hex(id(self))}>"

    def __getattr__(self, name: str):
        # torch's inspection names: grad_fn._saved_self, grad_fn._raw_saved_other, ...
        forward_cls = type(self)._forward_cls
        for prefix, raw in (("_raw_saved_", True), ("_saved_", False)):
            if not name.startswith(prefix):
                continue
            key = name[len(prefix):]
            if key in forward_cls.saved_names:
                return self._saved_slot(forward_cls, key, raw)
            if not raw and key in forward_cls.saved_values:
                # a non-tensor argument torch keeps on the node (alpha, exponent, min ...)
                return self.__dict__.get(forward_cls.saved_values[key])
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def release_variables(self) -> None:
        for saved in self._saved:  # Node.release_variables, inline: once per node run
            if saved is not None:
                saved.release()
        if self._forward_cls._wrapped_scalars and self.__dict__.get("number") is not None:
            # torch saves a number operand (x * 3) as a wrapped tensor: it is freed too
            self.__dict__["number_freed"] = True

    def saved_number(self):
        """The Python-number operand of ``x * 3``, or torch's error once the graph is freed."""
        if self.__dict__.get("number_freed"):
            raise RuntimeError(ERR_FREED)
        return self.__dict__.get("number")

    def _saved_slot(self, forward_cls, key: str, raw: bool):
        index = forward_cls.saved_names.index(key)
        saved = self._saved
        if saved is not None and index < len(saved):
            saved = saved[index]
            if saved is None or raw:
                return saved
            return saved.unpack(self)
        # nothing was saved: a Python number took this tensor's place (x * 3). torch keeps
        # it as a wrapped 0-dim tensor (int64, float64 or bool) outside the pack hooks;
        # the slots that only the number's gradient would have needed stay None
        number = self.__dict__.get("number")
        if number is None or raw or key not in _wrapped_names(forward_cls):
            return None
        return Tensor._make(np.asarray(self.saved_number()))  # raises once the graph is freed

    def _materialized(self, grad_outputs: tuple, builtin: bool = False) -> tuple:
        # a non-tensor output (meta ``None``) has no gradient to make: it stays ``None``
        return tuple(_zeros(meta, builtin) if g is None and meta is not None else g
                     for g, meta in zip(grad_outputs, self._output_meta))

    def apply(self, grad_outputs: tuple) -> tuple:
        if self._materialize_grads and any(g is None for g in grad_outputs):
            grad_outputs = self._materialized(grad_outputs)
        grads = self._forward_cls.backward(self, *grad_outputs)
        if not isinstance(grads, tuple):
            grads = (grads,)
        expected = len(self.needs_input_grad)
        if len(grads) != expected:
            if len(grads) > expected and all(g is None for g in grads[expected:]):
                grads = grads[:expected]
            else:
                raise RuntimeError(f"function {self.name()} returned an incorrect number of "
                                   f"gradients (expected {expected}, got {len(grads)})")
        positions = self._tensor_positions
        for i, grad in enumerate(grads):
            if grad is not None and i not in positions:
                raise RuntimeError(
                    f"function {self.name()} returned a gradient different than None at "
                    f"position {i + 1}, but the corresponding forward input was not a Variable")
        return tuple(grads[i] if i < len(grads) else None for i in positions)


class BuiltinBackward(BackwardCFunction):
    """Base of every built-in op's node class (``MulBackward0``). Its formulas compute only the
    gradients that are needed, like torch's: when the running backward call wants only some
    inputs (``autograd.grad``), the others are marked as not needed while it runs."""

    # ``runner(grad_outputs) -> tuple | None`` (a method): an op whose formula also reads right on
    # NumPy arrays (ops/_base.py ``formula_on_arrays``) runs it there when no graph of the
    # backward is recorded; None means "not here", and the formula runs on Tensors
    _array_runner: Any = None

    def __repr__(self) -> str:
        return f"<{self.name()} object at {hex(id(self))}>"

    def apply(self, grad_outputs: tuple) -> tuple:
        if (grad_outputs[0] is None if len(grad_outputs) == 1
                else any(g is None for g in grad_outputs)):
            if self._materialize_grads:
                grad_outputs = self._materialized(grad_outputs, builtin=True)
            elif all(g is None for g in grad_outputs):
                return (None,) * len(self.next_functions)
        running = tasks.stack if partial_runs[0] else None
        if running:
            task = running[-1]
            if task.executes is not None and task.running is self:
                return self._apply_wanted(grad_outputs, task.executes)
        runner = self._array_runner
        grads = None if runner is None or _state.enabled else runner(grad_outputs)
        if grads is None:
            grads = self._forward_cls.backward(self, *grad_outputs)
        if type(grads) is not tuple:
            grads = (grads,)
        needs = self.needs_input_grad
        count = len(grads)
        positions = self._tensor_positions
        if self._forward_cls._tensor_list:  # cat/stack: torch's formula gives every part, and
            return tuple(grads[i] if i < count else None for i in positions)  # hooks see all
        if len(positions) == 1:  # one tensor input
            i = positions[0]
            return (grads[i] if i < count and needs[i] else None,)
        result = []
        for i in positions:
            result.append(grads[i] if i < count and needs[i] else None)
        return tuple(result)

    def _apply_wanted(self, grad_outputs: tuple, executes) -> tuple:
        """Backward when the engine runs only part of the graph: inputs whose edge leads
        nowhere wanted are marked as not needed while the formula runs."""
        needs = self.needs_input_grad
        edges = [(None, 0)] * len(needs)
        for edge, position in zip(self.next_functions, self._tensor_positions):
            edges[position] = edge
        wanted = tuple(need and (child in executes) for need, (child, _) in zip(needs, edges))
        self.needs_input_grad = needs if self._forward_cls._tensor_list and any(wanted) \
            else wanted
        try:
            grads = self._forward_cls.backward(self, *grad_outputs)
        finally:
            wanted, self.needs_input_grad = self.needs_input_grad, needs
        if type(grads) is not tuple:
            grads = (grads,)
        count = len(grads)
        every = self._forward_cls._tensor_list and any(wanted)  # as in _apply
        return tuple(grads[i] if i < count and (every or wanted[i]) else None
                     for i in self._tensor_positions)


class Function:
    """Base class for differentiable operations (torch.autograd.Function).

    Subclass it with static ``forward(ctx, *args)`` and ``backward(ctx, *grad_outputs)`` (or
    ``forward(*args)`` plus ``setup_context(ctx, inputs, output)``) and call ``apply``::

        class Square(Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, grad_output):
                (x,) = ctx.saved_tensors
                return 2 * x * grad_output
    """

    _backward_cls: Any = BackwardCFunction
    _ctx_base: Any = BackwardCFunction  # the node class each subclass's ctx derives from
    _view_of: Any = None  # built-in view ops: index of the input the output views
    _inplace = False  # built-in in-place ops: input 0 is modified and returned
    # an in-place op that writes one value everywhere (fill_, zero_) is well defined on memory
    # that several elements share, so torch lets it write there
    _overlap_ok = False
    _multi_view = False  # outputs are several views (split): in-place on them is refused
    # the tensor inputs are one list (cat, stack): torch's node computes the gradient of every
    # tensor in it once any is wanted, also when only part of the graph runs
    _tensor_list = False
    _wrapped_scalars: tuple = ()  # positions where torch wraps a Python number as an input
    node_name: Any = None  # name of the backward node; default "<Class>Backward"
    saved_names: tuple = ()  # torch's names of the saved tensors, in save order
    # torch's names of the non-tensor arguments its node keeps (``grad_fn._saved_alpha``),
    # each mapped to the ctx attribute that holds it
    saved_values: dict = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        name = cls.__dict__.get("node_name") or f"{cls.__name__}Backward"
        cls._backward_cls = type(name, (cls._ctx_base,),
                                 {"_forward_cls": cls, "__module__": cls.__module__})
        cls._uses_setup_context = cls.setup_context is not Function.setup_context

    @staticmethod
    def forward(ctx, *args, **kwargs):
        """The op's computation, written by the subclass: ``forward(ctx, *args)`` or, with
        ``setup_context``, ``forward(*args)``."""
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs: tuple, output) -> None:
        """Saves what backward needs (``ctx.save_for_backward``) when ``forward`` does not take
        ``ctx``."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        """Written by the subclass: gradients of the inputs from the gradients of the outputs, one
        per input (None where none flows)."""
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode AD.")

    @classmethod
    def vjp(cls, ctx, *grad_outputs):
        """Same as ``backward`` (the name torch.func uses)."""
        return cls.backward(ctx, *grad_outputs)

    @classmethod
    def apply(cls, *args, **kwargs):
        """Runs the Function on ``args`` and records its node in the graph; call this, never
        ``forward``."""
        return _apply_user(cls, args, kwargs)


class BuiltinFunction(Function):
    """A Function whose ``forward`` takes and returns NumPy arrays (non-tensor arguments stay
    Python values) and whose ``backward`` is written with Tensor ops. The base of ``ops.Op``."""

    _ctx_base = BuiltinBackward

    @classmethod
    def apply(cls, *args, **kwargs):
        """The built-in path: forward on arrays; when no input needs a gradient, a throwaway
        ctx and plain outputs (the cheap path every op takes under no_grad)."""
        grad_on = _state.enabled
        any_needs = False
        if cls._inplace and grad_on and args[0]._base is not None:
            check_inplace(args[0])  # before reading grad_fn below rebuilds a stale view's
        arrays = list(args)  # forward's arguments: each tensor's array in its place
        for i, arg in enumerate(args):
            if isinstance(arg, Tensor):
                arrays[i] = arg._data
                if grad_on and not any_needs and (
                        arg._requires_grad or arg._grad_fn is not None
                        or (arg._base is not None and _view_needs(arg))):
                    any_needs = True
        if cls._inplace:
            target = args[0]
            if not target._data.flags.writeable or (
                    not cls._overlap_ok and has_internal_overlap(target._data)):
                raise RuntimeError(_OVERLAP_ERROR)
            if any_needs or (grad_on and target._base is not None):
                check_inplace(target)
            if any_needs and target._base is not None and target._data.dtype.kind in "fcV":
                check_rebase(target)  # before forward writes: a refusal must change nothing
            if any_needs:
                for arg in args[1:]:
                    if isinstance(arg, Tensor) and arg._base is not None:
                        arg.grad_fn  # a stale split output raises here, before the write
        if not any_needs:
            ctx = _UntrackedCtx()
            ctx.needs_input_grad = _no_grads(len(args))
            outputs = cls.forward(ctx, *arrays, **kwargs)
            if type(outputs) is np.ndarray and cls._view_of is None and not cls._inplace:
                return Tensor._make(outputs)  # the common case, inline
            return untracked_outputs(cls, args, outputs)
        if len(args) == 1:
            tensor = args[0]  # the one argument, a tensor that needs a gradient
            if tensor._base is None:  # no view: its edge is known now (builtin_inputs's)
                history = tensor._grad_fn
                array = tensor._data
                return record_builtin(cls, args, arrays, kwargs, (
                    _ONE_NEED, _ONE_POSITION,
                    [(history, tensor._output_nr) if history is not None else grad_edge(tensor)],
                    ((array.shape, array.dtype),)))
        return record_builtin(cls, args, arrays, kwargs)


_ONE_NEED = (True,)
_ONE_POSITION = (0,)


def _view_needs(view: Tensor) -> bool:
    """A view is recorded through when it has a history (looked up now, so a stale one is
    rebuilt, or refused) or requires grad without one (its base does: torch's view that acts
    as a leaf, whose edge goes nowhere)."""
    return view.grad_fn is not None or view.requires_grad


def _needs_grad(arg) -> bool:
    return isinstance(arg, Tensor) and (arg._requires_grad or arg._grad_fn is not None or (
        arg._base is not None and _view_needs(arg)))


def _input_needs(cls, args: tuple, any_needs: bool) -> tuple:
    """``needs_input_grad`` per argument, and the positions that get an edge (tensors, and
    numbers torch wraps as tensors)."""
    needs = []
    positions = []
    for i, arg in enumerate(args):
        if isinstance(arg, Tensor):
            positions.append(i)
            needs.append(any_needs and _needs_grad(arg))
        else:
            needs.append(False)
            if i in cls._wrapped_scalars:
                positions.append(i)
    return tuple(needs), tuple(positions)


# ---------------------------------------------------------------------------------------------
# The built-in path, recorded
# ---------------------------------------------------------------------------------------------
def record_builtin(cls, args: tuple, arrays: list, kwargs: dict, inputs: tuple = None):
    """Forward with the node as ctx, then the node wired to its inputs and outputs and what
    forward saved handed to the door. The ops' direct lanes (``ops/_untracked.py``) call this
    when they already know an input needs a gradient; ``inputs`` is then what
    ``builtin_inputs`` would find, known in advance (``needs_input_grad``, positions, edges,
    input metas; no view among the inputs), so the arguments are not searched again."""
    node = cls._backward_cls()
    if inputs is None:
        positions, edges, metas, pending = builtin_inputs(cls, node, args, arrays)
    else:
        node.needs_input_grad, positions, edges, metas = inputs
        pending = None
    outputs = cls.forward(node, *arrays, **kwargs)
    # a view input's edge is looked up after forward, as a refusal there must come from
    # forward's own checks first
    node.next_functions = (tuple(edges) if pending is None
                           else pending_edges(edges, pending, args, positions))
    node._input_meta = metas
    node._tensor_positions = positions
    if type(outputs) is np.ndarray and cls._view_of is None and not cls._inplace:
        # the common case, inline: one fresh array out
        result = Tensor._make(outputs)
        if outputs.dtype.kind in "fcV":
            result._grad_fn = node
        node._output_meta = ((outputs.shape, outputs.dtype),)
        to_save = node._to_save
        if to_save is not None:
            node._to_save = None
            if len(to_save) == 1 and to_save[0] is outputs:
                # only the output saved (tanh, exp, relu): what ``save_builtin`` finds, without
                # the search (a fresh output is no input and no op before this one changed it)
                node._saved = (SavedTensor(result, node, result._grad_fn is node, False),)
            else:
                node._saved = save_builtin(node, args, arrays, (outputs,), (result,), to_save,
                                           False)
        return result
    raw_outputs = outputs if type(outputs) is tuple else (outputs,)
    results = builtin_outputs(cls, node, args, raw_outputs)
    set_output_meta(node, results)
    if node._to_save is not None:
        node._saved = save_builtin(node, args, arrays, raw_outputs, results, node._to_save,
                                   cls._inplace)
        node._to_save = None
    return tuple(results) if type(outputs) is tuple else results[0]


@functools.lru_cache(maxsize=None)
def _wrapped_names(forward_cls) -> tuple:
    """The forward parameter names at the positions where a Python number may stand."""
    parameters = list(inspect.signature(forward_cls.forward).parameters)[1:]  # after ctx
    return tuple(parameters[i] for i in forward_cls._wrapped_scalars if i < len(parameters))


_OVERLAP_ERROR = ("unsupported operation: more than one element of the written-to tensor refers to "
                  "a single memory location. Please clone() the tensor before performing the "
                  "operation.")


class _UntrackedCtx(FunctionCtx):
    """The ctx of a built-in op that records nothing: saving is a no-op."""

    def save_for_backward(self, *tensors) -> None:
        pass


_NO_GRADS = [(False,) * n for n in range(16)]


def _no_grads(count: int) -> tuple:
    return _NO_GRADS[count] if count < 16 else (False,) * count


# ---------------------------------------------------------------------------------------------
# The user-defined path
# ---------------------------------------------------------------------------------------------
def _apply_user(cls, args: tuple, kwargs: dict):
    grad_on = _state.enabled
    any_needs = grad_on and any(_needs_grad(arg) for arg in args)
    node = cls._backward_cls()
    node.needs_input_grad, positions = _input_needs(cls, args, any_needs)
    if any_needs:  # before forward, as torch: a view whose history is gone raises untouched
        connect(node, args, positions)
    _state.enabled = False
    try:
        if cls._uses_setup_context:
            outputs = cls.forward(*args, **kwargs)
            cls.setup_context(node, args, outputs)
        else:
            outputs = cls.forward(node, *args, **kwargs)
    finally:
        _state.enabled = grad_on
    raw_outputs = outputs if type(outputs) is tuple else (outputs,)
    if node._dirty:
        check_dirty_returned(node._dirty, raw_outputs)
    if not any_needs:
        for dirty in node._dirty or ():
            dirty._version_counter[0] += 1
        return outputs
    results = user_outputs(node, args, raw_outputs)
    set_output_meta(node, results)
    if node._to_save is not None:
        node._saved = save_user(node, args, raw_outputs, results, node._to_save)
        node._to_save = None
    return tuple(results) if type(outputs) is tuple else results[0]


def once_differentiable(backward):
    """Decorate a ``backward`` that is not itself differentiable: it runs without recording,
    and differentiating its result raises instead of giving a wrong answer."""

    @functools.wraps(backward)
    def wrapper(ctx, *grad_outputs):
        with grad_mode.no_grad():
            result = backward(ctx, *grad_outputs)
        if not _state.enabled or not any(isinstance(g, Tensor) and g.requires_grad
                                         for g in grad_outputs):
            return result
        single = not isinstance(result, tuple)
        results = (result,) if single else result
        # the results were computed without recording; as torch, route each through a node
        # that raises when reached, fed by a fresh leaf so that the result requires grad
        wrapped = tuple(_DelayedError.apply(r.detach().requires_grad_())
                        if isinstance(r, Tensor) and r._data.dtype.kind in "fc" else r
                        for r in results)
        return wrapped[0] if single else wrapped

    return wrapper


class _DelayedError(Function):
    node_name = "DelayedError"

    @staticmethod
    def forward(ctx, tensor):
        return tensor.clone()

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("trying to differentiate twice a function that was marked with "
                           "@once_differentiable")


class InplaceFunction(Function):
    """A ``Function`` base that records whether it runs in place (``self.inplace``); old code."""
    def __init__(self, inplace: bool = False):
        self.inplace = inplace


class NestedIOFunction(Function):
    """Legacy ``Function`` base whose forward and backward take nested inputs; kept for old code."""
