"""Hand-picked corner cases, one call each, run through torch and hookgrad.

Where ``corners.py`` sweeps a matrix of inputs through tables of ops, this probe lists single
programs for the corners a matrix does not reach: in-place ops whose self overlaps another
argument, indices out of range or of odd dtypes, clamp bounds of other dtypes, promotion between
0-d tensors, Python scalars and bool, integer division by zero, reductions over empty dims, and
the order in which two problems of one call are reported.

    python -m tests.fuzz.corner_cases [--only NAME] [--verbose]

Each case is ``fn(lib) -> result``; outcomes are compared with ``corners.differ`` (same
exception type, or equal shapes, dtypes and values). Exits 1 if any case mismatched.
"""
from __future__ import annotations

import argparse
import sys

import torch

import hookgrad
from tests.fuzz.corner_tables import (_arange, clamp_cases, division_cases, error_order_cases,
                                      promotion_cases, reduction_cases)
from tests.fuzz.corners import _outcome, differ


def _overlap_cases():
    cases = {
        "add_flip": lambda lib: (lambda x: x.add_(x.flip(0)))(_arange(lib, 5)),
        "mul_shifted": lambda lib: (lambda a: (a[1:].mul_(a[:-1]), a)[1])(_arange(lib, 6) + 1),
        "copy_t_square": lambda lib: (lambda x: x.copy_(x.t()))(_arange(lib, 3, 3)),
        "copy_t_view_square": lambda lib: (lambda x: (x.t().copy_(x), x)[1])(_arange(lib, 3, 3)),
        "copy_t_nonsquare": lambda lib: (lambda x: x.copy_(x.t()))(_arange(lib, 2, 3)),
        "addmm_self_arg": lambda lib: (lambda x: x.addmm_(x, x))(_arange(lib, 3, 3)),
        "addmm_self_t": lambda lib: (lambda x: x.addmm_(x.t(), x, beta=2))(_arange(lib, 3, 3)),
        "sub_self": lambda lib: (lambda x: x.sub_(x[0]))(_arange(lib, 3, 3)),
        "div_row": lambda lib: (lambda x: x.div_(x[:, :1] + 1))(_arange(lib, 3, 3)),
        "add_reversed_view": lambda lib: (lambda a: (a[:4].add_(a[1:5]), a)[1])(_arange(lib, 5)),
        "add_back_shifted": lambda lib: (lambda a: (a[1:].add_(a[:-1]), a)[1])(_arange(lib, 5)),
        "copy_shifted": lambda lib: (lambda a: (a[1:].copy_(a[:-1]), a)[1])(_arange(lib, 6)),
        "copy_shifted_back": lambda lib: (lambda a: (a[:-1].copy_(a[1:]), a)[1])(_arange(lib, 6)),
        "clamp_self": lambda lib: (lambda x: x.clamp_(x.flip(0), x.flip(0) + 1))(_arange(lib, 5)),
        "lerp_self": lambda lib: (lambda x: x.lerp_(x.flip(0), 0.5))(_arange(lib, 5)),
        "mul_self": lambda lib: (lambda x: x.mul_(x))(_arange(lib, 4)),
        "addcmul_flip": lambda lib: (lambda x: x.addcmul_(x.flip(0), x))(_arange(lib, 4)),
        "index_add_self": lambda lib: (lambda x: x.index_add_(
            0, lib.tensor([1, 0]), x.flip(0)))(_arange(lib, 2, 2)),
        "masked_scatter_self": lambda lib: (lambda x: x.masked_scatter_(
            x > 1, x.flip(0)))(_arange(lib, 4)),
        "setitem_self": lambda lib: (lambda x: (x.__setitem__(slice(1, None), x[:-1]), x)[1])(
            _arange(lib, 5)),
        "setitem_flip": lambda lib: (lambda x: (x.__setitem__(slice(None), x.flip(0)), x)[1])(
            _arange(lib, 5)),
        "baddbmm_self": lambda lib: (lambda x: x.baddbmm_(x, x))(_arange(lib, 2, 2, 2)),
        "cumsum_out_self": lambda lib: (lambda x: lib.cumsum(x, 0, out=x))(_arange(lib, 5)),
        "mm_out_self": lambda lib: (lambda x: lib.mm(x, x, out=x))(_arange(lib, 2, 2)),
        "add_out_flip": lambda lib: (lambda x: lib.add(x, x.flip(0), out=x))(_arange(lib, 5)),
    }
    for op in ("add_", "mul_", "copy_", "fill_", "zero_", "clamp_", "neg_", "exp_", "relu_",
               "addcmul_", "index_fill_", "masked_fill_", "scatter_", "lerp_", "pow_", "abs_",
               "sigmoid_", "normal_", "uniform_", "random_", "bernoulli_", "index_copy_",
               "index_put_", "put_", "where"):
        cases[f"expanded_{op}"] = lambda lib, op=op: _write_expanded(lib, op)
    return cases


def _write_expanded(lib, op):
    x = lib.zeros(1, 3).expand(2, 3)
    other = lib.ones(2, 3)
    if op in ("add_", "mul_", "copy_", "lerp_", "pow_"):
        return getattr(x, op)(other) if op != "lerp_" else x.lerp_(other, 0.5)
    if op == "fill_":
        return x.fill_(1.0)
    if op == "clamp_":
        return x.clamp_(0.5)
    if op == "addcmul_":
        return x.addcmul_(other, other)
    if op == "index_fill_":
        return x.index_fill_(1, lib.tensor([0]), 2.0)
    if op == "masked_fill_":
        return x.masked_fill_(other > 0, 2.0)
    if op == "scatter_":
        return x.scatter_(1, lib.tensor([[0], [1]]), 2.0)
    if op == "index_copy_":
        return x.index_copy_(1, lib.tensor([0]), lib.ones(2, 1))
    if op == "index_put_":
        return x.index_put_((lib.tensor([0]),), lib.tensor(3.0))
    if op == "put_":
        return x.put_(lib.tensor([0]), lib.tensor([3.0]))
    if op == "where":
        return lib.where(other > 0, x, other, out=x)
    if op in ("normal_", "uniform_", "random_", "bernoulli_"):
        return getattr(x, op)().shape
    return getattr(x, op)()


def _index_cases():
    cases = {}
    for kind in ("int64", "int32", "int16", "uint8", "int8", "bool"):
        cases[f"getitem_idx_{kind}"] = lambda lib, k=kind: _arange(lib, 4, 3)[
            lib.tensor([1, 0, 1], dtype=getattr(lib, k))]
    cases.update({
        "getitem_oob": lambda lib: _arange(lib, 4)[lib.tensor([4])],
        "getitem_neg": lambda lib: _arange(lib, 4)[lib.tensor([-1, -4])],
        "getitem_neg_oob": lambda lib: _arange(lib, 4)[lib.tensor([-5])],
        "getitem_int_oob": lambda lib: _arange(lib, 4)[4],
        "getitem_int_neg_oob": lambda lib: _arange(lib, 4)[-5],
        "getitem_0d": lambda lib: _arange(lib, 4, 3)[lib.tensor(2)],
        "getitem_0d_neg": lambda lib: _arange(lib, 4, 3)[lib.tensor(-1)],
        "getitem_0d_oob": lambda lib: _arange(lib, 4, 3)[lib.tensor(7)],
        "getitem_0d_bool": lambda lib: _arange(lib, 4, 3)[lib.tensor(True)],
        "getitem_0d_false": lambda lib: _arange(lib, 4, 3)[lib.tensor(False)],
        "getitem_0d_float": lambda lib: _arange(lib, 4, 3)[lib.tensor(1.0)],
        "getitem_empty_idx": lambda lib: _arange(lib, 4, 3)[lib.tensor([], dtype=lib.int64)],
        "getitem_empty_float_idx": lambda lib: _arange(lib, 4, 3)[lib.tensor([])],
        "getitem_empty_list": lambda lib: _arange(lib, 4, 3)[[]],
        "getitem_float_idx": lambda lib: _arange(lib, 4, 3)[lib.tensor([1.0])],
        "getitem_mask_wrong": lambda lib: _arange(lib, 4, 3)[lib.tensor([True, False])],
        "getitem_mask_wrong2d": lambda lib: _arange(lib, 4, 3)[lib.ones(3, 4, dtype=lib.bool)],
        "getitem_mask_uint8": lambda lib: _arange(lib, 4)[lib.tensor([1, 0, 1, 0],
                                                                     dtype=lib.uint8)],
        "getitem_mask_1d_of2d": lambda lib: _arange(lib, 4, 3)[:, lib.tensor([True, False,
                                                                             True])],
        "getitem_mask_empty": lambda lib: _arange(lib, 0, 3)[lib.zeros(0, dtype=lib.bool)],
        "getitem_two_idx_bcast": lambda lib: _arange(lib, 4, 3)[lib.tensor([[0], [1]]),
                                                              lib.tensor([0, 2])],
        "getitem_two_idx_bad": lambda lib: _arange(lib, 4, 3)[lib.tensor([0, 1]),
                                                            lib.tensor([0, 1, 2])],
        "getitem_too_many": lambda lib: _arange(lib, 4, 3)[0, 0, 0],
        "getitem_0d_of_0d": lambda lib: _arange(lib, 1).reshape(())[lib.tensor(0)],
        "getitem_0d_tensor_idx0": lambda lib: lib.tensor(5.0)[0],
        "getitem_none_ellipsis": lambda lib: _arange(lib, 2, 3)[None, ..., lib.tensor([0])],
        "index_select_oob": lambda lib: lib.index_select(_arange(lib, 4), 0, lib.tensor([4])),
        "index_select_neg": lambda lib: lib.index_select(_arange(lib, 4), 0, lib.tensor([-1])),
        "index_select_int32": lambda lib: lib.index_select(_arange(lib, 4), 0,
                                                           lib.tensor([1, 3], dtype=lib.int32)),
        "index_select_int16": lambda lib: lib.index_select(_arange(lib, 4), 0,
                                                           lib.tensor([1], dtype=lib.int16)),
        "index_select_float": lambda lib: lib.index_select(_arange(lib, 4), 0, lib.tensor([1.])),
        "index_select_2d_idx": lambda lib: lib.index_select(_arange(lib, 4), 0,
                                                            lib.tensor([[1]])),
        "index_select_0d_idx": lambda lib: lib.index_select(_arange(lib, 4, 2), 0, lib.tensor(1)),
        "index_select_0d_self": lambda lib: lib.index_select(lib.tensor(3.0), 0,
                                                             lib.tensor([0])),
        "index_select_0d_self_oob": lambda lib: lib.index_select(lib.tensor(3.0), 0,
                                                                 lib.tensor([1])),
        "index_select_empty": lambda lib: lib.index_select(_arange(lib, 4, 2), 1,
                                                           lib.tensor([], dtype=lib.int64)),
        "index_select_bad_dim": lambda lib: lib.index_select(_arange(lib, 4), 1, lib.tensor([0])),
        "gather_oob": lambda lib: lib.gather(_arange(lib, 2, 3), 1, lib.tensor([[3], [0]])),
        "gather_neg": lambda lib: lib.gather(_arange(lib, 2, 3), 1, lib.tensor([[-1], [0]])),
        "gather_int32": lambda lib: lib.gather(_arange(lib, 2, 3), 1,
                                               lib.tensor([[1], [0]], dtype=lib.int32)),
        "gather_rank": lambda lib: lib.gather(_arange(lib, 2, 3), 1, lib.tensor([1, 0])),
        "gather_big_index": lambda lib: lib.gather(_arange(lib, 2, 3), 1,
                                                   lib.tensor([[0]] * 3)),
        "gather_empty": lambda lib: lib.gather(_arange(lib, 2, 3), 1,
                                               lib.zeros(2, 0, dtype=lib.int64)),
        "gather_0d": lambda lib: lib.gather(lib.tensor(2.0), 0, lib.tensor(0)),
        "gather_float_idx": lambda lib: lib.gather(_arange(lib, 2, 3), 1, lib.tensor([[1.0]])),
        "scatter_oob": lambda lib: lib.scatter(_arange(lib, 2, 3), 1, lib.tensor([[3]]), 1.0),
        "scatter_neg": lambda lib: lib.scatter(_arange(lib, 2, 3), 1, lib.tensor([[-1]]), 1.0),
        "scatter_int32": lambda lib: lib.scatter(_arange(lib, 2, 3), 1,
                                                 lib.tensor([[1]], dtype=lib.int32), 1.0),
        "scatter_src_small": lambda lib: lib.scatter(_arange(lib, 2, 3), 1,
                                                     lib.tensor([[0, 1]]), lib.ones(1, 1)),
        "scatter_dtype": lambda lib: lib.scatter(_arange(lib, 2, 3), 1, lib.tensor([[0]]),
                                                 lib.ones(1, 1, dtype=lib.float32)),
        "scatter_add_oob": lambda lib: lib.scatter_add(_arange(lib, 3), 0, lib.tensor([5]),
                                                       lib.ones(1, dtype=lib.float64)),
        "scatter_reduce_oob": lambda lib: lib.scatter_reduce(
            _arange(lib, 3), 0, lib.tensor([5]), lib.ones(1, dtype=lib.float64), "sum"),
        "take_oob": lambda lib: lib.take(_arange(lib, 2, 3), lib.tensor([6])),
        "take_neg": lambda lib: lib.take(_arange(lib, 2, 3), lib.tensor([-1, -6])),
        "take_neg_oob": lambda lib: lib.take(_arange(lib, 2, 3), lib.tensor([-7])),
        "take_int32": lambda lib: lib.take(_arange(lib, 2, 3), lib.tensor([1], dtype=lib.int32)),
        "take_empty_self": lambda lib: lib.take(_arange(lib, 0), lib.tensor([0])),
        "take_empty_idx": lambda lib: lib.take(_arange(lib, 0), lib.tensor([], dtype=lib.int64)),
        "take_along_dim_oob": lambda lib: lib.take_along_dim(_arange(lib, 2, 3),
                                                             lib.tensor([[3]]), 1),
        "index_put_oob": lambda lib: _arange(lib, 3).index_put_((lib.tensor([3]),),
                                                               lib.tensor(1.0)),
        "index_put_neg": lambda lib: _arange(lib, 3).index_put_((lib.tensor([-1]),),
                                                               lib.tensor(1.0)),
        "index_put_acc_oob": lambda lib: _arange(lib, 3).index_put_(
            (lib.tensor([3]),), lib.tensor(1.0), accumulate=True),
        "index_put_int32": lambda lib: _arange(lib, 3).index_put_(
            (lib.tensor([1], dtype=lib.int32),), lib.tensor(1.0)),
        "index_put_bad_values": lambda lib: _arange(lib, 3).index_put_(
            (lib.tensor([1, 2]),), lib.tensor([1.0, 2.0, 3.0])),
        "index_put_dtype": lambda lib: _arange(lib, 3).index_put_(
            (lib.tensor([1]),), lib.tensor([1.0], dtype=lib.float32)),
        "setitem_oob": lambda lib: _arange(lib, 3).__setitem__(lib.tensor([3]), 1.0),
        "setitem_int_oob": lambda lib: _arange(lib, 3).__setitem__(3, 1.0),
        "setitem_mask_wrong": lambda lib: _arange(lib, 3).__setitem__(lib.tensor([True]), 1.0),
        "index_fill_oob": lambda lib: _arange(lib, 3).index_fill_(0, lib.tensor([3]), 1.0),
        "index_copy_oob": lambda lib: _arange(lib, 3).index_copy_(0, lib.tensor([3]),
                                                                 lib.ones(1, dtype=lib.float64)),
        "index_add_oob": lambda lib: _arange(lib, 3).index_add_(0, lib.tensor([3]),
                                                               lib.ones(1, dtype=lib.float64)),
        "put_oob": lambda lib: _arange(lib, 3).put_(lib.tensor([3]), lib.tensor([1.0],
                                                                               dtype=lib.float64)),
        "embedding_oob": lambda lib: lib.nn.functional.embedding(lib.tensor([3]),
                                                                 _arange(lib, 3, 2)),
        "embedding_neg": lambda lib: lib.nn.functional.embedding(lib.tensor([-1]),
                                                                 _arange(lib, 3, 2)),
        "embedding_int32": lambda lib: lib.nn.functional.embedding(
            lib.tensor([1], dtype=lib.int32), _arange(lib, 3, 2)),
        "embedding_float": lambda lib: lib.nn.functional.embedding(lib.tensor([1.0]),
                                                                   _arange(lib, 3, 2)),
        "embedding_empty": lambda lib: lib.nn.functional.embedding(
            lib.tensor([], dtype=lib.int64), _arange(lib, 3, 2)),
        "embedding_0d": lambda lib: lib.nn.functional.embedding(lib.tensor(1),
                                                                _arange(lib, 3, 2)),
        "masked_select_bad": lambda lib: lib.masked_select(_arange(lib, 3),
                                                           lib.tensor([True, False])),
        "masked_fill_bad": lambda lib: _arange(lib, 3).masked_fill(lib.tensor([True, False]), 1.),
        "masked_fill_uint8": lambda lib: _arange(lib, 3).masked_fill(lib.tensor([1, 0, 1],
                                                                     dtype=lib.uint8), 1.),
        "masked_fill_tensor_value_1d": lambda lib: _arange(lib, 3).masked_fill(
            lib.tensor([True, False, True]), lib.tensor([1.0])),
        "narrow_oob": lambda lib: _arange(lib, 3).narrow(0, 2, 2),
        "select_oob": lambda lib: _arange(lib, 3).select(0, 3),
        "select_neg": lambda lib: _arange(lib, 3).select(0, -3),
    })
    return cases


# Differences left on purpose: torch's result here depends on how its kernels happen to read
# memory they are writing (or on a missing bounds check), or on a feature hookgrad lacks.
KNOWN = {
    "addmm_self_arg": "torch's BLAS reads self's rows after it has overwritten them",
    "addmm_self_t": "the same aliasing of self as an addmm_ operand",
    "baddbmm_self": "the same aliasing, batched",
    "mm_out_self": "torch zeroes out (which is also an operand) before multiplying",
    "take_along_dim_oob": "torch 2.13 does not bounds-check take_along_dim's indices",
    "empty_cummax_0_1_False": "torch returns early for an empty input before checking dim",
    "clamp_complex": "hookgrad has no complex dtypes",
}


def all_cases():
    cases = {}
    for group in (_overlap_cases, _index_cases, clamp_cases, promotion_cases,
                  division_cases, reduction_cases, error_order_cases):
        cases.update(group())
    return cases


def run(cases, only=None, verbose=False):
    found = []
    for name, fn in cases.items():
        if only and only not in name:
            continue
        hg, th = _outcome(fn, hookgrad), _outcome(fn, torch)
        reason = differ(hg, th)
        if reason:
            found.append((name, reason))
            if verbose:
                print(f"{name}: {reason}")
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--limit", type=int, default=300)
    args = parser.parse_args(argv)
    cases = all_cases()
    found = run(cases, args.only, args.verbose)
    if not args.verbose:
        for name, reason in found[:args.limit]:
            print(f"{name}: {reason}")
    unexpected = [name for name, _ in found if name not in KNOWN]
    print(f"{len(cases)} cases, {len(found)} mismatches ({len(unexpected)} not in KNOWN)")
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
