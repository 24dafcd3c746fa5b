"""The in-place forms torch's Tensor has beside ops hookgrad already computes out of place:
comparisons written into self (``eq_``, ``lt_`` ...), logical and bitwise updates, ``remainder_``,
``copysign_``, ``xlogy_``, ``divide_`` with a rounding mode, ``cumsum_``/``cumprod_``, and the
inverse hyperbolic functions (``acosh_`` ...).

A comparison written into self is an op with torch's node (``EqBackward0`` for a number,
``EqBackward1`` for a tensor) whose gradient is zero; logical updates record nothing, as torch's
do (they bump the version and leave ``grad_fn`` as it was).
"""
from __future__ import annotations

import operator

import numpy as np

from .. import _dtype
from ..autograd import grad_mode
from ..autograd.views import check_inplace
from ..tensor import Tensor
from . import strided
from . import views as V
from . import comparison as cmp
from . import pointwise_binary as B
from . import pointwise_unary as X
from ._base import (Op, _check_inplace_shape, _check_writable, as_operand, cast, check_overlap,
                    check_inplace_cast, promote, work_dtype)
from .arithmetic import DivMode, FloorDivide, FloorDivideScalar, Remainder, RemainderScalar
from .cumsum import Cumsum
from .inplace import inplace
from .scans import Cumprod
from ._reduce_util import shown_dim
from ._util import normalize_dim


def _zeros(grad: Tensor) -> Tensor:
    return Tensor._make(np.zeros(grad._data.shape, grad._data.dtype))


class _CompareInplace(Op):
    """self <op>= other: the comparison's 0/1 answer in self's dtype; no gradient flows."""

    _inplace = True
    _compare = None

    @classmethod
    def forward(cls, ctx, self, other, dtype):
        _check_writable(self)
        _check_inplace_shape(self.shape, np.shape(other))  # before NumPy's own broadcast error
        work = work_dtype(dtype)
        result = cls._compare(cast(self, work), cast(other, work))
        _dtype.copyto(self, result)
        return self

    @staticmethod
    def backward(ctx, grad):
        return _zeros(grad), None, None


class _CompareTensorInplace(_CompareInplace):
    @staticmethod
    def backward(ctx, grad):
        return _zeros(grad), _zeros(grad), None


def _compare_method(name: str, node: str, fn):
    number_cls = type(f"{node}Inplace0", (_CompareInplace,), {
        "node_name": f"{node}Backward0", "_compare": staticmethod(fn), "__module__": __name__})
    tensor_cls = type(f"{node}Inplace1", (_CompareTensorInplace,), {
        "node_name": f"{node}Backward1", "_compare": staticmethod(fn), "__module__": __name__})

    def op(self: Tensor, other) -> Tensor:
        other = as_operand(other, name)
        dtype = promote(self, other)
        return (tensor_cls if isinstance(other, Tensor) else number_cls).apply(self, other, dtype)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"In place ``{name[:-1]}``: self becomes 1 where the comparison holds, else 0 "
                  "(in self's dtype); no gradient flows through it.")
    return op


_COMPARISONS = (("eq", "Eq", np.equal), ("ne", "Ne", np.not_equal), ("lt", "Lt", np.less),
                ("le", "Le", np.less_equal), ("gt", "Gt", np.greater),
                ("ge", "Ge", np.greater_equal))
_ALIASES = {"not_equal_": "ne_", "less_": "lt_", "less_equal_": "le_", "greater_": "gt_",
            "greater_equal_": "ge_"}

METHODS = {f"{name}_": _compare_method(f"{name}_", node, fn) for name, node, fn in _COMPARISONS}
METHODS.update({alias: METHODS[name] for alias, name in _ALIASES.items()})


# -- logical and bitwise updates: no graph ------------------------------------------------------
def _write(self: Tensor, result: np.ndarray, dtype: np.dtype) -> Tensor:
    """``result`` written into self's memory, bumping the version (no history recorded)."""
    check_inplace_cast(dtype, self._data.dtype)
    _check_writable(self._data)
    _check_inplace_shape(self._data.shape, np.shape(result))
    _dtype.copyto(self._data, result)
    self._version_counter[0] += 1
    return self


def _logical_method(name: str, fn):
    def op(self: Tensor, other) -> Tensor:
        other = as_operand(other, name)
        dtype = work_dtype(promote(self, other))
        b = other._data if isinstance(other, Tensor) else other
        check_overlap(self._data, b)
        _check_inplace_shape(self._data.shape, np.shape(b))  # before NumPy's broadcast error
        return _write(self, fn(cast(self._data, dtype), cast(b, dtype)), np.dtype(bool))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"In place ``{name[:-1]}``: self becomes 1 where it holds, else 0 (in self's "
                  "dtype); recorded nowhere, as in torch.")
    return op


def logical_not_(self: Tensor) -> Tensor:
    """In place ``logical_not``: self becomes 1 where it was zero, else 0 (no history)."""
    return _write(self, np.logical_not(self._data), np.dtype(bool))


def _bitwise_method(name: str, fn):
    def op(self: Tensor, other) -> Tensor:
        operand = as_operand(other, name)
        dtype = promote(self, operand)
        if isinstance(operand, Tensor):
            check_overlap(self._data, operand._data)
        # torch's order: shapes, then whether the result fits self, then the kernel's dtypes
        _check_inplace_shape(self._data.shape, np.shape(operand._data if isinstance(
            operand, Tensor) else operand))
        check_inplace_cast(dtype, self._data.dtype)
        result = fn(self, other)  # raises torch's error for floating operands
        return _write(self, result._data, dtype)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"In place ``{name[:-1]}`` of an integer or bool tensor."
    return op


def bitwise_not_(self: Tensor) -> Tensor:
    """In place ``bitwise_not`` of an integer or bool tensor."""
    return _write(self, cmp.bitwise_not(self)._data, self._data.dtype)


METHODS.update({
    "logical_and_": _logical_method("logical_and_", np.logical_and),
    "logical_or_": _logical_method("logical_or_", np.logical_or),
    "logical_xor_": _logical_method("logical_xor_", np.logical_xor),
    "logical_not_": logical_not_,
    "bitwise_and_": _bitwise_method("bitwise_and_", cmp.bitwise_and),
    "bitwise_or_": _bitwise_method("bitwise_or_", cmp.bitwise_or),
    "bitwise_xor_": _bitwise_method("bitwise_xor_", cmp.bitwise_xor),
    "bitwise_not_": bitwise_not_,
    "bitwise_left_shift_": _bitwise_method("bitwise_left_shift_", cmp.bitwise_left_shift),
    "bitwise_right_shift_": _bitwise_method("bitwise_right_shift_", cmp.bitwise_right_shift),
})


# -- arithmetic ----------------------------------------------------------------------------------
def _pair_inplace(self: Tensor, other, tensor_cls, number_cls, name: str) -> Tensor:
    other = as_operand(other, name)
    if isinstance(other, Tensor):
        dtype = promote(self, other)
        return inplace(tensor_cls, self, other, dtype, None)
    return inplace(number_cls, self, other, promote(self, other))


def remainder_(self: Tensor, other) -> Tensor:
    """In place ``remainder`` (the sign of ``other``, as Python's %)."""
    return _pair_inplace(self, other, Remainder, RemainderScalar, "remainder_")


class _FloorDivideInplace(FloorDivide):
    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("derivative for aten::floor_divide_ is not implemented")


class _FloorDivideScalarInplace(FloorDivideScalar):
    backward = _FloorDivideInplace.backward


def floor_divide_(self: Tensor, other) -> Tensor:
    """In place ``floor_divide``; like torch, it has no derivative (backward raises)."""
    return _pair_inplace(self, other, _FloorDivideInplace, _FloorDivideScalarInplace,
                         "floor_divide_")


def divide_(self: Tensor, other, *, rounding_mode=None) -> Tensor:
    """In place ``div``, optionally rounded (``'trunc'`` or ``'floor'``)."""
    if rounding_mode is None:
        return self.div_(other)
    other = as_operand(other, "div_")
    dtype = promote(self, other)
    number = None if isinstance(other, Tensor) else other
    return inplace(DivMode, self, other, dtype, number, rounding_mode)


def subtract_(self: Tensor, other, *, alpha=1) -> Tensor:
    """In place ``sub`` (torch's alias)."""
    return self.sub_(other, alpha=alpha)


class CopysignNumber(B.Copysign):
    """copysign(tensor, number): only self has an edge."""

    node_name = "CopysignBackward1"


def copysign_(self: Tensor, other) -> Tensor:
    """In place ``copysign``: ``|self|`` with the sign of ``other``."""
    other = as_operand(other, "copysign_")
    if isinstance(other, Tensor):
        return inplace(B.Copysign, self, other, promote(self, other), None)
    return inplace(CopysignNumber, self, other, promote(self, other), other)


def xlogy_(self: Tensor, other) -> Tensor:
    """In place ``xlogy``: ``self * log(other)``, 0 where self is 0."""
    other = as_operand(other, "xlogy_")
    if isinstance(other, Tensor):
        return inplace(B.Xlogy, self, other, promote(self, other), None)
    return inplace(B.XlogyNumberOther, self, other, promote(self, other))


_C_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int", "int16": "short int",
            "int8": "signed char", "uint8": "unsigned char", "bool": "bool"}


def _check_scan_dtype(self: Tensor, dtype) -> None:
    if dtype is not None and dtype.numpy != self._data.dtype:
        names = [_C_NAMES.get(d.name, d.name) for d in (self._data.dtype, dtype.numpy)]
        raise RuntimeError(f"Bad in-place call: input tensor dtype {names[0]} and output tensor "
                           f"dtype {names[1]} should match")


def cumsum_(self: Tensor, dim: int, *, dtype=None) -> Tensor:
    """In place ``cumsum`` along ``dim`` (the dtype stays self's)."""
    _check_scan_dtype(self, dtype)
    return inplace(Cumsum, self, normalize_dim(dim, self._data.ndim), self._data.dtype,
                   shown_dim(dim))


def cumprod_(self: Tensor, dim: int, *, dtype=None) -> Tensor:
    """In place ``cumprod`` along ``dim`` (the dtype stays self's)."""
    _check_scan_dtype(self, dtype)
    return inplace(Cumprod, self, normalize_dim(dim, self._data.ndim), self._data.dtype,
                   shown_dim(dim))


def _no_derivative_forward(ctx, cls, self: np.ndarray, name: str) -> np.ndarray:
    ctx._op = name[:-1].replace("arc", "a")
    return X._apply_float(cls._fn, self)


def _no_inplace_derivative(ctx, grad):
    raise NotImplementedError(f"the derivative for 'inplace version of {ctx._op}' is not "
                              "implemented.")


def _inverse_hyperbolic(cls, name: str):
    """torch's in-place acosh_, asinh_, atanh_ record a node whose backward raises."""
    made = type(cls.__name__ + "Inplace1", (cls,), {
        "node_name": cls.node_name[:-1] + "1", "__module__": __name__, "saved_names": (),
        "forward": staticmethod(lambda ctx, self: _no_derivative_forward(ctx, cls, self, name)),
        "backward": staticmethod(_no_inplace_derivative)})

    def op(self: Tensor) -> Tensor:
        return inplace(made, self)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"In place ``{name[:-1]}``."
    return op


METHODS.update({
    "remainder_": remainder_, "floor_divide_": floor_divide_, "divide_": divide_,
    "true_divide_": divide_, "multiply_": lambda self, other: self.mul_(other),
    "subtract_": subtract_, "copysign_": copysign_, "xlogy_": xlogy_,
    "cumsum_": cumsum_, "cumprod_": cumprod_,
    "acosh_": _inverse_hyperbolic(X.Acosh, "acosh_"),
    "asinh_": _inverse_hyperbolic(X.Asinh, "asinh_"),
    "atanh_": _inverse_hyperbolic(X.Atanh, "atanh_"),
})
METHODS.update({"arccosh_": METHODS["acosh_"], "arcsinh_": METHODS["asinh_"],
                "arctanh_": METHODS["atanh_"]})
METHODS["multiply_"].__doc__ = "In place ``mul`` (torch's alias)."


# -- in-place view ops: self takes the view's shape and strides ---------------------------------
def _view_method(name: str, view):
    def op(self: Tensor, *args) -> Tensor:
        if grad_mode.is_grad_enabled() and self.requires_grad:
            check_inplace(self)
            result = view(self, *args)  # self's history, then the view's node
            self._data, self._grad_fn = result._data, result._grad_fn
            self._output_nr = result._output_nr
            if self._base is not None:  # still a view of the same base, one op further
                self._view_fn, self._view_version = result._view_fn, result._view_version
            return self
        with grad_mode.no_grad():
            result = view(self, *args)
        self._data = result._data
        replay = self._view_fn
        if self._base is not None and replay is not None:  # later replays end with this view
            self._view_fn = lambda base: view(replay(base), *args)
        return self

    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"In place ``{name[:-1]}``: this tensor takes the view's shape and strides "
                  "(one node further in its history, under torch's in-place node name).")
    return op


def _renamed(cls, node_name: str) -> type:
    """``cls`` recorded under torch's node name for its in-place form."""
    return type(cls.__name__ + "Inplace", (cls,), {"node_name": node_name,
                                                  "__module__": __name__})


_T = _renamed(V.T, "TBackward1")
_TRANSPOSE = _renamed(V.Transpose, "TransposeBackward1")
_SQUEEZE = (_renamed(V.Squeeze, "SqueezeBackward3"), _renamed(V.Squeeze, "SqueezeBackward4"),
            _renamed(V.Squeeze, "SqueezeBackward5"))
_UNSQUEEZE = _renamed(V.Unsqueeze, "UnsqueezeBackward1")
_AS_STRIDED = _renamed(strided.AsStrided, "AsStridedBackward1")


def _as_strided(input: Tensor, size, stride, storage_offset=None) -> Tensor:
    strided.as_strided(input.detach(), size, stride, storage_offset)  # the argument checks
    size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    offset = input.storage_offset() if storage_offset is None else int(storage_offset)
    return _AS_STRIDED.apply(input, size, stride, offset)


def _squeeze(input: Tensor, dim=None) -> Tensor:
    if dim is None:
        return _SQUEEZE[0].apply(input)
    if isinstance(dim, (tuple, list)):
        return _SQUEEZE[2].apply(input, tuple(operator.index(d) for d in dim))
    return _SQUEEZE[1].apply(input, (operator.index(dim),))


def _transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    return _TRANSPOSE.apply(input, dim0, dim1)


METHODS.update({
    "t_": _view_method("t_", lambda input: _T.apply(input)),
    "transpose_": _view_method("transpose_", _transpose),
    "swapaxes_": _view_method("swapaxes_", _transpose),
    "swapdims_": _view_method("swapdims_", _transpose),
    "squeeze_": _view_method("squeeze_", _squeeze),
    "unsqueeze_": _view_method("unsqueeze_", lambda input, dim: _UNSQUEEZE.apply(
        input, operator.index(dim))),
    "as_strided_": _view_method("as_strided_", _as_strided),
})
