"""Layout-sweep calls for the methods added beside existing ops (method spellings, in-place
forms, the math, statistics and scatter functions), merged into ``_layout_table.CALLS``."""
from __future__ import annotations

_SAME_OPERAND = ["greater", "greater_equal", "less", "less_equal", "not_equal", "inner",
                 "logaddexp2", "heaviside", "nextafter"]
_IN_PLACE_WITH_SELF = [
    "eq_", "ne_", "lt_", "le_", "gt_", "ge_", "greater_", "greater_equal_", "less_",
    "less_equal_", "not_equal_", "logical_and_", "logical_or_", "logical_xor_", "remainder_",
    "floor_divide_", "divide_", "true_divide_", "multiply_", "subtract_", "copysign_", "xlogy_",
    "arctan2_", "heaviside_", "nextafter_"]
_IN_PLACE_UNARY = ["logical_not_", "acosh_", "arccosh_", "asinh_", "arcsinh_", "atanh_",
                   "arctanh_", "erfc_", "lgamma_", "digamma_"]
_UNARY = ["erfc", "isposinf", "isneginf", "signbit", "fliplr", "flipud", "cov", "corrcoef",
          "histc", "lgamma", "digamma", "short", "t_", "byte", "char", "isreal", "angle",
          "adjoint", "conj", "conj_physical", "resolve_conj", "resolve_neg"]
_INTEGER = ["bitwise_and", "bitwise_or", "bitwise_xor", "gcd", "lcm", "bitwise_and_",
            "bitwise_or_", "bitwise_xor_", "gcd_", "lcm_", "bitwise_left_shift",
            "bitwise_right_shift", "bitwise_left_shift_", "bitwise_right_shift_", "__lshift__",
            "__rlshift__", "__rshift__", "__rrshift__", "__ilshift__", "__irshift__", "__iand__",
            "__ior__", "__ixor__"]


def _ints(t):
    return (t * 10).long()


MORE_CALLS = {
    **{name: (lambda name: lambda L, t: getattr(t, name)(t))(name) for name in _SAME_OPERAND},
    **{name: (lambda name: lambda L, t: getattr(t * 1, name)(t))(name)
       for name in _IN_PLACE_WITH_SELF},
    **{f"{name}_number": (lambda name: lambda L, t: getattr(t * 1, name)(0.5))(name)
       for name in _IN_PLACE_WITH_SELF[:11]},
    **{name: (lambda name: lambda L, t: getattr(t * 1, name)())(name) for name in _IN_PLACE_UNARY},
    **{name: (lambda name: lambda L, t: getattr(t, name)())(name) for name in _UNARY},
    **{name: (lambda name: lambda L, t: getattr(_ints(t), name)(_ints(t).t().t()))(name)
       for name in _INTEGER},
    "bitwise_not_": lambda L, t: _ints(t).bitwise_not_(),
    "addmm_": lambda L, t: (t * 1).addmm_(t, L.eye(4)),
    "baddbmm_": lambda L, t: (t * 1)[None].baddbmm_(t[None], L.eye(4)[None]),
    "cumsum_": lambda L, t: (t * 1).cumsum_(1), "cumprod_": lambda L, t: (t * 1).cumprod_(0),
    "transpose_": lambda L, t: t.transpose_(0, 1), "swapaxes_": lambda L, t: t.swapaxes_(1, 0),
    "swapdims_": lambda L, t: t.swapdims_(0, 1), "squeeze_": lambda L, t: t[:1].squeeze_(),
    "unsqueeze_": lambda L, t: t.unsqueeze_(1),
    "float_power": lambda L, t: t.float_power(2), "float_power_": lambda L, t: t.double()
    .float_power_(2),
    "ldexp": lambda L, t: t.ldexp(_ints(t)), "ldexp_": lambda L, t: (t * 1).ldexp_(_ints(t)),
    "frexp": lambda L, t: t.frexp(), "vdot": lambda L, t: t[0].vdot(t[1]),
    "hsplit": lambda L, t: t.hsplit(2), "vsplit": lambda L, t: t.vsplit([1]),
    "dsplit": lambda L, t: t[None].dsplit(2),
    "quantile": lambda L, t: t.quantile(0.3, 1), "nanquantile": lambda L, t: t.nanquantile(0.6),
    "select_scatter": lambda L, t: t.select_scatter(t[0], 0, 1),
    "slice_scatter": lambda L, t: t.slice_scatter(t[:, :2], 1, 1, 3),
    "as_strided_scatter": lambda L, t: t.as_strided_scatter(t[:2, :2] * 2, (2, 2), (1, 3), 1),
    "slice_inverse": lambda L, t: t.slice_inverse(t[:, 1:3], 1, 1, 3),
    "diagonal_scatter": lambda L, t: t.diagonal_scatter(t[0, :3]),
    "index_copy": lambda L, t: t.index_copy(1, L.tensor([2, 0]), t[:, :2]),
    "index_copy_": lambda L, t: (t * 1).index_copy_(1, L.tensor([2, 0]), t[:, :2]),
    "index_reduce": lambda L, t: t.index_reduce(1, L.tensor([2, 0]), t[:, :2], "amax"),
    "index_reduce_": lambda L, t: (t * 1).index_reduce_(1, L.tensor([2, 0, 2]), t[:, :3], "mean",
                                                        include_self=False),
    "scatter_reduce": lambda L, t: t.scatter_reduce(1, L.tensor([[0], [1], [2]]), t, "amax"),
    "scatter_reduce_": lambda L, t: (t * 1).scatter_reduce_(1, L.tensor([[0], [1], [2]]), t,
                                                            "sum"),
    "polygamma": lambda L, t: t.polygamma(1), "polygamma_": lambda L, t: (t * 1).polygamma_(2),
    "mvlgamma": lambda L, t: (t + 2).mvlgamma(2), "mvlgamma_": lambda L, t: (t + 2).mvlgamma_(1),
    "addmv": lambda L, t: t[:, 0].addmv(t, t[0]), "addmv_": lambda L, t: (t[:, 0] * 1).addmv_(
        t, t[0]),
    "addr": lambda L, t: t.addr(t[:, 0], t[0]), "addr_": lambda L, t: (t * 1).addr_(t[:, 0], t[0]),
    "addbmm": lambda L, t: t.addbmm(t[None], L.eye(4)[None]),
    "addbmm_": lambda L, t: (t * 1).addbmm_(t[None], L.eye(4)[None]),
    "dist": lambda L, t: t.dist(t[0]), "renorm": lambda L, t: t.renorm(2, 0, 0.5),
    "renorm_": lambda L, t: (t * 1).renorm_(1, 1, 0.5), "erfinv": lambda L, t: t.erfinv(),
    "erfinv_": lambda L, t: (t * 1).erfinv_(), "i0": lambda L, t: t.i0(),
    "i0_": lambda L, t: (t * 1).i0_(), "unfold": lambda L, t: t.unfold(1, 2, 1),
    "narrow_copy": lambda L, t: t.t().narrow_copy(0, 1, 2),
    "igamma": lambda L, t: t.abs().igamma(t.abs()[0]),
    "igammac": lambda L, t: t.abs().igammac(t.abs().t()),
    "igamma_": lambda L, t: (t.abs() + 1).igamma_(t.abs()),
    "igammac_": lambda L, t: (t.abs() + 1).igammac_(t.abs()[0]),
    "det": lambda L, t: t[:, :3].det(), "logdet": lambda L, t: t[:, :3].logdet(),
    "slogdet": lambda L, t: t[:, :3].slogdet(),
    "inverse": lambda L, t: (t[:, :3] + L.eye(3) * 3).inverse(),
    "conj_physical_": lambda L, t: (t * 1).conj_physical_(),
    "new": lambda L, t: t.new([[1.0, 2.0]]),
    "unsafe_split": lambda L, t: t.unsafe_split(2, 1),
    "unsafe_chunk": lambda L, t: t.unsafe_chunk(2),
    "unsafe_split_with_sizes": lambda L, t: t.unsafe_split_with_sizes([1, 2]),
    "put": lambda L, t: t.put(L.tensor([0, 5]), L.tensor([1.0, 2.0])),
    "put_": lambda L, t: (t * 1).put_(L.tensor([0, 5]), L.tensor([1.0, 2.0]), accumulate=True),
    "histogram": lambda L, t: t.histogram(3),
    "nonzero_static": lambda L, t: t.nonzero_static(size=5),
    "set_": lambda L, t: L.empty(0).set_(t),
    # factorisations and solves: LAPACK leaves torch's results column by column
    "cholesky": lambda L, t: (t @ t.mT + L.eye(3)).cholesky(),
    "cholesky_solve": lambda L, t: t.cholesky_solve(t[:, :3].tril() + L.eye(3)),
    "cholesky_inverse": lambda L, t: (t[:, :3].tril() + L.eye(3)).cholesky_inverse(),
    "triangular_solve": lambda L, t: t.triangular_solve(t[:, :3].triu() + L.eye(3)),
    "lu": lambda L, t: t.lu(get_infos=True),
    "lu_solve": lambda L, t: t.lu_solve(*L.linalg.lu_factor(t[:, :3] + L.eye(3) * 3)),
    "matrix_power": lambda L, t: t[:, :3].matrix_power(3),
    "matrix_exp": lambda L, t: t[:, :3].matrix_exp(),
    "pinverse": lambda L, t: t.pinverse(), "svd": lambda L, t: t.svd(),
    "qr": lambda L, t: t.qr(), "geqrf": lambda L, t: t.mT.geqrf(),
    "orgqr": lambda L, t: (lambda a, tau: a.orgqr(tau))(*t.mT.geqrf()),
    "ormqr": lambda L, t: (lambda a, tau: a.ormqr(tau, t.mT))(*t.mT.geqrf()),
}

MORE_NOT_SWEPT = {"as_strided_": "the strides are its arguments: tests/ops/test_inplace_extra.py",
                  "is_complex": "a predicate: no tensor out", "is_signed": "a predicate",
                  "is_same_size": "a predicate", "split_with_sizes": "split's views: "
                  "tests/ops/test_creation_more.py", "is_conj": "a predicate",
                  "is_neg": "a predicate", "is_pinned": "a predicate", "is_shared": "a predicate",
                  "dim_order": "a tuple", "pin_memory": "raises on a CPU-only torch",
                  "share_memory_": "returns self", "resize_": "contiguous by definition: "
                  "tests/ops/test_storage_methods.py", "resize_as_": "as resize_",
                  "apply_": "in place, element by element", "map_": "as apply_",
                  "new_empty_strided": "the strides are its arguments",
                  "storage": "a storage, not a tensor: tests/test_storage.py",
                  "storage_type": "a class", "_is_view": "a predicate",
                  "is_set_to": "a predicate",
                  "__dlpack__": "a capsule, no tensor: tests/ops/test_creation_extra.py",
                  "__dlpack_device__": "a tuple", "is_distributed": "a predicate"}
