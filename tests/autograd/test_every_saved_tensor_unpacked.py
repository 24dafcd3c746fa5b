"""A node unpacks every tensor it saved when it runs, even where its formula does not read it
(a zero gradient, a shape-only use): torch's nodes unpack all their saved variables first, so
unpack hooks run for each and an in-place write to any of them refuses the backward (fuzzer
seed 2861291: sgn inside abs's double backward)."""
from __future__ import annotations

import pytest
import torch

import hookgrad

CASES = {
    "sgn": lambda lib, h, o: h.sgn(),
    "div floor": lambda lib, h, o: lib.div(h, o, rounding_mode="floor"),
    "div trunc": lambda lib, h, o: lib.div(h, o, rounding_mode="trunc"),
    "reflect pad": lambda lib, h, o: lib.nn.functional.pad(h.reshape(1, 1, 4), (2, 1),
                                                           mode="reflect"),
    "replicate pad": lambda lib, h, o: lib.nn.functional.pad(h.reshape(1, 1, 4), (2, 1),
                                                             mode="replicate"),
}


def _inputs(lib):
    x = lib.tensor([1.5, -2.0, 0.25, 3.0], dtype=lib.float64, requires_grad=True)
    other = lib.tensor([0.5, 1.5, -2.0, 4.0], dtype=lib.float64, requires_grad=True)
    return x, other


def _unpack_log(lib, fn):
    log = []

    def pack(t):
        log.append(("pack", tuple(t.shape)))
        return t

    def unpack(t):
        log.append(("unpack", tuple(t.shape)))
        return t

    x, other = _inputs(lib)
    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = fn(lib, x * 1, other * 1)
    y.sum().backward()
    return log


def _refused_after_write(lib, fn):
    x, other = _inputs(lib)
    hidden = x * 1
    y = fn(lib, hidden, other * 1)
    with lib.no_grad():
        hidden.add_(1)
    try:
        y.sum().backward()
    except RuntimeError as error:
        assert "modified by an inplace operation" in str(error)
        return True
    return False


@pytest.mark.parametrize("name", sorted(CASES))
def test_unpack_hooks_run_for_every_saved_tensor(name):
    assert _unpack_log(hookgrad, CASES[name]) == _unpack_log(torch, CASES[name])


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_write_to_a_saved_input_refuses_as_torch(name):
    assert _refused_after_write(hookgrad, CASES[name]) == _refused_after_write(torch, CASES[name])


def test_the_fuzzer_program():
    def run(lib):
        x1 = lib.tensor(1.959, dtype=lib.float64, requires_grad=True)
        t3 = lib.add(x1, x1.prod(), alpha=2)
        t4 = t3.abs().add(1).log()
        t4.tanh_()
        _, g6 = lib.autograd.grad(t4.sum(), [t4, x1], create_graph=True)
        t3.sigmoid_()
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            g6.sum().backward()
    run(torch)
    run(hookgrad)
