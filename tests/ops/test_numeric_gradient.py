"""torch.gradient against torch: spacings, coordinates, dims, edge orders, errors, autograd."""
import numpy as np
import pytest
import torch

import hookgrad
from tests.conftest import compare, grad_fn_chain, graph_nodes, raised

RNG = np.random.default_rng(0)
COORDS = [np.array([0.0, 1.0, 3.0, 4.0, 7.0]), np.array([-1.0, 0.5, 1.0, 2.5])]


@pytest.mark.parametrize("edge_order", [1, 2])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("options", [dict(), dict(spacing=2.0), dict(dim=1), dict(dim=-1),
                                     dict(spacing=[0.5, 3.0]), dict(dim=(1, 0)),
                                     dict(spacing=[2.0], dim=[0])])
def test_gradient_uniform(edge_order, dtype, options):
    hg, th = compare(lambda lib, x: lib.gradient(x, edge_order=edge_order, **options),
                     RNG.standard_normal((5, 4)).astype(dtype))
    assert [grad_fn_chain(h) for h in hg] == [grad_fn_chain(t) for t in th]


@pytest.mark.parametrize("edge_order", [1, 2])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_gradient_with_coordinates(edge_order, dtype):
    data = RNG.standard_normal((5, 4)).astype(dtype)
    hg, th = compare(lambda lib, x, a, b: lib.gradient(x, spacing=[a, b], edge_order=edge_order),
                     data, COORDS[0].astype(dtype), COORDS[1].astype(dtype),
                     requires_grad=[True, False, False])
    assert [graph_nodes(h) for h in hg] == [graph_nodes(t) for t in th]
    compare(lambda lib, x, a: lib.gradient(x, spacing=(a,), dim=1, edge_order=edge_order),
            data, COORDS[1].astype(dtype), requires_grad=[True, False])


def test_gradient_scalar_tensor_spacing_integers_and_zero_dim():
    compare(lambda lib, x: lib.gradient(x, spacing=lib.tensor(2.0)), RNG.standard_normal((3, 4)))
    compare(lambda lib, x: lib.gradient(x), np.array([1, 4, 9, 16]), grad=False)
    compare(lambda lib, x: lib.gradient(x), np.array(1.0), grad=False)
    assert hookgrad.autograd.gradcheck(
        lambda x: hookgrad.gradient(x, edge_order=2)[0],
        (hookgrad.randn(6, dtype=hookgrad.float64, requires_grad=True),))


@pytest.mark.parametrize("make", [
    lambda lib: lib.gradient(lib.tensor([1.0, 2.0]), edge_order=2),
    lambda lib: lib.gradient(lib.randn(5), edge_order=3),
    lambda lib: lib.gradient(lib.randn(5), spacing=[1.0, 2.0]),
    lambda lib: lib.gradient(lib.randn(3, 4), spacing=[1.0, 2.0], dim=1),
    lambda lib: lib.gradient(lib.randn(3, 4), spacing=[lib.tensor(2.0), lib.tensor(1.0)]),
    lambda lib: lib.gradient(lib.randn(5), dim=1),
    lambda lib: lib.gradient(lib.randn(3, 4), dim=[0, 0]),
    lambda lib: lib.gradient(lib.zeros(0)),
    lambda lib: lib.gradient(lib.tensor([True, False, True])),
])
def test_gradient_errors_as_torch(make):
    assert raised(make, hookgrad) == raised(make, torch)
