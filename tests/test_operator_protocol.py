"""Binary operators follow Python's protocol as torch's do: an operand of a type the operator
does not take gets NotImplemented, so the other operand's reflected method runs, or Python
raises its own error."""
import operator

import numpy as np
import pytest
import torch

import hookgrad

OPERATORS = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "@": operator.matmul,
    "&": operator.and_, "|": operator.or_, "^": operator.xor, "<": operator.lt,
    "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq,
    "!=": operator.ne,
}
REFLECTED = {"+": "__radd__", "-": "__rsub__", "*": "__rmul__", "/": "__rtruediv__",
             "//": "__rfloordiv__", "%": "__rmod__", "**": "__rpow__", "@": "__rmatmul__",
             "&": "__rand__", "|": "__ror__", "^": "__rxor__", "<": "__gt__", "<=": "__ge__",
             ">": "__lt__", ">=": "__le__", "==": "__eq__", "!=": "__ne__"}


class Other:
    """A user type that knows how to combine with tensors from the right."""


for _symbol, _name in REFLECTED.items():
    setattr(Other, _name, (lambda name: lambda self, tensor: f"Other.{name}")(_name))


def _outcome(lib, fn):
    try:
        result = fn()
    except Exception as error:  # the type and the words are what is compared
        return type(error).__name__, str(error)
    if isinstance(result, (lib.Tensor, np.ndarray)):
        return "tensor", result.tolist()
    return "value", result


def _operand(lib, symbol):
    return lib.ones(2, dtype=lib.bool) if symbol in "&|^" else lib.ones(2)


@pytest.mark.parametrize("symbol", sorted(OPERATORS))
@pytest.mark.parametrize("other", ["user type", None, "text", (1.0, 2.0), [1.0, 2.0]])
def test_tensor_with_another_type(symbol, other):
    fn = OPERATORS[symbol]
    value = Other() if other == "user type" else other
    ours = _outcome(hookgrad, lambda: fn(_operand(hookgrad, symbol), value))
    theirs = _outcome(torch, lambda: fn(_operand(torch, symbol), value))
    assert ours == theirs


@pytest.mark.parametrize("symbol", sorted(OPERATORS))
@pytest.mark.parametrize("other", [None, "text"])
def test_another_type_with_a_tensor(symbol, other):
    fn = OPERATORS[symbol]
    ours = _outcome(hookgrad, lambda: fn(other, _operand(hookgrad, symbol)))
    theirs = _outcome(torch, lambda: fn(other, _operand(torch, symbol)))
    assert ours == theirs


@pytest.mark.parametrize("method", ["__iadd__", "__isub__", "__imul__", "__itruediv__"])
def test_in_place_operator_with_another_type(method):
    for lib in (torch, hookgrad):
        assert getattr(lib.ones(2), method)(None) is NotImplemented
    ours = _outcome(hookgrad, lambda: getattr(hookgrad.ones(2), method)(Other()))
    assert ours == ("value", NotImplemented)


def test_reflected_division_records_the_reciprocal_first():
    """torch's ``other / tensor`` is ``tensor.reciprocal() * other``: with an operand it does
    not take, the reciprocal is still recorded (a saved-tensor hook sees it) before Python's
    error."""
    logs = []
    for lib in (torch, hookgrad):
        x = lib.tensor([0.5, 2.0], requires_grad=True)
        y = x * 1
        log = []
        with lib.autograd.graph.saved_tensors_hooks(
                lambda t: (log.append(tuple(t.shape)), t)[1], lambda t: t):
            with pytest.raises(TypeError) as error:
                None / y
        logs.append((log, str(error.value)))
    assert logs[0] == logs[1]
