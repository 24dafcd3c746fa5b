"""Views and in-place changes: how a view shares its base's versions and history.

A view op's output remembers how to replay itself from the root base. After an in-place op on
the base or a sibling view, a view's ``grad_fn`` is regenerated lazily by that replay; after an
in-place op on the view itself, the base's history becomes ``CopySlices`` of the op. Outputs of
multi-view ops (split, unbind) and custom Functions' aliases cannot be replayed, so changing them
in place is refused with torch's words.
"""
from __future__ import annotations

import functools

import numpy as np

from .._grad_state import InferenceVersion
from ..tensor import Tensor
from . import grad_mode
from .grad_mode import _state
from .node import Node, partial_runs, tasks
from .saved import ERR_FREED
from .tensor_hooks import grad_edge, history_moved

NO_GRAD_VIEW_ERROR = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. "
    "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your "
    "code by moving both the view and the inplace either both inside the no_grad block (if you "
    "don't want the inplace to be tracked) or both outside (if you want the inplace to be "
    "tracked).")

INFERENCE_VIEW_ERROR = (
    "A view was created in inference mode and is being modified inplace in normal mode. Given "
    "that this use case is ambiguous and error-prone, it is forbidden. You can clarify your "
    "code by moving both the view and the inplace either both inside the inference_mode block "
    "(if you don't want the inplace to be tracked) or both outside (if you want the inplace to "
    "be tracked).")


def _no_grad_view_error() -> str:
    """The refusal a view made now (grad mode off) meets when changed in place later."""
    return INFERENCE_VIEW_ERROR if _state.inference else NO_GRAD_VIEW_ERROR


MULTI_VIEW_TAIL = ("This view is the output of a function that returns multiple views. Such "
                   "functions do not allow the output views to be modified inplace. You should "
                   "replace the inplace operation by an out-of-place one.")

CUSTOM_FUNCTION_TAIL = (
    "This view was created inside a custom Function (or because an input was returned as-is) "
    "and the autograd logic to handle view+inplace would override the custom backward "
    "associated with the custom Function, leading to incorrect gradients. This behavior is "
    "forbidden. You can fix this by cloning the output of the custom Function.")


def op_name(node_name: str) -> str:
    """torch names the op in view errors without the ``Backward0`` suffix."""
    head, _, _ = node_name.rpartition("Backward")
    return head or node_name


# ---------------------------------------------------------------------------------------------
# Making views
# ---------------------------------------------------------------------------------------------
def make_view(array, source: Tensor, fn, args, index: int) -> Tensor:
    """A view op's output: shares the version counter of ``source`` and remembers how to
    replay the view from the root base (for in-place ops on views)."""
    tensor = Tensor._make(array)
    tensor._version_counter = counter = source._version_counter
    if type(counter) is InferenceVersion:  # torch tracks no view of an inference tensor
        return tensor
    base = source._base if source._base is not None else source
    tensor._base = base
    tensor._view_version = source._version_counter[0]
    if fn._multi_view or (source._base is not None and source._view_fn is None):
        tensor._view_fn = None  # views of split outputs cannot be replayed from the base
        if fn._multi_view:
            name = (fn.node_name or fn.__name__).replace("Backward0", "")
            tensor._extras().view_error = (
                f"Output {index} of {name} is a view and is being modified inplace. " +
                MULTI_VIEW_TAIL)
    else:
        # ``base.requires_grad``, inline: a root base is no view, so only its own two fields
        if not _state.enabled and (base._requires_grad or base._grad_fn is not None):
            tensor._extras().view_error = _no_grad_view_error()
        position = fn._view_of
        parent_fn = source._view_fn if source._base is not None else None
        # a C-level partial, not a closure: most views are never replayed. The arguments are
        # kept without the source itself, which would keep its history alive with the view
        tensor._view_fn = functools.partial(_replay, parent_fn, fn, args[:position],
                                            args[position + 1:])
    return tensor


def _replay(parent_fn, fn, before: tuple, after: tuple, root: Tensor) -> Tensor:
    """A view op applied again, from the root base (through the view it was taken of)."""
    start = parent_fn(root) if parent_fn is not None else root
    return fn.apply(*before, start, *after)


def alias(tensor: Tensor, function_name: str) -> Tensor:
    """A custom Function's output that is one of its inputs: a new tensor on the same data
    and version counter, which (as in torch) may not be modified in place."""
    result = Tensor._make(tensor._data)
    result._version_counter = tensor._version_counter
    result._base = tensor._base if tensor._base is not None else tensor
    result._extras().view_error = (
        f"Output 0 of {function_name} is a view and is being modified inplace. "
        + CUSTOM_FUNCTION_TAIL)
    # its history (and its views') cannot be rebuilt after the base changes in place: asking
    # for it then raises, as in torch, instead of answering with the stale node
    result._view_fn = CustomFunctionReplay(function_name, 0)
    result._view_version = tensor._version_counter[0]
    return result


class MultiViewReplay:
    """Stands in for the replay of a split/unbind output: torch cannot rebuild such a view's
    history after its base changed in place, so asking for it raises torch's error (rather
    than keeping a stale grad_fn, which would give a wrong gradient)."""

    __slots__ = ("name", "output_nr")
    tail = MULTI_VIEW_TAIL

    def __init__(self, name: str, output_nr: int):
        self.name, self.output_nr = name, output_nr

    def __call__(self, root):
        raise RuntimeError(f"Output {self.output_nr} of {self.name} is a view and its base or "
                           f"another view of its base has been modified inplace. " + self.tail)


class CustomFunctionReplay(MultiViewReplay):
    """The same for an input a custom Function returned as-is (a module's output under full
    backward hooks) and for the views made of it."""

    __slots__ = ()
    tail = CUSTOM_FUNCTION_TAIL


def mark_multi_view(cls, outputs: tuple, input_requires_grad: bool) -> tuple:
    """Outputs of split/chunk/unbind: replaying or changing them in place is refused."""
    for index, output in enumerate(outputs):
        output._view_fn = MultiViewReplay(op_name(cls.node_name), index)
        if output._grad_fn is None and _state.enabled:
            # made with grad mode on but without history: torch's words for this case
            output._extras().view_error = ("A view was created in no_grad mode and is being "
                                              "modified inplace with grad mode enabled. "
                                              + MULTI_VIEW_TAIL)
        elif output._grad_fn is None and input_requires_grad:
            output._extras().view_error = _no_grad_view_error()
    return outputs


# ---------------------------------------------------------------------------------------------
# A view's history
# ---------------------------------------------------------------------------------------------
# How a view's history is rebuilt after an in-place change: ``REBUILD(base, view)`` returns a
# tensor whose ``grad_fn`` is the view's new history. The ops layer sets it to ``as_strided``
# over the view's geometry, torch's ``AsStridedBackward0``; without it the view's own chain of
# ops is replayed (the same values, more nodes).
REBUILD = None


def grad_fn(self: Tensor):
    """``tensor.grad_fn``; a view whose base changed in place gets its history regenerated."""
    base = self._base
    if base is not None and self._view_version != self._version_counter[0]:
        regenerate_view_grad_fn(self)
    return self._grad_fn


def regenerate_view_grad_fn(view: Tensor) -> None:
    """After an in-place change of the base or a sibling view, this view's history is the
    view of the base's new history (torch regenerates it lazily the same way)."""
    base = view._base
    if view._view_fn is None or not base.requires_grad:
        view._view_version = view._version_counter[0]
        return
    with grad_mode.enable_grad():
        try:
            if REBUILD is None:
                fresh = view._view_fn(base)  # may raise (a split output): then every time
            else:
                with grad_mode.no_grad():
                    view._view_fn(base)  # raises as above for views that cannot be rebuilt
                fresh = REBUILD(base, view)
        except RuntimeError as error:
            if CUSTOM_FUNCTION_TAIL not in str(error) or view._grad_fn is None \
                    or isinstance(view._view_fn, MultiViewReplay):
                raise
            # a view of a custom Function's alias: torch names the view's own op
            raise RuntimeError(
                f"Output {view._output_nr} of {op_name(type(view._grad_fn).__name__)} is a "
                "view and its base or another view of its base has been modified inplace. "
                + CUSTOM_FUNCTION_TAIL) from None
    view._view_version = view._version_counter[0]
    old_node, old_nr = view._grad_fn, view._output_nr
    view._grad_fn = fresh._grad_fn
    view._output_nr = fresh._output_nr
    if view._extra is not None and old_node is not None and old_node is not view._grad_fn:
        # a retained view keeps retaining through its rebuilt history, as in torch
        history_moved(view, old_node, old_nr)


def check_inplace(tensor: Tensor, tense: str = "is being") -> None:
    """torch's refusals of an in-place op on a leaf that requires grad, or on its views."""
    if _state.enabled and tensor._requires_grad and tensor._grad_fn is None:
        if tensor._base is None:
            raise RuntimeError(f"a leaf Variable that requires grad {tense} used in an in-place "
                               "operation.")
    base = tensor._base
    if base is not None and _state.enabled and tensor._grad_fn is None \
            and tensor._view_version != tensor._version_counter[0] \
            and base._grad_fn is not None and base.requires_grad:
        # a view made while its base needed no gradient, whose base has gained a history
        # since: until something asks for the view's grad_fn (which rebuilds it), torch sees
        # a tensor that requires grad without a history, i.e. a leaf, and refuses
        raise RuntimeError(f"a leaf Variable that requires grad {tense} used in an in-place "
                           "operation.")
    if base is not None and _state.enabled and tensor._extra is not None \
            and base.requires_grad:
        error = tensor._extra.view_error
        if error is not None and error.startswith(("A view was created in no_grad mode",
                                                   "A view was created in inference mode")):
            raise RuntimeError(error)
    if base is not None and _state.enabled and base._requires_grad and base._grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")


# ---------------------------------------------------------------------------------------------
# In-place on a view: CopySlices
# ---------------------------------------------------------------------------------------------
class CopySlices(Node):
    """The base's new history after an in-place op ``fn`` on one of its views.

    Backward: the gradient of the base passes unchanged outside the view's region; inside it
    goes through ``fn``'s backward, whose gradient for the view's old value lands back in the
    region. Other inputs of ``fn`` get their gradients directly.
    """

    __slots__ = ("__dict__", "fn", "view_fn")

    def __init__(self, base_edge, fn, view_fn, base_meta, base_strides=None):
        self._init_node()
        self.base_strides = base_strides
        self.fn = fn
        self.view_fn = view_fn
        self.next_functions = (base_edge or (None, 0),) + tuple(fn.next_functions[1:])
        self._input_meta = (base_meta,) + tuple(fn._input_meta[1:])
        self._output_meta = (base_meta,)

    def name(self) -> str:
        return "torch::autograd::CopySlices"

    def apply(self, grad_outputs: tuple) -> tuple:
        if self.fn is None:  # released by an earlier backward: torch drops fn there too
            raise RuntimeError(ERR_FREED)
        (grad,) = grad_outputs
        if grad is None:
            return (None,) * len(self.next_functions)
        # tensor ops throughout, so that with create_graph this is differentiable (as torch's)
        result = self._laid_out_as_base(grad)
        region = self.view_fn(result)
        fn_grads = self.fn.apply((region.clone(),))
        fn_grads = tuple(fn_grads) + (None,) * (len(self.fn.next_functions) - len(fn_grads))
        running = tasks.stack if partial_runs[0] else None
        executes = (running[-1].executes if running and running[-1].running is self
                    else None)
        base = self.next_functions[0][0]
        if base is None or (executes is not None and base not in executes):
            # the base needs no gradient here: none is made for it, and the region is not
            # written (torch's CopySlices skips that copy too, which for an expanded view
            # would be refused)
            result = None
        elif fn_grads[0] is None:
            region.zero_()
        else:
            region.copy_(fn_grads[0])
        grads = (result,) + fn_grads[1:]
        if executes is not None:
            # only part of the graph runs: an input whose edge leads nowhere wanted gets no
            # gradient, as from torch's own nodes (its post-hooks see None there)
            grads = tuple(grad if child is not None and child in executes else None
                          for grad, (child, _) in zip(grads, self.next_functions))
        return grads

    def _laid_out_as_base(self, grad: Tensor) -> Tensor:
        """A copy of ``grad`` with the base's strides: the view is replayed on it, and a view
        that is legal on the base (``view(6)`` of a contiguous base) may not be on a
        gradient that arrives transposed."""
        strides = self.base_strides
        if strides is None or grad._data.strides == strides:
            return grad.clone()
        shape = grad._data.shape
        order = sorted(range(len(shape)), key=lambda d: -abs(strides[d]))  # outermost first
        buffer = np.empty([shape[d] for d in order], grad._data.dtype)
        result = Tensor._make(buffer.transpose(np.argsort(order)))
        return result.copy_(grad)

    def release_variables(self) -> None:
        if self.fn is not None:
            self.fn.release_variables()
            self.fn = None


def check_rebase(view: Tensor) -> None:
    """Raise torch's error if an in-place op on ``view`` could not rewrite its base's history.

    Called before the op writes, so a refused in-place op leaves the data and the version
    counter (and with it every sibling view's history) untouched, as in torch."""
    error = view._extra.view_error if view._extra is not None else None
    if error is not None:
        raise RuntimeError(error)
    if view._view_fn is None:
        raise RuntimeError("this view cannot be modified in place while its base needs a "
                           "gradient: its history cannot be replayed from the base; clone "
                           "it first")
    _refuse_multi_view(view)


def rebase_history(view: Tensor, node, index: int) -> None:
    """An in-place op ``node`` changed ``view``: the base's history becomes CopySlices of it."""
    check_rebase(view)
    base = view._base
    copy_node = CopySlices(grad_edge(base), node, view._view_fn,
                           (base._data.shape, base._data.dtype), base._data.strides)
    old_node, old_nr = base._grad_fn, base._output_nr
    base._grad_fn = copy_node
    base._output_nr = 0
    base._requires_grad = False
    if base._hooks is not None or base._extra is not None:
        # the base's value changed as if written directly: retain_grad moves to the new node
        history_moved(base, old_node, old_nr)
    # the view's own history is now a view of the base's: rebuild it right away, since
    # Function.apply reads ``_grad_fn`` directly and would otherwise use the stale one
    old_view_node, old_view_nr = view._grad_fn, view._output_nr
    view._view_version = -1
    regenerate_view_grad_fn(view)
    if view._hooks is not None or view._extra is not None:
        # the view's retain_grad follows it to its new node, as the base's does
        history_moved(view, old_view_node, old_view_nr)


def _refuse_multi_view(view: Tensor) -> None:
    """torch forbids in-place changes to split/unbind outputs and to views of them."""
    replay = view._view_fn
    if isinstance(replay, MultiViewReplay):
        names, tail = [replay.name], replay.tail
    else:
        try:
            with grad_mode.no_grad():
                replay(view._base)  # a view of a split output: the replay reaches the marker
            return
        except RuntimeError as error:
            tail = next((t for t in (MULTI_VIEW_TAIL, CUSTOM_FUNCTION_TAIL) if t in str(error)),
                        None)
            if tail is None:
                raise
            names = [op_name(type(view._grad_fn).__name__)]
    if tail is CUSTOM_FUNCTION_TAIL:
        raise RuntimeError(f"Output {view._output_nr} of {names[0]} is a view and is being "
                           "modified inplace. " + tail)
    if view._grad_fn is None:
        raise RuntimeError("A view was created in no_grad mode and is being modified inplace "
                           "with grad mode enabled. " + MULTI_VIEW_TAIL)
    raise RuntimeError(f"Output {view._output_nr} of {names[0]} is a view and is being "
                       "modified inplace. " + MULTI_VIEW_TAIL)
