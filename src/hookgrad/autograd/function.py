"""Function: the one contract for built-in ops and user-defined autograd functions.

``apply`` is the one place a node is created and connected: it computes ``needs_input_grad``,
gives outputs their ``grad_fn``, bumps the versions of tensors changed in place, and hands what
forward saved to the single door (``saved.py``). There are two paths:

* user-defined ``Function``: forward runs on Tensors with grad mode off (``_apply_user``);
* ``BuiltinFunction`` (the base of every op in ``ops/``, in ``builtin.py``): forward runs on
  NumPy arrays, and when no input needs a gradient nothing is recorded at all.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any

import numpy as np

from ..tensor import Tensor
from . import grad_mode
from .ctx import FunctionCtx
from .grad_mode import _state
from .node import Node
from .outputs import check_dirty_returned, connect, set_output_meta, user_outputs
from .saved import ERR_FREED, save_user


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
            if key in forward_cls.saved_lists:
                return self._list_value(forward_cls, key, raw)
            if key in forward_cls.saved_names:
                return self._slot_value(forward_cls, key, raw)
            if not raw and key in forward_cls.saved_values:
                # a non-tensor argument torch keeps on the node (alpha, exponent, min ...):
                # the ctx attribute that holds it, or a function of the node that works it
                # out when asked (so forward keeps only what is cheap to keep)
                source = forward_cls.saved_values[key]
                return source(self) if callable(source) else self.__dict__.get(source)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __dir__(self):
        # torch lists every saved attribute of a node class, so ``dir(grad_fn)`` finds the
        # ones answered by ``__getattr__`` too (saved tensors and kept non-tensor arguments)
        forward_cls = type(self)._forward_cls
        names = set(super().__dir__())
        names.discard("_saved")  # the node's own slot list, not a saved attribute
        for key in forward_cls.saved_names:
            names.update(("_saved_" + key, "_raw_saved_" + key))
        for key in forward_cls.saved_lists:
            names.update(("_saved_" + key, "_raw_saved_" + key))
        names.update("_saved_" + key for key in forward_cls.saved_values)
        return sorted(names)

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

    def _slot_value(self, forward_cls, key: str, raw: bool):
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

    def _list_value(self, forward_cls, key: str, raw: bool) -> tuple:
        """A list slot as torch shows it: a tuple of the saved tensors it holds (unpacked, or
        raw SavedTensors), with None where torch's list holds no tensor."""
        saved = self._saved or ()
        entries = []
        for position in forward_cls.saved_lists[key](self):
            one = None if position is None else saved[position]
            entries.append(one if one is None or raw else one.unpack(self))
        return tuple(entries)

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
    # how an in-place op's tensor operands may share self's memory: "partial" refuses a partial
    # overlap (elementwise kernels), "any" every overlap (index_add_, scatter_, put_...), None
    # lets anything through (an op that reads a 0-d value before writing: fill_, masked_fill_)
    _operand_overlap = "partial"
    _multi_view = False  # outputs are several views (split): in-place on them is refused
    # the tensor inputs are one list (cat, stack): torch's node computes the gradient of every
    # tensor in it once any is wanted, also when only part of the graph runs
    _tensor_list = False
    # positions that take an edge when no tensor stands there: a Python number torch wraps as
    # an input (x * 3), or an optional tensor left None (layer norm's weight), whose edge
    # torch's node lists as (None, 0)
    _wrapped_scalars: tuple = ()
    node_name: Any = None  # name of the backward node; default "<Class>Backward"
    saved_names: tuple = ()  # torch's names of the saved tensors, in save order
    # torch's names of the non-tensor arguments its node keeps (``grad_fn._saved_alpha``),
    # each mapped to the ctx attribute that holds it, or to a function of the node
    saved_values: dict = {}
    # torch's list slots (index's ``_saved_indices``): each name mapped to a function of the
    # node that gives the slot's entries, each the position of a saved tensor (in save order)
    # or None where torch's list has no tensor
    saved_lists: dict = {}

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


@functools.lru_cache(maxsize=None)
def _wrapped_names(forward_cls) -> tuple:
    """The forward parameter names at the positions where a Python number may stand."""
    parameters = list(inspect.signature(forward_cls.forward).parameters)[1:]  # after ctx
    return tuple(parameters[i] for i in forward_cls._wrapped_scalars if i < len(parameters))


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
