"""F.fractional_max_pool2d/3d (+ _with_indices) and nn.FractionalMaxPool2d/3d against torch: the
per-plane samples are torch's draws from the default generator (same seed, same windows, same
generator state after), torch's window starts in the input's dtype, its first-max / last-NaN
choice, indices, gradients, node names, saved attributes and errors."""
import numpy as np
import pytest
import torch

import hookgrad
from tests.conftest import (assert_close, assert_same_error, compare, compare_double_backward,
                            grad_fn_chain)

RNG = np.random.default_rng(5)
TIES = np.round(RNG.standard_normal((2, 3, 9, 10)))  # many equal values in a window
WITH_NAN = np.where(RNG.random((2, 3, 9, 10)) < 0.1, np.nan, RNG.standard_normal((2, 3, 9, 10)))

CASES_2D = {
    "size": ((2, 3, 9, 10), dict(kernel_size=2, output_size=(5, 6))),
    "ratio": ((2, 3, 9, 10), dict(kernel_size=(3, 2), output_ratio=(0.5, 0.7))),
    "ratio_scalar_size": ((2, 3, 9, 10), dict(kernel_size=3, output_size=4)),
    "unbatched": ((3, 11, 8), dict(kernel_size=(2, 3), output_size=(7, 3))),
    "one_output": ((2, 2, 5, 6), dict(kernel_size=2, output_size=(1, 1))),
    "whole_reach": ((1, 2, 6, 7), dict(kernel_size=(3, 2), output_size=(4, 6))),
    "one_by_one": ((2, 2, 6, 5), dict(kernel_size=1, output_size=(6, 5))),
}
CASES_3D = {
    "size": ((2, 2, 7, 8, 6), dict(kernel_size=2, output_size=(4, 5, 3))),
    "ratio": ((2, 2, 9, 8, 7), dict(kernel_size=(3, 2, 2), output_ratio=(0.5, 0.6, 0.4))),
    "unbatched": ((3, 7, 6, 9), dict(kernel_size=(2, 1, 3), output_size=(4, 5, 3))),
    "one_output": ((1, 2, 4, 5, 6), dict(kernel_size=2, output_size=1)),
}


def _pool(nd, kwargs, with_indices=False, seed=11):
    def run(lib, x):
        lib.manual_seed(seed)
        F = lib.nn.functional
        if with_indices:
            pool = F.fractional_max_pool2d_with_indices if nd == 2 else \
                F.fractional_max_pool3d_with_indices
            return pool(x, **kwargs)
        pool = F.fractional_max_pool2d if nd == 2 else F.fractional_max_pool3d
        return pool(x, return_indices=True, **kwargs)
    return run


ALL = [(2, name, *case) for name, case in CASES_2D.items()] + \
      [(3, name, *case) for name, case in CASES_3D.items()]


@pytest.mark.parametrize("nd,name,shape,kwargs", ALL, ids=[f"{a[0]}d-{a[1]}" for a in ALL])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_indices_and_gradients_equal_torchs_for_the_same_seed(nd, name, shape, kwargs,
                                                                      dtype):
    x = RNG.standard_normal(shape).astype(dtype)
    ours, theirs = compare(_pool(nd, kwargs), x, rtol=0 if dtype == np.float64 else None,
                           atol=0 if dtype == np.float64 else None)
    np.testing.assert_array_equal(ours[0].detach().numpy(), theirs[0].detach().numpy())
    np.testing.assert_array_equal(ours[1].numpy(), theirs[1].numpy())
    assert ours[1].dtype == hookgrad.int64


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_window_starts_follow_torchs_rounding_in_the_inputs_dtype(seed, dtype):
    # many seeds, odd sizes: the starts int((i + u) a) - int(u a) must round as torch's do
    x = RNG.standard_normal((3, 4, 23, 17)).astype(dtype)
    compare(_pool(2, dict(kernel_size=(2, 3), output_size=(13, 9)), seed=seed), x, grad=False,
            rtol=0, atol=0)


@pytest.mark.parametrize("data", [TIES, WITH_NAN], ids=["ties", "nan"])
def test_first_maximum_and_last_nan_are_taken_as_torchs(data):
    ours, theirs = compare(_pool(2, dict(kernel_size=3, output_size=(5, 6))), data,
                           rtol=0, atol=0)
    np.testing.assert_array_equal(ours[1].numpy(), theirs[1].numpy())


def test_the_with_indices_form_equals_torchs():
    compare(_pool(3, CASES_3D["size"][1], with_indices=True),
            RNG.standard_normal(CASES_3D["size"][0]), rtol=0, atol=0)


@pytest.mark.parametrize("nd", [2, 3])
def test_the_generator_is_left_where_torchs_is(nd):
    states = []
    for lib in (torch, hookgrad):
        lib.manual_seed(3)
        shape, kwargs = (CASES_2D if nd == 2 else CASES_3D)["size"]
        pool = lib.nn.functional.fractional_max_pool2d if nd == 2 else \
            lib.nn.functional.fractional_max_pool3d
        pool(lib.tensor(RNG.standard_normal(shape)), **kwargs)
        states.append(lib.rand(4).numpy())
    np.testing.assert_array_equal(states[0], states[1])


@pytest.mark.parametrize("nd", [2, 3])
def test_given_samples_are_used_and_pass_gradcheck(nd):
    shape, kwargs = (CASES_2D if nd == 2 else CASES_3D)["size"]
    samples = RNG.random((shape[0], shape[1], nd))
    x = RNG.standard_normal(shape)

    def run(lib, x):
        pool = lib.nn.functional.fractional_max_pool2d if nd == 2 else \
            lib.nn.functional.fractional_max_pool3d
        return pool(x, _random_samples=lib.tensor(samples), **kwargs)
    compare(run, x, rtol=0, atol=0)
    assert hookgrad.autograd.gradcheck(
        lambda t: run(hookgrad, t), (hookgrad.tensor(x, requires_grad=True),))


def test_extra_sample_rows_beyond_the_batch_are_ignored():
    samples = RNG.random((5, 3, 2))
    compare(lambda lib, x: lib.nn.functional.fractional_max_pool2d(
        x, 2, output_size=(4, 4), _random_samples=lib.tensor(samples)),
        RNG.standard_normal((2, 3, 8, 9)), rtol=0, atol=0)


@pytest.mark.parametrize("nd", [2, 3])
def test_node_and_saved_attributes_are_torchs(nd):
    shape, kwargs = (CASES_2D if nd == 2 else CASES_3D)["size"]
    results = []
    for lib in (torch, hookgrad):
        x = lib.tensor(RNG.standard_normal(shape), requires_grad=True)
        out, indices = _pool(nd, kwargs)(lib, x)
        node = out.grad_fn
        results.append((grad_fn_chain(out), tuple(node._saved_kernel_size),
                        tuple(node._saved_output_size), node._saved_self is x,
                        node._saved_result1.numpy().tolist() == indices.numpy().tolist()))
    assert results[0] == results[1]


@pytest.mark.parametrize("nd", [2, 3])
def test_double_backward_is_torchs(nd):
    shape, kwargs = (CASES_2D if nd == 2 else CASES_3D)["size"]
    x = RNG.standard_normal(shape)
    compare_double_backward(_pool(nd, kwargs), x)
    names = []
    for lib in (torch, hookgrad):
        t = lib.tensor(x, requires_grad=True)
        (grad,) = lib.autograd.grad(_pool(nd, kwargs)(lib, t)[0].sum(), t, create_graph=True)
        names.append((grad.grad_fn.name(), tuple(grad.grad_fn._saved_indices.shape)))
    assert names[0] == names[1]


def test_an_empty_batch_gives_an_empty_result():
    compare(_pool(2, dict(kernel_size=2, output_size=(3, 3))), np.zeros((0, 2, 6, 6)))


def _f2(lib, shape, *args, **kwargs):
    return lib.nn.functional.fractional_max_pool2d(lib.randn(*shape), *args, **kwargs)


def _f3(lib, shape, *args, **kwargs):
    return lib.nn.functional.fractional_max_pool3d(lib.randn(*shape), *args, **kwargs)


def _samples(lib, *shape, dtype="float32"):
    return lib.rand(*shape, dtype=getattr(lib, dtype))


ERRORS = {
    "no_size": lambda lib: _f2(lib, (2, 3, 7, 8), 2),
    "height_too_large": lambda lib: _f2(lib, (2, 3, 7, 8), 2, output_size=(7, 5)),
    "width_too_large": lambda lib: _f2(lib, (2, 3, 7, 8), 2, output_size=(4, 8)),
    "kernel_of_three": lambda lib: _f2(lib, (2, 3, 7, 8), (2, 2, 2), output_size=(4, 5)),
    "output_of_three": lambda lib: _f2(lib, (2, 3, 7, 8), 2, output_size=(4, 5, 3)),
    "too_few_dims": lambda lib: _f2(lib, (7, 8), 2, output_size=(4, 5)),
    "too_many_dims": lambda lib: _f2(lib, (1, 2, 3, 7, 8), 2, output_size=(4, 5)),
    "empty_plane": lambda lib: _f2(lib, (2, 3, 0, 8), 2, output_size=(4, 5)),
    "ratio_of_three": lambda lib: _f2(lib, (2, 3, 7, 8), 2, output_ratio=(0.5, 0.5, 0.5)),
    "ratio_scalar": lambda lib: _f2(lib, (2, 3, 7, 8), 2, output_ratio=0.5),
    "ratio_of_one": lambda lib: _f2(lib, (3, 7, 8), 2, output_ratio=[0.5]),
    "samples_depth": lambda lib: _f2(lib, (2, 3, 7, 8), 2, output_size=(4, 5),
                                     _random_samples=_samples(lib, 2, 3, 3)),
    "samples_batch": lambda lib: _f2(lib, (2, 3, 7, 8), 2, output_size=(4, 5),
                                     _random_samples=_samples(lib, 1, 3, 2)),
    "samples_channels": lambda lib: _f2(lib, (2, 3, 7, 8), 2, output_size=(4, 5),
                                        _random_samples=_samples(lib, 2, 2, 3)),
    "samples_dtype": lambda lib: _f2(lib, (2, 3, 7, 8), 2, output_size=(4, 5),
                                     _random_samples=_samples(lib, 1, 2, 3, dtype="float64")),
    "samples_dims": lambda lib: _f2(lib, (2, 3, 7, 8), 2, output_size=(4, 5),
                                    _random_samples=_samples(lib, 6, 2)),
    "size_before_samples": lambda lib: _f2(lib, (2, 3, 7, 8), 2, output_size=(9, 9),
                                           _random_samples=_samples(lib, 2, 3, 3)),
    "negative_output": lambda lib: _f2(lib, (3, 7, 8), 2, output_size=(4, -5)),
    "no_size_3d": lambda lib: _f3(lib, (2, 3, 7, 8, 6), 2),
    "time_too_large": lambda lib: _f3(lib, (2, 3, 7, 8, 6), 2, output_size=(6, 3, 3)),
    "height_too_large_3d": lambda lib: _f3(lib, (2, 3, 7, 8, 6), 2, output_size=(3, 7, 3)),
    "width_before_height_3d": lambda lib: _f3(lib, (2, 3, 7, 8, 6), 2, output_size=(3, 8, 6)),
    "too_few_dims_3d": lambda lib: _f3(lib, (7, 8, 6), 2, output_size=(3, 3, 3)),
    "kernel_of_two_3d": lambda lib: _f3(lib, (2, 3, 7, 8, 6), (2, 2), output_size=(3, 3, 3)),
    "output_of_two_3d": lambda lib: _f3(lib, (2, 3, 7, 8, 6), 2, output_size=(3, 3)),
    "samples_depth_3d": lambda lib: _f3(lib, (2, 3, 7, 8, 6), 2, output_size=(3, 3, 3),
                                        _random_samples=_samples(lib, 2, 3, 2)),
    "empty_plane_3d": lambda lib: _f3(lib, (2, 3, 0, 8, 6), 2, output_size=(3, 3, 3)),
    "module_no_size": lambda lib: lib.nn.FractionalMaxPool2d(2),
    "module_both": lambda lib: lib.nn.FractionalMaxPool2d(2, output_size=3, output_ratio=0.5),
    "module_ratio_range": lambda lib: lib.nn.FractionalMaxPool2d(2, output_ratio=1.5),
    "module_kernel_3d": lambda lib: lib.nn.FractionalMaxPool3d(0, output_ratio=0.5),
    "module_ratio_range_3d": lambda lib: lib.nn.FractionalMaxPool3d(2, output_ratio=(0.5, 1,
                                                                                       0.5)),
    "module_no_size_3d": lambda lib: lib.nn.FractionalMaxPool3d(2),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_are_torchs(name):
    assert_same_error(ERRORS[name])


@pytest.mark.parametrize("nd,kwargs", [
    (2, dict(kernel_size=3, output_ratio=0.5)),
    (2, dict(kernel_size=(2, 3), output_size=(4, 3), return_indices=True)),
    (3, dict(kernel_size=2, output_ratio=(0.5, 0.5, 0.6))),
    (3, dict(kernel_size=2, output_size=3, return_indices=True)),
])
def test_modules_equal_torchs(nd, kwargs):
    shape = (2, 3, 9, 8) if nd == 2 else (2, 3, 8, 7, 9)

    def run(lib, x):
        lib.manual_seed(4)
        layer = (lib.nn.FractionalMaxPool2d if nd == 2 else lib.nn.FractionalMaxPool3d)(**kwargs)
        return layer(x)
    compare(run, RNG.standard_normal(shape), rtol=0, atol=0)
    built = [(lib.nn.FractionalMaxPool2d if nd == 2 else lib.nn.FractionalMaxPool3d)(**kwargs)
             for lib in (torch, hookgrad)]
    assert repr(built[1]) == repr(built[0])
    assert [(layer.kernel_size, layer.output_size, layer.output_ratio, layer.return_indices)
            for layer in built[1:]] == [(built[0].kernel_size, built[0].output_size,
                                         built[0].output_ratio, built[0].return_indices)]


def test_a_module_with_fixed_samples_keeps_them_as_a_buffer():
    samples = RNG.random((2, 3, 2))
    x = RNG.standard_normal((2, 3, 8, 9))
    layers = [lib.nn.FractionalMaxPool2d(2, output_size=(4, 5),
                                         _random_samples=lib.tensor(samples))
              for lib in (torch, hookgrad)]
    assert list(layers[1].state_dict()) == list(layers[0].state_dict())
    assert_close(layers[1](hookgrad.tensor(x)), layers[0](torch.tensor(x)), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_samples_round_as_torchs(dtype):
    # the window starts are worked in the half type, rounded after each operation
    x = RNG.standard_normal((2, 3, 19, 23)).astype(np.float32)
    for seed in range(4):
        results = []
        for lib in (torch, hookgrad):
            t = lib.tensor(x).to(getattr(lib, dtype)).requires_grad_()
            lib.manual_seed(seed)
            out, indices = lib.nn.functional.fractional_max_pool2d(t, 2, output_size=(11, 13),
                                                                   return_indices=True)
            out.float().sum().backward()
            results.append([out.float().detach().numpy(), indices.numpy(),
                            t.grad.float().numpy()])
        for ours, theirs in zip(results[1], results[0]):
            np.testing.assert_array_equal(ours, theirs)
