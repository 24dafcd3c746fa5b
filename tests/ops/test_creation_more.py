"""Factories and tensor predicates added to match torch's everyday API: asarray, empty_strided,
logspace, is_complex, is_nonzero, Tensor.is_signed / is_same_size / byte / char /
split_with_sizes, against torch on the same inputs."""
import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, assert_same_error, compare

R = np.random.default_rng(11)


@pytest.mark.parametrize("args,kwargs", [
    ((0, 2, 5), {}), ((0, 2, 5), {"base": 2}), ((-1, 1, 7), {"dtype": "float64"}),
    ((0, 3, 4), {"dtype": "int64"}), ((2, 2, 1), {}), ((0, 1, 0), {}),
    ((0, 1, 4), {"dtype": "float16"}), ((1.5, -2.5, 6), {"base": 3.0}),
])
def test_logspace(args, kwargs):
    results = []
    for lib in (hookgrad, torch):
        options = {k: getattr(lib, v) if k == "dtype" else v for k, v in kwargs.items()}
        results.append(lib.logspace(*args, **options))
    assert str(results[0].dtype) == str(results[1].dtype)
    assert_close(results[0], results[1])


@pytest.mark.parametrize("size,stride", [((2, 3), (1, 2)), ((2, 3), (3, 1)), ((0, 3), (0, 0)),
                                         ((2, 0), (5, 7)), ((), ()), ((4,), (0,))])
def test_empty_strided_geometry(size, stride):
    ours, theirs = hookgrad.empty_strided(size, stride), torch.empty_strided(size, stride)
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.stride() == theirs.stride()
    assert ours.dtype == hookgrad.float32
    assert hookgrad.empty_strided(size, stride, dtype=hookgrad.float64).dtype == hookgrad.float64


@pytest.mark.parametrize("call", [lambda lib: lib.empty_strided((2, 3), (1,)),
                                  lambda lib: lib.empty_strided((2, 3), (1, -2))])
def test_empty_strided_errors(call):
    assert_same_error(call)


def test_asarray_shares_or_copies_as_torch():
    for copy in (None, True):
        outcomes = []
        for lib in (hookgrad, torch):
            source = np.arange(3.0)
            result = lib.asarray(source, copy=copy)
            result[0] = 9
            outcomes.append((source[0], str(result.dtype)))
        assert outcomes[0] == outcomes[1]
    assert_same_error(lambda lib: lib.asarray(np.arange(3.0), copy=False, dtype=lib.float32))


@pytest.mark.filterwarnings("ignore:torch.asarray")
@pytest.mark.parametrize("requires_grad", [None, True, False])
@pytest.mark.parametrize("copy", [None, True])
def test_asarray_of_a_tensor(requires_grad, copy):
    states = []
    for lib in (hookgrad, torch):
        for x in (lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True) * 2,
                  lib.ones(2)):
            y = lib.asarray(x, copy=copy, requires_grad=requires_grad)
            node = y.grad_fn
            states.append((y is x, y.requires_grad, node.name() if node else None,
                           x.requires_grad))
    assert states[:3] == states[3:]


@pytest.mark.parametrize("data", [[1, 2], 3.5, [[1.0]], [True]])
def test_asarray_of_python_data(data):
    compare(lambda lib: lib.asarray(data), grad=False)
    assert str(hookgrad.asarray(data).dtype) == str(torch.asarray(data).dtype)


@pytest.mark.parametrize("values", [[1.5], 0.0, [[0]], [], [1, 2], True, [float("nan")]])
def test_is_nonzero(values):
    def call(lib):
        return lib.tensor(values).is_nonzero(), lib.is_nonzero(lib.tensor(values))
    try:
        expected = call(torch)
    except RuntimeError:
        assert_same_error(call)
        return
    assert call(hookgrad) == expected


def test_bool_of_an_empty_tensor():
    assert_same_error(lambda lib: bool(lib.tensor([])))


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int64", "int8", "uint8",
                                   "bool"])
def test_dtype_predicates(dtype):
    for lib in (hookgrad, torch):
        t = lib.ones(2, dtype=getattr(lib, dtype))
        assert (t.is_signed(), t.is_complex(), lib.is_complex(t)) == (
            dtype not in ("uint8", "bool"), False, False)


def test_is_same_size():
    for lib in (hookgrad, torch):
        assert lib.ones(2, 3).is_same_size(lib.zeros(2, 3))
        assert not lib.ones(2, 3).is_same_size(lib.zeros(3, 2))


@pytest.mark.parametrize("method", ["byte", "char"])
def test_byte_and_char_casts(method):
    values = np.array([300.0, -1.5, 200.0, 7.9])
    compare(lambda lib, x: getattr(x, method)(), values, grad=False)
    assert str(getattr(hookgrad.tensor(values), method)().dtype) == \
        str(getattr(torch.tensor(values), method)().dtype)


def test_split_with_sizes():
    compare(lambda lib, x: x.split_with_sizes([1, 3], 1), R.standard_normal((2, 4)))
    for lib in (hookgrad, torch):
        parts = lib.ones(4, requires_grad=True).split_with_sizes([1, 3])
        assert parts[0].grad_fn.name() == "SplitWithSizesBackward0"
    assert_same_error(lambda lib: lib.ones(4).split_with_sizes([1, 2]))
