"""max_unpool1d/2d/3d, lp_pool1d/2d/3d, channel_shuffle, Softmax2d, elu_/leaky_relu_,
max_pool1d_with_indices and TripletMarginWithDistanceLoss against torch."""
import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_same_error, compare, compare_double_backward

R = np.random.default_rng(37)
X4 = R.standard_normal((2, 3, 6, 4))


def F(lib):
    return lib.nn.functional


@pytest.mark.parametrize("nd, shape, kernel, stride, padding", [
    (2, (2, 3, 6, 4), 2, None, 0), (2, (3, 6, 5), 3, 2, 1), (1, (2, 3, 9), 3, 2, 0),
    (1, (3, 8), 2, None, 0), (3, (1, 2, 4, 4, 6), 2, None, 0)])
def test_max_unpool(nd, shape, kernel, stride, padding):
    x = R.standard_normal(shape)
    pool = f"max_pool{nd}d"
    unpool = f"max_unpool{nd}d"

    def run(lib, a):
        values, indices = getattr(F(lib), pool)(a, kernel, stride, padding, return_indices=True)
        return getattr(F(lib), unpool)(values, indices, kernel, stride, padding,
                                       output_size=a.shape[-nd:])

    compare(run, x)
    compare(run, x.astype(np.float32))
    compare_double_backward(run, x)

    def module(lib, a):
        values, indices = getattr(F(lib), pool)(a, kernel, stride, padding, return_indices=True)
        layer = getattr(lib.nn, f"MaxUnpool{nd}d")(kernel, stride, padding)
        return layer(values, indices, output_size=a.shape[-nd:])

    compare(module, x)
    if padding == 0 and stride is None:  # the default size is the input's
        compare(lambda lib, a: getattr(F(lib), unpool)(
            *getattr(F(lib), pool)(a, kernel, return_indices=True), kernel), x)


def test_max_unpool_errors():
    def pooled(lib):
        return F(lib).max_pool2d(lib.tensor(X4), 2, return_indices=True)

    assert_same_error(lambda lib: F(lib).max_unpool2d(pooled(lib)[0], pooled(lib)[1].float(), 2))
    assert_same_error(lambda lib: F(lib).max_unpool2d(pooled(lib)[0], pooled(lib)[1][..., :1], 2))
    assert_same_error(lambda lib: F(lib).max_unpool2d(pooled(lib)[0], pooled(lib)[1], 2,
                                                      output_size=(19, 9)))
    assert_same_error(lambda lib: F(lib).max_unpool2d(pooled(lib)[0][0, 0],
                                                      pooled(lib)[1][0, 0], 2))
    big = lambda lib: pooled(lib)[1].index_fill(3, lib.tensor([1]), 500)  # noqa: E731
    assert_same_error(lambda lib: F(lib).max_unpool2d(pooled(lib)[0][:1, :1, :1, :1],
                                                      big(lib)[:1, :1, :1, 1:2], 2))


@pytest.mark.parametrize("norm", [1, 2, 3.5, float("inf")])
@pytest.mark.parametrize("nd", [1, 2, 3])
def test_lp_pool(nd, norm):
    shape = {1: (2, 3, 8), 2: (2, 3, 6, 4), 3: (1, 2, 4, 4, 6)}[nd]
    x = np.abs(R.standard_normal(shape)) + 0.1
    compare(lambda lib, a: getattr(F(lib), f"lp_pool{nd}d")(a, norm, 2), x)
    compare(lambda lib, a: getattr(F(lib), f"lp_pool{nd}d")(a, norm, 3, 1, True),
            x.astype(np.float32))
    compare(lambda lib, a: getattr(lib.nn, f"LPPool{nd}d")(norm, 2)(a), x)
    ours, theirs = hookgrad.nn.LPPool2d(norm, 3, 1), torch.nn.LPPool2d(norm, 3, 1)
    assert repr(ours) == repr(theirs)


def test_channel_shuffle_and_softmax2d():
    compare(lambda lib, a: F(lib).channel_shuffle(a, 3), R.standard_normal((2, 6, 2, 3)))
    compare(lambda lib, a: lib.nn.ChannelShuffle(2)(a), R.standard_normal((2, 4, 3)))
    compare_double_backward(lambda lib, a: F(lib).channel_shuffle(a, 2), X4[:, :2])
    names = [F(lib).channel_shuffle(lib.tensor(X4[:, :2], requires_grad=True), 2).grad_fn.name()
             for lib in (torch, hookgrad)]
    assert names[0] == names[1]
    for groups, x in ((0, X4), (2, X4), (2, X4[0, 0])):
        assert_same_error(lambda lib: F(lib).channel_shuffle(lib.tensor(x), groups))
    compare(lambda lib, a: lib.nn.Softmax2d()(a), X4)
    compare(lambda lib, a: lib.nn.Softmax2d()(a), X4[0].astype(np.float32))
    assert_same_error(lambda lib: lib.nn.Softmax2d()(lib.tensor(X4[0, 0])))
    assert repr(hookgrad.nn.ChannelShuffle(2)) == repr(torch.nn.ChannelShuffle(2))


def test_in_place_activations_and_pool_with_indices():
    compare(lambda lib, a: F(lib).elu_(a * 1, 0.5), X4)
    compare(lambda lib, a: F(lib).leaky_relu_(a * 1, 0.2), X4)
    compare(lambda lib, a: F(lib).max_pool1d_with_indices(a, 2), X4[0])


def test_triplet_margin_with_distance_loss():
    a, p, n = (R.standard_normal((4, 5)) for _ in range(3))
    compare(lambda lib, x, y, z: F(lib).triplet_margin_with_distance_loss(x, y, z), a, p, n)
    compare(lambda lib, x, y, z: F(lib).triplet_margin_with_distance_loss(
        x, y, z, distance_function=lambda u, v: (u - v).abs().sum(-1), margin=0.5, swap=True,
        reduction="none"), a, p, n)
    compare(lambda lib, x, y, z: lib.nn.TripletMarginWithDistanceLoss(
        distance_function=lib.nn.PairwiseDistance(p=1), reduction="sum")(x, y, z), a, p, n)
    assert repr(hookgrad.nn.TripletMarginWithDistanceLoss()) == repr(
        torch.nn.TripletMarginWithDistanceLoss())
    assert_same_error(lambda lib: F(lib).triplet_margin_with_distance_loss(
        lib.tensor(a), lib.tensor(p), lib.tensor(n), margin=0))
    assert_same_error(lambda lib: F(lib).triplet_margin_with_distance_loss(
        lib.tensor(a), lib.tensor(p[0]), lib.tensor(n)))
    assert_same_error(lambda lib: lib.nn.TripletMarginWithDistanceLoss(margin=-1.0))
