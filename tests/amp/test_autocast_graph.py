"""hookgrad.autocast against torch.autocast on the CPU: the cast cache, the wrapper's cost when
unused, recorded graphs and double backward."""
import numpy as np
import pytest

import hookgrad
from test_autocast_mode import _caught, _same


# -- the cast cache ------------------------------------------------------------------------------
def _cast_node(out, position=1):
    return out.grad_fn.next_functions[position][0]


def test_cast_cache_reuses_a_leaf_cast_as_torch():
    def program(lib):
        x = lib.ones(4, 3)
        w = lib.full((3, 2), 0.5, requires_grad=True)
        plain = lib.ones(3, 2)
        seen = []
        with lib.autocast("cpu"):
            first = lib.mm(x, w)
            seen.append(_cast_node(lib.mm(x, w)) is _cast_node(first))
            seen.append(lib.mm(x, plain).grad_fn is None)
            with lib.autocast("cpu"):
                seen.append(_cast_node(lib.mm(x, w)) is _cast_node(first))
            with lib.autocast("cpu", enabled=False):
                pass
            seen.append(_cast_node(lib.mm(x, w)) is _cast_node(first))
            with lib.no_grad():
                lib.mm(x, w)
            seen.append(_cast_node(lib.mm(x, w)) is _cast_node(first))
            view = w[:, :1]
            seen.append(_cast_node(lib.mm(x, view)) is _cast_node(lib.mm(x, view)))
            lib.clear_autocast_cache()
            seen.append(_cast_node(lib.mm(x, w)) is _cast_node(first))
        with lib.autocast("cpu"):
            seen.append(_cast_node(lib.mm(x, w)) is _cast_node(first))
        with lib.autocast("cpu", cache_enabled=False):
            seen.append(_cast_node(lib.mm(x, w)) is _cast_node(lib.mm(x, w)))
        return seen
    _same(program)


def test_cast_cache_of_a_module_weight_matches_torch():
    def program(lib):
        layer = lib.nn.Linear(3, 2)
        x = lib.ones(4, 3)
        with lib.autocast("cpu"):
            first, second = layer(x), layer(x)
        bias_cast = _cast_node(first, 0) is _cast_node(second, 0)
        weight_cast = (_cast_node(first, 2).next_functions[0][0]
                       is _cast_node(second, 2).next_functions[0][0])
        (first.float().sum() + second.float().sum()).backward()
        return bias_cast, weight_cast, str(layer.weight.grad.dtype)
    _same(program)


def test_first_use_under_no_grad_is_not_kept():
    def program(lib):
        x = lib.ones(4, 3)
        w = lib.full((3, 2), 0.5, requires_grad=True)
        with lib.autocast("cpu"):
            with lib.no_grad():
                lib.mm(x, w)
            out = lib.mm(x, w)
        return out.requires_grad, _cast_node(out).name()
    _same(program)


def test_cache_is_keyed_by_the_tensor_alone():
    """A nested autocast of another dtype reuses the outer cast, so the product sees two
    dtypes and refuses, as torch's does."""
    def program(lib):
        x = lib.ones(4, 3)
        w = lib.full((3, 2), 0.5, requires_grad=True)
        with lib.autocast("cpu"):
            lib.mm(x, w)
            with lib.autocast("cpu", dtype=lib.float16):
                return type(_caught(lambda: lib.mm(x, w))[0]).__name__
    _same(program)


def test_only_listed_functions_carry_the_autocast_test():
    """What unused autocast costs: functions on no list keep the plain wrapper."""
    assert "threads_on" in hookgrad.mm.__code__.co_freevars
    assert "threads_on" in hookgrad.Tensor.mm.__code__.co_freevars
    for plain in (hookgrad.add, hookgrad.Tensor.__add__, hookgrad.nn.functional.relu):
        assert "threads_on" not in plain.__code__.co_freevars


# -- graphs --------------------------------------------------------------------------------------
@pytest.mark.parametrize("build", [
    lambda lib, x, w, b, low, f: lib.nn.functional.conv2d(x, w, b),
    lambda lib, x, w, b, low, f: lib.cat([low, f]),
    lambda lib, x, w, b, low, f: lib.matmul(x, x),
    lambda lib, x, w, b, low, f: lib.prod(low),
    lambda lib, x, w, b, low, f: lib.nn.functional.linear(f, f, f[0]),
], ids=["conv2d", "cat", "matmul", "prod", "linear"])
def test_recorded_graph_matches_torch(build):
    from conftest import graph_names

    def program(lib):
        x = lib.ones(1, 2, 4, 4, requires_grad=True)
        w = lib.ones(3, 2, 3, 3, requires_grad=True)
        b = lib.ones(3, requires_grad=True)
        low = lib.ones(2, 3, dtype=lib.bfloat16, requires_grad=True)
        f = lib.ones(3, 3, requires_grad=True)
        with lib.autocast("cpu"):
            out = build(lib, x, w, b, low, f)
        return str(out.dtype), graph_names(out.grad_fn, 4)
    _same(program)


def test_double_backward_through_autocast_matches_torch():
    def program(lib):
        rng = np.random.default_rng(1)
        x = lib.tensor(rng.standard_normal((4, 3)).astype(np.float32), requires_grad=True)
        w = lib.tensor(rng.standard_normal((2, 3)).astype(np.float32), requires_grad=True)
        with lib.autocast("cpu"):
            out = lib.nn.functional.linear(x, w).tanh()
        grad_x, = lib.autograd.grad(out.float().pow(2).sum(), x, create_graph=True)
        grad_w, = lib.autograd.grad(grad_x.sum(), w)
        return (str(grad_x.dtype), str(grad_w.dtype),
                np.round(grad_w.numpy().astype(np.float64), 1).tolist())
    _same(program)
