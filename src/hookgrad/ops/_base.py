"""What every built-in op shares: the public ``Op`` base class and the numeric helpers.

Operands are promoted as torch promotes them. A Python or NumPy number is torch's "wrapped
number": it takes an edge in ``next_functions`` (as in torch, where ``(x * 2).grad_fn`` has two;
``Function._wrapped_scalars`` gives a number argument its edge) but is never saved, so pack hooks
do not see it. It reaches ``forward`` as the Python number and is cast there. Float16 is computed
in float32 and rounded once, like torch's CPU kernels. NumPy's floating-point warnings are off
while an op computes (``_util.quiet_errors``): torch gives inf and NaN without a word.
"""
from __future__ import annotations

import sys

import numpy as np

from .. import _dtype
from .._warnings import warn
from ..autograd import grad_mode
from ..autograd.builtin import BuiltinFunction
from ..autograd.node import REFCOUNTS_EXACT, tasks as _tasks
from ..autograd.views import check_inplace
from ..tensor import Tensor, check_overlap, has_internal_overlap  # noqa: F401
from . import _layout
from ._util import broadcast_error, check_number_fits, quiet_errors


class Op(BuiltinFunction):
    """The base of every built-in op: a Function whose ``forward(ctx, ...)`` computes on NumPy
    arrays (non-tensor arguments stay Python values) and whose ``backward(ctx, *grads)`` is
    written with Tensor ops, so double backward comes free. Subclasses set ``node_name`` (torch's
    node name), ``saved_names`` (torch's names of what ``ctx.save_for_backward`` keeps) and, for
    view and in-place ops, ``_view_of`` / ``_inplace``.

    ``array_formula = True`` (set in the class itself) says that ``backward`` uses only the
    arithmetic operators (``+ - * /``, unary ``-``) on the gradient, the saved tensors and
    Python numbers, so the same formula also reads right on NumPy arrays: when no graph of the
    backward is recorded it then runs there (``formula_on_arrays``), without a Tensor per
    intermediate."""

    array_formula = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("array_formula"):
            cls._backward_cls._array_runner = formula_on_arrays


_ARRAY_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def formula_on_arrays(node, grad_outputs: tuple):
    """Run an ``array_formula`` op's backward on arrays, or return None where that would not
    give exactly what the Tensor formula gives: one incoming gradient, a plain row-major
    float32/float64 tensor, and saved tensors of its shape, dtype and layout, kept without
    hooks (``SavedTensor.plain_like``; checked before anything is unpacked, so an unpack hook
    never runs twice). Within that, NumPy's elementwise results with Python numbers have the
    dtype and layout torch's have (NumPy 2 casts a number to the array's dtype), so the values
    are those of the Tensor lane (``_untracked.py``), computed without a Tensor in between."""
    if len(grad_outputs) != 1 or not _NUMBERS_CAST:
        return None
    grad = grad_outputs[0]
    if type(grad) is not Tensor:
        return None
    array = grad._data
    dtype = array.dtype
    if dtype not in _ARRAY_DTYPES or not array.flags.c_contiguous:
        return None
    shape = array.shape
    for saved in node._saved:
        if saved is not None and not saved.plain_like(shape, dtype):
            return None
    node._on_arrays = True
    token = quiet_errors.enter()
    try:
        grads = node._forward_cls.backward(node, array)
    finally:
        quiet_errors.exit(token)
        node._on_arrays = False
    if type(grads) is not tuple:
        grads = (grads,)
    results = []
    for value in grads:
        if value is None or value is array:
            results.append(grad if value is array else None)
            continue
        if type(value) is not np.ndarray:  # NumPy gives scalars for 0-dim results
            value = np.asarray(value)
        if value.dtype is not dtype or value.shape != shape:
            return None  # not what the Tensor formula would give: let it run
        results.append(Tensor._make(value))
    return tuple(results)


# NumPy 1 may promote by a number's value (float32 * 1e40 gives float64): the lane is off there
_NUMBERS_CAST = int(np.__version__.split(".")[0]) >= 2


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


def tensor_operand(value, op_name: str, position: int = 2, name: str = "other") -> Tensor:
    """An argument torch takes only as a Tensor (logical_and's, gcd's, isclose's ``other``...):
    a Python number raises torch's TypeError; a NumPy array becomes a tensor."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, np.ndarray):
        return as_operand(value, op_name, position)
    raise TypeError(f"{op_name}(): argument '{name}' (position {position}) must be Tensor, not "
                    f"{type(value).__name__}")


_FLOAT16 = np.dtype(np.float16)
_FLOAT32 = np.dtype(np.float32)
_FLOAT64 = np.dtype(np.float64)
# the 16-bit floats torch computes in float32 (bfloat16 only when ml_dtypes is installed)
HALF_TYPES = tuple(d for d in (_FLOAT16, _dtype.BFLOAT16_NUMPY) if d is not None)


# np.clip's own ufunc: np.clip reaches it through three Python wrappers (~2.5 us a call, as
# much as the clipping of a small activation); where NumPy does not expose it, np.clip
try:
    from numpy._core.umath import clip as clip_ufunc
except ImportError:  # pragma: no cover - other NumPy layouts
    clip_ufunc = np.clip


def work_dtype(dtype: np.dtype) -> np.dtype:
    """Half precision (float16, bfloat16) is computed in float32 and rounded once at the end
    (torch's opmath)."""
    if dtype is _FLOAT32 or dtype is _FLOAT64:  # the common dtypes, without comparisons
        return dtype
    return _FLOAT32 if dtype in HALF_TYPES else dtype


def cast(value, dtype: np.dtype) -> np.ndarray:
    """``value`` as an array of ``dtype``; numbers wrap around on overflow, as torch casts."""
    if isinstance(value, np.ndarray):
        if value.dtype == dtype:
            return value
        with quiet_errors():
            return _dtype.astype(value, dtype)
    with quiet_errors():
        if dtype.kind in "fV":
            if dtype == np.float16:  # Python floats are doubles: round as torch does
                return _dtype.astype(np.asarray(value), dtype)
            return np.asarray(value, dtype)
        return np.asarray(value).astype(dtype)


def finish(result, dtype: np.dtype) -> np.ndarray:
    """A fresh ndarray of ``dtype`` (NumPy gives scalars for 0-dim results)."""
    if type(result) is not np.ndarray:
        result = np.asarray(result)
    if result.dtype == dtype:
        return result
    with quiet_errors():
        return _dtype.astype(result, dtype)


def compute(op_name: str, fn, a, b):
    with quiet_errors():
        try:
            return fn(a, b)
        except ValueError:
            raise broadcast_error(op_name, np.shape(a), np.shape(b)) from None


def to_work(value, work: np.dtype) -> np.ndarray:
    """``cast`` for callers already inside a quiet section (``_util.quiet_errors``)."""
    if isinstance(value, np.ndarray):
        return value if value.dtype == work else value.astype(work)
    return np.asarray(value, work) if work.kind in "fV" else np.asarray(value).astype(work)


def arithmetic(op_name: str, fn, a: np.ndarray, b, dtype: np.dtype,
               inplace: bool = False, unary: bool = False) -> np.ndarray:
    """``fn(a, b)`` for an array ``a`` and an array or number ``b``, computed in ``dtype``'s
    work dtype and returned as a fresh array of ``dtype``: the cast, the ufunc and the rounding
    share one quiet section. ``inplace`` (the ufunc ``fn`` of add_, mul_ ...): when ``a``
    already has the work dtype and the result dtype, the result is written straight into ``a``
    (NumPy computes as if an overlapping ``b`` were copied first) and ``a`` is returned.
    ``unary``: a number ``b`` is a parameter of a unary op in torch (``pow(x, 2)``), not an
    operand, so the result is laid out over ``a`` alone."""
    work = work_dtype(dtype)
    token = quiet_errors.enter()  # the with-statement's halves, inline: see quiet_errors
    try:
        if inplace and a.dtype == dtype and work is dtype:
            b = to_work(b, work)
            if b.shape != a.shape and b.ndim:
                _check_inplace_shape(a.shape, b.shape, op_name)
            return fn(a, b, out=a)
        first, second = a, b
        if a.dtype is not work and a.dtype != work:
            a = a.astype(work)
        if type(b) is not float or type(fn) is not np.ufunc or not _NUMBERS_CAST or (
                work is not _FLOAT32 and work is not _FLOAT64):
            b = to_work(b, work)  # (a NumPy 2 ufunc casts a Python float to a's dtype itself)
        try:
            result = fn(a, b)
        except ValueError:
            raise broadcast_error(op_name, a.shape, np.shape(b)) from None
        if type(result) is not np.ndarray:
            result = np.asarray(result)
        if result.dtype is not dtype and result.dtype != dtype:
            result = result.astype(dtype)
        if first.flags.c_contiguous and type(second) is np.ndarray and \
                second.flags.c_contiguous and first.shape == second.shape == result.shape:
            return result  # (broadcasting ranks size-1 dimensions' strides: the full rule)
        if unary:
            return _layout.pointwise(result, first, common=dtype)
        return _layout.pointwise(result, first, second, common=dtype)  # torch's, not NumPy's
    finally:
        quiet_errors.exit(token)


def promote(a, b) -> np.dtype:
    """The NumPy dtype of ``torch.result_type(a, b)``; the common cases skip the full rule."""
    if isinstance(a, Tensor):
        dtype = a._data.dtype
        if isinstance(b, Tensor) and b._data.dtype == dtype:
            return dtype
        if dtype.kind in "fV" and type(b) in (float, int):
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
    if (kind is float or kind is int) and a._data.dtype.kind in "fV":
        return cls.apply(a, b, a._data.dtype, b, *extra)
    b = as_operand(b, op_name)
    dtype = promote(a, b)
    if isinstance(b, Tensor):
        return cls.apply(a, b, dtype, None, *extra)
    if type(b) is int and not _INT_MIN <= b < _UINT_END and dtype.kind not in "fV":
        cast(b, dtype)  # an int beyond int64 fails here, before any check of the op (as in torch)
    return cls.apply(a, b, dtype, b, *extra)


_INT_MIN, _UINT_END = -2 ** 63, 2 ** 64  # Python ints NumPy turns into int64 or uint64


def _pair(a: np.ndarray, b, dtype: np.dtype):
    work = work_dtype(dtype)
    return cast(a, work), cast(b, work)


def _check_alpha(alpha, dtype: np.dtype) -> None:
    if type(alpha) is int:  # the default alpha=1, and any int that fits, is fine for every dtype
        if alpha != 1:
            check_number_fits(alpha, dtype)
        return
    if isinstance(alpha, (bool, np.bool_)) and dtype != np.bool_:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if dtype.kind in "iub" and isinstance(alpha, (float, np.floating)):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    check_number_fits(alpha, dtype)


def _scaled(other: np.ndarray, alpha, work: np.dtype) -> np.ndarray:
    if alpha == 1:
        return other
    with quiet_errors():
        return other * cast(alpha, work)


# ---------------------------------------------------------------------------------------------
# In-place checks
# ---------------------------------------------------------------------------------------------
def _check_writable(array: np.ndarray) -> None:
    if not array.flags.writeable or has_internal_overlap(array):
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor "
                           "refers to a single memory location. Please clone() the tensor before "
                           "performing the operation.")


def warn_expanded_write(array: np.ndarray, op_name: str, example: str) -> None:
    """The indexing writes torch still lets through on a self that reaches one element twice
    (``index_fill_``, ``masked_fill_``, ``index_put_``) do so with a deprecation warning."""
    if has_internal_overlap(array):
        warn(f"Use of {op_name} on expanded tensors is deprecated. Please clone() the tensor "
             f"before performing this operation. This also applies to advanced indexing e.g. "
             f"{example}", UserWarning)


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


class Original:
    """The old ``self`` of an in-place op whose derivative needs it (mul_, div_, clamp_).

    torch saves ``self.clone()`` taken before the update, with its CloneBackward0 history, so
    double backward reaches self's past. A forward sees arrays only, so the caller clones and
    passes this holder (not a tensor: it takes no edge); forward saves the clone it holds."""

    __slots__ = ("clone",)

    def __init__(self, tensor: Tensor = None):
        if tensor is not None and tensor._base is not None:
            # torch checks the target before its kernel clones it; cloning a view first would
            # rebuild the view's grad_fn and hide a refusal (a view made before its base
            # gained a history is still a leaf to torch until something asks for its grad_fn)
            check_inplace(tensor)
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


class SavedLink(Op):
    """``grad`` unchanged, with an edge to each saved tensor its pattern was read from (max
    pooling's, whose formula ``*_backward(grad, self, indices)`` reads ``self``).

    Its derivative with respect to those tensors is torch's ``zeros_like``: a fresh zero that
    reads nothing, so it never requires grad, even when the gradient arriving here does."""

    node_name = "SavedLinkBackward0"

    @staticmethod
    def forward(ctx, grad, *saved):
        ctx.saved_layouts = tuple((array.shape, array.dtype) for array in saved)
        return grad.copy()  # an output of its own: an in-place op on it leaves grad alone

    @staticmethod
    def backward(ctx, grad):
        zeros = (Tensor._make(np.zeros(shape, dtype)) for shape, dtype in ctx.saved_layouts)
        return (grad, *zeros)


def through_saved(grad: Tensor, *saved: Tensor) -> Tensor:
    """The incoming ``grad`` of a formula that reads saved tensors, made to depend on them
    while a graph of the gradient is recorded (first-order backward pays nothing)."""
    if not grad_mode._state.enabled:
        return grad
    linked = [tensor for tensor in saved if tensor.requires_grad]
    return SavedLink.apply(grad, *linked) if linked else grad


def laid_out_like(result: Tensor, source: Tensor) -> Tensor:
    """``result`` in the layout of torch's ``empty_like(source)``, for a backward kernel that
    allocates its output that way from the incoming gradient (``log_sigmoid_backward``): a
    dense ``source`` already decides an elementwise result's layout as the first operand, an
    expanded one (``out.sum()``'s gradient) gives row-major where the formula's operands
    would give the input's order."""
    if result.shape != source.shape or _layout.is_dense(source._data):
        return result
    wanted = _layout.preserve(result._data, source._data)
    if wanted.strides == result._data.strides:
        return result
    if grad_mode._state.enabled and result.requires_grad:
        from .creation import empty_like  # imports this module
        return empty_like(source, dtype=result.dtype).copy_(result)
    return Tensor._make(wanted)


# references to the incoming gradient tensor while a built-in formula runs under the engine: the
# engine's list of the node's gradients, its tuple of them, the argument tuple of the node's
# ``backward(ctx, *grads)`` call, the formula's argument, ``grad`` here and getrefcount's own
# argument; any holder beyond these (a user, a hook, another edge) makes the count higher
_FORMULA_REFS = 6


def owned_grad(ctx, grad: Tensor) -> bool:
    """Whether a backward formula may overwrite ``grad``'s array in place: first-order backward
    (no graph of the gradient), run by the engine for ``ctx`` itself, with nothing that could
    see the buffer afterwards or before (no tensor hook, retain_grad, node pre- or post-hook on
    this node), and no reference to the tensor or its array beyond the engine's own (a gradient
    the user passed in, one captured by ``autograd.grad`` or shared with another edge is never
    touched). An elementwise formula then reuses the buffer instead of allocating one more
    array of the activation's size, as torch reuses a gradient it owns alone."""
    if grad_mode._state.enabled or not REFCOUNTS_EXACT:
        return False
    stack = _tasks.stack
    if not stack or stack[-1].running is not ctx:
        return False
    if ctx._hooked:  # a hook (tensor, retain_grad, node pre or post) could see the buffer
        return False
    if type(grad) is not Tensor or grad._grad_fn is not None or grad._extra is not None:
        return False
    data = grad._data
    # the array: the tensor's slot, ``data`` and getrefcount's argument; it owns its memory
    return (sys.getrefcount(grad) <= _FORMULA_REFS and data.flags.owndata
            and data.flags.writeable and sys.getrefcount(data) <= 3)
