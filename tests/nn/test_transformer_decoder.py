"""TransformerDecoderLayer, TransformerDecoder and Transformer against torch: parameter names,
repr, outputs and every gradient, for norm_first, activations, batch_first, masks and causality."""
from __future__ import annotations

import contextlib
import itertools
import warnings

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, assert_same_error


def pair(name: str, *args, build=None, **kwargs):
    """The torch module (float64, biases nudged off zero) and a hookgrad copy of it."""
    torch.manual_seed(0)
    make = build or (lambda lib: getattr(lib.nn, name)(*args, **kwargs))
    theirs = make(torch).double()
    ours = make(hookgrad).double()
    with torch.no_grad():
        for p in theirs.parameters():
            p.add_(torch.randn(p.shape, dtype=p.dtype) * 0.1)
    ours.load_state_dict({k: hookgrad.tensor(v.detach().numpy().copy())
                          for k, v in theirs.state_dict().items()})
    return ours, theirs


def compare_modules(ours, theirs, arrays, call, seed=0, differentiable=2):
    """call(lib, module, *tensors) -> output; compare output, input and parameter grads.
    The first ``differentiable`` arrays require grad; the rest are masks (or None)."""
    results = []
    for lib, module in ((hookgrad, ours), (torch, theirs)):
        inputs = [None if a is None else lib.tensor(a.copy(), requires_grad=i < differentiable)
                  for i, a in enumerate(arrays)]
        output = call(lib, module, *inputs)
        rng = np.random.default_rng(seed)
        (output * lib.tensor(rng.standard_normal(tuple(output.shape)))).sum().backward()
        grads = [t.grad for t in inputs if t is not None and t.requires_grad]
        results.append((output, grads, {n: p.grad for n, p in module.named_parameters()}))
    (h_out, h_in, h_params), (t_out, t_in, t_params) = results
    assert_close(h_out, t_out, what="output")
    for h, t in zip(h_in, t_in):
        assert_close(h, t, what="input grad")
    assert list(h_params) == list(t_params)
    for name, t in t_params.items():
        if t is None:
            assert h_params[name] is None or not np.any(h_params[name].numpy()), name
        else:
            assert_close(h_params[name], t, what=f"grad of {name}")


def causal(size: int) -> np.ndarray:
    return torch.nn.Transformer.generate_square_subsequent_mask(size, dtype=torch.float64).numpy()


ACTIVATIONS = {"relu": lambda lib: "relu", "gelu": lambda lib: "gelu",
               "callable": lambda lib: lib.nn.functional.silu,
               "module": lambda lib: lib.nn.Tanh()}


@pytest.mark.parametrize("norm_first,batch_first,activation",
                         list(itertools.product([False, True], [False, True], ACTIVATIONS)))
def test_decoder_layer_matches_torch(norm_first, batch_first, activation):
    ours, theirs = pair("TransformerDecoderLayer", build=lambda lib: lib.nn.TransformerDecoderLayer(
        8, 2, dim_feedforward=16, dropout=0.0, activation=ACTIVATIONS[activation](lib),
        batch_first=batch_first, norm_first=norm_first))
    rng = np.random.default_rng(0)
    tgt = rng.standard_normal((2, 4, 8) if batch_first else (4, 2, 8))
    memory = rng.standard_normal((2, 5, 8) if batch_first else (5, 2, 8))
    compare_modules(ours, theirs, [tgt, memory], lambda lib, m, t, mem: m(t, mem))


def test_decoder_layer_masks_and_causality():
    ours, theirs = pair("TransformerDecoderLayer", 8, 2, 16, 0.0, batch_first=True)
    rng = np.random.default_rng(1)
    tgt, memory = rng.standard_normal((2, 4, 8)), rng.standard_normal((2, 5, 8))
    tgt_padding = np.array([[False, False, False, True], [False, False, False, False]])
    memory_padding = np.array([[False, False, True, True, True], [False] * 5])
    memory_mask = rng.standard_normal((4, 5))

    def call(lib, module, t, mem, tgt_mask, memory_mask, tgt_pad, mem_pad):
        return module(t, mem, tgt_mask=tgt_mask, memory_mask=memory_mask,
                      tgt_key_padding_mask=tgt_pad, memory_key_padding_mask=mem_pad,
                      tgt_is_causal=True)

    compare_modules(ours, theirs, [tgt, memory, causal(4), memory_mask, tgt_padding,
                                   memory_padding], call)
    compare_modules(ours, theirs, [tgt, memory, causal(4), None, None, None], call)


def test_decoder_layer_unbatched():
    ours, theirs = pair("TransformerDecoderLayer", 8, 2, 16, 0.0, norm_first=True)
    rng = np.random.default_rng(2)
    compare_modules(ours, theirs, [rng.standard_normal((4, 8)), rng.standard_normal((3, 8))],
                    lambda lib, m, t, mem: m(t, mem))


@pytest.mark.parametrize("tgt_is_causal", [None, True, False])
def test_decoder_stack_with_norm(tgt_is_causal):
    def build(lib):
        layer = lib.nn.TransformerDecoderLayer(8, 2, 16, 0.0)
        return lib.nn.TransformerDecoder(layer, 2, norm=lib.nn.LayerNorm(8))

    ours, theirs = pair("TransformerDecoder", build=build)
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((4, 2, 8)), rng.standard_normal((3, 2, 8)), causal(4)]
    compare_modules(ours, theirs, arrays, lambda lib, m, t, mem, mask: m(
        t, mem, tgt_mask=mask, tgt_is_causal=tgt_is_causal))
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("batch_first,norm_first", list(itertools.product([False, True],
                                                                          [False, True])))
def test_transformer_matches_torch(batch_first, norm_first):
    ours, theirs = pair("Transformer", d_model=8, nhead=2, num_encoder_layers=2,
                        num_decoder_layers=1, dim_feedforward=16, dropout=0.0,
                        batch_first=batch_first, norm_first=norm_first)
    rng = np.random.default_rng(4)
    src = rng.standard_normal((2, 5, 8) if batch_first else (5, 2, 8))
    tgt = rng.standard_normal((2, 3, 8) if batch_first else (3, 2, 8))
    src_padding = np.array([[False] * 5, [False, False, False, True, True]])

    def call(lib, module, s, t, mask, padding):
        return module(s, t, tgt_mask=mask, src_key_padding_mask=padding,
                      memory_key_padding_mask=padding)

    compare_modules(ours, theirs, [src, tgt, causal(3), src_padding], call)


def test_transformer_structure_repr_and_state_dict():
    kwargs = dict(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=2,
                  dim_feedforward=16, activation="gelu", bias=False)
    ours, theirs = hookgrad.nn.Transformer(**kwargs), torch.nn.Transformer(**kwargs)
    assert repr(ours) == repr(theirs)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    assert (ours.d_model, ours.nhead, ours.batch_first) == (8, 2, False)


def test_transformer_reinitialises_matrices_with_xavier():
    """Every parameter with more than one dimension is drawn from xavier_uniform_ after
    construction; LayerNorm weights stay ones and biases keep their own init."""
    model = hookgrad.nn.Transformer(8, 2, 1, 1, 16)
    for name, parameter in model.named_parameters():
        values = parameter.detach().numpy()
        if values.ndim > 1:
            bound = np.sqrt(6.0 / sum(values.shape))
            assert np.abs(values).max() <= bound, name
        elif "norm" in name and name.endswith("weight"):
            assert np.all(values == 1), name


def test_custom_encoder_and_decoder_are_used():
    class Encoder(hookgrad.nn.Module):
        def forward(self, src, **kwargs):
            return src

    class Decoder(hookgrad.nn.Module):
        def forward(self, tgt, memory, **kwargs):
            return tgt + memory.sum()

    encoder, decoder = Encoder(), Decoder()
    model = hookgrad.nn.Transformer(8, 2, custom_encoder=encoder, custom_decoder=decoder)
    assert model.encoder is encoder and model.decoder is decoder
    src, tgt = hookgrad.ones(3, 1, 8), hookgrad.zeros(2, 1, 8)
    assert np.allclose(model(src, tgt).numpy(), 24.0)


@pytest.mark.parametrize("size", [1, 4])
def test_generate_square_subsequent_mask(size):
    for dtype in (None, "float64"):
        ours = hookgrad.nn.Transformer.generate_square_subsequent_mask(
            size, dtype=None if dtype is None else getattr(hookgrad, dtype))
        theirs = torch.nn.Transformer.generate_square_subsequent_mask(
            size, dtype=None if dtype is None else getattr(torch, dtype))
        assert_close(ours, theirs)


def test_transformer_errors():
    def model(lib, **kwargs):
        torch.manual_seed(0)
        return lib.nn.Transformer(8, 2, 1, 1, 16, **kwargs)

    assert_same_error(lambda lib: model(lib)(lib.randn(5, 2, 8), lib.randn(3, 3, 8)))
    assert_same_error(lambda lib: model(lib, batch_first=True)(lib.randn(2, 5, 8),
                                                               lib.randn(3, 3, 8)))
    assert_same_error(lambda lib: model(lib)(lib.randn(5, 2, 8), lib.randn(3, 2, 6)))
    assert_same_error(lambda lib: lib.nn.TransformerDecoderLayer(8, 2, activation="tanh"))
    assert_same_error(lambda lib: lib.nn.TransformerDecoderLayer(8, 2, 16, 0.0)(
        lib.randn(3, 1, 8), lib.randn(2, 1, 8), tgt_is_causal=True))


@pytest.mark.parametrize("batch_first,padded_rows", [(True, [3, 5]), (True, [5, 5]),
                                                     (False, [3, 5])])
def test_encoder_inference_zeroes_padding_like_torch(batch_first, padded_rows):
    """torch's inference path (nested tensors) returns zeros at padded positions before the
    final norm; hookgrad reproduces the result, and not in training or when grad is needed."""
    def build(lib):
        layer = lib.nn.TransformerEncoderLayer(8, 2, 16, 0.0, batch_first=batch_first)
        return lib.nn.TransformerEncoder(layer, 2, norm=lib.nn.LayerNorm(8))

    with pytest.warns() if not batch_first else _no_warning():
        ours, theirs = pair("TransformerEncoder", build=build)
    ours.eval()
    theirs.eval()
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 5, 8) if batch_first else (5, 2, 8))
    padding = np.arange(5)[None, :] >= np.array(padded_rows)[:, None]
    outputs = []
    for lib, module in ((hookgrad, ours), (torch, theirs)):
        with lib.no_grad():
            outputs.append(module(lib.tensor(x), src_key_padding_mask=lib.tensor(padding)))
    assert_close(outputs[0], outputs[1])
    compare_modules(ours, theirs, [x, padding], lambda lib, m, t, p: m(
        t, src_key_padding_mask=p), differentiable=1)


@contextlib.contextmanager
def _no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def test_encoder_warns_like_torch_when_nested_tensors_are_off():
    for lib in (torch, hookgrad):
        with pytest.warns(UserWarning, match="self.use_nested_tensor is False because "
                                             "encoder_layer.norm_first was True"):
            encoder = lib.nn.TransformerEncoder(
                lib.nn.TransformerEncoderLayer(8, 2, batch_first=True, norm_first=True), 1)
        assert encoder.use_nested_tensor is False


def test_default_init_equals_torch():
    hookgrad.manual_seed(3)
    torch.manual_seed(3)
    assert np.array_equal(hookgrad.nn.init.xavier_uniform_(hookgrad.empty(6, 5)).numpy(),
                          torch.nn.init.xavier_uniform_(torch.empty(6, 5)).numpy())
    states = []
    for lib in (hookgrad, torch):
        lib.manual_seed(5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = lib.nn.Transformer(8, 2, 1, 2, 16)
        states.append({k: v.detach().numpy() for k, v in model.state_dict().items()})
    assert list(states[0]) == list(states[1])
    for name in states[1]:
        assert np.array_equal(states[0][name], states[1][name]), name


def test_encoder_layer_activation_flag_matches_torch():
    def flags(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return [lib.nn.TransformerEncoderLayer(8, 2, activation=a).activation_relu_or_gelu
                    for a in ("relu", "gelu", lib.nn.ReLU(), lib.nn.GELU(), lib.nn.Tanh(),
                              lib.nn.functional.silu)]

    assert flags(hookgrad) == flags(torch)
