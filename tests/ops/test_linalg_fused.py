"""addmv, addr, addbmm, dist, renorm, erfinv, i0 and special.i1 against torch: values, dtypes,
gradients, double backward, node names, saved tensors, errors and the in-place forms."""
import numpy as np
import pytest
import torch

import hookgrad
from tests.conftest import (assert_close, assert_same_error, compare, compare_double_backward,
                            saved_log)

RNG = np.random.default_rng(11)
VEC3, VEC4, VEC5 = (RNG.standard_normal(n) for n in (3, 4, 5))
MAT34 = RNG.standard_normal((3, 4))
MAT35 = RNG.standard_normal((3, 5))
BATCH1 = RNG.standard_normal((2, 3, 4))
BATCH2 = RNG.standard_normal((2, 4, 5))
UNIT = RNG.uniform(-0.95, 0.95, (3, 4))

# (id, function, inputs, torch's node name)
CASES = [
    ("addmv", lambda lib, s, m, v: lib.addmv(s, m, v), (VEC3, MAT34, VEC4), "AddmvBackward0"),
    ("addmv_scaled", lambda lib, s, m, v: s.addmv(m, v, beta=0.5, alpha=-2.0),
     (VEC3, MAT34, VEC4), "AddmvBackward0"),
    ("addmv_broadcast", lambda lib, s, m, v: lib.addmv(s, m, v, alpha=3),
     (VEC3[:1], MAT34, VEC4), "AddmvBackward0"),
    ("addr", lambda lib, s, a, b: lib.addr(s, a, b), (MAT34, VEC3, VEC4), "AddrBackward0"),
    ("addr_broadcast", lambda lib, s, a, b: s.addr(a, b, beta=2, alpha=0.5),
     (VEC4, VEC3, VEC4), "AddrBackward0"),
    ("addbmm", lambda lib, s, a, b: lib.addbmm(s, a, b), (MAT35, BATCH1, BATCH2),
     "AddbmmBackward0"),
    ("addbmm_scaled", lambda lib, s, a, b: s.addbmm(a, b, beta=-1, alpha=0.25),
     (VEC5, BATCH1, BATCH2), "AddbmmBackward0"),
    ("dist", lambda lib, a, b: lib.dist(a, b), (MAT34, VEC4), "DistBackward0"),
    ("dist_p1", lambda lib, a, b: a.dist(b, 1), (MAT34, MAT34[::-1].copy()), "DistBackward0"),
    ("dist_p3", lambda lib, a, b: lib.dist(a, b, p=3), (MAT34, VEC4), "DistBackward0"),
    ("dist_p_half", lambda lib, a, b: lib.dist(a, b, 0.5), (MAT34, VEC4), "DistBackward0"),
    ("dist_inf", lambda lib, a, b: lib.dist(a, b, float("inf")), (MAT34, VEC4),
     "DistBackward0"),
    ("renorm", lambda lib, x: lib.renorm(x, 2, 0, 1.0), (MAT34 * 2,), "RenormBackward0"),
    ("renorm_dim1_p3", lambda lib, x: x.renorm(3, -1, 0.8), (BATCH1,), "RenormBackward0"),
    ("renorm_p1", lambda lib, x: lib.renorm(x, 1, 1, 2.0), (MAT34,), "RenormBackward0"),
    ("erfinv", lambda lib, x: lib.erfinv(x), (UNIT,), "ErfinvBackward0"),
    ("erfinv_method", lambda lib, x: x.erfinv(), (UNIT,), "ErfinvBackward0"),
    ("special_erfinv", lambda lib, x: lib.special.erfinv(x), (UNIT,), "ErfinvBackward0"),
    ("i0", lambda lib, x: lib.i0(x * 4), (MAT34,), "I0Backward0"),
    ("special_i0", lambda lib, x: lib.special.i0(x), (MAT34,), "I0Backward0"),
    ("special_i1", lambda lib, x: lib.special.i1(x * 4), (MAT34,), "SpecialI1Backward0"),
]
IDS = [case[0] for case in CASES]


@pytest.mark.parametrize("name,fn,arrays,node", CASES, ids=IDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_values_and_gradients_match_torch(name, fn, arrays, node, dtype):
    compare(fn, *(a.astype(dtype) for a in arrays))


@pytest.mark.parametrize("name,fn,arrays,node", CASES, ids=IDS)
def test_node_names(name, fn, arrays, node):
    for lib in (torch, hookgrad):
        inputs = [lib.tensor(a, requires_grad=True) for a in arrays]
        assert fn(lib, *inputs).grad_fn.name() == node


@pytest.mark.parametrize("name,fn,arrays,node", CASES, ids=IDS)
def test_saved_tensors(name, fn, arrays, node):
    logs = []
    for lib in (torch, hookgrad):
        inputs = [lib.tensor(a, requires_grad=True) for a in arrays]
        logs.append(saved_log(lib, lambda *xs: fn(lib, *xs), *inputs))
    assert logs[1] == logs[0]


@pytest.mark.parametrize("name,fn,arrays,node", CASES, ids=IDS)
def test_double_backward(name, fn, arrays, node):
    compare_double_backward(fn, *arrays)


def test_beta_zero_ignores_nan_in_input():
    compare(lambda lib, s, m, v: lib.addmv(s, m, v, beta=0), np.full(3, np.nan), MAT34, VEC4)
    compare(lambda lib, s, a, b: lib.addbmm(s, a, b, beta=0), np.full((3, 5), np.nan),
            BATCH1, BATCH2)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.addmv(lib.tensor([1, 2]), lib.tensor([[1, 2], [3, 4]]), lib.tensor([1, 1]),
                          beta=2, alpha=3),
    lambda lib: lib.addr(lib.tensor([[1, 2]]), lib.tensor([1, 2]), lib.tensor([0.5, 1.5])),
    lambda lib: lib.addr(lib.zeros(2, 3, dtype=lib.float32), lib.ones(2),
                         lib.ones(3, dtype=lib.float64)),
    lambda lib: lib.addbmm(lib.ones(2, 2, dtype=lib.int64), lib.ones(3, 2, 4, dtype=lib.int64),
                           lib.ones(3, 4, 2, dtype=lib.int64)),
    lambda lib: lib.dist(lib.ones(3), lib.zeros(3, dtype=lib.float64)),
    lambda lib: lib.dist(lib.tensor([1.0, -2.0]), lib.tensor([1.0, 2.0]), 0),
    lambda lib: lib.erfinv(lib.tensor([0, 1, -1, 2])),
    lambda lib: lib.i0(lib.tensor([0, 1, -3])),
    lambda lib: lib.erfinv(lib.tensor([0.5, 0.999999, -1 + 1e-12, 1e-300, float("nan")],
                                      dtype=lib.float64)),
])
def test_dtypes_and_special_values(fn):
    ours, theirs = fn(hookgrad), fn(torch)
    assert str(ours.dtype) == str(theirs.dtype)
    assert_close(ours, theirs)


def test_erfinv_float64_accuracy_over_the_whole_interval():
    values = np.concatenate([np.linspace(-1, 1, 40001), 1 - np.logspace(-16, -1, 200)])
    ours = hookgrad.erfinv(hookgrad.tensor(values)).numpy()
    theirs = torch.erfinv(torch.tensor(values)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=0)


def test_i0_i1_over_a_wide_range():
    values = np.concatenate([np.linspace(-40, 40, 801), [0.0, 700.0, -710.0, 720.0]])
    for name in ("i0", "i1"):
        ours = getattr(hookgrad.special, name)(hookgrad.tensor(values)).numpy()
        theirs = getattr(torch.special, name)(torch.tensor(values)).numpy()
        np.testing.assert_allclose(ours, theirs, rtol=1e-13)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.addmv(lib.ones(3), lib.ones(3, 4), lib.ones(3)),
    lambda lib: lib.addmv(lib.ones(3), lib.ones(3, 4), lib.ones(3, 4)),
    lambda lib: lib.addmv(lib.ones(5), lib.ones(3, 4), lib.ones(4)),
    lambda lib: lib.addmv(lib.ones(3), lib.ones(3, 4), lib.ones(4, dtype=lib.float64)),
    lambda lib: lib.addr(lib.ones(3, 4), lib.ones(3, 4), lib.ones(4)),
    lambda lib: lib.dist(lib.ones(3, 4), lib.ones(3)),
    lambda lib: lib.dist(lib.tensor([1, 2]), lib.tensor([1, 2])),
    lambda lib: lib.renorm(lib.ones(3, 4), -1, 0, 1),
    lambda lib: lib.renorm(lib.ones(3, 4), 2, 5, 1),
    lambda lib: lib.renorm(lib.ones(3, 4), 2, 0, -1),
    lambda lib: lib.renorm(lib.ones(3), 2, 0, 1),
])
def test_errors_match_torch(fn):
    assert_same_error(fn)


def test_addbmm_needs_3d_batches():
    for lib in (torch, hookgrad):
        with pytest.raises(RuntimeError):
            lib.addbmm(lib.ones(3, 5), lib.ones(3, 4), lib.ones(2, 4, 5))


@pytest.mark.parametrize("name,args,arrays", [
    ("addmv_", (MAT34, VEC4), VEC3),
    ("addr_", (VEC3, VEC4), MAT34),
    ("addbmm_", (BATCH1, BATCH2), MAT35),
    ("renorm_", (2, 0, 1.0), MAT34 * 2),
    ("erfinv_", (), UNIT),
    ("i0_", (), MAT34),
])
def test_inplace_forms(name, args, arrays):
    def run(lib, base, *operands):
        result = base * 1  # a non-leaf, so it can be written in place
        out = getattr(result, name)(*operands, *args[len(operands):])
        assert out is result
        return out

    tensors = [a for a in args if isinstance(a, np.ndarray)]
    outs = compare(run, arrays, *tensors)
    assert outs[0][0].grad_fn.name() == outs[1][0].grad_fn.name()
    assert outs[0][0]._version == outs[1][0]._version


def test_top_level_in_place_forms():
    def run(lib, base, mat, vec):
        result = base * 1
        lib.addmv_(result, mat, vec, alpha=2)
        return lib.i0_(result)

    compare(run, VEC3, MAT34, VEC4)


def test_dist_in_half_precision_accumulates_in_float32():
    x = np.array([300.0, 200.0, 100.0], np.float16)
    for p in (2, 1, 3, float("inf")):
        compare(lambda lib, a, b: lib.dist(a, b, p), x, np.zeros(3, np.float16), grad=False)
    compare(lambda lib, a, b: lib.dist(a.bfloat16(), b.bfloat16()).float(), x.astype(np.float32),
            np.zeros(3, np.float32), grad=False)
    compare(lambda lib, a, b: lib.dist(a, b), np.array([255, 0, 255], np.uint8),
            np.zeros(3, np.float16), grad=False)


def test_dist_refuses_bool():
    assert_same_error(lambda lib: lib.dist(lib.tensor([True]), lib.tensor([1.0])))
    assert_same_error(lambda lib: lib.dist(lib.tensor([1.0]), lib.tensor([True, False])))
