"""MultiheadAttention, TransformerEncoderLayer and TransformerEncoder against torch: parameter
names, repr, outputs, attention weights and all gradients, for the options that change the path."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, graph_nodes


def pair(name: str, *args, **kwargs):
    torch.manual_seed(0)
    theirs = getattr(torch.nn, name)(*args, **kwargs).double()
    ours = getattr(hookgrad.nn, name)(*args, **kwargs).double()
    with torch.no_grad():
        for p in theirs.parameters():  # biases start at 0 in torch: make them count
            p.add_(torch.randn(p.shape, dtype=p.dtype) * 0.1)
    ours.load_state_dict({k: hookgrad.tensor(v.detach().numpy().copy())
                          for k, v in theirs.state_dict().items()})
    return ours, theirs


def compare_modules(ours, theirs, arrays, call, seed=0):
    """call(lib, module, *tensors) -> outputs; compare outputs, input and parameter grads."""
    results = []
    for lib, module in ((hookgrad, ours), (torch, theirs)):
        inputs = [lib.tensor(a.copy(), requires_grad=a.dtype.kind == "f") for a in arrays]
        outputs = [o for o in call(lib, module, *inputs) if o is not None]
        rng = np.random.default_rng(seed)
        total = sum((o * lib.tensor(rng.standard_normal(tuple(o.shape)))).sum() for o in outputs)
        total.backward()
        results.append((outputs, [t.grad for t in inputs if t.requires_grad],
                        dict(module.named_parameters())))
    (h_out, h_in, h_params), (t_out, t_in, t_params) = results
    assert len(h_out) == len(t_out)
    for h, t in zip(h_out, t_out):
        assert_close(h, t, what="output")
    for h, t in zip(h_in, t_in):
        assert_close(h, t, what="input grad")
    assert list(h_params) == list(t_params)
    for name, t in t_params.items():
        assert_close(h_params[name].grad, t.grad, what=name)


MHA = {
    "defaults": ({}, {}),
    "batch first, no weights": ({"batch_first": True}, {"need_weights": False}),
    "per-head weights": ({}, {"average_attn_weights": False}),
    "bool attn mask": ({}, {"attn_mask": "bool"}),
    "float attn mask, fused": ({"batch_first": True}, {"attn_mask": "float",
                                                       "need_weights": False}),
    "key padding": ({}, {"key_padding_mask": True}),
    "key padding, fused": ({"batch_first": True}, {"key_padding_mask": True,
                                                   "need_weights": False}),
    "kdim and vdim": ({"kdim": 5, "vdim": 3}, {}),
    "no bias": ({"bias": False}, {}),
    "bias kv and zero attention": ({"add_bias_kv": True, "add_zero_attn": True},
                                   {"key_padding_mask": True, "attn_mask": "float"}),
    "causal hint": ({"batch_first": True}, {"attn_mask": "causal", "is_causal": True,
                                            "need_weights": False}),
}


@pytest.mark.parametrize("case", list(MHA))
def test_multihead_attention(rng, case):
    options, call_options = MHA[case]
    embed, heads, length, batch = 8, 2, 5, 3
    ours, theirs = pair("MultiheadAttention", embed, heads, **options)
    assert repr(ours) == repr(theirs)
    first = options.get("batch_first", False)
    shape = (batch, length, embed) if first else (length, batch, embed)
    query = rng.standard_normal(shape)
    if "kdim" in options:
        key_shape = (length + 1, batch, options["kdim"])
        value_shape = (length + 1, batch, options["vdim"])
        key, value = rng.standard_normal(key_shape), rng.standard_normal(value_shape)
        source = length + 1
    else:
        key = value = None
        source = length
    padding = np.zeros((batch, source), dtype=bool)
    padding[1, -2:] = True
    masks = {"bool": np.triu(np.ones((length, source), dtype=bool), 1),
             "float": rng.standard_normal((length, source)),
             "causal": np.triu(np.full((length, source), -np.inf), 1)}
    arrays = [query] + ([key, value] if key is not None else [])

    def call(lib, module, q, *kv):
        k, v = kv if kv else (q, q)
        kwargs = {k_: v_ for k_, v_ in call_options.items()
                  if k_ not in ("attn_mask", "key_padding_mask")}
        if "attn_mask" in call_options:
            kwargs["attn_mask"] = lib.tensor(masks[call_options["attn_mask"]])
        if call_options.get("key_padding_mask"):
            kwargs["key_padding_mask"] = lib.tensor(padding)
        return module(q, k, v, **kwargs)
    compare_modules(ours, theirs, arrays, call)


def test_multihead_attention_unbatched_and_eval(rng):
    ours, theirs = pair("MultiheadAttention", 6, 3, dropout=0.5)
    ours.eval(), theirs.eval()
    compare_modules(ours, theirs, [rng.standard_normal((4, 6))],
                    lambda lib, m, q: m(q, q, q))


LAYER = {
    "post-norm relu": {},
    "pre-norm gelu": {"norm_first": True, "activation": "gelu"},
    "batch first": {"batch_first": True},
    "module activation": {"activation": "module"},
}


@pytest.mark.parametrize("case", list(LAYER))
def test_transformer_encoder_layer(rng, case):
    options = dict(LAYER[case])
    if options.get("activation") == "module":
        ours, theirs = pair("TransformerEncoderLayer", 8, 2, 16, dropout=0.0)
        ours.activation, theirs.activation = hookgrad.nn.GELU(), torch.nn.GELU()
    else:
        ours, theirs = pair("TransformerEncoderLayer", 8, 2, 16, dropout=0.0, **options)
    assert repr(ours) == repr(theirs)
    padding = np.zeros((3, 5), dtype=bool)
    padding[0, -1] = True

    def call(lib, module, src):
        return (module(src, src_key_padding_mask=lib.tensor(padding)),)
    shape = (3, 5, 8) if options.get("batch_first") else (5, 3, 8)
    compare_modules(ours, theirs, [rng.standard_normal(shape)], call)


def test_transformer_encoder_layer_with_causal_mask(rng):
    ours, theirs = pair("TransformerEncoderLayer", 8, 4, 12, dropout=0.0, batch_first=True)
    mask = np.triu(np.full((5, 5), -np.inf), 1)
    compare_modules(ours, theirs, [rng.standard_normal((2, 5, 8))],
                    lambda lib, m, x: (m(x, src_mask=lib.tensor(mask), is_causal=True),))


def test_transformer_encoder_stack(rng):
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    theirs = torch.nn.TransformerEncoder(layer, 2, norm=torch.nn.LayerNorm(8),
                                         enable_nested_tensor=False).double()
    ours = hookgrad.nn.TransformerEncoder(
        hookgrad.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True), 2,
        norm=hookgrad.nn.LayerNorm(8), enable_nested_tensor=False).double()
    ours.load_state_dict({k: hookgrad.tensor(v.detach().numpy().copy())
                          for k, v in theirs.state_dict().items()})
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    compare_modules(ours, theirs, [rng.standard_normal((2, 4, 8))], lambda lib, m, x: (m(x),))


def test_transformer_activation_string_is_checked():
    for lib in (hookgrad, torch):
        with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
            lib.nn.TransformerEncoderLayer(8, 2, activation="tanh")


def test_multihead_attention_init_distributions():
    hookgrad.manual_seed(0)
    layer = hookgrad.nn.MultiheadAttention(64, 4)
    weight = layer.in_proj_weight.detach().numpy()
    bound = np.sqrt(6 / (64 + 3 * 64))  # xavier_uniform_ on the (3E, E) packed weight
    assert np.abs(weight).max() <= bound and abs(weight.std() - bound / np.sqrt(3)) < 0.01
    assert not layer.in_proj_bias.detach().numpy().any()
    assert not layer.out_proj.bias.detach().numpy().any()


GRAPHS = {
    "attention with weights": lambda lib: lib.nn.MultiheadAttention(8, 2, batch_first=True),
    "fused attention": lambda lib: lib.nn.MultiheadAttention(8, 2, batch_first=True),
    "encoder layer": lambda lib: lib.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0,
                                                                batch_first=True),
    "pre-norm encoder layer": lambda lib: lib.nn.TransformerEncoderLayer(
        8, 2, 16, dropout=0.0, norm_first=True, activation="gelu", batch_first=True),
}


@pytest.mark.parametrize("case", list(GRAPHS))
def test_backward_graph_has_torch_nodes(case):
    graphs = []
    for lib in (hookgrad, torch):
        module = GRAPHS[case](lib)
        x = lib.randn(3, 5, 8, requires_grad=True)
        padding = lib.zeros(3, 5, dtype=lib.bool)
        if "attention" in case:
            out = module(x, x, x, need_weights=case.startswith("attention"),
                         key_padding_mask=padding)[0]
        else:
            out = module(x, src_key_padding_mask=padding)
        graphs.append(graph_nodes(out))
    assert graphs[0] == graphs[1]
