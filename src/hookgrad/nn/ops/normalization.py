"""Normalization: batch norm, layer norm and group norm (torch's native_* ops).

Forward runs on arrays and saves what torch saves (input, weight, the statistics). Backward is
written with tensor ops on x_hat = (x - mean) * rstd. When a graph of the gradient is being built
(create_graph), mean and rstd are recomputed from the input with tensor ops, because they depend
on it; the saved statistics are only used for the plain first-order gradient.
"""
from __future__ import annotations

import math

import numpy as np

from ... import _blas, _dtype
from ...autograd import grad_mode
from ...tensor import Tensor
from ...ops._base import Op
from ...ops import _layout
from ...ops._util import quiet_errors


def _moments(x: np.ndarray, axes: tuple, eps: float):
    """(mean, biased var, 1/sqrt(var + eps)) over ``axes``, kept as broadcastable dims."""
    mean = x.mean(axis=axes, keepdims=True)
    centered = x - mean
    var = np.mean(centered * centered, axis=axes, keepdims=True)
    rstd = (1 / np.sqrt(var + x.dtype.type(eps))).astype(x.dtype, copy=False)
    return mean, centered, var, rstd


def inf_rows_nan(mean: np.ndarray) -> np.ndarray:
    """``mean`` with nan where it is inf, in place: torch's layer norm gives a row holding an
    inf a nan mean (its running mean meets inf - inf), a plain sum gives inf."""
    inf = np.isinf(mean)
    if inf.any():
        mean[inf] = np.nan
    return mean


def _tensor_moments(input, axes: tuple, eps: float):
    """The same statistics as differentiable tensor ops (for a graph of the gradient)."""
    mean = input.mean(axes, keepdim=True)
    centered = input - mean
    var = (centered * centered).mean(axes, keepdim=True)
    return mean, (var + eps).rsqrt()


def _normalized_grad(grad_xhat, xhat, rstd, axes: tuple):
    """d/dx of x_hat given d/dx_hat: rstd (g - mean(g) - x_hat mean(g x_hat)) over ``axes``."""
    return rstd * (grad_xhat - grad_xhat.mean(axes, keepdim=True)
                   - xhat * (grad_xhat * xhat).mean(axes, keepdim=True))


# weight and bias keep their places among the node's edges when they are None, as torch's
# nodes list (None, 0) there: the positions that take an edge even when no tensor stands there
_AFFINE_EDGES = (1, 2)


class NativeBatchNorm(Op):
    """y = (x - mean) / sqrt(var + eps) * weight + bias, statistics per channel (dim 1)."""

    node_name = "NativeBatchNormBackward0"
    _wrapped_scalars = _AFFINE_EDGES
    saved_names = ("input", "running_mean", "running_var", "weight", "result1", "result2")
    saved_values = {"training": "training", "eps": "eps"}

    @staticmethod
    def forward(ctx, input, weight, bias, running_mean, running_var, training, momentum, eps):
        axes = (0,) + tuple(range(2, input.ndim))
        shape = (1, -1) + (1,) * (input.ndim - 2)
        ctx.axes, ctx.shape, ctx.training, ctx.eps = axes, shape, training, eps
        if training:
            mean, centered, var, rstd = _moments(input, axes, eps)
            # running statistics change in place and without a version bump, as in torch
            count = input.size // input.shape[1]
            factor = input.dtype.type(momentum)
            if running_mean is not None:
                running_mean *= 1 - factor
                running_mean += factor * mean.reshape(-1)
            if running_var is not None:
                unbiased = var.reshape(-1) * (count / max(count - 1, 1))
                running_var *= 1 - factor
                running_var += (factor * unbiased).astype(running_var.dtype, copy=False)
            save_mean, save_rstd = mean.reshape(-1), rstd.reshape(-1)
            result = centered * rstd
        else:
            rstd = (1 / np.sqrt(running_var + input.dtype.type(eps))).astype(input.dtype)
            result = (input - running_mean.reshape(shape)) * rstd.reshape(shape)
            save_mean = save_rstd = np.zeros(0, input.dtype)
        ctx.save_for_backward(input, running_mean, running_var, weight, save_mean, save_rstd)
        if weight is not None:
            result = result * weight.reshape(shape)
        if bias is not None:
            result = result + bias.reshape(shape)
        result = result.astype(input.dtype, copy=False)
        # torch's CPU batch norm is stricter than pooling: channels-last only for an input that
        # is dense channels-last and not also row-major (a (2, 1, H, W) input stays row-major)
        if _layout.is_channels_last(input):
            return _layout.channels_last(result)
        return _layout.contiguous(result)

    @staticmethod
    def backward(ctx, grad):
        input, running_mean, running_var, weight, mean, rstd = ctx.saved_tensors
        axes, shape = ctx.axes, ctx.shape
        if ctx.training:
            if grad_mode.is_grad_enabled():
                mean, rstd = _tensor_moments(input, axes, ctx.eps)
            else:
                mean, rstd = mean.reshape(shape), rstd.reshape(shape)
        else:
            mean = running_mean.reshape(shape)
            rstd = (running_var + ctx.eps).rsqrt().reshape(shape)
        xhat = (input - mean) * rstd
        need_input, need_weight, need_bias = ctx.needs_input_grad[:3]
        grad_input = grad_weight = grad_bias = None
        if need_input:
            grad_xhat = grad * weight.reshape(shape) if weight is not None else grad
            if ctx.training:
                grad_input = _normalized_grad(grad_xhat, xhat, rstd, axes)
            else:
                grad_input = grad_xhat * rstd
        if need_weight:
            grad_weight = (grad * xhat).sum(axes)
        if need_bias:
            grad_bias = grad.sum(axes)
        return grad_input, grad_weight, grad_bias


class NativeLayerNorm(Op):
    """y = (x - mean) / sqrt(var + eps) * weight + bias over the trailing normalized dims."""

    node_name = "NativeLayerNormBackward0"
    _wrapped_scalars = _AFFINE_EDGES
    saved_names = ("bias", "input", "weight", "result1", "result2")
    saved_values = {"normalized_shape": "normalized_shape"}

    @staticmethod
    def forward(ctx, input, weight, bias, normalized_ndim, eps):
        axes = tuple(range(input.ndim - normalized_ndim, input.ndim))
        ctx.axes, ctx.eps = axes, eps
        ctx.normalized_shape = input.shape[input.ndim - normalized_ndim:]
        if _rows_apply(input, weight, bias):
            one_pass = input.size >= _ONE_PASS_MIN and (weight is None
                                                         or np.isfinite(weight).all())
            kernel = _one_pass_layer_norm if one_pass else _two_pass_layer_norm
            with quiet_errors():  # inf and nan rows give nan, without NumPy's warnings
                result, mean, rstd = kernel(input, weight, bias, normalized_ndim, eps)
            ctx.save_for_backward(bias, input, weight, mean, rstd)
            return _layout.contiguous(result)
        with quiet_errors():
            mean, centered, _var, rstd = _moments(input, axes, eps)
        inf_rows_nan(mean)
        result = centered * rstd
        # the statistics are row-major whatever the input's layout, as torch's
        mean, rstd = np.ascontiguousarray(mean), np.ascontiguousarray(rstd)
        ctx.save_for_backward(bias, input, weight, mean, rstd)
        # affine in place when the dtypes agree (centered, then result, are fresh arrays)
        if weight is not None:
            result = (np.multiply(result, weight, out=result) if weight.dtype == result.dtype
                      else result * weight)
        if bias is not None:
            result = (np.add(result, bias, out=result) if bias.dtype == result.dtype
                      else result + bias)
        return _layout.contiguous(result.astype(input.dtype, copy=False))  # as torch's

    @staticmethod
    def backward(ctx, grad):
        _bias, input, weight, mean, rstd = ctx.saved_tensors
        axes = ctx.axes
        if not grad_mode.is_grad_enabled() and _plain_layer_norm(grad, input, weight):
            return _layer_norm_grads_arrays(ctx, grad._data, input._data,
                                            None if weight is None else weight._data,
                                            mean._data, rstd._data)
        if grad_mode.is_grad_enabled():
            mean, rstd = _tensor_moments(input, axes, ctx.eps)
        xhat = (input - mean) * rstd
        batch = tuple(range(input.ndim - len(axes)))
        need_input, need_weight, need_bias = ctx.needs_input_grad[:3]
        grad_input = grad_weight = grad_bias = None
        if need_input:
            grad_xhat = grad * weight if weight is not None else grad
            grad_input = _normalized_grad(grad_xhat, xhat, rstd, axes)
        if need_weight:
            grad_weight = (grad * xhat).sum(batch) if batch else grad * xhat
        if need_bias:
            grad_bias = grad.sum(batch) if batch else grad
        return grad_input, grad_weight, grad_bias


def _plain_layer_norm(grad, input, weight) -> bool:
    """float32 or float64 throughout, C-ordered and not empty: the array formulas then give the
    tensor formulas' values and layouts."""
    dtype = input._data.dtype
    return (dtype in (np.float32, np.float64) and grad._data.dtype == dtype
            and (weight is None or weight._data.dtype == dtype) and input._data.size > 0
            and grad._data.flags.c_contiguous and input._data.flags.c_contiguous)


def _rows_apply(input: np.ndarray, *params) -> bool:
    """Whether layer norm's row-wise kernels apply: a C-ordered float32/float64 input whose
    normalized dims, flattened, are each row of a matrix, and parameters of its dtype."""
    dtype = input.dtype
    return (dtype in (np.float32, np.float64) and input.flags.c_contiguous and input.size > 0
            and all(p is None or p.dtype == dtype for p in params))


def _two_pass_layer_norm(input: np.ndarray, weight, bias, normalized_ndim: int, eps: float):
    """(result, mean, rstd) of layer norm over the trailing ``normalized_ndim`` dims of a
    C-ordered input, from x - mean: the kernel for small inputs (and weights with inf or nan),
    in as few NumPy calls as it takes, as each costs about as much as the arithmetic there.
    Row sums are einsum's single pass over each row, not a reduction over a short last axis
    (3x slower in NumPy). mean and rstd have the input's rank (size 1 in the normalized dims),
    as torch returns them."""
    kept = input.shape[:input.ndim - normalized_ndim]
    rows = input.reshape(math.prod(kept), -1)
    count = rows.dtype.type(rows.shape[1])
    mean = np.einsum("ij->i", rows)
    mean /= count
    result = rows - mean[:, None]
    var = np.einsum("ij,ij->i", result, result)
    var /= count
    var += rows.dtype.type(eps)
    rstd = np.reciprocal(np.sqrt(var, out=var), out=var)
    result *= rstd[:, None]
    if weight is not None:
        result *= weight.reshape(-1)
    if bias is not None:
        result += bias.reshape(-1)
    stats = kept + (1,) * normalized_ndim
    return result.reshape(input.shape), inf_rows_nan(mean).reshape(stats), rstd.reshape(stats)


# Inputs from this many elements take ``_one_pass_layer_norm``; below, its extra NumPy calls
# (~10 us) cost more than the passes it saves (even at 64x256 it was ~10 % slower).
_ONE_PASS_MIN = 1 << 15


def _one_pass_layer_norm(input: np.ndarray, weight, bias, normalized_ndim: int, eps: float):
    """(result, mean, rstd) of layer norm over the trailing ``normalized_ndim`` dims of a
    C-ordered input, in full passes that NumPy runs without a per-row loop.

    Broadcasting a per-row number over a (rows, columns) matrix costs NumPy a call of its inner
    loop per row (~2x a plain pass for rows of 128), so the common case does none. The sums of
    x and x^2 are products with vectors of ones and of 1/N (BLAS); var = mean(x^2) - mean^2
    loses to cancellation the bits by which mean^2 exceeds var + eps, so when a row does that
    (a large mean, a constant row) the rows are shifted by those first estimates of their
    means (0 for the others) and summed again: the shifted means are then small, and float32
    comes out closer to float64 than torch's float32. When the first row is such a row, all
    are shifted straight away (an input of positive features, say, wastes no pass on x^2).
    A row with inf or nan, or whose x^2 overflows, gets a nan variance (and a nan mean for
    inf), as torch's kernels give. The result is x * S + T, where S = rstd (x) w and
    T = -mean rstd (x) w + 1 (x) b are rank-one matrices that one BLAS product each writes.
    A weight with inf or nan is left to the formula (x - mean) rstd w (callers check it),
    whose inf * 0 and signs are torch's."""
    kept = input.shape[:input.ndim - normalized_ndim]
    rows = input.reshape(math.prod(kept), -1)
    dtype = rows.dtype
    eps = dtype.type(eps)
    count = rows.shape[1]
    mean = _row_mean(rows)
    shift = None
    probe = rows[0] - mean[0]
    if mean[0] * mean[0] > probe @ probe / count + eps:
        shift = mean  # the first row is far: likely all are, so skip the sums of x^2
    else:
        var = _row_variance(rows, mean)
        far = mean * mean > var + eps  # nan: not far
        if far.any():
            shift = np.where(far, mean, dtype.type(0))
    if shift is not None:
        rows = rows - shift[:, None]
        mean = _row_mean(rows)
        var = _row_variance(rows, mean)
    var += eps
    finite = np.isfinite(var)
    if not finite.all():  # the row holds inf or nan, or some x^2 overflowed: nan, as torch's
        var[~finite] = np.nan
    rstd = np.reciprocal(np.sqrt(var, out=var), out=var)
    # left (rows, 3) = [rstd, mean rstd, 1]; right[0] = [w; 0; 0] gives S, right[1] = [0; -w; b]
    left = np.empty((len(rows), 3), dtype)
    left[:, 0] = rstd
    np.multiply(mean, rstd, out=left[:, 1])
    left[:, 2] = 1
    right = np.zeros((2, 3, count), dtype)
    if weight is None:
        right[0, 0] = 1
        right[1, 1] = -1
    else:
        right[0, 0] = weight.reshape(-1)
        np.negative(weight.reshape(-1), out=right[1, 1])
    if bias is not None:
        right[1, 2] = bias.reshape(-1)
    result = _blas.matmul(left, right[0])
    result *= rows
    result += _blas.matmul(left, right[1])
    if shift is not None:
        mean += shift
    if not finite.all():
        mean[np.isinf(mean)] = np.nan
    stats = kept + (1,) * normalized_ndim
    return result.reshape(input.shape), mean.reshape(stats), rstd.reshape(stats)


def _row_mean(rows: np.ndarray) -> np.ndarray:
    """Each row's sum (a BLAS product with ones) divided by N: a rounded 1/N would move every
    mean."""
    mean = _blas.matvec(rows, np.ones(rows.shape[1], rows.dtype))
    mean /= rows.dtype.type(rows.shape[1])
    return mean


def _row_variance(rows: np.ndarray, mean: np.ndarray) -> np.ndarray:
    """Each row's mean(x^2) - mean^2, the first as the sum of x^2 / N (which overflows only
    where x^2 does, as torch's)."""
    var = _blas.matvec(np.square(rows), np.full(rows.shape[1], 1 / rows.shape[1], rows.dtype))
    var -= mean * mean
    return var


# |mean| * rstd up to which backward's sums over x * grad are taken without centering x first:
# the mean's share then costs at most ~2 bits of the sums' precision.
_UNCENTERED = 2.0


def _layer_norm_grads_arrays(ctx, grad, input, weight, mean, rstd):
    """Layer norm's first-order gradients on arrays (no graph of them is wanted), in the form
    grad_input = rstd w g + a x + b with per-row a and b, on (rows, columns) views.

    Every sum is a matrix-vector product (``_blas.matvec``/``vecmat``: row sums of g w and of
    g w x, column sums of g and of g x rstd), so one full-size temporary, g x, is all they
    need; on a large input the column sums of g and of shift g are one product (one pass over
    g). grad_input is the outer product rstd w times g, plus x a and b. Each broadcast pass
    over the rows costs ~2x a plain one in NumPy, so there are as few as the formula allows.
    A row whose mean is large against its spread takes x - mean first (as the tensor formulas
    do) rather than losing the sums' precision to cancellation."""
    normalized = input.shape[input.ndim - len(ctx.axes):]
    columns = math.prod(normalized)
    x, g = input.reshape(-1, columns), grad.reshape(-1, columns)
    mean, rstd = mean.reshape(-1), rstd.reshape(-1)
    need_input, need_weight, need_bias = ctx.needs_input_grad[:3]
    shift = mean * rstd  # x_hat = x rstd - shift
    uncentered = bool(np.abs(shift).max() <= _UNCENTERED)  # nan: centered
    if uncentered:
        product = np.multiply(x, g)
    else:
        product = np.subtract(x, mean[:, None])
        product *= g
    grad_input = grad_weight = grad_bias = None
    # small inputs keep to fewer NumPy calls; large ones to fewer passes (as forward)
    large = x.size >= _ONE_PASS_MIN
    if need_weight and need_bias and uncentered and large:
        mix = np.empty((2, len(x)), x.dtype)  # the sums of shift g and of g: one pass over g
        mix[0], mix[1] = shift, 1
        column_sums = _blas.matmul(mix, g)
    elif need_bias:
        column_sums = [None, _blas.vecmat(np.ones(len(x), x.dtype), g)]
    if need_weight:  # sum over rows of g x_hat
        grad_weight = _blas.vecmat(rstd, product)
        if uncentered:
            grad_weight -= column_sums[0] if need_bias and large else _blas.vecmat(shift, g)
        grad_weight = Tensor._make(grad_weight.reshape(normalized))
    if need_bias:
        grad_bias = Tensor._make(column_sums[1].reshape(normalized))
    if need_input:
        scale = np.ones(columns, x.dtype) if weight is None else weight.reshape(-1)
        sum_grad = _blas.matvec(g, scale)  # per row: sum of g w, and of g w (x - mean)
        sum_product = _blas.matvec(product, scale)
        if uncentered:
            sum_product -= mean * sum_grad
        # grad_input = rstd g w - rstd sum_grad / N - (x - mean) rstd^3 sum_product / N
        slope = rstd * rstd
        slope *= rstd
        slope *= sum_product
        slope *= -1 / columns
        offset = rstd * sum_grad
        offset *= -1 / columns
        if large:  # rstd (x) w from BLAS (K = 2: NumPy's own loop takes K = 1, ~15x slower),
            # a third of the time of einsum's outer product or of broadcasting rstd over g
            outer = np.zeros((len(x), 2), x.dtype)
            outer[:, 0] = rstd
            grad_input = _blas.matmul(outer, np.stack((scale, np.zeros_like(scale))))
            grad_input *= g
        elif weight is None:
            grad_input = np.multiply(g, rstd[:, None])
        else:
            grad_input = np.einsum("i,j->ij", rstd, scale)
            grad_input *= g
        if uncentered:  # x slope + (offset - mean slope)
            offset -= mean * slope
            np.multiply(x, slope[:, None], out=product)
        else:
            np.subtract(x, mean[:, None], out=product)
            product *= slope[:, None]
        grad_input += product
        grad_input += offset[:, None]
        grad_input = Tensor._make(grad_input.reshape(input.shape))
    return grad_input, grad_weight, grad_bias


class NativeGroupNorm(Op):
    """Layer norm within groups of channels, then a per-channel affine map; mean and rstd are
    (N, groups) outputs that backward saves (as torch does)."""

    node_name = "NativeGroupNormBackward0"
    _wrapped_scalars = _AFFINE_EDGES
    saved_names = ("input", "weight", "result1", "result2")
    saved_values = {"N": "batch", "C": "channels", "HxW": "spatial", "group": "groups",
                    "eps": "eps"}

    @staticmethod
    def forward(ctx, input, weight, bias, groups, eps):
        n = input.shape[0]
        ctx.groups, ctx.eps = groups, eps
        ctx.batch, ctx.channels = n, input.shape[1]
        ctx.spatial = int(np.prod(input.shape[2:], dtype=np.int64))
        grouped = input.reshape(n, groups, -1)
        mean, centered, _var, rstd = _moments(grouped, (2,), eps)
        shape = (1, -1) + (1,) * (input.ndim - 2)
        result = (centered * rstd).reshape(input.shape)
        if weight is not None:
            result = result * weight.reshape(shape)
        if bias is not None:
            result = result + bias.reshape(shape)
        mean, rstd = mean.reshape(n, groups), rstd.reshape(n, groups)
        ctx.save_for_backward(input, weight, mean, rstd)
        result = result.astype(input.dtype, copy=False)
        # torch's strides, size-1 dims too: channels-last as torch reads it, else row-major
        result = _layout.channels_last(result) if _layout.suggests_channels_last(input) \
            else _layout.contiguous(result)
        return result, mean, rstd

    @staticmethod
    def backward(ctx, grad, _grad_mean=None, _grad_rstd=None):
        input, weight, mean, rstd = ctx.saved_tensors
        n = input.shape[0]
        groups = ctx.groups
        grouped = input.reshape(n, groups, -1)
        if grad_mode.is_grad_enabled():
            mean, rstd = _tensor_moments(grouped, (2,), ctx.eps)
        else:
            mean, rstd = mean.reshape(n, groups, 1), rstd.reshape(n, groups, 1)
        xhat = ((grouped - mean) * rstd).reshape(input.shape)
        shape = (1, -1) + (1,) * (input.ndim - 2)
        axes = (0,) + tuple(range(2, input.ndim))
        need_input, need_weight, need_bias = ctx.needs_input_grad[:3]
        grad_input = grad_weight = grad_bias = None
        if need_input:
            grad_xhat = grad * weight.reshape(shape) if weight is not None else grad
            grouped_grad = _normalized_grad(grad_xhat.reshape(n, groups, -1),
                                            xhat.reshape(n, groups, -1), rstd, (2,))
            grad_input = grouped_grad.reshape(input.shape)
        if need_weight:
            grad_weight = (grad * xhat).sum(axes)
        if need_bias:
            grad_bias = grad.sum(axes)
        return grad_input, grad_weight, grad_bias


_REDUCED = ("bfloat16", "float16")


def check_affine_dtypes(input: Tensor, *params) -> None:
    """torch's CPU rule for layer and group norm's weight and bias: they share the input's
    dtype, or are float32 beside a bfloat16/float16 input (mixed precision); anything else
    raises torch's error rather than computing in some promoted dtype."""
    defined = [p for p in params if p is not None]
    if not defined:
        return
    kind = input.dtype
    if defined[0].dtype != kind:
        if any(p.dtype != _dtype.float32 for p in defined):
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
        if str(kind).split(".")[-1] not in _REDUCED:
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
        return
    for p in defined[1:]:
        if p.dtype != kind:
            raise RuntimeError(f"expected scalar type {_dtype.scalar_type_name(kind)} but found "
                               f"{_dtype.scalar_type_name(p.dtype)}")
