"""Autocast's thread-local state and the casting a listed op gets while it is on.

Below ``overrides.py``, whose ``wrap`` gives each listed torch-level function one extra test.
A backward called inside autocast runs its formulas under it too (their products are cast, as
torch's are); the engine gives each input its gradient in its own dtype. The public names live
in ``hookgrad.amp`` and ``hookgrad``.

Cost when unused: a wrapped function on one of the lists tests ``threads_on`` (a module list,
empty unless some thread has CPU autocast on); functions on no list pay nothing at all.

The lists were found by running torch 2.13's CPU autocast and reading result dtypes:

* ``LOWER``: floating inputs other than float64 are cast to the autocast dtype;
* ``FLOAT32``: bfloat16 and float16 inputs are cast to float32;
* ``PROMOTE``: all floating inputs are cast to the widest of them;
* ``LOWER_RESULT`` (``linalg.pinv``): computed as called, the result in the autocast dtype;
* a function of the call's arguments for ops whose class depends on them (``F.pad``'s mode,
  ``einsum``'s equation), answering one of the above or None (run as called).
"""
from __future__ import annotations

import threading
from typing import Any, Callable

import numpy as np

from . import _dtype
from ._grad_state import _state as grad_state
from .tensor import Tensor

LOWER, FLOAT32, PROMOTE = "lower", "float32", "promote"
# torch composes it of a float32-list op and a lower-list product: computed as it is, the
# result given in the autocast dtype
LOWER_RESULT = "lower_result"

# one entry per thread that has CPU autocast enabled: the only thing a listed op tests when empty
threads_on: list = []
_threads_lock = threading.Lock()

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


def _numpy(d) -> np.dtype | None:
    try:
        return d.numpy
    except ImportError:
        return None


# the device types autocast has a dispatch key for in torch, with their default dtypes
AVAILABLE = {"cpu": _dtype.bfloat16, "cuda": _dtype.float16, "ipu": _dtype.float16,
             "xpu": _dtype.float16, "mps": _dtype.float16, "mtia": _dtype.float16,
             "privateuseone": _dtype.float16, "maia": _dtype.bfloat16, "xla": _dtype.bfloat16,
             "hpu": _dtype.bfloat16}
_DEFAULT_DTYPES = dict(AVAILABLE, hip=_dtype.float16)  # hip has a dtype, but no autocast
_NO_KEY = "unknown device type for autocast in get_autocast_dispatch_key_from_device_type"


class _State(threading.local):
    def __init__(self):
        self.enabled: dict = {}  # device type -> bool
        self.dtypes: dict = {}  # device type -> dtype, when set
        self.cache_enabled = True
        # id(leaf) -> (leaf, its cast): float32 leaves that require grad, cast for the lower
        # list, reused until the outermost autocast closes (torch's cast cache; keyed by the
        # tensor alone, as torch's is)
        self.cache: dict = {}
        self.nesting = 0
        self.held_off = 0  # > 0 while a casted op runs (its inner calls are not cast again)


state = _State()


def get_dtype(device_type: str):
    dtype = state.dtypes.get(device_type) or _DEFAULT_DTYPES.get(device_type)
    if dtype is None:
        raise RuntimeError("unsupported scalarType")
    return dtype


def is_enabled(device_type: str) -> bool:
    if device_type not in AVAILABLE:
        raise RuntimeError(_NO_KEY)
    return state.enabled.get(device_type, False)


def set_enabled(device_type: str, enabled: bool) -> None:
    if device_type not in AVAILABLE:
        raise RuntimeError(_NO_KEY)
    was = state.enabled.get(device_type, False)
    state.enabled[device_type] = bool(enabled)
    if device_type != "cpu" or was == bool(enabled):
        return
    me = threading.get_ident()
    with _threads_lock:
        if enabled:
            threads_on.append(me)
        elif me in threads_on:
            threads_on.remove(me)


def cpu_on() -> bool:
    """CPU autocast is on in this thread and no listed op is running."""
    return state.enabled.get("cpu", False) and not state.held_off


class _HeldOff:
    """Context manager: listed ops run uncast in this thread while it is open (a casted op's
    inner calls; the recurrent layers torch runs as one kernel)."""

    __slots__ = ()

    def __enter__(self) -> None:
        state.held_off += 1

    def __exit__(self, *exc) -> None:
        state.held_off -= 1


HELD_OFF = _HeldOff()


# ---------------------------------------------------------------------------------------------
# casting
# ---------------------------------------------------------------------------------------------
def _float_arrays(args: tuple, kwargs: dict):
    for value in (*args, *kwargs.values()):
        items = value if isinstance(value, (list, tuple)) else (value,)
        for item in items:
            if isinstance(item, Tensor) and item._data.dtype.kind in "fV":
                yield item._data.dtype


def _convert(value, target: np.dtype, which: Callable[[np.dtype], bool], cache: dict = None):
    if isinstance(value, Tensor):
        dtype = value._data.dtype
        if dtype == target or dtype.kind not in "fV" or not which(dtype):
            return value
        if cache is not None and dtype == _F32 and value._requires_grad and (
                value._grad_fn is None and value._base is None):
            kept = cache.get(id(value))
            if kept is not None and kept[0] is value:
                return kept[1]
            cast = _to(value, _dtype.from_numpy_dtype(target))
            cache[id(value)] = (value, cast)
            return cast
        return _to(value, _dtype.from_numpy_dtype(target))
    if isinstance(value, (list, tuple)) and any(isinstance(v, Tensor) for v in value):
        return type(value)(_convert(v, target, which, cache) for v in value)
    return value


def clear_cache() -> None:
    state.cache.clear()


def _to(tensor: Tensor, dtype) -> Tensor:
    method = Tensor.to
    return getattr(method, "__wrapped__", method)(tensor, dtype)


def _not_double(dtype: np.dtype) -> bool:
    return dtype != _F64


def _any(dtype: np.dtype) -> bool:
    return True


def _promoted(args: tuple, kwargs: dict, low: np.dtype) -> np.dtype:
    widest = low
    for dtype in _float_arrays(args, kwargs):
        if dtype == _F64:
            widest = _F64
        elif dtype == _F32:
            if widest != _F64:
                widest = _F32
        elif dtype != low:
            raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")
    return widest


def call(policy, fn: Callable, args: tuple, kwargs: dict) -> Any:
    """``fn`` under this thread's CPU autocast: its inputs cast as ``policy`` says, then run
    with autocast held off (the op's own inner calls are not cast again)."""
    if not cpu_on() or kwargs.get("out") is not None:  # torch casts no out= variant
        return fn(*args, **kwargs)
    if not isinstance(policy, str):
        try:
            policy = policy(*args, **kwargs)
        except TypeError:  # arguments the op itself refuses, with its own message
            policy = None
        if policy is None:
            return fn(*args, **kwargs)
    if policy == LOWER_RESULT:
        state.held_off += 1
        try:
            result = fn(*args, **kwargs)
        finally:
            state.held_off -= 1
        return _to(result, get_dtype("cpu"))
    low = _numpy(get_dtype("cpu"))
    if policy == LOWER:
        target = low
    elif policy == FLOAT32:
        target = _F32
    else:
        target = _promoted(args, kwargs, low)
    # float64 is never narrowed; it is widened to only by the promote list's float64
    which = _any if target == _F64 else _not_double
    # only the lower list's casts are kept, and only where they carry a graph (torch makes a
    # fresh cast under no_grad)
    cache = (state.cache if policy == LOWER and state.cache_enabled and grad_state.enabled
             and not grad_state.inference else None)
    args = tuple(_convert(a, target, which, cache) for a in args)
    kwargs = {k: _convert(v, target, which, cache) for k, v in kwargs.items()}
    state.held_off += 1
    try:
        return fn(*args, **kwargs)
    finally:
        state.held_off -= 1


# ---------------------------------------------------------------------------------------------
# the lists (torch-level names, as ``wrap`` sees them)
# ---------------------------------------------------------------------------------------------
def _one_dtype(*args, **kwargs):
    """A composite of the lower list that checks its operands share a dtype before it reaches
    a product (``inner``, ``tensordot``, ``chain_matmul``): mixed operands raise as without
    autocast."""
    return LOWER if len(set(_float_arrays(args, kwargs))) <= 1 else None


def _vector_pair(a, b) -> bool:
    return isinstance(a, Tensor) and isinstance(b, Tensor) and a.dim() <= 1 and b.dim() <= 1


def _inner(input, other, *rest, **kwargs):
    return None if _vector_pair(input, other) else _one_dtype(input, other)


def _tensordot(a, b, *rest, **kwargs):
    dims = rest[0] if rest else kwargs.get("dims", 2)
    if _vector_pair(a, b) and dims != 0:
        return None
    return _one_dtype(a, b)


def _einsum(equation, *operands, **kwargs):
    """A product (two operands or more, some index summed) runs as a batched matmul."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str) or len(operands) < 2:
        return None
    inputs, _, output = equation.replace(" ", "").partition("->")
    if not _:
        return LOWER if any(inputs.count(c) > 1 for c in set(inputs) if c.isalpha()) else None
    summed = set(c for c in inputs if c.isalpha()) - set(output)
    return LOWER if summed else None


def _pad(input, pad, mode="constant", value=None):
    """Replication padding and 1-d/2-d reflection padding are on the float32 list (3-d
    reflection padding is not)."""
    if mode == "replicate" or mode == "reflect" and len(pad) <= 4:
        return FLOAT32
    return None


def _matrix_power(input, n, *rest, **kwargs):
    """Products from the second power on (an inverse first for negative ones)."""
    return LOWER if isinstance(n, int) and abs(n) >= 2 else None


def _pinv(input, *args, **kwargs):
    # torch: an SVD in float32, then a product in the autocast dtype; other dtypes as they are
    is_float32 = isinstance(input, Tensor) and input._data.dtype == _F32
    return LOWER_RESULT if is_float32 else None


def _local_response_norm(input, *args, **kwargs):
    # torch divides by an average pool: 3-d pooling (float32 list) from 4-d inputs on
    return FLOAT32 if isinstance(input, Tensor) and input.dim() > 3 else None


POLICIES: dict = {name: LOWER for name in (
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "conv_tbc", "linear", "matmul", "__matmul__", "__rmatmul__", "mm", "bmm", "addmm",
    "baddbmm", "addbmm", "prelu", "scaled_dot_product_attention", "linalg_matmul",
    "linalg_vecdot",
    # torch composes it of listed ops (projections, bmm or fused attention): every floating
    # input ends in the autocast dtype, the float mask too (baddbmm's or attention's operand)
    "multi_head_attention_forward",
    # the base grid times theta^T is a batched product in torch
    "affine_grid")}
POLICIES.update({name: _one_dtype for name in ("chain_matmul", "linalg_multi_dot")})
POLICIES.update(inner=_inner, tensordot=_tensordot, einsum=_einsum, pad=_pad,
                matrix_power=_matrix_power, linalg_matrix_power=_matrix_power,
                linalg_pinv=_pinv, local_response_norm=_local_response_norm)
POLICIES.update({name: FLOAT32 for name in (
    "cdist", "prod", "quantile", "nanquantile", "trace", "inverse", "cholesky",
    "cholesky_inverse", "cholesky_solve", "pinverse", "triangular_solve", "qr", "svd", "geqrf",
    "orgqr", "ormqr", "lu_solve", "linalg_cholesky", "linalg_cholesky_ex", "linalg_inv",
    "linalg_inv_ex", "linalg_det", "linalg_slogdet", "linalg_qr", "linalg_svd", "linalg_svdvals",
    "linalg_eig", "linalg_eigvals", "linalg_eigh", "linalg_eigvalsh", "linalg_solve",
    "linalg_lstsq", "linalg_matrix_rank", "linalg_lu_solve", "linalg_lu_factor",
    "linalg_householder_product", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
    "soft_margin_loss", "kl_div", "margin_ranking_loss", "hinge_embedding_loss",
    "cosine_embedding_loss", "triplet_margin_loss", "poisson_nll_loss", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "cross_entropy", "nll_loss", "multi_margin_loss",
    "multilabel_margin_loss", "ctc_loss", "avg_pool3d", "max_pool3d", "adaptive_avg_pool3d",
    "adaptive_max_pool3d", "max_unpool1d", "max_unpool2d", "max_unpool3d",
    "fractional_max_pool2d", "linalg_solve_triangular",
    "fractional_max_pool3d", "grid_sample")})
POLICIES.update({name: PROMOTE for name in ("cat", "stack", "index_copy")})
