"""Writes whose target shares memory with itself or with another argument, against torch: which
are refused, which only warn, and what the ones let through leave behind."""
import warnings

import pytest
import torch

import hookgrad

from tests.conftest import assert_close, error_of


def _grid(lib):
    return lib.arange(9, dtype=lib.float64).reshape(3, 3)


def _line(lib):
    return lib.arange(6, dtype=lib.float64)


# copy_ (and setitem, which copies) into self from a view that partly shares self's memory
PARTIAL = {
    "copy_transpose": lambda lib: (lambda x: x.copy_(x.t()))(_grid(lib)),
    "copy_into_transpose": lambda lib: (lambda x: x.t().copy_(x))(_grid(lib)),
    "copy_shifted_forward": lambda lib: (lambda a: a[1:].copy_(a[:-1]))(_line(lib)),
    "copy_shifted_back": lambda lib: (lambda a: a[:-1].copy_(a[1:]))(_line(lib)),
    "copy_same_view": lambda lib: (lambda a: a[1:].copy_(a[1:]))(_line(lib)),
    "copy_disjoint_halves": lambda lib: (lambda a: a[:3].copy_(a[3:]))(_line(lib)),
    "setitem_shifted": lambda lib: (lambda a: a.__setitem__(slice(1, None), a[:-1]))(_line(lib)),
    "add_shifted": lambda lib: (lambda a: a[1:].add_(a[:-1]))(_line(lib)),
}


@pytest.mark.parametrize("name", sorted(PARTIAL))
def test_write_from_partly_overlapping_source(name):
    expected = error_of(lambda: PARTIAL[name](torch))
    assert error_of(lambda: PARTIAL[name](hookgrad)) == expected
    if expected is None:
        assert_close(PARTIAL[name](hookgrad), PARTIAL[name](torch))


def _expanded(lib):
    return lib.arange(3, dtype=lib.float32).reshape(1, 3).expand(2, 3)


# indexing writes torch still lets through on an expanded self (with a deprecation warning)
LET_THROUGH = {
    "index_fill_": lambda lib, x: x.index_fill_(1, lib.tensor([0]), 2.0),
    "index_fill_tensor": lambda lib, x: x.index_fill_(1, lib.tensor([2]), lib.tensor(5.0)),
    "masked_fill_": lambda lib, x: x.masked_fill_(lib.tensor([True, False, True]), 2.0),
    "masked_fill_tensor": lambda lib, x: x.masked_fill_(lib.tensor([False, True, False]),
                                                        lib.tensor(7.0)),
    "index_put_": lambda lib, x: x.index_put_((lib.tensor([1]),), lib.tensor(3.0)),
    "index_put_accumulate": lambda lib, x: x.index_put_((lib.tensor([0]),), lib.tensor(3.0),
                                                        accumulate=True),
    "setitem_index": lambda lib, x: x.__setitem__(lib.tensor([0]), 4.0) or x,
    "setitem_mask": lambda lib, x: x.__setitem__(lib.ones(2, 3, dtype=lib.bool), 4.0) or x,
    "tril_": lambda lib, x: x.tril_(),
    "fill_diagonal_": lambda lib, x: x.fill_diagonal_(9.0),
}


@pytest.mark.parametrize("name", sorted(LET_THROUGH))
def test_indexing_write_into_expanded_self_is_let_through(name):
    results, caught = [], []
    for lib in (hookgrad, torch):
        x = _expanded(lib)
        with warnings.catch_warnings(record=True) as records:
            warnings.simplefilter("always")
            LET_THROUGH[name](lib, x)
        results.append(x)
        caught.append(any("expanded tensors is deprecated" in str(r.message) for r in records))
    assert_close(*results)
    assert caught[0] == caught[1]


OUT_INTO_EXPANDED = {
    "add": lambda lib, out: lib.add(lib.ones(2, 3), 1, out=out),
    "cumsum": lambda lib, out: lib.cumsum(lib.ones(2, 3), 1, out=out),
    "mm": lambda lib, out: lib.mm(lib.ones(2, 3), lib.ones(3, 3), out=out),
    "exp": lambda lib, out: lib.exp(lib.ones(2, 3), out=out),
    "sum_one_row": lambda lib, out: lib.sum(lib.ones(2, 3), 0, out=out[0]),
    "resized": lambda lib, out: lib.add(lib.ones(4), 1, out=out),
    "needs_grad": lambda lib, out: lib.add(lib.ones(2, 3, requires_grad=True), 1, out=out),
}


@pytest.mark.parametrize("name", sorted(OUT_INTO_EXPANDED))
def test_out_that_reaches_an_element_twice_is_refused(name):
    def run(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return OUT_INTO_EXPANDED[name](lib, lib.zeros(1, 3).expand(2, 3))

    expected = error_of(lambda: run(torch))
    assert error_of(lambda: run(hookgrad)) == expected
    if expected is None:
        assert_close(run(hookgrad), run(torch))


WHERE_OUT = {
    "float_into_long": lambda lib: lib.where(lib.tensor([True, False]), lib.tensor([1.5, 2.0]),
                                             lib.tensor([2.5, 3.0]), out=lib.tensor([1, 2])),
    "same_dtype": lambda lib: lib.where(lib.tensor([True, False]), lib.tensor([1.5, 2.0]),
                                        lib.tensor([2.5, 3.0]), out=lib.zeros(2)),
    "resized": lambda lib: lib.where(lib.tensor([True, False]), lib.tensor([1.5, 2.0]),
                                     lib.tensor([2.5, 3.0]), out=lib.zeros(3)),
    "number_branch": lambda lib: lib.where(lib.tensor([True, False]), lib.tensor([1.5, 2.0]),
                                           7.0, out=lib.zeros(2)),
    "expanded": lambda lib: lib.where(lib.ones(2, 3) > 0, lib.ones(2, 3), lib.zeros(2, 3),
                                      out=lib.zeros(1, 3).expand(2, 3)),
    "needs_grad": lambda lib: lib.where(lib.tensor([True, False]),
                                        lib.tensor([1.0, 2.0], requires_grad=True),
                                        lib.tensor(7.0), out=lib.zeros(2)),
}


@pytest.mark.parametrize("name", sorted(WHERE_OUT))
def test_where_out(name):
    def run(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return WHERE_OUT[name](lib)

    expected = error_of(lambda: run(torch))
    assert error_of(lambda: run(hookgrad)) == expected
    if expected is None:
        assert_close(run(hookgrad), run(torch))


def _numbers(lib):
    return lib.arange(12, dtype=lib.float64) + 1


# an in-place op reading a tensor that shares part of self's memory, and out= sharing part of
# an input: which torch refuses (elementwise and index kernels) and which it lets through
OPERANDS = {
    "clamp_shifted": lambda lib, a: a[1:].clamp_(a[:-1]),
    "lerp_shifted": lambda lib, a: a[1:].lerp_(a[:-1], 0.5),
    "addcmul_shifted": lambda lib, a: a[1:].addcmul_(a[:-1], a[:-1]),
    "pow_shifted": lambda lib, a: a[1:].pow_(a[:-1]),
    "atan2_shifted": lambda lib, a: a[1:].atan2_(a[:-1]),
    "eq_shifted": lambda lib, a: a[1:].eq_(a[:-1]),
    "logical_and_shifted": lambda lib, a: a[1:].logical_and_(a[:-1]),
    "mul_0d_view": lambda lib, a: a.mul_(a[1]),
    "pow_self": lambda lib, a: a.pow_(a),
    "fill_0d_view": lambda lib, a: a.fill_(a[2]),
    "masked_fill_0d_view": lambda lib, a: a.masked_fill_(a > 2, a[0]),
    "index_fill_0d_view": lambda lib, a: a.index_fill_(0, lib.tensor([1, 3]), a[0]),
    "index_add_self": lambda lib, a: a.index_add_(0, lib.arange(12), a),
    "index_copy_shifted": lambda lib, a: a[1:].index_copy_(0, lib.tensor([0, 1]), a[:2]),
    "scatter_self": lambda lib, a: a.scatter_(0, lib.arange(12).flip(0), a),
    "scatter_add_shifted": lambda lib, a: a[1:].scatter_add_(0, lib.tensor([0, 1]), a[:2]),
    "index_put_self": lambda lib, a: a.index_put_((lib.arange(12).flip(0),), a),
    "index_put_0d_view": lambda lib, a: a.index_put_((lib.tensor([1, 2]),), a[0]),
    "setitem_mask_0d_view": lambda lib, a: a.__setitem__(a > 2, a[0]),
    "setitem_index_0d_view": lambda lib, a: a.__setitem__(lib.tensor([1, 2]), a[0]),
    "put_self": lambda lib, a: a.put_(lib.arange(12).flip(0), a),
    "abs_out_shifted": lambda lib, a: lib.abs(a[1:], out=a[:-1]),
    "abs_out_self": lambda lib, a: lib.abs(a, out=a),
    "add_out_shifted": lambda lib, a: lib.add(a[:-1], 1, out=a[1:]),
    "where_out_shifted": lambda lib, a: lib.where(a[:4] > 2, a[:4], a[4:8], out=a[1:5]),
    "clamp_out_shifted": lambda lib, a: lib.clamp(a[:4], 2, 3, out=a[1:5]),
    "cumsum_out_shifted": lambda lib, a: lib.cumsum(a[:4], 0, out=a[1:5]),
    "cumsum_out_self": lambda lib, a: lib.cumsum(a, 0, out=a),
    "cat_out_self": lambda lib, a: lib.cat([a], out=a),
    "stack_out_self": lambda lib, a: lib.stack([a], out=a[None]),
    "gather_out_self": lambda lib, a: lib.gather(a, 0, lib.arange(12), out=a),
    "index_select_out_self": lambda lib, a: lib.index_select(a, 0, lib.arange(12), out=a),
    "masked_select_out_self": lambda lib, a: lib.masked_select(a, a > 0, out=a),
    "sort_out_self": lambda lib, a: lib.sort(a, out=(a, lib.empty(12, dtype=lib.int64))),
    "max_dim_out_shifted": lambda lib, a: lib.max(a[:4].reshape(2, 2), 0, out=(
        a[1:3], lib.empty(2, dtype=lib.int64))),
    "cross_out_shifted": lambda lib, a: lib.cross(a[:3], a[3:6], dim=0, out=a[1:4]),
}


@pytest.mark.parametrize("name", sorted(OPERANDS))
def test_operands_sharing_the_written_memory(name):
    def run(lib):
        a = _numbers(lib)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            OPERANDS[name](lib, a)
        return a

    expected = error_of(lambda: run(torch))
    assert error_of(lambda: run(hookgrad)) == expected
    if expected is None:
        assert_close(run(hookgrad), run(torch))
