"""What node post-hooks see when only part of the graph runs, and a stale view's
requires_grad, against torch (cases the differential fuzzer found)."""
import pytest
import torch

import hookgrad

JOINS = {
    "cat": lambda lib, a, b: lib.cat([a, b]),
    "stack": lambda lib, a, b: lib.stack([a, b]),
    "block_diag": lambda lib, a, b: lib.block_diag(a, b),
    "einsum": lambda lib, a, b: lib.einsum("ij,ij->ij", a, b),
    "mul": lambda lib, a, b: a * b,
    "addcmul": lambda lib, a, b: lib.addcmul(a, a, b),
}


def _post_hook_sees(lib, make):
    x = lib.ones(2, 2, requires_grad=True)
    y = lib.ones(2, 2, requires_grad=True)
    a, b = x * 2, y * 3
    out = make(lib, a, b)
    seen = []
    out.grad_fn.register_hook(lambda grad_inputs, grad_outputs: seen.append(
        [g is None for g in grad_inputs]))
    (grad,) = lib.autograd.grad(out.sum(), [a])
    return seen, grad.tolist()


@pytest.mark.parametrize("name", sorted(JOINS))
def test_post_hook_of_a_partly_wanted_node(name):
    """A node whose tensor inputs are one list computes them all once any is wanted."""
    assert _post_hook_sees(hookgrad, JOINS[name]) == _post_hook_sees(torch, JOINS[name])


def _copy_slices_hook(lib, written: bool):
    x = lib.tensor([-0.697, -0.103], dtype=lib.float64, requires_grad=True)
    base = x / (x.abs() + 1)
    if written:
        base[0:1] = 0.0
    joined = lib.cat([base, base * 2], 0)
    seen = []
    base.grad_fn.register_hook(lambda grad_inputs, grad_outputs: seen.append(
        [None if g is None else g.tolist() for g in grad_inputs]))
    joined.sum().backward(inputs=[base])
    return base.grad_fn.name(), seen, base.grad.tolist()


@pytest.mark.parametrize("written", [False, True])
def test_copy_slices_run_only_to_capture(written):
    assert _copy_slices_hook(hookgrad, written) == _copy_slices_hook(torch, written)


@pytest.mark.parametrize("op", ["mul_tensor", "mul_number", "add_tensor", "sigmoid_",
                                "copy_"])
def test_in_place_on_a_view_whose_base_gained_a_history(op):
    """requires_grad does not rebuild the view's history: the in-place op meets none."""
    outcomes = []
    for lib in (torch, hookgrad):
        x = lib.tensor(-0.376, dtype=lib.float64, requires_grad=True)
        other = lib.tensor([2.0], dtype=lib.float64)
        base = other.norm()
        view = base.flatten()
        base.copy_(x)
        assert view.requires_grad
        try:
            {"mul_tensor": lambda: view.mul_(other), "mul_number": lambda: view.mul_(2.0),
             "add_tensor": lambda: view.add_(other), "sigmoid_": lambda: view.sigmoid_(),
             "copy_": lambda: view.copy_(other)}[op]()
            outcomes.append("ok")
        except RuntimeError as error:
            outcomes.append(str(error))
    assert outcomes[0] == outcomes[1]
