"""torch.native_batch_norm / native_layer_norm / native_group_norm (result and statistics),
batch_norm_update_stats, and the CPU-less SyncBatchNorm kernels and native_norm, against
torch."""
import numpy as np
import pytest
import torch

import hookgrad
from tests.conftest import assert_close, assert_same_error, compare, compare_double_backward


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("shape", [(3, 4), (3, 4, 5), (2, 4, 3, 2)])
def test_native_batch_norm_matches_torch(training, affine, shape):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(shape), rng.standard_normal(4), rng.standard_normal(4)]
    running = (rng.standard_normal(4), rng.random(4) + 0.5)
    stats = {}

    def run(lib, x, w, b):
        mean, var = (lib.tensor(a.copy()) for a in running)
        out = lib.native_batch_norm(x, w if affine else None, b if affine else None, mean, var,
                                    training, 0.1, 1e-5)
        stats[lib] = (mean, var)
        return out

    compare(run, *arrays)
    for ours, theirs in zip(stats[hookgrad], stats[torch]):
        assert_close(ours, theirs, what="running statistic")


def test_native_batch_norm_without_running_stats():
    x = np.random.default_rng(1).standard_normal((5, 3, 2))
    hg_out, th_out = compare(lambda lib, x: lib.native_batch_norm(x, None, None, None, None, True,
                                                                  0.1, 1e-3), x)
    assert [t.requires_grad for t in hg_out] == [t.requires_grad for t in th_out]


def test_native_batch_norm_double_backward():
    rng = np.random.default_rng(2)
    compare_double_backward(
        lambda lib, x, w, b: lib.native_batch_norm(x, w, b, None, None, True, 0.1, 1e-5)[0],
        rng.standard_normal((4, 3, 2)), rng.standard_normal(3), rng.standard_normal(3))


@pytest.mark.parametrize("normalized", [[5], [4, 5], [3, 4, 5]])
@pytest.mark.parametrize("affine", [True, False])
def test_native_layer_norm_matches_torch(normalized, affine):
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((3, 4, 5)), rng.standard_normal(normalized),
              rng.standard_normal(normalized)]
    hg_out, th_out = compare(
        lambda lib, x, w, b: lib.native_layer_norm(x, normalized, w if affine else None,
                                                   b if affine else None, 1e-5), *arrays)
    assert [t.stride() for t in hg_out] == [t.stride() for t in th_out]
    compare_double_backward(lambda lib, x, w, b: lib.native_layer_norm(x, normalized, w, b,
                                                                      1e-5)[0], *arrays)


def test_native_layer_norm_float32_and_errors():
    x = np.random.default_rng(4).standard_normal((2, 3, 4)).astype(np.float32)
    compare(lambda lib, x: lib.native_layer_norm(x, (3, 4), None, None, 1e-6), x)
    assert_same_error(lambda lib: lib.native_layer_norm(lib.tensor(x), [3], None, None, 1e-5))
    assert_same_error(lambda lib: lib.native_layer_norm(lib.tensor(x), [], None, None, 1e-5))


@pytest.mark.parametrize("shape,groups", [((3, 4, 5), 2), ((2, 6, 2, 3), 3), ((2, 4), 4)])
def test_native_group_norm_matches_torch(shape, groups):
    rng = np.random.default_rng(5)
    channels = shape[1]
    arrays = [rng.standard_normal(shape), rng.standard_normal(channels),
              rng.standard_normal(channels)]
    spatial = int(np.prod(shape[2:]))

    def run(lib, x, w, b):
        out, mean, rstd = lib.native_group_norm(x, w, b, shape[0], channels, spatial, groups,
                                                1e-5)
        return out, mean.detach(), rstd.detach()

    compare(run, *arrays)
    compare_double_backward(lambda lib, *a: run(lib, *a)[0], *arrays)


def test_native_group_norm_errors():
    x = np.zeros((3, 4, 5))
    assert_same_error(lambda lib: lib.native_group_norm(lib.tensor(x), None, None, 3, 4, 5, 3,
                                                        1e-5))
    for lib in (torch, hookgrad):  # torch's message goes on to ask for a better message
        with pytest.raises(RuntimeError, match=r"Expected X.numel\(\) == N \* C \* HxW"):
            lib.native_group_norm(lib.tensor(x), None, None, 3, 4, 6, 2, 1e-5)


@pytest.mark.parametrize("with_running", [True, False])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_batch_norm_update_stats_matches_torch(with_running, dtype):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((3, 4, 5)).astype(dtype)
    mean0, var0 = rng.standard_normal(4).astype(dtype), (rng.random(4) + 0.5).astype(dtype)
    results = {}
    for lib in (hookgrad, torch):
        mean, var = lib.tensor(mean0.copy()), lib.tensor(var0.copy())
        out = lib.batch_norm_update_stats(lib.tensor(x), mean if with_running else None,
                                          var if with_running else None, 0.2)
        results[lib] = out + (mean, var)
    for ours, theirs in zip(results[hookgrad], results[torch]):
        assert_close(ours, theirs)


def test_batch_norm_update_stats_errors():
    assert_same_error(lambda lib: lib.batch_norm_update_stats(
        lib.ones(2, 2, dtype=lib.int64), None, None, 0.1))


@pytest.mark.parametrize("name,args", [
    ("native_norm", lambda lib, x, v: (x,)),
    ("batch_norm_stats", lambda lib, x, v: (x, 1e-5)),
    ("batch_norm_elemt", lambda lib, x, v: (x, v, v, v, v, 1e-5)),
    ("batch_norm_gather_stats", lambda lib, x, v: (x, v[None], v[None], v, v, 0.1, 1e-5, 6)),
    ("batch_norm_gather_stats_with_counts",
     lambda lib, x, v: (x, v[None], v[None], v, v, 0.1, 1e-5, lib.ones(1))),
    ("batch_norm_backward_reduce", lambda lib, x, v: (x, x, v, v, v, True, True, True)),
    ("batch_norm_backward_elemt",
     lambda lib, x, v: (x, x, v, v, v, v, v, lib.tensor([15], dtype=lib.int32))),
])
def test_kernels_torch_lacks_on_cpu_raise_as_torch(name, args):
    def run(lib):
        x, v = lib.ones(3, 4, 5), lib.ones(4)
        return getattr(lib, name)(*args(lib, x, v))

    with pytest.raises(NotImplementedError):
        run(torch)
    with pytest.raises(NotImplementedError, match=f"Could not run 'aten::{name}' with "
                                                  f"arguments from the 'CPU' backend"):
        run(hookgrad)


@pytest.mark.parametrize("name", ["batch", "layer", "group"])
@pytest.mark.parametrize("param_dtype", ["float16", "float32"])
def test_half_input_statistics_take_torchs_dtype(name, param_dtype):
    x = np.random.default_rng(8).standard_normal((3, 4, 5))
    results = {}
    for lib in (hookgrad, torch):
        t, kind = lib.tensor(x).half(), getattr(lib, param_dtype)
        if name == "batch":
            out = lib.native_batch_norm(t, lib.ones(4, dtype=kind), None, lib.zeros(4, dtype=kind),
                                        lib.ones(4, dtype=kind), True, 0.1, 1e-5)
        elif name == "layer":
            out = lib.native_layer_norm(t, [5], lib.ones(5, dtype=kind), None, 1e-5)
        else:
            out = lib.native_group_norm(t, lib.ones(4, dtype=kind), None, 3, 4, 5, 2, 1e-5)
        results[lib] = out
    for ours, theirs in zip(results[hookgrad], results[torch]):
        assert_close(ours, theirs)
