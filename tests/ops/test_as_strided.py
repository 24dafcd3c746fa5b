"""``as_strided`` and the histories views get after in-place changes, against torch."""
import numpy as np
import pytest
import torch

import hookgrad as hg

GEOMETRIES = [  # (input maker, size, stride, storage_offset)
    (lambda lib, dt: lib.arange(12.0, dtype=dt), (3, 4), (4, 1), None),
    (lambda lib, dt: lib.arange(12.0, dtype=dt), (3, 2), (1, 1), 0),  # overlapping windows
    (lambda lib, dt: lib.arange(12.0, dtype=dt), (2, 2), (1, 4), 3),
    (lambda lib, dt: lib.arange(12.0, dtype=dt)[2:].view(2, 5), (2, 2), (1, 1), None),
    (lambda lib, dt: lib.arange(12.0, dtype=dt).view(3, 4).t(), (2, 3), (3, 1), 0),
    (lambda lib, dt: lib.arange(12.0, dtype=dt), (0, 3), (1, 1), 2),
    (lambda lib, dt: lib.arange(12.0, dtype=dt), (4,), (0,), 5),  # one element read 4 times
]


@pytest.mark.parametrize("case", range(len(GEOMETRIES)))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_values_and_strides(case, dtype):
    make, size, stride, offset = GEOMETRIES[case]
    theirs = torch.as_strided(make(torch, getattr(torch, dtype)), size, stride, offset)
    ours = hg.as_strided(make(hg, getattr(hg, dtype)), size, stride, offset)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert ours.stride() == theirs.stride()
    assert ours.storage_offset() == theirs.storage_offset()
    assert ours.is_contiguous() == theirs.is_contiguous()


@pytest.mark.parametrize("case", range(len(GEOMETRIES)))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_gradients(case, dtype):
    make, size, stride, offset = GEOMETRIES[case]
    weight = torch.randn(size, dtype=getattr(torch, dtype))
    grads = []
    for lib in (torch, hg):
        leaf = lib.arange(12.0, dtype=getattr(lib, dtype)).requires_grad_()
        # the geometry's input, made from a fresh (row-major) intermediate of the leaf
        source = make(lib, getattr(lib, dtype))
        fresh = (leaf * 1).as_strided(source.shape, source.stride(), source.storage_offset())
        out = fresh.as_strided(size, stride, offset)
        assert out.grad_fn.name() == "AsStridedBackward0"
        (out * lib.from_numpy(weight.numpy())).sum().backward()
        grads.append(leaf.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6 if dtype == "float32" else 0)


def test_gradient_into_an_expanded_input_is_shared():
    for lib in (torch, hg):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        x.expand(2, 3).as_strided((2,), (1,)).sum().backward()
        if lib is torch:
            expected = x.grad.numpy()
        else:
            np.testing.assert_array_equal(x.grad.numpy(), expected)


def test_double_backward():
    def run(lib):
        x = lib.tensor(np.linspace(-1, 1, 6), requires_grad=True)
        y = (x * x).as_strided((3, 2), (1, 1), 1)
        (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        (h,) = lib.autograd.grad(g.sum(), x)
        return g.detach().numpy(), h.numpy()
    for ours, theirs in zip(run(hg), run(torch)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


@pytest.mark.parametrize("args", [((3, 5), (4, 1)), ((2, 2), (-1, 1)), ((2,), (1,), 11),
                                  ((2, 2), (1, 1), -1), ((2, 2), (1,))])
def test_errors(args):
    with pytest.raises(RuntimeError) as theirs:
        torch.arange(12.0).as_strided(*args)
    with pytest.raises(RuntimeError) as ours:
        hg.arange(12.0).as_strided(*args)
    assert str(ours.value) == str(theirs.value)


VIEWS = {
    "select": lambda a: a[0], "t": lambda a: a.t(), "view": lambda a: a.view(-1),
    "slice": lambda a: a[:, 1:], "diagonal": lambda a: a.diagonal(),
    "unsqueeze": lambda a: a.unsqueeze(0), "view of a view": lambda a: a[0:1].squeeze(0),
    "permute": lambda a: a.permute(1, 0), "unflatten": lambda a: a.unflatten(1, (3, 1)),
    "step": lambda a: a[::2, ::2],
}


def _history(lib, make):
    leaf = lib.arange(9.0, dtype=lib.float64).view(3, 3).requires_grad_()
    base = leaf.clone()
    view = make(base)
    before = view.grad_fn.name()
    view.mul_(2)
    after = view.grad_fn.name()
    parents = [None if node is None else node.name() for node, _ in view.grad_fn.next_functions]
    again = make(base).grad_fn.name()
    weight = lib.arange(float(view.numel()), dtype=lib.float64).view(view.shape)
    ((view * weight).sum() + (base * base).sum()).backward()
    return (before, after, parents, again), leaf.grad.numpy()


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_view_history_after_in_place(name):
    ours, ours_grad = _history(hg, VIEWS[name])
    theirs, theirs_grad = _history(torch, VIEWS[name])
    assert ours == theirs
    np.testing.assert_array_equal(ours_grad, theirs_grad)


def test_view_made_before_its_base_needed_grad():
    def run(lib):
        x = lib.ones(2, 3, dtype=lib.float64)
        w = lib.arange(6.0, dtype=lib.float64).view(2, 3).requires_grad_()
        v = x.reshape(-1)
        x.mul_(w)
        names = (v.grad_fn.name(), x.grad_fn.name())
        v.mul_(2)
        (x * x).sum().backward()
        return names + (v.grad_fn.name(),), w.grad.numpy()
    (ours, ours_grad), (theirs, theirs_grad) = run(hg), run(torch)
    assert ours == theirs
    np.testing.assert_array_equal(ours_grad, theirs_grad)


@pytest.mark.parametrize("ask_first", [False, True])
@pytest.mark.parametrize("make", [lambda x: x.transpose(0, 2), lambda x: x.reshape(-1),
                                  lambda x: x[0]])
def test_stale_view_is_a_leaf_until_its_history_is_asked_for(ask_first, make):
    """torch rebuilds such a view's history only when asked; before that, an in-place op on it
    meets a tensor that requires grad and has no history, and is refused as on a leaf."""
    outcomes = []
    for lib in (torch, hg):
        x = lib.ones(1, 4, 3, dtype=lib.float64)
        w = lib.ones(1, dtype=lib.float64, requires_grad=True)
        view = make(x)
        x.mul_(w)
        if ask_first:
            view.grad_fn
        try:
            view.sigmoid_()
            outcomes.append(("ok", view.grad_fn.name()))
        except RuntimeError as error:
            outcomes.append(("error", str(error)))
    assert outcomes[0] == outcomes[1]
