"""Binary and ternary elementwise math: atan2, hypot, logaddexp, copysign, fmod, xlogy, lerp,
addcmul, addcdiv. Operands are promoted as torch promotes them (``_base._binary_apply``);
each op saves what torch saves, conditionally where torch does.
"""
from __future__ import annotations

import numpy as np

from .. import _dtype
from ..tensor import Tensor
from ._util import broadcast_error, quiet_errors
from . import _layout
from .selection import _C_TYPE
from ._base import (arithmetic, as_operand, _binary_apply, cast, _check_alpha,
                    check_number_fits, compute, finish, not_implemented, Op, promote, work_dtype)
from .arithmetic import Remainder, _int_div_check, _true_dtype


def _float_pair(self, other, dtype):
    """both operands in the work dtype of the float result dtype"""
    work = work_dtype(_true_dtype(dtype))
    return cast(self, work), cast(other, work), _true_dtype(dtype)


class Atan2(Op):
    """d self = other / (self^2 + other^2), d other = -self / (self^2 + other^2)"""

    node_name = "Atan2Backward0"
    saved_names = ("other", "self")

    @staticmethod
    def forward(ctx, self, other, dtype, number):
        ctx.save_for_backward(other, self)
        a, b, out = _float_pair(self, other, dtype)
        return _layout.pointwise(finish(compute("atan2", np.arctan2, a, b), out), self, other,
                                 common=out)

    @staticmethod
    def backward(ctx, grad):
        # torch's grad * other * recip and grad * -self * recip, in that order (the layout)
        other, self = ctx.saved_tensors
        recip = (self * self + other * other).reciprocal()
        return (grad * other * recip if ctx.needs_input_grad[0] else None,
                grad * -self * recip if ctx.needs_input_grad[1] else None)


class Hypot(Op):
    """d self = self / result, d other = other / result"""

    node_name = "HypotBackward0"
    saved_names = ("other", "self", "result")

    @staticmethod
    def forward(ctx, self, other, dtype, number):
        if dtype.kind not in "fV":
            raise not_implemented("hypot_cpu", dtype)
        a, b, out = _float_pair(self, other, dtype)
        result = _layout.pointwise(finish(compute("hypot", np.hypot, a, b), out), self, other,
                                   common=out)
        need_self, need_other = ctx.needs_input_grad[:2]
        ctx.save_for_backward(other if need_other else None, self if need_self else None, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        other, self, result = ctx.saved_tensors
        return (None if self is None else grad * self / result,
                None if other is None else grad * other / result)


class Logaddexp(Op):
    """log(e^self + e^other);  d self = sigmoid(self - other)"""

    node_name = "LogaddexpBackward0"
    saved_names = ("other", "self")

    @staticmethod
    def forward(ctx, self, other, dtype, number):
        if dtype.kind not in "fV":
            raise not_implemented("logaddexp_cpu", dtype)
        ctx.save_for_backward(other, self)
        a, b, out = _float_pair(self, other, dtype)
        return _layout.pointwise(finish(compute("logaddexp", np.logaddexp, a, b), out), self,
                                 other, common=out)

    @staticmethod
    def backward(ctx, grad):
        other, self = ctx.saved_tensors
        share = (self - other).sigmoid()
        return grad * share, grad * (1 - share)


class Copysign(Op):
    """|self| with other's sign;  d self = grad * sign agreement (0 where self is 0)"""

    node_name = "CopysignBackward0"
    saved_names = ("self", "result")

    @staticmethod
    def forward(ctx, self, other, dtype, number):
        a, b, out = _float_pair(self, other, dtype)
        result = _layout.pointwise(finish(compute("copysign", np.copysign, a, b), out), self,
                                   other, common=out)
        ctx.save_for_backward(self, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        self, result = ctx.saved_tensors
        ratio = (result / self).where(self._data != 0, 0.0)  # laid out by self
        return grad * ratio, (Tensor._make(np.zeros_like(grad._data))
                              if ctx.needs_input_grad[1] else None)


class Fmod(Remainder):
    """self - trunc(self / other) * other (the sign of self, as C's fmod); remainder's
    gradient with the quotient truncated"""

    node_name = "FmodBackward1"
    _rounding_mode = "trunc"

    @staticmethod
    def forward(ctx, self, other, dtype, number):
        if number is None:
            ctx.save_for_backward(other if ctx.needs_input_grad[1] else None,
                                  self if ctx.needs_input_grad[1] else None)
        work = work_dtype(dtype)
        a, b = cast(self, work), cast(other, work)
        if a.dtype == np.bool_:
            raise not_implemented("fmod_cpu", a.dtype)
        if a.dtype.kind in "iu":
            _int_div_check(a, b)
        return _layout.pointwise(finish(compute("fmod", np.fmod, a, b), dtype), self, other,
                                 common=dtype)


class FmodScalar(Fmod):
    node_name = "FmodBackward0"
    saved_names = ()  # torch keeps nothing when other is a number
    _wrapped_scalars = ()

    @staticmethod
    def forward(ctx, self, other, dtype):
        return Fmod.forward(ctx, self, other, dtype, other)

    @staticmethod
    def backward(ctx, grad):
        return grad, None


def _binary(cls, name: str, number_cls=None):
    def op(input, other, *, out=None) -> Tensor:
        input = as_operand(input, name, 1)
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                            f"{type(input).__name__}")
        other = as_operand(other, name)
        if isinstance(other, Tensor):
            return _binary_apply(cls, name, input, other)
        if number_cls is None:
            raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not "
                            f"{type(other).__name__}")
        return number_cls.apply(input, other, promote(input, other))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = cls.__doc__
    return op


atan2 = arctan2 = _binary(Atan2, "atan2")
hypot = _binary(Hypot, "hypot")
logaddexp = _binary(Logaddexp, "logaddexp")
fmod = _binary(Fmod, "fmod", FmodScalar)


def copysign(input: Tensor, other, *, out=None) -> Tensor:
    """``|input|`` with the sign of ``other``, elementwise."""
    other = as_operand(other, "copysign")
    if not isinstance(other, Tensor):
        other = Tensor._make(cast(other, _true_dtype(promote(input, other))))
    return _binary_apply(Copysign, "copysign", input, other)


# ---------------------------------------------------------------------------------------------
# xlogy: self * log(other), 0 where self is 0
# ---------------------------------------------------------------------------------------------
def _xlogy(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where((a == 0) & ~np.isnan(b), np.zeros((), a.dtype), a * np.log(b))


class Xlogy(Op):
    node_name = "XlogyBackward0"
    saved_names = ("other", "self")

    @staticmethod
    def forward(ctx, self, other, dtype, number):
        ctx.save_for_backward(other, self)
        a, b, out = _float_pair(self, other, dtype)
        return _layout.pointwise(finish(compute("xlogy", _xlogy, a, b), out), self, other,
                                 common=out)

    @staticmethod
    def backward(ctx, grad):
        other, self = ctx.saved_tensors
        grad_self = grad_other = None
        if ctx.needs_input_grad[0]:
            undefined = (self._data == 0) & (other._data <= 0)
            grad_self = (grad * other.log()).masked_fill(undefined, 0.0)
        if ctx.needs_input_grad[1]:
            grad_other = grad * self / other
        return grad_self, grad_other


class XlogyNumberOther(Op):
    """xlogy(tensor, number)"""

    node_name = "XlogyBackward2"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self, other, dtype):
        ctx._saved_other = other
        ctx.save_for_backward(self)
        a, b, out = _float_pair(self, other, dtype)
        return _layout.pointwise(finish(compute("xlogy", _xlogy, a, b), out), self, other,
                                 common=out)

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        other = ctx._saved_other
        with quiet_errors():
            log_other = float(np.log(np.float64(other)))
        result = grad * log_other
        return (result.masked_fill(self._data == 0, 0.0) if other <= 0 else result), None, None


class XlogyNumberSelf(Op):
    """xlogy(number, tensor)"""

    node_name = "XlogyBackward1"
    saved_names = ("other",)

    @staticmethod
    def forward(ctx, other, self, dtype):
        ctx._saved_self = self
        ctx.save_for_backward(other)
        a, b, out = _float_pair(self, other, dtype)
        return _layout.pointwise(finish(compute("xlogy", _xlogy, a, b), out), self, other,
                                 common=out)

    @staticmethod
    def backward(ctx, grad):
        (other,) = ctx.saved_tensors
        return grad * ctx._saved_self / other, None, None


def xlogy(input, other, *, out=None) -> Tensor:
    """input * log(other), and 0 where input is 0 (unless other is NaN)"""
    input, other = as_operand(input, "xlogy", 1), as_operand(other, "xlogy")
    if isinstance(input, Tensor) and isinstance(other, Tensor):
        return _binary_apply(Xlogy, "xlogy", input, other)
    if isinstance(input, Tensor):
        return XlogyNumberOther.apply(input, other, promote(input, other))
    if isinstance(other, Tensor):
        return XlogyNumberSelf.apply(other, input, promote(other, input))
    raise TypeError("xlogy(): expected at least one Tensor argument")


# ---------------------------------------------------------------------------------------------
# lerp, addcmul, addcdiv
# ---------------------------------------------------------------------------------------------
def _broadcast3(op: str, *arrays) -> None:
    try:
        np.broadcast_shapes(*[np.shape(a) for a in arrays])
    except ValueError:
        shapes = [np.shape(a) for a in arrays]
        raise broadcast_error(op, shapes[0], shapes[-1]) from None


def _lerp(self: np.ndarray, end: np.ndarray, weight) -> np.ndarray:
    """torch's two-sided formula: from ``self`` for |weight| < 1/2, from ``end`` otherwise, so
    weight 1 gives ``end`` exactly and an infinite end point survives (-inf + 0.75 (1 + inf) is
    NaN, -1 - 0.25 (1 + inf) is -inf). float16 is computed in float32 and rounded once, as
    torch does."""
    if self.dtype == np.float16:
        self, end = self.astype(np.float32), end.astype(np.float32)
        weight = np.asarray(weight, np.float32)
    difference = end - self
    return np.where(np.abs(weight) < 0.5, self + weight * difference,
                    end - difference * (1 - weight))


class Lerp(Op):
    """self + weight (end - self) for a number weight"""

    node_name = "LerpBackward0"

    @staticmethod
    def forward(ctx, self, end, weight):
        ctx._saved_weight = weight
        if self.dtype.kind not in "fV":
            raise not_implemented("lerp_kernel_scalar", self.dtype)
        _broadcast3("lerp", self, end)
        with quiet_errors():
            w = (np.float32 if self.dtype == np.float16 else self.dtype.type)(weight)
            return _layout.pointwise(finish(_lerp(self, end, w), self.dtype), self, end)

    @staticmethod
    def backward(ctx, grad):
        weight = ctx._saved_weight
        return grad * (1 - weight), grad * weight, None


class LerpTensor(Op):
    """self + weight (end - self);  d weight = grad (end - self)"""

    node_name = "LerpBackward1"
    saved_names = ("end", "self", "weight")

    @staticmethod
    def forward(ctx, self, end, weight):
        if self.dtype.kind not in "fV":
            raise not_implemented("lerp_kernel_tensor", self.dtype)
        _broadcast3("lerp", self, end, weight)
        need_self, need_end, need_weight = ctx.needs_input_grad[:3]
        ctx.save_for_backward(end if need_weight else None, self if need_weight else None,
                              weight if need_self or need_end else None)
        with quiet_errors():
            return _layout.pointwise(finish(_lerp(self, end, weight), self.dtype), self, end,
                                     weight)

    @staticmethod
    def backward(ctx, grad):
        end, self, weight = ctx.saved_tensors
        needs = ctx.needs_input_grad
        return (grad * (1 - weight) if needs[0] else None,
                grad * weight if needs[1] else None,
                grad * (end - self) if needs[2] else None)


def _same_dtype(op: str, input: Tensor, name: str, other: Tensor) -> None:
    if other._data.dtype != input._data.dtype:
        raise RuntimeError(f"expected dtype {_C_TYPE.get(input._data.dtype.name)} for `{name}` "
                           f"but got dtype {_C_TYPE.get(other._data.dtype.name)}")


def lerp(input: Tensor, end: Tensor, weight, *, out=None) -> Tensor:
    """input + weight * (end - input), weight a number or a tensor"""
    if not isinstance(end, Tensor):
        raise TypeError(f"lerp() received an invalid combination of arguments - got (Tensor, "
                        f"{type(end).__name__}, {type(weight).__name__}), but expected one of:\n"
                        " * (Tensor input, Tensor end, Tensor weight, *, Tensor out = None)\n"
                        " * (Tensor input, Tensor end, Number weight, *, Tensor out = None)")
    _same_dtype("lerp", input, "end", end)
    if isinstance(weight, Tensor):
        _same_dtype("lerp", input, "weight", weight)
        return LerpTensor.apply(input, end, weight)
    return Lerp.apply(input, end, float(weight))


class Addcmul(Op):
    """self + value * tensor1 * tensor2"""

    node_name = "AddcmulBackward0"
    saved_names = ("tensor1", "tensor2")

    @staticmethod
    def forward(ctx, self, tensor1, tensor2, value, dtype):
        _broadcast3("addcmul", self, tensor1, tensor2)
        if dtype.kind == "b":
            raise not_implemented("addcmul_cpu_out", dtype)
        # float16/bfloat16 compute in float32, so value is checked as a float32
        check_number_fits(value, dtype if dtype.name not in ("float16", "bfloat16")
                          else np.dtype(np.float32))
        if dtype.kind in "iu" and not isinstance(value, (int, np.integer)):
            value = int(value)  # torch's kernel takes value in the tensors' integer type
        ctx._saved_value = value
        ctx.save_for_backward(tensor1 if ctx.needs_input_grad[2] else None,
                              tensor2 if ctx.needs_input_grad[1] else None)
        work = work_dtype(dtype)
        product = arithmetic("addcmul", np.multiply, cast(tensor1, work), tensor2, work)
        product = arithmetic("addcmul", np.multiply, product, value, work)
        return _layout.pointwise(arithmetic("addcmul", np.add, cast(self, work), product, dtype),
                                 self, tensor1, tensor2, common=dtype)

    @staticmethod
    def backward(ctx, grad):
        tensor1, tensor2 = ctx.saved_tensors
        value = ctx._saved_value
        return (grad, None if tensor2 is None else grad * tensor2 * value,
                None if tensor1 is None else grad * tensor1 * value, None, None)


class Addcdiv(Op):
    """self + value * tensor1 / tensor2"""

    node_name = "AddcdivBackward0"
    saved_names = ("tensor1", "tensor2")

    @staticmethod
    def forward(ctx, self, tensor1, tensor2, value, dtype):
        if tensor1.dtype.kind in "iub" and tensor2.dtype.kind in "iub":
            raise RuntimeError(
                "Integer division with addcdiv is no longer supported, and in a future  release "
                "addcdiv will perform a true division of tensor1 and tensor2. The historic "
                "addcdiv behavior can be implemented as (input + value * torch.trunc(tensor1 / "
                "tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / "
                "tensor2) for float inputs. The future addcdiv behavior is just the latter "
                "implementation: (input + value * tensor1 / tensor2), for all dtypes.")
        _check_alpha(value, dtype)
        _broadcast3("addcdiv", self, tensor1, tensor2)
        ctx._saved_value = value
        ctx.save_for_backward(tensor1 if ctx.needs_input_grad[2] else None, tensor2)
        work = work_dtype(dtype)
        ratio = arithmetic("addcdiv", np.true_divide, cast(tensor1, work), tensor2, work)
        ratio = arithmetic("addcdiv", np.multiply, ratio, value, work)
        return _layout.pointwise(arithmetic("addcdiv", np.add, cast(self, work), ratio, dtype),
                                 self, tensor1, tensor2, common=dtype)

    @staticmethod
    def backward(ctx, grad):
        tensor1, tensor2 = ctx.saved_tensors
        value = ctx._saved_value
        # torch's order: value / tensor2 first, so the gradient takes tensor2's layout when
        # the incoming gradient is expanded
        grad_1 = grad * (value / tensor2) if ctx.needs_input_grad[1] else None
        grad_2 = None if tensor1 is None else -grad * value * tensor1 / (tensor2 * tensor2)
        return grad, grad_1, grad_2, None, None


def _addc(cls, input: Tensor, tensor1: Tensor, tensor2: Tensor, value) -> Tensor:
    dtype = _dtype.result_type(input, tensor1, tensor2).numpy
    return cls.apply(input, tensor1, tensor2, value, dtype)


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1, out=None) -> Tensor:
    """``input + value * tensor1 * tensor2``."""
    return _addc(Addcmul, input, tensor1, tensor2, value)


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1, out=None) -> Tensor:
    """``input + value * tensor1 / tensor2``."""
    return _addc(Addcdiv, input, tensor1, tensor2, value)
