"""torch.nn.init: fill a tensor in place from torch's distributions.

Every function writes through ``copy_`` under ``no_grad``, so a Parameter keeps its identity, its
version counter is bumped, and no graph is recorded. Random draws are torch's: the same calls on
the tensor itself (``uniform_``, ``normal_``) in torch's order, so after ``manual_seed`` every
initialiser, and hence every layer's default initialisation, gives torch's values.
"""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

from .._warnings import warn
from ..autograd.grad_mode import no_grad
from ..tensor import Tensor

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_",
           "zeros_", "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
           "kaiming_normal_", "orthogonal_", "sparse_", "uniform", "normal", "constant", "eye",
           "dirac", "xavier_uniform", "xavier_normal", "kaiming_uniform", "kaiming_normal",
           "orthogonal", "sparse"]


def _write(tensor: Tensor, values: np.ndarray) -> Tensor:
    with no_grad():
        tensor.copy_(Tensor._make(np.asarray(values).astype(tensor._data.dtype, copy=False)))
    return tensor


def calculate_gain(nonlinearity: str, param: Optional[float] = None) -> float:
    """The gain torch recommends for a nonlinearity (scales the std of the init)."""
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple:
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive = math.prod(tensor.shape[2:]) if tensor.ndim > 2 else 1
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    # Kaiming init scales by the fan on the side (forward or backward) it should preserve;
    # the mode is checked before the shape, as torch does.
    sides = ["fan_in", "fan_out"]
    if mode.lower() not in sides:
        raise ValueError(f"Mode {mode.lower()} not supported, please use one of {sides}")
    return _calculate_fan_in_and_fan_out(tensor)[sides.index(mode.lower())]


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """U(a, b)"""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """N(mean, std^2)"""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator=None) -> Tensor:
    """N(mean, std^2) restricted to [a, b] (values, not numbers of stds), by torch's rejection
    sampling: redraw whole normal tensors while more than 30% of the mass is inside, else
    uniform proposals on [a, b] accepted against the normal's log-density."""
    if mean < a - 2 * std or mean > b + 2 * std:
        warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
             "distribution of values may be incorrect.")
    from .. import empty_like, where  # the package face, loaded after this module

    def norm_cdf(x: float) -> float:
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    with no_grad():
        if norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std) > 0.3:
            low = float(np.asarray(a, tensor._data.dtype))
            high = float(np.asarray(b, tensor._data.dtype))
            result = tensor.normal_(mean, std, generator=generator)
            while True:
                outside = (result < low) | (result > high)
                if not outside.any():
                    break
                fresh = empty_like(result).normal_(mean, std, generator=generator)
                result = where(outside, fresh, result)
            if result is not tensor:
                tensor.copy_(result)
            return tensor
        mode = max(a, min(mean, b))
        log_peak = -0.5 * ((mode - mean) / std) ** 2
        candidates = empty_like(tensor)
        accept = empty_like(tensor)
        tensor.uniform_(a, b, generator=generator)
        candidates.copy_(tensor)
        candidates.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
        pending = accept.uniform_(generator=generator).log_().gt(candidates)
        if pending.any():
            result = tensor
            while True:
                candidates.uniform_(a, b, generator=generator)
                result = where(pending, candidates, result)
                candidates.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
                pending = where(pending, accept.uniform_(generator=generator).log_()
                                .gt(candidates), pending)
                if not pending.any():
                    break
            tensor.copy_(result)
        return tensor


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fills ``tensor`` with ``val`` in place, without recording gradients."""
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    """Fills ``tensor`` with ones in place."""
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fills ``tensor`` with zeros in place."""
    with no_grad():
        return tensor.zero_()


def eye_(tensor: Tensor) -> Tensor:
    """Fills a 2-d ``tensor`` with the identity in place."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _write(tensor, np.eye(*tensor.shape))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fills a 3-, 4- or 5-d convolution weight in place so the convolution passes its input
    through: in each of ``groups`` groups, output channel d reads input channel d at the kernel's
    centre (1 there, 0 elsewhere), for as many channels as both sides have."""
    if tensor.ndim not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tuple(tensor.shape)
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = sizes[0] // groups
    channels = np.arange(min(per_group, sizes[1]))
    values = np.zeros(sizes)
    outputs = (np.arange(groups)[:, None] * per_group + channels).ravel()
    centre = tuple(size // 2 for size in sizes[2:])
    values[(outputs, np.tile(channels, groups)) + centre] = 1
    return _write(tensor, values)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """U(-a, a) with a = gain sqrt(6 / (fan_in + fan_out))"""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std  # torch's order of products, so the bound rounds the same
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """N(0, std^2) with std = gain sqrt(2 / (fan_in + fan_out))"""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> Optional[float]:
    if 0 in tuple(tensor.shape):
        warn("Initializing zero-element tensors is a no-op")
        return None
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """U(-b, b) with b = gain sqrt(3 / fan) (He et al.)"""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """N(0, std^2) with std = gain / sqrt(fan)"""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """A (semi-)orthogonal matrix from the QR decomposition of a Gaussian one, signs fixed so
    the distribution is uniform (Saxe et al.); trailing dims are flattened.

    Differs from torch in the last bits: the Gaussian draw is torch's exactly, but torch factors
    a float32 matrix with MKL's single-precision QR while NumPy's LAPACK works in double and
    rounds once, so float32 results agree to about 1e-7 on small matrices and 2e-6 at 512x512
    (the size of torch's own float32 rounding error); float64 agrees to about 1e-15."""
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    from .. import empty  # the package face, loaded after this module

    with no_grad():
        flat = empty((rows, cols), dtype=tensor.dtype).normal_(0, 1, generator=generator)
    flat = flat._data
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _write(tensor, gain * q.reshape(tuple(tensor.shape)))


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator=None) -> Tensor:
    """N(0, std^2), then in each column a ``ceil(sparsity * rows)`` random rows set to zero (the
    rows come from the default generator, as in torch)."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    from .. import randperm  # the package face, loaded after this module

    rows, cols = tensor.shape
    zeros_per_column = math.ceil(sparsity * rows)
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        for column in range(cols):  # one permutation per column, in torch's order
            tensor[randperm(rows)[:zeros_per_column], column] = 0
    return tensor


def _make_deprecated(method):
    # torch's pre-0.4 names without the trailing underscore: same function, a FutureWarning
    new_name = method.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args, **kwargs):
        warn(f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.",
             FutureWarning)
        return method(*args, **kwargs)

    deprecated_init.__name__ = deprecated_init.__qualname__ = old_name
    deprecated_init.__doc__ = (f"Deprecated alias of :func:`{new_name}` (a FutureWarning says "
                               "so); see it for the arguments.")
    return deprecated_init


uniform = _make_deprecated(uniform_)
normal = _make_deprecated(normal_)
constant = _make_deprecated(constant_)
eye = _make_deprecated(eye_)
dirac = _make_deprecated(dirac_)
xavier_uniform = _make_deprecated(xavier_uniform_)
xavier_normal = _make_deprecated(xavier_normal_)
kaiming_uniform = _make_deprecated(kaiming_uniform_)
kaiming_normal = _make_deprecated(kaiming_normal_)
orthogonal = _make_deprecated(orthogonal_)
sparse = _make_deprecated(sparse_)
