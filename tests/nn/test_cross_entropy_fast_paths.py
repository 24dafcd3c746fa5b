"""cross_entropy's pieces on their fast paths, against torch: softmax and log_softmax backward
on arrays (row-major float gradients, no graph of them wanted) and the Tensor formulas
otherwise; nll_loss's class lookups when every target is a class (the common case) and when
some are ignored or out of range; grad_fn names and double backward unchanged."""
import numpy as np
import pytest
import torch

import hookgrad

from conftest import assert_close, assert_same_error, compare, double_backward, graph_nodes


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,dim", [((6, 10), 1), ((6, 10), 0), ((2, 3, 4), 1), ((7,), 0),
                                       ((), 0)])
def test_softmax_backward_matches_torch(name, dtype, shape, dim):
    x = np.random.default_rng(0).standard_normal(shape).astype(dtype) * 3
    compare(lambda lib, x: getattr(lib, name)(x, dim) * 1.5, x)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_backward_of_a_transposed_or_half_gradient(name):
    """Gradients that are not row-major, or in half precision, take the Tensor formulas."""
    x = np.random.default_rng(1).standard_normal((5, 4))
    compare(lambda lib, x: getattr(lib, name)(x, 1).t() * 2, x)
    results = []
    for lib in (torch, hookgrad):
        leaf = lib.tensor(x, dtype=lib.float16, requires_grad=True)
        (getattr(lib, name)(leaf, 1).float() * lib.tensor(x).float()).sum().backward()
        results.append(leaf.grad)
    assert_close(results[1], results[0], rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_double_backward_and_hooks(name):
    x = np.random.default_rng(2).standard_normal((4, 5))
    double_backward(lambda lib, x: getattr(lib, name)(x, 1) ** 2, x)
    seen = []
    for lib in (torch, hookgrad):
        leaf = lib.tensor(x, requires_grad=True)
        out = getattr(lib, name)(leaf, 1)
        grads = []
        out.register_hook(lambda g: grads.append(g.clone()))
        leaf.register_hook(lambda g: grads.append(g.clone()))
        (out * lib.tensor(x)).sum().backward()
        seen.append(grads)
    for h, t in zip(seen[1], seen[0]):
        assert_close(h, t)


def _nll_case(rng, n=12, classes=5, ignore=None):
    target = rng.integers(0, classes, n)
    if ignore is not None:
        target[::3] = ignore
    return rng.standard_normal((n, classes)), target


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore_index", [-100, 2, 7])
def test_cross_entropy_matches_torch(reduction, weighted, ignore_index):
    rng = np.random.default_rng(3)
    logits, target = _nll_case(rng, ignore=ignore_index if ignore_index != 7 else None)
    weight = rng.uniform(0.5, 2, 5)
    for dtype in (np.float64, np.float32):
        def fn(lib, x):
            return lib.nn.functional.cross_entropy(
                x, lib.tensor(target), ignore_index=ignore_index, reduction=reduction,
                weight=lib.tensor(weight.astype(dtype)) if weighted else None)

        compare(fn, logits.astype(dtype))


@pytest.mark.parametrize("target_dtype", [np.int64, np.uint8])
def test_nll_loss_targets_of_every_kind(target_dtype):
    rng = np.random.default_rng(4)
    logp, target = _nll_case(rng)
    compare(lambda lib, x: lib.nn.functional.nll_loss(
        x.log_softmax(1), lib.tensor(target.astype(target_dtype))), logp)
    compare(lambda lib, x: lib.nn.functional.nll_loss(x, lib.tensor(int(target[0]))),
            logp[0])
    compare(lambda lib, x: lib.nn.functional.nll_loss(x, lib.tensor(target[:6].reshape(2, 3))),
            rng.standard_normal((2, 5, 3)))


@pytest.mark.parametrize("bad", [-1, 5, 9])
@pytest.mark.parametrize("ignore_index", [-100, 0])
def test_an_out_of_range_target_is_refused_as_torch(bad, ignore_index):
    logits, target = _nll_case(np.random.default_rng(5))
    target[4] = bad
    assert_same_error(lambda lib: lib.nn.functional.cross_entropy(
        lib.tensor(logits), lib.tensor(target), ignore_index=ignore_index))


def test_every_target_ignored_gives_torch_nan():
    logits = np.random.default_rng(6).standard_normal((3, 4))
    compare(lambda lib, x: lib.nn.functional.cross_entropy(x, lib.tensor([1, 1, 1]),
                                                           ignore_index=1), logits)


def test_graph_and_double_backward_unchanged():
    logits, target = _nll_case(np.random.default_rng(7))
    graphs = []
    for lib in (torch, hookgrad):
        x = lib.tensor(logits, requires_grad=True)
        loss = lib.nn.functional.cross_entropy(x, lib.tensor(target))
        graphs.append((loss.grad_fn.name(), loss.grad_fn.next_functions[0][0].name(),
                       graph_nodes(loss)))
    assert graphs[1] == graphs[0]
    double_backward(lambda lib, x: lib.nn.functional.cross_entropy(x, lib.tensor(target)),
                    logits)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape", [(7, 5), (3, 5, 2, 4), (5,)])
def test_unweighted_nll_loss_is_bit_exact_with_torch(reduction, shape):
    """No class weights and every target a class: the input's gradient ``-(grad / N)`` carries
    torch's float32 bits exactly (an upstream factor that is not a power of two makes a
    rounding difference visible); the loss agrees up to the order of its sum."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal(shape).astype(np.float32)
    target_shape = () if len(shape) == 1 else (shape[0],) + shape[2:]
    target = rng.integers(0, 5, target_shape)
    results = []
    for lib in (torch, hookgrad):
        leaf = lib.tensor(x, requires_grad=True)
        loss = lib.nn.functional.nll_loss(leaf, lib.tensor(target), reduction=reduction)
        (loss * 0.7).sum().backward()
        results.append((loss.detach().numpy(), leaf.grad.numpy(), loss.grad_fn.name()))
    (t_loss, t_grad, t_name), (h_loss, h_grad, h_name) = results
    assert h_name == t_name
    np.testing.assert_allclose(h_loss, t_loss, rtol=1e-6)
    np.testing.assert_array_equal(h_grad, t_grad)
    assert h_grad.dtype == t_grad.dtype
