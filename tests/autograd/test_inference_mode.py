"""Inference mode and inference tensors against torch: which tensors are inference tensors,
what may not be done with them outside the mode (saved for backward, changed in place, set to
require grad), nesting with ``inference_mode(False)`` and ``no_grad``, and the decorator forms
(functions, bare, generators). Each scenario runs under both libraries; what it observes
(values, flags, node names, errors' types and messages) must agree."""
import threading

import numpy as np
import pytest
import torch

import hookgrad
from tests.conftest import error_of

X = np.arange(1.0, 4.0)


def _same(scenario):
    """``scenario(lib)`` returns what it observed; both libraries must observe the same."""
    theirs, ours = scenario(torch), scenario(hookgrad)
    assert ours == theirs


def _made_inside(lib):
    with lib.inference_mode():
        return lib.tensor(X.copy())


def _node(tensor):
    return None if tensor.grad_fn is None else tensor.grad_fn.name()


# ---------------------------------------------------------------------------------------------
# which tensors are inference tensors
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda L, x, n: L.tensor([1.0, 2.0]),
    lambda L, x, n: L.zeros(2),
    lambda L, x, n: L.randn(2),
    lambda L, x, n: L.arange(3),
    lambda L, x, n: x * 2,
    lambda L, x, n: n + 1,
    lambda L, x, n: x.exp().sum(),
    lambda L, x, n: n[:2],
    lambda L, x, n: x[1:],
    lambda L, x, n: n.t(),
    lambda L, x, n: x.detach(),
    lambda L, x, n: L.ones(2)[:1],
    lambda L, x, n: L.ones(2).view(2, 1),
    lambda L, x, n: L.ones(2).detach(),
    lambda L, x, n: n.clone(),
    lambda L, x, n: L.ones(2, requires_grad=True),
])
def test_what_inference_mode_makes(make):
    def scenario(lib):
        x = lib.tensor(X.copy(), requires_grad=True)
        n = lib.tensor(X.copy())
        with lib.inference_mode():
            made = make(lib, x, n)
            inside = (made.is_inference(), made.requires_grad, _node(made),
                      lib.is_inference_mode_enabled(), lib.is_grad_enabled())
        return inside, made.is_inference(), made.requires_grad, made._base is None
    _same(scenario)


@pytest.mark.parametrize("use", [
    lambda L, a: a * 2,
    lambda L, a: a[:2],
    lambda L, a: a.view(3, 1),
    lambda L, a: a.detach(),
    lambda L, a: a.data,
    lambda L, a: a.clone(),
    lambda L, a: L.tensor(a.tolist()),
    lambda L, a: L.ones_like(a),
    lambda L, a: a.new_zeros(2),
    lambda L, a: a.float(),
    lambda L, a: a.double(),
    lambda L, a: a.to(L.float32),
])
def test_what_is_made_from_an_inference_tensor_outside(use):
    def scenario(lib):
        with lib.inference_mode():
            a = lib.ones(3)
        made = use(lib, a)
        return made.is_inference(), made._base is None, made is a, lib.is_inference(made)
    _same(scenario)


def test_in_no_grad_nothing_is_an_inference_tensor():
    def scenario(lib):
        x = lib.tensor(X.copy(), requires_grad=True)
        with lib.no_grad():
            made = [lib.ones(2), x * 2, x[:1]]
            state = (lib.is_inference_mode_enabled(), lib.is_grad_enabled())
        return state, [(t.is_inference(), t.requires_grad) for t in made]
    _same(scenario)


def test_inference_tensors_inside_no_grad():
    def scenario(lib):
        a = _made_inside(lib)
        with lib.no_grad():
            double = a * 2
            written = error_of(lambda: a.add_(1))
            copied = a.clone()
        return (double.is_inference(), written, copied.is_inference(), a.tolist(),
                error_of(lambda: a.mul(2)))
    _same(scenario)


# ---------------------------------------------------------------------------------------------
# outside inference mode: saving, in place, requires_grad, versions
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("op", [
    lambda L, a, x: a * x,
    lambda L, a, x: x * a,
    lambda L, a, x: L.mul(x, a).sum(),
    lambda L, a, x: x @ a,
    lambda L, a, x: L.nn.functional.linear(a.view(1, 3), x.view(1, 3)),
    lambda L, a, x: (x * a[:3]).sum(),
    lambda L, a, x: a + x,
    lambda L, a, x: L.stack([a, x]),
    lambda L, a, x: (a * 2).exp(),
    lambda L, a, x: a.exp() + x,
    lambda L, a, x: a.exp(),
])
def test_saving_an_inference_tensor_for_backward(op):
    def scenario(lib):
        a = _made_inside(lib)
        x = lib.tensor(X.copy(), requires_grad=True)
        outcome = error_of(lambda: op(lib, a, x))
        if outcome is not None:
            return outcome
        result = op(lib, a, x)
        return _node(result), result.is_inference(), result.detach().tolist()
    _same(scenario)


def test_custom_function_saving_an_inference_tensor():
    def scenario(lib):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, weight):
                ctx.save_for_backward(weight)
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                return grad, None

        class Keep(Scale):
            @staticmethod
            def forward(ctx, x, weight):
                ctx.save_for_backward(x)
                return x * 2

        a = _made_inside(lib)
        x = lib.tensor(X.copy(), requires_grad=True)
        return error_of(lambda: Scale.apply(x, a)), Keep.apply(x, a).requires_grad
    _same(scenario)


@pytest.mark.parametrize("change", [
    lambda L, a, x: a.add_(1),
    lambda L, a, x: a.zero_(),
    lambda L, a, x: a.fill_(3.0),
    lambda L, a, x: a.clamp_(min=2.5),
    lambda L, a, x: a.__setitem__(0, 5.0),
    lambda L, a, x: a.copy_(L.full((3,), 7.0, dtype=L.float64)),
    lambda L, a, x: a.mul_(x),
    lambda L, a, x: a[:2].add_(1),
    lambda L, a, x: L.add(L.ones(3, dtype=L.float64), 1, out=a),
    lambda L, a, x: a.requires_grad_(),
    lambda L, a, x: a.requires_grad_(False),
    lambda L, a, x: L.nn.Parameter(a),
    lambda L, a, x: a._version,
    lambda L, a, x: a.detach_(),
    lambda L, a, x: a.retain_grad(),
])
@pytest.mark.parametrize("mode", ["grad", "no_grad"])
def test_changing_an_inference_tensor_outside(change, mode):
    """Refused outside inference mode; torch refuses an untracked in-place change after
    writing (the check is on the version bump), so the values are compared as well."""
    def scenario(lib):
        a = _made_inside(lib)
        x = lib.tensor(X.copy(), requires_grad=True)
        if mode == "no_grad":
            with lib.no_grad():
                outcome = error_of(lambda: change(lib, a, x))
        else:
            outcome = error_of(lambda: change(lib, a, x))
        return outcome, a.tolist(), a.requires_grad, a.is_inference()
    _same(scenario)


def test_changing_other_tensors_with_an_inference_tensor():
    def scenario(lib):
        a = _made_inside(lib)
        n = lib.tensor(X.copy())
        n.add_(a)
        n.copy_(a)
        return n.tolist(), n._version, n.is_inference()
    _same(scenario)


@pytest.mark.parametrize("change", [
    lambda L, t: t.add_(1),
    lambda L, t: t.requires_grad_(),
    lambda L, t: t._version,
    lambda L, t: t.__setitem__(1, 0.0),
])
def test_inside_the_mode_inference_tensors_may_change(change):
    def scenario(lib):
        a = _made_inside(lib)
        with lib.inference_mode():
            outcome = error_of(lambda: change(lib, a))
        return outcome, a.tolist(), a.requires_grad
    _same(scenario)


def test_normal_tensors_changed_inside_the_mode():
    def scenario(lib):
        n = lib.tensor(X.copy())
        x = lib.tensor(X.copy(), requires_grad=True)
        with lib.inference_mode():
            n.mul_(2)
            x.add_(1)
        return n.tolist(), n._version, x._version, x.requires_grad, _node(x), n.is_inference()
    _same(scenario)


def test_views_of_normal_tensors_made_inside():
    def scenario(lib):
        x = lib.tensor(X.copy(), requires_grad=True)
        n = lib.tensor(X.copy())
        with lib.inference_mode():
            x_view, n_view = x[:2], n[:2]
        seen = (x_view.is_inference(), x_view.requires_grad, _node(x_view), x_view.is_leaf,
                x_view._base is x, n_view._base is n, _node(x_view * 2))
        return (seen, error_of(lambda: x_view.mul_(2)), error_of(lambda: n_view.mul_(2)),
                n.tolist(), n._version)
    _same(scenario)


def test_a_tensor_made_to_require_grad_inside():
    def scenario(lib):
        with lib.inference_mode():
            t = lib.ones(2, requires_grad=True)
            u = lib.ones(2).requires_grad_()
        x = lib.ones(2, requires_grad=True)
        return (t.requires_grad, t.is_leaf, u.requires_grad, _node(t * 2),
                error_of(lambda: t * x), error_of(lambda: u.add_(1)))
    _same(scenario)


# ---------------------------------------------------------------------------------------------
# nesting and the decorator forms
# ---------------------------------------------------------------------------------------------
def test_nested_modes():
    def scenario(lib):
        x = lib.ones(2, requires_grad=True)
        seen = []

        def state():
            made = lib.ones(1)
            seen.append((lib.is_inference_mode_enabled(), lib.is_grad_enabled(),
                         made.is_inference(), _node(x * 2)))
        with lib.inference_mode():
            state()
            with lib.inference_mode(False):
                state()
                with lib.inference_mode():
                    state()
                state()
            with lib.no_grad():
                state()
            with lib.inference_mode(True):
                state()
            with lib.enable_grad():
                state()
                with lib.no_grad():
                    state()
                with lib.inference_mode(False):
                    state()
                state()
            with lib.set_grad_enabled(True):
                state()
            lib.set_grad_enabled(True)
            state()
            state()
        state()
        with lib.no_grad():
            with lib.inference_mode(False):
                state()
            state()
        with lib.inference_mode(False):
            state()
        with lib.enable_grad():
            with lib.inference_mode():
                state()
            state()
        return seen
    _same(scenario)


def test_the_mode_is_restored_after_an_error():
    def scenario(lib):
        try:
            with lib.inference_mode():
                raise KeyError("inside")
        except KeyError:
            pass
        return lib.is_inference_mode_enabled(), lib.is_grad_enabled(), lib.ones(1).is_inference()
    _same(scenario)


def test_decorators():
    def scenario(lib):
        def report():
            return (lib.ones(1).is_inference(), lib.is_inference_mode_enabled(),
                    lib.is_grad_enabled())

        called = lib.inference_mode()(report)
        bare = lib.inference_mode(report)
        off = lib.inference_mode(False)(report)
        on_grad = lib.autograd.inference_mode(mode=True)(report)
        return (called(), bare(), off(), on_grad(), report(), called.__name__, bare.__name__)
    _same(scenario)


def test_decorated_generator_runs_inside_only_while_resumed():
    def scenario(lib):
        @lib.inference_mode()
        def numbers(count):
            total = 0
            for _ in range(count):
                sent = yield (lib.ones(1).is_inference(), lib.is_inference_mode_enabled())
                total += sent or 0
            return total

        seen = []
        generator = numbers(3)
        seen.append(next(generator))
        seen.append(lib.is_inference_mode_enabled())
        seen.append(generator.send(5))
        seen.append(lib.ones(1).is_inference())
        seen.append(generator.send(2))
        try:
            generator.send(1)
        except StopIteration as stop:
            seen.append(("returned", stop.value))
        return seen
    _same(scenario)


def test_decorated_generator_throw_and_close():
    def scenario(lib):
        @lib.no_grad()
        def catcher():
            while True:
                try:
                    yield lib.is_grad_enabled()
                except ValueError:
                    yield ("caught", lib.is_grad_enabled())

        generator = catcher()
        seen = [next(generator), lib.is_grad_enabled(), generator.throw(ValueError("x")),
                next(generator)]
        generator.close()
        seen.append(lib.is_grad_enabled())
        return seen
    _same(scenario)


def test_clone_of_the_context_manager():
    def scenario(lib):
        manager = lib.inference_mode()
        with manager.clone():
            inside = lib.ones(1).is_inference()
        return inside, lib.is_inference_mode_enabled()
    _same(scenario)


def test_other_threads_make_normal_tensors():
    """Inference mode is per thread: a tensor made in another thread while this one is
    inside is a normal tensor."""
    def scenario(lib):
        made, started, release = [], threading.Event(), threading.Event()

        def worker():
            started.wait()
            made.append(lib.ones(1).is_inference())
            release.set()

        thread = threading.Thread(target=worker)
        thread.start()
        with lib.inference_mode():
            started.set()
            release.wait(10)
            mine = lib.ones(1).is_inference()
        thread.join()
        return made, mine, lib.ones(1).is_inference()
    _same(scenario)


def test_a_normal_step_still_records_and_saves():
    """After inference mode has been used, tensors made outside it save and train as usual."""
    def scenario(lib):
        with lib.inference_mode():
            lib.ones(1)
        x = lib.tensor(X.copy(), requires_grad=True)
        loss = (x * x).sum()
        loss.backward()
        return x.grad.tolist(), x._version, (x * 1)._version
    _same(scenario)
