"""torch's complex-number API on real tensors, shifts, fill, scalar_tensor, Tensor.new and the
unsafe splits, each against torch on the same inputs."""
import numpy as np
import pytest
import torch

import hookgrad
from tests.conftest import assert_close, compare, error_of, grad_fn_chain, raised

RNG = np.random.default_rng(0)
VALUES = np.array([-1.5, -0.0, 0.0, 2.0, np.nan, -np.inf, np.inf], np.float32)


@pytest.mark.parametrize("name", ["conj", "conj_physical", "resolve_conj", "resolve_neg",
                                  "real"])
def test_identity_functions_return_the_input_itself(name):
    for lib in (hookgrad, torch):
        x = lib.randn(2, 3, requires_grad=True)
        assert getattr(lib, name)(x) is x
        method = getattr(x, name)
        assert (method() if callable(method) else method) is x


@pytest.mark.parametrize("name", ["is_conj", "is_neg"])
def test_lazy_flags(name):
    x, t = hookgrad.randn(3), torch.randn(3)
    assert getattr(hookgrad, name)(x) == getattr(torch, name)(t)
    assert getattr(x, name)() == getattr(t, name)()


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_isreal(dtype):
    data = np.array([1, 0, 3], dtype) if dtype != "float32" else VALUES
    compare(lambda lib, x: lib.isreal(x), data, grad=False)
    compare(lambda lib, x: x.isreal(), data, grad=False)


def test_imag_raises_as_torch():
    assert raised(lambda lib: lib.imag(lib.randn(2)), hookgrad) == raised(
        lambda lib: lib.imag(lib.randn(2)), torch)
    assert error_of(lambda: hookgrad.randn(2).imag) == error_of(lambda: torch.randn(2).imag)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_angle_values_gradient_and_node(dtype):
    hg, th = compare(lambda lib, x: lib.angle(x), VALUES.astype(dtype), grad=False,
                     requires_grad=[True])
    assert grad_fn_chain(hg[0]) == grad_fn_chain(th[0])
    assert_close(hg[0].grad_fn._saved_self, th[0].grad_fn._saved_self)
    compare(lambda lib, x: lib.angle(x), VALUES.astype(dtype))
    compare(lambda lib, x: x.angle(), RNG.standard_normal((3, 4)).astype(dtype))


@pytest.mark.parametrize("data", [np.array([-3, 0, 4]), np.array([True, False])])
def test_angle_of_integers_is_floating(data):
    compare(lambda lib, x: lib.angle(x), data, grad=False)


def test_adjoint_is_a_transposing_view():
    hg, th = compare(lambda lib, x: lib.adjoint(x), RNG.standard_normal((2, 3, 4)))
    assert hg[0].stride() == th[0].stride() and hg[0]._base is not None
    assert grad_fn_chain(hg[0]) == grad_fn_chain(th[0])
    compare(lambda lib, x: x.adjoint() * 2, RNG.standard_normal((3, 4)))
    assert raised(lambda lib: lib.adjoint(lib.randn(3)), hookgrad) == raised(
        lambda lib: lib.adjoint(lib.randn(3)), torch)


SHIFT_CASES = [
    ("int32", [1, -8, 5, 3], [1, 2, 31, 32]),
    ("int64", [1, -8, 5, -3], [0, 63, 64, 70]),
    ("int8", [7, -7, 100, -128], [1, 9, 7, -1]),
    ("uint8", [7, 255, 1, 128], [5, 9, 7, 8]),
    ("int16", [-1, 2, 3, 4], [-5, 15, 16, 1]),
]


@pytest.mark.parametrize("dtype,values,counts", SHIFT_CASES)
@pytest.mark.parametrize("name", ["bitwise_left_shift", "bitwise_right_shift"])
def test_shifts_for_every_count(dtype, values, counts, name):
    a, b = np.array(values, dtype), np.array(counts, dtype)
    compare(lambda lib, x, y: getattr(lib, name)(x, y), a, b, grad=False)
    compare(lambda lib, x: getattr(lib, name)(x, 3), a, grad=False)
    compare(lambda lib, x: getattr(x, name)(2), a, grad=False)


def test_shift_operators_promotion_and_in_place():
    a = np.array([1, 2, -3], np.int32)
    compare(lambda lib, x: (x << 2, x >> 1, 3 << x.abs(), 100 >> x.abs()), a, grad=False)
    compare(lambda lib, x: x << lib.tensor([1, 2, 3], dtype=lib.int8), a, grad=False)
    compare(lambda lib, x: lib.tensor([True, False]) << 1, a, grad=False)
    for lib in (hookgrad, torch):
        x = lib.tensor([1, 2, 3])
        y = x
        y <<= 2
        y >>= 1
        y.bitwise_left_shift_(1)
        y &= lib.tensor([4, 8, 8])
        y |= lib.tensor([1, 0, 0])
        y ^= lib.tensor([0, 1, 0])
        assert y is x
    x_hg, x_th = hookgrad.tensor([1, 2, 3]), torch.tensor([1, 2, 3])
    for op in (lambda x: x.__ilshift__(2), lambda x: x.bitwise_right_shift_(1),
               lambda x: x.__ixor__(x.__and__(1))):
        op(x_hg), op(x_th)
    assert_close(x_hg, x_th)


@pytest.mark.parametrize("make", [lambda lib: lib.tensor([1.5]) << 1,
                                  lambda lib: lib.bitwise_right_shift(lib.tensor([1.5]), 1),
                                  lambda lib: lib.tensor([True]) << lib.tensor([True]),
                                  lambda lib: lib.tensor([3]) << 1.5])
def test_shift_errors_as_torch(make):
    assert raised(make, hookgrad) == raised(make, torch)


@pytest.mark.parametrize("value", [2.5, -1, True])
def test_fill_with_a_number(value):
    hg, th = compare(lambda lib, x: lib.fill(x, value), RNG.standard_normal((2, 3)))
    assert grad_fn_chain(hg[0]) == grad_fn_chain(th[0])
    compare(lambda lib, x: lib.fill(x, value), np.array([1, 2, 3]), grad=False)
    compare(lambda lib, x: lib.fill(x, value), RNG.standard_normal((4,)).astype(np.float32))
    assert not hasattr(hookgrad.Tensor, "fill") and not hasattr(torch.Tensor, "fill")


def test_fill_with_a_tensor_sends_the_sum_to_it():
    hg, th = compare(lambda lib, x, v: lib.fill(x, v), RNG.standard_normal((2, 3)),
                     np.array(0.5))
    assert grad_fn_chain(hg[0]) == grad_fn_chain(th[0])
    compare(lambda lib, x, v: lib.fill(x.t(), v), RNG.standard_normal((2, 3)), np.array(1.0))
    bad = lambda lib: lib.fill(lib.randn(2), lib.tensor([3.0]))  # noqa: E731
    assert raised(bad, hookgrad) == raised(bad, torch)


@pytest.mark.parametrize("value,dtype", [(3, None), (True, None), (2.5, "float64"),
                                         (-4, "int64"), (1, "bool")])
def test_scalar_tensor(value, dtype):
    compare(lambda lib: lib.scalar_tensor(value, dtype=getattr(lib, dtype) if dtype else None),
            grad=False)
    compare(lambda lib: lib.scalar_tensor(lib.tensor(value)), grad=False)


@pytest.mark.parametrize("args", [(2, 3), (), ([1, 2],), ([[1.5, 2], [3, 4]],)])
def test_tensor_new(args):
    for dtype in ("float64", "int32"):
        hg = hookgrad.zeros(1, dtype=getattr(hookgrad, dtype)).new(*args)
        th = torch.zeros(1, dtype=getattr(torch, dtype)).new(*args)
        assert hg.shape == th.shape and hg.dtype == getattr(hookgrad, str(th.dtype)[6:])
        if args and not isinstance(args[0], int):
            assert_close(hg, th)
    assert hookgrad.randn(2).new(hookgrad.Size([4, 1])).shape == (4, 1)


def test_is_cpu_is_same_size_is_signed():
    for lib in (hookgrad, torch):
        x = lib.zeros(2, 3, dtype=lib.uint8)
        assert x.is_cpu
        assert lib.is_same_size(x, lib.ones(2, 3)) and not lib.is_same_size(x, lib.ones(3, 2))
        assert not lib.is_signed(x) and lib.is_signed(lib.ones(1))


@pytest.mark.parametrize("sizes", [[1, 3], [2, 0, 2], [4]])
def test_split_with_sizes_top_level(sizes):
    hg, th = compare(lambda lib, x: lib.split_with_sizes(x, sizes), RNG.standard_normal((4, 2)))
    assert [grad_fn_chain(h) for h in hg] == [grad_fn_chain(t) for t in th]
    assert all(h._base is not None for h in hg)
    bad = lambda lib: lib.split_with_sizes(lib.randn(4), [1, 2])  # noqa: E731
    assert raised(bad, hookgrad) == raised(bad, torch)


@pytest.mark.parametrize("call", [lambda lib, x: lib.unsafe_split(x, 2),
                                  lambda lib, x: lib.unsafe_split(x, 3, 1),
                                  lambda lib, x: lib.unsafe_chunk(x, 3),
                                  lambda lib, x: lib.unsafe_chunk(x, 2, -1),
                                  lambda lib, x: lib.unsafe_split_with_sizes(x, [1, 4]),
                                  lambda lib, x: x.unsafe_split(2),
                                  lambda lib, x: x.unsafe_chunk(2)])
def test_unsafe_split_pieces(call):
    hg, th = compare(lambda lib, x: call(lib, x * 1), RNG.standard_normal((5, 3)))
    assert [grad_fn_chain(h) for h in hg] == [grad_fn_chain(t) for t in th]


def test_unsafe_split_shares_memory_without_view_tracking():
    for lib in (hookgrad, torch):
        base = lib.randn(4, 3, requires_grad=True)
        y = base * 1
        first, second = lib.unsafe_split(y, 2)
        assert first._base is None
        first.mul_(2)  # allowed, unlike on split's views
        assert y._version == 0
        assert lib.equal(y[:2], first)
        (first.sum() + second.sum()).backward()
        assert base.grad.tolist() == [[2.0] * 3] * 2 + [[1.0] * 3] * 2
    compare(lambda lib, x: lib.unsafe_chunk(x, 3), np.zeros((0, 2)))
