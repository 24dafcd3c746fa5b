"""The nn ops under their torch.* names (positional ATen argument order, the reduction as an
enum defaulting to none, pools returning indices), against torch on the same inputs."""
import numpy as np
import pytest
import torch

import hookgrad
from tests.conftest import compare, grad_fn_chain

RNG = np.random.default_rng(0)


def _data(*shape):
    return RNG.standard_normal(shape)


CASES = {
    "adaptive_avg_pool1d": (lambda lib, x: lib.adaptive_avg_pool1d(x, 3), [_data(2, 3, 8)]),
    "adaptive_max_pool1d": (lambda lib, x: lib.adaptive_max_pool1d(x, 3), [_data(2, 3, 8)]),
    "avg_pool1d": (lambda lib, x: lib.avg_pool1d(x, 3, 2, 1, True, False), [_data(2, 3, 9)]),
    "max_pool1d": (lambda lib, x: lib.max_pool1d(x, 2), [_data(2, 3, 8)]),
    "max_pool1d_strided": (lambda lib, x: lib.max_pool1d(x, 3, 2, 1, 1, True), [_data(1, 2, 9)]),
    "max_pool1d_with_indices": (lambda lib, x: lib.max_pool1d_with_indices(x, 2, 1),
                                [_data(2, 3, 7)]),
    "max_pool3d": (lambda lib, x: lib.max_pool3d(x, 2), [_data(1, 2, 4, 4, 4)]),
    "bilinear": (lambda lib, a, b, w, c: lib.bilinear(a, b, w, c),
                 [_data(4, 3), _data(4, 2), _data(5, 3, 2), _data(5)]),
    "channel_shuffle": (lambda lib, x: lib.channel_shuffle(x, 2), [_data(2, 4, 3, 3)]),
    "conv_transpose3d": (lambda lib, x, w: lib.conv_transpose3d(x, w, None, 2),
                         [_data(1, 2, 3, 3, 3), _data(2, 3, 2, 2, 2)]),
    "pixel_shuffle": (lambda lib, x: lib.pixel_shuffle(x, 2), [_data(1, 8, 3, 3)]),
    "pixel_unshuffle": (lambda lib, x: lib.pixel_unshuffle(x, 2), [_data(1, 2, 4, 4)]),
    "prelu": (lambda lib, x, w: lib.prelu(x, w), [_data(2, 3, 4), _data(3)]),
    "instance_norm": (lambda lib, x, w, b: lib.instance_norm(x, w, b, None, None, True, 0.1,
                                                              1e-5, False),
                      [_data(2, 3, 5), _data(3), _data(3)]),
    "rms_norm": (lambda lib, x, w: lib.rms_norm(x, [4], w, 1e-6), [_data(3, 4), _data(4)]),
    "rms_norm_default_eps": (lambda lib, x: lib.rms_norm(x, (2, 4)), [_data(3, 2, 4)]),
    "constant_pad_nd": (lambda lib, x: lib.constant_pad_nd(x, (1, 2, 0, 1), 0.5),
                        [_data(2, 3, 4)]),
}
LOSSES = {
    "kl_div": (lambda lib, x, t, r: lib.kl_div(x, t, *r), [_data(3, 4), RNG.random((3, 4))]),
    "kl_div_log_target": (lambda lib, x, t, r: lib.kl_div(x, t, *r, log_target=True),
                          [_data(3, 4), _data(3, 4)]),
    "hinge_embedding_loss": (lambda lib, x, t, r: lib.hinge_embedding_loss(x, t, 0.5, *r),
                             [_data(3, 4), np.sign(_data(3, 4))]),
    "margin_ranking_loss": (lambda lib, a, b, t, r: lib.margin_ranking_loss(a, b, t, 0.1, *r),
                            [_data(5), _data(5), np.sign(_data(5))]),
    "cosine_embedding_loss": (
        lambda lib, a, b, t, r: lib.cosine_embedding_loss(a, b, t, 0.2, *r),
        [_data(4, 3), _data(4, 3), np.sign(_data(4))]),
    "triplet_margin_loss": (
        lambda lib, a, p, n, r: lib.triplet_margin_loss(a, p, n, 1.0, 2.0, 1e-6, True, *r),
        [_data(4, 3), _data(4, 3), _data(4, 3)]),
    "poisson_nll_loss": (lambda lib, x, t, r: lib.poisson_nll_loss(x, t, True, True, 1e-8,
                                                                   *(r or (0,))),
                         [_data(3, 4), RNG.random((3, 4)) * 3]),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_top_level_nn_op(name, dtype):
    fn, arrays = CASES[name]
    compare(fn, *[a.astype(dtype) for a in arrays])


@pytest.mark.parametrize("name", sorted(CASES))
def test_top_level_nn_op_graph(name):
    fn, arrays = CASES[name]
    hg, th = compare(fn, *arrays, grad=False, requires_grad=[True] * len(arrays))
    assert [grad_fn_chain(h) for h in hg if h.requires_grad] == [
        grad_fn_chain(t) for t in th if t.requires_grad]


@pytest.mark.parametrize("name", sorted(LOSSES))
@pytest.mark.parametrize("reduction", [(), (0,), (1,), (2,), (7,)])
def test_top_level_loss_reduction_enum(name, reduction):
    fn, arrays = LOSSES[name]
    floating = [a.astype(np.float64) for a in arrays]
    hg, th = compare(lambda lib, *ts: fn(lib, *ts, reduction), *floating,
                     requires_grad=[True] + [False] * (len(arrays) - 1))
    assert grad_fn_chain(hg[0]) == grad_fn_chain(th[0])


def test_binary_cross_entropy_with_logits_enum_default_is_none():
    x, t = _data(5), RNG.random(5)
    for reduction in ((), (None, None, 1), (None, None, 2), (None, None, 9)):
        compare(lambda lib, a, b: lib.binary_cross_entropy_with_logits(a, b, *reduction), x, t,
                requires_grad=[True, False])
    assert hookgrad.binary_cross_entropy_with_logits(
        hookgrad.tensor(x), hookgrad.tensor(t)).shape == torch.Size([5])


def test_native_channel_shuffle_has_no_derivative():
    data = _data(2, 4, 3)
    compare(lambda lib, x: lib.native_channel_shuffle(x, 2), data, grad=False)
    outcomes = []
    for lib in (hookgrad, torch):
        x = lib.tensor(data, requires_grad=True)
        y = lib.native_channel_shuffle(x, 2)
        assert y.grad_fn.name() == "torch::autograd::NotImplemented"
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
        outcomes.append(str(info.value))
    assert outcomes[0] == outcomes[1]


def test_tensor_prelu_method():
    hg, th = compare(lambda lib, x, w: x.prelu(w), _data(2, 3, 4), _data(3))
    assert grad_fn_chain(hg[0]) == grad_fn_chain(th[0])
