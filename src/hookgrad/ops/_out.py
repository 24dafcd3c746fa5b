"""torch's ``out=``: ``write_out`` is the one place a result is written into a given tensor
(refused under autograd, cast or refused by dtype, resized with torch's warning), and
``accept_out`` gives it to every function that computes a fresh result and copies it, so no
function that declares ``out`` can accept it and then leave it untouched."""
from __future__ import annotations

import dis
import functools
import inspect
from typing import Callable, Optional, Union

import numpy as np

from .. import _dtype
from .._warnings import warn
from ..autograd import grad_mode
from ..tensor import Tensor
from . import _out_rules as rules
from ._base import check_inplace_cast, check_overlap, _check_writable as check_writable

def exact_dtype_error(result: np.ndarray, out: Tensor) -> RuntimeError:
    """torch's error for an ``out`` whose dtype differs from what a structured kernel makes."""
    return RuntimeError(f"Expected out tensor to have dtype "
                        f"{_dtype.cpp_type_name(result.dtype)}, but got "
                        f"{_dtype.cpp_type_name(out._data.dtype)} instead")


def resize_out(out: Tensor, shape: tuple, warnings: int = 1) -> None:
    """Give ``out`` a fresh buffer of ``shape`` (its dtype kept) when its shape differs; torch
    warns (``warnings`` times) unless out held no elements, as reusing a non-empty out that
    way is deprecated."""
    if out._data.shape == tuple(shape):
        return
    for _ in range(warnings if out._data.size else 0):
        warn(f"An output with one or more elements was resized since it had shape "
             f"{list(out._data.shape)}, which does not match the required output shape "
             f"{list(shape)}. This behavior is deprecated, and in a future PyTorch release "
             f"outputs will not be resized unless they have zero elements. You can explicitly "
             f"reuse an out tensor t by resizing it, inplace, to zero elements with "
             f"t.resize_(0).", UserWarning)
    out._data = np.empty(shape, out._data.dtype)


def write_out(out: Optional[Tensor], result: Tensor, op_name: str, *,
              same_dtype: Union[bool, str, Callable] = False,
              cast_message: Optional[Callable] = None, warn_resize: bool = True,
              casts_through_temporary: bool = False, refuse_grad: bool = True,
              resize_first: bool = False, resize_before_refusal: bool = False,
              kernel_refusal: Optional[Exception] = None) -> Tensor:
    """Write ``result`` into ``out`` as torch's ``out=`` does and return ``out`` (``result``
    when no out is given).

    Under autograd with a tensor that requires grad torch refuses (no graph is recorded
    through out; ``refuse_grad=False`` for the composites it lets through). The result is cast
    to out's dtype when torch's casting allows it (``cast_message`` makes the error from the
    two dtypes when not), or must have out's dtype when ``same_dtype`` (True: torch's
    structured-kernel message; a string: the op's own; a callable of the two dtypes: the op's
    message, or None where it accepts the pair). A shape that differs is resized, with torch's
    deprecation warning when out held elements, twice when the op casts through a temporary;
    ``resize_first``: before the dtype is checked, as a composite that resizes first does
    (``resize_before_refusal``: even before the autograd refusal); ``kernel_refusal``: the
    error of a kernel that has no implementation for out's dtype, raised once out is resized.

    A composite torch lets through autograd (``rules.COMPOSITES``) still refuses to write into
    a leaf that requires grad (torch's in-place error), after its own checks."""
    if out is None:
        return result
    grad_enabled = grad_mode.is_grad_enabled()
    if resize_before_refusal:
        check_writable(out._data)
        resize_out(out, result._data.shape, warn_resize)
    if refuse_grad and grad_enabled and (result.requires_grad or out.requires_grad):
        raise RuntimeError(f"{op_name}(): functions with out=... arguments don't support "
                           "automatic differentiation, but one of the arguments requires grad.")
    check_writable(out._data)  # an expanded out would take two results in one element
    into_leaf = (op_name in rules.COMPOSITES and grad_enabled and out.requires_grad
                 and out.grad_fn is None)
    if into_leaf and op_name in rules.GRAD_OUT_SHAPE and out._data.shape != result._data.shape:
        raise RuntimeError(rules.GRAD_OUT_SHAPE[op_name])
    result_dtype, out_dtype = result._data.dtype, out._data.dtype
    if resize_first:
        resize_out(out, result._data.shape, warn_resize)
    if kernel_refusal is not None:
        raise kernel_refusal
    if cast_message is not None and result_dtype != out_dtype and not _dtype.can_cast(
            _dtype.from_numpy_dtype(result_dtype), _dtype.from_numpy_dtype(out_dtype)):
        raise RuntimeError(cast_message(result_dtype, out_dtype))
    if same_dtype and result_dtype != out_dtype:
        if same_dtype is True:
            raise exact_dtype_error(result._data, out)
        message = same_dtype if isinstance(same_dtype, str) else same_dtype(result_dtype,
                                                                            out_dtype)
        if message is not None:
            raise RuntimeError(message)
    check_inplace_cast(result_dtype, out_dtype)
    twice = casts_through_temporary and result_dtype != out_dtype
    resize_out(out, result._data.shape, warn_resize * (2 if twice else 1))
    if into_leaf:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    _dtype.copyto(out._data, result._data)
    out._version_counter[0] += 1
    return out


def _check_out_overlap(out, args: tuple, kwargs: dict, full_ok: bool = True) -> None:
    """torch's elementwise and indexing kernels refuse an out that shares part of an input's
    memory (looked at before out is resized); under autograd the refusal of out comes first."""
    inputs = []
    for value in list(args) + list(kwargs.values()):
        items = value if isinstance(value, (list, tuple)) else (value,)  # cat's list
        inputs.extend(item for item in items if isinstance(item, Tensor))
    if grad_mode.is_grad_enabled() and any(t.requires_grad for t in inputs):
        return
    for target in (out if isinstance(out, (list, tuple)) else (out,)):
        if isinstance(target, Tensor):
            for tensor in inputs:
                check_overlap(target._data, tensor._data, full_ok)


def _checking_overlap(fn: Callable, full_ok: bool) -> Callable:
    @functools.wraps(fn)
    def with_check(*args, out=None, **kwargs):
        if out is not None:
            _check_out_overlap(out, args, kwargs, full_ok)
        return fn(*args, out=out, **kwargs)
    return with_check


def reads_out(fn: Callable) -> bool:
    """True when ``fn``'s own code reads its ``out`` argument (it writes the result itself)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return True
    for instruction in dis.get_instructions(code):
        if instruction.opname.startswith("LOAD_FAST"):
            names = instruction.argval
            if names == "out" or (isinstance(names, tuple) and "out" in names):
                return True
    return False


def accept_out(fn: Callable, public_name: Optional[str] = None) -> Callable:
    """``fn`` with ``out=`` honoured by ``write_out`` (each of a tuple of results into its own
    tensor). A function that takes ``dtype`` makes its result in out's dtype when none is
    given, and a factory resizes out silently, as torch's do. A function torch gives ``out``
    whose own signature lacks it (``public_name`` in ``ADDED_OUT``) gets it here."""
    try:
        parameters = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn
    name = fn_name = public_name or fn.__name__
    checks_overlap = name in rules.OVERLAP_CHECKED or inspect.unwrap(fn).__module__.rsplit(
        ".", 1)[-1] in rules.OVERLAP_CHECKED_MODULES
    full_ok = name not in rules.OVERLAP_ANY
    if "out" in parameters:
        if reads_out(inspect.unwrap(fn)):  # it writes out itself: only the overlap is added
            return _checking_overlap(fn, full_ok) if checks_overlap else fn
        takes_dtype = "dtype" in parameters
        options = {"warn_resize": name not in rules.FACTORIES,
                   "same_dtype": rules.SAME_DTYPE.get(name, False),
                   "cast_message": rules.CAST_MESSAGE.get(name),
                   "refuse_grad": name not in rules.NOT_REFUSED_UNDER_AUTOGRAD,
                   "casts_through_temporary": inspect.unwrap(fn).__module__.rsplit(".", 1)[-1]
                   in rules.POINTWISE_MODULES and name not in rules.POINTWISE_WARN_ONCE}
    elif name in rules.ADDED_OUT:
        takes_dtype = name in rules.DTYPE_FROM_OUT
        options = {"refuse_grad": name not in rules.NOT_REFUSED_UNDER_AUTOGRAD,
                   **rules.ADDED_OUT[name]}
    else:
        return fn
    unsupported = rules.KERNEL_REFUSAL.get(name)
    compares = name in rules.COMPARISONS
    name = rules.AUTOGRAD_NAME.get(name, name)

    @functools.wraps(fn)
    def with_out(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        if checks_overlap:
            _check_out_overlap(out, args, kwargs, full_ok)
        if isinstance(out, Tensor):
            if takes_dtype and kwargs.get("dtype") is None:
                kwargs["dtype"] = out.dtype
            result = fn(*args, **kwargs)
            if isinstance(result, tuple):
                raise TypeError(f"{fn_name}(): argument 'out' must be tuple of Tensors, not "
                                f"Tensor")
            if compares:
                common = _dtype.result_type(*(args + tuple(kwargs.values()))[:2]).numpy
                return write_out(out, result, name, casts_through_temporary=out._data.dtype not
                                 in (common, np.dtype(np.bool_)), **options)
            refusal = unsupported and unsupported(args[0]._data.dtype, out._data.dtype)
            return write_out(out, result, name, kernel_refusal=refusal or None, **options)
        result = fn(*args, **kwargs)
        if not isinstance(result, tuple) or len(result) != len(out):
            raise TypeError(f"{fn_name}(): argument 'out' must be a tuple of {len(result)} "
                            f"Tensors" if isinstance(result, tuple) else
                            f"{fn_name}(): argument 'out' must be Tensor, not "
                            f"{type(out).__name__}")
        written = [write_out(target, value, name, **options)
                   for target, value in zip(out, result)]
        return tuple(written) if type(result) is tuple else type(result)(*written)

    return with_out
