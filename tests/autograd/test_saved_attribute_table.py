"""Every op family's node shows torch's saved attributes: for the same graph built in torch and
in hookgrad, the node's name, the names of its ``_saved_*`` attributes and each value agree.

Values compare by kind: tensors by dtype, shape and values; ints, floats, bools, strings, None
and tuples exactly (type included); torch.Size as a tuple; dtypes, layouts and devices by name.
"""
import math

import numpy as np
import pytest
import torch

import hookgrad

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4))
IMAGE = RNG.standard_normal((2, 3, 5, 5))
SEQUENCE = RNG.standard_normal((2, 3, 6))
TARGET = RNG.standard_normal((3, 4))
LABELS = np.array([1, 0, 3])
INDEX = np.array([[0, 2], [1, 0], [3, 3]])


def _x(lib):
    return lib.tensor(X, requires_grad=True)


def _setitem(lib, key):
    """``y[key] = value`` on a non-leaf: an in-place index_put on y itself."""
    y = _x(lib) * 1
    y[key] = lib.tensor(0.5, dtype=lib.float64, requires_grad=True)
    return y


def _f(lib):
    return lib.nn.functional


CASES = {
    # -- reductions
    "sum": lambda lib: _x(lib).sum(),
    "sum_dim": lambda lib: _x(lib).sum(1),
    "sum_negative_dim": lambda lib: _x(lib).sum(-1),
    "sum_dims": lambda lib: _x(lib).sum((-1, 0), keepdim=True),
    "sum_dim_none": lambda lib: _x(lib).sum(dim=None),
    "sum_empty_dims": lambda lib: _x(lib).sum(()),
    "sum_dtype": lambda lib: _x(lib).sum(-1, dtype=lib.float32),
    "mean": lambda lib: _x(lib).mean(),
    "mean_negative_dim": lambda lib: _x(lib).mean(-1),
    "mean_dim_none": lambda lib: _x(lib).mean(dim=None),
    "mean_keepdim": lambda lib: _x(lib).mean([0, -1], keepdim=True),
    "nansum": lambda lib: lib.nansum(_x(lib), -1),
    "nansum_all": lambda lib: lib.nansum(_x(lib)),
    "nansum_empty_dims": lambda lib: lib.nansum(_x(lib), ()),
    "nanmean": lambda lib: lib.nanmean(_x(lib), -1),
    "amax": lambda lib: _x(lib).amax(-1),
    "amax_all": lambda lib: _x(lib).amax(),
    "amin_dims": lambda lib: _x(lib).amin((0, -1), keepdim=True),
    "max_all": lambda lib: _x(lib).max(),
    "max_dim": lambda lib: _x(lib).max(-1)[0],
    "min_dim_keepdim": lambda lib: _x(lib).min(0, keepdim=True)[0],
    "aminmax": lambda lib: lib.aminmax(_x(lib), dim=-1)[0],
    "aminmax_all": lambda lib: lib.aminmax(_x(lib))[1],
    "amax_empty_dims": lambda lib: _x(lib).amax(()),
    "std": lambda lib: _x(lib).std(),
    "std_dim": lambda lib: _x(lib).std(-1),
    "std_correction": lambda lib: _x(lib).std(-1, correction=0, keepdim=True),
    "var": lambda lib: _x(lib).var(),
    "var_dim": lambda lib: _x(lib).var(-1),
    "var_dims_unbiased": lambda lib: _x(lib).var((0, 1), unbiased=False),
    "var_dim_none": lambda lib: lib.var(_x(lib), dim=None),
    "var_empty_dims": lambda lib: _x(lib).var(()),
    "var_bool_overload": lambda lib: _x(lib).var(False),
    "std_mean": lambda lib: lib.std_mean(_x(lib), -1)[0],
    "var_mean": lambda lib: lib.var_mean(_x(lib), -1)[0],
    "var_mean_all": lambda lib: lib.var_mean(_x(lib))[0],
    "logsumexp": lambda lib: lib.logsumexp(_x(lib), -1),
    "logsumexp_dims": lambda lib: lib.logsumexp(_x(lib), (0, 1), keepdim=True),
    "prod": lambda lib: _x(lib).prod(),
    "prod_dim": lambda lib: _x(lib).prod(-1),
    "median": lambda lib: _x(lib).median(),
    "median_dim": lambda lib: _x(lib).median(-1)[0],
    "nanmedian_dim": lambda lib: _x(lib).nanmedian(-1)[0],
    "mode": lambda lib: _x(lib).mode(-1)[0],
    "kthvalue": lambda lib: _x(lib).kthvalue(2, -1)[0],
    "kthvalue_keepdim": lambda lib: _x(lib).kthvalue(1, 0, True)[0],
    "nanmedian": lambda lib: _x(lib).nanmedian(),
    "norm": lambda lib: _x(lib).norm(dim=-1),
    "vector_norm": lambda lib: lib.linalg.vector_norm(_x(lib), 3, -1),
    "dist": lambda lib: lib.dist(_x(lib), lib.tensor(TARGET), 3),
    "renorm": lambda lib: _x(lib).renorm(2, -1, 1.0),
    # -- scans
    "cumsum": lambda lib: _x(lib).cumsum(-1),
    "cumsum_positive": lambda lib: _x(lib).cumsum(0),
    "cumprod": lambda lib: _x(lib).cumprod(-1),
    "cumsum_inplace": lambda lib: (_x(lib) * 1).cumsum_(-1),
    "cumprod_inplace": lambda lib: (_x(lib) * 1).cumprod_(-2),
    "cummax": lambda lib: _x(lib).cummax(-1)[0],
    "cumsum_dtype": lambda lib: _x(lib).cumsum(-2, dtype=lib.float32),
    "cummin": lambda lib: _x(lib).cummin(0)[0],
    "logcumsumexp": lambda lib: _x(lib).logcumsumexp(-1),
    # -- softmax family
    "softmax": lambda lib: _x(lib).softmax(-1),
    "softmax_positive": lambda lib: _x(lib).softmax(0),
    "log_softmax": lambda lib: _x(lib).log_softmax(-1),
    "softmin": lambda lib: _f(lib).softmin(_x(lib), -1),
    "glu": lambda lib: _f(lib).glu(_x(lib), -1),
    # -- sorting and selection
    "sort": lambda lib: _x(lib).sort(-1)[0],
    "sort_descending": lambda lib: _x(lib).sort(0, descending=True)[0],
    "msort": lambda lib: lib.msort(_x(lib)),
    "topk": lambda lib: _x(lib).topk(2, -1)[0],
    "sort_stable": lambda lib: _x(lib).sort(dim=-1, stable=True)[0],
    "median_keepdim": lambda lib: _x(lib).median(-2, keepdim=True)[0],
    "topk_smallest": lambda lib: _x(lib).topk(2, 0, largest=False)[0],
    # -- joins and splits
    "cat": lambda lib: lib.cat([_x(lib), _x(lib)], -1),
    "cat_positive": lambda lib: lib.cat([_x(lib), _x(lib)]),
    "stack": lambda lib: lib.stack([_x(lib), _x(lib)], -1),
    "stack_positive": lambda lib: lib.stack([_x(lib), _x(lib)], 1),
    "vstack": lambda lib: lib.vstack([_x(lib), _x(lib)]),
    "hstack": lambda lib: lib.hstack([_x(lib), _x(lib)]),
    "split": lambda lib: _x(lib).split(2, -1)[0],
    "split_sizes": lambda lib: _x(lib).split([1, 3], -1)[1],
    "chunk": lambda lib: _x(lib).chunk(2, 0)[0],
    "chunk_negative": lambda lib: _x(lib).chunk(3, -1)[1],
    "unsafe_split": lambda lib: lib.unsafe_split(_x(lib), 2, -1)[0],
    "unsafe_chunk": lambda lib: lib.unsafe_chunk(_x(lib), 3, -1)[1],
    "unsafe_split_with_sizes": lambda lib: lib.unsafe_split_with_sizes(_x(lib), [1, 3], -1)[1],
    "split_with_sizes": lambda lib: lib.split_with_sizes(_x(lib), [1, 3], -1)[0],
    "unbind": lambda lib: _x(lib).unbind(-1)[0],
    "tensor_split": lambda lib: lib.tensor_split(_x(lib), 2, -1)[0],
    # -- shape and views
    "view": lambda lib: _x(lib).view(4, 3),
    "reshape": lambda lib: _x(lib).reshape(-1),
    "flatten": lambda lib: _x(lib).flatten(),
    "unflatten": lambda lib: _x(lib).unflatten(-1, (2, 2)),
    "transpose": lambda lib: _x(lib).transpose(0, -1),
    "swapdims": lambda lib: _x(lib).swapdims(-1, -2),
    "mT": lambda lib: _x(lib).mT,
    "t": lambda lib: _x(lib).t(),
    "permute": lambda lib: _x(lib).permute(-1, 0),
    "movedim": lambda lib: _x(lib).movedim(0, -1),
    "squeeze": lambda lib: _x(lib)[None].squeeze(0),
    "squeeze_negative": lambda lib: _x(lib)[None].squeeze(-3),
    "squeeze_dims": lambda lib: _x(lib)[None].squeeze((0, -1)),
    "squeeze_all": lambda lib: _x(lib)[None].squeeze(),
    "unsqueeze": lambda lib: _x(lib).unsqueeze(-1),
    "expand": lambda lib: _x(lib)[None].expand(2, -1, -1),
    "repeat": lambda lib: _x(lib).repeat(2, 1),
    "flip": lambda lib: _x(lib).flip(-1),
    "roll": lambda lib: _x(lib).roll(1, -1),
    "roll_dims": lambda lib: _x(lib).roll((1, -2), (0, -1)),
    "roll_flat": lambda lib: _x(lib).roll(2),
    "flip_dims": lambda lib: _x(lib).flip(0, -1),
    "permute_positive": lambda lib: _x(lib).permute(1, 0),
    "rot90": lambda lib: _x(lib).rot90(1, (0, 1)),
    "narrow": lambda lib: _x(lib).narrow(-1, 1, 2),
    "narrow_negative_start": lambda lib: _x(lib).narrow(-1, -2, 2),
    "select": lambda lib: _x(lib).select(-1, 1),
    "select_negative_index": lambda lib: _x(lib).select(0, -1),
    "getitem_int": lambda lib: _x(lib)[1],
    "getitem_negative_int": lambda lib: _x(lib)[-1],
    "getitem_ellipsis": lambda lib: _x(lib)[..., -2],
    "getitem_none": lambda lib: _x(lib)[None, 1:],
    "slice": lambda lib: _x(lib)[:, 1:3],
    "slice_open_end": lambda lib: _x(lib)[:, -3:],
    "slice_negative_end": lambda lib: _x(lib)[:, :-1],
    "slice_past_end": lambda lib: _x(lib)[1:100],
    "slice_step": lambda lib: _x(lib)[:, ::2],
    "diagonal": lambda lib: _x(lib).diagonal(0, -2, -1),
    "diagonal_offset": lambda lib: _x(lib).diagonal(-1),
    "diag": lambda lib: lib.diag(_x(lib)),
    "diag_negative": lambda lib: lib.diag(_x(lib), -1),
    "diag_vector": lambda lib: lib.diag(_x(lib)[0], 1),
    "diag_embed": lambda lib: lib.diag_embed(_x(lib), -1, -2, -1),
    "diag_embed_positive": lambda lib: lib.diag_embed(_x(lib), 1, 0, 2),
    "diagflat": lambda lib: lib.diagflat(_x(lib), -1),
    "tril": lambda lib: _x(lib).tril(1),
    "triu": lambda lib: _x(lib).triu(-1),
    "unfold": lambda lib: _x(lib).unfold(-1, 2, 1),
    "unfold_positive": lambda lib: _x(lib).unfold(0, 2, 1),
    "rot90_negative": lambda lib: _x(lib).rot90(1, (0, -1)),
    "cross": lambda lib: lib.linalg.cross(_x(lib)[:, :3], _x(lib)[:, :3]),
    "as_strided": lambda lib: _x(lib).as_strided((2, 2), (1, 2)),
    "as_strided_offset": lambda lib: _x(lib).as_strided([2, 2], [1, 2], 1),
    "contiguous_t": lambda lib: _x(lib).t().contiguous(),
    "clone": lambda lib: _x(lib).clone(),
    "to_dtype": lambda lib: _x(lib).to(lib.float32),
    # -- indexing, gather and scatter
    "index_tensor": lambda lib: _x(lib)[lib.tensor([0, 2])],
    "index_select": lambda lib: _x(lib).index_select(-1, lib.tensor([0, 2])),
    "gather": lambda lib: _x(lib).gather(-1, lib.tensor(INDEX)),
    "take_along_dim": lambda lib: lib.take_along_dim(_x(lib), lib.tensor(INDEX), -1),
    "scatter": lambda lib: _x(lib).scatter(-1, lib.tensor(INDEX), 0.5),
    "scatter_src": lambda lib: _x(lib).scatter(-1, lib.tensor(INDEX), _x(lib) * 2),
    "scatter_add": lambda lib: _x(lib).scatter_add(-1, lib.tensor(INDEX), _x(lib) * 2),
    "index_add": lambda lib: _x(lib).index_add(-1, lib.tensor([0, 2]), _x(lib)[:, :2]),
    "scatter_reduce": lambda lib: _x(lib).scatter_reduce(-1, lib.tensor(INDEX), _x(lib) * 2,
                                                         "amax", include_self=False),
    "index_reduce": lambda lib: _x(lib).index_reduce(-1, lib.tensor([0, 2, 0]), _x(lib)[:, :3],
                                                     "prod", include_self=False),
    "index_reduce_inplace": lambda lib: (_x(lib) * 1).index_reduce_(
        0, lib.tensor([1]), _x(lib)[:1] * 2, "amin"),
    "scatter_value_positive": lambda lib: _x(lib).scatter(1, lib.tensor(INDEX), 0.5),
    "gather_positive": lambda lib: _x(lib).gather(0, lib.tensor(INDEX[:2])),
    "index_add_inplace": lambda lib: (_x(lib) * 1).index_add_(-1, lib.tensor([0]),
                                                              _x(lib)[:, :1]),
    "scatter_inplace": lambda lib: (_x(lib) * 1).scatter_(-1, lib.tensor(INDEX), 0.5),
    "triu_inplace": lambda lib: (_x(lib) * 1).triu_(-1),
    "index_fill": lambda lib: _x(lib).index_fill(-1, lib.tensor([0, 2]), 0.5),
    "index_fill_tensor": lambda lib: _x(lib).index_fill(0, lib.tensor([1]), lib.tensor(0.5)),
    "index_copy": lambda lib: _x(lib).index_copy(0, lib.tensor([0, 2]), _x(lib)[:2]),
    "index_copy_source_without_grad": lambda lib: _x(lib).index_copy(
        -1, lib.tensor([3, 0]), lib.tensor(X[:, :2])),
    "index_copy_self_without_grad": lambda lib: lib.tensor(X).index_copy(
        0, lib.tensor([1]), _x(lib)[1:2]),
    "index_copy_zero_dim_source": lambda lib: _x(lib)[0].index_copy(
        0, lib.tensor([2]), lib.tensor(0.5, dtype=lib.float64, requires_grad=True)),
    "index_copy_inplace": lambda lib: (_x(lib) * 1).index_copy_(1, lib.tensor([1]),
                                                                _x(lib)[:, :1]),
    "index_after_slice": lambda lib: _x(lib)[1:, lib.tensor([0, 3])],
    "index_second_dim": lambda lib: _x(lib)[:, lib.tensor([2, 0])],
    "index_two_tensors": lambda lib: _x(lib)[lib.tensor([0, 2]), lib.tensor([1, 1])],
    "index_mask": lambda lib: _x(lib)[lib.tensor(X > 0)],
    "index_row_mask_and_tensor": lambda lib: _x(lib)[lib.tensor([True, False, True]),
                                                     lib.tensor([1, 3])],
    "index_none_ellipsis": lambda lib: _x(lib)[None, ..., lib.tensor([1, 2])],
    "index_int32": lambda lib: _x(lib)[:, lib.tensor([1, 2], dtype=lib.int32)],
    "index_list": lambda lib: _x(lib)[[2, 0]],
    "index_put_accumulate": lambda lib: _x(lib).index_put(
        (lib.tensor([0, 2]), lib.tensor([1, 1])), _x(lib)[0, :2], accumulate=True),
    "index_put_mask": lambda lib: _x(lib).index_put((lib.tensor(X > 0),),
                                                    lib.tensor(0.5, dtype=lib.float64)),
    "index_put_inplace": lambda lib: (_x(lib) * 1).index_put_(
        (lib.tensor([1]), lib.tensor([3])), lib.tensor([0.5], dtype=lib.float64)),
    "setitem_advanced": lambda lib: _setitem(lib, (slice(None), lib.tensor([0, 2]))),
    "setitem_mask": lambda lib: _setitem(lib, lib.tensor(X > 0)),
    "masked_fill": lambda lib: _x(lib).masked_fill(lib.tensor(X > 0), 0.5),
    "masked_select": lambda lib: _x(lib).masked_select(lib.tensor(X > 0)),
    "where": lambda lib: lib.where(lib.tensor(X > 0), _x(lib), 0.0),
    "take": lambda lib: _x(lib).take(lib.tensor([0, 5])),
    "index_put": lambda lib: _x(lib).index_put((lib.tensor([0, 2]),),
                                               lib.tensor(1.0, dtype=lib.float64)),
    # -- pointwise with numbers
    "add_number": lambda lib: _x(lib) + 2,
    "add_alpha": lambda lib: lib.add(_x(lib), _x(lib), alpha=3),
    "mul_number": lambda lib: _x(lib) * 2.5,
    "div_number": lambda lib: _x(lib) / 4,
    "pow_number": lambda lib: _x(lib) ** 3,
    "rpow": lambda lib: 2 ** _x(lib),
    "clamp": lambda lib: _x(lib).clamp(-0.5, 0.5),
    "lerp": lambda lib: lib.lerp(_x(lib), lib.tensor(TARGET), 0.3),
    "addcmul": lambda lib: lib.addcmul(_x(lib), _x(lib), _x(lib), value=0.5),
    "addcdiv": lambda lib: lib.addcdiv(_x(lib), _x(lib), _x(lib) + 5, value=0.5),
    "hardtanh": lambda lib: _f(lib).hardtanh(_x(lib), -0.5, 0.5),
    "leaky_relu": lambda lib: _f(lib).leaky_relu(_x(lib), 0.2),
    "elu": lambda lib: _f(lib).elu(_x(lib), 0.7),
    "celu": lambda lib: _f(lib).celu(_x(lib), 0.7),
    "celu_inplace": lambda lib: _f(lib).celu(_x(lib) * 1, 0.7, inplace=True),
    "elu_inplace": lambda lib: _f(lib).elu(_x(lib) * 1, 0.7, inplace=True),
    "selu": lambda lib: _f(lib).selu(_x(lib)),
    "gelu": lambda lib: _f(lib).gelu(_x(lib)),
    "softplus_default": lambda lib: _f(lib).softplus(_x(lib)),
    "softplus": lambda lib: _f(lib).softplus(_x(lib), 2, 10),
    "threshold": lambda lib: _f(lib).threshold(_x(lib), 0.1, 0.0),
    "gelu_tanh": lambda lib: _f(lib).gelu(_x(lib), approximate="tanh"),
    "hardshrink": lambda lib: _f(lib).hardshrink(_x(lib), 0.3),
    "softshrink": lambda lib: _f(lib).softshrink(_x(lib), 0.3),
    "polygamma": lambda lib: lib.polygamma(1, _x(lib) + 3),
    "polygamma_method": lambda lib: (_x(lib) + 3).polygamma(2),
    "mvlgamma": lambda lib: lib.mvlgamma(_x(lib) + 3, 2),
    "mvlgamma_inplace": lambda lib: (_x(lib) + 3).mvlgamma_(3),
    "nan_to_num": lambda lib: lib.nan_to_num(_x(lib), 1.0),
    "logit": lambda lib: lib.logit(_x(lib).sigmoid(), 1e-3),
    # -- products
    "mm": lambda lib: _x(lib) @ _x(lib).t(),
    "mm_transposed_first": lambda lib: _x(lib).t() @ _x(lib),
    "mm_slices": lambda lib: _x(lib)[:, :2] @ _x(lib)[:2],
    "linear_no_bias": lambda lib: _f(lib).linear(_x(lib), _x(lib)),
    "addmm": lambda lib: lib.addmm(_x(lib)[:, :3], _x(lib), _x(lib).t()[:, :3], beta=0.5,
                                   alpha=2),
    "linear": lambda lib: _f(lib).linear(_x(lib), _x(lib), lib.tensor(X[:, 0])),
    "einsum": lambda lib: lib.einsum("ij,kj->ik", _x(lib), _x(lib)),
    "einsum_batch": lambda lib: lib.einsum("bij,bjk->bki", lib.tensor(IMAGE[0, :, :2, :3],
                                                                      requires_grad=True),
                                           lib.tensor(IMAGE[0, :, :3, :4])),
    "einsum_outer": lambda lib: lib.einsum("i,j->ij", _x(lib)[0], _x(lib)[1]),
    "einsum_trace": lambda lib: lib.einsum("ii", _x(lib)[:, :3]),
    "einsum_diagonal": lambda lib: lib.einsum("ii->i", _x(lib)[:, :3]),
    "einsum_sum": lambda lib: lib.einsum("ij->", _x(lib)),
    "einsum_column_sums": lambda lib: lib.einsum("ij->j", _x(lib)),
    "einsum_ellipsis": lambda lib: lib.einsum("...j,j->...", _x(lib), _x(lib)[0]),
    "einsum_three": lambda lib: lib.einsum("ij,jk,k->i", _x(lib), _x(lib).t(), _x(lib)[:, 0]),
    "einsum_lone_label": lambda lib: lib.einsum("ij,k->i", _x(lib), _x(lib)[0]),
    # -- losses
    "mse_loss": lambda lib: _f(lib).mse_loss(_x(lib), lib.tensor(TARGET)),
    "l1_loss": lambda lib: _f(lib).l1_loss(_x(lib), lib.tensor(TARGET), reduction="sum"),
    "smooth_l1_loss": lambda lib: _f(lib).smooth_l1_loss(_x(lib), lib.tensor(TARGET), beta=0.5),
    "huber_loss": lambda lib: _f(lib).huber_loss(_x(lib), lib.tensor(TARGET), delta=0.5),
    "cross_entropy": lambda lib: _f(lib).cross_entropy(_x(lib), lib.tensor(LABELS)),
    "nll_loss_2d": lambda lib: _f(lib).nll_loss(lib.tensor(IMAGE, requires_grad=True),
                                                lib.tensor(np.zeros((2, 5, 5), np.int64)),
                                                reduction="sum"),
    "mse_loss_none": lambda lib: _f(lib).mse_loss(_x(lib), lib.tensor(TARGET), reduction="none"),
    "nll_loss": lambda lib: _f(lib).nll_loss(_x(lib), lib.tensor(LABELS), ignore_index=0),
    "bce": lambda lib: _f(lib).binary_cross_entropy(_x(lib).sigmoid(),
                                                    lib.tensor(TARGET).sigmoid()),
    "bce_logits": lambda lib: _f(lib).binary_cross_entropy_with_logits(
        _x(lib), lib.tensor(TARGET).sigmoid()),
    "kl_div": lambda lib: _f(lib).kl_div(_x(lib), lib.tensor(TARGET), reduction="batchmean",
                                         log_target=True),
    # -- convolution and pooling
    "conv2d": lambda lib: _f(lib).conv2d(lib.tensor(IMAGE, requires_grad=True),
                                         lib.tensor(IMAGE[:2, :, :3, :3]), stride=2, padding=1),
    "conv1d": lambda lib: _f(lib).conv1d(lib.tensor(SEQUENCE, requires_grad=True),
                                         lib.tensor(SEQUENCE[:, :, :3]),
                                         lib.tensor([0.1, 0.2], dtype=lib.float64), dilation=2),
    "conv2d_same_bias": lambda lib: _f(lib).conv2d(lib.tensor(IMAGE, requires_grad=True),
                                                   lib.tensor(IMAGE[:2, :, :3, :3]),
                                                   lib.tensor([0.1, 0.2], dtype=lib.float64),
                                                   padding="same"),
    "conv_transpose2d": lambda lib: _f(lib).conv_transpose2d(
        lib.tensor(IMAGE, requires_grad=True),
        lib.tensor(IMAGE[:, :, :3, :3].transpose(1, 0, 2, 3).copy()), stride=2, output_padding=1),
    "max_pool2d": lambda lib: _f(lib).max_pool2d(lib.tensor(IMAGE, requires_grad=True), 2),
    "max_pool2d_given": lambda lib: _f(lib).max_pool2d(lib.tensor(IMAGE, requires_grad=True),
                                                       (2, 3), 1, [1, 1], ceil_mode=True),
    "avg_pool2d_override": lambda lib: _f(lib).avg_pool2d(lib.tensor(IMAGE, requires_grad=True),
                                                          2, divisor_override=3),
    "max_pool1d": lambda lib: _f(lib).max_pool1d(lib.tensor(SEQUENCE, requires_grad=True), 2),
    "avg_pool2d": lambda lib: _f(lib).avg_pool2d(lib.tensor(IMAGE, requires_grad=True), 3, 2, 1),
    "adaptive_avg_pool2d": lambda lib: _f(lib).adaptive_avg_pool2d(
        lib.tensor(IMAGE, requires_grad=True), 2),
    "adaptive_max_pool2d": lambda lib: _f(lib).adaptive_max_pool2d(
        lib.tensor(IMAGE, requires_grad=True), 2),
    "pad_constant": lambda lib: _f(lib).pad(_x(lib), (1, 2)),
    "pad_negative": lambda lib: _f(lib).pad(_x(lib), (1, -2), value=0.5),
    "pad_replicate": lambda lib: _f(lib).pad(lib.tensor(SEQUENCE, requires_grad=True), (2, 1),
                                             mode="replicate"),
    "pad_reflect": lambda lib: _f(lib).pad(lib.tensor(IMAGE, requires_grad=True), (1, 1, 1, 1),
                                           mode="reflect"),
    "interpolate": lambda lib: _f(lib).interpolate(lib.tensor(IMAGE, requires_grad=True),
                                                   scale_factor=2, mode="bilinear"),
    "interpolate_nearest": lambda lib: _f(lib).interpolate(lib.tensor(IMAGE, requires_grad=True),
                                                           size=7),
    "interpolate_bicubic": lambda lib: _f(lib).interpolate(
        lib.tensor(IMAGE, requires_grad=True), scale_factor=(2, 3), mode="bicubic",
        align_corners=True),
    "interpolate_linear": lambda lib: _f(lib).interpolate(
        lib.tensor(SEQUENCE, requires_grad=True), scale_factor=1.5, mode="linear",
        recompute_scale_factor=True),
    # -- normalization
    "layer_norm": lambda lib: _f(lib).layer_norm(_x(lib), (4,), _x(lib)[0], _x(lib)[1]),
    "group_norm": lambda lib: _f(lib).group_norm(lib.tensor(IMAGE, requires_grad=True), 3),
    "batch_norm": lambda lib: _f(lib).batch_norm(_x(lib), None, None, training=True),
    "batch_norm_eval": lambda lib: _f(lib).batch_norm(
        _x(lib), lib.zeros(4, dtype=lib.float64), lib.ones(4, dtype=lib.float64), eps=1e-3),
    "layer_norm_two_dims": lambda lib: _f(lib).layer_norm(_x(lib), [3, 4]),
    "normalize": lambda lib: _f(lib).normalize(_x(lib), dim=-1),
    # -- embedding and dropout
    "embedding": lambda lib: _f(lib).embedding(lib.tensor(LABELS), _x(lib).t()),
    "embedding_padding": lambda lib: _f(lib).embedding(lib.tensor(LABELS), _x(lib).t(),
                                                       padding_idx=-1, scale_grad_by_freq=True),
    "dropout_eval": lambda lib: _f(lib).dropout(_x(lib), 0.5, training=False),
    "dropout_p0": lambda lib: _f(lib).dropout(_x(lib), 0.0),
}

def _shown(value):
    """A saved value in a form that compares across the two libraries."""
    if isinstance(value, (hookgrad.Tensor, torch.Tensor)):
        array = value.detach().numpy()
        if array.dtype.kind == "f":
            array = np.round(array, 6)
        return ("tensor", array.dtype.name, array.shape, array.tolist())
    if isinstance(value, (torch.Size, tuple, list)):
        return (type(value).__name__ if isinstance(value, list) else "tuple",
                tuple(_shown(item) for item in value))
    if isinstance(value, (torch.dtype, hookgrad.dtype)):
        return ("dtype", str(value).split(".")[-1])
    if isinstance(value, float) and math.isnan(value):
        return (float, "nan")
    if value is None or isinstance(value, (bool, int, float, str)):
        return (type(value), value)
    return (type(value).__name__, str(value))


def _node(lib, case):
    grad_fn = CASES[case](lib).grad_fn
    names = sorted(name for name in dir(grad_fn) if name.startswith(("_saved_", "_raw_saved_")))
    values = {name: _shown(getattr(grad_fn, name)) for name in names
              if name.startswith("_saved_")}
    return type(grad_fn).__name__, names, values


@pytest.mark.parametrize("case", list(CASES))
def test_saved_attributes_as_torch(case):
    name, names, values = _node(hookgrad, case)
    torch_name, torch_names, torch_values = _node(torch, case)
    assert name == torch_name
    assert names == torch_names
    for key in names:
        if key in values:
            assert values[key] == torch_values[key], key
