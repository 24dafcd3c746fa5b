"""Index tensors of odd dtypes and ranks, against torch: which index dtypes each op takes (int32
and int64 for the gather/scatter family, int64 only for take_along_dim, bool/uint8 masks and
int32/int64 for subscripts), 0-d indices and 0-d selves, and the errors with their messages."""
import warnings

import pytest
import torch

import hookgrad

from tests.conftest import assert_close, error_of

DTYPES = ["int64", "int32", "int16", "int8", "uint8", "float32", "bool"]


def _grid(lib):
    return lib.arange(12, dtype=lib.float64).reshape(4, 3)


CALLS = {
    "getitem": lambda lib, i: _grid(lib)[i([1, 0])],
    "getitem_0d": lambda lib, i: _grid(lib)[i(1)],
    "setitem": lambda lib, i: (lambda x: (x.__setitem__(i([1, 0]), 7.0), x)[1])(_grid(lib)),
    "setitem_0d": lambda lib, i: (lambda x: (x.__setitem__(i(1), 7.0), x)[1])(_grid(lib)),
    "index_put": lambda lib, i: _grid(lib).index_put((i([1]),), lib.tensor(1.0,
                                                                          dtype=lib.float64)),
    "gather": lambda lib, i: _grid(lib).gather(1, i([[1], [0]])),
    "scatter": lambda lib, i: _grid(lib).scatter(1, i([[1], [0]]), 5.0),
    "scatter_src": lambda lib, i: _grid(lib).scatter(1, i([[1]]), _grid(lib)),
    "scatter_": lambda lib, i: _grid(lib).scatter_(1, i([[1]]), _grid(lib)),
    "scatter_add": lambda lib, i: _grid(lib).scatter_add(1, i([[1]]), _grid(lib)),
    "scatter_add_": lambda lib, i: _grid(lib).scatter_add_(1, i([[2]]), _grid(lib)),
    "scatter_reduce": lambda lib, i: _grid(lib).scatter_reduce(1, i([[1]]), _grid(lib), "sum"),
    "index_add": lambda lib, i: _grid(lib).index_add(0, i([1]), _grid(lib)[:1]),
    "index_select": lambda lib, i: _grid(lib).index_select(0, i([1])),
    "take": lambda lib, i: _grid(lib).take(i([1])),
    "take_along_dim": lambda lib, i: lib.take_along_dim(_grid(lib), i([[1]]), 1),
    "take_along_dim_flat": lambda lib, i: lib.take_along_dim(_grid(lib), i([1])),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(CALLS))
def test_index_dtypes(name, dtype):
    def run(lib):
        def index(values):
            return lib.tensor(values, dtype=getattr(lib, dtype))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return CALLS[name](lib, index)

    expected = error_of(lambda: run(torch))
    assert error_of(lambda: run(hookgrad)) == expected
    if expected is None:
        assert_close(run(hookgrad), run(torch))


ZERO_D = {
    "gather_0d_self_0d_index": lambda lib: lib.gather(lib.tensor(2.0), 0, lib.tensor(0)),
    "gather_0d_self_1d_index": lambda lib: lib.gather(lib.tensor(2.0), 0, lib.tensor([0, 0])),
    "gather_1d_self_0d_index": lambda lib: lib.gather(lib.tensor([2.0, 3.0]), 0, lib.tensor(1)),
    "gather_0d_out_of_range": lambda lib: lib.gather(lib.tensor(2.0), 0, lib.tensor(1)),
    "gather_2d_self_0d_index": lambda lib: lib.gather(lib.ones(2, 2), 0, lib.tensor(0)),
    "scatter_0d": lambda lib: lib.scatter(lib.tensor(2.0), 0, lib.tensor(0), 5.0),
    "scatter_1d_self_0d_index": lambda lib: lib.scatter(lib.tensor([2.0, 3.0]), 0,
                                                        lib.tensor(1), lib.tensor(5.0)),
    "scatter_add_0d_repeated": lambda lib: lib.scatter_add(lib.tensor(0.0), 0, lib.tensor([0, 0]),
                                                           lib.tensor([1.0, 2.0])),
    "scatter_0d_repeated": lambda lib: lib.scatter(lib.tensor(0.0), 0, lib.tensor([0, 0]),
                                                   lib.tensor([1.0, 2.0])),
    "scatter_add_0d": lambda lib: lib.scatter_add(lib.tensor(2.0), 0, lib.tensor(0),
                                                  lib.tensor(5.0)),
    "take_along_dim_0d": lambda lib: lib.take_along_dim(lib.tensor(2.0), lib.tensor(0), 0),
    "getitem_uint8_0d_true": lambda lib: _grid(lib)[lib.tensor(1, dtype=lib.uint8)],
    "getitem_uint8_0d_false": lambda lib: _grid(lib)[lib.tensor(0, dtype=lib.uint8)],
    "getitem_int8_0d": lambda lib: _grid(lib)[lib.tensor(-1, dtype=lib.int8)],
}


@pytest.mark.parametrize("name", sorted(ZERO_D))
def test_zero_dim_self_and_index(name):
    def run(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ZERO_D[name](lib)

    expected = error_of(lambda: run(torch))
    assert error_of(lambda: run(hookgrad)) == expected
    if expected is None:
        assert_close(run(hookgrad), run(torch))


def test_gradient_of_a_zero_dim_self_gathered_twice():
    def run(lib):
        x = lib.tensor(2.0, dtype=lib.float64, requires_grad=True)
        picked = lib.gather(x, 0, lib.tensor([0, 0]))
        (picked * lib.tensor([3.0, 4.0], dtype=lib.float64)).sum().backward()
        return picked, x.grad

    for ours, theirs in zip(run(hookgrad), run(torch)):
        assert_close(ours, theirs)


@pytest.mark.parametrize("lib_index", ["0d", "1d"])
def test_gradients_through_a_single_gathered_and_scattered_element(lib_index):
    def run(lib):
        index = lib.tensor(1) if lib_index == "0d" else lib.tensor([1])
        x = lib.tensor([2.0, 3.0], dtype=lib.float64, requires_grad=True)
        value = lib.tensor(7.0 if lib_index == "0d" else [7.0], dtype=lib.float64,
                           requires_grad=True)
        picked = lib.gather(x, 0, index)
        written = lib.scatter(x, 0, index, value)
        (picked * 5).sum().backward(retain_graph=True)
        (written * lib.tensor([1.0, 4.0], dtype=lib.float64)).sum().backward()
        return picked, written, x.grad, value.grad

    for ours, theirs in zip(run(hookgrad), run(torch)):
        assert_close(ours, theirs)
