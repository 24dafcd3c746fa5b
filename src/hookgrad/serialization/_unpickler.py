"""The one restricted unpickler: loading a checkpoint never runs code from the file.

A pickle is a small program; its only dangerous instructions are the ones that look up a global
(``GLOBAL``, ``STACK_GLOBAL``, ``EXT*``, ``INST``) and the ones that call or mutate what was looked
up (``REDUCE``, ``NEWOBJ``, ``BUILD``). We run Python's own pickle interpreter with those
replaced: a global resolves only from an allowlist of hookgrad objects standing in for torch's
(tensor and Parameter rebuilders, storage types, dtypes, ``torch.Size``, ``torch.device``) plus
containers and primitives, calls go only to allowlisted callables, and ``BUILD`` only fills an
``OrderedDict``'s attributes (the ``_metadata`` of a state dict). Anything else raises
``pickle.UnpicklingError`` naming the global, as torch's ``weights_only`` unpickler does.
"""
from __future__ import annotations

import pickle
from collections import Counter, OrderedDict
from typing import Any, Callable, Dict, Optional

import numpy as np

import hookgrad
from .._warnings import warn
from ._storage import STORAGE_DTYPES, TORCH_DTYPE_NAMES, hookgrad_dtype, rebuild_tensor

UnpicklingError = pickle.UnpicklingError
_UnpicklerBase = pickle._Unpickler  # type: ignore[attr-defined]  # the Python one: per-opcode

_user_globals: Dict[str, Any] = {}


class StorageType:
    """What ``torch.FloatStorage`` (or ``torch.UntypedStorage``) stands for in a checkpoint: the
    dtype of the storage's elements (``None`` for untyped bytes)."""

    __slots__ = ("name", "dtype_name")

    def __init__(self, name: str, dtype_name: Optional[str]) -> None:
        self.name = name
        self.dtype_name = dtype_name

    def __repr__(self) -> str:
        return f"torch.{self.name}"


class _TorchClass:
    """``torch.Tensor`` / ``torch.nn.Parameter`` as a ``_rebuild_from_type_v2`` argument."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


# ---------------------------------------------------------------------------------------------
# torch's rebuild functions, written for hookgrad tensors
# ---------------------------------------------------------------------------------------------
def _rebuild_tensor(storage, storage_offset, size, stride):
    return rebuild_tensor(storage, storage_offset, size, stride)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       metadata=None):
    return rebuild_tensor(storage, storage_offset, size, stride, requires_grad)


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       dtype, metadata=None):
    return rebuild_tensor(storage, storage_offset, size, stride, requires_grad, dtype)


def _rebuild_parameter(data, requires_grad, backward_hooks):
    return hookgrad.nn.Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    if state:
        warn("hookgrad Parameters hold no Python attributes; the attributes saved "
             "with this Parameter were dropped")
    return _rebuild_parameter(data, requires_grad, backward_hooks)


def _rebuild_from_type_v2(func, new_type, args, state):
    if func not in _ALLOWED_CALLABLES:
        raise UnpicklingError(f"_rebuild_from_type_v2 called with {func!r}, not an allowed "
                              "rebuild function")
    result = func(*args)
    if isinstance(new_type, _TorchClass) and new_type.name == "Parameter":
        result = _rebuild_parameter(result, result.requires_grad, None)
    if state:
        warn("hookgrad tensors hold no Python attributes; the attributes saved with "
             "this tensor were dropped")
    return result


def _unsupported(kind: str) -> Callable:
    def refuse(*args):
        raise UnpicklingError(f"hookgrad cannot load {kind} tensors (dense CPU tensors only)")
    return refuse


def _latin1_encode(text, encoding="utf-8", errors="strict"):
    # Python 3 writes ``bytes`` for protocol 2 as _codecs.encode(text, "latin1")
    if encoding not in ("latin1", "latin-1"):
        raise UnpicklingError(f"_codecs.encode with encoding {encoding!r} is not allowed")
    return text.encode("latin1", errors)


def _size(*args):
    return hookgrad.Size(*args)


def _device(*args):
    return hookgrad.device(*args)


def _torch_globals() -> Dict[str, Any]:
    found: Dict[str, Any] = {
        "collections.OrderedDict": OrderedDict, "collections.Counter": Counter,
        "builtins.set": set, "builtins.frozenset": frozenset, "builtins.complex": complex,
        "builtins.bytearray": bytearray, "_codecs.encode": _latin1_encode,
        "torch.Size": _size, "torch.device": _device,
        "torch.Tensor": _TorchClass("Tensor"),
        "torch.nn.parameter.Parameter": _TorchClass("Parameter"),
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
        "torch.storage.UntypedStorage": StorageType("UntypedStorage", None),
    }
    for function in (_rebuild_tensor, _rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_parameter,
                     _rebuild_parameter_with_state):
        found["torch._utils." + function.__name__] = function
    for name, kind in (("_rebuild_qtensor", "quantized"), ("_rebuild_sparse_tensor", "sparse"),
                       ("_rebuild_nested_tensor", "nested"),
                       ("_rebuild_meta_tensor_no_storage", "meta"),
                       ("_rebuild_wrapper_subclass", "subclass"),
                       ("_rebuild_device_tensor_from_numpy", "device"),
                       ("_rebuild_device_tensor_from_cpu_tensor", "device")):
        found["torch._utils." + name] = _unsupported(kind)
    for storage, dtype_name in STORAGE_DTYPES.items():
        found["torch." + storage] = found["torch.cuda." + storage] = StorageType(storage,
                                                                                   dtype_name)
    return found


_TORCH_GLOBALS = _torch_globals()
_ALLOWED_CALLABLES = [value for value in _TORCH_GLOBALS.values() if callable(value)
                      and not isinstance(value, (StorageType, _TorchClass))]
_NEWOBJ_CLASSES = (OrderedDict, Counter, set, frozenset, complex, bytearray)


def _resolve_torch(module: str, name: str):
    """Our stand-in for torch's ``module.name``, a dtype, or ``None``."""
    path = f"{module}.{name}"
    if path in _TORCH_GLOBALS:
        return _TORCH_GLOBALS[path]
    if module == "torch" and name in TORCH_DTYPE_NAMES:
        return hookgrad_dtype(name, "a dtype in the checkpoint")
    return None


# ---------------------------------------------------------------------------------------------
# hookgrad's own older files: plain pickles of NumPy arrays
# ---------------------------------------------------------------------------------------------
def _plain_dtype(*args):
    dtype = np.dtype(*args)
    if dtype.hasobject:
        raise UnpicklingError("a NumPy dtype holding Python objects is not allowed with "
                              "weights_only=True")
    return dtype


def _numpy_reconstruct(cls, shape, typecode):
    if cls is not np.ndarray:
        raise UnpicklingError(f"only numpy.ndarray may be reconstructed, not {cls!r}")
    return np.ndarray.__new__(np.ndarray, shape, _plain_dtype(typecode))


def _numpy_scalar(dtype, data=None):
    if not isinstance(dtype, np.dtype) or dtype.hasobject or not isinstance(data, bytes):
        raise UnpicklingError("only NumPy scalars of plain dtypes are allowed")
    return np.frombuffer(data, dtype, count=1)[0]


def _numpy_frombuffer(buffer, dtype, shape, order):
    # how protocol 5 pickles an array; copied so the tensor is writable
    if not isinstance(buffer, (bytes, bytearray, pickle.PickleBuffer)):
        raise UnpicklingError(f"expected array bytes, got {type(buffer).__name__}")
    return np.frombuffer(buffer, _plain_dtype(dtype)).reshape(shape, order=order).copy("K")


def _hookgrad_tensor(array, requires_grad=False):
    if not isinstance(array, np.ndarray):
        raise UnpicklingError(f"expected a NumPy array, got {type(array).__name__}")
    tensor = hookgrad.from_numpy(array)
    return tensor.requires_grad_(True) if requires_grad else tensor


def _hookgrad_parameter(array, requires_grad=True):
    return hookgrad.nn.Parameter(_hookgrad_tensor(array), requires_grad)


def _hookgrad_dtype(name):
    return hookgrad_dtype(name)


def _hookgrad_globals() -> Dict[str, Any]:
    found = {"numpy.ndarray": np.ndarray, "numpy.dtype": _plain_dtype,
             "hookgrad.tensor._rebuild": _hookgrad_tensor,
             "hookgrad.nn.parameter._rebuild_parameter": _hookgrad_parameter,
             "hookgrad._dtype._by_name": _hookgrad_dtype,
             "hookgrad.tensor.Size": hookgrad.Size, "hookgrad.ops.creation.device": _device}
    for core in ("numpy.core.multiarray", "numpy._core.multiarray"):
        found[core + "._reconstruct"] = _numpy_reconstruct
        found[core + ".scalar"] = _numpy_scalar
    for core in ("numpy.core.numeric", "numpy._core.numeric"):
        found[core + "._frombuffer"] = _numpy_frombuffer
    return found


# ---------------------------------------------------------------------------------------------
# the unpicklers
# ---------------------------------------------------------------------------------------------
_OLD_MODULES = {"__builtin__": "builtins", "copy_reg": "copyreg"}


def _refuse_global(path: str) -> UnpicklingError:
    # torch names builtins without their module ("GLOBAL print"); so do we, so messages match
    shown = path[len("builtins."):] if path.startswith("builtins.") else path
    return UnpicklingError(
        f"Weights only load failed: Unsupported global: GLOBAL {shown} was not an allowed global "
        "by default. weights_only=True admits only tensors, storages, Parameters, OrderedDict, "
        "containers and primitives, and loading anything else could run code from the file. "
        "If you trust the file, load it with weights_only=False, or allowlist the global with "
        f"hookgrad.serialization.add_safe_globals([{shown}]).")


def _unsupported_opcode(name: str) -> Callable:
    def refuse(self):
        raise UnpicklingError(f"Weights only load failed: the {name} pickle opcode is not "
                              "allowed with weights_only=True")
    return refuse


class _Opcodes(dict):
    def __missing__(self, code: int):  # Python's unpickler would raise a bare KeyError
        raise UnpicklingError(f"invalid load key, {bytes([code])!r}.")


class RestrictedUnpickler(_UnpicklerBase):
    """Python's unpickler with its global, call and build instructions restricted."""

    dispatch = _Opcodes(_UnpicklerBase.dispatch)

    def __init__(self, file, persistent_load: Callable, hookgrad_file: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(file, **kwargs)
        self.persistent_load = persistent_load
        self._extra = _hookgrad_globals() if hookgrad_file else {}
        self._callables = list(_ALLOWED_CALLABLES) + [v for v in self._extra.values()
                                                      if callable(v) and v is not np.ndarray]
        self._callables += [v for v in _user_globals.values() if callable(v)]
        self._user_types = tuple(v for v in _user_globals.values() if isinstance(v, type))

    def find_class(self, module: str, name: str):
        module = _OLD_MODULES.get(module, module)
        path = f"{module}.{name}"
        if path in _user_globals:
            return _user_globals[path]
        if path in self._extra:
            return self._extra[path]
        found = _resolve_torch(module, name)
        if found is None:
            raise _refuse_global(path)
        return found

    def _is_allowed_callable(self, func) -> bool:
        return any(func is allowed for allowed in self._callables)

    def load_reduce(self) -> None:
        args = self.stack.pop()
        func = self.stack[-1]
        if not self._is_allowed_callable(func):
            raise UnpicklingError(f"Weights only load failed: calling {func!r} is not allowed "
                                  "with weights_only=True")
        self.stack[-1] = func(*args)

    def load_newobj(self) -> None:
        args = self.stack.pop()
        cls = self.stack.pop()
        self.append(self._new(cls, args, {}))

    def load_newobj_ex(self) -> None:
        kwargs = self.stack.pop()
        args = self.stack.pop()
        cls = self.stack.pop()
        self.append(self._new(cls, args, kwargs))

    def _new(self, cls, args, kwargs):
        allowed = _NEWOBJ_CLASSES + self._user_types
        if self._extra:
            allowed += (hookgrad.Size,)
        if not (isinstance(cls, type) and cls in allowed):
            raise UnpicklingError(f"Weights only load failed: creating {cls!r} is not allowed "
                                  "with weights_only=True")
        return cls.__new__(cls, *args, **kwargs)

    def load_build(self) -> None:
        state = self.stack.pop()
        inst = self.stack[-1]
        kind = type(inst)
        if kind is OrderedDict or kind in self._user_types:
            if hasattr(inst, "__setstate__") and kind is not OrderedDict:
                inst.__setstate__(state)
                return
            slots = None
            if isinstance(state, tuple) and len(state) == 2:
                state, slots = state
            for key, value in list((state or {}).items()) + list((slots or {}).items()):
                if not isinstance(key, str) or key.startswith("__"):
                    raise UnpicklingError(f"Weights only load failed: setting attribute "
                                          f"{key!r} is not allowed with weights_only=True")
                setattr(inst, key, value)
        elif self._extra and (kind is np.ndarray or isinstance(inst, np.dtype)):
            if kind is np.ndarray and not (isinstance(state, tuple) and len(state) == 5
                                           and isinstance(state[2], np.dtype)
                                           and not state[2].hasobject):
                raise UnpicklingError("only NumPy arrays of plain dtypes may be loaded")
            inst.__setstate__(state)
        else:
            raise UnpicklingError(f"Weights only load failed: setting the state of a "
                                  f"{kind.__name__} is not allowed with weights_only=True")

    dispatch[pickle.REDUCE[0]] = load_reduce
    dispatch[pickle.NEWOBJ[0]] = load_newobj
    dispatch[pickle.NEWOBJ_EX[0]] = load_newobj_ex
    dispatch[pickle.BUILD[0]] = load_build
    dispatch[pickle.INST[0]] = _unsupported_opcode("INST")
    dispatch[pickle.OBJ[0]] = _unsupported_opcode("OBJ")


class FullUnpickler(pickle.Unpickler):
    """``weights_only=False``: any global, as plain pickle (unsafe: it can run code), with
    torch's names mapped to hookgrad's so torch files load without torch."""

    def __init__(self, file, persistent_load: Callable, **kwargs: Any) -> None:
        super().__init__(file, **kwargs)
        self._persistent_load = persistent_load

    def persistent_load(self, saved_id):
        return self._persistent_load(saved_id)

    def find_class(self, module: str, name: str):
        module = _OLD_MODULES.get(module, module)
        found = _resolve_torch(module, name)
        if found is None and module.startswith("hookgrad"):  # older hookgrad files' names
            found = _hookgrad_globals().get(f"{module}.{name}")
        return super().find_class(module, name) if found is None else found


def _no_persistent(saved_id):
    raise UnpicklingError(f"unexpected persistent id {saved_id!r}")


def unpickler(file, weights_only: bool, persistent_load: Optional[Callable] = None,
              hookgrad_file: bool = False, **kwargs: Any):
    """The unpickler ``load`` uses for every format."""
    persistent_load = persistent_load or _no_persistent
    if weights_only:
        return RestrictedUnpickler(file, persistent_load, hookgrad_file, **kwargs)
    return FullUnpickler(file, persistent_load, **kwargs)


def parse_storage_id(saved_id) -> tuple:
    """torch's ('storage', storage type, key, location, numel[, view metadata]) checked and
    decoded into (StorageType, key, location, numel, view_metadata)."""
    if not isinstance(saved_id, tuple) or len(saved_id) not in (5, 6):
        raise UnpicklingError(f"unsupported persistent id {saved_id!r}")
    typename, storage_type, key, location, numel = saved_id[:5]
    view = saved_id[5] if len(saved_id) == 6 else None
    typename = typename.decode("ascii") if isinstance(typename, bytes) else typename
    location = location.decode("ascii") if isinstance(location, bytes) else location
    if typename != "storage" or not isinstance(storage_type, StorageType):
        raise UnpicklingError(f"unsupported persistent id {saved_id!r}")
    if not isinstance(numel, int) or numel < 0 or not isinstance(location, str):
        raise UnpicklingError(f"invalid storage in checkpoint: {saved_id!r}")
    return storage_type, str(key), location, numel, view


# ---------------------------------------------------------------------------------------------
# the allowlist users extend, as torch.serialization's
# ---------------------------------------------------------------------------------------------
def add_safe_globals(safe_globals: list) -> None:
    """Allow ``weights_only`` loading to look up these classes or functions (each an object, or
    ``(object, "module.name")``). Only list what you trust: a class may run code on load."""
    for entry in safe_globals:
        obj, path = entry if isinstance(entry, tuple) else (
            entry, f"{entry.__module__}.{entry.__qualname__}")
        _user_globals[path] = obj


def get_safe_globals() -> list:
    return list(_user_globals.values())


def clear_safe_globals() -> None:
    _user_globals.clear()


class safe_globals:
    """``with safe_globals([...]):`` allows globals for the loads inside the block only."""

    def __init__(self, safe_globals: list) -> None:
        self._globals = safe_globals
        self._saved: Dict[str, Any] = {}

    def __enter__(self) -> "safe_globals":
        self._saved = dict(_user_globals)
        add_safe_globals(self._globals)
        return self

    def __exit__(self, *exc: Any) -> None:
        _user_globals.clear()
        _user_globals.update(self._saved)
