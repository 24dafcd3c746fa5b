"""linear, activations, dropout, embedding, attention and multi-head attention against torch."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, compare, raised, saved_log


def F(lib):
    return lib.nn.functional


def chain(tensor) -> list:
    """grad_fn names along the first input edge, down to the leaf."""
    names, node = [], tensor.grad_fn
    while node is not None:
        names.append(node.name())
        nodes = [n for n, _ in node.next_functions if n is not None]
        node = nodes[0] if nodes and "AccumulateGrad" not in nodes[0].name() else None
    return names


@pytest.mark.parametrize("shape", [(4, 5), (2, 3, 5), (5,), (2, 2, 3, 5)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_values_grads_and_graph(rng, shape, bias):
    arrays = [rng.standard_normal(shape), rng.standard_normal((6, 5))]
    if bias:
        arrays.append(rng.standard_normal(6))
    compare(lambda lib, x, w, *b: F(lib).linear(x, w, *b), *arrays)

    def run(lib):
        x, w, *b = (lib.tensor(a, requires_grad=True) for a in arrays)
        out = F(lib).linear(x, w, *b)
        return chain(out), saved_log(lib, lambda x, w, *b: F(lib).linear(x, w, *b), x, w, *b)
    assert run(hookgrad) == run(torch)


def test_linear_non_contiguous_input_and_float32(rng):
    x = rng.standard_normal((5, 4, 3)).astype(np.float32)
    w, b = rng.standard_normal((6, 5)).astype(np.float32), rng.standard_normal(6).astype(
        np.float32)
    compare(lambda lib, x, w, b: F(lib).linear(x.transpose(0, 2), w, b), x, w, b)


def test_linear_saves_only_what_each_grad_needs(rng):
    x, w, b = rng.standard_normal((3, 4)), rng.standard_normal((2, 4)), rng.standard_normal(2)
    for flags in ([True, False, False], [False, True, False], [False, False, True]):
        logs = []
        for lib in (hookgrad, torch):
            ts = [lib.tensor(a, requires_grad=f) for a, f in zip((x, w, b), flags)]
            logs.append(saved_log(lib, lambda x, w, b: F(lib).linear(x, w, b), *ts))
        assert logs[0] == logs[1]


ACTIVATIONS = [("relu", {}), ("gelu", {}), ("gelu", {"approximate": "tanh"}), ("silu", {}),
               ("sigmoid", {}), ("tanh", {}), ("softplus", {"beta": 2.0, "threshold": 3.0}),
               ("leaky_relu", {"negative_slope": 0.2}), ("elu", {"alpha": 0.7}),
               ("softmax", {"dim": 1}), ("log_softmax", {"dim": 0})]


@pytest.mark.parametrize("name,kwargs", ACTIVATIONS)
def test_activation_functions(rng, name, kwargs):
    compare(lambda lib, x: getattr(F(lib), name)(x, **kwargs), rng.standard_normal((4, 5)) * 3)


def test_softmax_without_dim_warns_and_picks_torch_dim(rng):
    x = rng.standard_normal((2, 3, 4))
    with pytest.warns(UserWarning, match="Implicit dimension choice"):
        compare(lambda lib, t: F(lib).softmax(t), x)


def test_dropout_eval_and_p0_return_the_input():
    for lib in (hookgrad, torch):
        x = lib.ones(3, 4, requires_grad=True)
        assert F(lib).dropout(x, 0.5, training=False) is x
        assert F(lib).dropout(x, 0.0) is x


def test_dropout_statistics_and_gradient_is_mask_times_scale():
    hookgrad.manual_seed(0)
    x = hookgrad.ones(200, 500, dtype=hookgrad.float64, requires_grad=True)
    out = F(hookgrad).dropout(x, 0.3)
    values = out.detach().numpy()
    kept = values != 0
    assert abs(kept.mean() - 0.7) < 0.01
    np.testing.assert_allclose(values[kept], 1 / 0.7)
    assert out.grad_fn.name() == "MulBackward0"
    np.testing.assert_allclose(out.grad_fn._saved_other.numpy(), kept / 0.7)
    grad = np.random.default_rng(0).standard_normal(values.shape)
    out.backward(hookgrad.tensor(grad))
    np.testing.assert_allclose(x.grad.numpy(), grad * kept / 0.7)


def test_dropout_p1_zeroes_and_saves_a_scalar_like_torch():
    logs = []
    for lib in (hookgrad, torch):
        x = lib.ones(3, 4, dtype=lib.float64, requires_grad=True)
        out = F(lib).dropout(x, 1.0)
        assert not out.detach().numpy().any()
        logs.append(saved_log(lib, lambda x: F(lib).dropout(x, 1.0), x))
    assert logs[0] == logs[1]


def test_dropout_uses_hookgrad_generator_and_2d_drops_channels():
    hookgrad.manual_seed(3)
    first = F(hookgrad).dropout(hookgrad.ones(50), 0.5).numpy().copy()
    hookgrad.manual_seed(3)
    np.testing.assert_array_equal(F(hookgrad).dropout(hookgrad.ones(50), 0.5).numpy(), first)
    out = F(hookgrad).dropout2d(hookgrad.ones(4, 8, 3, 3), 0.5).numpy()
    per_channel = out.reshape(4, 8, 9)
    assert np.all(per_channel.min(-1) == per_channel.max(-1))
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        F(hookgrad).dropout(hookgrad.ones(2), 1.5)


@pytest.mark.parametrize("kwargs", [{}, {"padding_idx": 1}, {"padding_idx": -2},
                                    {"scale_grad_by_freq": True}])
def test_embedding_matches_torch(rng, kwargs):
    weight = rng.standard_normal((10, 4))
    indices = np.array([[1, 2, 1], [3, 8, 1]])
    compare(lambda lib, w, i: F(lib).embedding(i, w, **kwargs), weight, indices)


def test_embedding_graph_saved_and_double_backward(rng):
    weight, indices = rng.standard_normal((10, 4)), np.array([[1, 2], [2, 9]])
    results = []
    for lib in (hookgrad, torch):
        w, i = lib.tensor(weight, requires_grad=True), lib.tensor(indices)
        out = F(lib).embedding(i, w, padding_idx=2)
        log = [s[:2] for s in saved_log(lib, lambda w: F(lib).embedding(i, w), w)]
        grad_out = lib.tensor(np.ones(tuple(out.shape)), requires_grad=True)
        (grad,) = lib.autograd.grad(out, w, grad_out, create_graph=True)
        (second,) = lib.autograd.grad((grad * lib.tensor(weight)).sum(), grad_out)
        results.append((out.grad_fn.name(), log, len(out.grad_fn.next_functions), grad, second))
    assert results[0][:3] == results[1][:3]
    assert_close(results[0][3], results[1][3])
    assert_close(results[0][4], results[1][4])


def test_embedding_max_norm_renormalises_rows_in_place(rng):
    weight = rng.standard_normal((6, 3)) * 3
    rows = []
    for lib in (hookgrad, torch):
        w = lib.tensor(weight.copy())
        out = F(lib).embedding(lib.tensor([0, 2, 2]), w, max_norm=1.0)
        rows.append((out, w))
    assert_close(rows[0][0], rows[1][0], rtol=1e-6)
    assert_close(rows[0][1], rows[1][1], rtol=1e-6)


def test_embedding_errors_match_torch():
    for fn in (lambda lib: F(lib).embedding(lib.tensor([10]), lib.zeros(10, 3)),
               lambda lib: F(lib).embedding(lib.tensor([1.0]), lib.zeros(10, 3))):
        assert raised(fn, hookgrad) == raised(fn, torch)


TORCH_NAMESPACE = {
    "addmm": (lambda lib, a, b, c: lib.addmm(a, b, c, beta=0.5, alpha=2.0),
              [(3,), (2, 4), (4, 3)]),
    "baddbmm": (lambda lib, a, b, c: lib.baddbmm(a, b, c, beta=2.0, alpha=0.5),
                [(3, 4), (2, 3, 5), (2, 5, 4)]),
    "batch_norm": (lambda lib, x, w, b: lib.batch_norm(x, w, b, None, None, True, 0.1, 1e-5,
                                                       False), [(4, 3, 2), (3,), (3,)]),
    "layer_norm": (lambda lib, x, w: lib.layer_norm(x, (2,), w), [(4, 3, 2), (2,)]),
    "group_norm": (lambda lib, x: lib.group_norm(x, 3), [(4, 3, 2)]),
    "convolution": (lambda lib, x, w: lib.convolution(x, w, None, [2], [1], [1], True, [1], 1),
                    [(2, 3, 5), (3, 2, 3)]),
    "conv2d": (lambda lib, x, w: lib.conv2d(x, w, None, 1, 1), [(1, 2, 4, 4), (3, 2, 3, 3)]),
    "max_pool2d": (lambda lib, x: lib.max_pool2d(x, 2), [(1, 2, 4, 4)]),
    "dropout eval": (lambda lib, x: lib.dropout(x, 0.5, False), [(3, 4)]),
    "logits loss": (lambda lib, x, t: lib.binary_cross_entropy_with_logits(x, t), [(3, 4),
                                                                                   (3, 4)]),
    "logits loss sum": (lambda lib, x, t: lib.binary_cross_entropy_with_logits(
        x, t, None, None, 2), [(3, 4), (3, 4)]),
}


@pytest.mark.parametrize("name", list(TORCH_NAMESPACE))
def test_torch_namespace_spellings(rng, name):
    fn, shapes = TORCH_NAMESPACE[name]
    compare(fn, *(rng.standard_normal(s) for s in shapes))


def test_torch_embedding_takes_weight_first(rng):
    compare(lambda lib, w, i: lib.embedding(w, i, 1), rng.standard_normal((5, 3)),
            np.array([1, 4, 1]))


@pytest.mark.parametrize("name,args", [("relu", ()), ("silu", ()), ("leaky_relu", (0.1,)),
                                       ("elu", (0.5,))])
def test_inplace_activations_modify_their_input(rng, name, args):
    x = rng.standard_normal((3, 4))

    def fn(lib, t):
        inner = t * 1
        out = getattr(F(lib), name)(inner, *args, inplace=True)
        assert out is inner
        return out
    compare(fn, x)


# -- dropout masks are torch's: bernoulli_(1 - p) from the default generator --------------------
DROPOUTS = {
    "dropout": lambda L, x: L.nn.functional.dropout(x, 0.3),
    "dropout_transposed": lambda L, x: L.nn.functional.dropout(x.t(), 0.6),
    "Dropout": lambda L, x: L.nn.Dropout(0.5)(x),
    "dropout_inplace": lambda L, x: L.nn.functional.dropout(x.clone(), 0.2, inplace=True),
    "dropout1d": lambda L, x: L.nn.functional.dropout1d(x.reshape(2, 3, 14), 0.4),
    "dropout2d": lambda L, x: L.nn.functional.dropout2d(x.reshape(2, 3, 7, 2), 0.4),
    "attention": lambda L, x: L.nn.functional.scaled_dot_product_attention(
        x.reshape(1, 2, 7, 6), x.reshape(1, 2, 7, 6), x.reshape(1, 2, 7, 6), dropout_p=0.3),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", DROPOUTS)
def test_dropout_masks_equal_torchs(name, dtype):
    results = []
    for lib in (hookgrad, torch):
        lib.manual_seed(8)
        x = lib.arange(84, dtype=getattr(lib, dtype)).reshape(12, 7) / 10
        results.append((DROPOUTS[name](lib, x).numpy().copy(), lib.rand(2).numpy()))
    (ours, ours_after), (theirs, theirs_after) = results
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_array_equal(ours == 0, theirs == 0)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5 if dtype == "float32" else 1e-12)
    assert ours_after.tobytes() == theirs_after.tobytes()


@pytest.mark.parametrize("args", [("none", "w"), ("x", "none"), ("number", "w"),
                                  ("x", "w", "number")])
def test_linear_non_tensor_arguments_raise_type_error_like_torch(args):
    def run(lib):
        values = {"x": lib.ones(2, 3), "w": lib.ones(4, 3), "none": None, "number": 1.0}
        try:
            lib.nn.functional.linear(*[values[a] for a in args])
        except Exception as error:  # noqa: BLE001 - compared with torch's
            return type(error), str(error)
        return None

    assert run(hookgrad) == run(torch)
