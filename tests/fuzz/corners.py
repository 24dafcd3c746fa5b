"""Corner-input probe: the same call through torch and hookgrad over a matrix of awkward inputs.

The program fuzzer (``python -m tests.fuzz``) draws whole programs of views, ops and backward
calls on ordinary float tensors; this probe instead runs one call at a time over the inputs where
libraries disagree: 0-d and empty tensors, non-contiguous views (transposed, stepped slices,
expanded), every integer and float dtype with NaN, infinities and -0.0, Python scalars and 0-d
tensors as second operands (type promotion), and dims given as negatives, tuples and keepdim.

    python -m tests.fuzz.corners [--only NAME] [--limit N] [--verbose]

A case passes when both libraries raise the same exception type, or both return results with
equal shapes, dtypes, values (NaN where torch has NaN; float tolerances by dtype) and
``requires_grad``. Prints each mismatch and a summary; exits 1 if any mismatched.
"""
from __future__ import annotations

import argparse
import itertools
import sys
import warnings

import numpy as np
import torch

import hookgrad

torch.set_num_threads(1)

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
TOLERANCE = {"float64": (1e-10, 1e-12), "float32": (1e-5, 1e-6), "float16": (2e-3, 1e-3),
             "bfloat16": (1.6e-2, 1e-2)}


def _values(dtype: str, shape, rng) -> np.ndarray:
    """An array of ``shape`` rich in corner values for ``dtype`` (as float64 or int64)."""
    size = int(np.prod(shape)) if shape else 1
    if dtype == "bool":
        pool = np.array([0, 1])
    elif dtype == "uint8":
        pool = np.array([0, 1, 2, 3, 7, 200, 255])
    elif dtype.startswith("int"):
        pool = np.array([0, 1, -1, 2, -2, 3, -7, 5, 100, -100])
    else:
        pool = np.array([0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 0.5, -1.5, np.nan, np.inf, -np.inf,
                         3.0, 1e-3])
    data = rng.choice(pool, size=size)
    return data.reshape(shape)


def make(lib, array: np.ndarray, dtype: str, layout: str, requires_grad: bool = False):
    """A tensor of ``lib`` holding ``array`` in ``dtype`` and in ``layout``."""
    dt = getattr(lib, dtype)
    wide = np.asarray(array, dtype=np.float64 if dtype in FLOATS else np.int64)
    base = lib.tensor(wide.copy()).to(dt)
    if layout == "transposed":
        base = base.t().contiguous().t() if base.ndim == 2 else base
    elif layout == "stepped":
        # build a larger tensor and take every other element along dim 0
        if base.ndim >= 1:
            big = lib.stack([base, base], 1).reshape((base.shape[0] * 2,) + tuple(base.shape[1:]))
            base = big[::2]
    elif layout == "expanded":
        if base.ndim >= 1 and base.shape[0] > 0:
            base = base[:1].expand(base.shape)
    elif layout == "flipped":
        base = base.flip(0) if base.ndim >= 1 else base
    if requires_grad:
        base = base.detach().requires_grad_(True)
    return base


SHAPES = {"scalar": (), "empty": (0,), "empty3": (2, 0, 3), "vec": (5,), "mat": (3, 4)}
LAYOUTS = ["contiguous", "transposed", "stepped", "expanded"]


def inputs(dtypes=DTYPES, shapes=SHAPES, layouts=LAYOUTS, seed: int = 0):
    """(label, array, dtype, layout) for every combination that makes sense."""
    rng = np.random.default_rng(seed)
    for dtype in dtypes:
        for shape_name, shape in shapes.items():
            array = _values(dtype, shape, rng)
            for layout in layouts:
                if layout != "contiguous" and len(shape) < 1:
                    continue
                if layout == "transposed" and len(shape) != 2:
                    continue
                yield f"{dtype}/{shape_name}/{layout}", array, dtype, layout


def _scalars():
    return [2, -3, 0, 2.5, -0.0, float("nan"), float("inf"), True, False]


def _outcome(fn, lib, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "ok", fn(lib, *args)
        except Exception as error:  # noqa: BLE001 - the type is the answer
            return "err", error


def _flat(result):
    if isinstance(result, (tuple, list)):
        out = []
        for item in result:
            out.extend(_flat(item))
        return out
    return [result]


def _to_np(t):
    if t.dtype == torch.bfloat16:
        return t.detach().float().numpy()
    return t.detach().numpy()


def _hg_np(t):
    if t.dtype == hookgrad.bfloat16:
        return t.detach().float().numpy()
    return t.detach().numpy()


def differ(hg, th) -> str:
    """'' when the two outcomes agree, else a short reason."""
    (hk, hv), (tk, tv) = hg, th
    if hk != tk:
        return (f"hookgrad {hk} {hv!r:.150} | torch {tk} {tv!r:.150}").replace("\n", " ")
    if hk == "err":
        if type(hv).__name__ != type(tv).__name__:
            return f"error type {type(hv).__name__}({hv}) vs torch {type(tv).__name__}({tv})"
        return ""
    hs, ts = _flat(hv), _flat(tv)
    if len(hs) != len(ts):
        return f"{len(hs)} outputs vs torch {len(ts)}"
    for i, (h, t) in enumerate(zip(hs, ts)):
        if not isinstance(t, torch.Tensor):
            if isinstance(h, hookgrad.Tensor):
                return f"out {i}: tensor vs torch {type(t).__name__}"
            if isinstance(t, float) and isinstance(h, float) and np.isnan(t) and np.isnan(h):
                continue
            if h != t or type(h) is not type(t):
                return f"out {i}: {h!r} vs torch {t!r}"
            continue
        if not isinstance(h, hookgrad.Tensor):
            return f"out {i}: {type(h).__name__} vs torch tensor"
        if tuple(h.shape) != tuple(t.shape):
            return f"out {i}: shape {tuple(h.shape)} vs torch {tuple(t.shape)}"
        hd, td = str(h.dtype).split(".")[-1], str(t.dtype).split(".")[-1]
        if hd != td:
            return f"out {i}: dtype {hd} vs torch {td}"
        if h.requires_grad != t.requires_grad:
            return f"out {i}: requires_grad {h.requires_grad} vs torch {t.requires_grad}"
        a, e = _hg_np(h), _to_np(t)
        if a.dtype.kind == "f":
            if not np.array_equal(np.isnan(a), np.isnan(e)):
                return f"out {i}: NaN positions {a.ravel()[:8]} vs torch {e.ravel()[:8]}"
            rtol, atol = TOLERANCE.get(td, (0, 0))
            ok = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=True)
            if not ok.all():
                return f"out {i}: values {a.ravel()[:8]} vs torch {e.ravel()[:8]}"
        elif not np.array_equal(a, e):
            return f"out {i}: values {a.ravel()[:8]} vs torch {e.ravel()[:8]}"
    return ""


# ---------------------------------------------------------------------------------------------
# Op tables: name -> fn(lib, x) (unary) or fn(lib, x, y) (binary), run over the input matrix.

UNARY = {
    name: (lambda n: lambda lib, x: getattr(lib, n)(x))(name)
    for name in ["abs", "neg", "sign", "sgn", "sqrt", "rsqrt", "exp", "exp2", "expm1", "log",
                 "log2", "log10", "log1p", "floor", "ceil", "round", "trunc", "frac", "sigmoid",
                 "tanh", "sin", "cos", "reciprocal", "square", "isnan", "isinf", "isfinite",
                 "isposinf", "isneginf", "isreal", "signbit", "logical_not", "bitwise_not",
                 "positive", "nan_to_num", "erf", "erfc", "erfinv", "lgamma", "digamma",
                 "relu", "sinc", "deg2rad", "rad2deg", "atan", "asin", "acos", "sinh",
                 "cosh", "asinh", "acosh", "atanh", "angle", "fix", "i0", "logit",
                 "count_nonzero", "nonzero", "argwhere", "flatten", "ravel", "clone",
                 "t", "msort", "trace", "diag", "triu", "tril", "fliplr",
                 "isclose" if False else "conj"]
}
UNARY.update({
    "round_dec": lambda lib, x: lib.round(x, decimals=1),
    "nan_to_num_args": lambda lib, x: lib.nan_to_num(x, nan=1.5, posinf=7.0, neginf=-7.0),
    "clamp_min0": lambda lib, x: lib.clamp(x, min=0),
    "clamp_int": lambda lib, x: lib.clamp(x, -1, 2),
    "clamp_float": lambda lib, x: lib.clamp(x, -0.5, 2.5),
    "clamp_nan": lambda lib, x: lib.clamp(x, min=float("nan")),
    "clamp_nanmax": lambda lib, x: lib.clamp(x, max=float("nan")),
    "clamp_inverted": lambda lib, x: lib.clamp(x, 2, -1),
    "clamp_none": lambda lib, x: lib.clamp(x),
    "clip_tensor": lambda lib, x: lib.clip(x, lib.tensor(0.5), lib.tensor(1)),
    "clamp_nan_tensor": lambda lib, x: lib.clamp(x, min=lib.tensor(float("nan"))),
    "relu_": lambda lib, x: lib.relu(x.clone()),
    "pow2": lambda lib, x: lib.pow(x, 2),
    "pow_neg": lambda lib, x: lib.pow(x, -1),
    "pow_neg2": lambda lib, x: lib.pow(x, -2),
    "pow_half": lambda lib, x: lib.pow(x, 0.5),
    "pow0": lambda lib, x: lib.pow(x, 0),
    "rpow": lambda lib, x: 2 ** x,
    "rpow_neg": lambda lib, x: (-2) ** x,
    "rpow_float": lambda lib, x: 2.5 ** x,
    "pow_scalar_base": lambda lib, x: lib.pow(3, x),
    "float_pow": lambda lib, x: lib.float_power(x, 2),
    "softmax0": lambda lib, x: lib.softmax(x, 0),
    "log_softmax-1": lambda lib, x: lib.log_softmax(x, -1),
    "softmax_dt": lambda lib, x: lib.softmax(x, -1, dtype=lib.float64),
})

REDUCE_NAMES = ["sum", "prod", "mean", "nansum", "nanmean", "amax", "amin", "max", "min",
                "argmax", "argmin", "std", "var", "median", "nanmedian", "logsumexp", "all",
                "any", "cumsum", "cumprod", "cummax", "cummin", "sort", "argsort", "norm",
                "count_nonzero", "aminmax", "mode", "std_mean", "var_mean", "logcumsumexp",
                "unique", "unique_consecutive", "kthvalue", "topk", "quantile", "nanquantile",
                "softmax", "diff", "flip", "roll", "squeeze", "unsqueeze"]


def _reduce_calls(name):
    """(label, fn) pairs: the op with no dim, with dims 0 and -1, a dim tuple, keepdim."""
    calls = []
    if name in ("kthvalue",):
        return [(f"{name}(1,dim)", lambda lib, x, d=d: lib.kthvalue(x, 1, d)) for d in (0, -1)]
    if name == "topk":
        return [(f"topk({k},{d})", lambda lib, x, k=k, d=d: lib.topk(x, k, d))
                for k in (0, 1, 2) for d in (0, -1)] + [
            ("topk_smallest", lambda lib, x: lib.topk(x, 1, largest=False))]
    if name in ("quantile", "nanquantile"):
        f = name
        return [(f"{f}(q)", lambda lib, x: getattr(lib, f)(x, 0.4)),
                (f"{f}(q,0)", lambda lib, x: getattr(lib, f)(x, 0.5, dim=0)),
                (f"{f}(qs,-1,keep)", lambda lib, x: getattr(lib, f)(
                    x, lib.tensor([0.25, 0.75], dtype=x.dtype) if x.is_floating_point()
                    else lib.tensor([0.25, 0.75]), dim=-1, keepdim=True)),
                (f"{f}(q,0,lower)", lambda lib, x: getattr(lib, f)(
                    x, 0.3, dim=0, interpolation="lower")),
                (f"{f}(q,midpoint)", lambda lib, x: getattr(lib, f)(
                    x, 0.3, interpolation="midpoint")),
                (f"{f}(q,nearest)", lambda lib, x: getattr(lib, f)(
                    x, 0.5, interpolation="nearest"))]
    if name in ("unique",):
        return [("unique", lambda lib, x: lib.unique(x)),
                ("unique_all", lambda lib, x: lib.unique(x, return_inverse=True,
                                                         return_counts=True)),
                ("unique_dim0", lambda lib, x: lib.unique(x, dim=0, return_inverse=True,
                                                          return_counts=True)),
                ("unique_unsorted", lambda lib, x: lib.unique(x, sorted=False).sort()[0])]
    if name == "unique_consecutive":
        return [("unique_consecutive", lambda lib, x: lib.unique_consecutive(
            x, return_inverse=True, return_counts=True)),
            ("unique_consecutive0", lambda lib, x: lib.unique_consecutive(
                x, dim=0, return_counts=True))]
    if name == "diff":
        return [("diff", lambda lib, x: lib.diff(x)), ("diff0", lambda lib, x: lib.diff(x, dim=0)),
                ("diff2", lambda lib, x: lib.diff(x, n=2, dim=-1))]
    if name == "roll":
        return [("roll", lambda lib, x: lib.roll(x, 1)),
                ("roll0", lambda lib, x: lib.roll(x, -1, 0))]
    if name == "flip":
        return [("flip-1", lambda lib, x: lib.flip(x, (-1,)))]
    if name in ("squeeze", "unsqueeze"):
        return [(f"{name}-1", lambda lib, x, n=name: getattr(lib, n)(x, -1))]
    if name == "norm":
        return [("norm", lambda lib, x: lib.norm(x)),
                ("norm1", lambda lib, x: lib.norm(x, 1)),
                ("norm_inf", lambda lib, x: lib.norm(x, float("inf"))),
                ("norm0", lambda lib, x: lib.norm(x, 0)),
                ("vector_norm_-inf", lambda lib, x: lib.linalg.vector_norm(x, float("-inf"))),
                ("norm_dim", lambda lib, x: lib.norm(x, dim=-1, keepdim=True))]
    if name in ("cumsum", "cumprod", "cummax", "cummin", "logcumsumexp", "softmax", "argsort",
                "sort"):
        calls = [(f"{name}({d})", lambda lib, x, d=d: getattr(lib, name)(x, d)) for d in (0, -1)]
        if name in ("cumsum", "cumprod"):
            calls.append((f"{name}_dt", lambda lib, x: getattr(lib, name)(x, 0,
                                                                          dtype=lib.float64)))
        if name == "sort":
            calls += [("sort_desc", lambda lib, x: lib.sort(x, descending=True)),
                      ("sort_stable", lambda lib, x: lib.sort(x, stable=True, dim=0)),
                      ("argsort_stable_desc", lambda lib, x: lib.argsort(
                          x, stable=True, descending=True))]
        return calls
    calls.append((name, lambda lib, x: getattr(lib, name)(x)))
    for d in (0, -1):
        calls.append((f"{name}({d})", lambda lib, x, d=d: getattr(lib, name)(x, d)))
        calls.append((f"{name}({d},keep)",
                      lambda lib, x, d=d: getattr(lib, name)(x, d, keepdim=True)))
    if name in ("sum", "mean", "amax", "amin", "nansum", "nanmean", "std", "var", "logsumexp",
                "count_nonzero", "std_mean", "var_mean", "all", "any", "prod"):
        calls.append((f"{name}((0,-1))", lambda lib, x: getattr(lib, name)(x, (0, -1))))
        calls.append((f"{name}(())", lambda lib, x: getattr(lib, name)(x, ())))
    if name in ("sum", "mean", "prod", "nansum"):
        calls.append((f"{name}_dt", lambda lib, x: getattr(lib, name)(x, dtype=lib.float64)))
    if name in ("std", "var"):
        calls.append((f"{name}_c0", lambda lib, x: getattr(lib, name)(x, 0, correction=0)))
        calls.append((f"{name}_c2", lambda lib, x: getattr(lib, name)(x, correction=2)))
    return calls


# Which of several equal elements these ops point to is not specified by torch (and differs
# between its kernels), so only their values are compared.
TIES_UNSPECIFIED = ("kthvalue", "topk", "median", "nanmedian", "mode")


def _values_only(fn):
    def call(lib, x):
        result = fn(lib, x)
        return result[0] if isinstance(result, tuple) else result
    return call


REDUCE = {label: (_values_only(fn) if label.startswith(TIES_UNSPECIFIED) else fn)
          for label, fn in itertools.chain.from_iterable(_reduce_calls(n) for n in REDUCE_NAMES)}
# torch 2.13's median along a dim of an expanded (stride 0) input returns a wrong value (the
# median of [4, 4, 4, 4, 4] comes out 3 when the 4 is broadcast from a longer row): not probed.
SKIP = {("median", "expanded"), ("nanmedian", "expanded")}

BINARY_NAMES = ["add", "sub", "mul", "div", "true_divide", "floor_divide", "remainder", "fmod",
                "pow", "maximum", "minimum", "fmax", "fmin", "atan2", "eq", "ne", "lt", "le",
                "gt", "ge", "bitwise_and", "bitwise_or", "bitwise_xor", "logical_and",
                "logical_or", "logical_xor", "hypot", "copysign", "nextafter", "xlogy",
                "heaviside", "ldexp", "lerp", "bitwise_left_shift", "bitwise_right_shift",
                "gcd", "lcm", "float_power", "logaddexp", "isclose", "equal", "dist",
                "where"]


def _binary(name):
    if name == "lerp":
        return lambda lib, x, y: lib.lerp(x, y, 0.5)
    if name == "where":
        return lambda lib, x, y: lib.where(x > 0, x, y)
    return lambda lib, x, y: getattr(lib, name)(x, y)


BINARY = {name: _binary(name) for name in BINARY_NAMES}
BINARY.update({
    "div_floor": lambda lib, x, y: lib.div(x, y, rounding_mode="floor"),
    "div_trunc": lambda lib, x, y: lib.div(x, y, rounding_mode="trunc"),
    "add_alpha": lambda lib, x, y: lib.add(x, y, alpha=2),
    "sub_alpha": lambda lib, x, y: lib.sub(x, y, alpha=-1),
    "clamp_tensors": lambda lib, x, y: lib.clamp(x, min=y),
    "clamp_both": lambda lib, x, y: lib.clamp(x, y, y + 1),
    "op_floordiv": lambda lib, x, y: x // y,
    "op_mod": lambda lib, x, y: x % y,
    "op_pow": lambda lib, x, y: x ** y,
    "op_rsub": lambda lib, x, y: y - x,
    "op_and": lambda lib, x, y: x & y,
    "op_lshift": lambda lib, x, y: x << y,
    "iadd": lambda lib, x, y: x.clone().add_(y),
    "imul": lambda lib, x, y: x.clone().mul_(y),
    "idiv": lambda lib, x, y: x.clone().div_(y),
    "ifloordiv": lambda lib, x, y: x.clone().floor_divide_(y),
    "iremainder": lambda lib, x, y: x.clone().remainder_(y),
    "ipow": lambda lib, x, y: x.clone().pow_(y),
    "iclamp": lambda lib, x, y: x.clone().clamp_(min=y),
})


def _scalar_arg(lib, value, kind: str):
    if kind == "py":
        return value
    return lib.tensor(value)


def run_unary(table, dtypes=DTYPES, only=None, verbose=False, seed=0, grad=False):
    probes = mismatches = 0
    found = []
    for label, array, dtype, layout in inputs(dtypes, seed=seed):
        rg = grad and dtype in ("float32", "float64")
        for name, fn in table.items():
            if only and only not in name:
                continue
            if (name.split("(")[0], layout) in SKIP and "(" in name:
                continue
            probes += 1
            hg = _outcome(fn, hookgrad, make(hookgrad, array, dtype, layout, rg))
            th = _outcome(fn, torch, make(torch, array, dtype, layout, rg))
            reason = differ(hg, th)
            if reason:
                mismatches += 1
                found.append((name, label, reason))
                if verbose:
                    print(f"{name} [{label}]: {reason}")
    return probes, found


def run_binary(dtypes=DTYPES, only=None, verbose=False, seed=0):
    """Tensor op tensor over every dtype pair (small shapes), tensor op Python scalar and
    tensor op 0-d tensor."""
    probes = 0
    found = []
    rng = np.random.default_rng(seed)
    pairs = []
    for d1 in dtypes:
        for d2 in dtypes:
            for s1, s2 in [((3,), (3,)), ((2, 3), ()), ((), ()), ((0,), (1,)), ((2, 1), (3,))]:
                a, b = _values(d1, s1, rng), _values(d2, s2, rng)
                pairs.append((f"{d1}{list(s1)}.{d2}{list(s2)}", (a, d1, "contiguous"),
                              ("t", b, d2)))
        for value in _scalars():
            a = _values(d1, (4,), rng)
            pairs.append((f"{d1}[4].py({value!r})", (a, d1, "contiguous"), ("py", value)))
            pairs.append((f"{d1}[4].py({value!r})-rev", (a, d1, "contiguous"),
                          ("pyrev", value)))
    for name, fn in BINARY.items():
        if only and only not in name:
            continue
        for label, (a, d1, layout), second in pairs:
            probes += 1
            results = []
            for lib in (hookgrad, torch):
                x = make(lib, a, d1, layout)
                if second[0] == "t":
                    y = make(lib, second[1], second[2], "contiguous")
                    results.append(_outcome(fn, lib, x, y))
                elif second[0] == "py":
                    results.append(_outcome(fn, lib, x, second[1]))
                else:
                    results.append(_outcome(lambda lib_, u, v: fn(lib_, v, u)
                                            if isinstance(v, lib_.Tensor) else
                                            fn(lib_, u, v), lib, second[1], x))
            reason = differ(*results)
            if reason:
                found.append((name, label, reason))
                if verbose:
                    print(f"{name} [{label}]: {reason}")
    return probes, found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run only ops whose name contains this")
    parser.add_argument("--table", choices=["unary", "reduce", "binary", "all"], default="all")
    parser.add_argument("--dtypes", default=",".join(DTYPES))
    parser.add_argument("--grad", action="store_true", help="float inputs require grad")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--limit", type=int, default=200, help="mismatches printed at most")
    args = parser.parse_args(argv)
    dtypes = args.dtypes.split(",")
    total, found = 0, []
    if args.table in ("unary", "all"):
        n, f = run_unary(UNARY, dtypes, args.only, args.verbose, grad=args.grad)
        total += n
        found += f
    if args.table in ("reduce", "all"):
        n, f = run_unary(REDUCE, dtypes, args.only, args.verbose, grad=args.grad)
        total += n
        found += f
    if args.table in ("binary", "all"):
        n, f = run_binary(dtypes, args.only, args.verbose)
        total += n
        found += f
    if not args.verbose:
        for name, label, reason in found[:args.limit]:
            print(f"{name} [{label}]: {reason}")
    print(f"{total} probes, {len(found)} mismatches")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
