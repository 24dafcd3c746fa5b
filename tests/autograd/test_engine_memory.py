"""The engine lets a node's incoming gradients go as soon as the node has run, before its
outputs are summed into other nodes' buffers, so the step's peak does not carry them; values
are checked against torch."""

import numpy as np
import torch

import hookgrad
from conftest import traced_peak


def _step(lib, values):
    x = lib.tensor(values, requires_grad=True)
    a = x * 2
    # ExpBackward0's output is summed into the buffer AddBackward0 already filled for a's node
    return x, (a.exp() * 3 + a).sum()


def test_incoming_gradients_die_before_the_outputs_are_summed():
    size = 1 << 20
    values = np.random.default_rng(0).standard_normal(size).astype(np.float32)
    x, loss = _step(hookgrad, values)
    peak = traced_peak(loss.backward)
    # at the sum: the buffer's gradient, ExpBackward0's output and the sum (x.grad); the
    # multiply's gradient that reached ExpBackward0 is gone (it made this 3 arrays)
    assert peak < 2.5 * size * 4
    tx, theirs = _step(torch, values)
    theirs.backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)


def test_a_hook_keeping_an_incoming_gradient_still_sees_it():
    values = np.random.default_rng(1).standard_normal(8)
    kept = {}
    for lib in (hookgrad, torch):
        x = lib.tensor(values, requires_grad=True)
        a = x * 2
        b = a.exp()
        b.register_hook(lambda grad, lib=lib: kept.setdefault(lib.__name__, grad))
        (b * 3 + a).sum().backward()
    np.testing.assert_array_equal(kept["hookgrad"].numpy(), kept["torch"].numpy())
