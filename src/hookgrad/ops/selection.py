"""Selection ops: maximum/minimum (ties split the gradient), where, masked_fill and clamp
with number or tensor bounds, with their in-place forms. Operands arrive promoted by
``_base._binary_apply`` or ``math.clamp``."""
from __future__ import annotations

import numpy as np

from .. import _dtype
from ..tensor import Tensor
from . import _layout
from ._util import broadcast_error, quiet, quiet_errors
from ._base import (arithmetic, cast, clip_ufunc, _check_inplace_shape, finish, not_implemented,
                    Op, Original, _pair, to_work, warn_expanded_write, work_dtype, wrap_number)


# ---------------------------------------------------------------------------------------------
# Selection
# ---------------------------------------------------------------------------------------------
class Maximum(Op):
    """ties split the gradient in half between the two inputs"""

    node_name = "MaximumBackward0"
    saved_names = ("other", "self")
    _fn = staticmethod(np.maximum)

    @classmethod
    def forward(cls, ctx, self, other, dtype, number):
        ctx.save_for_backward(other, self)
        return arithmetic(cls.__name__.lower(), cls._fn, self, other, dtype)

    @staticmethod
    def backward(ctx, grad):
        other, self = ctx.saved_tensors
        a, b = self._data, other._data
        return _extremum_backward(ctx, grad, _compared(a < b, a, b), _compared(a > b, a, b),
                                  _compared(a == b, a, b))


class Minimum(Maximum):
    node_name = "MinimumBackward0"
    _fn = staticmethod(np.minimum)

    @staticmethod
    def backward(ctx, grad):
        other, self = ctx.saved_tensors
        a, b = self._data, other._data
        return _extremum_backward(ctx, grad, _compared(a > b, a, b), _compared(a < b, a, b),
                                  _compared(a == b, a, b))


class Fmax(Maximum):
    """maximum that ignores NaN (NaN only where both are);  a tie or a NaN other gives the
    whole gradient to self, as torch's formula"""

    node_name = "FmaxBackward0"
    _fn = staticmethod(np.fmax)

    @staticmethod
    def backward(ctx, grad):
        other, self = ctx.saved_tensors
        return _ignoring_nan_backward(ctx, grad, (self._data >= other._data))


class Fmin(Maximum):
    """minimum that ignores NaN; a tie or a NaN other gives the whole gradient to self"""

    node_name = "FminBackward0"
    _fn = staticmethod(np.fmin)

    @staticmethod
    def backward(ctx, grad):
        other, self = ctx.saved_tensors
        return _ignoring_nan_backward(ctx, grad, (self._data <= other._data))


def _ignoring_nan_backward(ctx, grad, self_wins):
    self_wins = self_wins | np.isnan(ctx.saved_tensors[0]._data)
    return (grad.masked_fill(~self_wins, 0.0) if ctx.needs_input_grad[0] else None,
            grad.masked_fill(self_wins, 0.0) if ctx.needs_input_grad[1] else None)


def _compared(mask: np.ndarray, a: np.ndarray, b) -> np.ndarray:
    """A comparison of ``a`` and ``b`` laid out as torch's (NumPy's order can differ when the
    operands' layouts do), so a where over it takes torch's layout."""
    return _layout.pointwise(mask, a, b)


def _extremum_backward(ctx, grad, self_loses, other_loses, ties):
    # torch's where(self == other, grad / 2, grad).masked_fill_(loses, 0), one per input: the
    # fill in place keeps where's layout (the condition's order)
    def share(loses):
        return grad.where(~ties, grad / 2).masked_fill_(loses, 0.0)
    return (share(self_loses) if ctx.needs_input_grad[0] else None,
            share(other_loses) if ctx.needs_input_grad[1] else None)


class Where(Op):
    """out = self where condition else other (condition is an array: it takes no edge)"""

    node_name = "WhereBackward0"
    saved_names = ("condition",)

    @staticmethod
    def forward(ctx, condition, self, other, dtype):
        ctx.save_for_backward(condition)
        a, b = _pair(self, other, dtype)
        try:
            # laid out by torch's elementwise rule over (condition, self, other)
            return _layout.pointwise(finish(np.where(condition, a, b), dtype), condition,
                                     _layout.promoted(self, dtype), _layout.promoted(other, dtype))
        except ValueError:
            raise broadcast_error("where", np.shape(a), np.shape(b)) from None

    @staticmethod
    def backward(ctx, grad):
        # torch's where(condition, grad, 0) and where(condition, 0, grad): laid out by the
        # condition first (an expanded grad takes the condition's order), recorded as where
        (condition,) = ctx.saved_tensors
        mask, dtype = condition._data, grad._data.dtype
        zero = wrap_number(0, dtype)
        return (None, Where.apply(mask, grad, zero, dtype) if ctx.needs_input_grad[1] else None,
                Where.apply(mask, zero, grad, dtype) if ctx.needs_input_grad[2] else None)


_C_TYPE = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
           "uint8": "unsigned char", "float32": "float", "float64": "double",
           "float16": "c10::Half", "bfloat16": "c10::BFloat16", "bool": "bool"}


def mask_dtype_error(dtype: np.dtype) -> RuntimeError:
    return RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                        f"{_C_TYPE.get(dtype.name, dtype.name)}")


def _check_mask(mask: np.ndarray) -> None:
    if mask.dtype != np.bool_:
        raise mask_dtype_error(mask.dtype)


# np.where slows down sharply past ~16k elements with an unpredictable mask (about 240 us for
# 65k float32, where the bitwise select below takes 24 us); below that it is the faster one
_BITWISE_FROM = 16384
_SAME_SIZE_INT = {1: np.dtype(np.int8), 2: np.dtype(np.int16), 4: np.dtype(np.int32),
                  8: np.dtype(np.int64)}


# the widened mask is a workspace as large as the result: it is made this many elements at a
# time, so a large masked_fill (ReLU's backward) does not hold a second full-size array
_SELECT_BLOCK = 1 << 18


def _select_bits(mask: np.ndarray, value: np.ndarray, array: np.ndarray) -> np.ndarray:
    """``np.where(mask, value, array)`` bit for bit, as integer ops on the same bytes:
    array ^ ((array ^ value) & -mask)."""
    bits = _SAME_SIZE_INT[array.dtype.itemsize]
    a = array.view(bits)
    result = np.bitwise_xor(a, value.view(bits))
    flat_result, flat_mask = result.reshape(-1), mask.reshape(-1)
    for start in range(0, flat_result.size, _SELECT_BLOCK):
        block = slice(start, start + _SELECT_BLOCK)
        select = flat_mask[block].astype(bits)
        np.negative(select, out=select)  # all ones where mask
        np.bitwise_and(flat_result[block], select, out=flat_result[block])
    np.bitwise_xor(result, a, out=result)
    return result.view(array.dtype)


class MaskedFill(Op):
    """out = value where mask else self;  d self = grad where not mask"""

    node_name = "MaskedFillBackward0"
    saved_names = ("mask",)

    @staticmethod
    def forward(ctx, self, mask, value):
        _check_mask(mask)
        ctx.save_for_backward(mask)
        value = cast(value, self.dtype)
        if self.size >= _BITWISE_FROM and mask.shape == self.shape and self.flags.c_contiguous:
            return _select_bits(mask, value, self)
        try:
            # contiguous, as torch's
            return np.require(np.where(mask, value, self), requirements="C")
        except ValueError:
            # torch's out-of-place masked_fill names the mask first
            raise broadcast_error("masked_fill", mask.shape, self.shape) from None

    @staticmethod
    def backward(ctx, grad):
        (mask,) = ctx.saved_tensors
        return grad.masked_fill(mask._data, 0.0), None, None


class MaskedFillTensor(Op):
    """masked_fill with a 0-dim tensor value: d value = sum of grad where mask"""

    node_name = "MaskedFillBackward1"
    saved_names = ("mask",)

    @staticmethod
    def forward(ctx, self, mask, value):
        return MaskedFill.forward(ctx, self, mask, value)

    @staticmethod
    def backward(ctx, grad):
        (mask,) = ctx.saved_tensors
        grad_value = grad.masked_fill(~mask._data, 0.0).sum() if ctx.needs_input_grad[2] else None
        return grad.masked_fill(mask._data, 0.0), None, grad_value


class MaskedFillInplace(MaskedFill):
    node_name = "MaskedFillBackward0"
    _inplace = True
    _overlap_ok = True  # torch only warns

    @staticmethod
    def forward(ctx, self, mask, value):
        _check_mask(mask)
        _check_inplace_shape(self.shape, mask.shape)
        warn_expanded_write(self, "masked_fill_", "tensor[mask] = scalar")
        ctx.save_for_backward(mask)
        np.copyto(self, cast(value, self.dtype), where=mask)
        return self


class MaskedFillTensorInplace(MaskedFillTensor):
    _operand_overlap = None  # torch reads the 0-d value first
    node_name = "MaskedFillBackward1"
    _inplace = True
    _overlap_ok = True

    @staticmethod
    def forward(ctx, self, mask, value):
        return MaskedFillInplace.forward(ctx, self, mask, value)


# ---------------------------------------------------------------------------------------------
# Clamp: number bounds (ClampBackward1, ClampMin/MaxBackward0) or tensor bounds (ClampBackward0)
# ---------------------------------------------------------------------------------------------
def _check_clamp_scalars(dtype: np.dtype, low, high) -> None:
    if dtype.kind == "b":
        kind = "clamp" if low is not None and high is not None else (
            "clamp_min" if low is not None else "clamp_max")
        raise not_implemented(f"{kind}_scalar_cpu", dtype)


def _check_clamp_tensors(dtype: np.dtype, has_min: bool, has_max: bool) -> None:
    if dtype.kind == "b" and has_min and has_max:  # one bool bound is a plain max or min
        raise not_implemented("clamp_cpu", dtype)


def _clamp_array(x: np.ndarray, low, high, dtype: np.dtype) -> np.ndarray:
    work = work_dtype(dtype)
    with quiet_errors():
        result = to_work(x, work)
        if work.kind == "f" and not isinstance(low, np.ndarray) \
                and not isinstance(high, np.ndarray):
            # number bounds: np.clip with both keeps x unless it is strictly outside, as
            # torch's scalar clamp does (clamp(-0.0, min=0) is -0.0; np.maximum gives +0.0),
            # in one SIMD pass (tensor bounds: torch's kernel is a maximum and a minimum)
            missing = np.asarray(np.inf, work)
            lo = missing * -1 if low is None else to_work(low, work)
            hi = missing if high is None else to_work(high, work)
            try:
                result = clip_ufunc(result, lo, hi)
            except ValueError:
                raise _clamp_broadcast_error(np.shape(result), low, high) from None
        else:
            for fn, bound in ((np.maximum, low), (np.minimum, high)):
                if bound is not None:
                    bound = to_work(bound, work)
                    try:
                        result = fn(result, bound)
                    except ValueError:
                        raise broadcast_error("clamp", np.shape(result),
                                              np.shape(bound)) from None
        # tensor bounds are operands too (number bounds are not: a unary op in torch)
        bounds = [bound for bound in (low, high) if isinstance(bound, np.ndarray)]
        return _layout.pointwise(finish(result, dtype).copy() if result is x
                                 else finish(result, dtype), x, *bounds, common=dtype)


def _clamp_broadcast_error(shape: tuple, low, high) -> RuntimeError:
    """The error for the first bound that does not broadcast, in torch's order (min, max)."""
    for bound in (low, high):
        if bound is None:
            continue
        try:
            shape = np.broadcast_shapes(shape, np.shape(bound))
        except ValueError:
            return broadcast_error("clamp", shape, np.shape(bound))
    return broadcast_error("clamp", shape, shape)


class Clamp(Op):
    """gradient passes where min <= self <= max"""

    node_name = "ClampBackward1"
    saved_names = ("self",)
    saved_values = {"min": "min", "max": "max"}

    @staticmethod
    def forward(ctx, self, min, max, dtype):
        _check_clamp_scalars(dtype, min, max)
        ctx.min, ctx.max = min, max
        ctx.save_for_backward(self)
        return _clamp_array(self, min, max, dtype)

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        # torch computes where(inside, grad, 0): laid out like self, not like grad
        return (grad_where(_inside(self._data, ctx.min, ctx.max), grad), None, None, None)


def grad_where(keep: np.ndarray, grad: Tensor) -> Tensor:
    """``where(keep, grad, 0)``: torch's form of a gradient that passes only where ``keep``
    holds. It is laid out by the elementwise rule over the mask and ``grad``, so a mask made
    from a transposed input gives a transposed gradient where ``masked_fill`` would follow
    ``grad`` alone (an expanded ``grad`` from ``sum`` would make it contiguous)."""
    dtype = grad._data.dtype
    return Where.apply(keep, grad, Tensor._make(np.zeros((), dtype)), dtype)


def _inside(x: np.ndarray, low, high) -> np.ndarray:
    with quiet_errors():
        if high is None:
            return np.asarray(x >= low)
        if low is None:
            return np.asarray(x <= high)
        return np.asarray((x >= low) & (x <= high))


class ClampMin(Clamp):
    node_name = "ClampMinBackward0"
    saved_values = {"min": "min"}


class ClampMax(Clamp):
    node_name = "ClampMaxBackward0"
    saved_values = {"max": "max"}


class ClampMinTensor(Op):
    """clamp_min with a tensor bound: d self where self >= min, d min where self < min"""

    node_name = "ClampMinBackward1"
    saved_names = ("min", "self")
    _keep = staticmethod(np.greater_equal)

    @classmethod
    def forward(cls, ctx, self, bound, dtype):
        ctx.save_for_backward(bound, self)
        if cls._keep is np.greater_equal:
            return _clamp_array(self, bound, None, dtype)
        return _clamp_array(self, None, bound, dtype)

    @classmethod
    def backward(cls, ctx, grad):
        bound, self = ctx.saved_tensors
        keep = quiet(cls._keep, self._data, bound._data)
        return (grad.masked_fill(~keep, 0.0),
                grad.masked_fill(keep, 0.0) if ctx.needs_input_grad[1] else None, None)


class ClampMaxTensor(ClampMinTensor):
    node_name = "ClampMaxBackward1"
    saved_names = ("max", "self")
    _keep = staticmethod(np.less_equal)


class ClampInplace(Clamp):
    """clamp_: the old self is saved through ``Original`` (torch's original_self)"""

    node_name = "ClampBackward1"
    _inplace = True

    @staticmethod
    def forward(ctx, self, min, max, dtype, original=None):
        _check_clamp_scalars(dtype, min, max)
        ctx.min, ctx.max = min, max
        ctx.save_for_backward(Original.saved(original))
        _dtype.copyto(self, _clamp_array(self, min, max, dtype))
        return self


class ClampTensor(Op):
    """tensor bounds; an absent bound is passed as an empty array (an edge without grad)"""

    node_name = "ClampBackward0"
    saved_names = ("max", "min", "self")

    @staticmethod
    def forward(ctx, self, min, max, dtype, has_min, has_max):
        _check_clamp_tensors(dtype, has_min, has_max)
        ctx.has_min, ctx.has_max = has_min, has_max
        ctx.save_for_backward(max if has_max else None, min if has_min else None, self)
        return _clamp_array(self, min if has_min else None, max if has_max else None, dtype)

    @staticmethod
    def backward(ctx, grad):
        # torch's formulas: self where min <= self <= max; min where self < min < max; max
        # where self > max or max < min (NaN anywhere, or min == max with self below, gives
        # none); each where(condition, grad, 0), laid out by the condition
        high, low, self = ctx.saved_tensors
        x = self._data
        dtype = grad._data.dtype
        zero = wrap_number(0, dtype)
        with quiet_errors():
            inside = (x >= low._data) if low is not None else None
            if high is not None:
                inside = (x <= high._data) if inside is None else inside & (x <= high._data)
            inside = _compared(inside, x, low._data if low is not None else high._data)
            grad_self = Where.apply(np.broadcast_to(inside, grad.shape), grad, zero, dtype)
            grad_min = grad_max = None
            if ctx.needs_input_grad[1]:
                below = _compared(x < low._data, x, low._data)
                if high is not None:
                    below &= low._data < high._data  # in place: torch's logical_and_
                grad_min = Where.apply(np.broadcast_to(below, grad.shape), grad, zero, dtype)
            if ctx.needs_input_grad[2]:
                above = _compared(x > high._data, x, high._data)
                if low is not None:
                    above |= high._data < low._data  # in place: torch's logical_or_
                grad_max = Where.apply(np.broadcast_to(above, grad.shape), grad, zero, dtype)
        return grad_self, grad_min, grad_max, None, None, None, None


class ClampTensorInplace(ClampTensor):
    node_name = "ClampBackward0"
    _inplace = True

    @staticmethod
    def forward(ctx, self, min, max, dtype, has_min, has_max, original=None):
        _check_clamp_tensors(dtype, has_min, has_max)
        ctx.has_min, ctx.has_max = has_min, has_max
        ctx.save_for_backward(max if has_max else None, min if has_min else None,
                              Original.saved(original))
        result = _clamp_array(self, min if has_min else None, max if has_max else None, dtype)
        _check_inplace_shape(self.shape, result.shape)
        _dtype.copyto(self, result)
        return self
