"""What a user hangs on a tensor: ``register_hook``, ``retain_grad``, post-accumulate-grad hooks,
and the leaf's AccumulateGrad node they live on.

A tensor's hook dict is shared with the node its gradient flows into, so a hook registered after
the node was made is still seen; ``_tensor_methods.py`` binds these functions as Tensor methods.
"""
from __future__ import annotations

import weakref
from collections import OrderedDict
from typing import Callable, Optional

from ..tensor import Tensor
from ..utils.hooks import RemovableHandle, add_hook
from .grad_mode import _state
from .node import AccumulateGrad


def grad_accumulator(tensor: Tensor) -> AccumulateGrad:
    """The leaf's AccumulateGrad node; the graph holds it, the leaf only refers weakly."""
    extra = tensor._extras()
    held = extra.grad_accumulator
    if isinstance(held, AccumulateGrad):  # an unpacked alias of a leaf: fixed target
        return held
    node = held() if held is not None else None
    if node is None:
        node = AccumulateGrad(tensor)
        if tensor._hooks is not None:
            node._tensor_hooks_for(0, tensor._hooks)
        extra.grad_accumulator = weakref.ref(node)
    return node


def grad_edge(tensor: Tensor):
    """The (node, output_nr) that a tensor's gradient flows into, or None if it needs none."""
    node = tensor._grad_fn if tensor._base is None else tensor.grad_fn  # views: not stale
    if node is not None:
        return node, tensor._output_nr
    if tensor._requires_grad:
        return grad_accumulator(tensor), 0
    return None


def register_hook(self: Tensor, hook: Callable[[Tensor], Optional[Tensor]]) -> RemovableHandle:
    """``hook(grad) -> Tensor | None`` runs each time the gradient w.r.t. this tensor is
    computed, before it flows on; a returned tensor replaces the gradient.

    Example: ``h = x.register_hook(lambda g: g * 2)``; ``h.remove()`` takes it away.
    """
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    ensure_hooks_attached(self)
    return add_hook(self._hooks, hook)


def ensure_hooks_attached(self: Tensor) -> None:
    if self._hooks is None:
        self._hooks = OrderedDict()
    node = self.grad_fn
    if node is not None:
        node._tensor_hooks_for(self._output_nr, self._hooks)
    else:
        grad_accumulator(self)._tensor_hooks_for(0, self._hooks)


def retain_grad(self: Tensor) -> None:
    """Keep ``.grad`` for this non-leaf tensor after backward (a clone of the gradient,
    after this tensor's own hooks have run)."""
    if not self.requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    node = self.grad_fn
    if node is None or self.retains_grad:
        return
    self._extras().retains_grad = True
    ref = weakref.ref(self)

    def retain(grad):
        tensor = ref()
        if tensor is not None and grad is not None:
            if tensor._grad is None:
                # a contiguous copy whatever the gradient's layout, as torch's retain_grad
                tensor._grad = (grad.detach() if not _state.enabled else grad).contiguous()
                if tensor._grad is grad or tensor._grad._data is grad._data:
                    tensor._grad = tensor._grad.clone()
            else:
                tensor._grad = tensor._grad + grad
        return grad

    node._register_retains_grad(self._output_nr, retain)


def register_post_accumulate_grad_hook(self: Tensor, hook: Callable[[Tensor], None]
                                       ) -> RemovableHandle:
    """``hook(tensor) -> None`` runs on a leaf after its ``.grad`` has been accumulated."""
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                           "tensors")
    extra = self._extras()
    if extra.post_accumulate_hooks is None:
        extra.post_accumulate_hooks = OrderedDict()
    hooks = extra.post_accumulate_hooks
    return add_hook(hooks, hook)


def history_moved(tensor: Tensor, old_node, old_nr: int) -> None:
    """An in-place op gave ``tensor`` a new grad_fn. As in torch, hooks registered before
    stay with the old value's node; retain_grad follows the tensor to its new node."""
    if old_node is None:
        return  # a leaf modified in place keeps its accumulator and its hooks
    tensor._hooks = None
    retains = old_node._retains_grad_hooks
    if tensor.retains_grad and retains and old_nr in retains:
        tensor._grad_fn._register_retains_grad(tensor._output_nr, retains.pop(old_nr))
