"""Devices as torch's CPU-only build sees them.

``device("cuda:1")`` can be built and compared, as in torch, but every place that would put a
tensor on a device other than the CPU raises the error torch's CPU build raises: an
``AssertionError("Torch not compiled with CUDA enabled")`` for CUDA, a ``RuntimeError`` for
the other known backends. Nothing silently stays on the CPU while claiming otherwise.
"""
from __future__ import annotations

import builtins

_KNOWN_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
                "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                "privateuseone")
NO_CUDA = "Torch not compiled with CUDA enabled"


class device:
    """A device name: ``device("cpu")``, ``device("cuda", 0)``, ``device("cuda:1")``."""

    __slots__ = ("index", "type", "_previous")

    def __init__(self, type, index: int | None = None):
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, int) and not isinstance(type, bool):
            raise RuntimeError("Cannot access accelerator device when none is available.")
        elif not isinstance(type, str):
            raise TypeError("device() received an invalid combination of arguments - got "
                            f"({builtins.type(type).__name__})")
        else:
            name, _, number = type.partition(":")
            if name not in _KNOWN_TYPES:
                raise RuntimeError(f"Expected one of {', '.join(_KNOWN_TYPES)} device type at "
                                   f"start of device string: {type}")
            if number:
                if not number.isdigit():
                    raise RuntimeError(f"Invalid device string: '{type}'")
                if index is not None:
                    raise RuntimeError("type (string) must not include an index because index "
                                       f"was passed explicitly: {type}")
                index = int(number)
            type = name
        if index is not None and index < 0:
            raise RuntimeError(f"Device index must not be negative, got {index}")
        self.type = type
        self.index = index

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        return (isinstance(other, device) and self.type == other.type
                and self.index == other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __reduce__(self):
        return device, (self.type, self.index)

    def __enter__(self) -> device:
        """``with device("cpu"):`` makes it the default device for factories inside."""
        self._previous = _default[0]
        set_default_device(self)
        return self

    def __exit__(self, *exc) -> None:
        _default[0] = self._previous


def check(target) -> None:
    """Raise torch's error unless ``target`` (a str, device or None) names the CPU."""
    if target is None:
        target = _default[0]
        if target is None:
            return
    if not isinstance(target, device):
        target = device(target)
    if target.type == "cpu":
        return
    if target.type == "cuda":
        raise AssertionError(NO_CUDA)
    raise RuntimeError(f"PyTorch is not linked with support for {target.type} devices")


_default: list = [None]  # the device factories use when given none (None: the CPU)


def set_default_device(target) -> None:
    """Factories' default device, as torch: ``"cpu"`` (or None) works; another device is
    accepted here and raises torch's error at the first factory call."""
    _default[0] = None if target is None else device(target)


def get_default_device() -> device:
    """The device new tensors go to: always ``cpu`` in hookgrad."""
    check(_default[0])
    return device("cpu")
