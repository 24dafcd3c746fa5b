"""In-place ops on views: CopySlices, the base's history after one of its views changed.

``Tensor._rebase_history`` calls ``copy_slices`` after an in-place op on a view; the base's
gradient then passes through the op's backward inside the view's region and unchanged outside.
"""
from __future__ import annotations

from ..autograd import grad_mode
from ..autograd.graph import Node, _grad_edge
from ..tensor import Tensor
from .split import _MULTI_VIEW_TAIL, _forward_name, _MultiViewReplay
from .views import Clone


class CopySlices(Node):
    """The base's new history after an in-place op ``fn`` on one of its views.

    Backward: the gradient of the base passes unchanged outside the view's region; inside it
    goes through ``fn``'s backward, whose gradient for the view's old value lands back in the
    region. Other inputs of ``fn`` get their gradients directly.
    """

    __slots__ = ("__dict__", "fn", "view_fn")

    def __init__(self, base_edge, fn, view_fn, base_meta):
        self._init_node()
        self.fn = fn
        self.view_fn = view_fn
        self.next_functions = (base_edge or (None, 0),) + tuple(fn.next_functions[1:])
        self._input_meta = (base_meta,) + tuple(fn._input_meta[1:])
        self._output_meta = (base_meta,)

    def name(self) -> str:
        return "torch::autograd::CopySlices"

    def apply(self, grad_outputs: tuple) -> tuple:
        (grad,) = grad_outputs
        if grad is None:
            return (None,) * len(self.next_functions)
        # tensor ops throughout, so that with create_graph this is differentiable (as torch's)
        result = Clone.apply(grad)
        region = self.view_fn(result)
        fn_grads = self.fn.apply((Clone.apply(region),))
        fn_grads = tuple(fn_grads) + (None,) * (len(self.fn.next_functions) - len(fn_grads))
        if fn_grads[0] is None:
            region.zero_()
        else:
            region.copy_(fn_grads[0])
        return (result,) + fn_grads[1:]

    def release_variables(self) -> None:
        self.fn.release_variables()


def copy_slices(view: Tensor, node, index: int) -> None:
    """Called by ``Tensor._rebase_history`` after in-place op ``node`` changed ``view``."""
    base = view._base
    _refuse_multi_view(view)
    base_edge = _grad_edge(base)
    copy_node = CopySlices(base_edge, node, view._view_fn,
                           (base._data.shape, base._data.dtype))
    base._grad_fn = copy_node
    base._output_nr = 0
    base._requires_grad = False
    # the view's own history is now a view of the base's: rebuild it right away, since
    # Function.apply reads ``_grad_fn`` directly and would otherwise use the stale one
    view._view_version = -1
    view._regenerate_view_grad_fn()


def _refuse_multi_view(view: Tensor) -> None:
    """torch forbids in-place changes to split/unbind outputs and to views of them."""
    replay = view._view_fn
    if isinstance(replay, _MultiViewReplay):
        names = [replay.name]
    else:
        try:
            with grad_mode.no_grad():
                replay(view._base)  # a view of a split output: the replay reaches the marker
            return
        except RuntimeError as error:
            if _MULTI_VIEW_TAIL not in str(error):
                raise
            names = [_forward_name(type(view._grad_fn).__name__)]
    if view._grad_fn is None:
        raise RuntimeError("A view was created in no_grad mode and is being modified inplace "
                           "with grad mode enabled. " + _MULTI_VIEW_TAIL)
    raise RuntimeError(f"Output {view._output_nr} of {names[0]} is a view and is being "
                       "modified inplace. " + _MULTI_VIEW_TAIL)

