"""The direct lane of the arithmetic operators (ops/_untracked.py): when nothing is recorded it
must give exactly what the full path gives (torch's values, dtypes, shapes, errors), and it must
step aside for modes, subclasses, other dtypes and anything with a history."""
import numpy as np
import pytest
import torch

import hookgrad
from hookgrad.overrides import TorchFunctionMode

OPERATORS = {
    "add": lambda a, b: a + b, "radd": lambda a, b: b + a, "sub": lambda a, b: a - b,
    "rsub": lambda a, b: b - a, "mul": lambda a, b: a * b, "rmul": lambda a, b: b * a,
    "div": lambda a, b: a / b,
}


def _pair(lib, x, other):
    return lib.tensor(x), (lib.tensor(other) if isinstance(other, np.ndarray) else other)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64"])
@pytest.mark.parametrize("name", sorted(OPERATORS))
@pytest.mark.parametrize("other", ["tensor", "broadcast", 0.1, 3, 1e300, 2 ** 60])
def test_unrecorded_operators_match_torch(name, other, dtype):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((3, 4)) * 10).astype(dtype)
    if other == "tensor":
        other = (rng.standard_normal((3, 4)) * 10).astype(dtype)
    elif other == "broadcast":
        other = (rng.standard_normal((4,)) * 10).astype(dtype)
    op = OPERATORS[name]
    with torch.no_grad():
        expected = op(*_pair(torch, x, other))
    with hookgrad.no_grad():
        got = op(*_pair(hookgrad, x, other))
    assert str(got.dtype) == str(expected.dtype) and tuple(got.shape) == tuple(expected.shape)
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_zero_dim_results_and_negation(dtype):
    x = np.array(1.5, dtype=dtype)
    with hookgrad.no_grad():
        a = hookgrad.tensor(x)
        results = [a * a, a + 2.0, 3 - a, a / a, -a]
    with torch.no_grad():
        b = torch.tensor(x)
        expected = [b * b, b + 2.0, 3 - b, b / b, -b]
    for got, want in zip(results, expected):
        assert got.shape == () and str(got.dtype) == str(want.dtype)
        assert isinstance(got.numpy(), np.ndarray)
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_shapes_that_do_not_broadcast_raise_torchs_error():
    with hookgrad.no_grad():
        with pytest.raises(RuntimeError, match="must match the size"):
            hookgrad.ones(3) * hookgrad.ones(4)


def test_tensors_without_history_under_grad_mode_take_the_lane_and_stay_plain():
    a, b = hookgrad.ones(3), hookgrad.ones(3)
    out = a * b + 1.0
    assert out.grad_fn is None and not out.requires_grad


def test_recorded_operands_still_record():
    a = hookgrad.ones(3, requires_grad=True)
    b = hookgrad.ones(3)
    assert (b * a).grad_fn.name() == "MulBackward0"
    assert (a[1:] - 1.0).grad_fn.name() == "SubBackward0"
    view = a.detach()[1:]  # a view with no history: plain, and still correct
    np.testing.assert_array_equal((view * 2.0).numpy(), [2.0, 2.0])


def test_modes_see_the_operators_inside_no_grad():
    seen = []

    class Spy(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return func(*args, **(kwargs or {}))

    x = hookgrad.ones(2)
    with hookgrad.no_grad(), Spy():
        x * 2.0
        -x
    assert seen == ["mul", "neg"]


def test_backward_through_the_lane_matches_torch_with_double_backward():
    x = np.random.default_rng(1).standard_normal(6)
    a = torch.tensor(x, requires_grad=True)
    b = hookgrad.tensor(x, requires_grad=True)
    for lib, t in ((torch, a), (hookgrad, b)):
        y = (t.tanh() * 3.0 - t / 2.0 + 1.0).sum()
        (g,) = lib.autograd.grad(y, t, create_graph=True)
        g.sum().backward()
    (ga,) = torch.autograd.grad((a.tanh() * 3.0 - a / 2.0).sum(), a)
    (gb,) = hookgrad.autograd.grad((b.tanh() * 3.0 - b / 2.0).sum(), b)
    np.testing.assert_allclose(gb.numpy(), ga.numpy(), rtol=1e-15)
    np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-15)


@pytest.mark.parametrize("name", sorted(OPERATORS) + ["neg"])
@pytest.mark.parametrize("layout", ["transposed", "mixed", "expanded", "sliced"])
def test_unrecorded_operators_lay_out_results_as_torch(name, layout):
    """The lane must give torch's strides, as the full path does (a transposed operand keeps a
    transposed result; operands that disagree follow the first)."""
    x = np.arange(12.0).reshape(3, 4)

    def operands(lib):
        a, b = lib.tensor(x), lib.tensor(x * 0.5 + 1)
        if layout == "transposed":
            return a.t(), b.t()
        if layout == "mixed":
            return a.t(), b.t().contiguous()
        if layout == "expanded":
            return a[:1].expand(3, 4), b.t().contiguous().t()
        return a[:, ::2], b[:, 1::2]

    def run(lib):
        a, b = operands(lib)
        result = -a if name == "neg" else OPERATORS[name](a, b)
        return result.is_contiguous(), tuple(result.stride()), result.tolist()

    with torch.no_grad():
        expected = run(torch)
    with hookgrad.no_grad():
        got = run(hookgrad)
    assert got == expected
