"""igamma / igammac (torch.special.gammainc / gammaincc) against torch: values over wide grids
and at the edges, float32, promotion and broadcasting, the gradient in x only (and torch's error
for a), in-place and out= forms. Where torch's own float64 values drift (a beyond ~20 and tiny a
for igammac, about 1e-9) mpmath, when installed, checks the digits."""
import math

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_same_error, compare

A_GRID, X_GRID = (g.ravel() for g in np.meshgrid(np.geomspace(1e-3, 1e3, 37),
                                                  np.geomspace(1e-5, 3e3, 41)))
EDGES = np.array([0.0, 1e-300, 0.5, 1.0, 2.0, 1e308, np.inf, -1.0, -np.inf, np.nan])
EDGE_A, EDGE_X = (g.ravel() for g in np.meshgrid(EDGES, EDGES))
NAMES = ["igamma", "igammac"]


def _both(name, a, x):
    ours = getattr(hookgrad, name)(hookgrad.tensor(a), hookgrad.tensor(x)).numpy()
    theirs = getattr(torch, name)(torch.tensor(a), torch.tensor(x)).numpy()
    return ours, theirs


@pytest.mark.parametrize("name", NAMES)
def test_float64_against_torch_on_a_wide_grid(name):
    ours, theirs = _both(name, A_GRID, X_GRID)
    np.testing.assert_allclose(ours, theirs, rtol=5e-9, atol=1e-300)
    # where torch's float64 is accurate, near rounding
    calm = (A_GRID < 15) & (A_GRID > 0.05)
    np.testing.assert_allclose(ours[calm], theirs[calm], rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("name", NAMES)
def test_edges_match_torch(name):
    ours, theirs = _both(name, EDGE_A, EDGE_X)
    # at a = 1e-300 torch's values are off (P above 1); the mpmath test covers tiny a
    kept = EDGE_A != 1e-300
    np.testing.assert_allclose(ours[kept], theirs[kept], rtol=1e-14, atol=0)


@pytest.mark.parametrize("name", NAMES)
def test_digits_beyond_torchs_where_mpmath_can_tell(name):
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 30
    rng = np.random.default_rng(5)
    a = np.concatenate([np.geomspace(1e-300, 0.9, 12), rng.uniform(20, 300, 12)])
    x = np.concatenate([rng.uniform(1e-4, 1.1, 12), a[12:] * rng.uniform(0.7, 1.3, 12)])
    ours, _ = _both(name, a, x)
    lower, upper = (0, x) if name == "igamma" else (x, mpmath.inf)
    expected = [float(mpmath.gammainc(ai, lo, hi, regularized=True))
                for ai, lo, hi in zip(a, *np.broadcast_arrays(lower, upper))]
    np.testing.assert_allclose(ours, expected, rtol=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_huge_a_against_wilson_hilferty(name):
    """Beyond a ~ 1e5 torch's own values drift (by percents at a ~ 1e7 in the far tail); the
    Wilson-Hilferty cube-root normal law, accurate to O(1 / a), is the reference there."""
    rng = np.random.default_rng(7)
    a = np.geomspace(1e7, 1e14, 40)
    x = a * (1 + rng.uniform(-4, 4, 40) / np.sqrt(a))
    ours, _ = _both(name, a, x)
    z = ((x / a) ** (1 / 3) - (1 - 1 / (9 * a))) * np.sqrt(9 * a)
    lower = np.array([math.erfc(-v / math.sqrt(2)) / 2 for v in z])
    expected = lower if name == "igamma" else 1 - lower
    np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_float32_and_the_dtypes_of_mixed_operands(name):
    a32, x32 = A_GRID.astype(np.float32), X_GRID.astype(np.float32)
    compare(lambda lib, a, x: getattr(lib, name)(a, x), a32, x32, grad=False, rtol=2e-5,
            atol=1e-6)
    pairs = [(np.float32, np.float64), (np.int64, np.float32), (np.bool_, np.float64),
             (np.float16, np.float16), (np.int32, np.float16)]
    for left, right in pairs:
        compare(lambda lib, a, x: getattr(lib, name)(a, x), np.array([1, 2, 0]).astype(left),
                np.array([0.5, 3, 1]).astype(right), grad=False, rtol=2e-3)
    compare(lambda lib, a, x: getattr(lib, name)(a, x), np.float64(2.5),
            np.array([1.0, 4.0], np.float32), grad=False)


def test_broadcasting_and_the_special_spellings():
    a, x = np.array([[0.5], [2.0], [7.0]]), np.array([0.1, 1.0, 5.0, 20.0])
    compare(lambda lib, a, x: lib.special.gammainc(a, x), a, x, grad=False)
    compare(lambda lib, a, x: lib.special.gammaincc(a, x), a, x, grad=False)
    compare(lambda lib, a, x: a.igamma(x), a, x, grad=False)
    compare(lambda lib, a, x: x.igammac(a), x, a, grad=False)


@pytest.mark.parametrize("name", NAMES)
def test_gradient_in_x_as_torch(name):
    a = np.array([0.5, 1.0, 2.0, 10.0, 3.0, 0.5, 1.0, 2.0])
    x = np.array([0.2, 1.5, 3.0, 8.0, 40.0, 0.0, 0.0, 0.0])
    compare(lambda lib, a, x: getattr(lib, name)(a, x), a, x, requires_grad=[False, True])
    out = getattr(hookgrad, name)(hookgrad.tensor(a), hookgrad.tensor(x, requires_grad=True))
    expected = getattr(torch, name)(torch.tensor(a), torch.tensor(x, requires_grad=True))
    assert out.grad_fn.name() == expected.grad_fn.name()
    np.testing.assert_array_equal(out.grad_fn._saved_self.numpy(), a)
    np.testing.assert_array_equal(out.grad_fn._saved_other.detach().numpy(), x)
    a32 = np.array([0.7, 4.0], np.float32)
    x32 = np.array([0.3, 5.0], np.float32)
    compare(lambda lib, a, x: getattr(lib, name)(a, x), a32, x32, requires_grad=[False, True],
            rtol=1e-5)


@pytest.mark.parametrize("name", NAMES)
def test_gradcheck_on_x(name):
    a = hookgrad.tensor([0.5, 2.0, 6.0, 1.5])
    x = hookgrad.tensor(np.array([0.4, 1.3, 9.0, 2.5]), requires_grad=True)
    assert hookgrad.autograd.gradcheck(lambda x: getattr(hookgrad, name)(a.double(), x), (x,))


@pytest.mark.parametrize("name", NAMES)
def test_backward_through_a_raises_as_torch(name):
    def run(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        getattr(lib, name)(a, lib.tensor([0.5, 3.0], requires_grad=True)).sum().backward()
    assert_same_error(run)


@pytest.mark.parametrize("name", NAMES)
def test_bad_operands_raise_as_torch(name):
    f = name
    assert_same_error(lambda lib: getattr(lib, f)(lib.tensor([1, 2]), lib.tensor([1, 2])))
    assert_same_error(lambda lib: getattr(lib, f)(lib.tensor([True]), lib.tensor([False])))
    assert_same_error(lambda lib: getattr(lib, f)(2.0, lib.tensor([1.0])))
    assert_same_error(lambda lib: getattr(lib, f)(lib.tensor([1.0]), 2.0))
    special = "gammainc" if name == "igamma" else "gammaincc"
    assert_same_error(lambda lib: getattr(lib.special, special)(lib.tensor([1.0]), 2.0))
    assert_same_error(lambda lib: getattr(lib, f)(lib.tensor([1.0, 2.0]), lib.tensor([1.0, 2.0]),
                                                   out=lib.empty(2, dtype=lib.int64)))
    assert_same_error(lambda lib: getattr(lib, f)(lib.ones(2), lib.ones(3)))


@pytest.mark.parametrize("name", NAMES)
def test_in_place_and_out(name):
    a, x = np.array([0.5, 2.0, 7.0]), np.array([1.0, 1.5, 9.0])
    compare(lambda lib, a, x: getattr(a * 1, name + "_")(x), a, x, requires_grad=[False, True])
    compare(lambda lib, a, x: getattr(a.clone(), name + "_")(x.long()), a, x, grad=False)
    out = hookgrad.empty(3, dtype=hookgrad.float64)
    result = getattr(hookgrad, name)(hookgrad.tensor(a), hookgrad.tensor(x), out=out)
    assert result is out
    np.testing.assert_allclose(out.numpy(), _both(name, a, x)[1], rtol=1e-13)
    assert_same_error(lambda lib: getattr(lib.tensor([1, 2]), name + "_")(lib.tensor([1.0, 2])))
    assert_same_error(lambda lib: getattr(lib.tensor([1.0]), name + "_")(lib.tensor([1.0, 2])))
    grad_fn = getattr(hookgrad.tensor(a, requires_grad=True) * 1, name + "_")(
        hookgrad.tensor(x)).grad_fn
    assert grad_fn.name() == ("IgammaBackward0" if name == "igamma" else "IgammacBackward0")
