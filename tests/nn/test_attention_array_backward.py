"""The fused attention's first-order backward on arrays (no graph of the gradient wanted), and
its tensor formula under create_graph, against torch: float32 and float64, masks, causal
attention, a fully masked row, broadcast batch dimensions, inputs that need no gradient, and
views of a packed projection as multi-head attention feeds them."""
import contextlib

import numpy as np
import pytest
import torch

import hookgrad

CASES = {
    "plain": ((2, 3, 7, 4), (2, 3, 9, 4), None, False),
    "float mask": ((2, 3, 7, 4), (2, 3, 9, 4), "float", False),
    "float mask per batch and head": ((3, 2, 7, 4), (3, 2, 9, 4), "float4d", False),
    "bool mask with a masked row": ((1, 2, 5, 4), (1, 2, 5, 4), "bool", False),
    "causal": ((2, 2, 6, 8), (2, 2, 6, 8), None, True),
    "broadcast key and value": ((3, 2, 5, 4), (1, 2, 6, 4), None, False),
    # the forward takes exp of the scores as they are unless a score is large or a row's
    # exponentials are all tiny: then it takes each row's max first
    "large scores": ((2, 2, 5, 8), (2, 2, 6, 8), "large", False),
    "a row far below zero": ((2, 2, 5, 4), (2, 2, 6, 4), "far row", False),
}


def _inputs(case, dtype, seed=0):
    q_shape, kv_shape, mask_kind, causal = CASES[case]
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal(s).astype(dtype) for s in (q_shape, kv_shape, kv_shape))
    mask = None
    if mask_kind == "float":
        mask = rng.standard_normal((q_shape[-2], kv_shape[-2])).astype(dtype)
    elif mask_kind == "float4d":
        mask = rng.standard_normal(q_shape[:2] + (q_shape[-2], kv_shape[-2])).astype(dtype)
    elif mask_kind == "large":  # scores well above 20, some above float32's exp range
        q *= dtype(8)
        mask = np.zeros((q_shape[-2], kv_shape[-2]), dtype)
        mask[0, 1] = 100
    elif mask_kind == "far row":
        mask = rng.standard_normal((q_shape[-2], kv_shape[-2])).astype(dtype)
        mask[1] -= 300
    elif mask_kind == "bool":
        mask = rng.uniform(0, 1, (q_shape[-2], kv_shape[-2])) > 0.4
        mask[:, 0] = True
        mask[2] = False  # a row that may attend nowhere: output and gradients 0
    return q, k, v, mask, causal


def _run(lib, case, dtype, needs=(True, True, True), create_graph=False):
    q, k, v, mask, causal = _inputs(case, dtype)
    tensors = [lib.tensor(a, requires_grad=n) for a, n in zip((q, k, v), needs)]
    out = lib.nn.functional.scaled_dot_product_attention(
        *tensors, attn_mask=None if mask is None else lib.tensor(mask), is_causal=causal)
    weight = lib.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)).astype(dtype))
    wanted = [t for t in tensors if t.requires_grad]
    grads = lib.autograd.grad((out * weight).sum(), wanted, create_graph=create_graph)
    return out, grads, wanted


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", list(CASES))
def test_first_order_gradients_match_torch(case, dtype):
    (out_a, grads_a, _), (out_b, grads_b, _) = (_run(lib, case, dtype)
                                                 for lib in (torch, hookgrad))
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out_b.detach().numpy(), out_a.detach().numpy(), rtol=tol, atol=tol)
    for ga, gb in zip(grads_a, grads_b):
        assert tuple(gb.shape) == tuple(ga.shape) and gb.dtype == out_b.dtype
        np.testing.assert_allclose(gb.numpy(), ga.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("needs", [(True, False, False), (False, True, False),
                                   (False, False, True), (False, True, True)])
def test_only_the_wanted_gradients(needs):
    (_, grads_a, _), (_, grads_b, _) = (_run(lib, "float mask", np.float64, needs)
                                        for lib in (torch, hookgrad))
    assert len(grads_b) == len(grads_a)
    for ga, gb in zip(grads_a, grads_b):
        np.testing.assert_allclose(gb.numpy(), ga.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", ["plain", "causal", "float mask"])
def test_double_backward_keeps_the_tensor_formula(case):
    # torch's fused kernel has no double backward; its math path is the oracle
    from torch.nn.attention import SDPBackend, sdpa_kernel
    results = []
    for lib in (torch, hookgrad):
        with sdpa_kernel(SDPBackend.MATH) if lib is torch else contextlib.nullcontext():
            _, grads, wanted = _run(lib, case, np.float64, create_graph=True)
        assert all(g.requires_grad for g in grads)
        second = lib.autograd.grad(sum(g.square().sum() for g in grads), wanted)
        results.append([g.numpy() for g in second])
    for ga, gb in zip(*results):
        np.testing.assert_allclose(gb, ga, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_encoder_layer_gradients_match_torch(dtype):
    # the path of the benchmark's block: batch-first self-attention through a packed
    # projection, GELU feed-forward, post-norm
    x = np.random.default_rng(2).standard_normal((3, 6, 16)).astype(dtype)
    torch.manual_seed(0)
    layers = {torch: torch.nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, activation="gelu",
                                                      batch_first=True)}
    layers[hookgrad] = hookgrad.nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0,
                                                           activation="gelu", batch_first=True)
    layers[hookgrad].load_state_dict({name: hookgrad.tensor(value.detach().numpy())
                                      for name, value in layers[torch].state_dict().items()})
    grads = []
    for lib, layer in layers.items():
        layer = layer.to(getattr(lib, np.dtype(dtype).name))
        inputs = lib.tensor(x, requires_grad=True)
        layer(inputs).square().mean().backward()
        grads.append([inputs.grad.numpy()] + [p.grad.numpy() for p in layer.parameters()])
    tol = 2e-5 if dtype == np.float32 else 1e-11
    for ga, gb in zip(*grads):
        np.testing.assert_allclose(gb, ga, rtol=tol, atol=tol)


@pytest.mark.parametrize("case", ["plain", "float mask", "float mask per batch and head",
                                  "causal"])
def test_split_over_the_batch_matches_torch(case, monkeypatch):
    # a grain of one score makes every batch row a part of its own, over three threads
    from hookgrad.nn.ops import attention
    monkeypatch.setattr(attention, "_GRAIN", 1)
    before = hookgrad.get_num_threads()
    hookgrad.set_num_threads(3)
    try:
        (out_a, grads_a, _), (out_b, grads_b, _) = (_run(lib, case, np.float64)
                                                     for lib in (torch, hookgrad))
    finally:
        hookgrad.set_num_threads(before)
    np.testing.assert_allclose(out_b.detach().numpy(), out_a.detach().numpy(), rtol=1e-12,
                               atol=1e-12)
    for ga, gb in zip(grads_a, grads_b):
        np.testing.assert_allclose(gb.numpy(), ga.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("query_layout", ["contiguous", "transposed"])
def test_gradients_have_torch_layout(query_layout):
    # torch's fused kernel writes each gradient as (batch, length, heads, dim) in memory,
    # whatever the layout of its input
    rng = np.random.default_rng(12)
    query_shape = (2, 3, 5, 4) if query_layout == "contiguous" else (2, 5, 3, 4)
    arrays = [rng.standard_normal(shape).astype(np.float32)
              for shape in (query_shape, (2, 3, 7, 4), (2, 3, 7, 4))]
    strides = []
    for lib in (torch, hookgrad):
        q, k, v = (lib.tensor(a, requires_grad=True) for a in arrays)
        query = q.transpose(1, 2) if query_layout == "transposed" else q
        out = lib.nn.functional.scaled_dot_product_attention(query, k, v)
        grads = lib.autograd.grad(out, [query, k, v], lib.ones_like(out))
        strides.append([g.stride() for g in grads])
    assert strides[1] == strides[0]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_forward_matches_torch(dtype):
    # large values: weights left unnormalised until after the product with v would overflow
    # float16, and exponentials of the raw scores would too
    rng = np.random.default_rng(13)
    q, k = (rng.standard_normal((2, 2, 48, 8)) * 2 for _ in range(2))
    v = rng.standard_normal((2, 2, 48, 8)) * 300
    outs = []
    for lib in (torch, hookgrad):
        tensors = [lib.tensor(a, dtype=getattr(lib, dtype)) for a in (q, k, v)]
        out = lib.nn.functional.scaled_dot_product_attention(*tensors)
        assert out.dtype == getattr(lib, dtype)
        outs.append(out.float().numpy())
    assert np.all(np.isfinite(outs[1]))
    np.testing.assert_allclose(outs[1], outs[0], rtol=2e-2, atol=2e-2 * 300)
