"""histogramdd against torch: the return type and its fields, counts with int, per-dim and
tensor bins, range, weight and density, and torch's errors."""
import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, assert_same_error

LIBS = (torch, hookgrad)
POINTS = np.random.default_rng(3).uniform(-1, 2, (20, 2))


def _run(fn, dtype="float32"):
    results = [fn(lib, lib.tensor(POINTS, dtype=getattr(lib, dtype))) for lib in LIBS]
    ours, theirs = results[1], results[0]
    assert isinstance(ours, tuple) and len(ours) == len(theirs) == 2
    assert_close(ours.hist, theirs.hist)
    assert len(ours.bin_edges) == len(theirs.bin_edges)
    for a, b in zip(ours.bin_edges, theirs.bin_edges):
        assert_close(a, b)
    return ours, theirs


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fn", [
    lambda lib, x: lib.histogramdd(x, bins=3),
    lambda lib, x: lib.histogramdd(x, [2, 4]),
    lambda lib, x: lib.histogramdd(x, bins=(2, 3), range=[0.0, 1.0, -1.0, 1.0]),
    lambda lib, x: lib.histogramdd(x, bins=4, weight=lib.arange(20, dtype=x.dtype)),
    lambda lib, x: lib.histogramdd(x, bins=[3, 2], density=True),
    lambda lib, x: lib.histogramdd(x, bins=[lib.tensor([-1.0, 0.0, 2.0], dtype=x.dtype),
                                            lib.tensor([0.0, 0.5, 1.0], dtype=x.dtype)]),
    lambda lib, x: lib.histogramdd(x.reshape(4, 5, 2)[:, :, :1], bins=2),
    lambda lib, x: lib.histogramdd(x[:0], bins=2),
    lambda lib, x: lib.histogramdd(x * 0 + 1, bins=2),
])
def test_histogramdd_matches(fn, dtype):
    _run(fn, dtype)


def test_fields_and_repr():
    ours, theirs = _run(lambda lib, x: lib.histogramdd(x, 2))
    assert isinstance(ours.bin_edges, tuple) and ours[0] is ours.hist
    assert repr(ours).splitlines()[0] == repr(theirs).splitlines()[0]


def test_gradient_is_refused_as_torch_refuses_it():
    outcomes = []
    for lib in LIBS:
        x = lib.tensor(POINTS, requires_grad=True)
        result = lib.histogramdd(x, 2)
        with pytest.raises(RuntimeError) as info:
            result.hist.sum().backward()
        outcomes.append((result.hist.requires_grad, str(info.value)))
    assert outcomes[1] == outcomes[0]


@pytest.mark.parametrize("call", [
    lambda lib: lib.histogramdd(lib.ones(3, 2), bins=[2]),
    lambda lib: lib.histogramdd(lib.ones(3, 2), bins=[2, 2], range=[0.0, 1.0]),
    lambda lib: lib.histogramdd(lib.ones(3, 2), bins=[2, 2], range=[1.0, 0.0, 0.0, 1.0]),
    lambda lib: lib.histogramdd(lib.ones(3, 2), bins=0),
    lambda lib: lib.histogramdd(lib.ones(4, 2), bins=2, weight=lib.ones(3)),
    lambda lib: lib.histogramdd(lib.ones(3), [2]),
])
def test_histogramdd_errors(call):
    assert_same_error(call)


def test_edges_given_come_back_and_computed_ones_follow_the_input():
    seen = []
    for lib in LIBS:
        x = lib.tensor(POINTS, dtype=lib.float32, requires_grad=True)
        given = [lib.tensor([-1.0, 0.0, 2.0]), lib.tensor([0.0, 1.0])]
        by_tensor = lib.histogramdd(x, given)
        by_count = lib.histogramdd(x, 2)
        seen.append(([a is b for a, b in zip(by_tensor.bin_edges, given)],
                     [e.requires_grad for e in by_count.bin_edges],
                     [e.grad_fn.name() for e in by_count.bin_edges]))
    assert seen[1] == seen[0]
