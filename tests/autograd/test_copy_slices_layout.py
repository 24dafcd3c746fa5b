"""In-place through a view, then a gradient that reaches the base in another layout."""
import pytest
import torch

import hookgrad
from tests.conftest import assert_close

# each: an in-place op through a view of h = x * 1, then a loss whose gradient for h is not
# laid out as h (a transpose, a permute, an expand)
PROGRAMS = {
    "view_then_transpose": lambda lib, h: (h.view(6).mul_(2.0), (h.t() @ lib.ones(2, 2)).sum()),
    "slice_then_transpose": lambda lib, h: (h[:, 1:].add_(1.0), (h.t() ** 2).sum()),
    "flatten_then_permute": lambda lib, h: (h.view(-1)[::2].mul_(3.0),
                                            (h.t().contiguous() * lib.arange(6.).view(3, 2)).sum()),
    "row_then_expand": lambda lib, h: (h[0].mul_(-1.0), h.sum(0).sum()),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_inplace_on_view_then_non_contiguous_gradient(name):
    def run(lib):
        x = lib.arange(1., 7.).reshape(2, 3).requires_grad_()
        _, loss = PROGRAMS[name](lib, x * 1)
        loss.backward()
        return x.grad

    assert_close(run(hookgrad), run(torch))


def test_issue_example_second_order():
    def run(lib):
        x = lib.arange(1., 7.).reshape(2, 3).requires_grad_()
        h = x * x
        h.view(6).mul_(2.0)
        (grad,) = lib.autograd.grad((h.t() @ lib.ones(2, 2)).sum(), x, create_graph=True)
        (grad * grad).sum().backward()
        return grad.detach(), x.grad

    ours, theirs = run(hookgrad), run(torch)
    assert_close(ours[0], theirs[0])
    assert_close(ours[1], theirs[1])


def _second_backward_through_copy_slices(lib):
    """A second backward through an in-place-on-view node whose graph was freed raises at
    that node, before any node further up (and its pre-hook) runs, as in torch."""
    calls = []
    x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
    base = x * 1
    head = (x * x).sum(0, keepdim=True)
    head.grad_fn.register_prehook(lambda grad_outputs: calls.append("pre") and None)
    base[0:1] = head
    (base * 2).sum().backward()
    try:
        (base * 3).sum().backward()
        error = None
    except RuntimeError as caught:
        error = "second time" in str(caught)
    return calls, error, x.grad.tolist()


def test_second_backward_through_freed_copy_slices_raises_like_torch():
    assert _second_backward_through_copy_slices(hookgrad) == \
        _second_backward_through_copy_slices(torch)


def _copy_slices_hook_on_a_base_needing_no_grad(lib):
    """The base of an in-place-on-view needed no gradient: the node's post-hook sees None for
    it, not zeros (found by the program fuzzer)."""
    seen = []
    x = lib.tensor(1.5, dtype=lib.float64, requires_grad=True)
    base = lib.zeros(2, 3, dtype=lib.float64)
    base[:, 0:2] = x
    base.grad_fn.register_hook(lambda grad_inputs, grad_outputs: seen.append(
        [None if g is None else g.tolist() for g in grad_inputs]))
    base[:, 1].sum().backward()
    return seen, x.grad.tolist()


def test_copy_slices_reports_no_gradient_for_a_base_that_needs_none():
    assert _copy_slices_hook_on_a_base_needing_no_grad(hookgrad) == \
        _copy_slices_hook_on_a_base_needing_no_grad(torch)
