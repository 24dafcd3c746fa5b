"""grad_fn._saved_<name> for ops with a Python-number operand, as torch exposes them."""
import pytest
import torch

import hookgrad
from tests.conftest import to_numpy

# each builds an output from x; the number operands are what is under test
CASES = {
    "mul_int": lambda lib, x: x * 3,
    "rmul_int": lambda lib, x: 3 * x,
    "mul_float": lambda lib, x: x * 2.5,
    "mul_method": lambda lib, x: x.mul(3),
    "mul_tensor": lambda lib, x: x * x,
    "mul_constant_tensor": lambda lib, x: x * lib.tensor(2.0),
    "div_int": lambda lib, x: x / 2,
    "rdiv": lambda lib, x: 2 / x,
    "div_floor": lambda lib, x: lib.div(x, 2, rounding_mode="floor"),
    "div_trunc_tensor": lambda lib, x: lib.div(x, x + 1, rounding_mode="trunc"),
    "add_number": lambda lib, x: x + 3,
    "add_alpha": lambda lib, x: lib.add(x, x, alpha=2),
    "add_number_alpha": lambda lib, x: x.add(3, alpha=2),
    "sub_number": lambda lib, x: x - 3,
    "sub_alpha": lambda lib, x: lib.sub(x, x, alpha=2),
    "rsub_number": lambda lib, x: 3 - x,
    "pow_number": lambda lib, x: x.pow(2),
    "pow_float": lambda lib, x: x ** 0.5,
    "rpow": lambda lib, x: 2 ** x,
    "pow_tensor": lambda lib, x: x.pow(x),
    "clamp": lambda lib, x: x.clamp(0, 2),
    "clamp_min": lambda lib, x: x.clamp(min=0),
    "clamp_max": lambda lib, x: x.clamp(max=2),
    "remainder_number": lambda lib, x: x % 2,
    "fmod_number": lambda lib, x: lib.fmod(x, 2),
    "leaky_relu": lambda lib, x: lib.nn.functional.leaky_relu(x, 0.1),
}
NAMES = ("self", "other", "exponent", "alpha", "min", "max", "result", "negative_slope",
         "rounding_mode")


def _inspect(lib, build):
    x = lib.tensor([1.5, 2.5], requires_grad=True)
    grad_fn = build(lib, x).grad_fn
    found = {}
    for name in NAMES:
        if not hasattr(grad_fn, "_saved_" + name):  # must answer, never raise
            continue
        value = getattr(grad_fn, "_saved_" + name)
        if isinstance(value, (hookgrad.Tensor, torch.Tensor)):
            value = ("tensor", str(value.dtype).split(".")[-1], tuple(value.shape),
                     to_numpy(value).tolist())
        found[name] = value
    return type(grad_fn).__name__, found


@pytest.mark.parametrize("case", sorted(CASES))
def test_saved_attributes_match_torch(case):
    assert _inspect(hookgrad, CASES[case]) == _inspect(torch, CASES[case])


def test_wrapped_number_is_not_packed():
    for lib in (hookgrad, torch):
        packed = []
        x = lib.ones(2, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
            x * 3
            x / 2
        assert packed == []
