"""put / put_ against torch: values, both gradients, layouts, duplicates, errors."""
import numpy as np
import pytest
import torch

import hookgrad
from tests.conftest import assert_close, compare, grad_fn_chain, raised

RNG = np.random.default_rng(0)
INDEX = np.array([1, -1, 1, 4])


@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("transposed", [False, True])
def test_put_values_and_gradients(accumulate, dtype, transposed):
    data = RNG.standard_normal((3, 4)).astype(dtype)
    source = RNG.standard_normal((2, 2)).astype(dtype)

    def run(lib, x, s):
        base = x.t() if transposed else x
        return lib.put(base * 1, lib.tensor(INDEX.reshape(2, 2)), s, accumulate)

    hg, th = compare(run, data, source)
    assert hg[0].stride() == th[0].stride()
    assert grad_fn_chain(hg[0]) == grad_fn_chain(th[0])


@pytest.mark.parametrize("accumulate", [False, True])
def test_put_in_place_and_method(accumulate):
    def run(lib, x, s):
        y = x * 1
        y.put_(lib.tensor(INDEX), s, accumulate=accumulate)
        return y, x.put(lib.tensor([0, 2]), s[:2])

    compare(run, RNG.standard_normal((2, 3)), RNG.standard_normal(4))
    compare(run, np.arange(6).reshape(2, 3), np.arange(4) + 10, grad=False)


def test_put_saved_values_and_gradcheck():
    x = hookgrad.randn(5, dtype=hookgrad.float64, requires_grad=True)
    s = hookgrad.randn(3, dtype=hookgrad.float64, requires_grad=True)
    index = hookgrad.tensor([0, -2, 1])  # distinct: a position written twice has no derivative
    for accumulate in (False, True):
        out = hookgrad.put(x, index, s, accumulate)
        expected = torch.put(torch.from_numpy(x.detach().numpy()), torch.tensor([0, -2, 1]),
                             torch.from_numpy(s.detach().numpy()), accumulate)
        assert_close(out, expected)
        assert out.grad_fn._saved_accumulate is accumulate
        assert out.grad_fn._saved_index.tolist() == [0, -2, 1]
        assert hookgrad.autograd.gradcheck(
            lambda a, b: hookgrad.put(a, index, b, accumulate), (x, s))
        assert hookgrad.autograd.gradgradcheck(
            lambda a, b: hookgrad.put(a, index, b, accumulate) ** 2, (x, s))


def test_put_on_a_zero_dim_tensor():
    compare(lambda lib, x, s: lib.put(x, lib.tensor([0]), s), np.array(5.0), np.array([1.0]))


@pytest.mark.parametrize("make", [
    lambda lib: lib.put(lib.randn(2, 3), lib.tensor([6]), lib.tensor([1.0])),
    lambda lib: lib.put(lib.randn(2, 3), lib.tensor([-7]), lib.tensor([1.0])),
    lambda lib: lib.put(lib.randn(2, 3), lib.tensor([1, 2]), lib.tensor([1.0])),
    lambda lib: lib.put(lib.randn(2, 3), lib.tensor([1.0]), lib.tensor([1.0])),
    lambda lib: lib.put(lib.randn(2, 3), lib.tensor([1]), lib.tensor([1.0], dtype=lib.float64)),
    lambda lib: lib.put(lib.zeros(0), lib.tensor([0]), lib.tensor([1.0])),
    lambda lib: lib.randn(2, requires_grad=True).put_(lib.tensor([1]), lib.tensor([1.0])),
])
def test_put_errors_as_torch(make):
    assert raised(make, hookgrad) == raised(make, torch)
