"""The engine and grad modes, compared with torch: results, graph structure and errors."""
import threading

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close


def _error(fn):
    try:
        fn()
    except Exception as error:  # noqa: BLE001 - compared with torch's
        return type(error), str(error)
    return None


def both(program):
    """Run ``program(lib)`` under torch and hookgrad; return both results."""
    return program(torch), program(hookgrad)


def test_gradients_accumulate_across_backward_calls():
    def program(lib):
        w = lib.tensor([1.0, -2.0, 3.0], requires_grad=True, dtype=lib.float64)
        for scale in (1.0, 2.0, 3.0):
            (w * w * scale).sum().backward()
        return w.grad.numpy().copy()

    theirs, ours = both(program)
    np.testing.assert_allclose(ours, theirs)


def test_retain_graph_allows_a_second_backward():
    def program(lib):
        x = lib.tensor([0.5, 1.5], requires_grad=True, dtype=lib.float64)
        y = (x.exp() * x).sum()
        y.backward(retain_graph=True)
        y.backward()
        return x.grad.numpy().copy()

    theirs, ours = both(program)
    np.testing.assert_allclose(ours, theirs)


def test_second_backward_through_freed_graph_raises_like_torch():
    def program(lib):
        x = lib.tensor([0.5, 1.5], requires_grad=True)
        y = (x.exp() * x).sum()
        y.backward()
        return _error(y.backward)

    theirs, ours = both(program)
    assert ours == theirs


def test_graph_without_saved_tensors_can_run_twice_like_torch():
    def program(lib):
        x = lib.ones(2, requires_grad=True)
        y = (x + 1).sum()
        y.backward()
        y.backward()
        return x.grad.tolist()

    theirs, ours = both(program)
    assert ours == theirs


@pytest.mark.parametrize("case", ["non_scalar", "no_grad_tensor", "bad_gradient_shape"])
def test_backward_errors_match_torch(case):
    def program(lib):
        x = lib.ones(3, requires_grad=True)
        if case == "non_scalar":
            return _error(lambda: (x * 2).backward())
        if case == "no_grad_tensor":
            return _error(lambda: lib.ones(3).sum().backward())
        return _error(lambda: (x * 2).backward(lib.ones(4)))

    theirs, ours = both(program)
    assert ours[0] is theirs[0]
    assert ours[1] == theirs[1]


def test_autograd_grad_errors_match_torch():
    def program(lib):
        x = lib.ones(3, requires_grad=True)
        unused = lib.ones(2, requires_grad=True)
        return (_error(lambda: lib.autograd.grad(x.sum(), [unused])),
                _error(lambda: lib.autograd.grad(x.sum(), [lib.ones(2)])))

    theirs, ours = both(program)
    assert ours == theirs


def test_autograd_grad_allow_unused_and_materialize():
    def program(lib):
        x = lib.ones(2, requires_grad=True)
        unused = lib.ones(3, requires_grad=True)
        none = lib.autograd.grad((x * 2).sum(), [x, unused], allow_unused=True)
        zeros = lib.autograd.grad((x * 2).sum(), [x, unused], materialize_grads=True)
        return none[1] is None, zeros[1].tolist(), x.grad is None

    theirs, ours = both(program)
    assert ours == theirs


def test_autograd_grad_does_not_touch_dot_grad():
    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.tensor([3.0, 4.0], requires_grad=True)
        gx, = lib.autograd.grad((x * y).sum(), x)
        return gx.tolist(), x.grad, y.grad

    theirs, ours = both(program)
    assert ours == theirs


def test_higher_order_gradients():
    def program(lib):
        x = lib.tensor([0.7, -0.3], requires_grad=True, dtype=lib.float64)
        y = (x.sin() * x * x).sum()
        g1, = lib.autograd.grad(y, x, create_graph=True)
        g2, = lib.autograd.grad(g1.sum(), x, create_graph=True)
        g3, = lib.autograd.grad(g2.sum(), x)
        return [g.detach().numpy().copy() for g in (g1, g2, g3)]

    theirs, ours = both(program)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_backward_inputs_accumulates_only_into_inputs():
    def program(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        (a * b).sum().backward(inputs=[a])
        return a.grad.tolist(), b.grad

    theirs, ours = both(program)
    assert ours == theirs


def test_next_functions_and_accumulate_grad_variable():
    def program(lib):
        a = lib.ones(2, requires_grad=True)
        b = lib.ones(2)
        y = (a * b).exp()
        mul = y.grad_fn.next_functions[0][0]
        acc = mul.next_functions[0][0]
        return (y.grad_fn.name(), mul.name(), acc.name(), acc.variable is a,
                [n is None for n, _ in mul.next_functions], y.is_leaf, a.is_leaf, b.is_leaf,
                y.requires_grad, y.output_nr)

    theirs, ours = both(program)
    assert ours == theirs


def test_same_accumulate_grad_node_for_every_use_of_a_leaf():
    for lib in (torch, hookgrad):
        a = lib.ones(2, requires_grad=True)
        y1, y2 = a * 2, a * 3
        assert y1.grad_fn.next_functions[0][0] is y2.grad_fn.next_functions[0][0]


def test_version_counter_is_shared_by_views_and_detach():
    def program(lib):
        base = lib.zeros(4)
        view = base[1:3]
        detached = base.detach()
        view.add_(1)
        detached.mul_(2)
        return base._version, view._version, detached._version, base.tolist()

    theirs, ours = both(program)
    assert ours == theirs


def test_in_place_modification_of_saved_tensor_raises_with_versions():
    def program(lib):
        x = lib.ones(3, requires_grad=True)
        y = x.exp()
        y.add_(1)
        return _error(lambda: y.sum().backward())

    theirs, ours = both(program)
    assert ours == theirs  # names the forward op (Exp) and both versions, word for word


def test_in_place_on_leaf_requiring_grad_raises_like_torch():
    def program(lib):
        x = lib.ones(3, requires_grad=True)
        return _error(lambda: x.add_(1)), _error(lambda: x[0].mul_(2))

    theirs, ours = both(program)
    assert ours == theirs


def test_in_place_on_leaf_is_fine_without_grad_mode():
    def program(lib):
        x = lib.ones(3, requires_grad=True)
        with lib.no_grad():
            x.mul_(3)
        return x.tolist(), x.requires_grad, x.grad_fn is None

    theirs, ours = both(program)
    assert ours == theirs


# -- grad modes ------------------------------------------------------------------------------
def test_no_grad_enable_grad_set_grad_enabled_nest_like_torch():
    def program(lib):
        x = lib.ones(1, requires_grad=True)
        seen = []
        with lib.no_grad():
            seen.append((x * 2).requires_grad)
            with lib.enable_grad():
                seen.append((x * 2).requires_grad)
            seen.append(lib.is_grad_enabled())
        with lib.set_grad_enabled(False):
            seen.append((x * 2).requires_grad)
        seen.append(lib.is_grad_enabled())
        lib.set_grad_enabled(False)
        seen.append(lib.is_grad_enabled())
        lib.set_grad_enabled(True)

        @lib.no_grad()
        def decorated():
            return (x * 2).requires_grad

        seen.append(decorated())
        with lib.inference_mode():
            seen.append(((x * 2).requires_grad, lib.is_grad_enabled()))
        seen.append(lib.is_grad_enabled())
        return seen

    theirs, ours = both(program)
    assert ours == theirs


def test_grad_mode_is_thread_local():
    results = {}

    def worker():
        results["thread"] = hookgrad.is_grad_enabled()

    with hookgrad.no_grad():
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
        results["main"] = hookgrad.is_grad_enabled()
    assert results == {"thread": True, "main": False}


def test_requires_grad_rules_match_torch():
    def program(lib):
        ints = lib.tensor([1, 2])
        nonleaf = lib.ones(2, requires_grad=True) * 2
        return (_error(lambda: ints.requires_grad_()),
                _error(lambda: nonleaf.requires_grad_(False)))

    theirs, ours = both(program)
    assert ours == theirs


def test_deep_graph_does_not_hit_the_recursion_limit():
    x = hookgrad.ones(1, requires_grad=True)
    y = x
    for _ in range(5000):
        y = y * 1.0
    y.sum().backward()
    assert x.grad.tolist() == [1.0]


def test_multiple_roots():
    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        a = x * 2
        b = a.exp()
        lib.autograd.backward([a.sum(), b.sum()])
        return x.grad.numpy().copy()

    theirs, ours = both(program)
    assert_close(ours, theirs)


@pytest.mark.parametrize("pick", [lambda x, y, b: x, lambda x, y, b: y, lambda x, y, b: b],
                         ids=["leaf", "non_leaf", "second_split_output"])
def test_get_gradient_edge_matches_torch(pick):
    edges = []
    for lib in (hookgrad, torch):
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        _, b = y.split(2)
        edge = lib.autograd.graph.get_gradient_edge(pick(x, y, b))
        edges.append((type(edge).__name__, edge.node.name(), edge.output_nr,
                      edge.ownership_token))
    assert edges[0] == edges[1]


def test_get_gradient_edge_refuses_a_tensor_without_grad():
    for lib in (hookgrad, torch):
        with pytest.raises(RuntimeError, match="not possible to get the gradient edge"):
            lib.autograd.graph.get_gradient_edge(lib.ones(2))


def _backward_inputs_non_leaf(lib):
    x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    y = x * x
    (y * y).sum().backward(inputs=[y], retain_graph=True)
    first = (y.retains_grad, y.grad.tolist())
    # y keeps its .grad from now on, as after retain_grad: a plain backward accumulates there
    (y * 3).sum().backward()
    z = x * 3
    (z * z).sum().backward(create_graph=True, inputs=[z])
    return first, y.grad.tolist(), x.grad.tolist(), z.grad.requires_grad, z.retains_grad


def test_backward_inputs_non_leaf_retains_grad_like_torch():
    assert _backward_inputs_non_leaf(hookgrad) == _backward_inputs_non_leaf(torch)


@pytest.mark.parametrize("inputs", [[None], (3,)])
def test_backward_inputs_must_be_tensors_like_torch(inputs):
    errors = []
    for lib in (torch, hookgrad):
        x = lib.ones(2, requires_grad=True)
        with pytest.raises(Exception) as info:
            (x * 2).sum().backward(inputs=inputs)
        errors.append(info.type)
    assert errors[0] is errors[1]


def _mul_by_number_twice(lib, op):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3.0 if op == "mul" else x / 3.0
    y.sum().backward()
    try:
        y.sum().backward()
    except RuntimeError as error:
        return "second time" in str(error)
    return False


@pytest.mark.parametrize("op", ["mul", "div"])
def test_number_operand_is_freed_with_the_graph_like_torch(op):
    """torch saves the Python number of ``x * 3`` as a wrapped tensor, so a second backward
    through the freed graph raises (found by the program fuzzer)."""
    assert _mul_by_number_twice(hookgrad, op) == _mul_by_number_twice(torch, op) is True


def test_copy_slices_writes_its_base_gradient_only_where_it_is_wanted():
    """An in-place op on an expanded view of a non-leaf (zero_), then backward to the non-leaf
    alone: torch's CopySlices skips writing the base's gradient nobody wants (the write into
    an expanded region would be refused), and so does hookgrad; where the base's gradient is
    wanted both refuse the write."""
    import torch
    results = []
    for lib in (torch, hookgrad):
        events = []
        x = lib.tensor([-1.362, 0.273], dtype=lib.float64, requires_grad=True)
        y = x * x
        y.expand(2, 2).zero_()
        y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: events.append(
            [g is None for g in grad_inputs]))
        y.sum().backward(inputs=[y])
        results.append((events, y.grad.tolist(), x.grad))
    assert results[1] == results[0]
    for lib in (torch, hookgrad):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * x
        y.expand(2, 2).zero_()
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
            y.sum().backward()
