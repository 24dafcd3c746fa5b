"""torch.special.i0e and i1e (exp(-|x|) times i0, i1) against torch: values across the switch to
the asymptotic series, far out where i0 overflows, at the edges; gradients and gradcheck."""
import numpy as np
import pytest
import torch

import hookgrad
from conftest import compare

WIDE = np.concatenate([np.linspace(-60, 60, 2401), np.geomspace(1e-8, 1e300, 300),
                       -np.geomspace(1e-8, 1e300, 300), [29.999999, 30.0, -30.0]])
FLOAT32 = WIDE[np.abs(WIDE) < 1e38].astype(np.float32)
EDGES = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-310])
NAMES = ["i0e", "i1e"]


@pytest.mark.parametrize("name", NAMES)
def test_values_against_torch(name):
    compare(lambda lib, x: getattr(lib.special, name)(x), WIDE, grad=False, rtol=1e-13, atol=0)
    compare(lambda lib, x: getattr(lib.special, name)(x), EDGES, grad=False, rtol=1e-13,
            atol=0)
    compare(lambda lib, x: getattr(lib.special, name)(x), FLOAT32, grad=False,
            rtol=1e-5, atol=1e-30)
    compare(lambda lib, x: getattr(lib.special, name)(x), np.array([0, 3, -40]), grad=False)


@pytest.mark.parametrize("name", NAMES)
def test_gradients_node_and_gradcheck(name):
    x = np.concatenate([np.linspace(-45, 45, 31), [0.0, np.inf, -np.inf, np.nan, 1e6]])
    compare(lambda lib, x: getattr(lib.special, name)(x), x, rtol=1e-12)
    ours = getattr(hookgrad.special, name)(hookgrad.tensor([1.0], requires_grad=True))
    theirs = getattr(torch.special, name)(torch.tensor([1.0], requires_grad=True))
    assert ours.grad_fn.name() == theirs.grad_fn.name()
    assert ours.grad_fn._saved_result.detach().numpy() == pytest.approx(
        theirs.grad_fn._saved_result.detach().numpy())
    probe = hookgrad.tensor(np.array([-35.0, -2.0, 0.3, 5.0, 31.0]), requires_grad=True)
    assert hookgrad.autograd.gradcheck(getattr(hookgrad.special, name), (probe,))
