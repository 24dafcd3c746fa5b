"""logsumexp, softmax and log_softmax: computed with the maximum shifted out, so large inputs
do not overflow (a last-dim softmax of moderate inputs needs no shift: ``_unshifted_softmax``);
each backward uses the saved result."""
from __future__ import annotations

import numpy as np

from .. import _dtype
from ..autograd import grad_mode
from ..tensor import Tensor
from . import _layout
from ._reduce_util import (_UNSET, _accumulator, _kept_shape, _restore, reduce_dims, shown_dim,
                           shown_dims, torch_type_name)
from ._util import normalize_dim, quiet_errors
from ._base import Op


class Logsumexp(Op):
    """d logsumexp = grad * exp(self - result)"""

    node_name = "LogsumexpBackward0"
    saved_names = ("self", "result")

    @staticmethod
    def forward(ctx, self, dims, keepdim, shown=_UNSET):
        ctx.dims, ctx._saved_keepdim = dims, keepdim
        ctx._saved_dim = dims if shown is _UNSET else shown
        work = self.astype(_accumulator(self.dtype), copy=False)
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            if self.size:
                shift = np.max(work, axis=dims, keepdims=True)
                shift = np.where(np.isinf(shift), 0, shift).astype(work.dtype, copy=False)
            else:
                shift = np.zeros(_kept_shape(self.shape, dims), work.dtype)
            total = np.sum(np.exp(work - shift), axis=dims, keepdims=True)
            result = np.log(total) + shift
        if not keepdim:
            result = np.squeeze(result, dims)
        result = np.require(np.asarray(result).astype(self.dtype, copy=False), requirements="C")
        ctx.save_for_backward(self, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        self, result = ctx.saved_tensors
        shape, dims, keepdim = self._data.shape, ctx.dims, ctx._saved_keepdim
        grad = _restore(grad, shape, dims, keepdim)
        return grad * (self - _restore(result, shape, dims, keepdim)).exp(), None, None


def logsumexp(input: Tensor, dim=_UNSET, keepdim: bool = False) -> Tensor:
    """log(sum(exp(x))) computed stably; integer inputs give the default float dtype."""
    if dim is _UNSET:
        raise TypeError("logsumexp() missing 1 required positional arguments: \"dim\"")
    if input._data.dtype.kind not in "fcV":
        input = input.to(_dtype.get_default_dtype())
    return Logsumexp.apply(input, reduce_dims(dim, input._data.ndim), keepdim,
                           shown=shown_dims(dim))


def _softmax_input(ctx, self: np.ndarray, dim: int, op: str, shown) -> tuple:
    """Checks a softmax input and records ``dim`` (shown as given); returns the input in its
    accumulation dtype and the axis to normalise over (None for a 0-d input)."""
    if self.dtype.kind not in "fV":
        kernel = f"{op}_lastdim_kernel_impl" if dim == self.ndim - 1 or self.ndim == 0 \
            else f"{op}_kernel_impl"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{torch_type_name(self)}'")
    ctx.dim, ctx._saved_dim = dim, dim if shown is _UNSET else shown
    return self.astype(_accumulator(self.dtype), copy=False), dim if self.ndim else None


# A last-dim softmax whose inputs are all below _EXP_SAFE has its exponentials far inside the
# float range, so the row max need not be taken out first. A row whose sum of exponentials is
# at least _SUM_SAFE has its largest input above about -12 - log(row length), so inputs up to
# ~70 below it still have normal float32 exponentials; other rows (a fully -inf one too) take
# the max out first, as usual.
_EXP_SAFE = 20.0
_SUM_SAFE = 1e-5


def _unshifted_softmax(work: np.ndarray, axis: int):
    """softmax over the last axis of a float32/float64 array as exp(x) / sum(exp(x)), or None
    where the row max must be taken out first. A max over a short last axis is NumPy's
    slowest pass (~10x a max over the whole array, which is all this takes), and a sum over
    it ~4x einsum's pass over each row."""
    if axis != work.ndim - 1 or work.dtype not in _PLAIN or not work.max() < _EXP_SAFE:
        return None  # nan compares false: such an input takes the max path
    exps = np.exp(work)
    total = np.einsum("...j->...", exps)[..., None]
    if not total.min() >= _SUM_SAFE:
        return None
    exps /= total
    return exps


class Softmax(Op):
    """d softmax = result * (grad - sum(grad * result))"""

    node_name = "SoftmaxBackward0"
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, self, dim, shown=_UNSET):
        work, axis = _softmax_input(ctx, self, dim, "softmax", shown)
        with np.errstate(invalid="ignore", over="ignore"):
            if self.ndim and self.size:  # the ufuncs' reduce: np.max/np.sum less their wrapper
                result = _unshifted_softmax(work, axis)
                if result is None:
                    exps = np.subtract(work, np.maximum.reduce(work, axis=axis, keepdims=True))
                    np.exp(exps, out=exps)  # in place: one fresh array for the whole forward
                    exps /= np.add.reduce(exps, axis=axis, keepdims=True)
                    result = exps
                result = result.astype(self.dtype, copy=False)
            else:
                exps = np.exp(work - np.max(work, axis=axis, keepdims=True)) if self.size else work
                result = (exps / np.sum(exps, axis=axis, keepdims=True)).astype(self.dtype)
        result = np.require(result, requirements="C")  # torch's result is contiguous
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        dim = ctx.dim if result.ndim else ()
        if _plain(grad, result):  # the same formula on arrays, one buffer reused
            g, r = grad._data, result._data
            with quiet_errors():
                if dim == g.ndim - 1:  # einsum's one pass per row: no product array to sum
                    product = np.subtract(g, np.einsum("...j,...j->...", g, r)[..., None])
                else:
                    product = g * r
                    total = np.add.reduce(product, axis=dim, keepdims=True)
                    np.subtract(g, total, out=product)
                product *= r
            return Tensor._make(product), None
        return SoftmaxBackwardData.apply(grad, result, dim), None


class SoftmaxBackwardData(Op):
    """softmax's first-order gradient as one node, as torch records it under create_graph:
    g_in = o * (g - sum(g * o)). Its own gradients: for g, the same formula on the incoming
    G; for o, G * g - sum(o * g) * G - g * sum(o * G)."""

    node_name = "SoftmaxBackwardDataBackward0"
    saved_names = ("grad_output", "output")

    @staticmethod
    def forward(ctx, grad_output, output, dim):
        return _backward_data(ctx, grad_output, output, dim, lambda g, o: o * (
            g - np.sum(g * o, axis=dim, keepdims=True)))

    @staticmethod
    def backward(ctx, grad):
        grad_output, output = ctx.saved_tensors
        dim = ctx.dim
        grad = grad.to(output.dtype)
        d_grad_output = SoftmaxBackwardData.apply(grad, output, dim) \
            if ctx.needs_input_grad[0] else None
        d_output = None
        if ctx.needs_input_grad[1]:
            d_output = (grad_output * grad - (output * grad_output).sum(dim, keepdim=True) * grad
                        - grad_output * (output * grad).sum(dim, keepdim=True))
        return d_grad_output, d_output, None


class LogSoftmax(Op):
    """d log_softmax = grad - exp(result) * sum(grad)"""

    node_name = "LogSoftmaxBackward0"
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, self, dim, shown=_UNSET):
        work, axis = _softmax_input(ctx, self, dim, "log_softmax", shown)
        with quiet_errors():
            if self.ndim and self.size:  # in place on the fresh temporaries
                shifted = work - np.maximum.reduce(work, axis=axis, keepdims=True)
                total = np.add.reduce(np.exp(shifted), axis=axis, keepdims=True)
                result = np.subtract(shifted, np.log(total, out=total), out=shifted)
            else:
                shifted = work - np.max(work, axis=axis, keepdims=True) if self.size else work
                result = shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))
        # torch's result is row-major; ``result`` is a fresh array, never the input
        result = _layout.contiguous(np.asarray(result).astype(self.dtype, copy=False))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        dim = ctx.dim if result.ndim else ()
        if _plain(grad, result):  # the same formula on arrays, one buffer reused
            g = grad._data
            with quiet_errors():
                total = np.add.reduce(g, axis=dim, keepdims=True)
                scaled = np.exp(result._data)
                scaled *= total
                np.subtract(g, scaled, out=scaled)
            return Tensor._make(scaled), None
        return LogSoftmaxBackwardData.apply(grad, result, dim), None


class LogSoftmaxBackwardData(Op):
    """log_softmax's first-order gradient as one node, as torch records it under create_graph:
    g_in = g - exp(o) * sum(g). Its own gradients: for g, G - sum(G * exp(o)); for o,
    -sum(g) * exp(o) * G."""

    node_name = "LogSoftmaxBackwardDataBackward0"
    saved_names = ("grad_output", "output")

    @staticmethod
    def forward(ctx, grad_output, output, dim):
        return _backward_data(ctx, grad_output, output, dim, lambda g, o: g - np.exp(o) * np.sum(
            g, axis=dim, keepdims=True))

    @staticmethod
    def backward(ctx, grad):
        grad_output, output = ctx.saved_tensors
        dim = ctx.dim
        grad = grad.to(output.dtype)
        d_grad_output = d_output = None
        if ctx.needs_input_grad[0]:
            d_grad_output = grad - (grad * output.exp()).sum(dim, keepdim=True)
        if ctx.needs_input_grad[1]:
            d_output = -grad_output.sum(dim, keepdim=True) * output.exp() * grad
        return d_grad_output, d_output, None


_PLAIN = (np.dtype(np.float32), np.dtype(np.float64))


def _backward_data(ctx, grad_output: np.ndarray, output: np.ndarray, dim, formula):
    """The forward both gradient nodes share: save what torch's saves, then ``formula(g, o)``
    in the dtype torch computes in (half precision in float32), rounded to the output's."""
    ctx.dim = dim
    ctx.save_for_backward(grad_output, output)
    work = _accumulator(output.dtype)
    with quiet_errors():
        result = formula(grad_output.astype(work, copy=False), output.astype(work, copy=False))
    return result.astype(output.dtype, copy=False)


def _plain(grad: Tensor, result: Tensor) -> bool:
    """Whether a softmax backward may run its formula on arrays: no graph of the gradient is
    wanted, and the gradient is row-major with the saved result's float32/float64 dtype (the
    result is row-major), so NumPy's values, dtype and layout are the Tensor formula's. A 0-d
    one stays on the Tensor formula (NumPy would give scalars)."""
    if grad_mode._state.enabled or type(grad) is not Tensor:
        return False
    g = grad._data
    return (g.ndim > 0 and g.dtype in _PLAIN and g.dtype == result._data.dtype
            and g.flags.c_contiguous)


def _softmax(cls, input: Tensor, dim, dtype) -> Tensor:
    if dim is None:
        raise TypeError(f"{cls.__name__.lower()}() missing 1 required positional arguments: "
                        "\"dim\"")
    if dtype is not None and _dtype.to_numpy_dtype(dtype) != input._data.dtype:
        input = input.to(dtype)
    return cls.apply(input, normalize_dim(dim, input._data.ndim), shown=shown_dim(dim))


def softmax(input: Tensor, dim: int | None = None, dtype=None) -> Tensor:
    """exp(x) / sum(exp(x)) along ``dim``; ``dtype`` casts the input first (ToCopyBackward0)."""
    return _softmax(Softmax, input, dim, dtype)


def log_softmax(input: Tensor, dim: int | None = None, dtype=None) -> Tensor:
    """``log(softmax(input, dim))`` computed stably."""
    return _softmax(LogSoftmax, input, dim, dtype)
