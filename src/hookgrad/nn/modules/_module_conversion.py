"""Module's conversions: ``to`` (dtype, device, memory format), ``float``/``double``/``half``/
``bfloat16``/``type``, ``cpu``/``cuda``, ``to_empty`` and the ``_apply`` they all go through,
which swaps the data of parameters, their gradients and buffers in place so that an optimizer
holding the parameters still holds the same objects afterwards, as in torch."""
from __future__ import annotations

from typing import Any, Callable, TypeVar, Union

from ... import _dtype, _memory_format
from ...autograd import grad_mode
from ..._device import check as check_device, device
from ...ops.creation import empty_like
from ...tensor import Tensor

# the module itself, whatever its class: each conversion returns self
ModuleT = TypeVar("ModuleT", bound="ConversionMixin")


def _type_name(value) -> str:
    """How torch's argument errors name an argument's type."""
    if isinstance(value, _memory_format.memory_format):
        return "torch.memory_format"
    return type(value).__name__


class ConversionMixin:
    """The conversions of ``Module`` (see the module docstring)."""

    def _apply(self: ModuleT, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> ModuleT:
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

    def to(self: ModuleT, *args: Any, **kwargs: Any) -> ModuleT:
        """``to(dtype)``, ``to(device)``, ``to(tensor)``, ``to(device, dtype)``: casts floating
        parameters and buffers in place (only the CPU exists here). ``memory_format`` lays out
        the 4-d and 5-d ones in that format (``channels_last`` for conv weights)."""
        dtype = kwargs.get("dtype")
        fmt = _memory_format.check(kwargs.get("memory_format"), "to")
        for arg in (*args, kwargs.get("device"), kwargs.get("tensor")):
            if arg is None or isinstance(arg, bool):  # non_blocking / copy flags
                continue
            if isinstance(arg, _dtype.dtype):
                dtype = arg
            elif isinstance(arg, Tensor):
                dtype = arg.dtype
            elif isinstance(arg, (str, device)):
                check_device(arg)
            else:
                raise TypeError("to() received an invalid combination of arguments - got "
                                f"({', '.join(_type_name(a) for a in args)})")
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but got "
                            f"desired dtype={dtype}")
        if fmt is not None:
            return self._apply(lambda t: t.to(
                dtype if t.is_floating_point() else None,
                memory_format=fmt if t.dim() in (4, 5) else _memory_format.preserve_format))
        if dtype is None:
            return self
        return self._cast_floating(dtype)

    def _cast_floating(self: ModuleT, dtype: _dtype.dtype) -> ModuleT:
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self: ModuleT) -> ModuleT:
        """Casts floating parameters and buffers to float32 in place; returns self."""
        return self._cast_floating(_dtype.float32)

    def double(self: ModuleT) -> ModuleT:
        """Casts floating parameters and buffers to float64 in place; returns self."""
        return self._cast_floating(_dtype.float64)

    def half(self: ModuleT) -> ModuleT:
        """Casts floating parameters and buffers to float16 in place; returns self."""
        return self._cast_floating(_dtype.float16)

    def bfloat16(self: ModuleT) -> ModuleT:
        """Casts floating parameters and buffers to bfloat16 in place; returns self."""
        return self._cast_floating(_dtype.bfloat16)

    def type(self: ModuleT, dst_type: Union[_dtype.dtype, str]) -> ModuleT:
        """Casts every parameter and buffer to ``dst_type``; returns self."""
        return self._apply(lambda t: t.type(dst_type))

    def to_empty(self: ModuleT, *, device: Union[str, device, int, None],
                 recurse: bool = True) -> ModuleT:
        """Gives every parameter, gradient and buffer (of the submodules too unless
        ``recurse=False``) fresh uninitialised storage of the same shape and dtype on
        ``device``, copying no values (torch uses it to materialise modules built on "meta");
        parameters keep their identity. Returns self."""
        return self._apply(lambda tensor: empty_like(tensor, device=device), recurse=recurse)

    to_empty.__qualname__ = "Module.to_empty"  # Python's argument errors name it as torch's do

    def cpu(self: ModuleT) -> ModuleT:
        """Returns self: hookgrad modules already live on the CPU."""
        return self

    def cuda(self: ModuleT, device: Any = None) -> ModuleT:
        """Raises torch's CPU-build error: hookgrad has no CUDA device."""
        raise AssertionError("Torch not compiled with CUDA enabled")

    def share_memory(self: ModuleT) -> ModuleT:
        """Returns self; kept for torch.multiprocessing code (hookgrad shares nothing across
        processes)."""
        return self
