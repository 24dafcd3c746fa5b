"""Binary elementwise arithmetic (add, sub, mul, div and their rounding forms, remainder, pow)
and the in-place forms. Selection (maximum, where, masked_fill, clamp) lives in ``selection.py``,
unary math in ``unary.py``.

Operands are promoted as torch promotes them. A Python or NumPy number is torch's "wrapped
number": it takes an edge in ``next_functions`` (as in torch, where ``(x * 2).grad_fn`` has two;
``Function._wrapped_scalars`` gives a number argument its edge) but is never saved, so pack hooks
do not see it. It reaches ``forward`` as the Python number and is cast there. Float16 is computed
in float32 and rounded once, like torch's CPU kernels. NumPy's floating-point warnings are off
while an op computes (``_util.silence``): torch gives inf and NaN without a word.
"""
from __future__ import annotations

import numpy as np

from .. import _dtype
from ..autograd import grad_mode
from ..autograd.function import BuiltinFunction
from ..tensor import Tensor
from ._util import broadcast_error, quiet, restore, silence


class _Op(BuiltinFunction):
    """Built-in op: forward on NumPy arrays; non-tensor arguments stay Python values."""


_NUMBERS = (bool, int, float, np.bool_, np.integer, np.floating)


def is_number(value) -> bool:
    return isinstance(value, _NUMBERS)


def python_number(value):
    """A NumPy scalar as the Python number torch would see: np.float32(2.5) acts like 2.5, and
    np.bool_ like a float (torch reads it through ``__float__``)."""
    if isinstance(value, np.bool_):
        return float(value)
    return value.item() if isinstance(value, np.generic) else value


def not_implemented(kernel: str, dtype: np.dtype) -> NotImplementedError:
    return NotImplementedError(f"\"{kernel}\" not implemented for "
                               f"'{_dtype.scalar_type_name(dtype)}'")


def _check_sub(self: np.ndarray, other: np.ndarray, number) -> None:
    """torch refuses ``-`` when either operand is bool (a tensor or a Python bool)."""
    self_bool = self.dtype.kind == "b"
    other_bool = isinstance(number, bool) if number is not None else other.dtype.kind == "b"
    if self_bool and other_bool:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if self_bool or other_bool:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")


def as_operand(value, op_name: str, position: int = 2):
    """A Tensor, or a Python number for numbers; NumPy arrays become tensors on their memory."""
    if isinstance(value, Tensor):
        return value
    if is_number(value):
        return python_number(value)
    if isinstance(value, np.ndarray):
        _dtype.from_numpy_dtype(value.dtype)
        return Tensor._make(value)
    raise TypeError(f"{op_name}(): argument 'other' (position {position}) must be Tensor, not "
                    f"{type(value).__name__}")


_FLOAT16 = np.dtype(np.float16)
_FLOAT32 = np.dtype(np.float32)


def work_dtype(dtype: np.dtype) -> np.dtype:
    """Half precision is computed in float32 and rounded once at the end (torch's opmath)."""
    return _FLOAT32 if dtype == _FLOAT16 else dtype


def cast(value, dtype: np.dtype) -> np.ndarray:
    """``value`` as an array of ``dtype``; numbers wrap around on overflow, as torch casts."""
    if isinstance(value, np.ndarray):
        if value.dtype == dtype:
            return value
        token = silence()
        try:
            return value.astype(dtype)
        finally:
            restore(token)
    token = silence()
    try:
        if dtype.kind == "f":
            return np.asarray(value, dtype)
        return np.asarray(value).astype(dtype)
    finally:
        restore(token)


def finish(result, dtype: np.dtype) -> np.ndarray:
    """A fresh ndarray of ``dtype`` (NumPy gives scalars for 0-dim results)."""
    if type(result) is not np.ndarray:
        result = np.asarray(result)
    if result.dtype == dtype:
        return result
    token = silence()
    try:
        return result.astype(dtype)
    finally:
        restore(token)


def compute(op_name: str, fn, a, b):
    token = silence()
    try:
        return fn(a, b)
    except ValueError:
        raise broadcast_error(op_name, np.shape(a), np.shape(b)) from None
    finally:
        restore(token)


def to_work(value, work: np.dtype) -> np.ndarray:
    """``cast`` for callers already inside a quiet section (``_util.silence``)."""
    if isinstance(value, np.ndarray):
        return value if value.dtype == work else value.astype(work)
    return np.asarray(value, work) if work.kind == "f" else np.asarray(value).astype(work)


def arithmetic(op_name: str, fn, a: np.ndarray, b, dtype: np.dtype,
               inplace: bool = False) -> np.ndarray:
    """``fn(a, b)`` for an array ``a`` and an array or number ``b``, computed in ``dtype``'s
    work dtype and returned as a fresh array of ``dtype``: the cast, the ufunc and the rounding
    share one quiet section. ``inplace`` (the ufunc ``fn`` of add_, mul_ ...): when ``a``
    already has the work dtype and the result dtype, the result is written straight into ``a``
    (NumPy computes as if an overlapping ``b`` were copied first) and ``a`` is returned."""
    work = _FLOAT32 if dtype == _FLOAT16 else dtype
    token = silence()
    try:
        if inplace and a.dtype == dtype and work is dtype:
            b = to_work(b, work)
            if b.shape != a.shape and b.ndim:
                _check_inplace_shape(a.shape, b.shape, op_name)
            return fn(a, b, out=a)
        if a.dtype != work:
            a = a.astype(work)
        b = to_work(b, work)
        try:
            result = fn(a, b)
        except ValueError:
            raise broadcast_error(op_name, a.shape, b.shape) from None
        if type(result) is not np.ndarray:
            result = np.asarray(result)
        return result if result.dtype == dtype else result.astype(dtype)
    finally:
        restore(token)


def promote(a, b) -> np.dtype:
    """The NumPy dtype of ``torch.result_type(a, b)``; the common cases skip the full rule."""
    if isinstance(a, Tensor):
        dtype = a._data.dtype
        if isinstance(b, Tensor) and b._data.dtype == dtype:
            return dtype
        if dtype.kind == "f" and type(b) in (float, int):
            return dtype
    return _dtype.result_type(a, b).numpy


def wrap_number(value, dtype: np.dtype) -> Tensor:
    """torch's wrapped number: a 0-dim tensor that needs no grad and is never saved."""
    return Tensor._make(cast(value, work_dtype(dtype)))


def _binary_apply(cls, op_name: str, a, b, *extra):
    """Promote ``a`` (a tensor) and ``b`` and call ``cls.apply(a, b, dtype, number, *extra)``,
    where ``number`` is the Python value of a wrapped number ``b`` (passed as ``b`` too: ``cls``
    lists position 1 in ``_wrapped_scalars``, so it keeps its edge), else None."""
    if isinstance(b, Tensor):  # the common cases first: no conversion, one dtype or a float one
        dtype = a._data.dtype
        if b._data.dtype != dtype:
            dtype = _dtype.result_type(a, b).numpy
        return cls.apply(a, b, dtype, None, *extra)
    kind = type(b)
    if (kind is float or kind is int) and a._data.dtype.kind == "f":
        return cls.apply(a, b, a._data.dtype, b, *extra)
    b = as_operand(b, op_name)
    dtype = promote(a, b)
    if isinstance(b, Tensor):
        return cls.apply(a, b, dtype, None, *extra)
    if type(b) is int and not _INT_MIN <= b < _UINT_END and dtype.kind != "f":
        cast(b, dtype)  # an int beyond int64 fails here, before any check of the op (as in torch)
    return cls.apply(a, b, dtype, b, *extra)


_INT_MIN, _UINT_END = -2 ** 63, 2 ** 64  # Python ints NumPy turns into int64 or uint64


def _pair(a: np.ndarray, b, dtype: np.dtype):
    work = work_dtype(dtype)
    return cast(a, work), cast(b, work)


def _check_alpha(alpha, dtype: np.dtype) -> None:
    if type(alpha) is int:  # the default alpha=1, and any int, is fine for every dtype
        return
    if isinstance(alpha, (bool, np.bool_)) and dtype != np.bool_:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if dtype.kind in "iub" and isinstance(alpha, (float, np.floating)):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")


def _scaled(other: np.ndarray, alpha, work: np.dtype) -> np.ndarray:
    if alpha == 1:
        return other
    token = silence()
    try:
        return other * cast(alpha, work)
    finally:
        restore(token)


# ---------------------------------------------------------------------------------------------
# Arithmetic
# ---------------------------------------------------------------------------------------------
def _add_scaled(ctx, op_name: str, fn, self, other, dtype, alpha, inplace: bool = False):
    """``fn(self, alpha * other)`` for add and sub: ``alpha * other`` is rounded to the work
    dtype before the sum, as torch computes it."""
    _check_alpha(alpha, dtype)
    ctx.alpha = alpha
    if alpha != 1:
        work = work_dtype(dtype)
        other = _scaled(cast(other, work), alpha, work)
    return arithmetic(op_name, fn, self, other, dtype, inplace)


class Add(_Op):
    """out = self + alpha * other;  d self = grad, d other = alpha * grad"""

    node_name = "AddBackward0"
    _wrapped_scalars = (1,)

    @staticmethod
    def forward(ctx, self, other, dtype, number, alpha=1):
        return _add_scaled(ctx, "add", np.add, self, other, dtype, alpha)

    @staticmethod
    def backward(ctx, grad):
        return grad, (grad if ctx.alpha == 1 else grad * ctx.alpha)


class Sub(_Op):
    """out = self - alpha * other;  d self = grad, d other = -alpha * grad"""

    node_name = "SubBackward0"
    _wrapped_scalars = (1,)

    @staticmethod
    def forward(ctx, self, other, dtype, number, alpha=1):
        _check_sub(self, other, number)
        return _add_scaled(ctx, "sub", np.subtract, self, other, dtype, alpha)

    @staticmethod
    def backward(ctx, grad):
        return grad, (-grad if ctx.alpha == 1 else -grad * ctx.alpha)


class Rsub(_Op):
    """out = other - alpha * self (two tensors: RsubBackward0)"""

    node_name = "RsubBackward0"

    @staticmethod
    def forward(ctx, self, other, dtype, number, alpha=1):
        _check_sub(self, other, number)
        _check_alpha(alpha, dtype)
        ctx.alpha = alpha
        a, b = _pair(self, other, dtype)
        return finish(compute("rsub", np.subtract, b, _scaled(a, alpha, a.dtype)), dtype)

    @staticmethod
    def backward(ctx, grad):
        return (-grad if ctx.alpha == 1 else -grad * ctx.alpha), grad


def _subtract_from(self: np.ndarray, other: np.ndarray) -> np.ndarray:
    return np.subtract(other, self)


class RsubScalar(_Op):
    """out = other - alpha * self for a number ``other`` (no edge for it: RsubBackward1)"""

    node_name = "RsubBackward1"

    @staticmethod
    def forward(ctx, self, other, dtype, alpha=1):
        _check_sub(self, self, other)
        _check_alpha(alpha, dtype)
        ctx.alpha = alpha
        if alpha == 1:
            return arithmetic("rsub", _subtract_from, self, other, dtype)
        work = work_dtype(dtype)
        return finish(compute("rsub", np.subtract, cast(other, work),
                              _scaled(cast(self, work), alpha, work)), dtype)

    @staticmethod
    def backward(ctx, grad):
        return (-grad if ctx.alpha == 1 else -grad * ctx.alpha), None


class Mul(_Op):
    """out = self * other;  d self = grad * other, d other = grad * self"""

    node_name = "MulBackward0"
    saved_names = ("other", "self")
    _wrapped_scalars = (1,)

    @staticmethod
    def forward(ctx, self, other, dtype, number):
        ctx.number = number
        if number is None:
            need_self, need_other = ctx.needs_input_grad[:2]
            ctx.save_for_backward(other if need_self else None, self if need_other else None)
        return arithmetic("mul", np.multiply, self, other, dtype)

    @staticmethod
    def backward(ctx, grad):
        if ctx.number is not None:
            return grad * ctx.number, None
        other, self = ctx.saved_tensors
        return (None if other is None else grad * other,
                None if self is None else grad * self)


def _true_dtype(dtype: np.dtype) -> np.dtype:
    return dtype if dtype.kind == "f" else _dtype.get_default_dtype().numpy


class Div(_Op):
    """out = self / other;  d self = grad / other, d other = -grad * self / other^2"""

    node_name = "DivBackward0"
    saved_names = ("other", "self")
    _wrapped_scalars = (1,)

    @staticmethod
    def forward(ctx, self, other, dtype, number):
        ctx.number = number
        if number is None:
            need_self, need_other = ctx.needs_input_grad[:2]
            ctx.save_for_backward(other if need_self or need_other else None,
                                  self if need_other else None)
        return arithmetic("div", np.true_divide, self, other, _true_dtype(dtype))

    @staticmethod
    def backward(ctx, grad):
        if ctx.number is not None:
            return grad / ctx.number, None
        other, self = ctx.saved_tensors
        grad_self = grad / other if ctx.needs_input_grad[0] else None
        grad_other = None if self is None else -grad * ((self / other) / other)
        return grad_self, grad_other


def _int_div_check(b: np.ndarray) -> None:
    if b.dtype.kind in "iub" and not np.all(b):
        raise RuntimeError("ZeroDivisionError")


def divide_rounded(a: np.ndarray, b: np.ndarray, mode: str, op_name: str = "div"):
    """Floor or truncating division of arrays of one dtype (Python's floor for floats too)."""
    if a.dtype == np.bool_:
        raise not_implemented(f"div_{mode}_cpu", a.dtype)
    if a.dtype.kind in "iu":
        _int_div_check(b)
        floor = compute(op_name, np.floor_divide, a, b)
        if mode == "floor":
            return floor
        inexact = compute(op_name, np.remainder, a, b) != 0
        return np.where(inexact & ((a < 0) != (b < 0)), floor + 1, floor)
    if mode == "floor":
        return compute(op_name, np.floor_divide, a, b)
    return np.trunc(compute(op_name, np.true_divide, a, b))


class DivMode(_Op):
    """out = floor or trunc of self / other: zero gradient almost everywhere"""

    node_name = "DivBackward2"
    saved_names = ("other", "self")
    _wrapped_scalars = (1,)

    @staticmethod
    def forward(ctx, self, other, dtype, number, rounding_mode):
        if rounding_mode not in ("floor", "trunc"):
            raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or "
                               f"'floor' but found '{rounding_mode}'")
        if number is None:
            need_self, need_other = ctx.needs_input_grad[:2]
            ctx.save_for_backward(other if need_self or need_other else None,
                                  self if need_other else None)
        a, b = _pair(self, other, dtype)
        return finish(divide_rounded(a, b, rounding_mode), dtype)

    @staticmethod
    def backward(ctx, grad):
        zeros = Tensor._make(np.zeros_like(grad._data))
        return zeros, zeros if ctx.needs_input_grad[1] else None


class Remainder(_Op):
    """out = self - floor(self / other) * other;  d other = -grad * floor(self / other)"""

    node_name = "RemainderBackward1"
    saved_names = ("other", "self")

    @staticmethod
    def forward(ctx, self, other, dtype, number):
        if number is None:
            ctx.save_for_backward(other if ctx.needs_input_grad[1] else None,
                                  self if ctx.needs_input_grad[1] else None)
        a, b = _pair(self, other, dtype)
        if a.dtype == np.bool_:
            raise not_implemented("remainder_cpu", a.dtype)
        if a.dtype.kind in "iu":
            _int_div_check(b)
        return finish(compute("remainder", np.remainder, a, b), dtype)

    @staticmethod
    def backward(ctx, grad):
        if not ctx.needs_input_grad[1]:
            return grad, None
        other, self = ctx.saved_tensors
        return grad, -grad * self.div(other, rounding_mode="floor")


class RemainderScalar(Remainder):
    node_name = "RemainderBackward0"

    @staticmethod
    def forward(ctx, self, other, dtype):
        return Remainder.forward(ctx, self, cast(other, dtype), dtype, other)

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class FloorDivide(_Op):
    """torch has no derivative for floor_divide: backward raises, as it does there."""

    node_name = "torch::autograd::NotImplemented"

    @staticmethod
    def forward(ctx, self, other, dtype, number):
        a, b = _pair(self, other, dtype)
        return finish(divide_rounded(a, b, "floor", "floor_divide"), dtype)

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("the derivative for 'floor_divide' is not implemented.")


class FloorDivideScalar(FloorDivide):
    node_name = "torch::autograd::NotImplemented"

    @staticmethod
    def forward(ctx, self, other, dtype):
        return FloorDivide.forward(ctx, self, cast(other, dtype), dtype, other)


# ---------------------------------------------------------------------------------------------
# Powers
# ---------------------------------------------------------------------------------------------
def _check_int_power(dtype: np.dtype, exponent, tensor_exponent: bool = True) -> None:
    if dtype.kind == "b" and tensor_exponent:
        raise not_implemented("pow", dtype)
    if dtype.kind in "iu" and np.any(np.asarray(exponent) < 0):
        raise RuntimeError("Integers to negative integer powers are not allowed.")


def _power(base: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    token = silence()
    try:
        return np.power(base, exponent)
    finally:
        restore(token)


class Pow(_Op):
    """out = self ** exponent for a number exponent;  d self = grad * e * self^(e-1)"""

    node_name = "PowBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self, exponent, dtype):
        _check_int_power(dtype, exponent, tensor_exponent=False)
        ctx.exponent = exponent
        ctx.save_for_backward(self)
        if dtype.kind == "b":  # bool ** number is computed in int64 and cast back
            work = np.dtype(np.int64)
            return finish(_power(cast(self, work), cast(exponent, work)), dtype)
        return arithmetic("pow", np.power, self, exponent, dtype)

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        exponent = ctx.exponent
        if exponent == 0:
            return Tensor._make(np.zeros_like(grad._data)), None
        return grad * (exponent * self.pow(exponent - 1)), None


class PowTensor(_Op):
    """out = self ** exponent for a tensor exponent;  d exponent = grad * out * log(self)"""

    node_name = "PowBackward1"
    saved_names = ("exponent", "self", "result")

    @staticmethod
    def forward(ctx, self, exponent, dtype, number):
        _check_int_power(dtype, exponent)
        a, b = _pair(self, exponent, dtype)
        result = finish(compute("pow", _power, a, b), dtype)
        ctx.save_for_backward(exponent, self, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        exponent, self, result = ctx.saved_tensors
        grad_self = grad_exponent = None
        if ctx.needs_input_grad[0]:
            grad_self = (grad * (exponent * self.pow(exponent - 1))).masked_fill(
                exponent._data == 0, 0.0)
        if ctx.needs_input_grad[1]:
            undefined = (self._data == 0) & (exponent._data >= 0)
            grad_exponent = grad * (result * self.log()).masked_fill(undefined, 0.0)
        return grad_self, grad_exponent


class RPow(_Op):
    """out = base ** self for a number ``base``;  d self = grad * out * log(base)"""

    node_name = "PowBackward2"
    saved_names = ("exponent", "result")

    @staticmethod
    def forward(ctx, exponent, base, dtype):
        _check_int_power(dtype, exponent)
        ctx.base = base
        work = work_dtype(dtype)
        result = finish(_power(cast(base, work), cast(exponent, work)), dtype)
        ctx.save_for_backward(exponent, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        exponent, result = ctx.saved_tensors
        if ctx.base == 0:
            log_base = Tensor._make(np.where(exponent._data >= 0, 0.0, -np.inf).astype(
                result._data.dtype))
            return grad * (result * log_base).masked_fill(exponent._data >= 0, 0.0), None
        return grad * (result * float(quiet(np.log, ctx.base))), None


# ---------------------------------------------------------------------------------------------
# In-place arithmetic: the result is written into self, cast to self's dtype
# ---------------------------------------------------------------------------------------------
def _check_inplace_shape(self_shape: tuple, other_shape: tuple, op_name: str = "in-place") -> None:
    if self_shape == other_shape:
        return
    try:
        shape = np.broadcast_shapes(self_shape, other_shape)
    except ValueError:
        raise broadcast_error(op_name, self_shape, other_shape) from None
    if shape != tuple(self_shape):
        raise RuntimeError(f"output with shape {list(self_shape)} doesn't match the broadcast "
                           f"shape {list(shape)}")


def check_inplace_cast(result: np.dtype, target: np.dtype) -> None:
    if result == target:
        return
    if not _dtype.can_cast(_dtype.from_numpy_dtype(result), _dtype.from_numpy_dtype(target)):
        raise RuntimeError(f"result type {_dtype.scalar_type_name(result)} can't be cast to the "
                           f"desired output type {_dtype.scalar_type_name(target)}")


_PARTIAL_OVERLAP = ("unsupported operation: some elements of the input tensor and the written-to "
                    "tensor refer to a single memory location. Please clone() the tensor before "
                    "performing the operation.")


def _dense(array: np.ndarray) -> bool:
    """torch's is_non_overlapping_and_dense: the elements fill one block, in some dim order."""
    if array.flags.c_contiguous or array.flags.f_contiguous:
        return True
    expected = array.itemsize
    for stride, size in sorted((st, n) for n, st in zip(array.shape, array.strides) if n != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def check_overlap(self: np.ndarray, other) -> None:
    """torch refuses an in-place op whose other operand partly overlaps self (``x[1:].add_(x)``,
    ``x.sub_(x.t())``); the same elements in the same layout (``x.add_(x)``) are fine, and so
    is a layout too irregular to tell."""
    if not isinstance(other, np.ndarray) or other is self or (
            self.base is None and other.base is None):  # two owners never share memory
        return
    if not np.may_share_memory(self, other) or not self.size or not other.size or \
            not (_dense(self) and _dense(other)):
        return
    start = self.__array_interface__["data"][0]
    other_start = other.__array_interface__["data"][0]
    end, other_end = start + self.nbytes, other_start + other.nbytes
    if start == other_start and end == other_end:
        if self.strides == other.strides:
            return
        raise RuntimeError(_PARTIAL_OVERLAP)
    if start < other_end and other_start < end:
        raise RuntimeError(_PARTIAL_OVERLAP)


class _InplaceBinary(_Op):
    """The out-of-place op's forward, written into self; backward is the out-of-place one."""

    _inplace = True
    _outplace: type = None
    _wrapped_scalars = (1,)

    @classmethod
    def _write(cls, ctx, self, result):
        if result is not self:  # else ``arithmetic`` wrote it in place
            _check_inplace_shape(self.shape, result.shape)
            np.copyto(self, result, casting="unsafe")
        return self


class AddInplace(_InplaceBinary):
    node_name = "AddBackward0"

    @staticmethod
    def forward(ctx, self, other, dtype, number, alpha=1):
        check_overlap(self, other)
        check_inplace_cast(dtype, self.dtype)
        return AddInplace._write(ctx, self, _add_scaled(ctx, "add", np.add, self, other, dtype,
                                                        alpha, inplace=True))

    backward = Add.backward


class SubInplace(_InplaceBinary):
    node_name = "SubBackward0"

    @staticmethod
    def forward(ctx, self, other, dtype, number, alpha=1):
        check_overlap(self, other)
        check_inplace_cast(dtype, self.dtype)
        _check_sub(self, other, number)
        return SubInplace._write(ctx, self, _add_scaled(ctx, "sub", np.subtract, self, other,
                                                        dtype, alpha, inplace=True))

    backward = Sub.backward


class MulInplace(_InplaceBinary):
    """self *= other; d other needs the old self, so a copy of it is saved"""

    node_name = "MulBackward0"
    saved_names = ("other", "self")

    @staticmethod
    def forward(ctx, self, other, dtype, number, original=None):
        check_overlap(self, other)
        check_inplace_cast(dtype, self.dtype)
        ctx.number = number
        if number is None:
            ctx.save_for_backward(other if ctx.needs_input_grad[0] else None,
                                  Original.saved(original))
        return MulInplace._write(ctx, self, arithmetic("mul_", np.multiply, self, other, dtype,
                                                       inplace=True))

    backward = Mul.backward


class DivInplace(_InplaceBinary):
    node_name = "DivBackward0"
    saved_names = ("other", "self")

    @staticmethod
    def forward(ctx, self, other, dtype, number, original=None):
        check_overlap(self, other)
        check_inplace_cast(_true_dtype(dtype), self.dtype)
        ctx.number = number
        if number is None:
            need_self, need_other = ctx.needs_input_grad[:2]
            ctx.save_for_backward(other if need_self or need_other else None,
                                  Original.saved(original))
        return DivInplace._write(ctx, self, arithmetic("div_", np.true_divide, self, other,
                                                       _true_dtype(dtype), inplace=True))

    backward = Div.backward


class Original:
    """The old ``self`` of an in-place op whose derivative needs it (mul_, div_, clamp_).

    torch saves ``self.clone()`` taken before the update, with its CloneBackward0 history, so
    double backward reaches self's past. A forward sees arrays only, so the caller clones and
    passes this holder (not a tensor: it takes no edge); forward saves the clone it holds."""

    __slots__ = ("clone",)

    def __init__(self, tensor: Tensor = None):
        self.clone = None if tensor is None else tensor.clone()

    @staticmethod
    def needed(*tensors) -> bool:
        if not grad_mode.is_grad_enabled():
            return False
        for tensor in tensors:
            if isinstance(tensor, Tensor) and tensor.requires_grad:
                return True
        return False

    @staticmethod
    def saved(original) -> Tensor:
        """What forward saves for the old self: the clone, or ``None``."""
        return None if original is None else original.clone


def inplace_binary(cls, op_name: str, self: Tensor, other, *extra) -> Tensor:
    """add_/sub_/mul_/div_; mul_ and div_ keep the old self when ``other`` needs a gradient."""
    other = as_operand(other, op_name)
    if cls not in (MulInplace, DivInplace) or not Original.needed(self, other):
        return _binary_apply(cls, op_name, self, other, *extra)
    original = Original(self if Original.needed(other) else None)
    return _binary_apply(cls, op_name, self, other, original)
