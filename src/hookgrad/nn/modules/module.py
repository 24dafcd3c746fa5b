"""Module: parameters, buffers and submodules registered by attribute assignment, plus hooks.

Every hook store is an ``OrderedDict[id, hook]`` filled by ``utils.hooks.add_hook``; ``__call__``
has a fast path when no hook of any kind is set. Backward hooks go through identity Functions
(``_backward_hook.py``), so the autograd engine knows nothing of modules.
"""
from __future__ import annotations

import warnings
from collections import OrderedDict
from typing import Any, Callable, Dict, Iterator, List, Optional, Set, Tuple, Union

from ... import _dtype
from ...autograd import grad_mode
from ...autograd.graph import legacy_type_name
from ...ops.creation import device
from ...tensor import Tensor
from ...utils.hooks import RemovableHandle, add_hook
from ..parameter import Buffer, Parameter, buffer_persistent
from ._backward_hook import BackwardHook, WrappedHook, warn_if_legacy_hook_misses_gradients
from ._state_dict import StateDictMixin, _IncompatibleKeys  # noqa: F401  (torch's home of it)

__all__ = ["Module", "register_module_forward_pre_hook", "register_module_forward_hook",
           "register_module_backward_hook", "register_module_full_backward_pre_hook",
           "register_module_full_backward_hook", "register_module_buffer_registration_hook",
           "register_module_module_registration_hook",
           "register_module_parameter_registration_hook"]

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


# -- global hooks: every module's call runs them first -------------------------------------------
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
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


def register_module_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """The legacy global backward hook (on the grad_fn of each module's output)."""
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is True:
        raise RuntimeError(_MIXED_GLOBAL)
    _global_is_full_backward_hook = False
    return add_hook(_global_backward_hooks, hook)


def register_module_full_backward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, grad_output) -> None | new_grad_output`` for every module, first."""
    return add_hook(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, grad_input, grad_output) -> None | new_grad_input`` for every module."""
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is False:
        raise RuntimeError(_MIXED_GLOBAL)
    _global_is_full_backward_hook = True
    return add_hook(_global_backward_hooks, hook)


def _addindent(text: str, spaces: int) -> str:
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    rest = [" " * spaces + line if line.strip() else "" for line in lines[1:]]
    return lines[0] + "\n" + "\n".join(rest)


def _check_name(module: "Module", name: Any, what: str, store: dict) -> None:
    if not isinstance(name, str):
        raise TypeError(f"{what} name should be a string. Got {_typename(name)}")
    if "." in name:
        raise KeyError(f'{what} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{what} name can\'t be empty string ""')
    if hasattr(module, name) and name not in store:
        raise KeyError(f"attribute '{name}' already exists")


def _typename(value: Any) -> str:
    """torch.typename: ``torch.FloatTensor`` for tensors, the qualified class name otherwise."""
    if isinstance(value, Tensor):
        return legacy_type_name(value._data)
    module = type(value).__module__
    name = type(value).__qualname__
    return name if module in (None, "builtins") else f"{module}.{name}"


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


def _run_registration_hooks(hooks: "OrderedDict[int, Callable]", module: "Module", name: str,
                            value: Any) -> Any:
    for hook in tuple(hooks.values()):
        output = hook(module, name, value)
        if output is not None:
            value = output
    return value


class Module(StateDictMixin):
    """Base class of every layer: assign Parameters, buffers and Modules as attributes and they
    are registered, found by ``parameters()``, saved by ``state_dict()`` and cast by ``to()``."""

    training: bool
    _version: int = 1
    call_super_init: bool = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if not self.call_super_init and (args or kwargs):
            if kwargs:
                raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword "
                                f"argument '{next(iter(kwargs))}'")
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        setter = object.__setattr__
        setter(self, "training", True)
        setter(self, "_parameters", {})
        setter(self, "_buffers", {})
        setter(self, "_non_persistent_buffers_set", set())
        setter(self, "_backward_pre_hooks", OrderedDict())
        setter(self, "_backward_hooks", OrderedDict())
        setter(self, "_is_full_backward_hook", None)
        setter(self, "_forward_hooks", OrderedDict())
        setter(self, "_forward_hooks_with_kwargs", OrderedDict())
        setter(self, "_forward_hooks_always_called", OrderedDict())
        setter(self, "_forward_pre_hooks", OrderedDict())
        setter(self, "_forward_pre_hooks_with_kwargs", OrderedDict())
        setter(self, "_state_dict_hooks", OrderedDict())
        setter(self, "_state_dict_pre_hooks", OrderedDict())
        setter(self, "_load_state_dict_pre_hooks", OrderedDict())
        setter(self, "_load_state_dict_post_hooks", OrderedDict())
        setter(self, "_modules", {})

    forward: Callable[..., Any]

    def forward(self, *input: Any) -> Any:  # noqa: F811 - subclasses replace it
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  '"forward" function')

    # -- registration ------------------------------------------------------------------------
    def register_buffer(self, name: str, tensor: Optional[Tensor],
                        persistent: bool = True) -> None:
        """Add state that is not a parameter (running statistics); ``persistent=False`` keeps it
        out of ``state_dict``."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name(self, name, "buffer", self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        tensor = _run_registration_hooks(_global_buffer_registration_hooks, self, name, tensor)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Optional[Parameter]) -> None:
        """Add a parameter under ``name``; ``None`` reserves the name (a missing bias)."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name(self, name, "parameter", self._parameters)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        if param is not None and param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                             f"parameters must be created explicitly. To express '{name}' as a "
                             "function of another Tensor, compute the value in the forward() "
                             "method.")
        if param is not None:
            param = _run_registration_hooks(_global_parameter_registration_hooks, self, name,
                                            param)
        self._parameters[name] = param

    def add_module(self, name: str, module: Optional["Module"]) -> None:
        """Add a child module, reachable as the attribute ``name``."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = _run_registration_hooks(_global_module_registration_hooks, self,
                                                      name, module)

    def register_module(self, name: str, module: Optional["Module"]) -> None:
        self.add_module(name, module)

    def get_submodule(self, target: str) -> "Module":
        if target == "":
            return self
        module = self
        for item in target.split("."):
            if not hasattr(module, item):
                raise AttributeError(f"{module._get_name()} has no attribute `{item}`")
            module = getattr(module, item)
            if not isinstance(module, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return module

    def set_submodule(self, target: str, module: "Module", strict: bool = False) -> None:
        """Replace (or with ``strict=False`` add) the submodule at dotted path ``target``."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        if strict and not hasattr(parent, name):
            raise AttributeError(f"{parent._get_name()} has no attribute `{name}`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError(f"`{name}` is not an nn.Module")
        setattr(parent, name, module)

    def _owner_and_name(self, target: str) -> Tuple["Module", str]:
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
        return module, name

    def get_parameter(self, target: str) -> Parameter:
        module, name = self._owner_and_name(target)
        param = getattr(module, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        module, name = self._owner_and_name(target)
        if name not in module._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return getattr(module, name)

    # -- attribute protocol ------------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        state = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in state and name in state[store]:
                return state[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        state = self.__dict__

        def remove_from(*stores):
            for store in stores:
                store.pop(name, None)
            state["_non_persistent_buffers_set"].discard(name)

        params = state.get("_parameters")
        modules = state.get("_modules")
        buffers = state.get("_buffers")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(state, buffers, modules)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            remove_from(state, params, buffers)
            modules[name] = _run_registration_hooks(_global_module_registration_hooks, self,
                                                    name, value)
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            modules[name] = _run_registration_hooks(_global_module_registration_hooks, self,
                                                    name, value)
        elif isinstance(value, Buffer) or (buffers is not None and name in buffers):
            if buffers is None:
                raise AttributeError("cannot assign buffer before Module.__init__() call")
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                "(torch.nn.Buffer, torch.Tensor or None expected)")
            persistent = buffer_persistent(value) if isinstance(value, Buffer) \
                else name not in self._non_persistent_buffers_set
            self.register_buffer(name, value, persistent)
        else:
            object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __getstate__(self) -> dict:
        return self.__dict__.copy()

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    def __dir__(self) -> List[str]:
        attrs = dir(type(self)) + list(self.__dict__)
        attrs += list(self._parameters) + list(self._modules) + list(self._buffers)
        return sorted(key for key in set(attrs) if not key[0].isdigit())

    # -- iteration ---------------------------------------------------------------------------
    def _named_members(self, get_members: Callable, prefix: str = "", recurse: bool = True,
                       remove_duplicate: bool = True) -> Iterator[Tuple[str, Any]]:
        seen: Set[int] = set()
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for module_prefix, module in modules:
            for name, value in get_members(module):
                if value is None or id(value) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(value))
                yield module_prefix + ("." if module_prefix else "") + name, value

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[Tuple[str, Parameter]]:
        """``(name, parameter)`` pairs; a parameter shared by two modules appears once."""
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                       remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[Tuple[str, Tensor]]:
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                       remove_duplicate)

    def children(self) -> Iterator["Module"]:
        for _, module in self.named_children():
            yield module

    def named_children(self) -> Iterator[Tuple[str, "Module"]]:
        seen: Set[int] = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def modules(self) -> Iterator["Module"]:
        for _, module in self.named_modules():
            yield module

    def named_modules(self, memo: Optional[Set["Module"]] = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[Tuple[str, "Module"]]:
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                yield from module.named_modules(memo, prefix + ("." if prefix else "") + name,
                                                remove_duplicate)

    # -- hooks -------------------------------------------------------------------------------
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
        if self._is_full_backward_hook is False:
            raise RuntimeError(_MIXED_LOCAL)
        self._is_full_backward_hook = True
        return add_hook(self._backward_hooks, hook, prepend=prepend)

    def register_backward_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Legacy: ``hook(module, grad_input, grad_output)`` on the grad_fn of the output, so
        ``grad_input`` belongs to the last op of ``forward``. Prefer the full backward hook."""
        if self._is_full_backward_hook is True:
            raise RuntimeError(_MIXED_LOCAL)
        self._is_full_backward_hook = False
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

    # -- calling -----------------------------------------------------------------------------
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
                warnings.warn("For backward hooks to be called, module output should be a Tensor "
                              f"or a tuple of Tensors but received {type(result)}", stacklevel=3)
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
        for hook_id, hook in tuple(_global_forward_hooks.items()):
            if hook_id in _global_forward_hooks_always_called and hook_id not in called_always:
                try:
                    replaced = hook(self, args, state["result"])
                    if replaced is not None:
                        state["result"] = replaced
                except Exception as error:
                    warnings.warn("global module forward hook with ``always_call=True`` raised an "
                                  "exception that was silenced as another error was raised in "
                                  f"forward: {error}", stacklevel=3)
        for hook_id, hook in tuple(self._forward_hooks.items()):
            if hook_id in self._forward_hooks_always_called and hook_id not in called_always:
                try:
                    if hook_id in self._forward_hooks_with_kwargs:
                        replaced = hook(self, args, kwargs, state["result"])
                    else:
                        replaced = hook(self, args, state["result"])
                    if replaced is not None:
                        state["result"] = replaced
                except Exception as error:
                    warnings.warn("module forward hook with ``always_call=True`` raised an "
                                  "exception that was silenced as another error was raised in "
                                  f"forward: {error}", stacklevel=3)

    # -- modes, casting and bulk changes -----------------------------------------------------
    def train(self, mode: bool = True) -> "Module":
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> "Module":
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        for param in self.parameters():
            grad = param.grad
            if grad is None:
                continue
            if set_to_none:
                param.grad = None
            else:
                if grad.grad_fn is not None:
                    grad.detach_()
                else:
                    grad.requires_grad_(False)
                grad.zero_()

    def apply(self, fn: Callable[["Module"], None]) -> "Module":
        """Call ``fn`` on every submodule (children first) and then on self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> "Module":
        """Replace the data of every parameter, gradient and buffer by ``fn`` of it; Parameters
        keep their identity (torch's ``param.data = fn(param)``)."""
        if recurse:
            for module in self.children():
                module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            with grad_mode.no_grad():
                applied = fn(param)
            param.data = applied
            grad = param._grad
            if grad is not None:
                with grad_mode.no_grad():
                    grad.data = fn(grad)
        for key, buffer in self._buffers.items():
            if buffer is not None:
                self._buffers[key] = fn(buffer)
        return self

    def to(self, *args: Any, **kwargs: Any) -> "Module":
        """``to(dtype)``, ``to(device)``, ``to(tensor)``, ``to(device, dtype)``: casts floating
        parameters and buffers in place (only the CPU exists here)."""
        dtype = kwargs.get("dtype")
        for arg in (*args, kwargs.get("device"), kwargs.get("tensor")):
            if arg is None or isinstance(arg, bool):  # non_blocking / copy flags
                continue
            if isinstance(arg, _dtype.dtype):
                dtype = arg
            elif isinstance(arg, Tensor):
                dtype = arg.dtype
            elif isinstance(arg, (str, device)):
                if str(arg).split(":")[0] != "cpu":
                    raise AssertionError("Torch not compiled with CUDA enabled")
            else:
                raise TypeError("to() received an invalid combination of arguments - got "
                                f"({', '.join(type(a).__name__ for a in args)})")
        if dtype is None:
            return self
        if not dtype.is_floating_point:
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but got "
                            f"desired dtype={dtype}")
        return self._cast_floating(dtype)

    def _cast_floating(self, dtype: _dtype.dtype) -> "Module":
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self) -> "Module":
        return self._cast_floating(_dtype.float32)

    def double(self) -> "Module":
        return self._cast_floating(_dtype.float64)

    def half(self) -> "Module":
        return self._cast_floating(_dtype.float16)

    def type(self, dst_type: Union[_dtype.dtype, str]) -> "Module":
        return self._apply(lambda t: t.type(dst_type))

    def cpu(self) -> "Module":
        return self

    def cuda(self, device: Any = None) -> "Module":
        raise AssertionError("Torch not compiled with CUDA enabled")

    def share_memory(self) -> "Module":
        return self

    # -- repr --------------------------------------------------------------------------------
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """One line (or several) shown inside ``Name(...)``; layers override it."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(module), 2)
                       for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        text = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                text += extra_lines[0]
            else:
                text += "\n  " + "\n  ".join(lines) + "\n"
        return text + ")"
