"""torch functions added beside the existing ones (tensordot, inner, vdot, erfc, logaddexp2,
float_power, ldexp, frexp, heaviside, gcd, lcm, isposinf, isneginf, signbit, fliplr, flipud,
hsplit, vsplit, dsplit, tril_indices, triu_indices, unravel_index, vander) against torch."""
import math

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, assert_same_error, compare, compare_double_backward

R = np.random.default_rng(17)
A = R.standard_normal((3, 4))
B = R.standard_normal((3, 4))
T3 = R.standard_normal((2, 3, 4))


# -- products ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dims", [2, 1, 0, ([1, 0], [0, 1]), ([2], [0]), [[0], [1]],
                                  ([-1], [0])])
def test_tensordot(dims):
    a, b = R.standard_normal((2, 3, 4)), R.standard_normal((3, 4, 5) if dims in (2, 0) else
                                                          (4, 3, 5) if dims != [[0], [1]] else
                                                          (3, 2, 5))
    if dims == 1 or dims == ([-1], [0]):
        b = R.standard_normal((4, 5))
    if dims == ([1, 0], [0, 1]):
        b = R.standard_normal((3, 2, 5))
    compare(lambda lib, x, y: lib.tensordot(x, y, dims=dims), a, b)
    compare(lambda lib, x, y: lib.tensordot(x, y, dims), a.astype(np.float32),
            b.astype(np.float32))
    compare_double_backward(lambda lib, x, y: lib.tensordot(x, y, dims=dims), a, b)


def test_tensordot_errors():
    a, b = T3, R.standard_normal((3, 4, 5))
    for dims in (([0], [0]), -1, ([0, 1], [0]), 4):
        assert_same_error(lambda lib: lib.tensordot(lib.tensor(a), lib.tensor(b), dims=dims))


def test_inner_and_vdot():
    compare(lambda lib, x, y: lib.inner(x, y), T3, R.standard_normal((5, 4)))
    compare(lambda lib, x, y: x.inner(y), A[0], B[0])
    compare(lambda lib, x, y: lib.inner(x, y), A, np.array(2.5))
    compare(lambda lib, x, y: lib.vdot(x, y), A[0], B[0])
    compare(lambda lib, x, y: x.vdot(y), A[0].astype(np.float32), B[0].astype(np.float32))
    compare_double_backward(lambda lib, x, y: lib.inner(x, y), A, B)
    names = [lib.vdot(lib.tensor(A[0], requires_grad=True), lib.tensor(B[0])).grad_fn.name()
             for lib in (torch, hookgrad)]
    assert names[0] == names[1]
    assert_same_error(lambda lib: lib.inner(lib.tensor(T3), lib.tensor(A[0, :3])))
    assert_same_error(lambda lib: lib.vdot(lib.tensor(A), lib.tensor(B[0])))
    assert_same_error(lambda lib: lib.vdot(lib.tensor(A[0]), lib.tensor(B[0, :3])))
    assert_same_error(lambda lib: lib.vdot(lib.tensor(A[0]), lib.tensor(B[0]).float()))


# -- pointwise -------------------------------------------------------------------------------------
def test_erfc_values_across_the_tail():
    x = np.concatenate([np.linspace(-7, 27, 3001), [0.0, -0.0, np.inf, -np.inf, np.nan]])
    compare(lambda lib, a: lib.erfc(a), x, grad=False)
    compare(lambda lib, a: lib.erfc(a), x.astype(np.float32), grad=False)
    ours = hookgrad.erfc(hookgrad.tensor(x[:3001])).numpy()
    reference = np.array([math.erfc(v) for v in x[:3001]])
    assert np.all(np.abs(ours - reference) <= 1e-13 * np.abs(reference) + 1e-300)


def test_erfc_gradients_and_dtypes():
    compare(lambda lib, a: lib.erfc(a * 2), A)
    compare(lambda lib, a: a.erfc(), A.astype(np.float32))
    compare(lambda lib, a: lib.erfc(a), np.arange(-3, 4), grad=False)
    compare(lambda lib, a: (a * 1).erfc_(), A)
    compare_double_backward(lambda lib, a: lib.erfc(a), A)


def test_logaddexp2():
    special = np.array([np.inf, -np.inf, np.inf, -np.inf, 3.0, 1e3])
    compare(lambda lib, a, b: lib.logaddexp2(a, b), A * 40, B * 40)
    compare(lambda lib, a, b: a.logaddexp2(b), A.astype(np.float32), B[0].astype(np.float32))
    compare(lambda lib, a, b: lib.logaddexp2(a, b), special,
            np.array([np.inf, -np.inf, 1.0, 2.0, -np.inf, -1e3]), grad=False)
    compare_double_backward(lambda lib, a, b: lib.logaddexp2(a, b), A, B)
    assert_same_error(lambda lib: lib.logaddexp2(lib.tensor([1, 2]), lib.tensor([3, 4])))


def test_float_power():
    compare(lambda lib, a, b: lib.float_power(a.abs(), b), A.astype(np.float32), B)
    compare(lambda lib, a: lib.float_power(a, 3), A.astype(np.float32))
    compare(lambda lib, a: a.float_power(2.5), np.abs(A))
    compare(lambda lib, a, b: lib.float_power(a, b), np.arange(1, 5), np.arange(4), grad=False)
    compare(lambda lib, b: lib.float_power(2, b), B)
    compare(lambda lib, a: (a * 1).float_power_(2), A)
    assert_same_error(lambda lib: lib.tensor(A).float().float_power_(2))


def test_ldexp_and_frexp():
    exponents = R.integers(-4, 5, (3, 4))
    compare(lambda lib, a, e: lib.ldexp(a, e), A, exponents)
    compare(lambda lib, a, e: a.ldexp(e), A.astype(np.float32), exponents)
    compare(lambda lib, a, e: lib.ldexp(a, e), np.arange(12).reshape(3, 4), exponents,
            grad=False)
    compare(lambda lib, a, e: (a * 1).ldexp_(e), A, exponents)
    assert_same_error(lambda lib: lib.ldexp(lib.tensor(A), 2))
    x = np.concatenate([A.ravel() * 1e3, [0.0, -0.0, 1.0, 0.5, -2.0]])
    compare(lambda lib, a: lib.frexp(a), x)
    compare(lambda lib, a: tuple(a.frexp()), x.astype(np.float32))
    assert_same_error(lambda lib: lib.frexp(lib.tensor([1, 2])))
    names = [lib.frexp(lib.tensor(x, requires_grad=True))[0].grad_fn.name()
             for lib in (torch, hookgrad)]
    assert names[0] == names[1]


def test_heaviside():
    x = np.array([[-1.5, 0.0, 2.0], [0.0, 3.0, -0.0]])
    compare(lambda lib, a, v: lib.heaviside(a, v), x, np.array([0.5, 7.0, -1.0]), grad=False)
    compare(lambda lib, a, v: a.heaviside(v), np.array([0, 3, -1]), np.array([7]))
    compare(lambda lib, a, v: a.heaviside_(v), x, np.array(0.25), grad=False)
    assert_same_error(lambda lib: (lib.tensor(x, requires_grad=True) * 1).heaviside_(
        lib.tensor(0.5, dtype=lib.float64)).sum().backward())
    assert_same_error(lambda lib: lib.tensor(x, requires_grad=True).heaviside_(
        lib.tensor(0.5, dtype=lib.float64)))
    assert_same_error(lambda lib: lib.heaviside(lib.tensor(x), lib.tensor([0.5]).float()))
    assert_same_error(lambda lib: lib.heaviside(
        lib.tensor(x, requires_grad=True), lib.tensor(0.5, dtype=lib.float64)).sum().backward())


def test_gcd_and_lcm():
    a, b = R.integers(-30, 30, (4, 5)), R.integers(-30, 30, (4, 5))
    a[0, 0] = b[0, 0] = 0
    compare(lambda lib, x, y: lib.gcd(x, y), a, b)
    compare(lambda lib, x, y: lib.lcm(x, y), a, b)
    compare(lambda lib, x, y: x.gcd(y), a.astype(np.int32), b[0].astype(np.int32))
    compare(lambda lib, x, y: x.lcm_(y), a, b)
    compare(lambda lib, x, y: x.gcd_(y), a, b)
    assert_same_error(lambda lib: lib.gcd(lib.tensor(A), lib.tensor(B)))
    assert_same_error(lambda lib: lib.lcm(lib.tensor(a[:3, :4]), lib.tensor(A)))
    assert_same_error(lambda lib: lib.gcd(lib.tensor(a), lib.tensor(B)))


def test_sign_tests():
    x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, -2.0, 3.0])
    for name in ("isposinf", "isneginf", "signbit"):
        compare(lambda lib, a: getattr(lib, name)(a), x)
        compare(lambda lib, a: getattr(a, name)(), x.astype(np.float32))
        compare(lambda lib, a: getattr(lib, name)(a), np.array([-1, 0, 2]))
        compare(lambda lib, a: getattr(lib, name)(a), np.array([True, False]))


# -- shape helpers -------------------------------------------------------------------------------
def test_fliplr_flipud():
    compare(lambda lib, a: lib.fliplr(a), T3)
    compare(lambda lib, a: a.flipud(), T3)
    compare(lambda lib, a: lib.flipud(a), A[0])
    assert_same_error(lambda lib: lib.fliplr(lib.tensor(A[0])))
    assert_same_error(lambda lib: lib.flipud(lib.tensor(1.0)))


@pytest.mark.parametrize("name, split", [("hsplit", 2), ("hsplit", [1, 3]), ("vsplit", 3),
                                         ("vsplit", [1]), ("dsplit", 2), ("dsplit", [1, 1, 3])])
def test_h_v_d_split(name, split):
    x = R.standard_normal((3, 4, 6))
    compare(lambda lib, a: getattr(lib, name)(a, split), x)
    compare(lambda lib, a: getattr(a, name)(split), x.astype(np.float32))


def test_split_errors():
    assert_same_error(lambda lib: lib.hsplit(lib.tensor(A), 3))
    assert_same_error(lambda lib: lib.hsplit(lib.tensor(1.0), 1))
    assert_same_error(lambda lib: lib.vsplit(lib.tensor(A[0]), 2))
    assert_same_error(lambda lib: lib.dsplit(lib.tensor(A), 2))
    compare(lambda lib, a: lib.hsplit(a, 2), A[0])


@pytest.mark.parametrize("args", [(3, 4), (3, 4, 1), (4, 3, -2), (5, 5, 10), (0, 3), (3, 3, -9)])
def test_triangle_indices(args):
    for name in ("tril_indices", "triu_indices"):
        compare(lambda lib: getattr(lib, name)(*args))
        compare(lambda lib: getattr(lib, name)(*args, dtype=lib.int32))
    assert_same_error(lambda lib: lib.tril_indices(-1, 3))
    assert_same_error(lambda lib: lib.triu_indices(3, 3, dtype=lib.float32))


def test_unravel_index():
    compare(lambda lib, i: lib.unravel_index(i, (3, 4, 5)), R.integers(-70, 70, (2, 6)))
    compare(lambda lib, i: lib.unravel_index(i, (6,)), np.array(4))
    compare(lambda lib, i: lib.unravel_index(i, lib.Size([2, 3])), np.array([5, 0]))
    assert_same_error(lambda lib: lib.unravel_index(lib.tensor([1.5]), (2, 3)))
    assert_same_error(lambda lib: lib.unravel_index(lib.tensor([1]), (2, -3)))


@pytest.mark.parametrize("n, increasing", [(None, False), (3, True), (1, False), (0, False),
                                           (6, False)])
def test_vander(n, increasing):
    # torch's own vander cannot be differentiated (it writes in place): values only
    compare(lambda lib, x: lib.vander(x, n, increasing), A[0], grad=False)
    compare(lambda lib, x: lib.vander(x, N=n, increasing=increasing), np.array([1, 2, -3]))
    compare(lambda lib, x: lib.vander(x, n), A[0].astype(np.float32), grad=False)
    if n and n > 1:
        x = hookgrad.tensor(A[0, :3].copy(), requires_grad=True)
        assert hookgrad.autograd.gradcheck(lambda t: hookgrad.vander(t, n), (x,))
        assert hookgrad.autograd.gradgradcheck(lambda t: hookgrad.vander(t, n), (x,))


def test_vander_errors():
    assert_same_error(lambda lib: lib.vander(lib.tensor(A)))
    assert_same_error(lambda lib: lib.vander(lib.tensor(A[0]), N=-1))


def test_top_level_in_place_spellings():
    a = R.integers(-9, 9, (5,))
    compare(lambda lib, x, y: lib.gcd_(x, y), a, a[::-1].copy())
    out = hookgrad.erfc_(hookgrad.tensor(A))
    assert_close(out, torch.erfc(torch.tensor(A)))
