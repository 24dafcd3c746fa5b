"""torch.autocast: ops on a list run in a lower-precision dtype (or in float32) while it is on.

The state (per thread) and the casting live in ``hookgrad._autocast_state``; this module is the
public face: the ``autocast`` context manager and decorator, torch's state functions, and
``custom_fwd``/``custom_bwd`` for user Functions. Only the CPU runs autocast here; CUDA is not
available, so asking for it warns and leaves autocast off, as torch's CPU build does.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Optional

from .. import _autocast_state as _state
from .. import _device, _dtype
from .._warnings import warn
from ..tensor import Tensor

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available"]

_CPU_DTYPES = (_dtype.bfloat16, _dtype.float16)
_CPU_DTYPE_WARNING = ("In CPU autocast, but the target dtype is not supported. Disabling "
                      "autocast.\nCPU Autocast only supports dtypes of torch.bfloat16, "
                      "torch.float16 currently.")
_PRIVATEUSEONE_ERROR = (
    "Tried to use AMP with the `privateuseone` backend, but the backend has not registered a "
    "module or  the module miss some necessary funcs. The backend should register a module by "
    "`torch._register_device_module`, and the module must have these funcs: \n"
    "`get_amp_supported_dtype() -> List[torch.dtype]`. \n")
_NO_CUDA_WARNING = "CUDA is not available or torch_xla is imported. Disabling autocast."


def _device_type(device_type) -> str:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    return _device.device(device_type).type  # torch's RuntimeError for an unknown name


def _deprecated(old: str, new: str) -> None:
    warn(f"torch.{old} is deprecated. Please use torch.{new} instead.", DeprecationWarning)


# -- torch's state functions ---------------------------------------------------------------------
def is_autocast_available(device_type: str) -> bool:
    """Whether autocast has ``device_type`` (cpu, cuda, xpu, mps, hpu ...; not hip or meta)."""
    return _device_type(device_type) in _state.AVAILABLE


def is_autocast_enabled(device_type: Optional[str] = None) -> bool:
    """Whether autocast is on for ``device_type`` in this thread (CUDA's when none is given)."""
    return _state.is_enabled(_device_type(device_type or "cuda"))


def set_autocast_enabled(device_type, enabled: Optional[bool] = None) -> None:
    """Turn autocast on or off for ``device_type`` in this thread; with one argument, CUDA's."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    _state.set_enabled(_device_type(device_type), bool(enabled))


def get_autocast_dtype(device_type: str) -> _dtype.dtype:
    """The dtype autocast casts to on ``device_type`` in this thread (bfloat16 on the CPU)."""
    return _state.get_dtype(_device_type(device_type))


def set_autocast_dtype(device_type: str, dtype: _dtype.dtype) -> None:
    """Set the dtype autocast casts to on ``device_type`` in this thread."""
    _state.state.dtypes[_device_type(device_type)] = dtype


def get_autocast_cpu_dtype() -> _dtype.dtype:
    """Deprecated spelling of ``get_autocast_dtype("cpu")``."""
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype: _dtype.dtype) -> None:
    """Deprecated spelling of ``set_autocast_dtype("cpu", dtype)``."""
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    set_autocast_dtype("cpu", dtype)


def get_autocast_gpu_dtype() -> _dtype.dtype:
    """Deprecated spelling of ``get_autocast_dtype("cuda")``."""
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return get_autocast_dtype("cuda")


def is_autocast_cpu_enabled() -> bool:
    """Deprecated spelling of ``is_autocast_enabled("cpu")``."""
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled: bool) -> None:
    """Deprecated spelling of ``set_autocast_enabled("cpu", enabled)``."""
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    set_autocast_enabled("cpu", enabled)


def is_autocast_cache_enabled() -> bool:
    """Whether autocast may keep the casts of leaf tensors for reuse (this thread)."""
    return _state.state.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Allow or forbid autocast's cast cache in this thread."""
    _state.state.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    """Drop this thread's cached casts (float32 leaves that require grad, cast once for the
    lower list and reused until the outermost autocast closes)."""
    _state.clear_cache()


def autocast_increment_nesting() -> int:
    """One more autocast level open in this thread; returns the new depth."""
    _state.state.nesting += 1
    return _state.state.nesting


def autocast_decrement_nesting() -> int:
    """One autocast level closed in this thread; returns the new depth (torch lets it go below
    zero)."""
    _state.state.nesting -= 1
    return _state.state.nesting


# -- the context manager -------------------------------------------------------------------------
class autocast:
    """Inside ``with autocast("cpu")``, ops on autocast's lists run in ``dtype`` (bfloat16 by
    default) or in float32, and the others in the widest dtype of their inputs; gradients flow
    back to the inputs in their own dtypes. Also a decorator::

        with hookgrad.autocast("cpu", dtype=hookgrad.bfloat16):
            out = model(x)          # linear/conv/matmul in bfloat16
        loss = out.float().sum()
    """

    def __init__(self, device_type: str, dtype: Optional[_dtype.dtype] = None,
                 enabled: bool = True, cache_enabled: Optional[bool] = None):
        self.device = _device_type(device_type)
        self.fast_dtype = get_autocast_dtype(self.device) if dtype is None else dtype
        self._cache_enabled = (is_autocast_cache_enabled() if cache_enabled is None
                               else cache_enabled)
        self._enabled = enabled
        if self.device == "privateuseone":
            raise AssertionError(_PRIVATEUSEONE_ERROR)
        if self.device not in _state.AVAILABLE:
            raise RuntimeError(f"User specified an unsupported autocast device_type "
                               f"'{self.device}'")
        if enabled and self.device == "cuda":
            warn(_NO_CUDA_WARNING)
            self._enabled = False
        elif enabled and self.device == "cpu" and self.fast_dtype not in _CPU_DTYPES:
            warn(_CPU_DTYPE_WARNING)
            self._enabled = False

    def __enter__(self) -> "autocast":
        state = _state.state
        self._previous = (state.enabled.get(self.device, False),
                          state.dtypes.get(self.device), state.cache_enabled)
        state.dtypes[self.device] = self.fast_dtype
        state.cache_enabled = self._cache_enabled
        _state.set_enabled(self.device, self._enabled)
        autocast_increment_nesting()
        return self

    def __exit__(self, exc_type, exc, traceback) -> bool:
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        enabled, dtype, cache = self._previous
        state = _state.state
        if dtype is None:
            state.dtypes.pop(self.device, None)
        else:
            state.dtypes[self.device] = dtype
        state.cache_enabled = cache
        _state.set_enabled(self.device, enabled)
        return False

    def __call__(self, func: Callable) -> Callable:
        settings = (self.device, self.fast_dtype, self._enabled, self._cache_enabled)

        @functools.wraps(func)
        def under_autocast(*args, **kwargs):
            device, dtype, enabled, cache = settings
            with autocast(device, dtype=dtype, enabled=enabled, cache_enabled=cache):
                return func(*args, **kwargs)
        return under_autocast


# -- user Functions ------------------------------------------------------------------------------
def _cast_floats(value, dtype) -> Any:
    """Floating tensors other than float64 (anywhere in lists, tuples, dicts) cast to dtype."""
    if isinstance(value, Tensor):
        if value.is_floating_point() and value.dtype is not _dtype.float64:
            return value.to(dtype)
        return value
    if isinstance(value, dict):
        return {key: _cast_floats(item, dtype) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_floats(item, dtype) for item in value)
    return value


def custom_fwd(fwd: Optional[Callable] = None, *, device_type: str,
               cast_inputs: Optional[_dtype.dtype] = None) -> Callable:
    """Decorate a user Function's ``forward``. With ``cast_inputs``, inside autocast its
    floating inputs are cast to that dtype and it runs with autocast off; without, it runs
    under the autocast state of the caller, which ``custom_bwd`` gives backward too."""
    device = _device_type(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def forward(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device)
        on = is_autocast_enabled(device)
        if cast_inputs is None:
            ctx._fwd_used_autocast = on
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False
        if not on:
            return fwd(*args, **kwargs)
        with autocast(device, enabled=False):
            return fwd(ctx, *_cast_floats(args[1:], cast_inputs),
                       **_cast_floats(kwargs, cast_inputs))
    return forward


def custom_bwd(bwd: Optional[Callable] = None, *, device_type: str) -> Callable:
    """Decorate a user Function's ``backward``: it runs under the autocast state its forward
    (decorated with ``custom_fwd``) ran under."""
    device = _device_type(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device)

    @functools.wraps(bwd)
    def backward(*args, **kwargs):
        ctx = args[0]
        with autocast(device, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(*args, **kwargs)
    return backward
