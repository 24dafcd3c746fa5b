"""Case tables of the corner probe (``corner_cases.py``): clamp bounds, promotion between
tensors, 0-d tensors and Python numbers, integer division and shifts, reductions over empty
dims, and calls with two problems at once. Each case is ``fn(lib) -> result``."""
from __future__ import annotations

import torch


def _arange(lib, *shape, dtype=None):
    count = 1
    for size in shape:
        count *= size
    return lib.arange(count, dtype=dtype or lib.float64).reshape(shape)


def clamp_cases():
    cases = {}
    bounds = {
        "f32_0d": lambda lib: lib.tensor(0.5, dtype=lib.float32),
        "f64_0d": lambda lib: lib.tensor(0.5, dtype=lib.float64),
        "i64_0d": lambda lib: lib.tensor(1),
        "i64_vec": lambda lib: lib.tensor([0, 1, 2]),
        "f32_vec": lambda lib: lib.tensor([0.5, 1.5, 2.5], dtype=lib.float32),
        "f64_col": lambda lib: lib.tensor([[0.5], [1.5]], dtype=lib.float64),
        "bool_0d": lambda lib: lib.tensor(True),
        "py_float": lambda lib: 0.5,
        "py_int": lambda lib: 1,
    }
    selves = {
        "i64": lambda lib: lib.tensor([0, 1, 2, 3]),
        "i32vec3": lambda lib: lib.tensor([0, 1, 5], dtype=lib.int32),
        "f32": lambda lib: lib.tensor([0.0, 1.0, 2.0], dtype=lib.float32),
        "u8": lambda lib: lib.tensor([0, 1, 200], dtype=lib.uint8),
        "bool": lambda lib: lib.tensor([True, False, True]),
        "f16": lambda lib: lib.tensor([0.0, 1.0, 2.0], dtype=lib.float16),
    }
    for sname, self_fn in selves.items():
        for bname, bound in bounds.items():
            cases[f"clamp_min_{sname}_{bname}"] = (
                lambda lib, s=self_fn, b=bound: lib.clamp(s(lib), min=b(lib)))
            cases[f"clamp_max_{sname}_{bname}"] = (
                lambda lib, s=self_fn, b=bound: lib.clamp(s(lib), max=b(lib)))
            cases[f"clamp__{sname}_{bname}"] = (
                lambda lib, s=self_fn, b=bound: s(lib).clamp_(min=b(lib)))
            cases[f"clip_both_{sname}_{bname}"] = (
                lambda lib, s=self_fn, b=bound: lib.clip(s(lib), b(lib), b(lib)))
    cases["clamp_mixed_bounds"] = lambda lib: lib.clamp(lib.tensor([1, 2, 3]), 0.5,
                                                        lib.tensor(2))
    cases["clamp_mixed_bounds2"] = lambda lib: lib.clamp(lib.tensor([1, 2, 3]),
                                                         lib.tensor(1), 2.5)
    cases["clamp_min_gt_max_tensor"] = lambda lib: lib.clamp(
        lib.tensor([0.0, 1.0, 2.0]), lib.tensor([2.0]), lib.tensor([1.0]))
    cases["clamp_int_float_bounds_inv"] = lambda lib: lib.clamp(lib.tensor([0, 5]), 3.5, 1.5)
    cases["clamp_min_max_nan"] = lambda lib: lib.clamp(
        lib.tensor([0.0, 1.0]), lib.tensor([float("nan"), 0.0]), lib.tensor([1.0, float("nan")]))
    cases["clamp_no_bounds_tensor"] = lambda lib: lib.clamp(lib.tensor([0.0]), None, None)
    cases["clamp_bcast_grow"] = lambda lib: lib.clamp(lib.tensor([1.0, 2.0]),
                                                      lib.tensor([[0.0], [1.5]]))
    cases["clamp__bcast_grow"] = lambda lib: lib.tensor([1.0, 2.0]).clamp_(
        lib.tensor([[0.0], [1.5]]))
    cases["clamp__int_float_bound"] = lambda lib: lib.tensor([1, 2]).clamp_(min=1.5)
    cases["clamp__int_tensor_float_bound"] = lambda lib: lib.tensor([1, 2]).clamp_(
        min=lib.tensor(1.5))
    cases["clamp_bool_bounds"] = lambda lib: lib.clamp(lib.tensor([True, False]), False, True)
    cases["clamp_min_only_python_bool"] = lambda lib: lib.clamp(lib.tensor([0, 3]), True)
    cases["clamp_complex"] = lambda lib: lib.clamp(lib.tensor([1 + 1j]), 0.0)
    for grad_name, args in {
        "eq_bounds": ([0.0, 1.0, 2.0], 1.0, 1.0),
        "x_at_bound": ([0.0, 1.0, 2.0], 0.0, 2.0),
        "inverted": ([0.0, 1.0, 2.0], 1.5, 0.5),
    }.items():
        cases[f"clamp_grad_{grad_name}"] = lambda lib, a=args: _clamp_grads(lib, *a, tensors=False)
        cases[f"clamp_grad_t_{grad_name}"] = lambda lib, a=args: _clamp_grads(lib, *a,
                                                                               tensors=True)
    return cases


def _clamp_grads(lib, values, low, high, tensors):
    x = lib.tensor(values, dtype=lib.float64, requires_grad=True)
    if tensors:
        lo = lib.full((3,), low, dtype=lib.float64, requires_grad=True)
        hi = lib.full((3,), high, dtype=lib.float64, requires_grad=True)
        out = lib.clamp(x, lo, hi)
        out.backward(lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64))
        return out, x.grad, lo.grad, hi.grad
    out = lib.clamp(x, low, high)
    out.backward(lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64))
    return out, x.grad


def promotion_cases():
    cases = {}
    zero_d = {
        "f64_0d": lambda lib: lib.tensor(2.5, dtype=lib.float64),
        "f32_0d": lambda lib: lib.tensor(2.5),
        "i64_0d": lambda lib: lib.tensor(3),
        "i8_0d": lambda lib: lib.tensor(3, dtype=lib.int8),
        "u8_0d": lambda lib: lib.tensor(200, dtype=lib.uint8),
        "bool_0d": lambda lib: lib.tensor(True),
        "py_bool": lambda lib: True,
        "py_float": lambda lib: 2.5,
        "py_int": lambda lib: 3,
        "py_big": lambda lib: 300,
    }
    tensors = {
        "i32": lambda lib: lib.tensor([1, 2], dtype=lib.int32),
        "u8": lambda lib: lib.tensor([1, 250], dtype=lib.uint8),
        "i8": lambda lib: lib.tensor([1, -2], dtype=lib.int8),
        "bool": lambda lib: lib.tensor([True, False]),
        "f16": lambda lib: lib.tensor([1.0, 2.0], dtype=lib.float16),
        "bf16": lambda lib: lib.tensor([1.0, 2.0], dtype=lib.bfloat16),
    }
    ops = {
        "add": lambda lib, a, b: a + b,
        "radd": lambda lib, a, b: b + a,
        "mul": lambda lib, a, b: a * b,
        "sub": lambda lib, a, b: a - b,
        "rsub": lambda lib, a, b: b - a,
        "div": lambda lib, a, b: a / b,
        "floordiv": lambda lib, a, b: a // b,
        "rfloordiv": lambda lib, a, b: b // a,
        "mod": lambda lib, a, b: a % b,
        "pow": lambda lib, a, b: a ** b,
        "rpow": lambda lib, a, b: b ** a,
        "and": lambda lib, a, b: a & b,
        "xor": lambda lib, a, b: a ^ b,
        "lshift": lambda lib, a, b: a << b,
        "eq": lambda lib, a, b: a == b,
        "where": lambda lib, a, b: lib.where(a > 0, a, b),
        "maximum": lambda lib, a, b: lib.maximum(a, b) if isinstance(b, lib.Tensor) else
        lib.maximum(a, lib.tensor(b)),
        "iadd": lambda lib, a, b: a.add_(b),
        "imul": lambda lib, a, b: a.mul_(b),
        "idiv": lambda lib, a, b: a.div_(b),
        "ilshift": lambda lib, a, b: a.__ilshift__(b),
        "atan2": lambda lib, a, b: lib.atan2(a, b) if isinstance(b, lib.Tensor) else
        lib.atan2(a, lib.tensor(b)),
    }
    for tname, tensor in tensors.items():
        for zname, other in zero_d.items():
            for oname, op in ops.items():
                cases[f"promote_{oname}_{tname}_{zname}"] = (
                    lambda lib, t=tensor, z=other, o=op: o(lib, t(lib), z(lib)))
    cases["u8_plus_i8"] = lambda lib: lib.tensor([200], dtype=lib.uint8) + lib.tensor(
        [-1], dtype=lib.int8)
    cases["u8_plus_i8_0d"] = lambda lib: lib.tensor([200], dtype=lib.uint8) + lib.tensor(
        -1, dtype=lib.int8)
    cases["0d_plus_0d"] = lambda lib: lib.tensor(1, dtype=lib.int8) + lib.tensor(2.5)
    cases["0d_u8_i8"] = lambda lib: lib.tensor(1, dtype=lib.uint8) + lib.tensor(
        2, dtype=lib.int8)
    cases["bool_sub"] = lambda lib: lib.tensor([True]) - lib.tensor([False])
    cases["bool_neg"] = lambda lib: -lib.tensor([True])
    cases["bool_rsub"] = lambda lib: 1 - lib.tensor([True])
    cases["bool_add"] = lambda lib: lib.tensor([True]) + lib.tensor([True])
    cases["bool_mul_true"] = lambda lib: lib.tensor([True]) * True
    cases["bool_div"] = lambda lib: lib.tensor([True]) / lib.tensor([True])
    cases["bool_sum"] = lambda lib: lib.tensor([True, True]).sum()
    cases["bool_cumsum"] = lambda lib: lib.tensor([True, True]).cumsum(0)
    cases["bool_pow"] = lambda lib: lib.tensor([True, False]) ** 2
    cases["bool_pow_bool"] = lambda lib: lib.tensor([True, False]) ** True
    cases["bool_floordiv"] = lambda lib: lib.tensor([True]) // lib.tensor([True])
    cases["bool_mod"] = lambda lib: lib.tensor([True]) % lib.tensor([True])
    cases["bool_lshift"] = lambda lib: lib.tensor([True]) << lib.tensor([True])
    cases["bool_invert"] = lambda lib: ~lib.tensor([True])
    cases["bool_abs"] = lambda lib: lib.tensor([True]).abs()
    return cases


def division_cases():
    cases = {}
    for dtype in ("int64", "int32", "int8", "uint8"):
        for oname, op in {
            "floordiv": lambda lib, a, b: a // b,
            "floor_divide": lambda lib, a, b: lib.floor_divide(a, b),
            "div_floor": lambda lib, a, b: lib.div(a, b, rounding_mode="floor"),
            "div_trunc": lambda lib, a, b: lib.div(a, b, rounding_mode="trunc"),
            "remainder": lambda lib, a, b: lib.remainder(a, b),
            "fmod": lambda lib, a, b: lib.fmod(a, b),
            "div": lambda lib, a, b: a / b,
        }.items():
            for label, (left, right) in {
                "by_zero": ([7, -7, 0], [0, 0, 0]),
                "neg": ([7, -7, 7, -7], [2, 2, -2, -2]),
                "min_by_neg1": ([-128, -2 ** 31, -2 ** 63], [-1, -1, -1]),
            }.items():
                if dtype == "uint8" and label != "by_zero":
                    continue
                if oname == "div_trunc" and label == "min_by_neg1":
                    continue  # torch 2.13 dies of SIGFPE here (integer overflow trap)
                cases[f"{oname}_{dtype}_{label}"] = (
                    lambda lib, o=op, d=dtype, l_=left, r=right: o(
                        lib, lib.tensor(_fit(l_, d), dtype=getattr(lib, d)),
                        lib.tensor(_fit(r, d), dtype=getattr(lib, d))))
            cases[f"{oname}_{dtype}_by_py0"] = (
                lambda lib, o=op, d=dtype: o(lib, lib.tensor([7, 0], dtype=getattr(lib, d)), 0))
            cases[f"{oname}_{dtype}_by_py0f"] = (
                lambda lib, o=op, d=dtype: o(lib, lib.tensor([7, 0], dtype=getattr(lib, d)), 0.0))
            cases[f"{oname}_{dtype}_by_0d"] = (
                lambda lib, o=op, d=dtype: o(lib, lib.tensor([7, 0], dtype=getattr(lib, d)),
                                             lib.tensor(0)))
            cases[f"{oname}_{dtype}_py_by_t0"] = (
                lambda lib, o=op, d=dtype: o(lib, 5, lib.tensor([0, 2], dtype=getattr(lib, d))))
    for dtype in ("int64", "int32", "int8", "uint8", "int16"):
        for exponent in (-1, -2, 0, 1, -0.5):
            cases[f"pow_{dtype}_{exponent}"] = (
                lambda lib, d=dtype, e=exponent: lib.pow(
                    lib.tensor([1, 2, 0], dtype=getattr(lib, d)), e))
            cases[f"pow_t_{dtype}_{exponent}"] = (
                lambda lib, d=dtype, e=exponent: lib.pow(
                    lib.tensor([1, 2, 0], dtype=getattr(lib, d)), lib.tensor(e)))
            cases[f"pow_tt_{dtype}_{exponent}"] = (
                lambda lib, d=dtype, e=exponent: lib.pow(
                    lib.tensor([1, 2, 0], dtype=getattr(lib, d)),
                    lib.tensor([e, e, e], dtype=getattr(lib, d)) if isinstance(e, int) else e))
            cases[f"pow_scalar_base_{dtype}_{exponent}"] = (
                lambda lib, d=dtype, e=exponent: lib.pow(
                    2, lib.tensor([e, 1], dtype=getattr(lib, d)) if isinstance(e, int) else e))
            cases[f"ipow_{dtype}_{exponent}"] = (
                lambda lib, d=dtype, e=exponent: lib.tensor([1, 2], dtype=getattr(lib, d)).pow_(e))
        for shift in (0, 1, 7, 8, 15, 16, 31, 32, 63, 64, 65, -1):
            for side in ("left", "right"):
                cases[f"shift_{side}_{dtype}_{shift}"] = (
                    lambda lib, d=dtype, s=shift, side=side: getattr(
                        lib, f"bitwise_{side}_shift")(
                        lib.tensor([1, 3, 100] + ([] if d == "uint8" else [-5]),
                                   dtype=getattr(lib, d)), s))
                cases[f"shift_t_{side}_{dtype}_{shift}"] = (
                    lambda lib, d=dtype, s=shift, side=side: getattr(
                        lib, f"bitwise_{side}_shift")(
                        lib.tensor([1, 3, 100] + ([] if d == "uint8" else [-5]),
                                   dtype=getattr(lib, d)),
                        lib.tensor(s, dtype=getattr(lib, d)) if not (d == "uint8" and s < 0)
                        else lib.tensor(s)))
    return cases


def _fit(values, dtype):
    info = torch.iinfo(getattr(torch, dtype))
    return [min(max(v, info.min), info.max) for v in values]


def reduction_cases():
    cases = {}
    shapes = {"0": (0,), "2x0": (2, 0), "0x3": (0, 3), "2x0x3": (2, 0, 3)}
    names = ["sum", "prod", "mean", "amax", "amin", "argmax", "argmin", "std", "var",
             "logsumexp", "median", "nanmedian", "mode", "cumsum", "cumprod", "max", "min",
             "nansum", "nanmean", "all", "any", "norm", "aminmax", "std_mean", "var_mean",
             "count_nonzero", "logcumsumexp", "cummax", "kthvalue", "sort", "topk"]
    dims = [None, 0, 1, -1, (0, -1), (0, 1), ()]
    for sname, shape in shapes.items():
        for name in names:
            for dim in dims:
                for keep in (False, True):
                    if dim is None and keep:
                        continue
                    cases[f"empty_{name}_{sname}_{dim}_{keep}"] = (
                        lambda lib, n=name, s=shape, d=dim, k=keep: _reduce(lib, n, s, d, k))
    cases["sum_int_empty_dtype"] = lambda lib: lib.zeros(0, dtype=lib.int8).sum()
    cases["prod_bool_empty"] = lambda lib: lib.zeros(0, dtype=lib.bool).prod()
    cases["mean_int_empty"] = lambda lib: lib.zeros(0, dtype=lib.int64).mean()
    cases["amax_0d_dim"] = lambda lib: lib.tensor(1.0).amax((0, -1))
    cases["amax_0d_dim0"] = lambda lib: lib.tensor(1.0).amax(0)
    cases["amax_0d_dim1"] = lambda lib: lib.tensor(1.0).amax(1)
    cases["amax_dup_dims"] = lambda lib: _arange(lib, 2, 3).amax((0, -2))
    cases["sum_dup_dims"] = lambda lib: _arange(lib, 2, 3).sum((1, -1))
    cases["argmax_0d_dim"] = lambda lib: lib.tensor(1.0).argmax(0)
    cases["std_one"] = lambda lib: lib.tensor([1.0]).std()
    cases["var_one_dim"] = lambda lib: lib.tensor([[1.0, 2.0]]).var(0)
    return cases


def _reduce(lib, name, shape, dim, keep):
    x = lib.zeros(shape, dtype=lib.float64)
    fn = getattr(lib, name)
    if name == "kthvalue":
        return fn(x, 1, dim if dim is not None else -1, keepdim=keep)
    if name == "topk":
        return fn(x, 0, dim if dim is not None else -1)
    if name in ("cumsum", "cumprod", "logcumsumexp", "cummax", "sort"):
        if dim is None or keep:
            return fn(x, 0) if name != "sort" else fn(x)
        return fn(x, dim)
    if dim is None:
        return fn(x)
    return fn(x, dim, keepdim=keep)


def error_order_cases():
    return {
        "bool_add_shape_and_dtype": lambda lib: lib.tensor([True, False]).add_(
            lib.tensor([1.5, 2.5, 3.5])),
        "int_mul_shape_and_dtype": lambda lib: lib.tensor([1, 2]).mul_(
            lib.tensor([[1.5], [2.5]])),
        "int_div_shape": lambda lib: lib.tensor([1, 2]).div_(lib.tensor([1, 2, 3])),
        "int_div_": lambda lib: lib.tensor([1, 2]).div_(2),
        "int_add_float_": lambda lib: lib.tensor([1, 2]).add_(1.5),
        "int_add_bcast_grow_float": lambda lib: lib.tensor([1, 2]).add_(lib.ones(2, 2)),
        "bool_sub_bool": lambda lib: lib.tensor([True]).sub_(lib.tensor([True])),
        "bool_sub_shape": lambda lib: lib.tensor([True]).sub_(lib.tensor([True, False])),
        "int_sqrt_": lambda lib: lib.tensor([1, 2]).sqrt_(),
        "bool_neg_": lambda lib: lib.tensor([True]).neg_(),
        "int_copy_float": lambda lib: lib.tensor([1, 2]).copy_(lib.tensor([1.5, 2.5])),
        "int_copy_shape": lambda lib: lib.tensor([1, 2]).copy_(lib.tensor([1.5, 2.5, 3.5])),
        "ldexp_bool_exp": lambda lib: lib.ldexp(lib.tensor([1.0, 2.0]), lib.tensor([True, False])),
        "ldexp_bool_both": lambda lib: lib.ldexp(lib.tensor([True]), lib.tensor([True])),
        "ldexp_int_int": lambda lib: lib.ldexp(lib.tensor([1, 2]), lib.tensor([1, 2])),
        "ldexp_f16_int": lambda lib: lib.ldexp(lib.tensor([1.0], dtype=lib.float16),
                                               lib.tensor([3])),
        "ldexp_shape": lambda lib: lib.ldexp(lib.tensor([1.0, 2.0]), lib.tensor([True] * 3)),
        "kthvalue_0d_bool": lambda lib: lib.kthvalue(lib.tensor(True), 1),
        "kthvalue_0d_float": lambda lib: lib.kthvalue(lib.tensor(1.5), 1),
        "kthvalue_0d_k2": lambda lib: lib.kthvalue(lib.tensor(1.5), 2),
        "kthvalue_bool": lambda lib: lib.kthvalue(lib.tensor([True, False]), 1),
        "kthvalue_k0": lambda lib: lib.kthvalue(lib.tensor([1.0]), 0),
        "amax_empty_0_-1": lambda lib: lib.zeros(0, 3).amax((0, -1)),
        "amax_empty_0": lambda lib: lib.zeros(0, 3).amax(0),
        "amax_empty_1": lambda lib: lib.zeros(0, 3).amax(1),
        "amax_empty_dup": lambda lib: lib.zeros(0, 3).amax((0, 0)),
        "amin_empty_bool": lambda lib: lib.zeros(0, 3, dtype=lib.bool).amin((0, -1)),
        "max_empty_dim0": lambda lib: lib.zeros(0, 3).max(0),
        "max_empty_dim1": lambda lib: lib.zeros(0, 3).max(1),
        "bool_addcmul_": lambda lib: lib.tensor([True]).addcmul_(lib.tensor([True]),
                                                                lib.tensor([True])),
        "int_lerp_": lambda lib: lib.tensor([1]).lerp_(lib.tensor([2]), 0.5),
        "int_clamp_shape": lambda lib: lib.tensor([1, 2]).clamp_(lib.tensor([1.5, 2.5, 3.5])),
        "int_where_out": lambda lib: lib.where(lib.tensor([True]), lib.tensor([1.5]),
                                               lib.tensor([2.5]), out=lib.tensor([1])),
        "bool_mul_float_": lambda lib: lib.tensor([True]).mul_(2.5),
        "bool_mul_int_": lambda lib: lib.tensor([True]).mul_(2),
        "u8_sub_neg": lambda lib: lib.tensor([1], dtype=lib.uint8).sub_(-3),
        "int_pow_neg_shape": lambda lib: lib.tensor([1, 2]).pow_(lib.tensor([-1, -1, -1])),
    }
