"""An input a custom Function returns as-is (a module's output under full backward hooks) is a
view whose history cannot be rebuilt: after its base changes in place, reading its history
(``grad_fn``, ``is_leaf``, using it in an op) raises as in torch, for it and for views of it,
instead of answering with the stale node. Differential against torch."""
import pytest
import torch

import hookgrad


def _double_in_place(lib):
    class DoubleInPlace(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    return DoubleInPlace


def _module_output(lib):
    layer = lib.nn.Linear(1, 2).double()
    layer.register_full_backward_hook(lambda *args: None)
    return layer(lib.tensor([0.5], dtype=lib.float64))


def _outcome(fn):
    try:
        result = fn()
    except RuntimeError:
        return "RuntimeError"
    return result if isinstance(result, bool) else type(result).__name__


READS = {
    "grad_fn": lambda out, view: out.grad_fn,
    "is_leaf": lambda out, view: out.is_leaf,
    "requires_grad": lambda out, view: out.requires_grad,
    "view_grad_fn": lambda out, view: view.grad_fn,
    "used_in_op": lambda out, view: (out * 2).requires_grad,
    "view_in_place": lambda out, view: view.mul_(2).requires_grad,
}


@pytest.mark.parametrize("read", sorted(READS))
def test_module_output_after_dirty_custom_function_on_its_view(read):
    def run(lib):
        out = _module_output(lib)
        view = out.unsqueeze(1)
        apply = _outcome(lambda: _double_in_place(lib).apply(view))
        return apply, _outcome(lambda: READS[read](out, view))

    assert run(hookgrad) == run(torch)


@pytest.mark.parametrize("read", sorted(READS))
def test_module_output_untouched_keeps_its_history(read):
    def run(lib):
        out = _module_output(lib)
        return _outcome(lambda: READS[read](out, out.unsqueeze(1)))

    assert run(hookgrad) == run(torch)


def test_in_place_on_view_of_module_output_names_the_view_op():
    def run(lib):
        view = _module_output(lib).unsqueeze(1)
        with pytest.raises(RuntimeError) as error:
            view.mul_(2)
        return str(error.value)

    assert run(hookgrad) == run(torch)


def test_gradient_through_module_output_unchanged():
    def run(lib):
        layer = lib.nn.Linear(3, 2).double()
        with lib.no_grad():
            layer.weight.copy_(lib.arange(6., dtype=lib.float64).reshape(2, 3))
        layer.register_full_backward_hook(lambda *args: None)
        x = lib.tensor([[1., 2., 3.]], dtype=lib.float64, requires_grad=True)
        (layer(x).unsqueeze(0) * 3).sum().backward()
        return x.grad.tolist()

    assert run(hookgrad) == run(torch)


def test_history_of_view_of_changed_module_output_names_the_view_op():
    def run(lib):
        view = _module_output(lib).unsqueeze(1)
        with pytest.raises(RuntimeError):
            _double_in_place(lib).apply(view)
        with pytest.raises(RuntimeError) as error:
            view.grad_fn
        return str(error.value)

    assert run(hookgrad) == run(torch)


def test_mark_dirty_drops_retained_grad():
    """torch resets a dirty tensor's .grad (a built-in in-place op keeps it); retain_grad and
    the hooks stay."""
    def run(lib):
        x = lib.tensor([1., 2.], dtype=lib.float64, requires_grad=True)
        t = x * 3
        t.retain_grad()
        seen = []
        t.register_hook(lambda g: seen.append(g.tolist()))
        (t * t).sum().backward(retain_graph=True)
        before = t.grad.tolist()
        _double_in_place(lib).apply(t)
        after = t.grad
        (t * 1).sum().backward()
        return before, after, t.grad.tolist(), x.grad.tolist(), seen

    assert run(hookgrad) == run(torch)


def test_split_output_with_lost_history_is_refused_before_forward_runs():
    """An input whose history cannot be rebuilt raises before the Function's forward changes
    it, so its data stays as it was."""
    def run(lib):
        x = lib.tensor([[-0.5, 0.75, -2.0, 1.25]], dtype=lib.float64, requires_grad=True)
        first, second = (x * 1).split(3, 1)
        base = second._base
        with lib.no_grad():
            base.mul_(1)  # the base changes in place: the split outputs' history is gone
        with pytest.raises(RuntimeError):
            _double_in_place(lib).apply(second)
        return second.detach().tolist()

    assert run(hookgrad) == run(torch)


def test_mark_dirty_on_view_of_leaf_drops_grad_then_refuses():
    def run(lib):
        x = lib.tensor([1.5, 0.25, -2.0], dtype=lib.float64, requires_grad=True)
        view = x[1:]
        view.sum().backward(inputs=[view])
        with pytest.raises(RuntimeError):
            _double_in_place(lib).apply(view)
        return view.grad

    assert run(hookgrad) == run(torch)
