"""interpolate / Upsample against torch: every mode, size or scale_factor (scalar and per-dim),
align_corners, recompute_scale_factor; values in float64 and float32, gradients, double
backward, node names, errors and the modules' reprs."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_same_error, compare, double_backward


def F(lib):
    return lib.nn.functional


SHAPES = {1: (2, 3, 5), 2: (2, 2, 5, 4), 3: (1, 2, 3, 4, 3)}
LINEAR = {1: "linear", 2: "bilinear", 3: "trilinear"}
SIZES = {1: [7, (3,), 5, 1, 10], 2: [(7, 3), (5, 4), 9, (1, 8), (10, 8)],
         3: [(5, 2, 4), 6, (3, 4, 3), (6, 8, 1)]}
SCALES = {1: [2, 1.5, 0.6, 3.3], 2: [2, (1.7, 0.5), 0.75, (2.0, 3.0), 1.25],
          3: [2, (0.7, 1.5, 2.2), 1.3]}


def _modes(nd):
    modes = [("nearest", None), ("nearest-exact", None), ("area", None),
             (LINEAR[nd], False), (LINEAR[nd], True)]
    if nd == 2:
        modes += [("bicubic", False), ("bicubic", True)]
    return modes


CASES = [(nd, mode, align, "size", size) for nd in SHAPES for mode, align in _modes(nd)
         for size in SIZES[nd]]
SCALE_CASES = [(nd, mode, align, scale, recompute) for nd in SHAPES
               for mode, align in _modes(nd) for scale in SCALES[nd]
               for recompute in (None, True)]


@pytest.mark.parametrize("nd,mode,align,kind,size", CASES)
def test_interpolate_size(rng, nd, mode, align, kind, size):
    x = rng.standard_normal(SHAPES[nd])
    compare(lambda lib, t: F(lib).interpolate(t, size=size, mode=mode, align_corners=align), x)


@pytest.mark.parametrize("nd,mode,align,scale,recompute", SCALE_CASES)
def test_interpolate_scale_factor(rng, nd, mode, align, scale, recompute):
    x = rng.standard_normal(SHAPES[nd])
    compare(lambda lib, t: F(lib).interpolate(t, scale_factor=scale, mode=mode,
                                              align_corners=align,
                                              recompute_scale_factor=recompute), x)


@pytest.mark.parametrize("mode,align", _modes(2))
def test_interpolate_float32(rng, mode, align):
    x = rng.standard_normal((2, 3, 6, 5)).astype(np.float32)
    for kwargs in (dict(size=(11, 7)), dict(scale_factor=(0.5, 1.7)), dict(size=(3, 2))):
        compare(lambda lib, t: F(lib).interpolate(t, mode=mode, align_corners=align, **kwargs),
                x)


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
def test_nearest_float32_index_arithmetic(rng, mode):
    """Scales that are not exact in float32 pick the same neighbours as torch."""
    x = rng.standard_normal((1, 1, 37))
    for scale in (1.1, 0.33, 2.9, 1 / 3, 7.01):
        compare(lambda lib, t: F(lib).interpolate(t, scale_factor=scale, mode=mode), x)
    for size in (3, 11, 74, 111, 12):
        compare(lambda lib, t: F(lib).interpolate(t, size=size, mode=mode), x)


@pytest.mark.parametrize("nd,mode,align", [(nd, m, a) for nd in SHAPES for m, a in _modes(nd)])
def test_interpolate_double_backward(rng, nd, mode, align):
    x = rng.standard_normal(SHAPES[nd])
    size = {1: 8, 2: (7, 3), 3: (4, 5, 2)}[nd]
    double_backward(lambda lib, t: F(lib).interpolate(t, size=size, mode=mode,
                                                      align_corners=align), x)


@pytest.mark.parametrize("nd,mode,align", [(nd, m, a) for nd in SHAPES for m, a in _modes(nd)])
@pytest.mark.parametrize("scale", [2, 0.1])
def test_interpolate_node_names(rng, nd, mode, align, scale):
    names = []
    for lib in (hookgrad, torch):
        t = lib.tensor(rng.standard_normal(SHAPES[nd]), requires_grad=True)
        size = [max(int(s * scale), 1) for s in SHAPES[nd][2:]]
        names.append(F(lib).interpolate(t, size, mode=mode, align_corners=align).grad_fn.name())
    assert names[0] == names[1]


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_interpolate_uint8_nearest(rng, nd):
    x = rng.integers(0, 255, SHAPES[nd]).astype(np.uint8)
    for mode in ("nearest", "nearest-exact"):
        compare(lambda lib, t: F(lib).interpolate(t, scale_factor=1.7, mode=mode), x, grad=False)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int8, np.bool_])
@pytest.mark.parametrize("nd,mode", [(nd, m) for nd in SHAPES for m, a in _modes(nd)
                                     if a is not True])
def test_interpolate_integer_input_is_refused(rng, dtype, nd, mode):
    x = rng.integers(0, 2, SHAPES[nd]).astype(dtype)
    assert_same_error(lambda lib: F(lib).interpolate(lib.tensor(x), scale_factor=2, mode=mode))


@pytest.mark.parametrize("mode,align", _modes(2))
def test_interpolate_float16(rng, mode, align):
    x = rng.standard_normal((1, 2, 5, 4)).astype(np.float16)
    compare(lambda lib, t: F(lib).interpolate(t, size=(7, 3), mode=mode, align_corners=align),
            x, grad=False)


def test_interpolate_non_contiguous_input(rng):
    x = rng.standard_normal((2, 4, 5, 3))
    compare(lambda lib, t: F(lib).interpolate(t.transpose(2, 3), size=(6, 9), mode="bilinear"),
            x)


BAD = [
    dict(size=(4, 4), scale_factor=2),
    dict(),
    dict(size=(4, 4, 4)),
    dict(scale_factor=(2, 2, 2)),
    dict(size=(4.0, 4)),
    dict(size=(4, 4), recompute_scale_factor=True),
    dict(size=4, mode="nearest", align_corners=True),
    dict(size=4, mode="area", align_corners=False),
    dict(size=4, mode="linear"),
    dict(size=4, mode="trilinear"),
    dict(size=4, mode="cubic"),
    dict(size=(0, 3)),
    dict(scale_factor=0.1, mode="bilinear"),
    dict(size=4, mode="nearest", antialias=True),
]


@pytest.mark.parametrize("kwargs", BAD)
def test_interpolate_errors(rng, kwargs):
    x = rng.standard_normal((1, 2, 4, 5))
    assert_same_error(lambda lib: F(lib).interpolate(lib.tensor(x), **kwargs))


def test_interpolate_rank_errors(rng):
    assert_same_error(lambda lib: F(lib).interpolate(lib.tensor(rng.standard_normal((2, 3))),
                                                     size=4))
    assert_same_error(lambda lib: F(lib).interpolate(lib.tensor(rng.standard_normal((1, 2, 3))),
                                                     size=4, mode="bicubic"))


@pytest.mark.parametrize("shape,mode", [((1, 0, 3), "nearest"), ((1, 0, 3, 3), "bilinear"),
                                        ((1, 0, 3, 3, 3), "trilinear"), ((1, 0, 3, 3), "bicubic"),
                                        ((1, 1, 0, 3), "nearest")])
def test_interpolate_empty_planes(shape, mode):
    assert_same_error(lambda lib: F(lib).interpolate(lib.ones(shape), size=2, mode=mode))


def test_interpolate_empty_batch(rng):
    compare(lambda lib, t: F(lib).interpolate(t, size=(3, 2), mode="bilinear"),
            rng.standard_normal((0, 2, 4, 4)))
    compare(lambda lib, t: F(lib).interpolate(t, size=2, mode="area"),
            rng.standard_normal((1, 0, 4, 4)), grad=False)  # torch's backward refuses it


def test_antialias_is_refused_clearly(rng):
    x = hookgrad.tensor(rng.standard_normal((1, 1, 4, 4)))
    with pytest.raises(NotImplementedError, match="antialias"):
        F(hookgrad).interpolate(x, size=2, mode="bilinear", antialias=True)


@pytest.mark.parametrize("name,kwargs", [
    ("upsample", dict(size=(6, 7), mode="bilinear")), ("upsample", dict(scale_factor=2)),
    ("upsample_nearest", dict(size=(6, 7))), ("upsample_bilinear", dict(scale_factor=1.5))])
def test_deprecated_upsample_functions(rng, name, kwargs):
    x = rng.standard_normal((1, 2, 4, 5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare(lambda lib, t: getattr(F(lib), name)(t, **kwargs), x)
    with pytest.warns(UserWarning, match=f"nn.functional.{name}` is deprecated"):
        getattr(F(hookgrad), name)(hookgrad.tensor(x), **kwargs)


MODULES = [("Upsample", dict(scale_factor=2)), ("Upsample", dict(size=(5, 3), mode="bilinear")),
           ("Upsample", dict(scale_factor=(1.5, 2), mode="bicubic", align_corners=True)),
           ("Upsample", dict(size=7, mode="nearest-exact")),
           ("Upsample", dict(scale_factor=0.5, mode="area", recompute_scale_factor=True)),
           ("UpsamplingNearest2d", dict(scale_factor=3)),
           ("UpsamplingNearest2d", dict(size=(2, 9))),
           ("UpsamplingBilinear2d", dict(size=(6, 6))),
           ("UpsamplingBilinear2d", dict(scale_factor=1.5))]


@pytest.mark.parametrize("name,kwargs", MODULES)
def test_upsample_modules(rng, name, kwargs):
    x = rng.standard_normal((2, 3, 4, 5))
    modules = [getattr(lib.nn, name)(**kwargs) for lib in (hookgrad, torch)]
    assert repr(modules[0]) == repr(modules[1])
    assert modules[0].state_dict().keys() == modules[1].state_dict().keys()
    for attribute in ("name", "size", "scale_factor", "mode", "align_corners",
                      "recompute_scale_factor"):
        assert getattr(modules[0], attribute) == getattr(modules[1], attribute)
    compare(lambda lib, t: modules[lib is torch](t), x)
