"""Silent wrong answers found by differential testing, each run under torch and hookgrad on the
same program and compared (values, gradients, ``requires_grad`` and errors)."""
import numpy as np
import pytest
import torch

import hookgrad


def _run(fn, lib):
    """``fn(lib)``'s result as NumPy values, or the error's type and first words."""
    try:
        out = fn(lib)
    except Exception as error:  # noqa: BLE001 - compared with torch's error
        return ("error", type(error).__name__, str(error).split("\n")[0][:60])
    return _plain(out)


def _plain(out):
    if isinstance(out, (tuple, list)):
        return tuple(_plain(o) for o in out)
    if hasattr(out, "detach") and hasattr(out, "requires_grad"):
        return ("tensor", out.requires_grad, str(out.dtype).split(".")[-1],
                out.detach().numpy().round(10).tolist())
    return out


def check(fn):
    expected, got = _run(fn, torch), _run(fn, hookgrad)
    assert got == expected, f"torch: {expected}\nhookgrad: {got}"
    return expected


# -- second derivatives through detach(): saved tensors belong to the tensor, not its array ----
def _detach_mul(lib):
    x = lib.tensor([1., 2., 3.], dtype=lib.float64, requires_grad=True)
    (g,) = lib.autograd.grad((x * x.detach()).sum(), x, create_graph=True)
    return g, lib.autograd.grad(g.sum(), x)


def _detach_bmm(lib):
    v = lib.arange(8., dtype=lib.float64).reshape(2, 2, 2).requires_grad_()
    (g,) = lib.autograd.grad(lib.bmm(v, v.detach()).pow(2).sum(), v, create_graph=True)
    return g, lib.autograd.grad(g.sum(), v)


def _detach_first(lib):
    x = lib.tensor([0.5, -2., 3.], dtype=lib.float64, requires_grad=True)
    (g,) = lib.autograd.grad((x.detach() * x).pow(2).sum(), x, create_graph=True)
    return g, lib.autograd.grad(g.sum(), x)


def _detach_inplace(lib):
    x = lib.tensor([0.5, -2., 3.], dtype=lib.float64, requires_grad=True)
    h = x * 1
    h.mul_(h.detach())
    (g,) = lib.autograd.grad(h.pow(2).sum(), x, create_graph=True)
    return g, lib.autograd.grad(g.sum(), x)


@pytest.mark.parametrize("program", [_detach_mul, _detach_bmm, _detach_first, _detach_inplace])
def test_double_backward_through_detach(program):
    check(program)


# -- once_differentiable: a second differentiation raises -----------------------------------
def _sq(lib):
    class Sq(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @lib.autograd.function.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2 * x

    return Sq


def _once_twice(lib):
    x = lib.tensor([1., 2.], dtype=lib.float64, requires_grad=True)
    w = lib.tensor([3., 4.], dtype=lib.float64, requires_grad=True)
    (g,) = lib.autograd.grad((_sq(lib).apply(x) * w).sum(), x, create_graph=True)
    ((g * g).sum() + (w * w).sum()).backward()
    return w.grad


def _once_flags(lib):
    x = lib.tensor([1., 2.], dtype=lib.float64, requires_grad=True)
    w = lib.tensor([3., 4.], dtype=lib.float64, requires_grad=True)
    (g,) = lib.autograd.grad((_sq(lib).apply(x) * w).sum(), x, create_graph=True)
    (h,) = lib.autograd.grad(_sq(lib).apply(x).sum(), x, create_graph=True)
    return g, h


def _once_first_order(lib):
    x = lib.tensor([1., 2.], dtype=lib.float64, requires_grad=True)
    (_sq(lib).apply(x) * 3).sum().backward()
    return x.grad


@pytest.mark.parametrize("program", [_once_twice, _once_flags, _once_first_order])
def test_once_differentiable(program):
    check(program)


def test_once_differentiable_raises():
    assert check(_once_twice)[0] == "error"


# -- custom Functions returning non-tensors: passed through, None as their gradient ---------
def _mixed(lib, outputs, materialize=True):
    class Mixed(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(materialize)
            ctx.save_for_backward(x)
            return outputs(x)

        @staticmethod
        def backward(ctx, *grads):
            (x,) = ctx.saved_tensors
            seen.append(tuple(None if g is None else g.detach().numpy().tolist()
                              for g in grads))
            total = None
            for g in grads:
                if g is not None:
                    total = g * x if total is None else total + g * x
            return total

    seen = []
    return Mixed, seen


@pytest.mark.parametrize("materialize", [True, False])
@pytest.mark.parametrize("use", ["first", "last", "both", "double"])
@pytest.mark.parametrize("shape", ["tensor_number", "number_between", "number_first"])
def test_non_tensor_outputs(shape, use, materialize):
    makers = {"tensor_number": lambda x: (x * 2, 7),
              "number_between": lambda x: (x * 2, "label", x * 3),
              "number_first": lambda x: (None, x * 2, 1.5, x * 3)}

    def program(lib):
        fn, seen = _mixed(lib, makers[shape], materialize)
        x = lib.tensor([1., 2.], dtype=lib.float64, requires_grad=True)
        out = fn.apply(x)
        tensors = [o for o in out if isinstance(o, lib.Tensor)]
        plain = [o for o in out if not isinstance(o, lib.Tensor)]
        if use == "first":
            loss = tensors[0].sum()
        elif use == "last":
            loss = tensors[-1].pow(2).sum()
        else:
            loss = sum((t * (i + 1)).sum() for i, t in enumerate(tensors))
        if use == "double":
            (g,) = lib.autograd.grad(loss, x, create_graph=True)
            return plain, g, lib.autograd.grad(g.sum(), x), seen
        loss.backward()
        return plain, x.grad, [t.requires_grad for t in tensors], seen

    check(program)


# -- std/var over some dims: constant rows have exactly zero spread, so std's grad is 0 -----
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", ["std", "var", "std_mean", "var_mean"])
@pytest.mark.parametrize("dim", [0, 1, -1, (0, 2)])
@pytest.mark.parametrize("correction", [0, 1])
def test_spread_of_constant_rows(dtype, op, dim, correction):
    rng = np.random.default_rng(7)
    data = np.full((3, 5, 7), 0.1, dtype)
    data[0, 0] = 1822.0113633283233  # constant along every reduced dim in some rows, not all
    data[1] = rng.standard_normal((5, 7))

    def program(lib):
        x = lib.tensor(data, requires_grad=True)
        out = getattr(lib, op)(x, dim=dim, correction=correction)
        first = out[0] if isinstance(out, tuple) else out
        (g,) = lib.autograd.grad(first.sum(), x, create_graph=True)
        zeros = (first == 0).numpy().tolist()
        return zeros, np.round(g.detach().numpy(), 4).tolist(), g.requires_grad

    check(program)


# -- an incoming gradient is cast to the dtype of the node input it flows into ---------------
ROOTS = {"leaf": lambda x: x, "matmul": lambda x: x @ x, "sum": lambda x: x.sum(0),
         "exp": lambda x: x.exp(), "index": lambda x: x[0], "t": lambda x: x.t(),
         "view": lambda x: x.view(4), "relu": lambda x: x.relu(), "to_float": lambda x: x.float()}


@pytest.mark.parametrize("grad_dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("root", sorted(ROOTS))
@pytest.mark.parametrize("entry", ["grad", "backward", "create_graph"])
def test_grad_outputs_cast_to_output_dtype(root, grad_dtype, entry):
    def program(lib):
        x = lib.tensor([[1., -2.], [3., 4.]], dtype=lib.float64, requires_grad=True)
        y = ROOTS[root](x)
        v = lib.ones(y.shape, dtype=getattr(lib, grad_dtype)) * 2
        if entry == "backward":
            y.backward(v)
            return x.grad
        if entry == "grad":
            return lib.autograd.grad(y, x, grad_outputs=v)
        v = v.double().requires_grad_() if grad_dtype != "float32" else v.requires_grad_()
        (g,) = lib.autograd.grad(y, x, grad_outputs=v, create_graph=True)
        return g, lib.autograd.grad(g.sum(), v, allow_unused=True)

    check(program)


# -- gradients that torch computes from a saved tensor depend on it under create_graph -------
MASKED = {
    "relu": lambda lib, x: lib.relu(x),
    "relu_": lambda lib, x: (x * 1).relu_(),
    "relu6": lambda lib, x: lib.nn.functional.relu6(x * 4),
    "hardtanh": lambda lib, x: lib.nn.functional.hardtanh(x),
    "leaky_relu": lambda lib, x: lib.nn.functional.leaky_relu(x, 0.2),
    "leaky_relu_": lambda lib, x: lib.nn.functional.leaky_relu(x * 1, 0.2, inplace=True),
    "hardsigmoid": lambda lib, x: lib.nn.functional.hardsigmoid(x * 4),
    "hardshrink": lambda lib, x: lib.nn.functional.hardshrink(x, 0.5),
    "softshrink": lambda lib, x: lib.nn.functional.softshrink(x, 0.5),
    "max_pool1d": lambda lib, x: lib.nn.functional.max_pool1d(x.reshape(1, 2, 3), 2, 1),
    "max_pool2d": lambda lib, x: lib.nn.functional.max_pool2d(x.reshape(1, 2, 3), 2, 1),
}


@pytest.mark.parametrize("name", sorted(MASKED))
@pytest.mark.parametrize("seed_grad", ["plain", "requires_grad"])
def test_masked_gradient_depends_on_saved(name, seed_grad):
    def program(lib):
        x = lib.tensor([-1.5, -0.3, 0.25, 0.2, 0.7, 2.0], dtype=lib.float64, requires_grad=True)
        y = MASKED[name](lib, x)
        v = lib.full(y.shape, 3.0, dtype=lib.float64, requires_grad=seed_grad != "plain")
        (g,) = lib.autograd.grad(y, x, v, create_graph=True)
        if not g.requires_grad or name == "hardsigmoid":  # torch has no hardsigmoid 2nd order
            return g.requires_grad, g.detach()
        wrt = (x, v) if seed_grad != "plain" else (x,)
        return g, lib.autograd.grad((g * g).sum(), wrt, allow_unused=True)

    check(program)
