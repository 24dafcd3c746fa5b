"""What ``capture`` and ``patch`` need to know about a framework, in one small class per framework.

The recorder is written once against the hook API that hookgrad and PyTorch share
(``register_forward_pre_hook``, ``register_forward_hook(..., always_call=True)``,
``register_full_backward_hook``, ``Tensor.register_hook``, ``named_modules``). What differs is
asked of a backend: which objects are modules and tensors, how a tensor becomes a NumPy copy
(torch: detach, copy to the CPU with torch, upcast dtypes NumPy lacks), how a stored array
becomes a tensor again, and which wrapper to look through for names (DDP's ``module``).

The backend is picked by the type of the model (or ``framework=``) through
``hookgrad.utils._framework``; the torch backend imports torch only when it is built, so a
capture of a hookgrad model never imports torch.
"""
from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any, Iterable, Iterator, List, Optional, Tuple

import numpy as np

import hookgrad
from ..utils._framework import framework_of, import_torch


class Backend:
    """The questions the recorder asks; one subclass per framework."""

    framework = ""
    module_type: type
    tensor_type: type

    def is_module(self, obj: Any) -> bool:
        return isinstance(obj, self.module_type)

    def is_tensor(self, obj: Any) -> bool:
        return isinstance(obj, self.tensor_type)

    def to_numpy(self, tensor: Any) -> Tuple[np.ndarray, Optional[str]]:
        """A C-contiguous NumPy copy of ``tensor`` (never a view: the model may change the tensor
        in place later), and the tensor's dtype name when the copy had to change it."""
        raise NotImplementedError

    def from_numpy(self, array: np.ndarray, source_dtype: Optional[str] = None) -> Any:
        """A tensor of this framework holding ``array`` (in ``source_dtype`` when given)."""
        raise NotImplementedError

    def naming_root(self, model: Any) -> Any:
        """The module whose ``named_modules()`` give the names selectors match."""
        return model

    def wrapper_prefix(self, model: Any) -> str:
        """The name prefix a wrapper adds (``"module."`` for DDP), else ``""``."""
        return ""

    def function_mode(self) -> type:
        """The framework's ``TorchFunctionMode`` base class (for ``capture(..., ops=...)``)."""
        raise NotImplementedError

    def op_namespaces(self) -> tuple:
        """Where the framework's op names live: top level, ``nn.functional``, ``Tensor``."""
        raise NotImplementedError

    @contextlib.contextmanager
    def unseen(self) -> Iterator[None]:
        """A block whose calls no function mode sees: the capture's own copies and hook
        registrations are not the model's work, so a user's mode (a FLOP counter, a log)
        must not see them either. Every mode is taken off the framework's stack and put back
        in order; only modes: a torch tensor subclass's own ``__torch_function__`` still runs,
        as it would without a capture."""
        overrides = self.overrides
        modes = []
        while overrides._get_current_function_mode() is not None:
            modes.append(overrides._pop_mode())
        try:
            yield
        finally:
            for mode in reversed(modes):
                overrides._push_mode(mode)


class HookgradBackend(Backend):
    framework = "hookgrad"

    def __init__(self) -> None:
        self.hookgrad = hookgrad
        self.module_type = hookgrad.nn.Module
        self.tensor_type = hookgrad.Tensor
        self.overrides = hookgrad.overrides

    def to_numpy(self, tensor: Any) -> Tuple[np.ndarray, Optional[str]]:
        return np.array(tensor.detach().numpy(), copy=True, order="C"), None

    def from_numpy(self, array: np.ndarray, source_dtype: Optional[str] = None) -> Any:
        return self.hookgrad.from_numpy(np.array(array, copy=True))

    def function_mode(self) -> type:
        return self.overrides.TorchFunctionMode

    def op_namespaces(self) -> tuple:
        return (self.hookgrad, self.hookgrad.nn.functional, self.hookgrad.Tensor)


# torch dtypes NumPy has no type for, and what their values are stored as (exactly: every
# bfloat16, float8 and complex32 value is representable in the wider type)
_WIDER = {"bfloat16": "float32", "float8_e4m3fn": "float32", "float8_e4m3fnuz": "float32",
          "float8_e5m2": "float32", "float8_e5m2fnuz": "float32", "float8_e8m0fnu": "float32",
          "complex32": "complex64"}


class TorchBackend(Backend):
    framework = "torch"

    def __init__(self) -> None:
        torch = import_torch()
        self.torch = torch
        self.module_type = torch.nn.Module
        self.tensor_type = torch.Tensor
        # torch shows Tensor.detach, .to, .numpy, .register_hook to modes (see ``unseen``)
        self.overrides = torch.overrides
        self.wrappers = (torch.nn.parallel.DistributedDataParallel, torch.nn.DataParallel)

    def to_numpy(self, tensor: Any) -> Tuple[np.ndarray, Optional[str]]:
        torch = self.torch
        value = tensor.detach()
        if value.layout != torch.strided:  # sparse and other layouts: store the dense values
            value = value.to_dense()
        on_cpu = value.device.type == "cpu"
        # torch copies a device tensor to host memory; NumPy never sees device memory
        value = value.to("cpu").resolve_conj().resolve_neg()
        dtype_name = str(value.dtype).removeprefix("torch.")
        source_dtype = None
        if dtype_name in _WIDER:
            value = value.to(getattr(torch, _WIDER[dtype_name]))
            source_dtype, on_cpu = dtype_name, False  # .to made a fresh tensor
        try:
            array = value.numpy()
        except TypeError as error:
            raise TypeError(f"capture cannot store a torch tensor of dtype {value.dtype}: "
                            f"{error}") from error
        # a tensor that was on the CPU shares memory with the model's: copy it; one that came
        # from a device (or was upcast) is already a private copy
        return np.array(array, copy=on_cpu, order="C"), source_dtype

    def from_numpy(self, array: np.ndarray, source_dtype: Optional[str] = None) -> Any:
        tensor = self.torch.from_numpy(np.array(array, copy=True))
        if source_dtype is not None:
            tensor = tensor.to(getattr(self.torch, source_dtype))
        return tensor

    def naming_root(self, model: Any) -> Any:
        # DDP and DataParallel wrap the user's model: name its modules as the user named them,
        # so one capture spec serves the model with and without the wrapper
        return model.module if isinstance(model, self.wrappers) else model

    def wrapper_prefix(self, model: Any) -> str:
        return "module." if isinstance(model, self.wrappers) else ""

    def function_mode(self) -> type:
        # torch's own public seam: it sees torch.*, F.* and Tensor methods of a torch model
        return self.overrides.TorchFunctionMode

    def op_namespaces(self) -> tuple:
        return (self.torch, self.torch.nn.functional, self.torch.Tensor)


def tensors_in(value: Any, backend: Backend, prefix: str = "") -> List[Tuple[str, Any]]:
    """``(position, tensor)`` for every tensor in a (nested) tuple/list/dict, in order:
    ``"1"``, ``"1.0"``, ``"key"``."""
    if backend.is_tensor(value):
        return [(prefix, value)]
    items: Iterable[Tuple[Any, Any]]
    if isinstance(value, (tuple, list)):
        items = enumerate(value)
    elif isinstance(value, Mapping):
        items = value.items()
    else:
        return []
    found = []
    for index, item in items:
        found += tensors_in(item, backend, f"{prefix}.{index}" if prefix else str(index))
    return found


_BACKENDS: dict = {}


def backend(*objects: Any, framework: Optional[str] = None) -> Backend:
    """The backend for the framework of ``objects`` (or ``framework``), built once."""
    name = framework_of(*objects, framework=framework)
    if name not in _BACKENDS:
        _BACKENDS[name] = TorchBackend() if name == "torch" else HookgradBackend()
    return _BACKENDS[name]


def module_backend(model: Any, what: str) -> Backend:
    """The backend of ``model``, which must be an ``nn.Module`` of hookgrad or torch."""
    chosen = backend(model)
    if not chosen.is_module(model):
        raise TypeError(f"{what} needs an nn.Module (hookgrad or torch), got "
                        f"{type(model).__name__}")
    return chosen
