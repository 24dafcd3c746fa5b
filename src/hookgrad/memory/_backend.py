"""One small adapter per framework: everything the memory tools ask of hookgrad or of PyTorch.

The ledger, the savers, policies and the planner are written once. What differs between the two
frameworks — which saved-tensor hooks and module hooks to register, how to find a tensor's
allocation, how to checkpoint, the numeric kernels a saver encodes with, how bytes reach a file,
how a step's real memory peak is measured — is asked of a ``Backend`` chosen by the type of the
tensor or module in hand (like einops' backends). The hookgrad backend works on NumPy arrays;
the torch backend on torch tensors, on the tensor's own device (never through NumPy for a GPU
tensor). torch is imported only when the torch backend is first asked for.
"""
from __future__ import annotations

import contextlib
import sys
import threading
from typing import Any, Callable, Optional

import numpy as np

import hookgrad
from hookgrad.autograd.graph import compose_hooks
from ..utils._framework import framework_of, import_torch
from ..utils.checkpoint import checkpoint
from ._peak import CudaPeakMeter, PeakMeter, ProfilerPeakMeter, TracemallocPeakMeter


class DType:
    """What a saver needs to know of a dtype: NumPy's ``kind`` letter and ``itemsize``."""

    __slots__ = ("kind", "itemsize", "name")

    def __init__(self, kind: str, itemsize: int, name: str):
        self.kind, self.itemsize, self.name = kind, itemsize, name

    def __repr__(self) -> str:
        return self.name


def dtype_from_name(name: str) -> DType:
    """A ``DType`` from a printed name (``"float32"``, ``"bfloat16"``, ``"int64"``...)."""
    if name == "bfloat16":
        return DType("f", 2, name)
    try:
        numpy_dtype = np.dtype(name)
    except TypeError:
        return DType("V", 0, name)
    return DType(numpy_dtype.kind, numpy_dtype.itemsize, name)


class Backend:
    """The questions the memory tools ask of a framework (see the subclasses)."""

    name = ""

    def is_tensor(self, value: Any) -> bool:
        raise NotImplementedError

    def dtype_of(self, tensor: Any) -> DType:
        return dtype_from_name(str(tensor.dtype).replace("torch.", ""))

    def nbytes(self, tensor: Any) -> int:
        return tensor.numel() * tensor.element_size()

    def op_name(self, tensor: Any, info: Any) -> str:
        raise NotImplementedError

    def kind_of(self, tensor: Any, info: Any, known: Optional[dict] = None,
                inputs: Optional[set] = None) -> str:
        """Why a saved tensor is alive: 'parameter' / 'buffer' (owned by the model, not counted),
        'input' (a leaf the caller passed in) or 'activation' (kept alive by saving it).
        ``known`` maps storage keys of the running model's parameters and buffers to their kind;
        ``inputs``, when given, holds the storage keys of the tensors the model was called with:
        a leaf without grad that is not one of them was made inside (batch norm's saved mean).
        """
        if info is not None and info.is_output:
            return "activation"
        key = self.storage_key(tensor) if known or inputs is not None else None
        if known:
            found = known.get(key)
            if found is not None:
                return found
        if tensor.grad_fn is None and tensor.requires_grad:
            return "parameter"
        base = getattr(tensor, "_base", None)  # the public view base
        if base is not None and base.grad_fn is None:
            return "parameter" if base.requires_grad else "input"
        if tensor.grad_fn is None and (info is None or info.is_input):
            if inputs is not None and info is None:
                return "input" if key in inputs else "activation"
            return "input"
        return "activation"

    def as_packable(self, tensor: Any, info: Any) -> Any:
        """What to store for a tensor a hook leaves as it is: never the op's own output, which
        would point back at the node that saves it (a reference cycle)."""
        return tensor.detach() if info is None or info.is_output else tensor

    def host_bytes(self, array: Any) -> np.ndarray:
        """The bytes of an encoded array as a flat uint8 NumPy array in host memory."""
        raise NotImplementedError

    def from_bytes(self, buffer: np.ndarray, dtype: Any, shape: tuple, device: Any) -> Any:
        raise NotImplementedError

    def is_array(self, value: Any) -> bool:
        raise NotImplementedError


# -- hookgrad ---------------------------------------------------------------------------------
class HookgradBackend(Backend):
    """hookgrad tensors; savers encode the NumPy array behind each one."""

    name = "hookgrad"

    def __init__(self):
        self.hookgrad = self.lib = hookgrad  # ``lib``: the framework's module, either backend
        self.graph = hookgrad.autograd.graph
        self.tensor_type = hookgrad.Tensor

    def is_tensor(self, value: Any) -> bool:
        return isinstance(value, self.tensor_type)

    def is_array(self, value: Any) -> bool:
        return isinstance(value, np.ndarray)

    def dtype_of(self, tensor: Any) -> DType:
        numpy_dtype = tensor.dtype.numpy
        return DType(numpy_dtype.kind, numpy_dtype.itemsize, numpy_dtype.name)

    def nbytes(self, tensor: Any) -> int:
        return tensor.nbytes

    def saved_tensors_hooks(self, pack: Callable, unpack: Callable):
        return self.graph.saved_tensors_hooks(pack, unpack, compose=True)

    def current_info(self) -> Any:
        return self.graph.current_saved_tensor()

    def op_name(self, tensor: Any, info: Any) -> str:
        return info.node.name() if info is not None and info.node is not None else "(no node)"

    def module_hooks(self, pre: Callable, post: Callable) -> list:
        module = self.hookgrad.nn.modules.module
        return [module.register_module_forward_pre_hook(pre),
                module.register_module_forward_hook(post, always_call=True)]

    def checkpoint(self, function: Callable, *args, use_reentrant: bool = False, **kwargs):
        return checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)

    @contextlib.contextmanager
    def one_thread(self):
        """One intra-op thread within the block: the pool's pieces then allocate their
        buffers one after another, so a measured peak does not depend on how two threads'
        pieces happened to overlap (and repeats from step to step)."""
        previous = self.hookgrad.get_num_threads()
        self.hookgrad.set_num_threads(1)
        try:
            yield
        finally:
            self.hookgrad.set_num_threads(previous)

    # hookgrad's Module.__call__ reads ``self.forward`` after the forward pre-hooks: a module
    # already being called can still have its forward wrapped (recompute() on the root)
    wraps_running_forward = True

    def checkpoint_running(self, function: Callable, args: tuple) -> Optional[Callable]:
        return None

    def array_of(self, tensor: Any) -> np.ndarray:
        return tensor.detach().numpy()

    def storage_key(self, tensor: Any) -> int:
        return self.graph.storage_key(self.array_of(tensor))

    def randn(self, size: int) -> Any:
        return self.hookgrad.randn(size, requires_grad=True)

    def host_bytes(self, array: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(array).view(np.uint8).reshape(-1)

    def from_bytes(self, buffer: np.ndarray, dtype: Any, shape: tuple, device: Any) -> np.ndarray:
        return buffer.view(dtype).reshape(shape)

    def stage(self, array: Any) -> Any:
        return None

    def peak_meter(self, device: Any = None) -> "PeakMeter":
        return TracemallocPeakMeter()

    def device_of(self, value: Any) -> Any:
        return None


# -- torch ------------------------------------------------------------------------------------
class _TorchHookStack(threading.local):
    def __init__(self):
        self.pairs: list = []


class _ComposedTorchHooks:
    """torch's hook contexts replace the enclosing pair; memory tools must stack (a ledger
    around a saver records what the saver keeps), so they keep their own stack and register
    one torch pair that applies all of it: pack outer to inner, unpack inner to outer."""

    def __init__(self, torch, stack: _TorchHookStack, pack: Callable, unpack: Callable):
        self.torch, self.stack, self.pair = torch, stack, (pack, unpack)
        self.context = None

    def __enter__(self):
        pairs = list(self.stack.pairs) + [self.pair]
        self.stack.pairs.append(self.pair)
        pack_hook, unpack_hook = compose_hooks(*pairs)  # the same nesting as hookgrad's
        self.context = self.torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook)
        self.context.__enter__()
        return self

    def __exit__(self, *exc):
        try:
            self.context.__exit__(*exc)
        finally:
            self.stack.pairs.pop()
        return False


class TorchBackend(Backend):
    """PyTorch tensors and modules, through torch's public hooks only; savers encode with torch
    ops on the tensor's device."""

    name = "torch"

    def __init__(self):
        self.torch = self.lib = import_torch()
        self.tensor_type = self.torch.Tensor
        self.stack = _TorchHookStack()

    def is_tensor(self, value: Any) -> bool:
        return isinstance(value, self.tensor_type)

    def is_array(self, value: Any) -> bool:
        return isinstance(value, self.tensor_type)

    def saved_tensors_hooks(self, pack: Callable, unpack: Callable):
        return _ComposedTorchHooks(self.torch, self.stack, pack, unpack)

    def current_info(self) -> Any:
        return None  # torch does not say which node is saving: decide from the tensor alone

    def op_name(self, tensor: Any, info: Any) -> str:
        # torch's pack hook is not told the saving node; the tensor's own grad_fn (the op that
        # made it) is the closest public answer
        grad_fn = tensor.grad_fn
        if grad_fn is not None:
            return grad_fn.name()
        return "(parameter)" if tensor.requires_grad else "(leaf)"

    def module_hooks(self, pre: Callable, post: Callable) -> list:
        module = self.torch.nn.modules.module
        return [module.register_module_forward_pre_hook(pre),
                module.register_module_forward_hook(post, always_call=True)]

    def one_thread(self):
        """torch's allocations do not depend on how its threads overlap: nothing to change."""
        return contextlib.nullcontext()

    def checkpoint(self, function: Callable, *args, use_reentrant: bool = False, **kwargs):
        from torch.utils.checkpoint import checkpoint
        return checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)

    # torch's Module.__call__ has fetched ``forward`` before the pre-hooks run
    wraps_running_forward = False

    def checkpoint_running(self, function: Callable, args: tuple) -> Optional[Callable]:
        """Checkpoint a forward that is already running (the root, seen first by its pre-hook):
        torch's non-reentrant checkpoint is a generator whose first step sets the hooks that
        save nothing but the inputs, and whose second step ends them. Returns the callable
        that ends the region, or None where this torch lays it out differently."""
        from torch.utils import checkpoint as module
        generator_of = getattr(module, "_checkpoint_without_reentrant_generator", None)
        if not self.torch.is_grad_enabled():
            return lambda: None  # nothing is saved: nothing to checkpoint
        if generator_of is None:  # pragma: no cover - another torch's layout
            return None
        generator = generator_of(function, True, module.noop_context_fn,
                                 module._DEFAULT_DETERMINISM_MODE, False, True, *args)
        next(generator)

        def finish() -> None:
            for _ in generator:  # runs the rest: ends the checkpoint's hooks
                pass
        return finish

    def array_of(self, tensor: Any) -> Any:
        return tensor.detach()

    def storage_key(self, tensor: Any) -> tuple:
        return (tensor.device.type, tensor.untyped_storage().data_ptr())

    def randn(self, size: int) -> Any:
        return self.torch.randn(size, requires_grad=True)

    def host_bytes(self, array: Any) -> np.ndarray:
        staged = array if array.device.type == "cpu" else array.cpu()
        return staged.contiguous().reshape(-1).view(self.torch.uint8).numpy()

    def from_bytes(self, buffer: np.ndarray, dtype: Any, shape: tuple, device: Any) -> Any:
        result = self.torch.from_numpy(buffer).view(dtype).reshape(shape)
        if device is not None and device.type != "cpu":
            result = self._to_device(result, device)
        return result

    # The CUDA-only part: copies between the GPU and pinned host memory on a side stream.
    def stage(self, array: Any) -> Any:
        """Start copying a GPU tensor into pinned host memory on a side stream; returns
        (pinned copy, event) or None for a CPU tensor."""
        if array.device.type != "cuda":
            return None
        torch = self.torch
        stream = self._side_stream(array.device)
        stream.wait_stream(torch.cuda.current_stream(array.device))
        pinned = torch.empty(array.shape, dtype=array.dtype, pin_memory=True)
        with torch.cuda.stream(stream):
            pinned.copy_(array, non_blocking=True)
            event = torch.cuda.Event()
            event.record(stream)
        return pinned, event

    def _to_device(self, host: Any, device: Any) -> Any:  # pragma: no cover - needs a GPU
        torch = self.torch
        stream = self._side_stream(device)
        with torch.cuda.stream(stream):
            result = host.pin_memory().to(device, non_blocking=True)
        torch.cuda.current_stream(device).wait_stream(stream)
        result.record_stream(torch.cuda.current_stream(device))
        return result

    def _side_stream(self, device: Any) -> Any:  # pragma: no cover - needs a GPU
        streams = self.__dict__.setdefault("_streams", {})
        if device not in streams:
            streams[device] = self.torch.cuda.Stream(device)
        return streams[device]

    def peak_meter(self, device: Any = None) -> "PeakMeter":
        if device is not None and getattr(device, "type", None) == "cuda":
            return CudaPeakMeter(self.torch, device)
        return ProfilerPeakMeter(self.torch)

    def device_of(self, value: Any) -> Any:
        for parameter in getattr(value, "parameters", lambda: [])():
            return parameter.device
        return getattr(value, "device", None)


# -- choosing -----------------------------------------------------------------------------------
_backends: dict = {}
_lock = threading.Lock()


def get_backend(name: str) -> Backend:
    backend = _backends.get(name)
    if backend is None:
        with _lock:
            backend = _backends.get(name)
            if backend is None:
                backend = (TorchBackend if name == "torch" else HookgradBackend)()
                _backends[name] = backend
    return backend


def backend_for(*objects: Any, framework: Optional[str] = None) -> Backend:
    """The backend of the first torch object among ``objects`` (or of ``framework``)."""
    return get_backend(framework_of(*objects, framework=framework))


def backend_of_tensor(value: Any) -> Optional[Backend]:
    """The backend whose tensor ``value`` is, or None (already packed, not a tensor)."""
    hookgrad_backend = get_backend("hookgrad")
    if hookgrad_backend.is_tensor(value):
        return hookgrad_backend
    if "torch" in sys.modules and framework_of(value) == "torch":
        torch_backend = get_backend("torch")
        if torch_backend.is_tensor(value):
            return torch_backend
    return None


def framework_of_rules(keys: Any) -> Optional[str]:
    """"torch" when a policy rule names a torch module type, else None."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    for key in keys:
        if isinstance(key, type) and issubclass(key, torch.nn.Module):
            return "torch"
    return None
