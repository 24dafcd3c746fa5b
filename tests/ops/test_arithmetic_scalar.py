"""A tensor with a Python number inside composites, as torch's C++ combines them (``mul.Scalar``
and kin: ``MulBackward1``, ``DivBackward1``, ``AddBackward1``, ``SubBackward1``, one edge and
the number on the node), against a user's ``x * 2`` (a wrapped number: ``MulBackward0`` with an
empty edge and a 0-d ``_saved_other``). Graphs (names, empty edges, saved numbers), values and
gradients are compared with torch's."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad
from hookgrad.ops import arithmetic_scalar as S
from conftest import assert_same_error, compare, compare_double_backward, graph_with_numbers

R = np.random.default_rng(11)
Y = R.uniform(-1.0, 1.0, (3, 5))
XS = np.sort(R.uniform(0.0, 2.0, 5))

# user-level arithmetic with numbers: torch wraps the number (Backward0 nodes, empty edges)
USER = {
    "mul_int": lambda lib, y: y * 2, "mul_float": lambda lib, y: 2.5 * y,
    "mul_bool": lambda lib, y: y * True, "div": lambda lib, y: y / 3,
    "number_div": lambda lib, y: 3 / y, "add": lambda lib, y: y + 2, "radd": lambda lib, y: 2 + y,
    "sub": lambda lib, y: y - 2.5, "rsub": lambda lib, y: 2 - y,
    "add_alpha": lambda lib, y: y.add(2, alpha=3), "method_mul": lambda lib, y: y.mul(0.5),
    "true_divide": lambda lib, y: y.true_divide(4), "floor_div": lambda lib, y: lib.div(
        y, 3, rounding_mode="floor"),
}

# composites whose C++ uses the Scalar overloads
COMPOSITES = {
    "trapezoid": lambda lib, y: lib.trapezoid(y),
    "trapezoid_dx": lambda lib, y: lib.trapezoid(y, dx=0.25, dim=0),
    "trapezoid_x": lambda lib, y: lib.trapezoid(y, lib.tensor(XS)),
    "cumulative_trapezoid": lambda lib, y: lib.cumulative_trapezoid(y, dx=0.5),
    "cumulative_trapezoid_x": lambda lib, y: lib.cumulative_trapezoid(y, lib.tensor(XS)),
}


@pytest.mark.parametrize("name", sorted({**USER, **COMPOSITES}))
def test_graph_numbers_and_edges_as_torch(name):
    fn = {**USER, **COMPOSITES}[name]
    graphs = []
    for lib in (hookgrad, torch):
        y = lib.tensor(Y, requires_grad=True)
        graphs.append(graph_with_numbers(fn(lib, y).grad_fn))
    assert graphs[0] == graphs[1]


@pytest.mark.parametrize("name", sorted({**USER, **COMPOSITES}))
def test_values_and_gradients_as_torch(name):
    compare({**USER, **COMPOSITES}[name], Y)


@pytest.mark.parametrize("name", sorted(COMPOSITES))
def test_double_backward_as_torch(name):
    compare_double_backward(lambda lib, y: COMPOSITES[name](lib, y) ** 2, Y)


# the helpers against the torch overloads they stand for (torch.ops.aten.*.Scalar)
HELPERS = {"mul": S.mul_scalar, "div": S.div_scalar, "add": S.add_scalar, "sub": S.sub_scalar}


@pytest.mark.parametrize("number", [2, 0.5, True])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64"])
@pytest.mark.parametrize("op", sorted(HELPERS))
def test_helper_is_torch_scalar_overload(op, dtype, number):
    array = (Y * 4).astype(dtype)
    grad = dtype != "int64"
    if op == "sub" and number is True:  # torch refuses subtracting a bool: the same error
        assert_same_error(lambda lib: HELPERS[op](lib.tensor(array), number) if lib is hookgrad
                          else torch.ops.aten.sub.Scalar(torch.tensor(array), number))
        return
    ours = HELPERS[op](hookgrad.tensor(array, requires_grad=grad), number)
    theirs = getattr(torch.ops.aten, op).Scalar(torch.tensor(array, requires_grad=grad), number)
    assert ours.dtype.__repr__().split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(ours.detach().numpy().astype(np.float64),
                               theirs.detach().numpy().astype(np.float64), rtol=1e-3)
    if grad:
        assert graph_with_numbers(ours.grad_fn) == graph_with_numbers(theirs.grad_fn)


def test_number_minus_is_a_wrapped_subtraction():
    """torch's C++ ``1 - cos`` in cosine_embedding_loss: SubBackward0, empty first edge."""
    graphs = []
    for lib, minus in ((hookgrad, S.number_minus), (torch, lambda n, t: torch.sub(
            torch.tensor(n, dtype=t.dtype), t))):
        y = lib.tensor(Y, requires_grad=True)
        graphs.append(graph_with_numbers(minus(1, y).grad_fn))
    assert graphs[0] == graphs[1]
