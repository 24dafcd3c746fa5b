"""Elementwise backward formulas (relu, threshold) overwrite a gradient buffer the engine owns
alone instead of allocating another. Compared with torch: values, gradients, double backward,
and every way a user can see that buffer (tensor hooks, retain_grad, node pre- and post-hooks,
a gradient passed in, autograd.grad, a gradient shared by two edges) still sees torch's values.
Max pooling's backward (tiled path, no index array of the output's size) and the broadcast zero
given for the gradient of its indices are checked against torch too."""
import tracemalloc

import numpy as np
import pytest
import torch

import hookgrad
from conftest import traced_peak


def _activations(lib):
    return {
        "relu": lambda t: t.relu(),
        "relu_fn": lambda t: lib.nn.functional.relu(t),
        "threshold": lambda t: lib.nn.functional.threshold(t, 0.3, -2.0),
        "relu_module": lib.nn.ReLU(),
    }


NAMES = ("relu", "relu_fn", "threshold", "relu_module")


def _input(dtype=np.float64, shape=(5, 7), seed=0):
    values = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    values[0, :3] = 0.0  # at the kink: the gradient there is 0 in torch
    return values


def _run(lib, name, values, seen):
    """y = f(a * 2) * 3: the gradient reaching f is a fresh array of the multiply's backward."""
    x = lib.tensor(values, requires_grad=True)
    a = x * 2
    y = _activations(lib)[name](a)
    a.register_hook(lambda g: seen.setdefault("a", g))
    y.register_hook(lambda g: seen.setdefault("y", g))
    y.retain_grad()
    z = y * 3
    z.retain_grad()
    (z * z).sum().backward()
    return x, a, y, z


@pytest.mark.parametrize("name", NAMES)
def test_values_and_every_hook_match_torch(name):
    values = _input()
    ours, theirs = {}, {}
    x, _, y, z = _run(hookgrad, name, values, ours)
    tx, _, ty, tz = _run(torch, name, values, theirs)
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    # the gradient of the activation's output is what reached its formula: not overwritten
    np.testing.assert_array_equal(y.grad.numpy(), ty.grad.numpy())
    np.testing.assert_array_equal(ours["y"].numpy(), theirs["y"].numpy())
    np.testing.assert_array_equal(ours["a"].numpy(), theirs["a"].numpy())
    np.testing.assert_array_equal(z.grad.numpy(), tz.grad.numpy())


def _node_hooks(lib, name, values, log):
    x = lib.tensor(values, requires_grad=True)
    y = _activations(lib)[name](x * 2)
    y.grad_fn.register_prehook(lambda outs: log.append(("pre", outs[0].clone())))
    y.grad_fn.register_hook(
        lambda ins, outs: log.append(("post", ins[0].clone(), outs[0].clone())))
    (y * 3).sum().backward()
    return x.grad


@pytest.mark.parametrize("name", NAMES)
def test_node_hooks_see_the_incoming_gradient_unchanged(name):
    values = _input()
    ours, theirs = [], []
    grad = _node_hooks(hookgrad, name, values, ours)
    tgrad = _node_hooks(torch, name, values, theirs)
    np.testing.assert_array_equal(grad.numpy(), tgrad.numpy())
    assert [entry[0] for entry in ours] == [entry[0] for entry in theirs]
    for mine, reference in zip(ours, theirs):
        for a, b in zip(mine[1:], reference[1:]):
            np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("name", NAMES)
def test_a_hook_keeping_the_gradient_or_its_array_sees_torch_values(name):
    values = _input()

    def run(lib, keep):
        x = lib.tensor(values, requires_grad=True)
        y = _activations(lib)[name](x * 2)
        y.register_hook(keep)
        (y * 3).sum().backward()
        return x.grad

    kept_tensor, kept_array, reference = [], [], []
    grad = run(hookgrad, kept_tensor.append)
    run(hookgrad, lambda g: kept_array.append(g.numpy()))
    tgrad = run(torch, lambda g: reference.append(g.clone()))
    np.testing.assert_array_equal(grad.numpy(), tgrad.numpy())
    np.testing.assert_array_equal(kept_tensor[0].numpy(), reference[0].numpy())
    np.testing.assert_array_equal(kept_array[0], reference[0].numpy())


@pytest.mark.parametrize("name", NAMES)
def test_a_gradient_passed_in_is_never_overwritten(name):
    values = _input()
    grad_values = np.random.default_rng(1).standard_normal(values.shape)

    def run(lib):
        x = lib.tensor(values, requires_grad=True)
        y = _activations(lib)[name](x * 2)
        given = lib.tensor(grad_values)
        (first,) = lib.autograd.grad(y, x, given, retain_graph=True)
        y.backward(given)
        return given, first, x.grad

    for a, b in zip(run(hookgrad), run(torch)):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(run(hookgrad)[0].numpy(), grad_values)


@pytest.mark.parametrize("name", NAMES)
def test_a_gradient_shared_by_two_edges(name):
    values = _input()

    def run(lib):
        x = lib.tensor(values, requires_grad=True)
        a = x * 2
        f = _activations(lib)[name]
        out = (f(a) + f(a * -1.5)) * 3  # AddBackward hands one gradient to both edges
        (out * out).sum().backward()
        return x.grad

    np.testing.assert_array_equal(run(hookgrad).numpy(), run(torch).numpy())


@pytest.mark.parametrize("name", NAMES)
def test_double_backward_matches_torch(name):
    values = _input()

    def run(lib):
        x = lib.tensor(values, requires_grad=True)
        y = _activations(lib)[name](x * x)
        (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        return g.detach(), gg

    for a, b in zip(run(hookgrad), run(torch)):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12)
    assert hookgrad.autograd.gradcheck(
        lambda t: _activations(hookgrad)[name](t * 3), hookgrad.tensor(_input() + 0.05,
                                                                        requires_grad=True))


@pytest.mark.parametrize("name", NAMES)
def test_float32_values_match_torch(name):
    values = _input(np.float32, (4, 3, 8, 8))
    ours = _run(hookgrad, name, values, {})[0].grad
    theirs = _run(torch, name, values, {})[0].grad
    assert ours.dtype == hookgrad.float32
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, atol=1e-6)


def test_the_buffer_is_reused():
    """The backward of relu(x) * 3 makes the multiply's gradient and relu's boolean mask only
    (the leaf steals the buffer): another array of x's size would add 1.0 to the ratio."""
    size = 1 << 20
    x = hookgrad.randn(size, requires_grad=True)
    y = x.relu()
    loss = (y * 3).sum()
    peak = traced_peak(loss.backward)
    nbytes = size * 4
    assert peak < 1.6 * nbytes, peak / nbytes
    expected = (x.detach().numpy() > 0) * 3.0
    np.testing.assert_array_equal(x.grad.numpy(), expected.astype(np.float32))


def _pool(lib, values, kernel, stride, padding, return_indices):
    x = lib.tensor(values, requires_grad=True)
    h = x * 2
    out = lib.nn.functional.max_pool2d(h, kernel, stride, padding,
                                       return_indices=return_indices)
    if return_indices:
        out, indices = out
    else:
        indices = None
    (out * out).sum().backward()
    return x.grad, indices


@pytest.mark.parametrize("kernel,stride,padding", [(2, 2, 0), (3, 3, 0), (2, 1, 0), (3, 2, 1)])
@pytest.mark.parametrize("return_indices", [False, True])
@pytest.mark.parametrize("ties", [False, True])
def test_max_pool_backward_matches_torch(kernel, stride, padding, return_indices, ties):
    values = np.random.default_rng(2).standard_normal((3, 4, 9, 10))
    if ties:
        values = np.round(values)  # many equal maxima: the first one wins, as in torch
    grad, indices = _pool(hookgrad, values, kernel, stride, padding, return_indices)
    tgrad, tindices = _pool(torch, values, kernel, stride, padding, return_indices)
    np.testing.assert_array_equal(grad.numpy(), tgrad.numpy())
    if return_indices:
        np.testing.assert_array_equal(indices.numpy(), tindices.numpy())
        assert indices.dtype == hookgrad.int64


def test_max_pool_indices_gradient_is_a_zero_the_formula_never_writes():
    """The indices output gets no gradient: a built-in node gives its formula a read-only zero
    broadcast to the shape, and the double backward still matches torch."""
    values = np.random.default_rng(3).standard_normal((2, 3, 8, 8))

    def run(lib):
        x = lib.tensor(values, requires_grad=True)
        out, _ = lib.nn.functional.max_pool2d(x * x, 2, return_indices=True)
        (g,) = lib.autograd.grad((out * out).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        return g.detach(), gg

    for a, b in zip(run(hookgrad), run(torch)):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_large_owned_gradient_is_masked_a_block_at_a_time(name, dtype):
    # more elements than one block of the mask, and a length that is not a multiple of it; no
    # hook, so the formula owns the multiply's gradient and masks it in place
    values = _input(dtype, shape=(701, 1001), seed=3)
    grads = []
    for lib in (hookgrad, torch):
        x = lib.tensor(values, requires_grad=True)
        (_activations(lib)[name](x * 2) * 3).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(*grads)


def test_the_owned_buffer_is_masked_without_a_full_size_mask():
    size = 1 << 21
    x = hookgrad.randn(size, requires_grad=True)
    peaks = []
    for _ in range(3):  # the least of three: tracemalloc also counts other threads' arrays
        x.grad = None  # (a writer thread an earlier test left running, say)
        loss = (x.relu() * 3).sum()
        peaks.append(traced_peak(loss.backward))
    peak = min(peaks)
    # the multiply's gradient, which becomes x.grad, and a block of mask words per thread of
    # the intra-op pool (under 512 KiB each); a mask per element would add 2 MiB or more
    assert peak < size * 4 + hookgrad.get_num_threads() * (1 << 19)
    expected = (x.detach().numpy() > 0) * 3.0
    np.testing.assert_array_equal(x.grad.numpy(), expected.astype(np.float32))


def test_a_large_relu_backward_adds_no_full_size_mask():
    from hookgrad.ops import activation

    grad = np.random.default_rng(0).standard_normal(1 << 21).astype(np.float32)
    values = np.random.default_rng(1).standard_normal(1 << 21).astype(np.float32)
    expected = np.where(values <= 0, 0, grad)
    tracemalloc.start()
    try:
        activation.zero_where_at_most(grad, values, 0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(grad, expected)
    # a block of mask words per thread of the intra-op pool (each thread works on its own
    # block), never a mask per element (2 MiB of booleans, 8 MiB of words)
    threads = hookgrad.get_num_threads()
    assert peak < threads * (1 << 21) // 4
