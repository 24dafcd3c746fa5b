"""hookgrad.func against torch.func: the same functions, inputs and argnums give the same
results (float64), and the transforms compose as torch's do."""
import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close

X = np.array([0.3, -1.2, 2.0])
Y = np.array([[1.5, 0.5, -0.25], [-0.7, 0.25, 1.0]])


def scalar(lib, x, y):
    return (x.sin().sum() * (y @ x)).sum() + (y.exp() ** 2).mean()


def vector(lib, x, y):
    return (y @ x).tanh() * x[:2]


def _both(make):
    return make(hookgrad), make(torch)


def _close_tree(ours, theirs, tol=1e-12):
    if isinstance(theirs, (tuple, list)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _close_tree(a, b, tol)
    else:
        assert_close(ours, theirs, rtol=tol, atol=tol)
        assert ours.requires_grad == theirs.requires_grad


@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (1,), -1])
def test_grad_and_grad_and_value(argnums):
    def run(lib):
        x, y = lib.tensor(X), lib.tensor(Y)
        fn = lambda a, b: scalar(lib, a, b)  # noqa: E731
        return (lib.func.grad(fn, argnums)(x, y),
                lib.func.grad_and_value(fn, argnums)(x, y))

    ours, theirs = _both(run)
    _close_tree(ours, theirs)


def test_grad_has_aux_and_nesting():
    def run(lib):
        x = lib.tensor(X)

        def fn(a):
            return (a ** 3).sum(), a.cos()

        first = lib.func.grad(fn, has_aux=True)(x)
        second = lib.func.grad(lambda a: lib.func.grad(lambda b: (b ** 4 * b.sin()).sum())(a)
                               .sum())(x)
        return first, second

    ours, theirs = _both(run)
    _close_tree(ours, theirs)


def test_grad_of_input_requiring_grad_keeps_the_outer_graph():
    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        g = lib.func.grad(lambda a: (a ** 3).sum())(x)
        g.sum().backward()
        return g, x.grad

    ours, theirs = _both(run)
    _close_tree(ours, theirs)


def test_grad_errors_like_torch():
    for lib in (hookgrad, torch):
        with pytest.raises(RuntimeError, match="Expected f\\(\\*args\\) to return a scalar"):
            lib.func.grad(lambda a: a * 2)(lib.tensor(X))
        with pytest.raises(RuntimeError, match="Got argnum=2, but only 1 positional inputs"):
            lib.func.grad(lambda a: a.sum(), argnums=2)(lib.tensor(X))


def test_vjp_and_jvp():
    def run(lib):
        x, y = lib.tensor(X), lib.tensor(Y)
        out, fn = lib.func.vjp(lambda a, b: vector(lib, a, b), x, y)
        pulled = fn(lib.tensor([0.5, -2.0], dtype=lib.float64))
        pushed = lib.func.jvp(lambda a, b: vector(lib, a, b), (x, y),
                              (lib.tensor(X * 0.5), lib.tensor(Y * 0.1)))
        return out, pulled, pushed

    ours, theirs = _both(run)
    _close_tree(ours, theirs)


@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
@pytest.mark.parametrize("argnums", [0, (0, 1)])
def test_jacobians(transform, argnums):
    def run(lib):
        x, y = lib.tensor(X), lib.tensor(Y)
        return getattr(lib.func, transform)(lambda a, b: vector(lib, a, b), argnums)(x, y)

    ours, theirs = _both(run)
    _close_tree(ours, theirs)


def test_hessian_and_jacobian_of_tuple_outputs():
    def run(lib):
        x, y = lib.tensor(X), lib.tensor(Y)
        hess = lib.func.hessian(lambda a: scalar(lib, a, y))(x)
        both = lib.func.jacrev(lambda a: (a.exp(), (a * a).sum()))(x)
        return hess, both

    ours, theirs = _both(run)
    _close_tree(ours, theirs)


def test_functional_call_swaps_weights_and_restores_them():
    rng = np.random.default_rng(0)
    w, b, inputs = rng.standard_normal((2, 3)), rng.standard_normal(2), rng.standard_normal((4, 3))

    def run(lib):
        model = lib.nn.Linear(3, 2).double()
        before = model.weight.detach().clone()
        params = {"weight": lib.tensor(w, requires_grad=True), "bias": lib.tensor(b)}
        out = lib.func.functional_call(model, params, (lib.tensor(inputs),))
        out.pow(2).sum().backward()
        assert lib.equal(model.weight.detach(), before)
        gradient = lib.func.grad(lambda p: lib.func.functional_call(
            model, p, lib.tensor(inputs)).sum())({"weight": lib.tensor(w), "bias": lib.tensor(b)}
                                                 )["weight"] if lib is torch else None
        return out, params["weight"].grad, gradient

    (out_h, grad_h, _), (out_t, grad_t, _) = _both(run)
    _close_tree((out_h, grad_h), (out_t, grad_t))


def test_functional_call_strict_reports_missing_keys():
    for lib in (hookgrad, torch):
        model = lib.nn.Linear(3, 2)
        with pytest.raises(RuntimeError, match="Missing key"):
            lib.func.functional_call(model, {"weight": lib.zeros(2, 3)}, (lib.zeros(1, 3),),
                                     strict=True)


@pytest.mark.parametrize("in_dims", [0, (0, None), (1, 0)])
def test_vmap_matches_torch(in_dims):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((4, 4)), rng.standard_normal((4, 3))

    def run(lib):
        fn = lambda u, v: (u.sum() * v, u.exp())  # noqa: E731
        return lib.func.vmap(fn, in_dims=in_dims)(lib.tensor(a), lib.tensor(b if in_dims != 0
                                                                             else a[:, :3]))

    ours, theirs = _both(run)
    _close_tree(ours, theirs)


def test_vmap_of_grad_gives_per_example_gradients():
    rng = np.random.default_rng(2)
    batch = rng.standard_normal((5, 3))

    def run(lib):
        weights = lib.tensor(X)
        per_example = lib.func.vmap(lib.func.grad(lambda w, row: (w * row).sin().sum()),
                                    in_dims=(None, 0))
        return per_example(weights, lib.tensor(batch))

    ours, theirs = _both(run)
    _close_tree(ours, theirs)


def test_vmap_errors_like_torch():
    for lib in (hookgrad, torch):
        with pytest.raises(ValueError, match="same size in the mapped dimension"):
            lib.func.vmap(lambda u, v: u * v)(lib.ones(3), lib.ones(4))
        with pytest.raises(ValueError, match="expected in_dim to satisfy"):
            lib.func.vmap(lambda u: u.sum(), in_dims=1)(lib.ones(3))
