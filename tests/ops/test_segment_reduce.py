"""segment_reduce against torch: every reduction with lengths or offsets, along an inner axis
(batched lengths), with initial, empty segments and ties; gradients; torch's errors."""
import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, assert_same_error, compare

REDUCTIONS = ["sum", "mean", "max", "min", "prod", "amax", "amin"]
DATA = np.array([2.0, 2.0, 1.0, 0.0, 5.0, 0.0, -3.0])


@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("initial", [None, 3.0, -1.5])
def test_lengths_on_a_vector(reduce, initial):
    compare(lambda lib, x: lib.segment_reduce(x, reduce, lengths=lib.tensor([2, 0, 3, 2]),
                                              initial=initial), DATA)


@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_offsets_match_lengths(reduce):
    compare(lambda lib, x: lib.segment_reduce(x, reduce, offsets=lib.tensor([0, 2, 2, 5, 7])),
            DATA)


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod"])
def test_batched_lengths_along_an_inner_axis(reduce):
    data = np.random.default_rng(1).standard_normal((3, 5, 2))
    lengths = [[2, 3], [0, 5], [4, 1]]
    compare(lambda lib, x: lib.segment_reduce(x, reduce, lengths=lib.tensor(lengths), axis=1),
            data)
    compare(lambda lib, x: lib.segment_reduce(x, reduce, lengths=lib.tensor([3, 2])), data[0])


def test_trailing_dims_and_negative_axis():
    data = np.random.default_rng(2).standard_normal((4, 3))
    compare(lambda lib, x: lib.segment_reduce(x, "max", lengths=lib.tensor([1, 3])), data)
    compare(lambda lib, x: lib.segment_reduce(x[:, 0], "sum", lengths=lib.tensor([1, 3]),
                                              axis=-1), data)


def test_float64_exact_and_int32_lengths():
    for reduce in ("sum", "prod", "mean"):
        results = [lib.segment_reduce(lib.tensor(DATA, dtype=lib.float64), reduce,
                                      lengths=lib.tensor([4, 3], dtype=lib.int32))
                   for lib in (torch, hookgrad)]
        assert results[1].tolist() == results[0].tolist()


def test_node_name_and_gradient_of_the_gradient():
    seen = []
    for lib in (torch, hookgrad):
        x = lib.tensor(DATA, requires_grad=True)
        out = lib.segment_reduce(x, "sum", lengths=lib.tensor([3, 4]))
        (grad,) = lib.autograd.grad(out.sum(), x, create_graph=True)
        with pytest.raises(RuntimeError) as info:
            grad.sum().backward()
        seen.append((type(out.grad_fn).__name__, str(info.value)))
    assert seen[1] == seen[0]


def test_half_precision_mean():
    results = [lib.segment_reduce(lib.tensor([1.0, 2.0, 3.0], dtype=lib.float16), "mean",
                                  lengths=lib.tensor([2, 1])) for lib in (torch, hookgrad)]
    assert_close(results[1], results[0])


@pytest.mark.parametrize("kwargs", [
    {}, {"lengths": [2, 2]}, {"lengths": [2.0, 5.0]}, {"reduce": "median", "lengths": [7]},
    {"lengths": [-1, 8]}, {"lengths": [[7]]}, {"lengths": [3, 4], "axis": 1},
    {"offsets": [0, 4, 2, 7]},
])
def test_errors(kwargs):
    def call(lib):
        options = {k: lib.tensor(v) if isinstance(v, list) else v for k, v in kwargs.items()}
        options.setdefault("reduce", "sum")
        return lib.segment_reduce(lib.tensor(DATA), **options)
    assert_same_error(call)


def test_integer_data_is_refused():
    assert_same_error(lambda lib: lib.segment_reduce(lib.tensor([1, 2]), "sum",
                                                     lengths=lib.tensor([2])))


def test_axis_must_be_the_last_dim_of_lengths():
    assert_same_error(lambda lib: lib.segment_reduce(lib.ones(3, 2), "sum",
                                                     lengths=lib.tensor([1, 1]), axis=1))
    assert_same_error(lambda lib: lib.segment_reduce(lib.ones(3, 2), "sum",
                                                     offsets=lib.tensor([0, 1, 2]), axis=1))


def test_indices_are_not_supported():
    assert_same_error(lambda lib: lib.segment_reduce(lib.tensor(DATA), "x",
                                                     indices=lib.tensor([0])))
