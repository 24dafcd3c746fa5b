"""Module hooks: the global hooks every module runs, the per-module hook registration, and
``Module.__call__``, which runs them all in torch's order around ``forward``.

A mixin of ``Module``: it only uses the module's hook dicts and ``forward``. Every hook store is
an ``OrderedDict[id, hook]`` filled by ``utils.hooks.add_hook``; ``__call__`` has a fast path
when no hook of any kind is set. Backward hooks go through identity Functions
(``_backward_hook.py``), so the autograd engine knows nothing of modules.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from ..._warnings import warn
from ...tensor import Tensor
from ...utils.hooks import RemovableHandle, add_hook
from ._backward_hook import BackwardHook, WrappedHook, warn_if_legacy_hook_misses_gradients

_global_forward_pre_hooks: "OrderedDict[int, Callable]" = OrderedDict()
_global_forward_hooks: "OrderedDict[int, Callable]" = OrderedDict()
_global_forward_hooks_with_kwargs: "OrderedDict[int, bool]" = OrderedDict()
_global_forward_hooks_always_called: "OrderedDict[int, bool]" = OrderedDict()
_global_backward_pre_hooks: "OrderedDict[int, Callable]" = OrderedDict()
_global_backward_hooks: "OrderedDict[int, Callable]" = OrderedDict()
_global_is_full_backward_hook: Optional[bool] = None
_global_buffer_registration_hooks: "OrderedDict[int, Callable]" = OrderedDict()
_global_module_registration_hooks: "OrderedDict[int, Callable]" = OrderedDict()
_global_parameter_registration_hooks: "OrderedDict[int, Callable]" = OrderedDict()

_MIXED_GLOBAL = ("Cannot use both regular backward hooks and full backward hooks as a global "
                 "Module hook. Please use only one of them.")
_MIXED_LOCAL = ("Cannot use both regular backward hooks and full backward hooks on a single "
                "Module. Please use only one of them.")


# -- global hooks: every module's call runs them first ---------------------------------------------
def register_module_forward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, args) -> None | new_args`` runs before every module's forward, before the
    module's own pre-hooks."""
    return add_hook(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook: Callable[..., Any], *, with_kwargs: bool = False,
                                 always_call: bool = False) -> RemovableHandle:
    """``hook(module, args, output) -> None | new_output`` runs after every module's forward,
    before the module's own forward hooks."""
    handle = add_hook(_global_forward_hooks, hook,
                      extra_dict=[_global_forward_hooks_with_kwargs,
                                  _global_forward_hooks_always_called])
    for wanted, flags in ((with_kwargs, _global_forward_hooks_with_kwargs),
                          (always_call, _global_forward_hooks_always_called)):
        if wanted:
            flags[handle.id] = True
    return handle


def register_module_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """The legacy global backward hook (on the grad_fn of each module's output)."""
    global _global_is_full_backward_hook
    _global_is_full_backward_hook = _backward_hook_kind(_global_is_full_backward_hook, False,
                                                        _MIXED_GLOBAL)
    return add_hook(_global_backward_hooks, hook)


def register_module_full_backward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, grad_output) -> None | new_grad_output`` for every module, first."""
    return add_hook(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, grad_input, grad_output) -> None | new_grad_input`` for every module."""
    global _global_is_full_backward_hook
    _global_is_full_backward_hook = _backward_hook_kind(_global_is_full_backward_hook, True,
                                                        _MIXED_GLOBAL)
    return add_hook(_global_backward_hooks, hook)


def _backward_hook_kind(current: Optional[bool], full: bool, mixed_error: str) -> bool:
    """Full and legacy backward hooks do not mix: the first one registered fixes the kind."""
    if current is (not full):
        raise RuntimeError(mixed_error)
    return full


# -- global registration hooks: run when any module registers a parameter, buffer or submodule
def register_module_buffer_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, name, buffer) -> None | new_buffer`` runs whenever a buffer is registered."""
    return add_hook(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, name, submodule) -> None | new_submodule`` runs whenever a submodule is
    registered."""
    return add_hook(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, name, param) -> None | new_param`` runs whenever a parameter is
    registered."""
    return add_hook(_global_parameter_registration_hooks, hook)


def _run_registration_hooks(hooks: "OrderedDict[int, Callable]", module: Any, name: str,
                            value: Any) -> Any:
    for hook in tuple(hooks.values()):
        output = hook(module, name, value)
        if output is not None:
            value = output
    return value


class HooksMixin:
    """The per-module forward and backward hooks, and the call that runs them."""

    # -- a module's own hooks ----------------------------------------------------------------------
    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args) -> None | new_args`` runs before ``forward``; a non-tuple result
        is wrapped in a tuple. With ``with_kwargs``: ``hook(module, args, kwargs) -> None |
        (new_args, new_kwargs)``. Example: ``m.register_forward_pre_hook(lambda m, a: a[0] * 2)``.
        """
        handle = add_hook(self._forward_pre_hooks, hook, prepend=prepend,
                          extra_dict=self._forward_pre_hooks_with_kwargs)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        return handle

    def register_forward_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                              with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """``hook(module, args, output) -> None | new_output`` runs after ``forward`` (with
        ``with_kwargs``: ``hook(module, args, kwargs, output)``); ``always_call`` runs it even
        when ``forward`` raised. Example: ``m.register_forward_hook(lambda m, a, o: o.relu())``.
        """
        handle = add_hook(self._forward_hooks, hook, prepend=prepend,
                          extra_dict=[self._forward_hooks_with_kwargs,
                                      self._forward_hooks_always_called])
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        return handle

    def register_full_backward_pre_hook(self, hook: Callable[..., Any],
                                        prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_output) -> None | new_grad_output`` runs when the gradients of the
        module's outputs are known, before they flow into the module."""
        return add_hook(self._backward_pre_hooks, hook, prepend=prepend)

    def register_full_backward_hook(self, hook: Callable[..., Any],
                                    prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_input, grad_output) -> None | new_grad_input`` runs when the
        gradients w.r.t. the module's positional tensor inputs are computed (``None`` for
        inputs that need no gradient); a returned tuple replaces ``grad_input``.

        Example: ``m.register_full_backward_hook(lambda m, gi, go: print(gi[0].shape))``.
        """
        self._is_full_backward_hook = _backward_hook_kind(self._is_full_backward_hook, True,
                                                          _MIXED_LOCAL)
        return add_hook(self._backward_hooks, hook, prepend=prepend)

    def register_backward_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Legacy: ``hook(module, grad_input, grad_output)`` on the grad_fn of the output, so
        ``grad_input`` belongs to the last op of ``forward``. Prefer the full backward hook."""
        self._is_full_backward_hook = _backward_hook_kind(self._is_full_backward_hook, False,
                                                          _MIXED_LOCAL)
        return add_hook(self._backward_hooks, hook)

    def _get_backward_hooks(self) -> Tuple[List[Callable], List[Callable]]:
        full: List[Callable] = []
        legacy: List[Callable] = []
        if _global_is_full_backward_hook is True:
            full += _global_backward_hooks.values()
        if self._is_full_backward_hook is True:
            full += self._backward_hooks.values()
        if _global_is_full_backward_hook is False:
            legacy += _global_backward_hooks.values()
        if self._is_full_backward_hook is False:
            legacy += self._backward_hooks.values()
        return full, legacy

    def _get_backward_pre_hooks(self) -> List[Callable]:
        return [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]

    # -- calling -----------------------------------------------------------------------------------
    def _call_impl(self, *args: Any, **kwargs: Any) -> Any:
        if not (self._backward_hooks or self._backward_pre_hooks or self._forward_hooks
                or self._forward_pre_hooks or _global_backward_pre_hooks
                or _global_backward_hooks or _global_forward_hooks
                or _global_forward_pre_hooks):
            return self.forward(*args, **kwargs)
        called_always: Set[int] = set()
        state: Dict[str, Any] = {"args": args, "kwargs": kwargs, "result": None}
        try:
            return self._call_with_hooks(state, called_always)
        except Exception:
            self._run_always_called_hooks(state, called_always)
            raise

    __call__ = _call_impl

    def _call_with_hooks(self, state: Dict[str, Any], called_always: Set[int]) -> Any:
        """torch's order: global then own forward pre-hooks, wrap inputs for backward hooks,
        forward, global then own forward hooks, wrap outputs, attach legacy backward hooks."""
        args, kwargs = state["args"], state["kwargs"]
        backward_pre_hooks: List[Callable] = []
        full_hooks: List[Callable] = []
        legacy_hooks: List[Callable] = []
        if self._backward_pre_hooks or _global_backward_pre_hooks:
            backward_pre_hooks = self._get_backward_pre_hooks()
        if self._backward_hooks or _global_backward_hooks:
            full_hooks, legacy_hooks = self._get_backward_hooks()

        if _global_forward_pre_hooks or self._forward_pre_hooks:
            for hook_id, hook in (*_global_forward_pre_hooks.items(),
                                  *self._forward_pre_hooks.items()):
                if hook_id in self._forward_pre_hooks_with_kwargs:
                    replaced = hook(self, args, kwargs)
                    if replaced is not None:
                        if not (isinstance(replaced, tuple) and len(replaced) == 2):
                            raise RuntimeError("forward pre-hook must return None or a tuple of "
                                               f"(new_args, new_kwargs), but got {replaced}.")
                        args, kwargs = replaced
                else:
                    replaced = hook(self, args)
                    if replaced is not None:
                        args = replaced if isinstance(replaced, tuple) else (replaced,)
                state["args"], state["kwargs"] = args, kwargs

        backward_hook = None
        if full_hooks or backward_pre_hooks:
            backward_hook = BackwardHook(self, full_hooks, backward_pre_hooks)
            args = backward_hook.setup_input_hook(args)
            state["args"] = args

        result = self.forward(*args, **kwargs)
        state["result"] = result
        if _global_forward_hooks or self._forward_hooks:
            for hook_id, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
                if (hook_id in self._forward_hooks_always_called
                        or hook_id in _global_forward_hooks_always_called):
                    called_always.add(hook_id)
                if (hook_id in self._forward_hooks_with_kwargs
                        or hook_id in _global_forward_hooks_with_kwargs):
                    replaced = hook(self, args, kwargs, result)
                else:
                    replaced = hook(self, args, result)
                if replaced is not None:
                    result = replaced
                    state["result"] = result

        if backward_hook is not None:
            if not isinstance(result, (Tensor, tuple)):
                warn("For backward hooks to be called, module output should be a Tensor "
                     f"or a tuple of Tensors but received {type(result)}")
            result = backward_hook.setup_output_hook(result)

        if legacy_hooks:
            self._attach_legacy_backward_hooks(legacy_hooks, args, result)
        return result

    def _attach_legacy_backward_hooks(self, hooks: List[Callable], args: tuple,
                                      result: Any) -> None:
        value = result
        while not isinstance(value, Tensor):
            if isinstance(value, dict):
                value = next(v for v in value.values() if isinstance(v, Tensor))
            else:
                value = value[0]
        node = value.grad_fn
        if node is None:
            return
        for hook in hooks:
            node.register_hook(WrappedHook(hook, self))
        warn_if_legacy_hook_misses_gradients(args, result, node)

    def _run_always_called_hooks(self, state: Dict[str, Any], called_always: Set[int]) -> None:
        """After ``forward`` raised: run the ``always_call`` forward hooks that have not run;
        their own errors become warnings so the original error is the one raised."""
        args, kwargs = state["args"], state["kwargs"]
        # global hooks first; as in torch, this path never passes kwargs to a global hook
        stores = (("global module", _global_forward_hooks, _global_forward_hooks_always_called,
                   {}),
                  ("module", self._forward_hooks, self._forward_hooks_always_called,
                   self._forward_hooks_with_kwargs))
        for what, hooks, always_called, with_kwargs in stores:
            for hook_id, hook in tuple(hooks.items()):
                if hook_id not in always_called or hook_id in called_always:
                    continue
                try:
                    if hook_id in with_kwargs:
                        replaced = hook(self, args, kwargs, state["result"])
                    else:
                        replaced = hook(self, args, state["result"])
                    if replaced is not None:
                        state["result"] = replaced
                except Exception as error:
                    warn(f"{what} forward hook with ``always_call=True`` raised an "
                         "exception that was silenced as another error was raised in "
                         f"forward: {error}")
