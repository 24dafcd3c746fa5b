"""Padding layers (ZeroPad, ConstantPad, ReflectionPad, ReplicationPad, CircularPad in 1-3
spatial dims): modules over ``F.pad`` that hold the widths, as torch's do."""
from __future__ import annotations

from ...ops.padding import pad
from ...tensor import Tensor
from .module import Module


def _widths(padding, dims: int) -> tuple:
    """An int pads every side by it; a sequence is taken as given (left, right, top, ...)."""
    if isinstance(padding, int):
        return (padding,) * (2 * dims)
    return tuple(padding)


class _PadNd(Module):
    __constants__ = ["padding"]
    _dims = 1
    _mode = "constant"

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _widths(padding, self._dims)

    def forward(self, input: Tensor) -> Tensor:
        return pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    __constants__ = ["padding", "value"]

    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in (self._dims + 1, self._dims + 2):
            raise ValueError(f"expected {self._dims + 1}D or {self._dims + 2}D input (got "
                             f"{input.ndim}D input)")
        return pad(input, self.padding, "circular")


def _layer(name: str, base: type, dims: int, mode: str, what: str) -> type:
    doc = f"Pads the last {dims} dims of the input {what} (module form of ``F.pad``)."
    return type(name, (base,), {"_dims": dims, "_mode": mode, "__doc__": doc,
                                "__module__": __name__})


ZeroPad1d = _layer("ZeroPad1d", _ZeroPadNd, 1, "constant", "with zeros")
ZeroPad2d = _layer("ZeroPad2d", _ZeroPadNd, 2, "constant", "with zeros")
ZeroPad3d = _layer("ZeroPad3d", _ZeroPadNd, 3, "constant", "with zeros")
ConstantPad1d = _layer("ConstantPad1d", _ConstantPadNd, 1, "constant", "with ``value``")
ConstantPad2d = _layer("ConstantPad2d", _ConstantPadNd, 2, "constant", "with ``value``")
ConstantPad3d = _layer("ConstantPad3d", _ConstantPadNd, 3, "constant", "with ``value``")
ReflectionPad1d = _layer("ReflectionPad1d", _PadNd, 1, "reflect", "by reflection at the edges")
ReflectionPad2d = _layer("ReflectionPad2d", _PadNd, 2, "reflect", "by reflection at the edges")
ReflectionPad3d = _layer("ReflectionPad3d", _PadNd, 3, "reflect", "by reflection at the edges")
ReplicationPad1d = _layer("ReplicationPad1d", _PadNd, 1, "replicate", "by repeating the edges")
ReplicationPad2d = _layer("ReplicationPad2d", _PadNd, 2, "replicate", "by repeating the edges")
ReplicationPad3d = _layer("ReplicationPad3d", _PadNd, 3, "replicate", "by repeating the edges")
CircularPad1d = _layer("CircularPad1d", _CircularPadNd, 1, "circular", "by wrapping around")
CircularPad2d = _layer("CircularPad2d", _CircularPadNd, 2, "circular", "by wrapping around")
CircularPad3d = _layer("CircularPad3d", _CircularPadNd, 3, "circular", "by wrapping around")
