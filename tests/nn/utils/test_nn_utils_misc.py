"""nn.utils' smaller pieces against torch: stateless.functional_call, skip_init, batch-norm
fusion and conv weight memory formats."""
import warnings

import numpy as np
import pytest
import torch

import hookgrad
from tests.conftest import assert_close


def _pair(build, seed=0):
    built = []
    for lib in (torch, hookgrad):
        lib.manual_seed(seed)
        built.append(build(lib))
    return built


def test_stateless_functional_call_warns_and_delegates():
    t_layer, h_layer = _pair(lambda lib: lib.nn.Linear(3, 2).double())
    weight = np.random.default_rng(0).standard_normal((2, 3))
    x = np.ones((4, 3))
    outputs = []
    for lib, layer in ((torch, t_layer), (hookgrad, h_layer)):
        replacement = lib.tensor(weight, requires_grad=True)
        with pytest.warns(FutureWarning, match="`torch.nn.utils.stateless.functional_call` is "
                          "deprecated as of PyTorch 2.0 and will be removed in a future version "
                          "of PyTorch. Please use `torch.func.functional_call` instead which is "
                          "a drop-in replacement."):
            out = lib.nn.utils.stateless.functional_call(layer, {"weight": replacement},
                                                         (lib.tensor(x),))
        out.sum().backward()
        outputs.append((out, replacement.grad, layer.weight))
    for h, t in zip(outputs[1], outputs[0]):
        assert_close(h, t)


def test_skip_init_draws_nothing_and_keeps_the_structure():
    shapes = []
    for lib in (torch, hookgrad):
        lib.manual_seed(1)
        layer = lib.nn.utils.skip_init(lib.nn.Linear, 5, 4, bias=True, dtype=lib.float64)
        shapes.append(([(n, tuple(p.shape), p.dtype.itemsize, type(p).__name__)
                        for n, p in layer.named_parameters()], lib.rand(3).numpy()))
    assert shapes[1][0] == shapes[0][0]
    np.testing.assert_array_equal(shapes[1][1], shapes[0][1])


def test_skip_init_errors_match_torch():
    for lib in (torch, hookgrad):
        with pytest.raises(RuntimeError, match="Module must support a 'device' arg"):
            lib.nn.utils.skip_init(lib.nn.ReLU)
        with pytest.raises(RuntimeError, match="Expected a Module; got <class 'int'>"):
            lib.nn.utils.skip_init(int)


def _bn(lib, features, affine=True):
    norm = lib.nn.BatchNorm2d(features, affine=affine).double()
    rng = np.random.default_rng(2)
    norm.running_mean = lib.tensor(rng.standard_normal(features))
    norm.running_var = lib.tensor(rng.random(features) + 0.5)
    if affine:
        with lib.no_grad():
            norm.weight.copy_(lib.tensor(rng.standard_normal(features)))
            norm.bias.copy_(lib.tensor(rng.standard_normal(features)))
    return norm.eval()


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("affine", [True, False])
def test_fuse_conv_bn_eval_matches_torch(transpose, bias, affine):
    def build(lib):
        kind = lib.nn.ConvTranspose2d if transpose else lib.nn.Conv2d
        conv = kind(2, 3, 3, bias=bias).double().eval()
        return conv, _bn(lib, 3, affine), lib.nn.utils.fuse_conv_bn_eval(conv, _bn(lib, 3, affine),
                                                                          transpose=transpose)
    (t_conv, t_bn, t_fused), (h_conv, h_bn, h_fused) = _pair(build)
    assert type(h_fused.weight) is hookgrad.nn.Parameter and h_fused is not h_conv
    x = np.random.default_rng(3).standard_normal((1, 2, 5, 5))
    assert_close(h_fused.weight, t_fused.weight)
    assert_close(h_fused.bias, t_fused.bias)
    assert_close(h_fused(hookgrad.tensor(x)), t_fused(torch.tensor(x)))
    assert_close(h_fused(hookgrad.tensor(x)), h_bn(h_conv(hookgrad.tensor(x))))


@pytest.mark.parametrize("bias", [True, False])
def test_fuse_linear_bn_eval_matches_torch(bias):
    def build(lib):
        linear = lib.nn.Linear(4, 3, bias=bias).double().eval()
        norm = lib.nn.BatchNorm1d(3).double()
        norm.running_var = lib.full((3,), 2.0, dtype=lib.float64)
        norm.running_mean = lib.arange(3, dtype=lib.float64)
        return lib.nn.utils.fuse_linear_bn_eval(linear, norm.eval())
    t_fused, h_fused = _pair(build)
    assert_close(h_fused.weight, t_fused.weight)
    assert_close(h_fused.bias, t_fused.bias)


def test_fusion_refuses_training_mode():
    for lib in (torch, hookgrad):
        with pytest.raises(AssertionError, match="Fusion only for eval!"):
            lib.nn.utils.fuse_conv_bn_eval(lib.nn.Conv2d(1, 2, 1), lib.nn.BatchNorm2d(2))
        with pytest.raises(AssertionError, match="To fuse, linear.out_features == "):
            lib.nn.utils.fuse_linear_bn_eval(lib.nn.Linear(2, 3).eval(),
                                             lib.nn.BatchNorm1d(2).eval())


@pytest.mark.parametrize("dims", [2, 3])
def test_convert_conv_weight_memory_format_matches_torch(dims):
    def build(lib):
        nn = lib.nn
        conv, conv_t = (nn.Conv2d, nn.ConvTranspose2d) if dims == 2 else \
            (nn.Conv3d, nn.ConvTranspose3d)
        model = nn.Sequential(conv(2, 3, 3), nn.Sequential(conv_t(3, 4, 2)), nn.Linear(2, 2))
        layout = lib.channels_last if dims == 2 else lib.channels_last_3d
        convert = getattr(nn.utils, f"convert_conv{dims}d_weight_memory_format")
        weight = model[0].weight
        assert convert(model, layout) is model and model[0].weight is weight
        return [p.stride() for p in model.parameters()]
    t_strides, h_strides = _pair(build)
    assert h_strides == t_strides


def test_init_dirac_matches_torch():
    for shape, groups in (((4, 2, 3), 1), ((4, 2, 3, 3), 2), ((6, 4, 3, 2, 3), 3),
                          ((2, 5, 3, 3), 1)):
        t, h = torch.empty(shape), hookgrad.empty(shape)
        assert torch.nn.init.dirac_(t, groups) is t
        assert hookgrad.nn.init.dirac_(h, groups) is h
        assert_close(h, t)


def test_init_dirac_errors_match_torch():
    for lib in (torch, hookgrad):
        with pytest.raises(ValueError, match="Only tensors with 3, 4, or 5 dimensions"):
            lib.nn.init.dirac_(lib.empty(3, 3))
        with pytest.raises(ValueError, match="dim 0 must be divisible by groups"):
            lib.nn.init.dirac_(lib.empty(3, 3, 3), groups=2)


@pytest.mark.parametrize("name,args", [("uniform", (-1, 2)), ("normal", (0.5, 2)),
                                       ("constant", (0.3,)), ("eye", ()), ("dirac", ()),
                                       ("xavier_uniform", ()), ("xavier_normal", ()),
                                       ("kaiming_uniform", ()), ("kaiming_normal", ()),
                                       ("orthogonal", ()), ("sparse", (0.5,))])
def test_init_deprecated_aliases_warn_and_draw_as_torch(name, args):
    shape = (3, 3, 3) if name == "dirac" else (4, 3)
    results = []
    for lib in (torch, hookgrad):
        lib.manual_seed(7)
        tensor = lib.empty(shape, dtype=lib.float64)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert getattr(lib.nn.init, name)(tensor, *args) is tensor
        assert [(w.category, str(w.message)) for w in caught] == [
            (FutureWarning, f"`nn.init.{name}` is now deprecated in favor of "
                            f"`nn.init.{name}_`.")]
        assert caught[0].filename == __file__
        results.append(tensor)
    assert_close(results[1], results[0])
    assert name in hookgrad.nn.init.__all__


def test_init_and_utils_export_torch_names():
    assert hookgrad.nn.init.__all__ == torch.nn.init.__all__
    public = {name for name in dir(torch.nn.utils) if not name.startswith("_")}
    assert public <= set(dir(hookgrad.nn.utils))
    for module in ("parametrize", "parametrizations", "fusion", "stateless", "memory_format"):
        assert getattr(hookgrad.nn.utils, module).__all__ == getattr(torch.nn.utils,
                                                                      module).__all__
