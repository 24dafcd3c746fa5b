"""The calls the layout sweep makes: every Tensor method and function that returns a tensor,
each as ``fn(lib, t)`` for a 3 x 4 floating input ``t`` (``lib`` is hookgrad or torch).

Kept apart from the test so the table reads as a list; ``NOT_SWEPT`` names the methods that
return no tensor (or need no layout check) and says why, so a new method must land somewhere.
"""
from __future__ import annotations


def _F(lib):
    return lib.nn.functional


def _idx(lib, values):
    return lib.tensor(values)


def _mask(lib, t):
    return t > 0.5


# unary and binary pointwise (TensorIterator in torch: they follow a dense input's layout)
POINTWISE_UNARY = [
    "neg", "negative", "exp", "log", "log1p", "sqrt", "rsqrt", "reciprocal", "abs", "absolute",
    "sign", "sgn", "sin", "cos", "tanh", "sigmoid", "relu", "erf", "square", "floor", "ceil",
    "round", "trunc", "fix", "isnan", "isinf", "isfinite", "logical_not", "log2", "log10", "exp2",
    "expm1", "tan", "asin", "acos", "atan", "arcsin", "arccos", "arctan", "sinh", "cosh", "asinh",
    "acosh", "atanh", "arcsinh", "arccosh", "arctanh", "sinc", "frac", "deg2rad", "rad2deg",
    "logit", "nan_to_num", "float", "double", "half", "bool", "long", "int", "bfloat16",
    "__neg__", "__abs__",
]
POINTWISE_BINARY = [  # with the tensor itself and with a Python number
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "floor_divide",
    "remainder", "pow", "rsub", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge",
    "atan2", "arctan2", "hypot", "logaddexp", "copysign", "fmod", "xlogy", "isclose", "fmax",
    "fmin",
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
    "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__",
    "__rpow__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
]
NUMBER_ONLY = {"atan2", "arctan2", "hypot", "logaddexp", "maximum", "minimum", "isclose", "fmax",
               "fmin"}
LOGICAL_BINARY = ["logical_and", "logical_or", "logical_xor", "__and__", "__or__", "__xor__",
                  "__rand__", "__ror__", "__rxor__"]
INPLACE_UNARY = [
    "abs_", "absolute_", "acos_", "arccos_", "arcsin_", "arctan_", "asin_", "atan_", "ceil_",
    "cos_", "cosh_", "deg2rad_", "erf_", "exp2_", "exp_", "expm1_", "fix_", "floor_", "frac_",
    "log10_", "log1p_", "log2_", "log_", "logit_", "nan_to_num_", "neg_", "negative_",
    "rad2deg_", "reciprocal_", "round_", "rsqrt_", "sigmoid_", "sign_", "sin_", "sinc_",
    "sinh_", "sqrt_", "square_", "tan_", "tanh_", "trunc_", "relu_", "zero_", "sgn_",
]

CALLS = {
    **{name: (lambda name: lambda L, t: getattr(t, name)())(name) for name in POINTWISE_UNARY},
    **{name: (lambda name: lambda L, t: getattr(t, name)(t))(name) for name in POINTWISE_BINARY
       if not name.startswith("__r") and name != "rsub"},
    **{name: (lambda name: lambda L, t: getattr(t, name)(2))(name) for name in POINTWISE_BINARY
       if name.startswith("__r")},
    **{f"{name}_number": (lambda name: lambda L, t: getattr(t, name)(2))(name)
       for name in POINTWISE_BINARY if name not in NUMBER_ONLY and name != "rsub"},
    "rsub": lambda L, t: L.rsub(t, t * 2), "rsub_number": lambda L, t: L.rsub(t, 2),
    "add_transposed_other": lambda L, t: t + t.t().contiguous().t(),
    "add_contiguous_other": lambda L, t: t + t.contiguous(),
    "contiguous_add": lambda L, t: t.contiguous() + t,
    "mul_expanded_other": lambda L, t: t * t[:1].expand(3, 4),
    "where_mixed": lambda L, t: L.where(t.contiguous() > 0.5, t, t.contiguous()),
    **{name: (lambda name: lambda L, t: getattr(t > 0.5, name)(t < 0.7))(name)
       for name in LOGICAL_BINARY},
    **{name: (lambda name: lambda L, t: getattr(t * 1, name)())(name) for name in INPLACE_UNARY},
    "__invert__": lambda L, t: ~(t > 0.5),
    "bitwise_not": lambda L, t: L.bitwise_not(t > 0.5),
    "pow_": lambda L, t: (t * 1).pow_(2), "fmod_": lambda L, t: (t * 1).fmod_(0.3),
    "add_": lambda L, t: (t * 1).add_(t), "sub_": lambda L, t: (t * 1).sub_(1),
    "mul_": lambda L, t: (t * 1).mul_(t), "div_": lambda L, t: (t * 1).div_(2),
    "__iadd__": lambda L, t: (t * 1).__iadd__(1), "__isub__": lambda L, t: (t * 1).__isub__(t),
    "__imul__": lambda L, t: (t * 1).__imul__(2),
    "__itruediv__": lambda L, t: (t * 1).__itruediv__(t),
    "atan2_": lambda L, t: (t * 1).atan2_(t), "hypot_": lambda L, t: (t * 1).hypot_(t),
    "clamp_": lambda L, t: (t * 1).clamp_(0.2, 0.6), "clip_": lambda L, t: (t * 1).clip_(0.2),
    "clamp_min_": lambda L, t: (t * 1).clamp_min_(0.2),
    "clamp_max_": lambda L, t: (t * 1).clamp_max_(0.2),
    "masked_fill_": lambda L, t: (t * 1).masked_fill_(t > 0.5, 0.0),
    "addcmul_": lambda L, t: (t * 1).addcmul_(t, t),
    "addcdiv_": lambda L, t: (t * 1).addcdiv_(t, t),
    "lerp_": lambda L, t: (t * 1).lerp_(t, 0.3),
    "fill_": lambda L, t: (t * 1).fill_(2.0), "copy_": lambda L, t: (t * 1).copy_(t.t().t()),
    "tril_": lambda L, t: (t * 1).tril_(), "triu_": lambda L, t: (t * 1).triu_(),
    "fill_diagonal_": lambda L, t: (t * 1).fill_diagonal_(0.0),
    "scatter_": lambda L, t: (t * 1).scatter_(1, L.tensor([[0], [1], [2]]), 5.0),
    "scatter_add_": lambda L, t: (t * 1).scatter_add_(1, L.tensor([[0], [1], [2]]), t),
    "index_add_": lambda L, t: (t * 1).index_add_(1, L.tensor([0, 2]), t[:, :2]),
    "index_fill_": lambda L, t: (t * 1).index_fill_(1, L.tensor([0, 2]), 1.0),
    "index_put_": lambda L, t: (t * 1).index_put_((L.tensor([0, 2]),), L.tensor(1.0)),
    "masked_scatter_": lambda L, t: (t * 1).masked_scatter_(t > 0.5, t * 2),
    # pointwise with more operands or options
    "clamp": lambda L, t: t.clamp(0.2, 0.6), "clip": lambda L, t: t.clip(max=0.6),
    "clamp_tensor": lambda L, t: t.clamp(t * 0.5, t * 2),
    "clamp_min": lambda L, t: t.clamp_min(0.2), "clamp_max": lambda L, t: t.clamp_max(0.2),
    "where": lambda L, t: t.where(t > 0.5, 0.0), "where_tensor": lambda L, t: t.where(t > 0.5, t),
    "torch.where": lambda L, t: L.where(t > 0.5, t, t * 2),
    "masked_fill": lambda L, t: t.masked_fill(t > 0.5, 0.0),
    "addcmul": lambda L, t: t.addcmul(t, t, value=2), "addcdiv": lambda L, t: t.addcdiv(t, t),
    "lerp": lambda L, t: t.lerp(t * 2, 0.3), "hardshrink": lambda L, t: t.hardshrink(0.3),
    "positive": lambda L, t: t.positive(), "__pos__": lambda L, t: +t,
    "to": lambda L, t: t.to(L.float64), "to_float32": lambda L, t: t.to(L.float32),
    "type": lambda L, t: t.type(L.float32), "type_as": lambda L, t: t.type_as(t.int()),
    "to_copy": lambda L, t: t.to(L.float64, copy=True),
    "add_tensor_row": lambda L, t: t + t[0], "mul_column": lambda L, t: t * t[:, :1],
    "add_0dim": lambda L, t: t + L.tensor(2.0),
    # nn.functional pointwise
    **{f"F.{name}": (lambda name: lambda L, t: getattr(_F(L), name)(t))(name) for name in (
        "relu", "relu6", "elu", "selu", "celu", "gelu", "silu", "mish", "softplus", "softsign",
        "sigmoid", "tanh", "hardtanh", "hardsigmoid", "hardswish", "leaky_relu", "logsigmoid",
        "softshrink", "hardshrink", "tanhshrink")},
    "F.gelu_tanh": lambda L, t: _F(L).gelu(t, approximate="tanh"),
    "F.dropout_eval": lambda L, t: _F(L).dropout(t, 0.5, training=False),
    "F.threshold": lambda L, t: _F(L).threshold(t, 0.5, 0.0),
    # reductions
    "sum": lambda L, t: t.sum(), "sum0": lambda L, t: t.sum(0), "sum1": lambda L, t: t.sum(1),
    "sum_keepdim": lambda L, t: t.sum(0, keepdim=True), "mean": lambda L, t: t.mean(1),
    "mean_keepdim": lambda L, t: t.mean(1, keepdim=True), "prod": lambda L, t: t.prod(1),
    "var": lambda L, t: t.var(0), "std": lambda L, t: t.std(1, keepdim=True),
    "max": lambda L, t: t.max(), "max_dim": lambda L, t: t.max(1),
    "min": lambda L, t: t.min(0), "amax": lambda L, t: t.amax(1), "amin": lambda L, t: t.amin(0),
    # keepdim over dim 0: a size-1 leading dim, whose stride torch sets as row-major
    **{f"{name}_keepdim0": (lambda name: lambda L, t: getattr(t, name)(0, keepdim=True))(name)
       for name in ("sum", "mean", "prod", "var", "std", "max", "min", "amax", "amin", "argmax",
                    "argmin", "logsumexp", "nansum", "nanmean", "median", "nanmedian", "mode",
                    "norm", "any", "all")},
    "kthvalue_keepdim0": lambda L, t: t.kthvalue(1, 0, keepdim=True),
    "aminmax_keepdim0": lambda L, t: t.aminmax(dim=0, keepdim=True),
    "argmax": lambda L, t: t.argmax(1), "argmin": lambda L, t: t.argmin(0),
    "logsumexp": lambda L, t: t.logsumexp(1), "any": lambda L, t: (t > 0.5).any(1),
    "all": lambda L, t: (t > 0.5).all(0), "norm": lambda L, t: t.norm(dim=1),
    "norm_all": lambda L, t: t.norm(), "sum_to_size": lambda L, t: t.sum_to_size(1, 4),
    "nansum": lambda L, t: t.nansum(1), "nanmean": lambda L, t: t.nanmean(0),
    "aminmax": lambda L, t: t.aminmax(dim=1), "count_nonzero": lambda L, t: t.count_nonzero(0),
    "trace": lambda L, t: t.trace(), "median": lambda L, t: t.median(1),
    "median_all": lambda L, t: t.median(), "nanmedian": lambda L, t: t.nanmedian(0),
    "mode": lambda L, t: t.mode(1), "kthvalue": lambda L, t: t.kthvalue(2, 1),
    "var_mean": lambda L, t: L.var_mean(t, 1), "std_mean": lambda L, t: L.std_mean(t, 0),
    # normalising along a dim and scans
    "softmax": lambda L, t: t.softmax(1), "softmax0": lambda L, t: t.softmax(0),
    "log_softmax": lambda L, t: t.log_softmax(1), "log_softmax0": lambda L, t: t.log_softmax(0),
    "cumsum": lambda L, t: t.cumsum(1), "cumsum0": lambda L, t: t.cumsum(0),
    "cumprod": lambda L, t: t.cumprod(1), "cumprod0": lambda L, t: t.cumprod(0),
    "cummax": lambda L, t: t.cummax(1), "cummax0": lambda L, t: t.cummax(0),
    "cummin": lambda L, t: t.cummin(1), "cummin0": lambda L, t: t.cummin(0),
    "logcumsumexp": lambda L, t: t.logcumsumexp(1), "logcumsumexp0": lambda L, t: t.logcumsumexp(0),
    "diff": lambda L, t: t.diff(dim=1), "diff0": lambda L, t: t.diff(dim=0),
    "F.normalize": lambda L, t: _F(L).normalize(t, dim=1),
    # sorting and searching
    "sort": lambda L, t: t.sort(1), "sort0": lambda L, t: t.sort(0),
    "sort_descending": lambda L, t: t.sort(1, descending=True),
    "argsort": lambda L, t: t.argsort(1), "argsort0": lambda L, t: t.argsort(0),
    "msort": lambda L, t: t.msort(), "topk": lambda L, t: t.topk(2, 1),
    "topk0": lambda L, t: t.topk(2, 0), "unique": lambda L, t: t.unique(),
    "unique_consecutive": lambda L, t: t.unique_consecutive(),
    "nonzero": lambda L, t: (t > 0.5).nonzero(), "argwhere": lambda L, t: (t > 0.5).argwhere(),
    "bincount": lambda L, t: (t * 4).long()[0].bincount(),
    # linear algebra
    "matmul": lambda L, t: t.matmul(t.t()), "mm": lambda L, t: t.mm(t.t()),
    "mm_t": lambda L, t: t.t().mm(t), "__matmul__": lambda L, t: t @ t.t(),
    "__rmatmul__": lambda L, t: t.t().__rmatmul__(t),
    "bmm": lambda L, t: t.unsqueeze(0).bmm(t.t().unsqueeze(0)),
    "mv": lambda L, t: t.mv(t[0]), "dot": lambda L, t: t[0].dot(t[1]),
    "outer": lambda L, t: t[0].outer(t[1]), "ger": lambda L, t: t[0].ger(t[1]),
    "kron": lambda L, t: t.kron(t), "cross": lambda L, t: t[:, :3].cross(t[:, 1:], dim=1),
    "F.linear": lambda L, t: _F(L).linear(t, t), "addmm": lambda L, t: L.addmm(t, t, t.t()[:, :4]),
    "einsum": lambda L, t: L.einsum("ij,kj->ik", t, t),
    # views (torch defines their strides from the input's)
    "reshape": lambda L, t: t.reshape(-1), "reshape_2": lambda L, t: t.reshape(2, 6),
    "view_as": lambda L, t: t.view_as(t), "as_subclass": lambda L, t: t.as_subclass(L.Tensor),
    "reshape_as": lambda L, t: t.reshape_as(t.t().t()),
    "view": lambda L, t: t.view(3, 4), "squeeze": lambda L, t: t[:1].squeeze(),
    "squeeze_dim": lambda L, t: t[:1].squeeze(0), "unsqueeze": lambda L, t: t.unsqueeze(1),
    "unsqueeze0": lambda L, t: t.unsqueeze(0), "unsqueeze_end": lambda L, t: t.unsqueeze(-1),
    "transpose": lambda L, t: t.transpose(0, 1), "swapaxes": lambda L, t: t.swapaxes(0, 1),
    "swapdims": lambda L, t: t.swapdims(1, 0), "permute": lambda L, t: t.permute(1, 0),
    "movedim": lambda L, t: t.movedim(0, 1), "moveaxis": lambda L, t: t.moveaxis(1, 0),
    "expand": lambda L, t: t[:, :1].expand(3, 5), "expand_as": lambda L, t: t[:1].expand_as(t),
    "t": lambda L, t: t.t(), "T": lambda L, t: t.T, "mT": lambda L, t: t.mT,
    "flatten": lambda L, t: t.flatten(), "unflatten": lambda L, t: t.unflatten(1, (2, 2)),
    "narrow": lambda L, t: t.narrow(1, 1, 2), "select": lambda L, t: t.select(1, 2),
    "split": lambda L, t: t.split(2, 1), "chunk": lambda L, t: t.chunk(2, 0),
    "unbind": lambda L, t: t.unbind(1), "tensor_split": lambda L, t: t.tensor_split(3, 1),
    "diagonal": lambda L, t: t.diagonal(), "ravel": lambda L, t: t.ravel(),
    "broadcast_to": lambda L, t: t[0].broadcast_to(2, 4), "real": lambda L, t: t.real,
    "unsafe_view": lambda L, t: t.contiguous().unsafe_view((12,)) if L.__name__ == "hookgrad"
    else L.ops.aten._unsafe_view(t.contiguous(), (12,)),
    "getitem_int": lambda L, t: t[1], "getitem_slice": lambda L, t: t[:, 1:3],
    "getitem_step": lambda L, t: t[::2], "getitem_none": lambda L, t: t[:, None],
    "getitem_ellipsis": lambda L, t: t[..., 1],
    # copies in a new shape or order
    "clone": lambda L, t: t.clone(), "contiguous": lambda L, t: t.contiguous(),
    "repeat": lambda L, t: t.repeat(2, 1), "tile": lambda L, t: t.tile((1, 2)),
    "flip": lambda L, t: t.flip(0), "flip_both": lambda L, t: t.flip(0, 1),
    "roll": lambda L, t: t.roll(1, 0), "roll_flat": lambda L, t: t.roll(2),
    "rot90": lambda L, t: t.rot90(), "repeat_interleave": lambda L, t: t.repeat_interleave(2, 0),
    "tril": lambda L, t: t.tril(), "triu": lambda L, t: t.triu(1), "diag": lambda L, t: t[0].diag(),
    "diag_of_matrix": lambda L, t: t.diag(), "diag_embed": lambda L, t: t.diag_embed(),
    "diagflat": lambda L, t: t.diagflat(), "take": lambda L, t: t.take(_idx(L, [0, 5])),
    "cat": lambda L, t: L.cat([t, t], 1), "cat0": lambda L, t: L.cat([t, t]),
    "stack": lambda L, t: L.stack([t, t]), "stack1": lambda L, t: L.stack([t, t], 1),
    "hstack": lambda L, t: L.hstack([t, t]), "vstack": lambda L, t: L.vstack([t, t]),
    "F.pad": lambda L, t: _F(L).pad(t, (1, 1)),
    # indexing
    "gather": lambda L, t: t.gather(1, L.tensor([[0, 1]] * 3)),
    "take_along_dim": lambda L, t: t.take_along_dim(L.tensor([[0], [1], [2]]), 1),
    "index_select": lambda L, t: t.index_select(1, L.tensor([1, 0])),
    "index_select0": lambda L, t: t.index_select(0, L.tensor([2, 0])),
    "scatter": lambda L, t: t.scatter(1, L.tensor([[0], [1], [2]]), 5.0),
    "scatter_add": lambda L, t: t.scatter_add(1, L.tensor([[0], [1], [2]]), t),
    "index_add": lambda L, t: t.index_add(1, L.tensor([0, 2]), t[:, :2]),
    "index_fill": lambda L, t: t.index_fill(1, L.tensor([0, 2]), 1.0),
    "index_put": lambda L, t: t.index_put((L.tensor([0, 2]),), L.tensor(1.0)),
    "masked_select": lambda L, t: t.masked_select(t > 0.5),
    "masked_scatter": lambda L, t: t.masked_scatter(t > 0.5, t * 2),
    "getitem_list": lambda L, t: t[:, [2, 0]], "getitem_list0": lambda L, t: t[[1, 0]],
    "getitem_mask": lambda L, t: t[t > 0.5], "getitem_two_lists": lambda L, t: t[[0, 1], [1, 2]],
    "getitem_slice_list": lambda L, t: t[1:, [0, 2]],
    # random
    "bernoulli": lambda L, t: t.bernoulli(), "multinomial": lambda L, t: t.multinomial(2),
    **{name: (lambda name: lambda L, t: getattr(t * 1, name)())(name) for name in (
        "bernoulli_", "cauchy_", "exponential_", "geometric_", "log_normal_", "normal_",
        "random_", "uniform_")},
    # factories from a tensor
    "new_zeros": lambda L, t: t.new_zeros(2, 3), "new_ones": lambda L, t: t.new_ones(2),
    "new_full": lambda L, t: t.new_full((2, 2), 1.0), "new_empty": lambda L, t: t.new_empty(2),
    "new_tensor": lambda L, t: t.new_tensor([1.0, 2.0]),
    "zeros_like": lambda L, t: L.zeros_like(t), "ones_like": lambda L, t: L.ones_like(t),
    "full_like": lambda L, t: L.full_like(t, 2.0), "empty_like": lambda L, t: L.empty_like(t),
    "rand_like": lambda L, t: L.rand_like(t), "randn_like": lambda L, t: L.randn_like(t),
    # nn.functional beyond pointwise
    "F.layer_norm": lambda L, t: _F(L).layer_norm(t, (4,)),
    "F.mse_loss": lambda L, t: _F(L).mse_loss(t, t * 2, reduction="none"),
    "F.l1_loss": lambda L, t: _F(L).l1_loss(t, t * 2, reduction="none"),
    "F.binary_cross_entropy": lambda L, t: _F(L).binary_cross_entropy(
        t.clamp(0.1, 0.9), t.clamp(0.1, 0.9), reduction="none"),
    "F.cosine_similarity": lambda L, t: _F(L).cosine_similarity(t, t * 2),
    "F.one_hot": lambda L, t: _F(L).one_hot((t * 3).long().t(), 4),
    "F.embedding": lambda L, t: _F(L).embedding(L.tensor([[0, 2]]), t),
    "F.cross_entropy": lambda L, t: _F(L).cross_entropy(t, L.tensor([0, 1, 2]), reduction="none"),
    "F.huber_loss": lambda L, t: _F(L).huber_loss(t, t * 2, reduction="none"),
    "F.bilinear": lambda L, t: _F(L).bilinear(t, t, L.ones(2, 4, 4)),
    "F.scaled_dot_product_attention": lambda L, t: _F(L).scaled_dot_product_attention(
        t[None], t[None], t[None]),
    "column_stack": lambda L, t: L.column_stack([t, t]), "dstack": lambda L, t: L.dstack([t, t]),
    "block_diag": lambda L, t: L.block_diag(t, t),
    "meshgrid": lambda L, t: L.meshgrid(t[0], t[1], indexing="ij"),
    "broadcast_tensors": lambda L, t: L.broadcast_tensors(t, t[0]),
    "bucketize": lambda L, t: L.bucketize(t, L.tensor([0.2, 0.5])),
    "isin": lambda L, t: L.isin(t, t[0]), "lerp_tensor": lambda L, t: L.lerp(t, t * 2, t),
    "baddbmm": lambda L, t: L.baddbmm(t[None], t[None], L.eye(4)[None]),
}

# method name -> why the sweep does not check its result's layout
NOT_SWEPT = {
    "__init__": "constructor", "backward": "returns None",
    "register_hook": "returns a handle",
    "register_post_accumulate_grad_hook": "returns a handle", "retain_grad": "returns None",
    "_grad_accumulator": "returns a node", "_ensure_hooks_attached": "internal",
    "equal": "returns a bool", "allclose": "returns a bool",
    "__setitem__": "returns None", "__getitem__": "swept as getitem_*",
    "where": "swept as where and where_tensor", "to": "swept as to and to_float32",
    "as_strided": "the strides are its arguments: tests/ops/test_as_strided.py",
}

# nn.functional ops on a 4-d (N, C, H, W) input: torch allocates pooling, interpolation,
# padding and batch norm results in the input's suggested memory format (channels-last stays so)
_WEIGHT = [[[[0.5, -1.0], [0.25, 2.0]]] * 3] * 4


NN_CALLS = {
    "conv2d": lambda L, t: _F(L).conv2d(t, L.tensor(_WEIGHT)),
    "conv2d_channels_last_weight": lambda L, t: _F(L).conv2d(
        t, L.tensor(_WEIGHT).permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)),
    "max_pool2d": lambda L, t: _F(L).max_pool2d(t, 2),
    "max_pool2d_indices": lambda L, t: _F(L).max_pool2d(t, 2, 1, return_indices=True),
    "max_pool2d_padded": lambda L, t: _F(L).max_pool2d(t, 3, 2, 1),
    "avg_pool2d": lambda L, t: _F(L).avg_pool2d(t, 2),
    "adaptive_avg_pool2d": lambda L, t: _F(L).adaptive_avg_pool2d(t, 2),
    "interpolate_nearest": lambda L, t: _F(L).interpolate(t, scale_factor=2),
    "interpolate_bilinear": lambda L, t: _F(L).interpolate(t, scale_factor=2, mode="bilinear"),
    "batch_norm": lambda L, t: _F(L).batch_norm(t, None, None, training=True),
    "group_norm": lambda L, t: _F(L).group_norm(t, 3),
    "layer_norm": lambda L, t: _F(L).layer_norm(t, (5,)),
    "instance_norm": lambda L, t: _F(L).instance_norm(t),
    "softmax": lambda L, t: _F(L).softmax(t, 1),
    "relu": lambda L, t: _F(L).relu(t),
    "gelu": lambda L, t: _F(L).gelu(t),
    "pad": lambda L, t: _F(L).pad(t, (1, 1)),
    "pad_2d": lambda L, t: _F(L).pad(t, (1, 0, 2, 1)),
    "linear": lambda L, t: _F(L).linear(t, L.ones(2, 5)),
    "unfold": lambda L, t: _F(L).unfold(t, 2),
    "normalize": lambda L, t: _F(L).normalize(t, dim=1),
    "sum_spatial_keepdim": lambda L, t: t.sum((2, 3), keepdim=True),
    "add_channel_bias": lambda L, t: t + L.ones(3, 1, 1),
    "mul_contiguous": lambda L, t: t * t.contiguous(),
}

from _layout_table_more import MORE_CALLS, MORE_NOT_SWEPT  # noqa: E402

CALLS.update(MORE_CALLS)
NOT_SWEPT.update(MORE_NOT_SWEPT)
