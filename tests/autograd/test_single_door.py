"""The single door: every tensor an op keeps for backward goes through ``ctx.save_for_backward``.

Each op of the table runs twice: plainly, and under a saver whose pack hook replaces every saved
array with a private copy (and whose unpack hook hands the copy back). The gradients must be the
same, and no node of the recorded graph may keep an array or a tensor anywhere but its saved
tensors (an op that kept one on ``ctx`` would free nothing under an offloading saver, and a
memory ledger would count it wrongly).
"""
from __future__ import annotations

import numpy as np
import pytest

import hookgrad
import hookgrad.nn.functional as F
from hookgrad.autograd.builtin import BuiltinFunction

RNG = np.random.default_rng(0)
SPECS = {
    "a": lambda: RNG.standard_normal((3, 4)),
    "p": lambda: RNG.uniform(0.5, 2.0, (3, 4)),
    "u": lambda: RNG.uniform(0.05, 0.95, (3, 4)),
    "r": lambda: RNG.standard_normal(4),
    "s": lambda: RNG.standard_normal(()),
    "m": lambda: RNG.standard_normal((4, 5)),
    "q": lambda: RNG.standard_normal((4, 4)) + 4 * np.eye(4),
    "b": lambda: RNG.standard_normal((2, 3, 4)),
    "b2": lambda: RNG.standard_normal((2, 4, 5)),
    "img": lambda: RNG.standard_normal((1, 2, 5, 5)),
    "w": lambda: RNG.standard_normal((3, 2, 3, 3)),
    "seq": lambda: RNG.standard_normal((2, 3, 4)),
}
INPUTS = {name: make() for name, make in SPECS.items()}
MASK = hookgrad.tensor(INPUTS["a"] > 0)
INDEX = hookgrad.tensor([[0, 2, 1, 0], [1, 1, 0, 2]])
TARGET = hookgrad.tensor([1, 0, 3])


def _inplace(op):
    """Run an in-place op on a non-leaf copy of the first input."""
    return lambda a, *rest: op(a * 1, *rest)


def _first_gradient(op, a):
    """op's gradient at ``a``, recorded (create_graph) so its own nodes are in the graph."""
    return hookgrad.autograd.grad((op(a) * a).sum(), a, create_graph=True)[0]


def _loss_gradient(loss, a, b):
    """The loss's gradients for both operands, recorded (create_graph)."""
    return hookgrad.autograd.grad((loss(a, b) * 3).sum(), [a, b], create_graph=True)


# name, fn(*tensors), input specs
TABLE = [
    # arithmetic
    ("add", lambda a, b: a + b, "a r"), ("sub_alpha", lambda a, b: hookgrad.sub(a, b, alpha=2),
                                         "a a"),
    ("mul", lambda a, b: a * b, "a r"), ("mul_number", lambda a: a * 2.5, "a"),
    ("div", lambda a, b: a / b, "a p"), ("rdiv", lambda a: 2 / a, "p"),
    ("pow", lambda a, b: a ** b, "p a"), ("pow_number", lambda a: a ** 3, "a"),
    ("rpow", lambda a: 2 ** a, "a"), ("remainder", lambda a, b: a % b, "a p"),
    ("neg", lambda a: -a, "a"),
    ("trapezoid_scalar_nodes", lambda a: hookgrad.trapezoid(a, dx=0.5), "a"),
    ("margin_ranking_scalar_node", lambda a, b: hookgrad.nn.functional.margin_ranking_loss(
        a, b, hookgrad.ones(a.shape), margin=0.1), "a a"),
    ("pairwise_distance_norm_dim", lambda a, b: hookgrad.nn.functional.pairwise_distance(a, b),
     "a a"),
    ("ctc_loss", lambda a: F.ctc_loss(a.log_softmax(2), hookgrad.tensor([[1], [2], [3]]),
                                      (2, 2, 1), (1, 1, 1), reduction="none"), "seq"),
    ("rsub", lambda a, b: hookgrad.rsub(a, b, alpha=2), "a r"),
    ("addcmul", lambda a, b, c: hookgrad.addcmul(a, b, c, value=0.5), "a a r"),
    ("addcdiv", lambda a, b, c: hookgrad.addcdiv(a, b, c), "a a p"),
    ("lerp", lambda a, b, c: hookgrad.lerp(a, b, c.sigmoid()), "a a a"),
    ("atan2", lambda a, b: hookgrad.atan2(a, b), "a p"),
    ("hypot", lambda a, b: hookgrad.hypot(a, b), "a a"),
    ("logaddexp", lambda a, b: hookgrad.logaddexp(a, b), "a a"),
    ("copysign", lambda a, b: hookgrad.copysign(a, b), "a a"),
    ("fmod", lambda a, b: hookgrad.fmod(a, b), "a p"),
    ("xlogy", lambda a, b: hookgrad.xlogy(a, b), "a p"),
    ("xlog1py", lambda a, b: hookgrad.special.xlog1py(a, b), "a p"),
    ("xlog1py_number_other", lambda a: hookgrad.special.xlog1py(a, 0.5), "a"),
    ("xlog1py_number_self", lambda a: hookgrad.special.xlog1py(0.5, a), "p"),
    ("entr", lambda a: hookgrad.special.entr(a), "p"),
    ("erfcx", lambda a: hookgrad.special.erfcx(a), "a"),
    ("log_ndtr", lambda a: hookgrad.special.log_ndtr(a), "a"),
    ("ndtri", lambda a: hookgrad.special.ndtri(a.sigmoid()), "a"),
    ("zeta_q", lambda a: hookgrad.special.zeta(hookgrad.tensor(3.0), a + 1), "p"),
    ("zeta_number_x", lambda a: hookgrad.special.zeta(3.0, a + 1), "p"),
    # pointwise
    *[(name, getattr(hookgrad, name), "a") for name in (
        "exp", "sin", "cos", "tanh", "sigmoid", "abs", "erf", "square", "atan", "sinh", "cosh",
        "asinh", "exp2", "expm1", "tan", "deg2rad", "rad2deg", "sinc", "sign", "floor", "ceil",
        "round", "trunc", "frac", "relu", "silu", "gelu", "nan_to_num")],
    *[(name, getattr(hookgrad, name), "p") for name in (
        "log", "log1p", "log2", "log10", "sqrt", "rsqrt", "reciprocal")],
    *[(name, getattr(hookgrad, name), "u") for name in ("asin", "acos", "atanh", "logit")],
    ("acosh", lambda a: hookgrad.acosh(a + 2), "p"),
    ("clamp", lambda a: hookgrad.clamp(a, -0.5, 0.5), "a"),
    ("clamp_tensor", lambda a, b, c: hookgrad.clamp(a, b, c + 1), "a r r"),
    ("clamp_min", lambda a: hookgrad.clamp_min(a, 0.1), "a"),
    ("maximum", lambda a, b: hookgrad.maximum(a, b), "a r"),
    ("minimum", lambda a, b: hookgrad.minimum(a, b), "a a"),
    ("where", lambda a, b: hookgrad.where(MASK, a, b), "a a"),
    ("masked_fill", lambda a: a.masked_fill(MASK, 0.5), "a"),
    ("masked_fill_tensor", lambda a, s: a.masked_fill(MASK, s), "a s"),
    # activations
    ("softmax", lambda a: hookgrad.softmax(a, 1), "a"),
    ("log_softmax", lambda a: hookgrad.log_softmax(a, 0), "a"),
    ("leaky_relu", lambda a: F.leaky_relu(a, 0.1), "a"), ("elu", lambda a: F.elu(a), "a"),
    ("selu", lambda a: hookgrad.selu(a), "a"), ("celu", lambda a: hookgrad.celu(a, 0.5), "a"),
    ("softplus", lambda a: F.softplus(a), "a"), ("mish", lambda a: F.mish(a), "a"),
    ("hardswish", lambda a: F.hardswish(a), "a"), ("hardsigmoid", lambda a: F.hardsigmoid(a), "a"),
    ("hardtanh", lambda a: F.hardtanh(a), "a"), ("logsigmoid", lambda a: F.logsigmoid(a), "a"),
    ("softshrink", lambda a: F.softshrink(a), "a"),
    ("hardshrink", lambda a: hookgrad.hardshrink(a, 0.3), "a"),
    # first gradients recorded as one node each (``*BackwardBackward0``)
    ("sigmoid_grad", lambda a: _first_gradient(hookgrad.sigmoid, a), "a"),
    ("tanh_grad", lambda a: _first_gradient(hookgrad.tanh, a), "a"),
    ("gelu_grad", lambda a: _first_gradient(F.gelu, a), "a"),
    ("gelu_tanh_grad", lambda a: _first_gradient(lambda t: F.gelu(t, approximate="tanh"), a),
     "a"),
    ("glu_grad", lambda a: hookgrad.autograd.grad(F.glu(a, 1).pow(2).sum(), a,
                                                  create_graph=True)[0], "a"),
    ("prelu", lambda a, r: F.prelu(a, r), "a r"),
    ("prelu_grad", lambda a, r: hookgrad.autograd.grad((F.prelu(a, r) * a).sum(), [a, r],
                                                       create_graph=True), "a r"),
    # reductions and scans
    ("sum", lambda a: a.sum(1), "a"), ("mean", lambda a: a.mean(), "a"),
    ("prod", lambda a: a.prod(1), "a"), ("prod_all", lambda a: a.prod(), "a"),
    ("var", lambda a: a.var(0), "a"), ("std", lambda a: a.std(), "a"),
    ("amax", lambda a: a.amax(1), "a"), ("amin", lambda a: a.amin(0), "a"),
    ("max_dim", lambda a: a.max(1)[0], "a"), ("min_all", lambda a: a.min(), "a"),
    ("logsumexp", lambda a: a.logsumexp(1), "a"), ("norm", lambda a: a.norm(), "a"),
    ("cumsum", lambda a: a.cumsum(1), "a"), ("cumprod", lambda a: a.cumprod(1), "a"),
    ("cummax", lambda a: hookgrad.cummax(a, 1)[0], "a"),
    ("cummin", lambda a: hookgrad.cummin(a, 0)[0], "a"),
    ("logcumsumexp", lambda a: hookgrad.logcumsumexp(a, 1), "a"),
    ("var_mean", lambda a: sum(hookgrad.var_mean(a, 1)), "a"),
    ("std_mean", lambda a: sum(hookgrad.std_mean(a, 0)), "a"),
    ("aminmax", lambda a: sum(hookgrad.aminmax(a, dim=1)), "a"),
    ("nansum", lambda a: hookgrad.nansum(a, 1), "a"),
    ("nanmean", lambda a: hookgrad.nanmean(a), "a"),
    ("diff", lambda a: hookgrad.diff(a), "a"),
    # sorting and selection
    ("sort", lambda a: hookgrad.sort(a, 1)[0], "a"), ("topk", lambda a: a.topk(2)[0], "a"),
    ("kthvalue", lambda a: hookgrad.kthvalue(a, 2, 1)[0], "a"),
    ("median", lambda a: hookgrad.median(a, 1)[0], "a"),
    ("median_all", lambda a: hookgrad.median(a), "a"),
    ("nanmedian", lambda a: hookgrad.nanmedian(a, 0)[0], "a"),
    ("mode", lambda a: hookgrad.mode(a.round(), 1)[0], "a"),
    ("msort", lambda a: hookgrad.msort(a), "a"),
    ("masked_select", lambda a: hookgrad.masked_select(a, MASK), "a"),
    ("take", lambda a: hookgrad.take(a, INDEX), "a"),
    # linear algebra
    ("matmul", lambda a, m: a @ m, "a m"), ("mm", lambda m, q: hookgrad.mm(q, m), "m q"),
    ("bmm", lambda b, c: hookgrad.bmm(b, c), "b b2"), ("mv", lambda q, r: hookgrad.mv(q, r),
                                                       "q r"),
    ("dot", lambda r, v: hookgrad.dot(r, v), "r r"),
    ("einsum", lambda a, m: hookgrad.einsum("ij,jk->ik", a, m), "a m"),
    ("outer", lambda r, v: hookgrad.outer(r, v), "r r"),
    ("kron", lambda a, b: hookgrad.kron(a, b), "a a"),
    ("cross", lambda a, b: hookgrad.linalg.cross(a[:, :3], b[:, :3]), "a a"),
    ("trace", lambda q: hookgrad.trace(q), "q"),
    ("vector_norm", lambda a: hookgrad.linalg.vector_norm(a, 3, dim=1), "a"),
    ("addmm", lambda a, b, m: hookgrad.addmm(a @ m, b, m), "a a m"),
    ("baddbmm", lambda b, c: hookgrad.baddbmm(b @ c, b, c), "b b2"),
    # views and shape
    ("view", lambda a: a.view(4, 3) * 2, "a"), ("reshape", lambda a: a.reshape(-1), "a"),
    ("transpose", lambda a: a.t(), "a"), ("permute", lambda b: b.permute(2, 0, 1), "b"),
    ("expand", lambda r: r.expand(3, 4), "r"), ("squeeze", lambda a: a[None].squeeze(0), "a"),
    ("unsqueeze", lambda a: a.unsqueeze(1), "a"), ("flatten", lambda b: b.flatten(1), "b"),
    ("narrow", lambda a: a.narrow(1, 1, 2), "a"), ("select", lambda a: a.select(0, 1), "a"),
    ("split", lambda a: sum(t.sum() for t in a.split(2, 1)), "a"),
    ("chunk", lambda a: a.chunk(3, 0)[1], "a"), ("unbind", lambda a: a.unbind(1)[2], "a"),
    ("diagonal", lambda q: q.diagonal(), "q"), ("diag", lambda r: hookgrad.diag(r), "r"),
    ("diag_embed", lambda a: hookgrad.diag_embed(a), "a"),
    # the views' copying twins (their nodes save no tensor either)
    ("view_copy", lambda a: hookgrad.view_copy(a, (4, 3)) * 2, "a"),
    ("transpose_copy", lambda b: hookgrad.transpose_copy(b, 0, 2), "b"),
    ("t_copy", lambda a: hookgrad.t_copy(a), "a"),
    ("permute_copy", lambda b: hookgrad.permute_copy(b, (2, 0, 1)), "b"),
    ("expand_copy", lambda r: hookgrad.expand_copy(r, (3, 4)), "r"),
    ("squeeze_copy", lambda a: hookgrad.squeeze_copy(a[None], 0)
     + hookgrad.squeeze_copy(a[None]) + hookgrad.squeeze_copy(a[None], [0]), "a"),
    ("unsqueeze_copy", lambda a: hookgrad.unsqueeze_copy(a, 1), "a"),
    ("narrow_copy", lambda a: a.narrow_copy(1, 1, 2), "a"),
    ("slice_copy", lambda a: hookgrad.slice_copy(a, 1, 1, 3), "a"),
    ("select_copy", lambda a: hookgrad.select_copy(a, 0, 1), "a"),
    ("split_copy", lambda a: sum(t.sum() for t in hookgrad.split_copy(a, 2, 1)), "a"),
    ("split_with_sizes_copy",
     lambda a: sum(t.sum() for t in hookgrad.split_with_sizes_copy(a, [1, 3], 1)), "a"),
    ("unbind_copy", lambda a: hookgrad.unbind_copy(a, 1)[2], "a"),
    ("diagonal_copy", lambda q: hookgrad.diagonal_copy(q), "q"),
    ("unfold_copy", lambda a: hookgrad.unfold_copy(a, 1, 2, 1), "a"),
    ("alias_copy", lambda a: hookgrad.alias_copy(a), "a"),
    ("as_strided_copy", lambda a: hookgrad.as_strided_copy(a, (2, 2), (1, 2)), "a"),
    ("as_strided_scatter", lambda a, b: hookgrad.as_strided_scatter(a, b[:2, :2], (2, 2),
                                                                    (1, 2), 1), "a a"),
    ("segment_reduce", lambda a: hookgrad.segment_reduce(
        a, "prod", lengths=hookgrad.tensor([[1, 3]] * 3), axis=1, initial=2.0)
     + hookgrad.segment_reduce(a, "max", offsets=hookgrad.tensor([[0, 2, 4]] * 3), axis=1), "a"),
    ("tril", lambda q: hookgrad.tril(q), "q"), ("triu", lambda q: hookgrad.triu(q, 1), "q"),
    ("cat", lambda a, b: hookgrad.cat([a, b], 1), "a a"),
    ("stack", lambda a, b: hookgrad.stack([a, b]), "a a"),
    ("flip", lambda a: a.flip(0), "a"), ("roll", lambda a: a.roll(1, 1), "a"),
    ("rot90", lambda a: hookgrad.rot90(a), "a"), ("repeat", lambda a: a.repeat(2, 1), "a"),
    ("tile", lambda a: hookgrad.tile(a, (2,)), "a"),
    ("repeat_interleave", lambda a: hookgrad.repeat_interleave(a, 2, 0), "a"),
    ("block_diag", lambda a, q: hookgrad.block_diag(a, q), "a q"),
    ("to_double", lambda a: a.float(), "a"), ("clone", lambda a: a.clone(), "a"),
    ("contiguous", lambda a: a.t().contiguous(), "a"), ("as_strided_T", lambda a: a.mT, "a"),
    ("pad", lambda a: F.pad(a, (1, 2)), "a"),
    ("pad_reflect", lambda x: F.pad(x, (1, 2, 2, 1), mode="reflect"), "img"),
    ("pad_replicate", lambda a: F.pad(a[None], (2, 1), mode="replicate"), "a"),
    ("pad_circular", lambda a: F.pad(a[None], (1, 1), mode="circular"), "a"),
    # indexing
    ("getitem_basic", lambda a: a[1:, ::2], "a"), ("getitem_int", lambda a: a[1], "a"),
    ("getitem_index", lambda a: a[[0, 2, 2]], "a"), ("getitem_mask", lambda a: a[MASK], "a"),
    ("getitem_two", lambda a: a[[0, 1], [3, 2]], "a"),
    ("gather", lambda a: a.gather(1, INDEX[:, :3].T.contiguous()[:3, :2]), "a"),
    ("take_along_dim", lambda a: hookgrad.take_along_dim(a, INDEX[:, :3].T[:3, :2], 1), "a"),
    ("scatter", lambda a, b: a.scatter(0, INDEX[:, :3] % 3, b[:2, :3]), "a a"),
    ("scatter_add", lambda a, b: a.scatter_add(0, INDEX[:, :3] % 3, b[:2, :3]), "a a"),
    ("index_select", lambda a: a.index_select(1, hookgrad.tensor([0, 3, 3])), "a"),
    ("index_add", lambda a, r: a.index_add(0, hookgrad.tensor([0, 2]), r.expand(2, 4)), "a r"),
    ("index_fill", lambda a: hookgrad.index_fill(a, 1, hookgrad.tensor([1]), 0.5), "a"),
    ("masked_scatter", lambda a, b: hookgrad.masked_scatter(a, MASK, b), "a a"),
    ("index_put", lambda a, r: hookgrad.index_put(a, (hookgrad.tensor([0, 2]),), r), "a r"),
    ("index_put_accumulate", lambda a, r: hookgrad.index_put(
        a, (hookgrad.tensor([0, 0]),), r, accumulate=True), "a r"),
    # in-place
    ("add_", _inplace(lambda a, b: a.add_(b)), "a r"),
    ("mul_", _inplace(lambda a, b: a.mul_(b)), "a a"),
    ("div_", _inplace(lambda a, b: a.div_(b)), "a p"),
    ("clamp_", _inplace(lambda a: a.clamp_(-0.5, 0.5)), "a"),
    ("clamp_tensor_", _inplace(lambda a, b: a.clamp_(min=b)), "a r"),
    ("exp_", _inplace(lambda a: a.exp_()), "a"), ("sigmoid_", _inplace(lambda a: a.sigmoid_()),
                                                  "a"),
    ("sqrt_", _inplace(lambda a: a.sqrt_()), "p"), ("sin_", _inplace(lambda a: a.sin_()), "a"),
    ("pow_", _inplace(lambda a, b: a.pow_(b)), "p a"),
    ("relu_", _inplace(lambda a: a.relu_()), "a"),
    ("masked_fill_", _inplace(lambda a: a.masked_fill_(MASK, 0.0)), "a"),
    ("setitem_slice", _inplace(lambda a, r: a.__setitem__((slice(1, 3),), r) or a), "a r"),
    ("setitem_index", _inplace(lambda a, r: a.__setitem__(([0, 2],), r) or a), "a r"),
    ("setitem_mask", _inplace(lambda a: a.__setitem__(MASK, 1.0) or a), "a"),
    ("view_inplace", _inplace(lambda a, r: (a[1].mul_(r), a)[1]), "a r"),
    ("copy_", _inplace(lambda a, b: a.copy_(b)), "a a"),
    ("index_put_", _inplace(lambda a, r: a.index_put_((hookgrad.tensor([1]),), r)), "a r"),
    ("index_add_", _inplace(lambda a, r: a.index_add_(0, hookgrad.tensor([1]), r[None])),
     "a r"),
    ("scatter_", _inplace(lambda a, b: a.scatter_(0, INDEX[:, :3] % 3, b[:2, :3])), "a a"),
    # nn.functional
    ("linear", lambda a, m: F.linear(a, m.T, m[0]), "a m"),
    ("conv2d", lambda x, w: F.conv2d(x, w, padding=1), "img w"),
    ("max_pool2d", lambda x: F.max_pool2d(x, 2), "img"),
    ("avg_pool2d", lambda x: F.avg_pool2d(x, 2), "img"),
    ("adaptive_avg_pool2d", lambda x: F.adaptive_avg_pool2d(x, 2), "img"),
    ("cross_map_lrn2d", lambda x: hookgrad.nn.CrossMapLRN2d(2, 0.3)(x), "img"),
    ("batch_norm", lambda x: F.batch_norm(x, None, None, training=True), "img"),
    ("layer_norm", lambda a, r: F.layer_norm(a, (4,), r, r), "a r"),
    ("group_norm", lambda x: F.group_norm(x, 2), "img"),
    ("native_dropout", lambda a: (hookgrad.manual_seed(0),
                                  hookgrad.native_dropout(a, 0.3, True)[0])[1], "a"),
    ("native_group_norm", lambda x: hookgrad.native_group_norm(x, None, None, 1, 2, 25, 2,
                                                               1e-5)[0], "img"),
    ("grid_sampler", lambda x: hookgrad.grid_sampler(
        x, hookgrad.tensor(np.tanh(INPUTS["img"][:, :, :3, :2].reshape(1, 3, 2, 2))), 0, 0,
        False),
     "img"),
    ("affine_grid_generator", lambda a: hookgrad.affine_grid_generator(
        a[:2, :3].reshape(1, 2, 3), [1, 1, 3, 4], False), "a"),
    ("embedding_bag", lambda m: hookgrad.embedding_bag(
        m, hookgrad.tensor([0, 2, 3, 1]), hookgrad.tensor([0, 2]), False, 2)[0], "m"),
    ("native_layer_norm", lambda a, r: hookgrad.native_layer_norm(a, (4,), r, r, 1e-5)[0],
     "a r"),
    ("mse_loss", lambda a, b: F.mse_loss(a, b), "a a"),
    ("smooth_l1_loss", lambda a, b: F.smooth_l1_loss(a, b), "a a"),
    ("huber_loss", lambda a, b: F.huber_loss(a, b), "a a"),
    ("cross_entropy", lambda a: F.cross_entropy(a, TARGET), "a"),
    ("nll_loss", lambda a: F.nll_loss(a.log_softmax(1), TARGET), "a"),
    ("bce", lambda u, v: F.binary_cross_entropy(u, v), "u u"),
    ("bce_with_logits", lambda a, u: F.binary_cross_entropy_with_logits(a, u), "a u"),
    # the losses' first gradients, recorded as torch's one node each
    ("mse_loss_grad", lambda a, b: _loss_gradient(F.mse_loss, a, b), "a a"),
    ("smooth_l1_loss_grad", lambda a, b: _loss_gradient(
        lambda x, y: F.smooth_l1_loss(x, y, reduction="sum", beta=0.5), a, b), "a a"),
    ("huber_loss_grad", lambda a, b: _loss_gradient(
        lambda x, y: F.huber_loss(x, y, reduction="none", delta=0.5), a, b), "a a"),
    ("bce_grad", lambda u, v: _loss_gradient(
        lambda x, y: F.binary_cross_entropy(x, y, hookgrad.tensor(INPUTS["p"])), u, v), "u u"),
    ("embedding", lambda m: F.embedding(INDEX, m), "m"),
    ("sdpa", lambda q, k, v: F.scaled_dot_product_attention(q, k, v), "seq seq seq"),
    # linear algebra
    ("linalg_solve", lambda q, m: hookgrad.linalg.solve(q, m), "q m"),
    ("solve_triangular", lambda q, m: hookgrad.linalg.solve_triangular(q, m, upper=True), "q m"),
    ("triangular_solve", lambda q, m: hookgrad.triangular_solve(m, q)[0], "q m"),
    ("cholesky", lambda q: hookgrad.linalg.cholesky(q @ q.mT), "q"),
    ("cholesky_old", lambda q: hookgrad.cholesky(q @ q.mT), "q"),
    ("cholesky_solve", lambda q, m: hookgrad.cholesky_solve(m, q.tril()), "q m"),
    ("cholesky_inverse", lambda q: hookgrad.cholesky_inverse(q.tril()), "q"),
    ("svd", lambda m: hookgrad.linalg.svd(m, full_matrices=False)[0].abs(), "m"),
    ("eigh", lambda q: hookgrad.linalg.eigh(q + q.mT)[0], "q"),
    ("qr", lambda m: hookgrad.linalg.qr(m).R, "m"),
    ("lu_factor", lambda q: hookgrad.linalg.lu_factor(q).LU, "q"),
    ("lu", lambda m: hookgrad.linalg.lu(m).U, "m"),
    ("lu_unpack", lambda q: hookgrad.lu_unpack(*hookgrad.linalg.lu_factor(q))[1], "q"),
    ("lu_solve", lambda q, m: hookgrad.linalg.lu_solve(*hookgrad.linalg.lu_factor(q), m),
     "q m"),
    ("pinv", lambda m: hookgrad.linalg.pinv(m), "m"),
    ("lstsq", lambda m, q: hookgrad.linalg.lstsq(q, m).solution, "m q"),
    ("matrix_exp", lambda q: hookgrad.linalg.matrix_exp(q / 4), "q"),
    # random draws with pathwise gradients (a fixed generator, so both runs draw alike)
    ("_standard_gamma", lambda p: hookgrad._standard_gamma(
        p, generator=hookgrad.Generator().manual_seed(0)), "p"),
    ("dirichlet_rsample", lambda p: (hookgrad.manual_seed(0),
                                     hookgrad.distributions.Dirichlet(p).rsample())[1], "p"),
]
IDS = [name for name, _, _ in TABLE]


def _inputs(specs: str) -> list:
    return [hookgrad.tensor(INPUTS[spec], requires_grad=True) for spec in specs.split()]


def _loss(result):
    outputs = result if isinstance(result, (tuple, list)) else (result,)
    total = 0
    for output in outputs:
        if isinstance(output, hookgrad.Tensor) and output.grad_fn is not None:
            weights = np.linspace(0.5, 1.5, output.numel()).reshape(output.shape)
            total = total + (output * hookgrad.tensor(weights)).sum()
    return total


def _grads(fn, specs: str):
    inputs = _inputs(specs)
    loss = _loss(fn(*inputs))
    return hookgrad.autograd.grad(loss, inputs, allow_unused=True, retain_graph=True), loss


class CopySaver(hookgrad.autograd.graph.saved_tensors_hooks):
    """Replaces every saved array with a private copy; remembers the arrays it was given."""

    def __init__(self):
        self.originals = []

        def pack(tensor):
            self.originals.append(tensor._data)
            return hookgrad.from_numpy(np.array(tensor._data, copy=True))

        super().__init__(pack, lambda copy: copy)


def _nodes(root) -> list:
    seen, stack = [], [root]
    while stack:
        node = stack.pop()
        if node is None or any(node is s for s in seen):
            continue
        seen.append(node)
        stack.extend(child for child, _ in node.next_functions)
        inner = getattr(node, "fn", None)  # CopySlices wraps the in-place op's node
        if inner is not None and hasattr(inner, "next_functions"):
            stack.append(inner)
    return seen


def _arrays_in(value, path: str):
    """(path, value) for every array or tensor reachable in plain containers."""
    if isinstance(value, (np.ndarray, hookgrad.Tensor)):
        yield path, value
    elif isinstance(value, (tuple, list)):
        for i, item in enumerate(value):
            yield from _arrays_in(item, f"{path}[{i}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _arrays_in(item, f"{path}[{key!r}]")


@pytest.mark.parametrize("fn, specs", [(fn, specs) for _, fn, specs in TABLE], ids=IDS)
def test_gradients_do_not_change_under_a_copying_saver(fn, specs):
    expected, _ = _grads(fn, specs)
    with CopySaver():
        actual, _ = _grads(fn, specs)
    for want, got in zip(expected, actual):
        assert (want is None) == (got is None)
        if want is not None:
            np.testing.assert_array_equal(got._data, want._data)


@pytest.mark.parametrize("fn, specs", [(fn, specs) for _, fn, specs in TABLE], ids=IDS)
def test_nodes_keep_no_array_outside_the_door(fn, specs):
    saver = CopySaver()
    with saver:
        _, loss = _grads(fn, specs)
    leaks = []
    for node in _nodes(loss.grad_fn):
        for path, value in _arrays_in(getattr(node, "__dict__", {}), node.name()):
            leaks.append(f"{path}: {type(value).__name__} {getattr(value, 'shape', '')}")
    assert not leaks, "kept outside ctx.save_for_backward: " + "; ".join(leaks)


def test_the_table_reaches_most_built_in_ops():
    """A guard against the table going stale: most node classes of the built-in ops appear."""
    classes, stack = set(), [BuiltinFunction]
    while stack:
        for sub in stack.pop().__subclasses__():
            if sub not in classes:
                classes.add(sub)
                stack.append(sub)
    public = {c._backward_cls.__name__ for c in classes
              if not c._backward_cls.__name__.startswith("_")}
    seen = set()
    for _, fn, specs in TABLE:
        _, loss = _grads(fn, specs)
        seen.update(node.name() for node in _nodes(loss.grad_fn))
    assert len(public & seen) >= 0.5 * len(public), sorted(public - seen)
