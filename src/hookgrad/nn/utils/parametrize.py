"""Parametrizations: a tensor of a module computed on access from "original" tensors.

``register_parametrization(module, "weight", P())`` moves ``module.weight`` into
``module.parametrizations.weight.original`` and makes ``module.weight`` a property that returns
``P()(original)``, so the optimizer trains the original while the layer sees the constrained
value. As in torch, the module's class is swapped for a subclass named
``Parametrized<Class>`` that carries the property; removing the last parametrization swaps it
back. State-dict keys (``parametrizations.weight.original``) are torch's, so checkpoints load in
either library.
"""
from __future__ import annotations

import collections.abc
import copyreg
from contextlib import contextmanager
from copy import deepcopy
from typing import Dict, Iterator, Optional, Sequence, Tuple, Union

from ...autograd import grad_mode
from ...tensor import Tensor
from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized",
           "remove_parametrizations", "type_before_parametrizations",
           "transfer_parametrizations_and_params"]

_cache_enabled = 0
_cache: Dict[Tuple[int, str], Optional[Tensor]] = {}


@contextmanager
def cached() -> Iterator[None]:
    """Compute each parametrized tensor once inside the block and reuse it.

    A recurrent loop that reads a parametrized weight at every step would otherwise rerun the
    parametrization (say an orthogonal map) each time. Nested blocks share one cache, which is
    emptied when the outermost block exits::

        with parametrize.cached():
            output = model(inputs)
    """
    _open_cache_scope()
    try:
        yield
    finally:
        _close_cache_scope()


def _open_cache_scope() -> None:
    global _cache_enabled
    _cache_enabled += 1


def _close_cache_scope() -> None:
    # only the outermost block owns the cached tensors; inner ones just leave
    global _cache_enabled
    _cache_enabled -= 1
    if _cache_enabled == 0:
        _cache.clear()


def _register_parameter_or_buffer(module: Module, name: str, value: Tensor) -> None:
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _maybe_set(destination: Tensor, source: Tensor) -> None:
    """torch's ``destination.set_(source)``: the tensor keeps its identity (and optimizer
    state) and takes ``source``'s memory, shape and dtype."""
    destination._data = source._data
    destination._version_counter[0] += 1


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, in registration order, and the tensors they act on.

    It is ``module.parametrizations[tensor_name]``. The first parametrization's
    ``right_inverse`` (identity when absent) decides what is stored: one tensor is kept as
    ``original``; a sequence of tensors as ``original0``, ``original1``, ... Calling the list
    runs the parametrizations in order and returns the tensor the module sees. It is made by
    :func:`register_parametrization`, not by hand.
    """

    original: Tensor
    unsafe: bool

    def __init__(self, modules: Sequence[Module], original: Union[Tensor, Parameter],
                 unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        # read before storing: a single stored tensor replaces original's data in place
        expected_shape, expected_dtype = original.shape, original.dtype
        self.unsafe = unsafe
        stored = self._first_storage(original)
        self.is_tensor = isinstance(stored, Tensor)
        self.ntensors = 1 if self.is_tensor else len(stored)
        if self.is_tensor:
            self._keep_single(original, stored)
        else:
            self._keep_pieces(original, stored)
        if not unsafe:
            self._check_unchanged(expected_shape, expected_dtype)

    def _first_storage(self, original: Tensor):
        # right_inverse is optional at registration: a missing or unimplemented one stores
        # the value unchanged
        value = original
        with grad_mode.no_grad():
            for parametrization in reversed(self):
                inverse = getattr(parametrization, "right_inverse", None)
                if inverse is None:
                    continue
                try:
                    value = inverse(value)
                except NotImplementedError:
                    pass
        if isinstance(value, (Tensor, collections.abc.Sequence)):
            return value
        raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors "
                         f"(list, tuple...). Got {type(value).__name__}")

    def _keep_single(self, original: Tensor, stored: Tensor) -> None:
        if stored.dtype != original.dtype:
            raise ValueError("When `right_inverse` outputs one tensor, it may not change the "
                             f"dtype.\noriginal.dtype: {original.dtype}\n"
                             f"right_inverse(original).dtype: {stored.dtype}")
        with grad_mode.no_grad():
            _maybe_set(original, stored)
        _register_parameter_or_buffer(self, "original", original)

    def _keep_pieces(self, original: Tensor, pieces) -> None:
        wants_grad = original.requires_grad
        as_parameters = isinstance(original, Parameter)
        for position, piece in enumerate(pieces):
            if not isinstance(piece, Tensor):
                raise ValueError("'right_inverse' must return a Tensor or a Sequence of "
                                 "tensors (list, tuple...). Got element "
                                 f"{position} of the sequence with type {type(piece).__name__}.")
            kept = Parameter(piece, wants_grad) if as_parameters else piece
            kept.requires_grad_(wants_grad)
            _register_parameter_or_buffer(self, f"original{position}", kept)

    def _check_unchanged(self, shape, dtype) -> None:
        value = self()
        if not isinstance(value, Tensor):
            raise ValueError(f"A parametrization must return a tensor. Got {type(value).__name__}.")
        for what, before, after in (("dtype", dtype, value.dtype), ("shape", shape, value.shape)):
            if before != after:
                raise ValueError(f"Registering a parametrization may not change the {what} of "
                                 "the tensor, unless `unsafe` flag is enabled.\n"
                                 f"unparametrized {what}: {before}\n"
                                 f"parametrized {what}: {after}")

    def _originals(self) -> tuple:
        if self.is_tensor:
            return (self.original,)
        return tuple(getattr(self, f"original{i}") for i in range(self.ntensors))

    def right_inverse(self, value: Tensor) -> None:
        """Store ``value`` so that the list returns it: run every ``right_inverse`` from the last
        parametrization to the first and write the result into the original tensor(s)."""
        with grad_mode.no_grad():
            for parametrization in reversed(self):
                inverse = getattr(parametrization, "right_inverse", None)
                if inverse is None:
                    raise RuntimeError(f"parametrization {type(parametrization).__name__} "
                                       "does not implement right_inverse.")
                value = inverse(value)
            if self.is_tensor:
                self._assign_single(value)
            else:
                self._assign_pieces(value)

    def _assign_single(self, value) -> None:
        if not isinstance(value, Tensor):
            raise ValueError(f"`right_inverse` should return a tensor. Got {type(value).__name__}")
        target = self.original
        if value.dtype != target.dtype:
            raise ValueError(f"The tensor returned by `right_inverse` has dtype {value.dtype} "
                             f"while `original` has dtype {target.dtype}")
        _maybe_set(target, value)

    def _assign_pieces(self, values) -> None:
        if not isinstance(values, collections.abc.Sequence):
            raise ValueError("'right_inverse' must return a sequence of tensors. "
                             f"Got {type(values).__name__}.")
        if len(values) != self.ntensors:
            raise ValueError("'right_inverse' must return a sequence of tensors of length "
                             f"{self.ntensors}. Got a sequence of length {len(values)}.")
        for position, (target, value) in enumerate(zip(self._originals(), values)):
            if not isinstance(value, Tensor):
                raise ValueError("'right_inverse' must return a sequence of tensors or "
                                 f"reference-type opaques. Got element {position} of type "
                                 f"{type(value).__name__}.")
            if value.dtype != target.dtype:
                raise ValueError(f"Tensor {position} returned by `right_inverse` has dtype "
                                 f"{value.dtype} while `original{position}` has dtype "
                                 f"{target.dtype}")
            _maybe_set(target, value)

    def forward(self) -> Tensor:
        """The parametrized tensor: the first parametrization on the original(s), then each
        following one on the previous result."""
        first, *rest = self
        value = first(*self._originals())
        for parametrization in rest:
            value = parametrization(value)
        return value


def _default_deepcopy(self, memo):
    replica = memo.get(id(self))
    if replica is not None:
        return replica
    replica = self.__new__(self.__class__)
    memo[id(self)] = replica
    replica.__dict__ = deepcopy(self.__dict__, memo)
    for slot in copyreg._slotnames(self.__class__):
        if hasattr(self, slot):
            setattr(replica, slot, deepcopy(getattr(self, slot), memo))
    return replica


def _refuse_pickle(self):
    raise RuntimeError("Serialization of parametrized modules is only supported through "
                       "state_dict(). See:\nhttps://pytorch.org/tutorials/beginner/"
                       "saving_loading_models.html#saving-loading-a-general-checkpoint-for-"
                       "inference-and-or-resuming-training")


def _inject_new_class(module: Module) -> None:
    # A per-module subclass, so the property added next does not leak to other instances.
    cls = module.__class__
    namespace = {"__getstate__": _refuse_pickle}
    if not hasattr(cls, "__deepcopy__"):
        namespace["__deepcopy__"] = _default_deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), namespace)


def _inject_property(module: Module, tensor_name: str) -> None:
    if hasattr(module, tensor_name):
        raise AssertionError(f"Module already has an attribute named '{tensor_name}'")
    key = (id(module), tensor_name)

    def get_parametrized(self) -> Tensor:
        parametrization = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return parametrization()
        tensor = _cache.get(key)
        if tensor is None:
            tensor = _cache[key] = parametrization()
        return tensor

    def set_original(self, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def _check_same(what: str, tensor_name: str, expected: Tensor, got: Tensor, action: str,
                unsafe_phrase: str) -> None:
    if got.dtype != expected.dtype:
        raise ValueError(f"{what} dtype {unsafe_phrase}.\nmodule.{tensor_name}.dtype: "
                         f"{expected.dtype}\n{action}.dtype: {got.dtype}")
    if got.shape != expected.shape:
        raise ValueError(f"{what} shape {unsafe_phrase}.\nmodule.{tensor_name}.shape: "
                         f"{expected.shape}\n{action}.shape: {got.shape}")


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Make ``module.<tensor_name>`` the output of ``parametrization`` applied to a stored
    original, and return ``module``.

    ``parametrization(X)`` maps the stored tensor(s) to the tensor the module uses. An optional
    ``right_inverse(Y)`` maps a wanted value back to the stored tensor(s) (one tensor, or a
    sequence that is stored as ``original0``, ``original1``, ...); it runs once at registration
    on the current value and again on every assignment ``module.<tensor_name> = value``.
    Registering again on the same name stacks the new parametrization after the existing ones.
    Unless ``unsafe=True``, the parametrized tensor must keep the original's dtype and shape.

    Example::

        class Symmetric(nn.Module):
            def forward(self, X):
                return X.triu() + X.triu(1).transpose(-1, -2)

        parametrize.register_parametrization(layer, "weight", Symmetric())
        layer.parametrizations.weight.original  # the trained tensor
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            current = getattr(module, tensor_name)
            result = parametrization(current)
            if not isinstance(result, Tensor):
                raise ValueError("A parametrization must return a tensor. Got "
                                 f"{type(result).__name__}.")
            _check_same("Registering a parametrization may not change the", tensor_name,
                        current, result, f"parametrization(module.{tensor_name})",
                        "of the tensor, unless the `unsafe` flag is enabled")
            if hasattr(parametrization, "right_inverse"):
                try:
                    inverse = parametrization.right_inverse(result)
                except NotImplementedError:
                    pass
                else:
                    if not isinstance(inverse, Tensor):
                        raise ValueError("parametrization.right_inverse must return a tensor. "
                                         f"Got: {type(inverse).__name__}")
                    _check_same("The tensor returned by parametrization.right_inverse must "
                                "have the same", tensor_name, current, inverse, "returned",
                                f"as module.{tensor_name}, unless the `unsafe` flag is enabled")
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    return module


def is_parametrized(module: Module, tensor_name: Optional[str] = None) -> bool:
    """Whether ``module`` has any parametrization, or one on ``tensor_name`` when given."""
    registry = getattr(module, "parametrizations", None)
    if not isinstance(registry, ModuleDict):
        return False
    return len(registry) > 0 if tensor_name is None else tensor_name in registry


def remove_parametrizations(module: Module, tensor_name: str,
                            leave_parametrized: bool = True) -> Module:
    """Undo every parametrization on ``tensor_name`` and return ``module``.

    With ``leave_parametrized=True`` the plain tensor keeps the current parametrized value
    (written into the original tensor object, so an optimizer holding it keeps working);
    with ``False`` it gets the stored original back, which needs a single original tensor.
    Removing the last parametrization restores the module's own class.
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with grad_mode.no_grad():
                value = getattr(module, tensor_name)
                _maybe_set(original, value)
    elif leave_parametrized:
        value = getattr(module, tensor_name)
        original = Parameter(value) if value.requires_grad else value
    else:
        raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that "
                         "is parametrized in terms of a sequence of tensors.")
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's class before parametrizations swapped it (its own class otherwise)."""
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(from_module: Module, to_module: Module,
                                         tensor_name: Optional[str] = None) -> Module:
    """Register ``from_module``'s parametrizations (all, or those of ``tensor_name``) on
    ``to_module`` and share the original tensors with it; returns ``to_module``."""
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    for name in names:
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name)))
        source = from_module.parametrizations[name]
        for parametrization in source:
            register_parametrization(to_module, name, parametrization)
        target = to_module.parametrizations[name]
        if hasattr(source, "original"):
            target.original = source.original
        else:
            index = 0
            while hasattr(source, f"original{index}"):
                setattr(target, f"original{index}", getattr(source, f"original{index}"))
                index += 1
    return to_module
