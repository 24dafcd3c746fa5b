"""addmm / linear / mm first-order backward on arrays (no graph of the gradient wanted) against
torch: values, dtypes and strides of every gradient (the weight's ``.grad`` row-major), the
bias gradient summed to its shape, beta and alpha, inputs that need no gradient, layouts and
dtypes that take the Tensor formulas, double backward, grad_fn names, and the hooks that must
still see everything (saved-tensor hooks, tensor hooks, module backward hooks)."""
import numpy as np
import pytest
import torch

import hookgrad

from conftest import assert_close, double_backward, graph_nodes, saved_log

# bias shapes addmm broadcasts from: a row (Linear's), a full matrix, a column, a 1x1, a number
SELF_SHAPES = [(5,), (4, 5), (1, 5), (4, 1), (1, 1), ()]


def _leaves(lib, arrays, needs):
    return [lib.tensor(a.copy(), requires_grad=n) for a, n in zip(arrays, needs)]


def _grads(lib, fn, arrays, needs, grad_output):
    inputs = _leaves(lib, arrays, needs)
    out = fn(lib, *inputs)
    out.backward(lib.tensor(grad_output.copy()))
    return out, [t.grad for t in inputs]


def _compare(fn, arrays, needs=None, seed=0):
    needs = needs or [True] * len(arrays)
    rng = np.random.default_rng(seed)
    results = []
    for lib in (torch, hookgrad):
        out = fn(lib, *_leaves(lib, arrays, [False] * len(arrays)))
        grad_output = rng.standard_normal(tuple(out.shape)).astype(arrays[0].dtype)
        rng = np.random.default_rng(seed)
        results.append(_grads(lib, fn, arrays, needs, grad_output))
    (t_out, t_grads), (h_out, h_grads) = results
    assert_close(h_out, t_out)
    for i, (t, h) in enumerate(zip(t_grads, h_grads)):
        if t is None:
            assert h is None, f"input {i}: torch has no gradient"
            continue
        assert_close(h, t, what=f"grad of input {i}")
        assert h.stride() == t.stride(), (i, h.stride(), t.stride())


def _arrays(dtype, *shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(dtype) for shape in shapes]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("batch", [1, 4, 16])
def test_linear_gradients_match_torch(dtype, batch):
    x, w, b = _arrays(dtype, (batch, 7), (5, 7), (5,))
    _compare(lambda lib, x, w, b: lib.nn.functional.linear(x, w, b), [x, w, b])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_linear_without_bias_and_batched_input(dtype):
    x, w, b = _arrays(dtype, (2, 3, 7), (5, 7), (5,))
    _compare(lambda lib, x, w: lib.nn.functional.linear(x, w), [x, w])
    _compare(lambda lib, x, w, b: lib.nn.functional.linear(x, w, b), [x, w, b])


@pytest.mark.parametrize("self_shape", SELF_SHAPES)
@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, 1), (1, -2.5), (0.25, 3)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_addmm_beta_alpha_and_broadcast_self(self_shape, beta, alpha, dtype):
    s, m1, m2 = _arrays(dtype, self_shape, (4, 6), (6, 5))
    _compare(lambda lib, s, m1, m2: lib.addmm(s, m1, m2, beta=beta, alpha=alpha), [s, m1, m2])


@pytest.mark.parametrize("needs", [(True, False, False), (False, True, False),
                                   (False, False, True), (False, True, True),
                                   (True, True, False)])
def test_only_the_needed_gradients(needs):
    s, m1, m2 = _arrays(np.float64, (5,), (4, 6), (6, 5))
    _compare(lambda lib, s, m1, m2: lib.addmm(s, m1, m2), [s, m1, m2], list(needs))


@pytest.mark.parametrize("transposed", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("op", ["addmm", "mm"])
def test_transposed_operands_give_torch_layouts(transposed, op):
    """A gradient is laid out like the input it belongs to: a transposed input (a weight seen
    through ``.t()``) gets a transposed gradient, so its leaf's ``.grad`` is row-major."""
    s, a, b = _arrays(np.float32, (5,), (6, 4), (5, 6))

    def fn(lib, s, a, b):
        m1 = a.t() if transposed[0] else a.t().contiguous()
        m2 = b.t() if transposed[1] else b.t().contiguous()
        return lib.addmm(s, m1, m2) if op == "addmm" else m1.mm(m2)

    _compare(fn, [s, a, b])


def test_non_contiguous_gradient_and_mixed_layouts():
    x, w, b = _arrays(np.float64, (6, 7), (5, 7), (5,))

    def fn(lib, x, w, b):
        return lib.nn.functional.linear(x, w, b).t()  # the gradient reaching addmm is transposed

    _compare(fn, [x, w, b])


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16"])
def test_half_precision_takes_the_tensor_formulas(dtype):
    results = []
    for lib in (torch, hookgrad):
        kind = getattr(lib, "float16" if dtype is np.float16 else "bfloat16")
        x, w, b = (lib.tensor(a, dtype=kind, requires_grad=True)
                   for a in _arrays(np.float32, (4, 7), (5, 7), (5,)))
        lib.nn.functional.linear(x, w, b).float().sum().backward()
        results.append([t.grad.float() for t in (x, w, b)])
    for h, t in zip(results[1], results[0]):
        assert_close(h, t, rtol=2e-2, atol=2e-2)


def test_double_backward_still_records():
    s, m1, m2 = _arrays(np.float64, (5,), (4, 6), (6, 5))
    double_backward(lambda lib, s, m1, m2: (lib.addmm(s, m1, m2, beta=0.5, alpha=2) ** 2),
                    s, m1, m2)
    double_backward(lambda lib, m1, m2: m1.mm(m2) ** 2, m1, m2)
    x, w, b = _arrays(np.float64, (4, 7), (5, 7), (5,))
    double_backward(lambda lib, x, w, b: lib.nn.functional.linear(x, w, b).tanh(), x, w, b)


def test_graph_names_match_torch():
    x, w, b = _arrays(np.float32, (4, 7), (5, 7), (5,))
    graphs = []
    for lib in (torch, hookgrad):
        x_, w_, b_ = _leaves(lib, [x, w, b], [True] * 3)
        loss = lib.nn.functional.cross_entropy(lib.nn.functional.linear(x_, w_, b_),
                                               lib.tensor([0, 1, 2, 3]))
        names = [fn.name() for fn, _ in loss.grad_fn.next_functions[0][0]
                 .next_functions[0][0].next_functions if fn is not None]
        graphs.append((loss.grad_fn.name(), names, graph_nodes(loss)))
    assert graphs[1] == graphs[0]


def test_saved_tensor_hooks_see_every_saved_tensor_and_run_unpack():
    x, w, b = _arrays(np.float32, (4, 7), (5, 7), (5,))
    logs = [saved_log(lib, lambda *t: lib.nn.functional.linear(*t), *_leaves(lib, [x, w, b],
                                                                            [True] * 3))
            for lib in (torch, hookgrad)]
    assert logs[1] == logs[0]
    unpacked = []
    for lib in (torch, hookgrad):
        count = []
        x_, w_, b_ = _leaves(lib, [x, w, b], [True] * 3)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: count.append(1) or t):
            out = lib.nn.functional.linear(x_, w_, b_)
        out.sum().backward()
        unpacked.append(len(count))
    assert unpacked[1] == unpacked[0]


def test_an_unpack_hook_replacing_the_saved_value_is_used():
    """The array lane reads what the unpack hook gives back, as the Tensor formulas do."""
    x, w, b = _arrays(np.float64, (4, 7), (5, 7), (5,))
    grads = []
    for lib in (torch, hookgrad):
        x_, w_, b_ = _leaves(lib, [x, w, b], [True] * 3)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t * 2, lambda t: t + 1):
            out = lib.nn.functional.linear(x_, w_, b_)
        out.sum().backward()
        grads.append([x_.grad, w_.grad, b_.grad])
    for h, t in zip(grads[1], grads[0]):
        assert_close(h, t)


def test_tensor_and_module_backward_hooks_fire_with_torch_values():
    x, = _arrays(np.float32, (4, 7))
    seen = []
    for lib in (torch, hookgrad):
        lib.manual_seed(0)
        layer = lib.nn.Linear(7, 5)
        with lib.no_grad():
            layer.weight.copy_(lib.tensor(_arrays(np.float32, (5, 7), seed=1)[0]))
            layer.bias.copy_(lib.tensor(_arrays(np.float32, (5,), seed=2)[0]))
        calls = []
        layer.register_full_backward_hook(
            lambda m, gin, gout: calls.append(("module", gin[0].clone(), gout[0].clone())))
        layer.weight.register_hook(lambda g: calls.append(("weight", g.clone())))
        layer.bias.register_hook(lambda g: calls.append(("bias", g.clone())))
        inp = lib.tensor(x, requires_grad=True)
        (layer(inp) ** 2).sum().backward()
        seen.append(calls)
    assert [c[0] for c in seen[1]] == [c[0] for c in seen[0]]
    for ours, theirs in zip(seen[1], seen[0]):
        for h, t in zip(ours[1:], theirs[1:]):
            assert_close(h, t)


def test_a_saved_input_changed_in_place_is_refused():
    x, w, b = _arrays(np.float64, (4, 7), (5, 7), (5,))
    for lib in (torch, hookgrad):
        x_, w_, b_ = _leaves(lib, [x, w, b], [True] * 3)
        h = x_ * 1
        out = lib.nn.functional.linear(h, w_, b_)
        with lib.no_grad():
            h.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.sum().backward()


def test_mlp_training_step_matches_torch():
    """A few SGD steps of a small MLP with cross entropy: weights after the steps agree."""
    rng = np.random.default_rng(3)
    data = rng.standard_normal((16, 20)).astype(np.float32)
    target = rng.integers(0, 4, 16)
    finals = []
    for lib in (torch, hookgrad):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(20, 12), lib.nn.ReLU(), lib.nn.Linear(12, 4))
        with lib.no_grad():
            for i, p in enumerate(model.parameters()):
                p.copy_(lib.tensor(_arrays(np.float32, tuple(p.shape), seed=10 + i)[0] * 0.3))
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(3):
            opt.zero_grad()
            lib.nn.functional.cross_entropy(model(lib.tensor(data)), lib.tensor(target)).backward()
            opt.step()
        finals.append([(p.detach().clone(), p.grad.stride()) for p in model.parameters()])
    for (h, h_stride), (t, t_stride) in zip(finals[1], finals[0]):
        assert_close(h, t)
        assert h_stride == t_stride


def test_the_array_lane_runs_only_without_a_graph_of_the_gradient(monkeypatch):
    from hookgrad.nn.ops import linear as linear_ops
    calls = []
    real = linear_ops._addmm_grads_on_arrays
    monkeypatch.setattr(linear_ops, "_addmm_grads_on_arrays",
                        lambda *args: calls.append(1) or real(*args))
    x, w, b = (hookgrad.tensor(a, requires_grad=True)
               for a in _arrays(np.float32, (4, 7), (5, 7), (5,)))
    hookgrad.nn.functional.linear(x, w, b).sum().backward()
    assert calls == [1]
    hookgrad.autograd.grad(hookgrad.nn.functional.linear(x, w, b).sum(), [w], create_graph=True)
    assert calls == [1]


@pytest.mark.parametrize("bad", ["input", "weight", "bias"])
def test_linear_refuses_a_non_tensor_as_torch(bad):
    from conftest import assert_same_error
    x, w, b = _arrays(np.float32, (4, 7), (5, 7), (5,))

    def call(lib):
        args = {"input": lib.tensor(x), "weight": lib.tensor(w), "bias": lib.tensor(b)}
        args[bad] = [1.0]
        return lib.nn.functional.linear(args["input"], args["weight"], args["bias"])

    assert_same_error(call)


def _chain(tensor):
    names, node = [], tensor.grad_fn
    while node is not None:
        names.append(node.name())
        node = node.next_functions[0][0] if node.next_functions else None
    return names


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bias_shape", [(6,), (1,), ()])
def test_linear_on_a_non_contiguous_input_adds_its_bias_in_place(dtype, bias_shape):
    # matmul, then the bias added into the product (torch's add_): the same graph, values,
    # gradients and output strides
    rng = np.random.default_rng(20)
    x, w = rng.standard_normal((5, 3, 4)).astype(dtype), rng.standard_normal((6, 4)).astype(dtype)
    b = rng.standard_normal(bias_shape).astype(dtype)
    results = []
    for lib in (torch, hookgrad):
        xs, ws, bs = (lib.tensor(a, requires_grad=True) for a in (x, w, b))
        y = lib.nn.functional.linear(xs.transpose(0, 1), ws, bs)
        (y * y).sum().backward()
        results.append((_chain(y), y.stride(), y.detach().numpy(),
                        xs.grad.numpy(), ws.grad.numpy(), bs.grad.numpy()))
    (chain_a, stride_a, *arrays_a), (chain_b, stride_b, *arrays_b) = results
    assert chain_b == chain_a and stride_b == stride_a
    for ours, theirs in zip(arrays_b, arrays_a):
        assert_close(ours, theirs)


def test_linear_bias_that_would_grow_the_output_raises_as_torch():
    errors = []
    for lib in (torch, hookgrad):
        with pytest.raises(RuntimeError) as info:
            lib.nn.functional.linear(lib.ones(5, 3, 4).transpose(0, 1), lib.ones(6, 4),
                                     lib.ones(2, 1, 1, 6))
        errors.append(str(info.value))
    assert errors[1] == errors[0]
