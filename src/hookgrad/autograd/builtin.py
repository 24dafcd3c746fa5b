"""The built-in path of ``Function.apply``: ``BuiltinFunction`` (the base of every op in ``ops/``),
whose forward runs on NumPy arrays, and ``BuiltinBackward``, its nodes' base.

When no input needs a gradient nothing is recorded at all (``BuiltinFunction.apply``, the cheap
path every op takes under no_grad); otherwise ``record_builtin`` makes the node, runs forward
with it as ctx, wires it to its inputs and outputs and hands what forward saved to the single
door (``saved.py``). The user-defined path stays in ``function.py``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import _autocast_state
from ..tensor import Tensor, check_overlap, has_internal_overlap
from .ctx import FunctionCtx
from .function import BackwardCFunction, Function, _view_needs
from .grad_mode import _state
from .node import partial_runs, tasks
from .outputs import (builtin_inputs, builtin_outputs, pending_edges, set_output_meta,
                      untracked_outputs)
from .saved import SavedTensor, save_builtin
from .tensor_hooks import grad_edge
from .views import check_inplace, check_rebase, make_view


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
        # a backward run inside autocast casts its formula's products as torch's does, so
        # the formula runs on Tensors then
        grads = (None if runner is None or _state.enabled or _autocast_state.threads_on
                 else runner(grad_outputs))
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
        tensors = 0
        for i, arg in enumerate(args):
            if isinstance(arg, Tensor):
                tensors += 1
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
            if cls._operand_overlap is not None:  # after autograd's refusals, as in torch
                full_ok = cls._operand_overlap == "partial"
                for arg in args[1:]:
                    if isinstance(arg, Tensor):
                        check_overlap(target._data, arg._data, full_ok)
        if not any_needs:
            ctx = _UntrackedCtx()
            count = len(args)
            ctx.needs_input_grad = _NO_GRADS[count] if count < 16 else (False,) * count
            outputs = cls.forward(ctx, *arrays, **kwargs)
            if type(outputs) is np.ndarray and not cls._inplace:  # the common case, inline
                view_of = cls._view_of
                if view_of is None:
                    return Tensor._make(outputs)
                return make_view(outputs, args[view_of], cls, args, 0)
            return untracked_outputs(cls, args, outputs)
        tensor = args[0]
        if (tensors == 1 and arrays[0] is not tensor and tensor._base is None  # a Tensor first
                and (len(args) == 1 or not cls._wrapped_scalars)):
            # one tensor, first, no view, no number that takes an edge (view, transpose, sum
            # over a dim, every unary op): its edge is known now (``builtin_inputs``'s)
            history = tensor._grad_fn
            array = arrays[0]
            count = len(args)
            return record_builtin(cls, args, arrays, kwargs, (
                _FIRST_ONLY[count] if count < 8 else (True,) + (False,) * (count - 1),
                _ONE_POSITION,
                [(history, tensor._output_nr) if history is not None else grad_edge(tensor)],
                ((array.shape, array.dtype),)))
        return record_builtin(cls, args, arrays, kwargs)


_ONE_POSITION = (0,)
# ``needs_input_grad`` when only the first of ``count`` arguments is a tensor
_FIRST_ONLY = [()] + [(True,) + (False,) * n for n in range(7)]


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
    if type(outputs) is np.ndarray and not cls._inplace:
        # the common case, inline: one array out, fresh or (a view op's) a view of an input
        view_of = cls._view_of
        if view_of is None:
            result = Tensor._make(outputs)
        else:
            result = make_view(outputs, args[view_of], cls, args, 0)
        if outputs.dtype.kind in "fcV":
            result._grad_fn = node
        node._output_meta = ((outputs.shape, outputs.dtype),)
        to_save = node._to_save
        if to_save is not None:
            node._to_save = None
            if len(to_save) == 1 and to_save[0] is outputs and view_of is None:
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


_OVERLAP_ERROR = ("unsupported operation: more than one element of the written-to tensor refers to "
                  "a single memory location. Please clone() the tensor before performing the "
                  "operation.")


class _UntrackedCtx(FunctionCtx):
    """The ctx of a built-in op that records nothing: saving is a no-op."""

    def save_for_backward(self, *tensors) -> None:
        pass


_NO_GRADS = [(False,) * n for n in range(16)]
