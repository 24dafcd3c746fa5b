"""Custom autograd.Function semantics, each compared with torch running the same class body."""
import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close


def _error(fn):
    try:
        fn()
    except Exception as error:  # noqa: BLE001 - the test compares the exception with torch's
        return type(error), str(error)
    return None


def make_func(lib):
    """A Function with a non-tensor argument, saving inputs and its output, and keeping a tensor
    that is neither on ctx: out = k * x * exp(y)."""

    class Blend(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, k: float):
            scaled = k * x
            blended = scaled * y.exp()
            ctx.save_for_backward(x, y, blended)
            ctx.k = k
            ctx.scaled = scaled  # not needed by backward; torch lets it live on ctx
            return blended

        @staticmethod
        def backward(ctx, grad_output):
            x, y, blended = ctx.saved_tensors
            return grad_output * ctx.k * y.exp(), grad_output * blended, None

    return Blend


@pytest.mark.parametrize("lib", [torch, hookgrad], ids=["torch", "hookgrad"])
def test_function_with_non_tensor_argument_runs(lib):
    Blend = make_func(lib)
    x = lib.tensor(1.5, requires_grad=True, dtype=lib.double)
    y = lib.tensor(-0.5, requires_grad=True, dtype=lib.double)
    out = Blend.apply(x, y, 3.0)
    out.backward()
    assert out.grad_fn.name() == "BlendBackward"


def test_function_with_non_tensor_argument_matches_torch():
    results = []
    for lib in (torch, hookgrad):
        Blend = make_func(lib)
        x = lib.tensor(1.5, requires_grad=True, dtype=lib.double)
        y = lib.tensor(-0.5, requires_grad=True, dtype=lib.double)
        out = Blend.apply(x, y, 3.0)
        out.backward()
        results.append((out.item(), x.grad.item(), y.grad.item(), out.grad_fn.name()))
    assert results[0] == results[1]


def _pack_log(lib, build):
    log = []

    def pack(t):
        log.append(("pack", tuple(t.shape), t.requires_grad, t.grad_fn is not None))
        return t

    def unpack(t):
        log.append(("unpack", tuple(t.shape)))
        return t

    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        out = build(lib)
    out.sum().backward()
    return log


def test_save_for_backward_goes_through_pack_hooks_like_torch():
    def build(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True, dtype=lib.double)
        b = lib.tensor([3.0, 4.0], requires_grad=True, dtype=lib.double)
        return make_func(lib).apply(a, b, 3)

    assert _pack_log(hookgrad, build) == _pack_log(torch, build)


def make_square(lib):
    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    return Square


def test_saved_input_modified_in_place_raises_like_torch():
    messages = []
    for lib in (torch, hookgrad):
        x = lib.tensor([1.0, 2.0], requires_grad=True).clone()
        y = make_square(lib).apply(x)
        x.add_(1)
        messages.append(_error(lambda: y.sum().backward()))
    assert messages[1][0] is RuntimeError
    assert "modified by an inplace operation" in messages[1][1]
    assert "is at version 1; expected version 0 instead" in messages[1][1]
    assert messages[0][0] is messages[1][0]


def test_double_backward_through_custom_function():
    grads = []
    for lib in (torch, hookgrad):
        x = lib.tensor([1.5, -0.5], requires_grad=True, dtype=lib.double)
        y = make_square(lib).apply(x)
        (gx,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (ggx,) = lib.autograd.grad(gx.sum(), x)
        grads.append((gx.detach().numpy().copy(), ggx.numpy().copy()))
    np.testing.assert_allclose(grads[1][0], grads[0][0])
    np.testing.assert_allclose(grads[1][1], grads[0][1])


def test_needs_input_grad_matches_torch():
    seen = []
    for lib in (torch, hookgrad):
        record = []

        class Probe(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b, k):
                record.append(ctx.needs_input_grad)
                return a * b * k

            @staticmethod
            def backward(ctx, grad):
                record.append(ctx.needs_input_grad)
                return grad, None, None

        a = lib.ones(2, requires_grad=True)
        Probe.apply(a, lib.ones(2), 3.0).sum().backward()
        seen.append(record)
    assert seen[0] == seen[1]


def make_inplace(lib):
    class AddOneInplace(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad

    return AddOneInplace


def test_mark_dirty_returns_the_same_tensor_and_bumps_version():
    for lib in (torch, hookgrad):
        x = lib.ones(3, requires_grad=True).clone()
        before = x._version
        y = make_inplace(lib).apply(x)
        assert y is x
        assert x._version > before
        assert x.grad_fn.name() == "AddOneInplaceBackward"


def test_mark_dirty_on_leaf_raises_like_torch():
    errors = []
    for lib in (torch, hookgrad):
        x = lib.ones(3, requires_grad=True)
        errors.append(_error(lambda: make_inplace(lib).apply(x)))
    assert errors[1] == errors[0]


def make_sort(lib):
    class SortWithIndex(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            values = x.sort()[0] if lib is torch else x.detach()
            order = lib.tensor([1.0, 0.0])
            ctx.mark_non_differentiable(order)
            return values * 2, order

        @staticmethod
        def backward(ctx, grad_values, grad_order):
            ctx.seen = grad_order
            return grad_values * 2

    return SortWithIndex


def test_mark_non_differentiable_outputs_do_not_require_grad():
    for lib in (torch, hookgrad):
        x = lib.tensor([2.0, 1.0], requires_grad=True)
        values, order = make_sort(lib).apply(x)
        assert values.requires_grad and not order.requires_grad
        values.sum().backward()
        assert x.grad.tolist() == [2.0, 2.0]


def make_two_outputs(lib, materialize: bool, record: list):
    class TwoOutputs(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(materialize)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            record.append((None if g1 is None else g1.tolist(),
                           None if g2 is None else g2.tolist()))
            total = g1 * 2 if g1 is not None else 0
            if g2 is not None:
                total = total + g2 * 3
            return total

    return TwoOutputs


@pytest.mark.parametrize("materialize", [True, False])
def test_set_materialize_grads(materialize):
    records = []
    for lib in (torch, hookgrad):
        record = []
        x = lib.ones(2, requires_grad=True)
        first, _second = make_two_outputs(lib, materialize, record).apply(x)
        first.sum().backward()
        records.append((record, x.grad.tolist()))
    assert records[1] == records[0]


def test_once_differentiable_refuses_double_backward():
    errors = []
    for lib in (torch, hookgrad):
        class Cube(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 3

            @staticmethod
            @lib.autograd.function.once_differentiable
            def backward(ctx, grad):
                (x,) = ctx.saved_tensors
                return grad * 3 * x * x

        x = lib.tensor([2.0], requires_grad=True)
        (gx,) = lib.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
        assert gx.item() == 12.0
        errors.append(_error(lambda: gx.sum().backward()))
    assert errors[1] == errors[0]


@pytest.mark.parametrize("case", ["too_few", "non_tensor_grad", "wrong_shape"])
def test_backward_errors_name_the_function_like_torch(case):
    errors = []
    for lib in (torch, hookgrad):
        class Broken(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                return x * k

            @staticmethod
            def backward(ctx, grad):
                if case == "too_few":
                    return (grad,)
                if case == "non_tensor_grad":
                    return grad, grad
                return lib.ones(7), None

        x = lib.ones(3, requires_grad=True)
        errors.append(_error(lambda: Broken.apply(x, 2.0).sum().backward()))
    assert errors[1] == errors[0]


def test_setup_context_style():
    outputs = []
    for lib in (torch, hookgrad):
        class Mul(lib.autograd.Function):
            @staticmethod
            def forward(x, y):
                return x * y

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(*inputs)

            @staticmethod
            def backward(ctx, grad):
                x, y = ctx.saved_tensors
                return grad * y, grad * x

        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.tensor([3.0, 4.0], requires_grad=True)
        Mul.apply(x, y).sum().backward()
        outputs.append((x.grad.tolist(), y.grad.tolist()))
    assert outputs[1] == outputs[0]


def test_forward_runs_without_recording():
    for lib in (torch, hookgrad):
        seen = []

        class Probe(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                seen.append(lib.is_grad_enabled())
                return (x * 2).requires_grad

            @staticmethod
            def backward(ctx, grad):
                return grad

        assert Probe.apply(lib.ones(1, requires_grad=True)) is False
        assert seen == [False]


def test_returning_an_input_makes_a_new_output():
    for lib in (torch, hookgrad):
        class Identity(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, grad):
                return grad * 5

        x = lib.ones(2, requires_grad=True)
        y = Identity.apply(x)
        assert y is not x and y.grad_fn.name() == "IdentityBackward"
        y.sum().backward()
        assert x.grad.tolist() == [5.0, 5.0]


def test_saved_output_is_reattached_to_its_node():
    for lib in (torch, hookgrad):
        class Exp(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                result = x.exp()
                ctx.save_for_backward(result)
                return result

            @staticmethod
            def backward(ctx, grad):
                (result,) = ctx.saved_tensors
                assert result.grad_fn is ctx
                return grad * result

        x = lib.tensor([0.0, 1.0], requires_grad=True)
        Exp.apply(x).sum().backward()
        assert_close(x.grad, np.exp(np.array([0.0, 1.0], dtype=np.float32)))


def test_non_tensor_state_and_saved_none():
    for lib in (torch, hookgrad):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, factor):
                ctx.factor = factor
                ctx.save_for_backward(None, x)
                return x * factor

            @staticmethod
            def backward(ctx, grad):
                nothing, x = ctx.saved_tensors
                assert nothing is None
                return grad * ctx.factor, None

        x = lib.ones(2, requires_grad=True)
        Scale.apply(x, 4.0).sum().backward()
        assert x.grad.tolist() == [4.0, 4.0]
