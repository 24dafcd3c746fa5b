"""Size arguments of view / reshape / view_as / unflatten: the ints torch accepts in every
spelling, ``-1`` inferred, and torch's error for each bad size. The sizes are converted and
checked in one C-level pass; these cases pin what the per-size Python loop it replaced did."""
import numpy as np
import pytest
import torch
from conftest import assert_same_error, error_of

import hookgrad

CASES = [  # (input shape, the arguments as given: reshape(8, 3), reshape((4, 6)), ...)
    ((2, 3, 4), (8, 3)), ((2, 3, 4), (-1,)), ((2, 3, 4), (2, -1, 3)), ((2, 3, 4), ((4, 6),)),
    ((2, 3, 4), ([4, 6],)), ((2, 3, 4), (np.int64(4), 6)), ((2, 3, 4), ((np.int32(-1), 3),)),
    ((2, 3, 4), (24, 1, 1)), ((2, 0), (0,)), ((2, 0), (0, 5)), ((1,), ((),)),
]


@pytest.mark.parametrize("method", ["reshape", "view"])
@pytest.mark.parametrize("shape, args", CASES)
def test_sizes_and_graph_match_torch(method, shape, args):
    data = np.arange(float(np.prod(shape))).reshape(shape)
    results = []
    for lib in (torch, hookgrad):
        x = lib.tensor(data, requires_grad=True)
        y = getattr(x * 2, method)(*args)
        y.backward(lib.ones_like(y))
        results.append((tuple(y.shape), y.stride(), type(y.grad_fn).__name__,
                        y.detach().numpy().tolist(), x.grad.numpy().tolist()))
    assert results[1] == results[0]


def test_a_zero_dim_int_tensor_is_a_size():
    data = np.arange(6.0)
    shapes = [lib.tensor(data).reshape(lib.tensor(2), 3).shape for lib in (torch, hookgrad)]
    assert tuple(shapes[1]) == tuple(shapes[0])


@pytest.mark.parametrize("method", ["reshape", "view"])
@pytest.mark.parametrize("args", [
    (2, -1, -1), (-2, 12), (5, -1), (0, -1), (7,), (2.0, 12), ("a", 3), ((2, 3.5),), (2, None),
])
def test_bad_sizes_raise_torchs_error(method, args):
    def call(lib):
        return getattr(lib.arange(24.0).reshape(2, 12), method)(*args)
    if any(not isinstance(a, (int, tuple)) or isinstance(a, tuple) and 3.5 in a for a in args):
        # not a size at all: torch's argument parser words its own error; the type is the same
        assert error_of(lambda: call(hookgrad))[0] is error_of(lambda: call(torch))[0] is TypeError
    else:
        assert_same_error(call)


def test_bad_size_of_an_empty_tensor_raises_torchs_error():
    assert_same_error(lambda lib: lib.zeros(2, 0).reshape(0, -1))


def test_unflatten_sizes_match_torch():
    shapes = [tuple(lib.arange(24.0).reshape(2, 12).unflatten(1, (3, -1)).shape)
              for lib in (torch, hookgrad)]
    assert shapes[1] == shapes[0]
    assert_same_error(lambda lib: lib.arange(24.0).reshape(2, 12).unflatten(1, (5, -1)))
