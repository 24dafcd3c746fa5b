"""Less common factories: ``range`` (torch's deprecated inclusive one), ``empty_permuted``,
and tensors over memory that already exists: ``frombuffer`` (any buffer-protocol object),
``from_file`` (a memory-mapped file) and DLPack exchange (``from_dlpack`` / ``to_dlpack``)."""
from __future__ import annotations

import math
import os
from typing import Any, Optional, Sequence

import numpy as np

from .. import _device, _dtype
from .._warnings import warn, warn_once
from ..tensor import Tensor
from .creation import _fill_value, _finish, _float_dtype, _size, empty_strided, from_numpy


def range(start, end, step=1, *, dtype=None, device=None,  # noqa: A001 - torch's name
          requires_grad: bool = False) -> Tensor:
    """Deprecated in torch: ``start, start + step, ...`` up to and including ``end``
    (``floor((end - start) / step) + 1`` values) in the default floating dtype unless
    ``dtype`` says otherwise; warns, as torch does, to use ``arange``."""
    warn("torch.range is deprecated and will be removed in a future release because its "
         "behavior is inconsistent with Python's range builtin. Instead, use torch.arange, "
         "which produces values in [start, end).")
    _device.check(device)
    start, end, step = (_fill_value(v) for v in (start, end, step))
    np_dtype = _float_dtype(dtype)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    count = int(math.floor((float(end) - float(start)) / float(step))) + 1
    values = float(start) + np.arange(count, dtype=np.float64) * float(step)
    return _finish(_dtype.astype(values, np_dtype), requires_grad)


def empty_permuted(size: Sequence[int], physical_layout: Sequence[int], *, dtype=None,
                   layout=None, device=None, requires_grad: bool = False,
                   pin_memory: bool = False) -> Tensor:
    """An (uninitialised in torch, zero-filled here) tensor of ``size`` whose memory holds its
    dims in the order ``physical_layout`` (outermost first): ``physical_layout=(0, 2, 3, 1)``
    on an NCHW size gives channels-last strides."""
    size = _size((size,), "empty_permuted")
    order = [int(d) for d in physical_layout]
    if len(order) != len(size):
        raise RuntimeError("Number of dimensions in size does not match the length of the "
                           f"physical_layout; i.e. len(size) = {len(size)} is not equal to "
                           f"len(physical_layout) = {len(order)}")
    seen = set()
    for index, dim in enumerate(order):
        if not 0 <= dim < len(size):
            raise RuntimeError(f"Dimension out of range (expected to be between 0 and "
                               f"{len(size) - 1}, but got {dim} at index {index}).  NB: "
                               "negative dims not currently supported; file an issue if you "
                               "want it.")
        if dim in seen:
            raise RuntimeError("Duplicate dim not allowed")
        seen.add(dim)
    strides = [0] * len(size)
    step = 1
    for dim in reversed(order):
        strides[dim] = step
        step *= max(size[dim], 1)
    return empty_strided(size, strides, dtype=dtype, device=device,
                         requires_grad=requires_grad)


# -- existing memory -------------------------------------------------------------------------
def frombuffer(buffer: Any, *, dtype, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """A 1-d tensor over the bytes of ``buffer`` (skipping ``offset`` of them; ``count``
    elements, or all that remain when negative), sharing its memory."""
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    np_dtype = _dtype.to_numpy_dtype(dtype)
    length, itemsize = view.nbytes, np_dtype.itemsize
    if length == 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % itemsize:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({itemsize})")
        count = (length - offset) // itemsize
    elif offset + count * itemsize > length:
        raise ValueError(f"requested buffer length ({count} * {itemsize} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    if view.readonly:
        warn_once("The given buffer is not writable, and PyTorch does not support non-writable "
                  "tensors. This means you can write to the underlying (supposedly "
                  "non-writable) buffer using the tensor. You may want to copy the buffer to "
                  "protect its data or make it writable before converting it to a tensor. This "
                  "type of warning will be suppressed for the rest of this program.")
    array = np.frombuffer(view.cast("B"), dtype=np_dtype, count=count, offset=offset)
    if view.readonly:  # a copy: writing into an immutable object (bytes) is left to torch
        array = array.copy()
    return _finish(array, requires_grad)


def from_file(filename: str, shared: Optional[bool] = None, size: int = 0, *, dtype=None,
              layout=None, device=None, pin_memory: bool = False) -> Tensor:
    """A 1-d tensor of ``size`` elements over a memory-mapped file: with ``shared`` writes go
    to the file (which is created or lengthened as needed), else they stay private."""
    _device.check(device)
    np_dtype = _float_dtype(dtype)
    needed = int(size) * np_dtype.itemsize
    filename = os.fspath(filename)
    if shared:
        with open(filename, "ab"):  # create it when missing
            pass
        if os.path.getsize(filename) < needed:
            os.truncate(filename, needed)
    elif not os.path.exists(filename):
        raise RuntimeError(f"unable to open file <{filename}> in read-only mode: No such file "
                           "or directory (2)")
    actual = os.path.getsize(filename)
    if actual < needed:
        raise RuntimeError(f"file <{filename}> size <{actual}> is smaller than the required "
                           f"mapping size <{needed}>")
    if not size:
        return _finish(np.empty(0, np_dtype), False)
    mapped = np.memmap(filename, dtype=np_dtype, mode="r+" if shared else "c", shape=(size,))
    return from_numpy(mapped.view(np.ndarray))


class _Capsule:
    """A DLPack capsule dressed as an exporter, the form ``numpy.from_dlpack`` takes."""

    def __init__(self, capsule: Any):
        self.capsule = capsule

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple:
        return (1, 0)


def from_dlpack(ext_tensor: Any) -> Tensor:
    """A tensor sharing the memory of a DLPack exporter (a NumPy array, a torch tensor, ...)
    or of a capsule made by ``to_dlpack`` (a capsule may be used once)."""
    if isinstance(ext_tensor, Tensor):
        return ext_tensor.detach()
    if type(ext_tensor).__name__ == "PyCapsule":
        ext_tensor = _Capsule(ext_tensor)
    elif not hasattr(ext_tensor, "__dlpack__"):
        raise RuntimeError("from_dlpack received an invalid capsule. Note that DLTensor "
                           "capsules can be consumed only once, so you might have already "
                           "constructed a tensor from it once.")
    try:
        array = np.from_dlpack(ext_tensor)
    except (TypeError, ValueError) as error:
        if isinstance(ext_tensor, _Capsule):
            raise RuntimeError("from_dlpack received an invalid capsule. Note that DLTensor "
                               "capsules can be consumed only once, so you might have already "
                               "constructed a tensor from it once.") from error
        raise
    return from_numpy(array)


def to_dlpack(tensor: Tensor) -> Any:
    """A DLPack capsule over ``tensor``'s memory, for another framework's ``from_dlpack``."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"to_dlpack(): argument 'tensor' (position 1) must be Tensor, not "
                        f"{type(tensor).__name__}")
    return tensor._data.__dlpack__()


def tensor_dlpack(self: Tensor, *, stream: Any = None, max_version: Any = None,
                  dl_device: Any = None, copy: Optional[bool] = None) -> Any:
    """``Tensor.__dlpack__``: a DLPack capsule over the tensor's memory (the exporter side of
    ``from_dlpack`` in NumPy, torch and others); refused while it requires grad, as in torch."""
    if self.requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    options = {"stream": stream, "dl_device": dl_device, "copy": copy}
    if max_version is not None:
        options["max_version"] = max_version
    return self._data.__dlpack__(**options)


def tensor_dlpack_device(self: Tensor) -> tuple:
    """``Tensor.__dlpack_device__``: (1, 0), DLPack's code for the CPU and its index."""
    return (1, 0)
