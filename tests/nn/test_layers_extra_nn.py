"""PReLU, Softmin, Threshold, RMSNorm, LocalResponseNorm, AdaptiveMaxPool1d/2d/3d and
BatchNorm3d, functional and module forms, against torch."""
import warnings

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, assert_same_error, compare, compare_double_backward

R = np.random.default_rng(11)
X4 = R.standard_normal((2, 3, 5, 4))


def F(lib):
    return lib.nn.functional


# -- prelu --------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape, slopes", [((2, 3, 5, 4), 3), ((2, 3, 5, 4), 1), ((4, 3), 3),
                                           ((6,), 1), ((2, 3, 4), 3), ((), 1)])
def test_prelu(shape, slopes):
    x, w = R.standard_normal(shape), R.standard_normal(slopes) * .3
    compare(lambda lib, a, b: F(lib).prelu(a, b), x, w)
    compare(lambda lib, a, b: F(lib).prelu(a, b), x.astype(np.float32), w.astype(np.float32))
    compare_double_backward(lambda lib, a, b: F(lib).prelu(a, b), x, w)
    names = [F(lib).prelu(lib.tensor(x, requires_grad=True), lib.tensor(w)).grad_fn.name()
             for lib in (torch, hookgrad)]
    assert names[0] == names[1]


def test_prelu_at_zero_and_gradcheck():
    x = np.array([[-1.0, 0.0, 2.0], [0.0, -3.0, 0.5]])
    compare(lambda lib, a, b: F(lib).prelu(a, b), x, np.array([0.2, -0.1, 0.7]))
    a = hookgrad.tensor(X4[:, :, :2, :2].copy(), requires_grad=True)
    w = hookgrad.tensor(np.array([0.1, 0.3, -0.2]), requires_grad=True)
    assert hookgrad.autograd.gradcheck(hookgrad.nn.functional.prelu, (a, w))
    assert hookgrad.autograd.gradgradcheck(hookgrad.nn.functional.prelu, (a, w))


def test_prelu_errors():
    assert_same_error(lambda lib: F(lib).prelu(lib.tensor(X4), lib.tensor(np.ones(4))))
    assert_same_error(lambda lib: F(lib).prelu(lib.tensor(X4), lib.tensor(np.ones((3, 1)))))
    assert_same_error(lambda lib: F(lib).prelu(lib.tensor(np.ones(5)), lib.tensor(np.ones(5))))
    assert_same_error(lambda lib: F(lib).prelu(lib.tensor(X4), lib.tensor(np.ones(3)).float()))


def test_prelu_module():
    compare(lambda lib, x: lib.nn.PReLU(3, init=0.1).double()(x), X4)
    compare(lambda lib, x: lib.nn.PReLU()(x), X4.astype(np.float32))
    for lib in (torch, hookgrad):
        module = lib.nn.PReLU(3, init=0.1)
        assert repr(module) == "PReLU(num_parameters=3)"
        assert list(module.state_dict()) == ["weight"] and module.weight.shape == (3,)
        assert module.weight.dtype == lib.float32
    assert hookgrad.nn.PReLU(dtype=hookgrad.float64).weight.dtype == hookgrad.float64


# -- softmin, threshold -------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmin(dim):
    compare(lambda lib, x: F(lib).softmin(x, dim), X4)
    compare(lambda lib, x: F(lib).softmin(x, dim, dtype=lib.float64), X4.astype(np.float32))
    compare(lambda lib, x: lib.nn.Softmin(dim)(x), X4.astype(np.float32))
    compare_double_backward(lambda lib, x: F(lib).softmin(x, dim), X4[0, 0])


def test_softmin_implicit_dim_warns():
    for lib in (torch, hookgrad):
        with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
            out = F(lib).softmin(lib.tensor(X4[0]))
        assert_close(out, torch.softmax(-torch.tensor(X4[0]), 0))
        assert repr(lib.nn.Softmin()) == "Softmin(dim=None)"


def test_threshold_module():
    compare(lambda lib, x: lib.nn.Threshold(0.1, 20.0)(x), X4)
    compare(lambda lib, x: lib.nn.Threshold(-0.5, -2.0, inplace=True)(x * 1), X4)
    for args in ((0.1, 20), (0.1, 20, True)):
        assert repr(hookgrad.nn.Threshold(*args)) == repr(torch.nn.Threshold(*args))


# -- rms_norm -------------------------------------------------------------------------------------
@pytest.mark.parametrize("normalized", [(4,), (5, 4), [3, 5, 4]])
def test_rms_norm(normalized):
    weight = R.standard_normal(tuple(normalized))
    compare(lambda lib, x: F(lib).rms_norm(x, normalized), X4)
    compare(lambda lib, x, w: F(lib).rms_norm(x, normalized, w, eps=1e-3), X4, weight)
    compare(lambda lib, x, w: F(lib).rms_norm(x, normalized, w), X4.astype(np.float32),
            weight.astype(np.float32))
    compare_double_backward(lambda lib, x, w: F(lib).rms_norm(x, normalized, w), X4, weight)


def test_rms_norm_half_precision_and_tiny_inputs():
    x = (R.standard_normal((3, 8)) * 1e-5)
    compare(lambda lib, a: F(lib).rms_norm(a, (8,)), x.astype(np.float32), rtol=1e-4)
    compare(lambda lib, a: F(lib).rms_norm(a, (8,)), x.astype(np.float16), grad=False)


def test_rms_norm_errors():
    assert_same_error(lambda lib: F(lib).rms_norm(lib.tensor(X4), (5,)))
    assert_same_error(lambda lib: F(lib).rms_norm(lib.tensor(X4), (3, 4)))
    assert_same_error(lambda lib: F(lib).rms_norm(lib.tensor(X4), 4))
    assert_same_error(lambda lib: F(lib).rms_norm(lib.tensor(X4[0, 0, 0]), (2, 4)))
    assert_same_error(lambda lib: F(lib).rms_norm(lib.tensor(X4), (4,), lib.tensor(np.ones(3))))


def test_rms_norm_module():
    compare(lambda lib, x: lib.nn.RMSNorm(4)(x), X4.astype(np.float32))
    compare(lambda lib, x: lib.nn.RMSNorm([5, 4], eps=1e-2, elementwise_affine=False)(x), X4)
    for args, kwargs in (((4,), {}), (([5, 4],), {"eps": 1e-3, "elementwise_affine": False})):
        ours, theirs = hookgrad.nn.RMSNorm(*args, **kwargs), torch.nn.RMSNorm(*args, **kwargs)
        assert repr(ours) == repr(theirs)
        assert list(ours.state_dict()) == list(theirs.state_dict())


# -- local_response_norm --------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(2, 6, 5), (2, 6, 4, 3), (1, 5, 2, 3, 2)])
@pytest.mark.parametrize("size", [1, 2, 3, 4])
def test_local_response_norm(shape, size):
    x = R.standard_normal(shape)
    compare(lambda lib, a: F(lib).local_response_norm(a, size, alpha=0.5, beta=0.6, k=2.0), x)
    compare(lambda lib, a: lib.nn.LocalResponseNorm(size)(a), x.astype(np.float32))


def test_local_response_norm_double_backward_and_errors():
    compare_double_backward(lambda lib, a: F(lib).local_response_norm(a, 3, alpha=0.3), X4)
    assert_same_error(lambda lib: F(lib).local_response_norm(lib.tensor(X4[0, 0]), 2))
    compare(lambda lib, a: F(lib).local_response_norm(a, 3), np.zeros((2, 0, 3)), grad=False)
    assert repr(hookgrad.nn.LocalResponseNorm(3)) == repr(torch.nn.LocalResponseNorm(3))


# -- adaptive max pooling -------------------------------------------------------------------------
POOLS = [(2, (2, 3, 7, 5), (3, 2)), (2, (3, 6, 6), 4), (2, (2, 2, 5, 7), (7, None)),
         (2, (1, 2, 4, 4), 1), (1, (2, 3, 9), 4), (1, (3, 10), 3), (1, (2, 2, 4), 6),
         (3, (2, 2, 5, 6, 7), (2, 3, 4)), (3, (2, 4, 3, 5), 2)]


@pytest.mark.parametrize("nd, shape, size", POOLS)
def test_adaptive_max_pool(nd, shape, size):
    x = R.standard_normal(shape)
    name = f"adaptive_max_pool{nd}d"
    compare(lambda lib, a: getattr(F(lib), name)(a, size, return_indices=True), x)
    compare(lambda lib, a: getattr(F(lib), name)(a, size), x.astype(np.float32))
    compare(lambda lib, a: getattr(lib.nn, f"AdaptiveMaxPool{nd}d")(size)(a), x)
    compare_double_backward(lambda lib, a: getattr(F(lib), name)(a, size), x)
    names = [getattr(F(lib), name)(lib.tensor(x, requires_grad=True), size).grad_fn.name()
             for lib in (torch, hookgrad)]
    assert names[0] == names[1]


def test_adaptive_max_pool_ties_pick_the_first():
    x = np.zeros((1, 1, 4, 4))
    x[0, 0, 1:3, 1:3] = 1.0
    compare(lambda lib, a: F(lib).adaptive_max_pool2d(a, 3, return_indices=True), x)
    compare(lambda lib, a: F(lib).adaptive_max_pool1d(a, 2, return_indices=True),
            np.ones((1, 2, 5)))


def test_adaptive_max_pool_modules():
    for nd, size in ((1, 3), (2, (2, 3)), (3, 2)):
        for flag in (False, True):
            ours = getattr(hookgrad.nn, f"AdaptiveMaxPool{nd}d")(size, flag)
            theirs = getattr(torch.nn, f"AdaptiveMaxPool{nd}d")(size, flag)
            assert repr(ours) == repr(theirs) and ours.return_indices == flag
    compare(lambda lib, a: lib.nn.AdaptiveMaxPool2d((2, 3), return_indices=True)(a), X4)


def test_adaptive_max_pool_errors():
    assert_same_error(lambda lib: F(lib).adaptive_max_pool2d(lib.tensor(X4[0, 0, 0]), 2))
    assert_same_error(lambda lib: F(lib).adaptive_max_pool1d(lib.tensor(X4), 2))
    assert_same_error(lambda lib: F(lib).adaptive_max_pool2d(lib.tensor(np.ones((2, 0, 3))), 2))
    assert_same_error(lambda lib: F(lib).adaptive_max_pool1d(lib.tensor(np.ones((2, 0, 3))), 2))
    assert_same_error(lambda lib: F(lib).adaptive_max_pool2d(lib.tensor(X4[0]), (2, 3, 4)))
    assert_same_error(lambda lib: F(lib).adaptive_max_pool2d(lib.tensor(X4), (2, 3, 4)))
    assert_same_error(lambda lib: F(lib).adaptive_max_pool1d(lib.tensor(X4[0]), (2, 3)))
    assert_same_error(lambda lib: F(lib).adaptive_max_pool3d(lib.tensor(X4[0, 0]), 2))


# -- BatchNorm3d ----------------------------------------------------------------------------------
def test_batch_norm_3d():
    x = R.standard_normal((3, 4, 2, 3, 2))

    def run(lib, a):
        module = lib.nn.BatchNorm3d(4, momentum=0.3).double()
        out = module(a)
        module.eval()
        return out, module(a * 2), module.running_mean, module.running_var

    compare(run, x)
    ours, theirs = hookgrad.nn.BatchNorm3d(4), torch.nn.BatchNorm3d(4)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert_same_error(lambda lib: lib.nn.BatchNorm3d(4)(lib.tensor(X4)))


def test_new_layers_are_visible_in_nn():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("PReLU", "Softmin", "Threshold", "RMSNorm", "LocalResponseNorm",
                     "BatchNorm3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "KLDivLoss",
                     "ZeroPad2d", "CircularPad3d"):
            assert getattr(hookgrad.nn, name).__name__ == name
            assert getattr(hookgrad.nn.modules, name) is getattr(hookgrad.nn, name)
