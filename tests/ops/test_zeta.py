"""special.zeta (Hurwitz) against torch: values over wide ranges and at the poles and domain
edges, number operands, dtypes, nodes, the q-gradient and the refused x-gradient."""
import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, compare

R = np.random.default_rng(9)
EDGE_X = [2.0, 1.5, 1.0, 0.5, 3.0, 10.0, np.inf, np.nan, 2.0, -1.5, -2.0, 1.0, 1.0000001, 2, 3,
          4, 5, 6, 7, 8, 30, 100, 1.5, 1.01, 2, 2, 0.5, 1.0]
EDGE_Q = [1.0, 1.0, 1.0, 1.0, -1.0, -2.5, 1.0, 1.0, -2.0, 1.0, -2.5, 0.0, 1e-300, -2.5, 0.001,
          1e10, 1e-10, -1e3 - 0.5, 3.0, 1e300, 0.5, 2, 1e5, 1e-3, np.inf, np.nan, -1.0, np.nan]
X = np.concatenate([EDGE_X, R.uniform(1, 20, 300), R.uniform(1, 1.1, 100), R.uniform(-3, 3, 50)])
Q = np.concatenate([EDGE_Q, np.exp(R.uniform(-10, 10, 300)), R.uniform(0, 3, 100),
                    R.uniform(-5, 3, 50)])


def test_float64_values_match_torch():
    ours = hookgrad.special.zeta(hookgrad.tensor(X), hookgrad.tensor(Q)).numpy()
    theirs = torch.special.zeta(torch.tensor(X), torch.tensor(Q)).numpy()
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=0, equal_nan=True)


def test_float32_values_match_torch():
    x, q = X.astype(np.float32), Q.astype(np.float32)
    assert_close(hookgrad.special.zeta(hookgrad.tensor(x), hookgrad.tensor(q)),
                 torch.special.zeta(torch.tensor(x), torch.tensor(q)), rtol=1e-5, atol=1e-37)


@pytest.mark.parametrize("number", [2.0, 3, 1.0, 0.5])
def test_number_operands_and_dtypes_match_torch(number):
    q = np.abs(R.standard_normal(5)).astype(np.float32) + 0.1
    assert_close(hookgrad.special.zeta(number, hookgrad.tensor(q)),
                 torch.special.zeta(number, torch.tensor(q)))
    x = R.uniform(1, 5, 5)
    assert_close(hookgrad.special.zeta(hookgrad.tensor(x), number),
                 torch.special.zeta(torch.tensor(x), number))
    assert_close(hookgrad.special.zeta(hookgrad.tensor([2, 3]), hookgrad.tensor([1, 2])),
                 torch.special.zeta(torch.tensor([2, 3]), torch.tensor([1, 2])))


def test_two_numbers_are_a_type_error():
    with pytest.raises(TypeError):
        torch.special.zeta(2.0, 3.0)
    with pytest.raises(TypeError):
        hookgrad.special.zeta(2.0, 3.0)


def test_q_gradient_and_nodes_match_torch():
    x, q = R.uniform(1.5, 5, (3, 4)), R.uniform(0.5, 3, (3, 4))
    hg_out, th_out = compare(lambda lib, a, b: lib.special.zeta(a, b), x, q,
                             requires_grad=[False, True])
    assert hg_out[0].grad_fn.name() == th_out[0].grad_fn.name()
    hg_out, th_out = compare(lambda lib, b: lib.special.zeta(3.0, b), q)
    assert hg_out[0].grad_fn.name() == th_out[0].grad_fn.name()


@pytest.mark.parametrize("case", ["both", "tensor_x"])
def test_x_gradient_raises_torchs_error(case):
    messages = []
    for lib in (hookgrad, torch):
        x = lib.tensor([2.0, 3.0], requires_grad=True)
        y = lib.special.zeta(x, lib.tensor([1.0, 2.0])) if case == "both" else \
            lib.special.zeta(x, 1.0)
        with pytest.raises(NotImplementedError) as caught:
            y.sum().backward()
        messages.append((str(caught.value), y.grad_fn.name()))
    assert messages[0] == messages[1]
