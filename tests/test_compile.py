"""compile runs eagerly: a function keeps its results and name, a module becomes an
OptimizedModule around ``_orig_mod`` (state-dict keys, attributes, training mode and hooks as
torch's), used bare or as a decorator with or without arguments; torch's argument checks."""
import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, assert_same_error

LIBS = (torch, hookgrad)


def _scale(x):
    """Twice x, plus one."""
    return x * 2 + 1


def test_compiled_function_gives_the_same_values_and_gradients():
    grads = []
    for lib in LIBS:
        compiled = lib.compile(_scale)
        x = lib.tensor([1.0, -2.0], requires_grad=True)
        y = compiled(x)
        y.sum().backward()
        grads.append((y, x.grad, compiled.__name__, compiled.__doc__, compiled.__wrapped__))
    assert_close(grads[1][0], grads[0][0])
    assert_close(grads[1][1], grads[0][1])
    assert grads[1][2:] == grads[0][2:]


@pytest.mark.parametrize("decorator", [
    lambda lib: lib.compile, lambda lib: lib.compile(), lambda lib: lib.compile(backend="eager"),
    lambda lib: lib.compile(mode="reduce-overhead", fullgraph=True, dynamic=False),
])
def test_decorator_forms(decorator):
    results = []
    for lib in LIBS:
        @decorator(lib)
        def shifted(x, shift=1.0):
            return x + shift

        results.append((shifted(lib.ones(2), shift=3.0), shifted.__name__))
    assert_close(results[1][0], results[0][0])
    assert results[1][1] == results[0][1] == "shifted"


def test_disable_returns_the_model_itself():
    for lib in LIBS:
        assert lib.compile(_scale, disable=True) is _scale
        module = lib.nn.Linear(2, 2)
        assert lib.compile(module, disable=True) is module


def test_compiled_module_wraps_the_original():
    seen = []
    for lib in LIBS:
        lib.manual_seed(0)
        module = lib.nn.Linear(3, 2)
        compiled = lib.compile(module)
        events = []
        compiled.register_forward_hook(lambda *a: events.append("outer"))
        module.register_forward_hook(lambda *a: events.append("inner"))
        out = compiled(lib.ones(1, 3))
        compiled.eval()
        after_eval = (compiled.training, module.training)
        compiled.train()
        compiled.extra = 5
        seen.append((out.detach().numpy(), type(compiled).__name__,
                     compiled._orig_mod is module, compiled.weight is module.weight,
                     list(compiled.state_dict()), [n for n, _ in compiled.named_parameters()],
                     events, after_eval, compiled.training, getattr(module, "extra", None)))
    np.testing.assert_allclose(seen[1][0], seen[0][0], rtol=1e-6)
    assert seen[1][1:] == seen[0][1:]


def test_module_compile_method_is_in_place():
    for lib in LIBS:
        module = lib.nn.Linear(2, 2)
        assert module.compile() is None
        assert type(module) is lib.nn.Linear


@pytest.mark.parametrize("kwargs", [{"mode": "x"}, {"mode": "default", "options": {"a": 1}}])
def test_argument_errors(kwargs):
    assert_same_error(lambda lib: lib.compile(_scale, **kwargs))


def test_unknown_backend():
    errors = []
    for lib in LIBS:
        with pytest.raises(RuntimeError) as info:
            lib.compile(_scale, backend="foo")
        errors.append((type(info.value).__name__, str(info.value)))
    assert errors[1] == errors[0]


def test_non_callable_model():
    assert_same_error(lambda lib: lib.compile(1))
