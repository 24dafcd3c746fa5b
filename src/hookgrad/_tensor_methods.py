"""Tensor methods and operators, bound in one table from the op modules (torch's method names)."""
from __future__ import annotations

import numpy as np

from . import _device, _dtype
from .ops import creation, indexing, linalg, math, reduce, shape, views
from .tensor import Tensor


def _reflect(fn):
    return lambda self, other: fn(other, self)


def _to(self: Tensor, *args, **kwargs) -> Tensor:
    """to(dtype), to(device), to(other), to(device, dtype); copies only when the dtype changes."""
    dtype = kwargs.get("dtype")
    copy = kwargs.get("copy", False)
    if kwargs.get("device") is not None:
        _device.check(kwargs["device"])
    for arg in args:
        if isinstance(arg, (str, _device.device)):
            _device.check(arg)
        elif isinstance(arg, _dtype.dtype):
            dtype = arg
        elif isinstance(arg, np.dtype):  # the engine casts gradients with the input's np.dtype
            dtype = _dtype.from_numpy_dtype(arg)
        elif isinstance(arg, Tensor):
            dtype = arg.dtype
    if dtype is None or dtype.numpy == self._data.dtype:
        return views.Clone.apply(self) if copy else self
    return views.ToCopy.apply(self, dtype.numpy)


def _caster(dtype):
    def cast(self: Tensor, memory_format=None) -> Tensor:
        return _to(self, dtype)

    return cast


def _type(self: Tensor, dtype=None, **kwargs):
    if dtype is None:
        from .autograd.graph import legacy_type_name

        return legacy_type_name(self._data)
    return _to(self, dtype)


def _contiguous(self: Tensor, memory_format=None) -> Tensor:
    if self._data.flags.c_contiguous:
        return self
    result = views.Clone.apply(self)
    result._data = np.ascontiguousarray(result._data)  # Clone keeps strides (preserve_format)
    return result


def _size_args(self, args):
    return views._shape_args(args)


METHODS = {
    # arithmetic
    "add": math.add, "sub": math.sub, "subtract": math.sub, "mul": math.mul,
    "multiply": math.mul, "div": math.div, "divide": math.div, "true_divide": math.div,
    "floor_divide": math.floor_divide, "remainder": math.remainder, "pow": math.pow,
    "neg": math.neg, "negative": math.neg, "exp": math.exp, "log": math.log, "log1p": math.log1p,
    "sqrt": math.sqrt, "rsqrt": math.rsqrt, "reciprocal": math.reciprocal, "abs": math.abs,
    "absolute": math.abs, "sign": math.sign, "sgn": math.sign, "sin": math.sin, "cos": math.cos,
    "tanh": math.tanh, "sigmoid": math.sigmoid, "relu": math.relu, "relu_": math.relu_,
    "erf": math.erf, "square": math.square, "clamp": math.clamp, "clip": math.clamp,
    "clamp_": math.clamp_, "clip_": math.clip_, "rsub": math.rsub, "fix": math.fix,
    "clamp_min": math.clamp_min, "clamp_max": math.clamp_max,
    "maximum": math.maximum, "minimum": math.minimum, "masked_fill": math.masked_fill,
    "masked_fill_": math.masked_fill_, "where": lambda self, cond, other: math.where(
        cond, self, other),
    "floor": math.floor, "ceil": math.ceil, "round": math.round, "trunc": math.trunc,
    "add_": math.add_, "sub_": math.sub_, "mul_": math.mul_, "div_": math.div_,
    # comparison
    "eq": math.eq, "ne": math.ne, "lt": math.lt, "le": math.le, "gt": math.gt, "ge": math.ge,
    "logical_and": math.logical_and, "logical_or": math.logical_or,
    "logical_not": math.logical_not, "logical_xor": math.logical_xor, "isnan": math.isnan,
    "isinf": math.isinf, "isfinite": math.isfinite, "equal": math.equal,
    "allclose": math.allclose, "isclose": math.isclose,
    # reductions
    "sum": reduce.sum, "mean": reduce.mean, "sum_to_size": reduce.sum_to_size,
    "prod": reduce.prod, "var": reduce.var, "std": reduce.std, "max": reduce.max,
    "min": reduce.min, "amax": reduce.amax, "amin": reduce.amin, "argmax": reduce.argmax,
    "argmin": reduce.argmin, "logsumexp": reduce.logsumexp, "softmax": reduce.softmax,
    "log_softmax": reduce.log_softmax, "cumsum": reduce.cumsum, "any": reduce.any,
    "all": reduce.all, "norm": linalg.norm,
    # linear algebra
    "matmul": linalg.matmul, "mm": linalg.mm, "bmm": linalg.bmm, "mv": linalg.mv,
    "dot": linalg.dot,
    # shape
    "reshape": views.reshape, "view": views.view, "squeeze": views.squeeze,
    "unsqueeze": views.unsqueeze, "transpose": views.transpose, "swapaxes": views.transpose,
    "swapdims": views.transpose, "permute": views.permute, "movedim": views.movedim,
    "moveaxis": views.moveaxis, "expand": views.expand, "t": views.t,
    "flatten": views.flatten, "unflatten": views.unflatten, "narrow": views.narrow,
    "select": views.select, "split": views.split, "chunk": views.chunk, "unbind": views.unbind,
    "unsafe_view": views.UnsafeView.apply, "view_as": views.view_as,
    "reshape_as": views.reshape_as, "expand_as": views.expand_as,
    "repeat": shape.repeat, "flip": shape.flip, "roll": shape.roll,
    "gather": shape.gather, "take_along_dim": shape.take_along_dim,
    "scatter_add": shape.scatter_add, "scatter_add_": shape.scatter_add_,
    "scatter": shape.scatter, "scatter_": shape.scatter_, "index_select": shape.index_select,
    "index_add": shape.index_add, "index_add_": shape.index_add_,
    "clone": lambda self, memory_format=None: views.Clone.apply(self),
    "contiguous": _contiguous,
    "copy_": indexing.copy_, "fill_": indexing.fill_, "zero_": indexing.zero_,
    "index_put_": indexing.index_put_, "index_put": indexing.index_put,
    # types
    "to": _to, "type": _type, "float": _caster(_dtype.float32), "double": _caster(_dtype.float64),
    "half": _caster(_dtype.float16), "long": _caster(_dtype.int64), "int": _caster(_dtype.int32),
    "bool": _caster(_dtype.bool_), "type_as": lambda self, other: _to(self, other.dtype),
    "new_zeros": lambda self, *size, dtype=None, **kw: creation.zeros(
        *size, dtype=dtype or self.dtype),
    "new_ones": lambda self, *size, dtype=None, **kw: creation.ones(
        *size, dtype=dtype or self.dtype),
    "new_full": lambda self, size, value, dtype=None, **kw: creation.full(
        size, value, dtype=dtype or self.dtype),
    "new_empty": lambda self, *size, dtype=None, **kw: creation.empty(
        *size, dtype=dtype or self.dtype),
    "new_tensor": lambda self, data, dtype=None, **kw: creation.tensor(
        data, dtype=dtype or self.dtype),
    # operators
    "__add__": math.add, "__radd__": math.radd, "__iadd__": math.add_,
    "__sub__": math.sub, "__rsub__": math.rsub_operator, "__isub__": math.sub_,
    "__mul__": math.mul, "__rmul__": math.rmul, "__imul__": math.mul_,
    "__truediv__": math.div, "__rtruediv__": math.rtruediv, "__itruediv__": math.div_,
    "__floordiv__": math.floor_divide, "__rfloordiv__": math.rfloordiv,
    "__mod__": math.remainder, "__rmod__": math.rmod,
    "__pow__": math.pow, "__rpow__": math.rpow,
    "__matmul__": linalg.matmul, "__rmatmul__": _reflect(linalg.matmul),
    "__neg__": math.neg, "__pos__": lambda self: self, "__abs__": math.abs,
    "__eq__": math.eq, "__ne__": math.ne, "__lt__": math.lt, "__le__": math.le,
    "__gt__": math.gt, "__ge__": math.ge,
    "__and__": math.bitwise_and, "__or__": math.bitwise_or, "__xor__": math.bitwise_xor,
    "__rand__": _reflect(math.bitwise_and), "__ror__": _reflect(math.bitwise_or),
    "__rxor__": _reflect(math.bitwise_xor),
    "__invert__": math.bitwise_not,
    "__getitem__": indexing.getitem, "__setitem__": indexing.setitem,
}

PROPERTIES = {
    "T": views.numpy_T, "mT": views.matrix_T,
    "real": lambda self: self,
}


def install(methods: dict, properties: dict = None) -> None:
    """Bind functions as Tensor methods. Op modules added later call this with their own table."""
    for name, fn in methods.items():
        setattr(Tensor, name, fn)
    for name, fn in (properties or {}).items():
        setattr(Tensor, name, property(fn))


install(METHODS, PROPERTIES)

from .ops import extra_methods  # noqa: E402  (sorting, structure, extra math, in-place unary)

install(extra_methods.METHODS)
