"""Module: parameters, buffers and submodules registered by attribute assignment.

The hooks (global and per-module) and ``__call__``, which runs them around ``forward``, live in
``_module_hooks.py``; state_dict and its hooks in ``_state_dict.py``; ``to``, the dtype casts
and ``_apply`` in ``_module_conversion.py``. The global hook functions
are importable from here, as in torch.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, Iterator, List, Optional, Set, Tuple

from ...autograd.graph import legacy_type_name
from ...tensor import Tensor
from ..parameter import Buffer, Parameter, buffer_persistent
from ._module_hooks import (  # noqa: F401  (torch's home of the global hooks)
    HooksMixin, _global_backward_hooks, _global_backward_pre_hooks,
    _global_buffer_registration_hooks, _global_forward_hooks, _global_forward_hooks_always_called,
    _global_forward_hooks_with_kwargs, _global_forward_pre_hooks,
    _global_module_registration_hooks, _global_parameter_registration_hooks,
    _run_registration_hooks, register_module_backward_hook,
    register_module_buffer_registration_hook, register_module_forward_hook,
    register_module_forward_pre_hook, register_module_full_backward_hook,
    register_module_full_backward_pre_hook, register_module_module_registration_hook,
    register_module_parameter_registration_hook)
from ._state_dict import StateDictMixin, _IncompatibleKeys  # noqa: F401  (torch's home of it)
from ._module_conversion import ConversionMixin

__all__ = ["Module", "register_module_forward_pre_hook", "register_module_forward_hook",
           "register_module_backward_hook", "register_module_full_backward_pre_hook",
           "register_module_full_backward_hook", "register_module_buffer_registration_hook",
           "register_module_module_registration_hook",
           "register_module_parameter_registration_hook"]


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


class Module(HooksMixin, StateDictMixin, ConversionMixin):
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
        """The computation of the module; every subclass defines it. Call the module (``module(x)``)
        rather than ``forward`` so that hooks run."""
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
        # Only the names left out of state_dict are tracked; persistent is the default.
        mark = self._non_persistent_buffers_set.discard if persistent else \
            self._non_persistent_buffers_set.add
        mark(name)

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
        """Same as ``add_module``: registers ``module`` as a child named ``name``."""
        self.add_module(name, module)

    def get_submodule(self, target: str) -> "Module":
        """The descendant module at the dotted path ``target`` (``'encoder.layers.0'``);
        AttributeError names the missing step."""
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
        """The parameter at the dotted path ``target``."""
        module, name = self._owner_and_name(target)
        param = getattr(module, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at the dotted path ``target``."""
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
        # A registered name lives in exactly one of the three stores, never in __dict__.
        stores = (self._parameters, self._buffers, self._modules)
        owner = next((store for store in stores if name in store), None)
        if owner is None:
            object.__delattr__(self, name)
            return
        del owner[name]
        if owner is self._buffers:
            self._non_persistent_buffers_set.discard(name)

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
        """Every parameter of this module (and, with ``recurse``, of its descendants), each once."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[Tuple[str, Parameter]]:
        """``(name, parameter)`` pairs; a parameter shared by two modules appears once."""
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                       remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """Every buffer of this module (and, with ``recurse``, of its descendants)."""
        for _, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[Tuple[str, Tensor]]:
        """``(dotted name, buffer)`` pairs, descendants included with ``recurse``."""
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                       remove_duplicate)

    def children(self) -> Iterator["Module"]:
        """The direct child modules."""
        for _, module in self.named_children():
            yield module

    def named_children(self) -> Iterator[Tuple[str, "Module"]]:
        """``(name, module)`` for each direct child."""
        seen: Set[int] = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def modules(self) -> Iterator["Module"]:
        """This module and all its descendants, each once, parents first."""
        for _, module in self.named_modules():
            yield module

    def named_modules(self, memo: Optional[Set["Module"]] = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[Tuple[str, "Module"]]:
        """``(dotted name, module)`` for this module and all descendants, each once."""
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

    # -- modes, casting and bulk changes -----------------------------------------------------
    def train(self, mode: bool = True) -> "Module":
        """Puts this module and its descendants in training mode (or evaluation with ``False``);
        returns self."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        # Each child gets its own train() call, so a subclass that overrides it still runs.
        for child in self.children():
            child.train(mode)
        return self

    def eval(self) -> "Module":
        """Evaluation mode: ``train(False)``. Dropout passes inputs through; batch norm uses running
        statistics."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        """Sets ``requires_grad`` on every parameter; returns self."""
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clears every parameter's gradient (to None by default, or to zeros)."""
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

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """torch compiles the module's ``__call__`` in place; hookgrad runs it eagerly, so the
        module is left as it is (see ``hookgrad.compile``)."""
        return None

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
