"""Tensor factories with torch's dtype inference and errors (random ones: ``random.py``).

``tensor([...])`` promotes over its elements as torch does: a Python float gives the default
dtype, an int int64, a bool bool, a NumPy scalar or one-element tensor its own dtype. A
``device`` other than the CPU raises torch's error (``_device.check``).
"""
from __future__ import annotations

import math

import numpy as np

from .._warnings import warn
from .. import _device, _dtype, _flags
from .. import _memory_format as _mf
from ..tensor import Tensor, keeping_strides, with_empty_strides
from . import _layout
from ._util import check_number_fits, check_range


# ---------------------------------------------------------------------------------------------
# torch.tensor: shape and dtype of nested sequences
# ---------------------------------------------------------------------------------------------
_SEQUENCES = (list, tuple, range)


def _is_sequence(item) -> bool:
    return isinstance(item, _SEQUENCES) or (isinstance(item, np.ndarray) and item.ndim > 0)


def _leaf(item):
    """(value, dtype) of one element; a one-element tensor stands for its value."""
    if isinstance(item, Tensor):
        if item._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        value = item._data.reshape(())[()]
        return value, _dtype.from_numpy_dtype(value.dtype)
    if isinstance(item, np.ndarray):  # 0-dim: torch asks it for a length
        raise TypeError("len() of unsized object")
    if isinstance(item, np.generic):
        if item.dtype.kind not in "biuf":
            raise TypeError(f"new(): invalid data type '{type(item).__name__}'")
        return item, _dtype.from_numpy_dtype(item.dtype)
    if isinstance(item, bool):
        return item, _dtype.bool_
    if isinstance(item, int):
        return item, _dtype.int64
    if isinstance(item, float):
        return item, _dtype.get_default_dtype()
    if item is None:
        raise RuntimeError("Could not infer dtype of NoneType")
    raise TypeError(f"new(): invalid data type '{type(item).__name__}'")


def _flatten_nested(data):
    """(shape, flat elements) of nested sequences, level by level, with torch's errors."""
    shape = []
    items = [data]
    while _is_sequence(items[0]) if items else False:
        length = len(items[0])
        for item in items:
            if not _is_sequence(item):
                if item is None:
                    raise RuntimeError("Could not infer dtype of NoneType")
                raise TypeError("not a sequence")
            if len(item) != length:
                raise ValueError(f"expected sequence of length {length} at dim {len(shape)} "
                                 f"(got {len(item)})")
        shape.append(length)
        items = [element for item in items for element in item]
    for item in items:
        if _is_sequence(item):
            raise TypeError(f"'{type(item).__name__}' object cannot be interpreted as an integer")
    return tuple(shape), items


def _copy_as(array: np.ndarray, np_dtype) -> np.ndarray:
    """A copy of ``array`` in ``np_dtype`` (its own dtype when None)."""
    if np_dtype is None or np_dtype == array.dtype:
        return np.array(array, copy=True)
    return _dtype.astype(array, np_dtype)


def _to_array(data, dtype=None) -> np.ndarray:
    """A new array with ``data``'s values, in ``dtype`` or the dtype torch.tensor infers."""
    np_dtype = None if dtype is None else _dtype.to_numpy_dtype(dtype)
    if isinstance(data, Tensor):
        return _copy_as(data._data, np_dtype)
    if isinstance(data, np.ndarray):
        if data.dtype.kind not in "biuf" or data.dtype not in _dtype._FROM_NUMPY:
            raise TypeError(f"can't convert np.ndarray of type numpy.{data.dtype.name}. The "
                            "only supported types are: float64, float32, float16, int64, int32, "
                            "int16, int8, uint8, and bool.")
        return _copy_as(data, np_dtype)
    shape, items = _flatten_nested(data)
    leaves = [_leaf(item) for item in items]
    if np_dtype is None:
        inferred = leaves[0][1] if leaves else _dtype.get_default_dtype()
        for _, leaf_dtype in leaves[1:]:
            if leaf_dtype is not inferred:
                inferred = _dtype.promote_types(inferred, leaf_dtype)
        np_dtype = inferred.numpy
    raw = np.array([value for value, _ in leaves])
    if raw.dtype == object or raw.dtype == np.uint64:  # Python ints beyond int64
        if np_dtype.kind not in "fV":
            raise ValueError("Overflow when unpacking long long")
        raw = raw.astype(np.float64)
    check_range(raw, np_dtype, np_dtype.name)
    with np.errstate(all="ignore"):
        return _dtype.astype(raw, np_dtype).reshape(shape)


_COPY_WARNING = ("To copy construct from a tensor, it is recommended to use "
                 "sourceTensor.detach().clone() or sourceTensor.detach().clone()."
                 "requires_grad_(True), rather than torch.tensor(sourceTensor).")


def _finish(array: np.ndarray, requires_grad: bool) -> Tensor:
    """The tensor a factory returns; only floating tensors may require grad (torch's check)."""
    if requires_grad and array.dtype.kind not in "fV":
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    if not array.size:
        array = with_empty_strides(array)
    return Tensor._make(array, requires_grad=bool(requires_grad))


def tensor(data, *, dtype=None, device=None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """A new tensor that owns a copy of ``data`` (nested sequences, numbers, arrays, tensors)."""
    _device.check(device)
    if isinstance(data, Tensor):
        warn(_COPY_WARNING, UserWarning)
    if isinstance(data, np.ndarray) and not data.size and data.ndim:
        return _finish(_numpy_strides(_to_array(data, dtype), data), requires_grad)
    return _finish(_to_array(data, dtype), requires_grad)


def _numpy_strides(array: np.ndarray, source: np.ndarray) -> np.ndarray:
    """An empty result with the element strides of the empty NumPy array it came from (zeros,
    for a new one), as torch keeps them."""
    return keeping_strides(array, tuple(s // source.itemsize for s in source.strides))


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Shares memory with a NumPy array (or returns the tensor itself) when no conversion is
    needed; otherwise a new tensor as ``tensor`` makes it."""
    _device.check(device)
    if isinstance(data, Tensor):
        return data if dtype is None or data.dtype is dtype else data.to(dtype)
    if isinstance(data, np.ndarray) and data.dtype in _dtype._FROM_NUMPY and (
            dtype is None or data.dtype == _dtype.to_numpy_dtype(dtype)):
        return Tensor._make(_numpy_strides(data, data) if not data.size and data.ndim else data)
    return tensor(data, dtype=dtype)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=None) -> Tensor:
    """``obj`` as a tensor, sharing memory with a tensor or NumPy array when ``copy`` is not
    True and no conversion is needed (``copy=False`` refuses one). ``requires_grad`` None keeps
    a tensor's own flag (torch 2.13's default)."""
    _device.check(device)
    if isinstance(obj, Tensor):
        result = obj if dtype is None or obj.dtype is dtype else obj.to(dtype)
        if copy and result is obj:
            result = obj.clone()
    elif isinstance(obj, np.ndarray) and not copy:
        result = as_tensor(obj, dtype)
        if copy is False and result._data is not obj and obj.size:
            raise ValueError(f"can't alias tensor with dtype "
                             f"'{_dtype.scalar_type_name(obj.dtype)}' into dtype "
                             f"'{_dtype.scalar_type_name(result._data.dtype)}'.")
    else:
        result = tensor(obj, dtype=dtype)
    if requires_grad is not None and not requires_grad and result.requires_grad:
        if result.is_leaf:
            result.requires_grad_(False)  # torch changes the very tensor it aliases
        else:
            result = result.detach()
    elif requires_grad and not result.requires_grad:
        result.requires_grad_(True)
    return result


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor on the same memory as ``array``: writes through either show in the other."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    if array.dtype not in _dtype._FROM_NUMPY:
        raise TypeError(f"can't convert np.ndarray of type numpy.{array.dtype.name}. The only "
                        "supported types are: float64, float32, float16, int64, int32, int16, "
                        "int8, uint8, and bool.")
    if not array.size and array.ndim:  # no memory to share: its strides are what carries over
        return Tensor._make(_numpy_strides(array, array))
    return Tensor._make(array)


# ---------------------------------------------------------------------------------------------
# Filled tensors
# ---------------------------------------------------------------------------------------------
def _size(size: tuple, name: str, negative_message: str | None = None) -> tuple:
    """torch's size arguments: ``f(2, 3)``, ``f((2, 3))`` or ``f([2, 3])``."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    dims = []
    for dim in size:
        if isinstance(dim, Tensor) and dim._data.ndim == 0 and dim._data.dtype.kind in "iu":
            dim = dim.item()
        if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
            raise TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, "
                            f"not {type(dim).__name__}")
        dims.append(int(dim))
    for dim in dims:
        if dim < 0:
            raise RuntimeError(negative_message or f"Trying to create tensor with negative "
                                                   f"dimension {dim}: {dims}")
    return tuple(dims)


def _float_dtype(dtype) -> np.dtype:
    return _dtype.get_default_dtype().numpy if dtype is None else _dtype.to_numpy_dtype(dtype)


def zeros(*size, dtype=None, device=None, requires_grad: bool = False, out=None,
          layout=None) -> Tensor:
    """A tensor of zeros of the given shape."""
    _device.check(device)
    shape = _size(size, "zeros", "zeros: Dimension size must be non-negative.")
    return _finish(np.zeros(shape, _float_dtype(dtype)), requires_grad)


def ones(*size, dtype=None, device=None, requires_grad: bool = False, out=None,
         layout=None) -> Tensor:
    """A tensor of ones of the given shape."""
    _device.check(device)
    return _finish(np.ones(_size(size, "ones"), _float_dtype(dtype)), requires_grad)


def empty(*size, dtype=None, device=None, requires_grad: bool = False,
          memory_format=_mf.contiguous_format, **kwargs) -> Tensor:
    """Uninitialised in torch; zeros here, so nothing depends on leftover memory (NaN or the
    largest value in deterministic mode, as torch fills it). Laid out in ``memory_format``
    (``channels_last`` for an NHWC layout of a 4-d size)."""
    _device.check(device)
    array = _layout.empty_in_format(_size(size, "empty"), _float_dtype(dtype),
                                    _mf.check(memory_format, "empty"))
    _fill_uninitialized(array)
    return _finish(array, requires_grad)


def _fill_uninitialized(array: np.ndarray) -> np.ndarray:
    """In deterministic mode, torch's NaN / largest-value fill of "uninitialised" memory."""
    if _flags.filling_uninitialized():
        array[...] = _flags.uninitialized_value(array.dtype)
    return array


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad: bool = False,
                  **kwargs) -> Tensor:
    """A tensor of ``size`` with the given ``stride`` (in elements) over a storage just large
    enough for it (zero-filled here, uninitialised in torch)."""
    _device.check(device)
    size, stride = _size((size,), "empty_strided"), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality "
                           f"of strides ({len(stride)})")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    np_dtype = _float_dtype(dtype)
    needed = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride))
    # one element at least: an empty result then reports its strides as given (see stride())
    storage = _fill_uninitialized(np.zeros(max(needed, 1), np_dtype))
    array = np.lib.stride_tricks.as_strided(storage, size,
                                            tuple(s * np_dtype.itemsize for s in stride))
    if requires_grad and np_dtype.kind not in "fV":
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    return Tensor._make(array, requires_grad=bool(requires_grad))


def _fill_value(value):
    return value.item() if isinstance(value, Tensor) else value



def _filled(shape: tuple, value, np_dtype: np.dtype) -> np.ndarray:
    check_number_fits(value, np_dtype, halves=math.prod(shape) != 1)  # as fill_ does
    with np.errstate(all="ignore"):
        return np.full(shape, np.asarray(value).astype(np_dtype), np_dtype)


def full(size, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of ``size`` filled with ``fill_value`` (its dtype if ``dtype`` is not given)."""
    _device.check(device)
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size).__name__}")
    fill_value = _fill_value(fill_value)
    np_dtype = _dtype.to_numpy_dtype(dtype if dtype is not None else
                                     _dtype.number_dtype(fill_value))
    return _finish(_filled(_size((size,), "full"), fill_value, np_dtype), requires_grad)


def _like(input: Tensor, dtype) -> np.dtype:
    return input._data.dtype if dtype is None else _dtype.to_numpy_dtype(dtype)


def _filled_like(input: Tensor, value, dtype, memory_format, fn: str) -> np.ndarray:
    """``value`` everywhere, laid out as torch's ``*_like`` factories lay it out (a dense
    input's strides, so a transposed input gives a transposed result, unless
    ``memory_format`` names another layout)."""
    array = empty_like_array(input, dtype, memory_format, fn)
    array[...] = value
    return array


def empty_like_array(input: Tensor, dtype, memory_format, fn: str) -> np.ndarray:
    """The array behind ``fn(input, dtype=dtype, memory_format=memory_format)``: laid out like
    ``input`` under ``preserve_format``, else in the layout the format names."""
    np_dtype = _like(input, dtype)
    fmt = _mf.check(memory_format, fn)
    if fmt is None or fmt is _mf.preserve_format:
        return _layout.empty_like(input._data, np_dtype)
    array = np.empty(input._data.shape, np_dtype)
    return _layout.in_format(array, array, fmt)


def zeros_like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False,
               memory_format=_mf.preserve_format, layout=None) -> Tensor:
    """A tensor of zeros with ``input``'s shape."""
    _device.check(device)
    return _finish(_filled_like(input, 0, dtype, memory_format, "zeros_like"), requires_grad)


def ones_like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False,
              memory_format=_mf.preserve_format, layout=None) -> Tensor:
    """A tensor of ones with ``input``'s shape."""
    _device.check(device)
    return _finish(_filled_like(input, 1, dtype, memory_format, "ones_like"), requires_grad)


def empty_like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False,
               memory_format=_mf.preserve_format, layout=None) -> Tensor:
    """An uninitialised tensor with ``input``'s shape (and dtype unless given).

    Differs from torch: the memory is zero-filled (NumPy's ``empty`` would expose stale bytes)."""
    _device.check(device)
    array = _filled_like(input, 0, dtype, memory_format, "empty_like")
    _fill_uninitialized(array)
    return _finish(array, requires_grad)


def full_like(input: Tensor, fill_value, *, dtype=None, device=None,
              requires_grad: bool = False, memory_format=_mf.preserve_format,
              layout=None) -> Tensor:
    """A tensor of ``input``'s shape filled with ``fill_value``."""
    _device.check(device)
    array = _filled(input._data.shape, _fill_value(fill_value), _like(input, dtype))
    fmt = _mf.check(memory_format, "full_like")
    return _finish(_layout.in_format(array, input._data, fmt), requires_grad)


# ---------------------------------------------------------------------------------------------
# Ranges
# ---------------------------------------------------------------------------------------------
def arange(start, end=None, step=1, *, dtype=None, device=None,
           requires_grad: bool = False, out=None) -> Tensor:
    """start, start + step, ... below end: ceil((end - start) / step) values, each computed as
    start + i * step in double precision and then cast (so float steps never drift)."""
    _device.check(device)
    if end is None:
        start, end = 0, start
    start, end, step = (_fill_value(v) for v in (start, end, step))
    if dtype is None and out is not None:
        dtype = out.dtype  # a factory given out= makes its values in out's dtype
    if dtype is None:
        dtype = _dtype.result_type(start, end, step)
        if dtype is not _dtype.int64:
            dtype = _dtype.get_default_dtype()
    np_dtype = _dtype.to_numpy_dtype(dtype)
    if np_dtype == np.bool_:
        raise NotImplementedError("\"arange_cpu\" not implemented for 'Bool'")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    count = math.ceil((float(end) - float(start)) / float(step))
    if np_dtype.kind in "fV":
        array = (float(start) + np.arange(count, dtype=np.float64) * float(step)).astype(np_dtype)
    else:
        array = (int(start) + np.arange(count, dtype=np.int64) * int(step)).astype(np_dtype)
    if out is None:
        return _finish(array, requires_grad)
    if requires_grad:
        raise RuntimeError("arange(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    if out.numel() == count:  # torch keeps out's shape and fills it in its logical order
        _dtype.copyto(out._data, array.reshape(out.shape))
    else:
        if out.numel():
            warn(f"The number of elements in the out tensor of shape {list(out.shape)} "
                 f"is {out.numel()} which does not match the computed number of "
                 f"elements {count}. Note that this may occur as a result of rounding "
                 f"error. The out tensor will be resized to a tensor of shape ({count},).",
                 UserWarning)
        out._data = _dtype.astype(array, out._data.dtype)
    out._version_counter[0] += 1
    return out


def linspace(start, end, steps: int, *, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values; like torch, the first half counts up from ``start`` and
    the second half down from ``end``, in the output's precision."""
    _device.check(device)
    start, end = _fill_value(start), _fill_value(end)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    np_dtype = _float_dtype(dtype)
    work = np_dtype if np_dtype.kind in "fV" else np.dtype(np.float64)
    if np_dtype == np.float16:
        work = np.dtype(np.float32)
    array = _spaced(start, end, steps, work)
    with np.errstate(all="ignore"):
        return _finish(array.astype(np_dtype), requires_grad)


def _spaced(start, end, steps: int, work: np.dtype) -> np.ndarray:
    """``steps`` evenly spaced values from start to end in ``work``, as torch spaces them:
    the first half counted up from start, the second down from end, so both ends are exact."""
    if steps <= 1:
        return np.full(steps, start, work)
    first, last = work.type(start), work.type(end)
    step = (last - first) / work.type(steps - 1)
    index = np.arange(steps, dtype=work)
    return np.where(index < steps // 2, first + step * index,
                    last - step * (work.type(steps - 1) - index))


def logspace(start, end, steps: int, base: float = 10.0, *, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """``base ** linspace(start, end, steps)``: the exponents spaced as linspace spaces them
    (each half counted from its own end), the power taken in the output's precision."""
    _device.check(device)
    start, end = _fill_value(start), _fill_value(end)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    np_dtype = _float_dtype(dtype)
    work = np_dtype if np_dtype.kind == "f" and np_dtype != np.float16 else \
        np.dtype(np.float32 if np_dtype.kind == "V" or np_dtype == np.float16 else np.float64)
    exponents = _spaced(start, end, steps, work)
    with np.errstate(all="ignore"):
        array = np.power(work.type(base), exponents)
        return _finish(array.astype(np_dtype), requires_grad)


def eye(n: int, m: int | None = None, *, dtype=None, device=None,
        requires_grad: bool = False) -> Tensor:
    """An ``n`` by ``m`` matrix with ones on the diagonal."""
    _device.check(device)
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m is not None and m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    return _finish(np.eye(n, m, dtype=_float_dtype(dtype)), requires_grad)
