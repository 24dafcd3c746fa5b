"""scaled_dot_product_attention (fused and math paths) and multi_head_attention_forward against
torch: values, gradients, masks, causal attention, graphs and saved tensors."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad
from conftest import compare, saved_log


def F(lib):
    return lib.nn.functional


def qkv(rng, q_shape, k_shape=None, v_dim=None):
    k_shape = k_shape or q_shape
    v_shape = k_shape[:-1] + ((v_dim,) if v_dim else k_shape[-1:])
    return rng.standard_normal(q_shape), rng.standard_normal(k_shape), rng.standard_normal(v_shape)


CASES = {
    "plain": ((2, 3, 4, 8), None, None, {}),
    "longer keys": ((2, 3, 4, 8), (2, 3, 6, 8), None, {}),
    "causal": ((2, 2, 5, 4), None, None, {"is_causal": True}),
    "causal rectangular": ((1, 2, 3, 4), (1, 2, 5, 4), None, {"is_causal": True}),
    "scale": ((2, 2, 4, 4), None, None, {"scale": 0.3}),
    "three dims (math)": ((3, 4, 8), None, None, {}),
    "value dim differs (math)": ((2, 3, 4, 8), None, 5, {}),
    "causal math": ((3, 4, 8), None, None, {"is_causal": True}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_sdpa_matches_torch(rng, case):
    q_shape, k_shape, v_dim, kwargs = CASES[case]
    compare(lambda lib, q, k, v: F(lib).scaled_dot_product_attention(q, k, v, **kwargs),
            *qkv(rng, q_shape, k_shape, v_dim))


@pytest.mark.parametrize("kind", ["float", "bool", "float broadcast", "bool 3-d math"])
def test_sdpa_masks(rng, kind):
    shape = (3, 4, 8) if "3-d" in kind else (2, 3, 4, 8)
    mask_shape = (2, 1, 4, 4) if "broadcast" in kind else (4, 4)
    if "float" in kind:
        mask = rng.standard_normal(mask_shape)
    else:
        mask = rng.uniform(0, 1, mask_shape) > 0.3
    if mask.dtype == bool:
        mask[..., 0] = True  # every row may attend somewhere
    compare(lambda lib, q, k, v, m: F(lib).scaled_dot_product_attention(q, k, v, attn_mask=m),
            *qkv(rng, shape), mask, requires_grad=[True, True, True, False])


@pytest.mark.parametrize("shape", [(1, 1, 3, 4), (3, 4)])
def test_sdpa_fully_masked_row_gives_zero(rng, shape):
    mask = np.ones((3, 3), dtype=bool)
    mask[1] = False
    compare(lambda lib, q, m: F(lib).scaled_dot_product_attention(q, q, q, attn_mask=m),
            rng.standard_normal(shape), mask, requires_grad=[True, False])


@pytest.mark.parametrize("case", ["plain", "three dims (math)"])
def test_sdpa_graph_and_saved_tensors(rng, case):
    q_shape, k_shape, v_dim, _ = CASES[case]
    arrays = qkv(rng, q_shape, k_shape, v_dim)

    def run(lib):
        q, k, v = (lib.tensor(a, requires_grad=True) for a in arrays)
        sdpa = F(lib).scaled_dot_product_attention
        out = sdpa(q, k, v)
        return out.grad_fn.name(), saved_log(lib, sdpa, q, k, v) if len(q_shape) == 4 else None
    assert run(hookgrad) == run(torch)


def test_sdpa_float32(rng):
    compare(lambda lib, q, k, v: F(lib).scaled_dot_product_attention(q, k, v, is_causal=True),
            *(a.astype(np.float32) for a in qkv(rng, (2, 2, 5, 4))))


def test_sdpa_dropout_keeps_expectation(rng):
    hookgrad.manual_seed(0)
    q, k, v = (hookgrad.tensor(a) for a in qkv(rng, (1, 1, 4, 4)))
    plain = F(hookgrad).scaled_dot_product_attention(q, k, v).numpy()
    runs = np.mean([F(hookgrad).scaled_dot_product_attention(q, k, v, dropout_p=0.4).numpy()
                    for _ in range(3000)], axis=0)
    np.testing.assert_allclose(runs, plain, atol=0.1)


def mha_weights(rng, embed, kdim=None):
    return {"in_proj_weight": rng.standard_normal((3 * embed, embed)) / 3,
            "in_proj_bias": rng.standard_normal(3 * embed) / 3,
            "out_proj_weight": rng.standard_normal((embed, embed)) / 3,
            "out_proj_bias": rng.standard_normal(embed) / 3}


MHA = {
    "self attention, weights": dict(self_attn=True, need_weights=True),
    "self attention, fused": dict(self_attn=True, need_weights=False),
    "cross attention": dict(self_attn=False, need_weights=True),
    "per-head weights": dict(self_attn=True, need_weights=True, average_attn_weights=False),
    "key padding": dict(self_attn=True, need_weights=True, padding=True),
    "key padding fused": dict(self_attn=True, need_weights=False, padding=True),
    "float mask fused": dict(self_attn=True, need_weights=False, mask=True),
    "bool mask with weights": dict(self_attn=True, need_weights=True, mask="bool"),
}


@pytest.mark.parametrize("case", list(MHA))
def test_multi_head_attention_forward(rng, case):
    options = MHA[case]
    embed, heads, length, batch = 8, 2, 5, 3
    weights = mha_weights(rng, embed)
    x = rng.standard_normal((length, batch, embed))
    memory = x if options["self_attn"] else rng.standard_normal((length + 1, batch, embed))
    source = memory.shape[0]
    padding = np.zeros((batch, source), dtype=bool)
    padding[:, -2:] = True
    if options.get("mask") == "bool":
        mask = np.triu(np.ones((length, source), dtype=bool), 1)
    else:
        mask = rng.standard_normal((length, source))

    def fn(lib, x, memory, w_in, b_in, w_out, b_out):
        key = x if options["self_attn"] else memory
        out, attn = F(lib).multi_head_attention_forward(
            x, key, key, embed, heads, w_in, b_in, None, None, False, 0.0, w_out, b_out,
            training=True,
            key_padding_mask=lib.tensor(padding) if options.get("padding") else None,
            need_weights=options["need_weights"],
            attn_mask=lib.tensor(mask) if options.get("mask") else None,
            average_attn_weights=options.get("average_attn_weights", True))
        return (out, attn) if attn is not None else out
    compare(fn, x, memory, *weights.values())
