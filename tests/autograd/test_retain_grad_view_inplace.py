"""retain_grad follows a tensor to the new history an in-place op through its view gives it."""
import pytest
import torch

import hookgrad
from tests.conftest import assert_close

# each modifies v (retaining its grad) through a view of it, after v has been used once
INPLACE = {
    "full_slice_mul": lambda v: v[:].mul_(0.5),
    "view_add": lambda v: v.view(2).add_(1.0),
    "part_slice_mul": lambda v: v[1:].mul_(4.0),
    "direct_mul": lambda v: v.mul_(0.5),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_retain_grad_after_inplace_through_view(name):
    def run(lib):
        x = lib.tensor([1., 2.], requires_grad=True)
        v = x * 1
        v.retain_grad()
        used = v * 3
        INPLACE[name](v)
        (used.sum() + (v * lib.tensor([1., 10.])).sum()).backward()
        return v.grad, x.grad

    ours, theirs = run(hookgrad), run(torch)
    assert_close(ours[0], theirs[0])
    assert_close(ours[1], theirs[1])


def test_hook_registered_before_inplace_through_view_stays_with_old_value():
    def run(lib):
        seen = []
        x = lib.tensor([1., 2.], requires_grad=True)
        v = x * 1
        v.register_hook(lambda g: seen.append(g.tolist()))
        used = v * 3
        v[:].mul_(0.5)
        (used.sum() + (v * lib.tensor([1., 10.])).sum()).backward()
        return seen

    assert run(hookgrad) == run(torch)


@pytest.mark.parametrize("name", ["slice_mul", "narrow_tanh", "select_add"])
def test_retain_grad_on_a_view_that_is_then_changed_in_place(name):
    """The retained view itself is modified: its .grad comes from its new node (found by the
    program fuzzer), also when the gradient is asked with autograd.grad of the base."""
    change = {"slice_mul": lambda v: v.mul_(2.0), "narrow_tanh": lambda v: v.tanh_(),
              "select_add": lambda v: v.add_(1.0)}[name]
    make = {"slice_mul": lambda b: b[0:2], "narrow_tanh": lambda b: b.narrow(0, 1, 2),
            "select_add": lambda b: b.select(0, 1)}[name]

    def run(lib):
        x = lib.tensor([[1., -2.], [0.5, 3.], [2., 1.]], dtype=lib.float64, requires_grad=True)
        base = x / 2
        view = make(base)
        view.retain_grad()
        change(view)
        (view * 3).sum().backward(retain_graph=True)
        first = view.grad.clone()
        lib.autograd.grad((view * view).sum(), [base])
        return first, view.grad, x.grad

    for ours, theirs in zip(run(hookgrad), run(torch)):
        assert_close(ours, theirs)


@pytest.mark.parametrize("name", ["base_copy", "sibling_setitem"])
def test_retained_view_keeps_retaining_after_its_base_changes(name):
    """A view retains its grad, then its base (or another view of it) changes in place: the
    view's rebuilt history keeps the retain_grad (found by the program fuzzer)."""
    def run(lib):
        x = lib.tensor([[0.5, -1.0], [2.0, 0.25]], dtype=lib.float64, requires_grad=True)
        base = x * 2
        view = base.unsqueeze(0)
        view.retain_grad()
        if name == "base_copy":
            base.copy_(x.exp())
        else:
            base.view(-1)[0:2] = x[0] * 3
        (view * view).sum().backward()
        return view.grad, x.grad

    for ours, theirs in zip(run(hookgrad), run(torch)):
        assert_close(ours, theirs)
