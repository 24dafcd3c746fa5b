"""Layers against torch: parameter names and shapes, repr, default initialisation bounds, and
forward/backward (input and parameter gradients) with torch's parameters copied across."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, raised


def build(name: str, *args, **kwargs):
    """The same layer in both libraries, hookgrad's loaded with torch's parameters."""
    torch.manual_seed(0)
    theirs = getattr(torch.nn, name)(*args, **kwargs)
    ours = getattr(hookgrad.nn, name)(*args, **kwargs)
    ours.load_state_dict({k: hookgrad.tensor(v.detach().numpy().copy())
                          for k, v in theirs.state_dict().items()})
    return ours, theirs


def run_both(ours, theirs, x: np.ndarray, double: bool = True, **tolerance):
    """Forward both layers on x, backward a random gradient, compare outputs and all grads."""
    if double:
        ours, theirs = ours.double(), theirs.double()
        x = x.astype(np.float64)
    outputs = []
    for lib, module in ((hookgrad, ours), (torch, theirs)):
        inp = lib.tensor(x.copy(), requires_grad=x.dtype.kind == "f")
        out = module(inp)
        out = out[0] if isinstance(out, tuple) else out
        grad = np.random.default_rng(1).standard_normal(tuple(out.shape)).astype(
            out.detach().numpy().dtype)
        out.backward(lib.tensor(grad))
        outputs.append((out, inp.grad, dict(module.named_parameters())))
    (h_out, h_grad, h_params), (t_out, t_grad, t_params) = outputs
    assert_close(h_out, t_out, what="output", **tolerance)
    if t_grad is not None:
        assert_close(h_grad, t_grad, what="input grad", **tolerance)
    assert list(h_params) == list(t_params)
    for name in t_params:
        if t_params[name].grad is None:
            assert h_params[name].grad is None
        else:
            assert_close(h_params[name].grad, t_params[name].grad, what=name, **tolerance)


LAYERS = [  # (name, args, kwargs, input shape)
    ("Linear", (5, 3), {}, (4, 5)),
    ("Linear", (5, 3), {"bias": False}, (2, 4, 5)),
    ("Conv1d", (3, 4, 3), {"stride": 2, "padding": 1}, (2, 3, 9)),
    ("Conv2d", (3, 4, 3), {"padding": 1}, (2, 3, 6, 6)),
    ("Conv2d", (4, 6, (3, 2)), {"stride": (2, 1), "dilation": 2, "groups": 2, "bias": False},
     (2, 4, 9, 8)),
    ("Conv2d", (3, 4, 2), {"padding": "same"}, (2, 3, 5, 5)),
    ("ConvTranspose2d", (4, 3, 3), {"stride": 2, "padding": 1, "output_padding": 1},
     (2, 4, 4, 5)),
    ("ConvTranspose1d", (4, 2, 3), {"stride": 3, "groups": 2}, (2, 4, 6)),
    ("MaxPool2d", (3,), {"stride": 2, "padding": 1, "ceil_mode": True}, (2, 3, 8, 7)),
    ("AvgPool2d", (2,), {"count_include_pad": False, "padding": 1}, (2, 3, 7, 7)),
    ("AdaptiveAvgPool2d", ((2, 3),), {}, (2, 3, 7, 8)),
    ("ReLU", (), {}, (4, 5)), ("GELU", (), {"approximate": "tanh"}, (4, 5)),
    ("SiLU", (), {}, (4, 5)), ("Sigmoid", (), {}, (4, 5)), ("Tanh", (), {}, (4, 5)),
    ("Softplus", (), {"beta": 2.0}, (4, 5)), ("LeakyReLU", (0.2,), {}, (4, 5)),
    ("ELU", (), {"alpha": 0.5}, (4, 5)), ("Softmax", (1,), {}, (4, 5)),
    ("LogSoftmax", (-1,), {}, (4, 5)),
    ("Dropout", (0.5,), {}, (4, 5)),  # compared in eval mode below
]


@pytest.mark.parametrize("name,args,kwargs,shape", LAYERS)
def test_layer_matches_torch(rng, name, args, kwargs, shape):
    ours, theirs = build(name, *args, **kwargs)
    assert repr(ours) == repr(theirs)
    if name == "Dropout":
        ours.eval(), theirs.eval()
    run_both(ours, theirs, rng.standard_normal(shape))


@pytest.mark.parametrize("name,args,kwargs,shape", [layer for layer in LAYERS
                                                    if layer[0] in ("Linear", "Conv2d",
                                                                    "ConvTranspose2d")])
def test_layer_float32(rng, name, args, kwargs, shape):
    ours, theirs = build(name, *args, **kwargs)
    run_both(ours, theirs, rng.standard_normal(shape).astype(np.float32), double=False)


REPRS = [
    ("Conv2d", (2, 4, 3), {"padding": (1, 2), "bias": False, "padding_mode": "reflect"}),
    ("Conv2d", (2, 4, 3), {"padding": "valid"}),
    ("MaxPool2d", ((2, 3),), {"stride": 1, "return_indices": True}),
    ("AvgPool2d", (3, 2, 1), {"ceil_mode": True}),
    ("ReLU", (True,), {}), ("LeakyReLU", (), {"inplace": True}), ("ELU", (1.0, True), {}),
    ("Dropout", (), {"p": 0.2, "inplace": True}), ("Softmax", (), {}),
    ("Embedding", (10, 3), {"padding_idx": -1, "max_norm": 2.0, "norm_type": 1.0,
                            "scale_grad_by_freq": True}),
    ("Dropout2d", (0.3,), {}),
]


@pytest.mark.parametrize("name,args,kwargs", REPRS)
def test_repr_and_parameters_match_torch(name, args, kwargs):
    ours, theirs = getattr(hookgrad.nn, name)(*args, **kwargs), getattr(torch.nn, name)(
        *args, **kwargs)
    assert repr(ours) == repr(theirs)
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]


@pytest.mark.parametrize("name,args", [("Linear", (300, 40)), ("Conv2d", (16, 32, 3)),
                                       ("Conv1d", (8, 4, 5)), ("ConvTranspose2d", (6, 9, 3))])
def test_default_init_follows_torch_distribution(name, args):
    """kaiming_uniform_(a=sqrt(5)) on weights and U(-1/sqrt(fan_in), ..) on biases: compare the
    bounds and the standard deviation with a torch layer of the same shape."""
    hookgrad.manual_seed(0)
    torch.manual_seed(0)
    ours, theirs = getattr(hookgrad.nn, name)(*args), getattr(torch.nn, name)(*args)
    for (name_ours, p_ours), (_, p_theirs) in zip(ours.named_parameters(),
                                                  theirs.named_parameters()):
        a, b = p_ours.detach().numpy(), p_theirs.detach().numpy()
        fan_in = np.prod(b.shape[1:]) if b.ndim > 1 else np.prod(
            theirs.weight.shape[1:])
        bound = 1 / np.sqrt(fan_in)  # both weight (a = sqrt(5)) and bias have this bound
        assert a.dtype == b.dtype == np.float32
        assert np.abs(a).max() <= bound and np.abs(b).max() <= bound
        if a.size > 100:
            assert abs(a.std() - bound / np.sqrt(3)) < 0.1 * bound / np.sqrt(3)
            assert abs(a.std() - b.std()) < 0.1 * b.std()


def test_embedding_layer_and_from_pretrained(rng):
    ours, theirs = build("Embedding", 10, 4, padding_idx=2)
    assert repr(ours) == repr(theirs)
    indices = np.array([[1, 2, 4], [2, 9, 0]])
    outputs = []
    for lib, module in ((hookgrad, ours), (torch, theirs)):
        out = module(lib.tensor(indices))
        out.backward(lib.tensor(np.ones((2, 3, 4), dtype=np.float32)))
        outputs.append((out, module.weight.grad))
    assert_close(*[o[0] for o in outputs])
    assert_close(*[o[1] for o in outputs])
    fresh = hookgrad.nn.Embedding(5, 3, padding_idx=1)
    assert not fresh.weight.detach().numpy()[1].any()
    table = hookgrad.tensor(rng.standard_normal((4, 2)))
    frozen = hookgrad.nn.Embedding.from_pretrained(table)
    assert not frozen.weight.requires_grad
    np.testing.assert_array_equal(frozen(hookgrad.tensor([3])).numpy(), table.numpy()[[3]])


def test_dropout_layer_train_vs_eval():
    layer = hookgrad.nn.Dropout(0.25)
    x = hookgrad.ones(100, 100)
    hookgrad.manual_seed(0)
    trained = layer(x).numpy()
    assert abs((trained == 0).mean() - 0.25) < 0.02
    np.testing.assert_allclose(trained[trained != 0], 1 / 0.75, rtol=1e-6)
    layer.eval()
    assert layer(x) is x


def test_conv_transpose_output_size_argument(rng):
    ours, theirs = build("ConvTranspose2d", 2, 3, 3, stride=2)
    x = rng.standard_normal((1, 2, 4, 4)).astype(np.float32)
    a = ours(hookgrad.tensor(x), output_size=[10, 10])
    b = theirs(torch.tensor(x), output_size=[10, 10])
    assert_close(a, b)


CONSTRUCTION_ERRORS = [
    ("Conv2d", (3, 4, 3), {"groups": 2}), ("Conv2d", (4, 3, 3), {"groups": 2}),
    ("Conv2d", (4, 4, 3), {"groups": 0}), ("Conv2d", (4, 4, 3), {"padding": "full"}),
    ("Conv2d", (4, 4, 3), {"padding": "same", "stride": 2}),
    ("Dropout", (1.5,), {}),
]


@pytest.mark.parametrize("name,args,kwargs", CONSTRUCTION_ERRORS)
def test_construction_errors_match_torch(name, args, kwargs):
    def construct(lib):
        getattr(lib.nn, name)(*args, **kwargs)

    assert raised(construct, hookgrad) == raised(construct, torch)


@pytest.mark.parametrize("name,args", [("MaxPool1d", (3, 2, 1)), ("AvgPool1d", (3, 2, 1)),
                                       ("AdaptiveAvgPool1d", (4,))])
def test_pool1d_layers(rng, name, args):
    ours, theirs = build(name, *args)
    assert repr(ours) == repr(theirs)
    run_both(ours, theirs, rng.standard_normal((2, 3, 10)))
