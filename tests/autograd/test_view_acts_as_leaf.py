"""A view made before its base required grad, or under no_grad (or inference_mode), has no
history, yet torch reports ``requires_grad=True`` for it (a view asks its base): it is a leaf
whose gradient goes nowhere. What is computed from it is recorded (requires grad, has a node
whose edge for the view is empty); backward through it reaches nothing; a view of it gets a
history; an in-place op on it is refused. Every case runs in torch and hookgrad alike."""
import numpy as np
import pytest
import torch

import hookgrad

A = np.arange(1.0, 7.0).reshape(2, 3)


def _before(lib, view):
    base = lib.tensor(A.copy())
    made = view(base)
    base.requires_grad_()
    return base, made


def _no_grad(lib, view):
    base = lib.tensor(A.copy(), requires_grad=True)
    with lib.no_grad():
        made = view(base)
    return base, made


def _no_grad_of_history(lib, view):
    base = lib.tensor(A.copy(), requires_grad=True).clone()
    with lib.no_grad():
        made = view(base)
    return base, made


def _inference(lib, view):
    base = lib.tensor(A.copy(), requires_grad=True)
    with lib.inference_mode():
        made = view(base)
    return base, made


MAKERS = {"before": _before, "no_grad": _no_grad, "no_grad_of_history": _no_grad_of_history,
          "inference_mode": _inference}
VIEWS = {
    "slice": lambda t: t[:, 1:],
    "view": lambda t: t.view(6),
    "unsqueeze": lambda t: t.unsqueeze(0),
    "transpose": lambda t: t.t(),
    "split": lambda t: t.split(1)[0],
    "unbind": lambda t: t.unbind(1)[2],
    "chunk": lambda t: t.chunk(3, 1)[1],
}


def _state(tensor) -> tuple:
    node = tensor.grad_fn
    return (tensor.requires_grad, tensor.is_leaf, node.name() if node is not None else None)


def _both(fn):
    return [fn(lib) for lib in (hookgrad, torch)]


@pytest.mark.parametrize("maker", sorted(MAKERS))
@pytest.mark.parametrize("view", sorted(VIEWS))
def test_reports_requires_grad_without_history(maker, view):
    ours, theirs = _both(lambda lib: _state(MAKERS[maker](lib, VIEWS[view])[1]))
    assert ours == theirs


@pytest.mark.parametrize("maker", sorted(MAKERS))
@pytest.mark.parametrize("view", sorted(VIEWS))
def test_results_are_recorded_and_a_view_of_it_has_history(maker, view):
    def results(lib):
        _, made = MAKERS[maker](lib, VIEWS[view])
        product, sliced = made * 2, made[..., :1]
        return (_state(product), _state(sliced), repr(made).endswith("requires_grad=True)"),
                [edge is None for edge, _ in product.grad_fn.next_functions])
    ours, theirs = _both(results)
    assert ours == theirs


@pytest.mark.parametrize("maker", ["before", "no_grad"])
def test_backward_through_it_reaches_nothing(maker):
    def grads(lib):
        base, made = MAKERS[maker](lib, VIEWS["slice"])
        (made * 3).sum().backward()
        unused = lib.autograd.grad((made * 3).sum(), base, allow_unused=True)
        return base.grad, unused, made.grad
    assert _both(grads) == [(None, (None,), None)] * 2


@pytest.mark.parametrize("maker", ["before", "no_grad"])
def test_grad_names_the_unreached_input(maker):
    errors = []
    for lib in (hookgrad, torch):
        base, made = MAKERS[maker](lib, VIEWS["slice"])
        with pytest.raises(RuntimeError) as info:
            lib.autograd.grad((made * 3).sum(), base)
        errors.append(str(info.value))
    assert errors[0] == errors[1]


def test_its_own_requires_grad_gives_it_a_gradient():
    def grads(lib):
        base, made = _before(lib, VIEWS["slice"])
        made.requires_grad_(True)
        (made * 2).sum().backward()
        return base.grad, made.grad.numpy().tolist()
    assert _both(grads)[0] == _both(grads)[1]


def test_mixed_with_a_recorded_view_of_the_same_base():
    def grads(lib):
        base, made = _before(lib, VIEWS["slice"])
        (made * base[:, 1:]).sum().backward()
        return base.grad.numpy()
    ours, theirs = _both(grads)
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("maker", sorted(MAKERS))
@pytest.mark.parametrize("view", sorted(VIEWS))
def test_in_place_on_it_is_refused_as_torch_refuses(maker, view):
    errors = []
    for lib in (hookgrad, torch):
        _, made = MAKERS[maker](lib, VIEWS[view])
        with pytest.raises(RuntimeError) as info:
            made.mul_(2)
        errors.append(str(info.value).split(".")[0])
    assert errors[0] == errors[1]


def test_a_view_with_another_dtype_does_not_require_grad():
    assert _both(lambda lib: lib.tensor(A, requires_grad=True).view(lib.int64)
                 .requires_grad) == [False, False]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int16", "uint8"])
@pytest.mark.parametrize("history", [False, True])
def test_a_dtype_view_is_no_differentiable_view(dtype, history):
    """``view(dtype)`` shares memory and version, but has no base: it never requires grad and
    may be changed in place, leaving its source's history as it was."""
    def state(lib):
        source = lib.tensor(np.arange(1.0, 5.0, dtype=np.float32), requires_grad=True)
        if history:
            source = source.clone()
        viewed = source.view(getattr(lib, dtype))
        before = _state(viewed), viewed._base is None
        viewed.add_(1)
        return before, source._version, _state(source)
    ours, theirs = _both(state)
    assert ours == theirs
