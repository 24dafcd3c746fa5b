"""Small questions torch answers about any object: ``typename``, and the device-related
``get_device`` / ``is_distributed`` of a tensor (``is_storage`` lives with the storages)."""
from __future__ import annotations

from typing import Any

from .tensor import Tensor

_LEGACY_TYPES = {"float32": "Float", "float64": "Double", "float16": "Half",
                 "bfloat16": "BFloat16", "int64": "Long", "int32": "Int", "int16": "Short",
                 "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def typename(obj: Any) -> str:
    """The name of ``obj``'s type: a tensor's legacy type (``"torch.FloatTensor"``), else
    ``module.QualifiedName`` of a class or function, or of the type of any other object
    (builtins without their module)."""
    if isinstance(obj, Tensor):
        return f"torch.{_LEGACY_TYPES[str(obj.dtype).split('.')[-1]]}Tensor"
    named = obj if hasattr(obj, "__qualname__") else type(obj)
    module = getattr(named, "__module__", None)
    if module in (None, "builtins"):
        return named.__qualname__
    return f"{module}.{named.__qualname__}"


def _tensor_argument(input: Any, op: str) -> Tensor:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not "
                        f"{typename(input)}")
    return input


def get_device(input: Tensor) -> int:
    """The index of ``input``'s device: -1, as every hookgrad tensor is on the CPU."""
    return _tensor_argument(input, "get_device").get_device()


def is_distributed(input: Tensor) -> bool:
    """False: no hookgrad tensor is a distributed one."""
    _tensor_argument(input, "is_distributed")
    return False


def tensor_is_distributed(self: Tensor) -> bool:
    """``Tensor.is_distributed()``: False, as for every hookgrad tensor."""
    return False

