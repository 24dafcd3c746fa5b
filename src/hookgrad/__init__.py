"""hookgrad: a define-by-run autograd engine on NumPy whose every step is visible through hooks.

``import hookgrad as torch`` runs ordinary small PyTorch programs.
"""
import types as _types

from . import _allocator, _dtype
from . import overrides as _overrides
from .ops import _out
from . import _parallel
from ._dtype import (bfloat16, bool_ as bool, can_cast, double, dtype, float, float16, float32,  # noqa: A004
                     float64, get_default_dtype, half, int, int8, int16, int32, int64, long,
                     promote_types, result_type, set_default_dtype, short, uint8)
from ._memory_format import (channels_last, channels_last_3d, contiguous_format, memory_format,
                             preserve_format)
from .serialization import load, save
from .tensor import Size, Tensor
from . import storage
from .storage import TypedStorage, UntypedStorage, is_storage
from .storage import (BFloat16Storage, BoolStorage, ByteStorage, CharStorage,  # noqa: F401
                      DoubleStorage, FloatStorage, HalfStorage, IntStorage, LongStorage,
                      ShortStorage)
from ._tensor_str import get_printoptions, printoptions, set_printoptions
from . import _tensor_methods  # noqa: F401  (binds Tensor methods)
from . import autograd
from . import nn, utils  # noqa: E402  (nn subclasses Tensor: after it is built)
from . import optim
from .nn.ops.aten import (adaptive_avg_pool1d, adaptive_max_pool1d, addmm,  # noqa: E402
                          avg_pool1d, baddbmm, batch_norm, bilinear,
                          binary_cross_entropy_with_logits, channel_shuffle, constant_pad_nd,
                          conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d,
                          conv_transpose3d, convolution, cosine_embedding_loss,
                          embedding, group_norm, hinge_embedding_loss, instance_norm, kl_div,
                          layer_norm, margin_ranking_loss, max_pool1d, max_pool1d_with_indices,
                          max_pool2d, max_pool3d, native_channel_shuffle, pixel_shuffle,
                          pixel_unshuffle, poisson_nll_loss, prelu, rms_norm,
                          triplet_margin_loss, conv_tbc)
from .nn.ops.weight_norm import _weight_norm, norm_except_dim  # noqa: E402
from .nn.ops.ctc import ctc_loss_enum as ctc_loss  # noqa: E402
from .autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .autograd.grad_mode import is_inference_mode_enabled
from .ops.creation import (arange, as_tensor, asarray, empty, empty_like, empty_strided, eye,
                           from_numpy, full, full_like, linspace, logspace, ones, ones_like,
                           tensor, zeros, zeros_like)
from ._device import device, get_default_device, set_default_device
from ._finfo import finfo, iinfo
from ._generator import (default_generator, Generator, get_rng_state, initial_seed,
                         manual_seed, seed, set_rng_state)
from .ops.random import (bernoulli, multinomial, normal, poisson, rand, rand_like, randint,
                         randint_like, randn, randn_like, randperm)
from .ops.random_gamma import (_dirichlet_grad, _sample_dirichlet, _standard_gamma,
                               _standard_gamma_grad, binomial)
from . import backends, cuda, random, special
from .ops.indexing import index_put
from .ops.einsum import einsum
from .ops.linalg import bmm, dot, matmul, mm, mv
from .ops.linalg import namespace as linalg
from .ops.comparison import (allclose, bitwise_and, bitwise_left_shift, bitwise_not, bitwise_or,
                            bitwise_right_shift, bitwise_xor, eq, equal, ge, greater,
                            greater_equal, gt, isclose, isfinite, isinf, isnan, le, less,
                            less_equal, logical_and, logical_not, logical_or, logical_xor, lt, ne,
                            not_equal)
from .ops.pointwise import (abs, absolute, add, ceil, clamp, clamp_max, clamp_min, clip, cos, div,
                            divide, erf, exp, floor, floor_divide, fmax, fmin, log, log1p,
                            masked_fill, maximum, minimum, mul, multiply, neg, negative, pow,
                            reciprocal, remainder, round, rsqrt, rsub, sgn, sigmoid, sign, sin,
                            sqrt, square, sub, subtract, tanh, true_divide, trunc, where)
from .ops.reduce import (all, amax, amin, any, argmax, argmin, cumsum,  # noqa: A004
                         log_softmax, logsumexp, max, mean, min, prod, return_types, softmax,
                         std, sum, var)
from .ops.gather_scatter import (gather, index_add, index_select, scatter, scatter_add,
                                 take_along_dim)
from .ops.join import (cat, chunk, concat, concatenate, hstack, split, split_with_sizes, stack,
                       unbind, unsafe_chunk, unsafe_split, unsafe_split_with_sizes, vstack)
from .ops.clone import fill
from .ops.put import put
from .ops.histogram import histogram
from .ops.numeric_gradient import gradient
from .ops.storage_methods import nonzero_static
from .ops.real_only import (adjoint, angle, conj, conj_physical, conj_physical_, imag, is_conj,
                            is_neg, isreal, real, resolve_conj, resolve_neg, scalar_tensor)
from .ops.windows import (bartlett_window, blackman_window, hamming_window, hann_window,
                          kaiser_window)
from .ops.shape import flip, roll
from .ops.views import (flatten, moveaxis, movedim, narrow, permute, reshape, select, squeeze,
                        swapaxes, swapdims, t, transpose, unflatten, unsqueeze)
from .ops.activation import gelu, relu, silu, threshold, threshold_
from .ops.activation_extra import celu, celu_, hardshrink, selu, selu_
from .nn.ops.cdist import cdist, pdist
from .nn.ops.distance import cosine_similarity, pairwise_distance
from .nn.ops.dropout import alpha_dropout, feature_alpha_dropout
from .nn.ops.rrelu import rrelu, rrelu_
from .nn.ops.rnn import (gru, gru_cell, lstm, lstm_cell, rnn_relu, rnn_relu_cell,  # noqa: E402
                         rnn_tanh, rnn_tanh_cell)
from .nn.ops.dropout_aten import (alpha_dropout_, dropout, dropout_,  # noqa: E402
                                  feature_alpha_dropout_, feature_dropout, feature_dropout_,
                                  native_dropout)
from .nn.ops.embedding_aten import embedding_bag, embedding_renorm_  # noqa: E402
from .nn.ops.grid_sample import (affine_grid_generator, grid_sampler,  # noqa: E402
                                 grid_sampler_2d, grid_sampler_3d)
from .nn.ops.native_norms import (batch_norm_backward_elemt,  # noqa: E402
                                  batch_norm_backward_reduce, batch_norm_elemt,
                                  batch_norm_gather_stats, batch_norm_gather_stats_with_counts,
                                  batch_norm_stats, batch_norm_update_stats, native_batch_norm,
                                  native_group_norm, native_layer_norm, native_norm)
from .ops.pointwise_binary import (addcdiv, addcmul, arctan2, atan2, copysign, fmod, hypot, lerp,
                              logaddexp, xlogy)
from .ops.diagonal import diag, diag_embed, diagflat, diagonal, trace, tril, triu
from .ops.strided import as_strided
from .ops.pointwise_unary import (acos, acosh, arccos, arccosh, arcsin, arcsinh, arctan, arctanh,
                             asin, asinh, atan, atanh, cosh, deg2rad, exp2, expm1, frac, log2,
                             log10, logit, nan_to_num, positive, rad2deg, sinc, sinh, tan)
from .ops.masked import index_fill, masked_scatter, masked_select
from .ops.scans import (aminmax, cummax, cummin, cumprod, diff, logcumsumexp, nanmean, nansum,
                        std_mean, var_mean)
from .ops.searching import (argwhere, bincount, bucketize, count_nonzero, isin, nonzero,
                            searchsorted, unique, unique_consecutive)
from .ops.sorting import argsort, kthvalue, median, mode, msort, nanmedian, sort, topk
from .ops.structure import (atleast_1d, atleast_2d, atleast_3d, block_diag, broadcast_shapes,
                            broadcast_tensors, broadcast_to, cartesian_prod, column_stack,
                            combinations, cross, dstack, ger, kron, linalg_cross, meshgrid, outer,
                            ravel,
                            repeat_interleave, rot90, row_stack, take, tensor_split, tile)
from .ops.pointwise_more import (erfc, float_power, frexp, gcd, heaviside, isneginf, isposinf,
                                 lcm, ldexp, logaddexp2, nextafter, signbit)
from .ops.bessel_erfinv import erfinv, i0, i0_
from .ops.igamma import igamma, igammac
from .ops.linalg_det import det, inverse, logdet, slogdet
from .ops.linalg_fused import addbmm, addmv, addmv_, addr, dist, renorm
from .ops.products import inner, tensordot, vdot
from .ops.scatter_more import diagonal_scatter, index_copy, select_scatter, slice_scatter
from .ops.scatter_reduce import scatter_reduce
from .ops.view_copies import (alias_copy, as_strided_copy, detach_copy, diagonal_copy,
                              expand_copy, narrow_copy, permute_copy, select_copy, slice_copy,
                              split_copy, split_with_sizes_copy, squeeze_copy, t_copy,
                              transpose_copy, unbind_copy, unfold_copy, unsqueeze_copy,
                              view_copy)
from .ops.index_reduce import index_reduce
from .ops.creation_extra import (empty_permuted, from_dlpack, from_file, frombuffer, range,  # noqa: A004
                                 to_dlpack)
from .ops.strided_scatter import as_strided_, as_strided_scatter, resize_as_, slice_inverse
from .ops.histogramdd import histogramdd
from .ops.segment_reduce import segment_reduce
from ._flags import (are_deterministic_algorithms_enabled, get_deterministic_debug_mode,
                     get_float32_matmul_precision, get_num_interop_threads, init_num_threads,
                     is_deterministic_algorithms_warn_only_enabled, is_warn_always_enabled,
                     set_deterministic_debug_mode, set_float32_matmul_precision,
                     set_flush_denormal, set_num_interop_threads, set_warn_always,
                     use_deterministic_algorithms)
from .autograd.anomaly_mode import (is_anomaly_check_nan_enabled, is_anomaly_enabled,
                                    set_anomaly_enabled)
from ._introspection import get_device, is_distributed, typename
from ._compile import compile  # noqa: A004
from .control_flow import cond, while_loop
from .ops.special import digamma, lgamma, mvlgamma, polygamma
from .ops.shape_more import (dsplit, fliplr, flipud, hsplit, tril_indices, triu_indices,
                             unravel_index, vander, vsplit)
from .ops.statistics import (corrcoef, cov, cumulative_trapezoid, histc, nanquantile, quantile,
                             trapezoid, trapz)
from .ops._args import install_axis_alias as _install_axis_alias
from .ops.alias import TOP_LEVEL_METHODS as _TOP_LEVEL_METHODS, method_function as _method_function

globals().update({_name: _method_function(_name) for _name in _TOP_LEVEL_METHODS
                  if _name not in globals()})

linalg.cross = linalg_cross
_tensor_methods.install({"prelu": prelu})  # nn's op, bound once nn is built
linalg.det, linalg.slogdet, linalg.inv = det, slogdet, inverse
from .ops.linalg_det import LinAlgError as _LinAlgError  # noqa: E402
linalg.LinAlgError = _LinAlgError
from .ops import linalg_decomp as _decomp, linalg_norms as _norms  # noqa: E402
from .ops import linalg_householder as _householder  # noqa: E402
from .ops import linalg_lu as _lu, linalg_pinv as _pinv, linalg_solve as _solve  # noqa: E402
from .ops import linalg_ldl as _ldl  # noqa: E402
for _module, _names in ((_norms, "matrix_norm norm vecdot multi_dot matrix_power diagonal cond "
                                 "matrix_rank tensorinv tensorsolve vander"),
                        (_solve, "solve solve_ex solve_triangular inv_ex cholesky cholesky_ex"),
                        (_decomp, "svd svdvals eigh eigvalsh qr"),
                        (_lu, "lu_factor lu_factor_ex lu lu_solve"),
                        (_ldl, "ldl_factor ldl_factor_ex ldl_solve"),
                        (_pinv, "pinv lstsq matrix_exp"),
                        (_householder, "householder_product")):
    for _name in _names.split():
        setattr(linalg, _name, _out.accept_out(getattr(_module, _name), f"linalg_{_name}"))
from .ops.linalg_norms import torch_norm as norm  # noqa: E402
from .ops.linalg_norms import (chain_matmul, frobenius_norm, matrix_power,  # noqa: E402
                               nuclear_norm)
from .ops.linalg_solve import (cholesky_inverse, cholesky_solve, triangular_solve,  # noqa: E402
                               cholesky_old as cholesky)
from .ops.linalg_decomp import qr_old as qr, svd_old as svd  # noqa: E402
from .ops.linalg_lu import lu_old as lu, lu_solve_old as lu_solve, lu_unpack  # noqa: E402
from .ops.linalg_pinv import matrix_exp, pinverse  # noqa: E402
from .ops.linalg_householder import geqrf, orgqr, ormqr  # noqa: E402
_install_axis_alias(globals())  # x.sum(axis=1), torch.cat(ts, axis=0): numpy's name for dim
_allocator.keep_freed_memory()  # a step's freed arrays stay mapped for the next step

FloatTensor = DoubleTensor = LongTensor = Tensor  # isinstance checks in old code
strided = "torch.strided"
__version__ = "0.1.0"


def is_tensor(obj) -> "bool":
    """True when ``obj`` is a hookgrad Tensor (or Parameter)."""
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> "int":
    """The number of elements of ``input``."""
    return input.numel()


def clone(input: Tensor, *, memory_format=preserve_format) -> Tensor:  # noqa: F811
    """A copy of ``input`` that stays in the graph (its gradient flows back to ``input``), laid
    out in ``memory_format``."""
    return input.clone(memory_format=memory_format)


def is_complex(input: Tensor) -> "bool":
    """False: hookgrad has no complex dtypes."""
    return False


def is_same_size(input: Tensor, other: Tensor) -> "bool":
    """True when ``other`` has ``input``'s shape."""
    return input.is_same_size(other)


def is_signed(input: Tensor) -> "bool":
    """True when ``input``'s dtype holds negative values."""
    return input.is_signed()


def is_nonzero(input: Tensor) -> "bool":
    """The truth of a one-element tensor; more or fewer elements raise."""
    return input.is_nonzero()


def is_floating_point(input: Tensor) -> "bool":
    """True when ``input`` has a floating dtype."""
    return input.is_floating_point()


def is_inference(input: "Tensor") -> "bool":
    """Whether ``input`` is an inference tensor (made inside ``inference_mode``)."""
    return input.is_inference()


def set_num_threads(n: "int") -> None:
    """Threads for hookgrad's intra-op work (erf, GELU, attention, large matrix products,
    run with NumPy's OpenBLAS on one thread; convolution's slices of the batch, max pooling's
    planes and ReLU's backward, each slice's GEMM on one OpenBLAS thread when threadpoolctl is
    installed); other NumPy calls keep BLAS's own count."""
    _parallel.set_num_threads(n)


def get_num_threads() -> "int":
    """Threads for intra-op work: ``OMP_NUM_THREADS`` when set, else the number of cores,
    until ``set_num_threads`` says otherwise."""
    return _parallel.get_num_threads()


from . import amp, cpu  # noqa: E402,F401
from .amp.autocast_mode import (autocast, autocast_decrement_nesting,  # noqa: E402,F401
                                autocast_increment_nesting, clear_autocast_cache,
                                get_autocast_cpu_dtype, get_autocast_dtype,
                                get_autocast_gpu_dtype, is_autocast_cache_enabled,
                                is_autocast_cpu_enabled, is_autocast_enabled,
                                set_autocast_cache_enabled, set_autocast_cpu_dtype,
                                set_autocast_cpu_enabled, set_autocast_dtype,
                                set_autocast_enabled)
from . import _autocast_state  # noqa: E402

# linalg's functions on autocast's lists go through the seam as torch's (linalg_inv ...) do
for _name in list(vars(linalg)):
    if f"linalg_{_name}" in _autocast_state.POLICIES and callable(getattr(linalg, _name)):
        setattr(linalg, _name, _overrides.wrap(getattr(linalg, _name), f"linalg_{_name}"))

# every torch-level function is visible to an active TorchFunctionMode; plumbing is not
_PLUMBING = {"load", "save", "get_printoptions", "set_printoptions", "is_grad_enabled",
             "is_inference_mode_enabled", "get_default_dtype", "set_default_dtype",
             "promote_types", "can_cast", "get_default_device", "set_default_device",
             "default_generator", "get_rng_state", "set_rng_state", "initial_seed",
             "manual_seed", "seed", "set_num_threads", "get_num_threads", "is_tensor",
             "broadcast_shapes", "use_deterministic_algorithms",
             "are_deterministic_algorithms_enabled",
             "is_deterministic_algorithms_warn_only_enabled", "get_deterministic_debug_mode",
             "set_deterministic_debug_mode", "get_float32_matmul_precision",
             "set_float32_matmul_precision", "get_num_interop_threads",
             "set_num_interop_threads", "init_num_threads", "set_warn_always",
             "is_warn_always_enabled", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
             "set_anomaly_enabled", "set_flush_denormal", "typename", "is_storage", "compile",
             "cond", "while_loop", "vmap", "to_dlpack",
             "is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype",
             "set_autocast_dtype", "get_autocast_cpu_dtype", "set_autocast_cpu_dtype",
             "get_autocast_gpu_dtype", "is_autocast_cpu_enabled", "set_autocast_cpu_enabled",
             "is_autocast_cache_enabled", "set_autocast_cache_enabled", "clear_autocast_cache",
             "autocast_increment_nesting", "autocast_decrement_nesting"}
for _name, _value in list(globals().items()):
    if (_name[0] != "_" and _name not in _PLUMBING and isinstance(_value, _types.FunctionType)):
        # a function kept under another name (cholesky_old) is found on autocast's lists
        # by its torch name
        _renamed = _name if (_name in _autocast_state.POLICIES
                             and _value.__name__ != _name) else None
        globals()[_name] = _overrides.wrap(_out.accept_out(_value, _name), _renamed)
del _name, _value, _renamed

from . import func  # noqa: E402  (torch.func: transforms over the whole public API above)
from .func import vmap  # noqa: E402


def __getattr__(name: str):
    """``hookgrad.distributions`` is imported on first use: it is built on the whole public API
    above and is a third of the import time a training script that never samples would pay."""
    if name == "distributions":
        import importlib
        return importlib.import_module(".distributions", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
