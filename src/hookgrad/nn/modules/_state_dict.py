"""state_dict / load_state_dict and their hooks, the part of Module that reads and writes state.

A mixin of ``Module``: it only uses the module's ``_parameters``, ``_buffers``,
``_non_persistent_buffers_set``, ``_modules`` and hook dicts.
"""
from __future__ import annotations

from collections import OrderedDict, namedtuple
from typing import Any, Callable, List, Mapping, Optional

from ..._warnings import warn
from ...autograd import grad_mode
from ...serialization._interop import from_torch
from ...tensor import Tensor
from ...utils.hooks import RemovableHandle, add_hook
from ..parameter import Parameter, is_lazy
from ._backward_hook import WrappedHook

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns; prints a short all-clear when both lists are empty."""

    __slots__ = ()

    def __str__(self) -> str:
        if self.missing_keys or self.unexpected_keys:
            return super().__repr__()
        return "<All keys matched successfully>"

    __repr__ = __str__


class StateDictMixin:
    """Saving and loading a module's parameters and persistent buffers by dotted name."""

    def get_extra_state(self) -> Any:
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be "
                           "called. Please file an issue at https://github.com/pytorch/pytorch/"
                           "issues/new?template=bug-report.yml to report this bug.")

    def set_extra_state(self, state: Any) -> None:
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be "
                           "called. Please file an issue at https://github.com/pytorch/pytorch/"
                           "issues/new?template=bug-report.yml to report this bug.")

    def register_state_dict_pre_hook(self, hook: Callable[..., None]) -> RemovableHandle:
        """``hook(module, prefix, keep_vars)`` runs before ``state_dict`` collects this module."""
        return add_hook(self._state_dict_pre_hooks, hook)

    def register_state_dict_post_hook(self, hook: Callable[..., None]) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata)`` may edit the dict in place."""
        hook._from_public_api = True
        return add_hook(self._state_dict_hooks, hook)

    def _register_state_dict_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook "
                               "that was previously registered via register_state_dict_post_hook")
        return add_hook(self._state_dict_hooks, hook)

    def register_load_state_dict_pre_hook(self, hook: Callable[..., None]) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` runs before this module loads its entries."""
        return add_hook(self._load_state_dict_pre_hooks, WrappedHook(hook, self))

    def _register_load_state_dict_pre_hook(self, hook: Callable[..., None],
                                           with_module: bool = False) -> RemovableHandle:
        return add_hook(self._load_state_dict_pre_hooks,
                        WrappedHook(hook, self if with_module else None))

    def register_load_state_dict_post_hook(self, hook: Callable[..., None]) -> RemovableHandle:
        """``hook(module, incompatible_keys)`` runs after loading; edit the key lists in place."""
        return add_hook(self._load_state_dict_post_hooks, hook)

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buffer in self._buffers.items():
            if buffer is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buffer if keep_vars else buffer.detach()
        if type(self).get_extra_state is not StateDictMixin.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args: Any, destination: Optional[dict] = None, prefix: str = "",
                   keep_vars: bool = False) -> "OrderedDict[str, Any]":
        """Parameters and persistent buffers by dotted name, detached (they share memory with
        the module, so save a copy if you keep training)."""
        if args:
            warn("Positional args are being deprecated, use kwargs instead. Refer to "
                 "https://pytorch.org/docs/main/generated/torch.nn.Module.html"
                 "#torch.nn.Module.state_dict for details.", FutureWarning)
            destination = args[0] if destination is None else destination
            prefix = args[1] if len(args) > 1 and prefix == "" else prefix
            keep_vars = args[2] if len(args) > 2 and keep_vars is False else keep_vars
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()  # type: ignore[attr-defined]
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in tuple(self._state_dict_pre_hooks.values()):
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        for hook in tuple(self._state_dict_hooks.values()):
            returned = hook(self, destination, prefix, local_metadata)
            if getattr(hook, "_from_public_api", False):
                if returned is not None:
                    raise RuntimeError("state_dict post-hook must return None")
            elif returned is not None:
                destination = returned
        return destination

    def _load_from_state_dict(self, state_dict: Mapping[str, Any], prefix: str,
                              local_metadata: dict, strict: bool, missing_keys: List[str],
                              unexpected_keys: List[str], error_msgs: List[str]) -> None:
        for hook in tuple(self._load_state_dict_pre_hooks.values()):
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        local_state = {name: value for name, value in self._parameters.items()
                       if value is not None}
        local_state.update((name, value) for name, value in self._buffers.items()
                           if value is not None and name not in self._non_persistent_buffers_set)
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected '
                                  "torch.Tensor or Tensor-like object from checkpoint but "
                                  f"received {type(value)}")
                continue
            if is_lazy(param):  # its shape comes from the checkpoint (a lazy module's hook)
                continue
            if param.ndim == 0 and value.ndim == 1 and value.shape[0] == 1:
                value = value[0]
            if value.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{value.shape} from checkpoint, the shape in current model is "
                                  f"{param.shape}.")
                continue
            try:
                with grad_mode.no_grad():
                    if assign:
                        if isinstance(param, Parameter) and not isinstance(value, Parameter):
                            value = Parameter(value, requires_grad=param.requires_grad)
                        elif isinstance(param, Parameter):
                            value.requires_grad_(param.requires_grad)
                        setattr(self, name, value)
                    else:
                        param.copy_(value)
            except Exception as error:
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in '
                                  f"the model are {param.size()} and whose dimensions in the "
                                  f"checkpoint are {value.size()}, an exception occurred : "
                                  f"{error.args}.")
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not StateDictMixin.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    head = key[len(prefix):].split(".", 1)
                    known = self._modules if len(head) > 1 else local_state
                    if head[0] not in known:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copy entries into the parameters and buffers (in place, keeping their identity);
        with ``strict`` any missing or unexpected key is an error listing all of them.

        Values may be torch tensors too (a state dict from a torch model or ``torch.load``):
        they are read through NumPy on the same memory, so weights move from torch unchanged.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing: List[str] = []
        unexpected: List[str] = []
        errors: List[str] = []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict((key, from_torch(value)) for key, value in state_dict.items())
        # depth-first, parent before children, post-hooks after the whole subtree (torch's order)
        self._load_recursive(self, state_dict, "", metadata, assign, missing, unexpected, errors)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    @staticmethod
    def _load_recursive(module: Any, local: dict, prefix: str, metadata: Any, assign: bool,
                        missing: List[str], unexpected: List[str], errors: List[str]) -> None:
        local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
        if assign:
            local_metadata["assign_to_params_buffers"] = assign
        module._load_from_state_dict(local, prefix, local_metadata, True, missing, unexpected,
                                     errors)
        for name, child in module._modules.items():
            if child is not None:
                child_prefix = prefix + name + "."
                child_local = {k: v for k, v in local.items() if k.startswith(child_prefix)}
                StateDictMixin._load_recursive(child, child_local, child_prefix, metadata, assign,
                                       missing, unexpected, errors)
        keys = _IncompatibleKeys(missing, unexpected)
        for hook in tuple(module._load_state_dict_post_hooks.values()):
            if hook(module, keys) is not None:
                raise AssertionError("Hooks registered with ``register_load_state_dict_post_hook``"
                                     " are not expected to return new values, if "
                                     "incompatible_keys need to be modified, it should be done "
                                     "inplace.")
