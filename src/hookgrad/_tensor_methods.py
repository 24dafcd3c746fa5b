"""The one table that gives Tensor its methods, operators and computed properties.

``tensor.py`` holds only state; everything that computes (the ops), records history (``grad_fn``)
or registers hooks is bound here, by name, from the module that implements it.
"""
from __future__ import annotations

import numbers

import numpy as np

from . import _device, _dtype, _introspection
from . import _memory_format as mf
from .autograd import engine, tensor_hooks
from .autograd import views as autograd_views
from .ops import (_base, _untracked, activation, alias, creation, gather_scatter, indexing, join,
                  linalg, reduce, shape, views)
from .ops import activation_extra as A
from .ops import clone as copy_ops
from .ops import pointwise_binary as B
from .ops import diagonal as D
from .ops import strided
from .ops import creation_extra, strided_scatter
from .ops import pointwise_unary as X
from .ops import inplace as I
from .ops import inplace_extra as IX
from .ops import (bessel_erfinv, histogram, igamma, linalg_det, linalg_fused, put, real_only,
                  storage_methods, transposes, unfold)
from .ops import linalg_decomp, linalg_lu, linalg_norms, linalg_pinv, linalg_solve
from .ops import index_reduce, linalg_householder, view_copies
from .ops import (pointwise_more, products, scatter_more, scatter_reduce, shape_more, special,
                  statistics)
from .ops import masked as K
from .ops import comparison as cmp
from .ops import pointwise as pw
from .ops import random as R
from .ops import scans as C
from .ops import searching as Q
from .ops import sorting as S
from .ops import structure as T
from .ops.arithmetic import Add, Div, Mul, Sub
from .ops._args import AXIS_NAMES, accept_axis
from .overrides import wrap as _visible_to_modes
from .tensor import Tensor

# bound plainly: construction and the tensor's own autograd plumbing are not torch-level calls
_NOT_INTERCEPTED = frozenset({"__init__", "_grad_accumulator", "_ensure_hooks_attached"})
# torch hands a mode these operators under the name of the method they call (x + 1 is "add")
_MODE_NAMES = {
    "__add__": "add", "__radd__": "add", "__mul__": "mul", "__rmul__": "mul", "__sub__": "sub",
    "__truediv__": "div", "__rtruediv__": "__rdiv__", "__matmul__": "matmul", "__neg__": "neg",
    "__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge", "__ne__": "ne",
    "__pow__": "pow", "__mod__": "remainder", "__abs__": "abs", "__pos__": "positive",
    "__iadd__": "add_", "__imul__": "mul_", "__isub__": "sub_", "__itruediv__": "div_",
    "__rand__": "bitwise_and", "__ror__": "bitwise_or", "__rxor__": "bitwise_xor",
}


def _doc(text: str, fn):
    """``fn`` with the one-line docstring ``text``: how a table entry that is a lambda carries its
    documentation."""
    fn.__doc__ = text
    return fn


def _reflect(fn):
    return lambda self, other: fn(other, self)


def _to(self: Tensor, *args, **kwargs) -> Tensor:
    """to(dtype), to(device), to(other), to(device, dtype); copies only when the dtype changes
    (or when ``memory_format`` asks for a layout this tensor does not have)."""
    dtype = kwargs.get("dtype")
    fmt = kwargs.get("memory_format")
    if (fmt is not None and not isinstance(fmt, mf.memory_format)) or any(
            isinstance(arg, mf.memory_format) for arg in args):  # a format only by keyword
        raise _to_error(args, kwargs)
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
    if fmt is mf.preserve_format:
        fmt = None
    if dtype is None or dtype.numpy == self._data.dtype:
        if fmt is not None and not copy:
            # torch copies when the format differs from the one it reads off the strides
            # (so a transposed tensor is "contiguous_format" and comes back as itself)
            array = self._data
            if fmt is mf.suggested(array.shape, tuple(s // array.itemsize
                                                      for s in array.strides)):
                return self
            return copy_ops.ToCopy.apply(self, array.dtype, fmt)
        return copy_ops.Clone.apply(self, fmt) if copy else self
    return copy_ops.ToCopy.apply(self, dtype.numpy, fmt)


def _arg_type(value) -> str:
    """How torch's argument errors name an argument's type."""
    if isinstance(value, (_dtype.dtype, mf.memory_format)):
        return f"torch.{type(value).__name__}"
    return "Tensor" if isinstance(value, Tensor) else type(value).__name__


def _to_error(args: tuple, kwargs: dict) -> TypeError:
    """torch's error for a ``to()`` call no overload takes (its argument list, then the
    overloads)."""
    got = ", ".join(_arg_type(a) for a in args)
    if kwargs:
        named = ", ".join(f"{k}={_arg_type(v)}" for k, v in kwargs.items())
        got = f"{got}, {named}, " if got else f"{named}, "
    return TypeError(f"to() received an invalid combination of arguments - got ({got}), but "
                     "expected one of: (device, dtype, non_blocking, copy, memory_format), "
                     "(dtype, non_blocking, copy, memory_format), (tensor, non_blocking, copy, "
                     "memory_format)")


def _caster(dtype):
    def cast(self: Tensor, *, memory_format=mf.preserve_format) -> Tensor:
        """``self.to(dtype)``: this tensor itself when it already has the dtype (and layout),
        else a copy."""
        return _to(self, dtype, memory_format=memory_format)

    return cast


def _type(self: Tensor, dtype=None, **kwargs):
    """With no dtype, torch's legacy type name (``'torch.FloatTensor'``); else ``to(dtype)``."""
    if dtype is None:
        return _dtype.legacy_type_name(self._data)
    return _to(self, dtype)


def _contiguous(self: Tensor, *, memory_format=mf.contiguous_format) -> Tensor:
    """This tensor when already laid out in ``memory_format`` (row-major by default), else a
    copy in that layout that stays in the graph (``CloneBackward0``)."""
    fmt = mf.check(memory_format, "contiguous", optional=False)
    mf.check_rank(self._data.ndim, fmt)
    if self.is_contiguous(memory_format=fmt):
        return self
    if fmt is mf.preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    return copy_ops.Clone.apply(self, fmt)


def _clone(self: Tensor, *, memory_format=mf.preserve_format) -> Tensor:
    """A copy that stays in the graph (gradients flow back to this tensor), laid out in
    ``memory_format`` (by default like this tensor when it is dense, else row-major)."""
    return copy_ops.Clone.apply(self, mf.check(memory_format, "clone"))


def _size_args(self, args):
    return views._shape_args(args)


def _init(self: Tensor, data=None, *, requires_grad: bool = False) -> None:
    """``Tensor(data)``: a tensor owning a copy of ``data``; ``Tensor()`` is empty."""
    array = np.zeros(0, _dtype.get_default_dtype().numpy) if data is None else \
        creation._to_array(data)
    self._init(array, requires_grad)


def _addmm(self: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * self + alpha * (mat1 @ mat2)`` (torch.addmm)."""
    from .nn.ops import aten  # the fused product lives with nn's linear
    return aten.addmm(self, mat1, mat2, beta=beta, alpha=alpha)


def _baddbmm(self: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * self + alpha * (batch1 @ batch2)`` per batch (torch.baddbmm)."""
    from .nn.ops import aten
    return aten.baddbmm(self, batch1, batch2, beta=beta, alpha=alpha)


def _addmm_(self: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """In place ``addmm``: the product must have self's shape."""
    from .nn.ops import aten
    return aten.addmm_(self, mat1, mat2, beta=beta, alpha=alpha)


def _baddbmm_(self: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """In place ``baddbmm``: the batched product must have self's shape."""
    from .nn.ops import aten
    return aten.baddbmm_(self, batch1, batch2, beta=beta, alpha=alpha)


METHODS = {
    # construction, autograd and hooks
    "__init__": _init, "backward": engine.tensor_backward,
    "register_hook": tensor_hooks.register_hook, "retain_grad": tensor_hooks.retain_grad,
    "register_post_accumulate_grad_hook": tensor_hooks.register_post_accumulate_grad_hook,
    "_grad_accumulator": tensor_hooks.grad_accumulator,
    "_ensure_hooks_attached": tensor_hooks.ensure_hooks_attached,
    # arithmetic
    "add": pw.add, "sub": pw.sub, "subtract": pw.sub, "mul": pw.mul,
    "multiply": pw.mul, "div": pw.div, "divide": pw.div, "true_divide": pw.div,
    "floor_divide": pw.floor_divide, "remainder": pw.remainder, "pow": pw.pow,
    "neg": pw.neg, "negative": pw.neg, "exp": pw.exp, "log": pw.log, "log1p": pw.log1p,
    "sqrt": pw.sqrt, "rsqrt": pw.rsqrt, "reciprocal": pw.reciprocal, "abs": pw.abs,
    "absolute": pw.abs, "sign": pw.sign, "sgn": pw.sgn, "sin": pw.sin, "cos": pw.cos,
    "tanh": pw.tanh, "sigmoid": pw.sigmoid, "relu": activation.relu, "relu_": activation.relu_,
    "erf": pw.erf, "square": pw.square, "clamp": pw.clamp, "clip": pw.clamp,
    "clamp_": pw.clamp_, "clip_": pw.clip_, "rsub": pw.rsub, "fix": pw.fix,
    "clamp_min": pw.clamp_min, "clamp_max": pw.clamp_max, "clamp_min_": pw.clamp_min_,
    "clamp_max_": pw.clamp_max_,
    "maximum": pw.maximum, "minimum": pw.minimum, "fmax": pw.fmax, "fmin": pw.fmin,
    "masked_fill": pw.masked_fill,
    "masked_fill_": pw.masked_fill_, "where": _doc(
        "``where(condition, self, other)``: this tensor where ``condition`` holds, else ``other``.",
        lambda self, cond, other: pw.where(cond, self, other)),
    "floor": pw.floor, "ceil": pw.ceil, "round": pw.round, "trunc": pw.trunc,
    "add_": pw.add_, "sub_": pw.sub_, "mul_": pw.mul_, "div_": pw.div_,
    # comparison
    "eq": cmp.eq, "ne": cmp.ne, "lt": cmp.lt, "le": cmp.le, "gt": cmp.gt, "ge": cmp.ge,
    "logical_and": cmp.logical_and, "logical_or": cmp.logical_or,
    "logical_not": cmp.logical_not, "logical_xor": cmp.logical_xor, "isnan": cmp.isnan,
    "isinf": cmp.isinf, "isfinite": cmp.isfinite, "equal": cmp.equal,
    "greater": cmp.gt, "greater_equal": cmp.ge, "less": cmp.lt, "less_equal": cmp.le,
    "not_equal": cmp.ne, "bitwise_and": cmp.bitwise_and, "bitwise_or": cmp.bitwise_or,
    "bitwise_xor": cmp.bitwise_xor, "bitwise_not": cmp.bitwise_not,
    "allclose": cmp.allclose, "isclose": cmp.isclose,
    # reductions
    "sum": reduce.sum, "mean": reduce.mean, "sum_to_size": reduce.sum_to_size,
    "prod": reduce.prod, "var": reduce.var, "std": reduce.std, "max": reduce.max,
    "min": reduce.min, "amax": reduce.amax, "amin": reduce.amin, "argmax": reduce.argmax,
    "argmin": reduce.argmin, "logsumexp": reduce.logsumexp, "softmax": reduce.softmax,
    "log_softmax": reduce.log_softmax, "cumsum": reduce.cumsum, "any": reduce.any,
    "all": reduce.all, "norm": linalg_norms.torch_norm,
    # linear algebra
    "matmul": linalg.matmul, "mm": linalg.mm, "bmm": linalg.bmm, "mv": linalg.mv,
    "dot": linalg.dot, "addmm": _addmm, "addmm_": _addmm_, "baddbmm": _baddbmm,
    "baddbmm_": _baddbmm_,
    # shape
    "reshape": views.reshape, "view": views.view, "squeeze": views.squeeze,
    "unsqueeze": views.unsqueeze, "transpose": views.transpose, "swapaxes": views.transpose,
    "swapdims": views.transpose, "permute": views.permute, "movedim": views.movedim,
    "moveaxis": views.moveaxis, "expand": views.expand, "t": views.t,
    "flatten": views.flatten, "unflatten": views.unflatten, "narrow": views.narrow,
    "select": views.select, "split": join.split, "chunk": join.chunk, "unbind": join.unbind,
    "unsafe_view": views.UnsafeView.apply, "view_as": views.view_as,
    "as_subclass": alias.as_subclass,
    "reshape_as": views.reshape_as, "expand_as": views.expand_as,
    "repeat": shape.repeat, "flip": shape.flip, "roll": shape.roll,
    "gather": gather_scatter.gather, "take_along_dim": gather_scatter.take_along_dim,
    "scatter_add": gather_scatter.scatter_add, "scatter_add_": gather_scatter.scatter_add_,
    "scatter": gather_scatter.scatter, "scatter_": gather_scatter.scatter_,
    "index_select": gather_scatter.index_select, "index_add": gather_scatter.index_add,
    "index_add_": gather_scatter.index_add_,
    "clone": _clone,
    "contiguous": _contiguous,
    "copy_": copy_ops.copy_, "fill_": copy_ops.fill_, "zero_": copy_ops.zero_,
    "index_put_": indexing.index_put_, "index_put": indexing.index_put,
    # types
    "to": _to, "type": _type, "float": _caster(_dtype.float32), "double": _caster(_dtype.float64),
    "half": _caster(_dtype.float16),
    "bfloat16": _caster(_dtype.bfloat16), "long": _caster(_dtype.int64),
    "int": _caster(_dtype.int32),
    "bool": _caster(_dtype.bool_), "short": _caster(_dtype.int16),
    "byte": _caster(_dtype.uint8), "char": _caster(_dtype.int8),
    "is_complex": _doc("False: hookgrad has no complex dtypes.", lambda self: False),
    "is_signed": _doc("True for dtypes that hold negative values (all but uint8 and bool).",
                      lambda self: self._data.dtype.kind in "fiV"),
    "is_same_size": _doc("True when ``other`` has this tensor's shape.",
                         lambda self, other: self._data.shape == other._data.shape),
    "type_as": _doc(
        "``to(other.dtype)``.", lambda self, other: _to(self, other.dtype)),
    "new_zeros": _doc("Zeros of ``size``, with this tensor's dtype unless given.",
                      lambda self, *size, dtype=None, **kw: creation.zeros(
                          *size, dtype=dtype or self.dtype)),
    "new_ones": _doc("Ones of ``size``, with this tensor's dtype unless given.",
                     lambda self, *size, dtype=None, **kw: creation.ones(
                         *size, dtype=dtype or self.dtype)),
    "new_full": _doc("``size`` filled with ``value``, with this tensor's dtype unless given.",
                     lambda self, size, value, dtype=None, **kw: creation.full(
                         size, value, dtype=dtype or self.dtype)),
    "new_empty": _doc("A tensor of ``size`` with this tensor's dtype unless given (zero-filled).",
                      lambda self, *size, dtype=None, **kw: creation.empty(
                          *size, dtype=dtype or self.dtype)),
    "new_tensor": _doc("A new tensor copying ``data``, with this tensor's dtype unless given.",
                       lambda self, data, dtype=None, **kw: creation.tensor(
                           data, dtype=dtype or self.dtype)),
    # operators
    "__add__": pw.add, "__radd__": pw.radd, "__iadd__": pw.add_,
    "__sub__": pw.sub, "__rsub__": pw.rsub_operator, "__isub__": pw.sub_,
    "__mul__": pw.mul, "__rmul__": pw.rmul, "__imul__": pw.mul_,
    "__truediv__": pw.div, "__rtruediv__": pw.rtruediv, "__itruediv__": pw.div_,
    "__floordiv__": pw.floor_divide, "__rfloordiv__": pw.rfloordiv,
    "__mod__": pw.remainder, "__rmod__": pw.rmod,
    "__pow__": pw.pow, "__rpow__": pw.rpow,
    "__matmul__": linalg.matmul, "__rmatmul__": _reflect(linalg.matmul),
    "__neg__": pw.neg, "__pos__": X.positive, "__abs__": pw.abs,
    "__eq__": cmp.eq, "__ne__": cmp.ne, "__lt__": cmp.lt, "__le__": cmp.le,
    "__gt__": cmp.gt, "__ge__": cmp.ge,
    "__and__": cmp.bitwise_and, "__or__": cmp.bitwise_or, "__xor__": cmp.bitwise_xor,
    "__rand__": _reflect(cmp.bitwise_and), "__ror__": _reflect(cmp.bitwise_or),
    "__rxor__": _reflect(cmp.bitwise_xor),
    "__invert__": cmp.bitwise_not,
    "__getitem__": indexing.getitem, "__setitem__": indexing.setitem,
}

PROPERTIES = {
    "grad_fn": autograd_views.grad_fn,
    "device": _doc("Always ``device('cpu')``: hookgrad has no other device.",
                   lambda self: _device.device("cpu")),
    "T": transposes.numpy_T, "mT": transposes.matrix_T, "H": transposes.H, "mH": transposes.mH,
    "real": _doc("The tensor itself: hookgrad has no complex dtypes, so every tensor is real.",
                 lambda self: self),
    **real_only.PROPERTIES,
}


def _inplace_binary(cls, name: str):
    def op(self, other):
        other = _base.as_operand(other, name)
        if not isinstance(other, Tensor):
            raise TypeError(f"{name}(): argument 'other' (position 1) must be Tensor, not "
                            f"{type(other).__name__}")
        return I.inplace(cls, self, other, _base.promote(self, other), None)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"In place ``{name[:-1]}`` with ``other`` broadcast to this tensor's shape."
    return op


MORE_METHODS = {
    # sorting and searching
    "sort": S.sort, "argsort": S.argsort, "msort": S.msort, "topk": S.topk,
    "kthvalue": S.kthvalue, "median": S.median, "nanmedian": S.nanmedian, "mode": S.mode,
    "unique": Q.unique, "unique_consecutive": Q.unique_consecutive, "nonzero": Q.nonzero,
    "argwhere": Q.argwhere, "count_nonzero": Q.count_nonzero, "bincount": Q.bincount,
    # structure
    "tril": D.tril, "triu": D.triu, "tril_": D.tril_, "triu_": D.triu_, "diag": D.diag,
    "diagonal": D.diagonal, "as_strided": strided.as_strided, "diag_embed": D.diag_embed,
    "as_strided_scatter": strided_scatter.as_strided_scatter,
    "slice_inverse": strided_scatter.slice_inverse,
    "is_distributed": _introspection.tensor_is_distributed,
    "__dlpack__": creation_extra.tensor_dlpack,
    "__dlpack_device__": creation_extra.tensor_dlpack_device,
    "diagflat": D.diagflat,
    "trace": D.trace, "fill_diagonal_": D.fill_diagonal_, "outer": T.outer, "ger": T.ger,
    "kron": T.kron, "cross": T.cross, "tensor_split": T.tensor_split,
    "repeat_interleave": T.repeat_interleave, "tile": T.tile, "rot90": T.rot90,
    "broadcast_to": T.broadcast_to, "ravel": T.ravel, "take": T.take,
    # math
    "log2": X.log2, "log10": X.log10, "exp2": X.exp2, "expm1": X.expm1, "tan": X.tan,
    "asin": X.asin, "acos": X.acos, "atan": X.atan, "arcsin": X.asin, "arccos": X.acos,
    "arctan": X.atan, "sinh": X.sinh, "cosh": X.cosh, "asinh": X.asinh, "acosh": X.acosh,
    "atanh": X.atanh, "arcsinh": X.asinh, "arccosh": X.acosh, "arctanh": X.atanh,
    "sinc": X.sinc, "frac": X.frac, "deg2rad": X.deg2rad, "rad2deg": X.rad2deg,
    "logit": X.logit, "nan_to_num": X.nan_to_num, "positive": X.positive,
    "atan2": B.atan2, "arctan2": B.atan2, "hypot": B.hypot, "logaddexp": B.logaddexp,
    "copysign": B.copysign, "fmod": B.fmod, "xlogy": B.xlogy, "lerp": B.lerp,
    "addcmul": B.addcmul, "addcdiv": B.addcdiv, "hardshrink": A.hardshrink,
    # scans and fused reductions
    "cumprod": C.cumprod, "cummax": C.cummax, "cummin": C.cummin,
    "logcumsumexp": C.logcumsumexp, "diff": C.diff, "aminmax": C.aminmax, "nansum": C.nansum,
    "nanmean": C.nanmean,
    # masked and indexed updates
    "masked_select": K.masked_select, "masked_scatter": K.masked_scatter,
    "masked_scatter_": K.masked_scatter_, "index_fill": K.index_fill,
    "index_fill_": K.index_fill_,
    # in place
    **I.METHODS,
    **IX.METHODS,
    **pointwise_more.METHODS, **products.METHODS, **scatter_more.METHODS,
    **scatter_reduce.METHODS, **index_reduce.METHODS, **shape_more.METHODS,
    **statistics.METHODS, **special.METHODS, **linalg_fused.METHODS, **bessel_erfinv.METHODS,
    **igamma.METHODS, **unfold.METHODS, **linalg_det.METHODS, **view_copies.METHODS,
    **linalg_decomp.METHODS, **linalg_norms.METHODS, **linalg_solve.METHODS,
    **linalg_lu.METHODS, **linalg_pinv.METHODS, **linalg_householder.METHODS,
    **R.METHODS, **real_only.METHODS, **put.METHODS, **histogram.METHODS,
    **storage_methods.METHODS,
    "split_with_sizes": join.split_with_sizes, "unsafe_split": join.unsafe_split,
    "unsafe_split_with_sizes": join.unsafe_split_with_sizes, "unsafe_chunk": join.unsafe_chunk,
    "bitwise_left_shift": cmp.bitwise_left_shift, "bitwise_right_shift": cmp.bitwise_right_shift,
    "__lshift__": cmp.bitwise_left_shift, "__rlshift__": _reflect(cmp.bitwise_left_shift),
    "__rshift__": cmp.bitwise_right_shift, "__rrshift__": _reflect(cmp.bitwise_right_shift),
    "__ilshift__": IX.METHODS["bitwise_left_shift_"],
    "__irshift__": IX.METHODS["bitwise_right_shift_"],
    "__iand__": IX.METHODS["bitwise_and_"], "__ior__": IX.METHODS["bitwise_or_"],
    "__ixor__": IX.METHODS["bitwise_xor_"],
    "atan2_": _inplace_binary(B.Atan2, "atan2_"), "arctan2_": _inplace_binary(B.Atan2, "atan2_"),
    "hypot_": _inplace_binary(B.Hypot, "hypot_"),
}


def install(methods: dict, properties: dict = None) -> None:
    """Bind functions as Tensor methods and properties; those with a ``dim`` argument also take
    NumPy's ``axis=`` (``x.sum(axis=1)``), as torch's argument parser allows. Each method is
    also visible to an active ``TorchFunctionMode`` (one list test per call when none is)."""
    for name, fn in methods.items():
        if name in AXIS_NAMES:
            fn = accept_axis(fn)
        setattr(Tensor, name, fn if name in _NOT_INTERCEPTED else _visible_to_modes(
            fn, _MODE_NAMES.get(name, name), "Tensor"))
    for name, fn in (properties or {}).items():
        setattr(Tensor, name, property(fn))


install({**METHODS, **MORE_METHODS}, PROPERTIES)

# Python's protocol for binary operators: an operand of a type the operator does not take gets
# NotImplemented, so Python tries the other operand's reflected method (a user class's
# ``__radd__``) and otherwise raises its own "unsupported operand" error, as torch's operators do
_OPERANDS = (Tensor, numbers.Number, np.generic, np.ndarray)
_COMPARISONS = ("__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__")
_BINARY_OPERATORS = (
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
    "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__", "__rpow__",
    "__matmul__", "__rmatmul__", "__and__", "__rand__", "__or__", "__ror__", "__xor__",
    "__rxor__", "__iadd__", "__isub__", "__imul__", "__itruediv__") + _COMPARISONS


def _python_operator(name: str, fn):
    """``fn`` answering NotImplemented for an operand it does not take (see above)."""
    if name in _COMPARISONS:  # these accept anything else quietly: check first
        def operator(self, other):
            if not isinstance(other, _OPERANDS):
                return NotImplemented
            return fn(self, other)
    else:
        reciprocal_first = name == "__rtruediv__"  # torch's is self.reciprocal() * other

        def operator(self, other):
            try:
                return fn(self, other)
            except TypeError:
                if isinstance(other, _OPERANDS):
                    raise
                if reciprocal_first:
                    self.reciprocal()  # recorded (and its saved tensor packed) before it fails
                return NotImplemented
    operator.__name__, operator.__qualname__ = name, f"Tensor.{name}"
    operator.__doc__ = fn.__doc__
    return operator


for _name in _BINARY_OPERATORS:
    setattr(Tensor, _name, _python_operator(_name, getattr(Tensor, _name)))

# the arithmetic operators, with a direct lane in front for unrecorded float math (backward
# formulas under create_graph=False, no_grad code): see ops/_untracked.py
for _name, _ufunc, _reflected_order, _op, _extra in (
        ("__add__", np.add, False, Add, (1,)), ("__radd__", np.add, False, Add, (1,)),
        ("__sub__", np.subtract, False, Sub, (1,)), ("__rsub__", np.subtract, True, None, ()),
        ("__mul__", np.multiply, False, Mul, ()), ("__rmul__", np.multiply, False, Mul, ()),
        ("__truediv__", np.true_divide, False, Div, ())):
    setattr(Tensor, _name, _untracked.binary(_ufunc, getattr(Tensor, _name), _reflected_order,
                                             _op, _extra))
Tensor.__neg__ = _untracked.negative(Tensor.__neg__)
del _name, _ufunc, _reflected_order, _op, _extra
