"""F.ctc_loss, torch.ctc_loss and nn.CTCLoss against torch: losses and gradients for both target
layouts, every reduction, zero_infinity, impossible alignments, unbatched input, the nodes
torch records, gradcheck, and torch's errors."""
import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_same_error, compare

REDUCTIONS = ["none", "mean", "sum"]


def _case(frames, batch, classes, longest, seed=0, blank=0):
    """log-probabilities (T, N, C), padded targets (never the blank), and lengths; the first
    sample uses every frame and the longest target."""
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((frames, batch, classes))
    log_probs = logits - np.log(np.exp(logits).sum(2, keepdims=True))
    labels = [c for c in range(classes) if c != blank]
    targets = rng.choice(labels, (batch, longest))
    input_lengths = rng.integers(min(2 * longest + 1, frames), frames + 1, batch)
    target_lengths = rng.integers(0, longest + 1, batch)
    input_lengths[0], target_lengths[0] = frames, longest
    return log_probs, targets, input_lengths, target_lengths


def _concatenated(targets, target_lengths):
    return np.concatenate([row[:n] for row, n in zip(targets, target_lengths)])


SHAPES = [(6, 1, 3, 2), (10, 4, 5, 3), (15, 3, 7, 5), (8, 5, 2, 3)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("layout", ["padded", "concatenated"])
def test_float64_values_and_gradients(shape, reduction, layout):
    log_probs, targets, inputs, lengths = _case(*shape, seed=sum(shape))
    if layout == "concatenated":
        targets = _concatenated(targets, lengths)

    def fn(lib, lp):
        return lib.nn.functional.ctc_loss(lp, lib.tensor(targets), lib.tensor(inputs),
                                          lib.tensor(lengths), reduction=reduction)
    compare(fn, log_probs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_float32(reduction):
    log_probs, targets, inputs, lengths = _case(12, 3, 6, 4, seed=5)

    def fn(lib, lp):
        return lib.nn.functional.ctc_loss(lp, lib.tensor(targets), tuple(inputs.tolist()),
                                          list(lengths.tolist()), reduction=reduction)
    hg, th = compare(fn, log_probs.astype(np.float32), rtol=1e-4, atol=1e-5)
    assert hg[0].dtype == hookgrad.float32 and th[0].dtype == torch.float32


@pytest.mark.parametrize("blank", [2, 4])
def test_blank_other_than_zero_and_repeated_labels(blank):
    log_probs, _, _, _ = _case(9, 3, 5, 3, seed=1, blank=blank)
    targets = np.array([[1, 1, 3], [3, 3, 3], [0, 1, 0]])
    targets[targets == blank] = 1

    def fn(lib, lp):
        return lib.nn.functional.ctc_loss(lp, lib.tensor(targets), lib.tensor([9, 8, 7]),
                                          lib.tensor([3, 3, 2]), blank=blank,
                                          reduction="none")
    compare(fn, log_probs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_impossible_alignments(reduction, zero_infinity):
    """A target needing more frames than given: an infinite loss and NaN gradients, or zero
    loss and zero gradient with zero_infinity; the other samples are untouched."""
    log_probs, _, _, _ = _case(5, 3, 4, 3, seed=2)
    targets = np.array([[1, 1, 1], [1, 2, 3], [2, 2, 1]])

    def fn(lib, lp):
        return lib.nn.functional.ctc_loss(lp, lib.tensor(targets), lib.tensor([4, 5, 3]),
                                          lib.tensor([3, 3, 3]), reduction=reduction,
                                          zero_infinity=zero_infinity)
    hg, th = compare(fn, log_probs, rtol=1e-10, atol=1e-12)
    if reduction == "none":
        assert np.isinf(th[0].detach().numpy()).any() != zero_infinity


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_empty_targets_and_zero_input_lengths(reduction):
    log_probs, targets, _, _ = _case(6, 4, 4, 2, seed=3)

    def fn(lib, lp):
        return lib.nn.functional.ctc_loss(lp, lib.tensor(targets), lib.tensor([6, 0, 0, 4]),
                                          lib.tensor([2, 0, 1, 0]), reduction=reduction,
                                          zero_infinity=True)
    compare(fn, log_probs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("layout", ["padded", "1-d"])
def test_unbatched(reduction, layout):
    log_probs, targets, _, _ = _case(7, 1, 4, 3, seed=4)
    target = targets if layout == "padded" else targets[0, :2]

    def fn(lib, lp):
        return lib.nn.functional.ctc_loss(lp[:, 0], lib.tensor(target), lib.tensor(7),
                                          lib.tensor(2), reduction=reduction)
    hg, th = compare(fn, log_probs, rtol=1e-10, atol=1e-12)
    assert hg[0].grad_fn.name() == th[0].grad_fn.name()


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_nodes_as_torch(reduction, zero_infinity):
    log_probs, targets, inputs, lengths = _case(6, 2, 3, 2)
    names = []
    for lib in (hookgrad, torch):
        lp = lib.tensor(log_probs, requires_grad=True)
        loss = lib.nn.functional.ctc_loss(lp, lib.tensor(targets), lib.tensor(inputs),
                                          lib.tensor(lengths), reduction=reduction,
                                          zero_infinity=zero_infinity)
        chain, node = [], loss.grad_fn
        while node is not None and type(node).__name__ != "AccumulateGrad":
            chain.append(node.name())
            node = next((n for n, _ in node.next_functions if n is not None), None)
        names.append(chain)
    assert names[0] == names[1]


def test_saved_attributes_as_torch():
    log_probs, targets, inputs, lengths = _case(6, 2, 4, 2)
    nodes = []
    for lib in (hookgrad, torch):
        lp = lib.tensor(log_probs, requires_grad=True)
        nodes.append(lib.ctc_loss(lp, lib.tensor(targets), lib.tensor(inputs),
                                  lib.tensor(lengths), 1, 0, False).grad_fn)
    hg, th = nodes
    for name in ("blank", "input_lengths", "target_lengths", "zero_infinity"):
        assert getattr(hg, "_saved_" + name) == getattr(th, "_saved_" + name), name
    for name in ("log_probs", "targets", "result0"):
        np.testing.assert_allclose(getattr(hg, "_saved_" + name).detach().numpy(),
                                   getattr(th, "_saved_" + name).detach().numpy(), rtol=1e-12)
    # log alpha: torch leaves the frames past a sample's input and the positions past its
    # extended target unwritten, so only the written ones are compared
    ours, theirs = hg._saved_result1.numpy(), th._saved_result1.numpy()
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    for n, (frames, length) in enumerate(zip(inputs, lengths)):
        np.testing.assert_allclose(ours[n, :frames, :2 * length + 1],
                                   theirs[n, :frames, :2 * length + 1], rtol=1e-12)


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_top_level_and_module(reduction):
    log_probs, targets, inputs, lengths = _case(9, 3, 5, 3, seed=6)
    name = REDUCTIONS[reduction]

    def top(lib, lp):
        return lib.ctc_loss(lp, lib.tensor(targets), lib.tensor(inputs), lib.tensor(lengths),
                            0, reduction, False)

    def module(lib, lp):
        loss = lib.nn.CTCLoss(blank=0, reduction=name, zero_infinity=True)
        return loss(lp, lib.tensor(targets), lib.tensor(inputs), lib.tensor(lengths))
    compare(top, log_probs, rtol=1e-10, atol=1e-12)
    compare(module, log_probs, rtol=1e-10, atol=1e-12)
    assert repr(hookgrad.nn.CTCLoss(blank=2)) == repr(torch.nn.CTCLoss(blank=2))


def test_gradcheck_through_log_softmax():
    """torch's gradient is the logits' gradient once composed with log_softmax: checked
    numerically there, in float64, on a tiny case."""
    rng = np.random.default_rng(7)
    logits = hookgrad.tensor(rng.standard_normal((5, 2, 3)), requires_grad=True)
    targets = hookgrad.tensor([[1, 2], [2, 2]])

    def fn(x):
        return hookgrad.nn.functional.ctc_loss(x.log_softmax(2), targets, (5, 5), (2, 2),
                                               reduction="none")
    assert hookgrad.autograd.gradcheck(fn, (logits,))


ERRORS = {
    "input length too long": lambda lib, lp, t: lib.nn.functional.ctc_loss(
        lp, t, lib.tensor([7, 5, 4]), lib.tensor([3, 2, 1])),
    "negative input length": lambda lib, lp, t: lib.nn.functional.ctc_loss(
        lp, t, lib.tensor([-1, 5, 4]), lib.tensor([3, 2, 1])),
    "negative target length": lambda lib, lp, t: lib.nn.functional.ctc_loss(
        lp, t, lib.tensor([6, 5, 4]), lib.tensor([-1, 2, 1])),
    "target length past padding": lambda lib, lp, t: lib.nn.functional.ctc_loss(
        lp, t, lib.tensor([6, 5, 4]), lib.tensor([4, 2, 1])),
    "short input lengths": lambda lib, lp, t: lib.nn.functional.ctc_loss(
        lp, t, lib.tensor([6, 5]), lib.tensor([3, 2, 1])),
    "short target lengths": lambda lib, lp, t: lib.nn.functional.ctc_loss(
        lp, t, [6, 5, 4], [3, 2]),
    "concatenated size": lambda lib, lp, t: lib.nn.functional.ctc_loss(
        lp, t.flatten(), lib.tensor([6, 5, 4]), lib.tensor([3, 2, 1])),
    "padded batch": lambda lib, lp, t: lib.nn.functional.ctc_loss(
        lp, t[:2], lib.tensor([6, 5, 4]), lib.tensor([3, 2, 1])),
    "3-d targets": lambda lib, lp, t: lib.nn.functional.ctc_loss(
        lp, t.unsqueeze(0), lib.tensor([6, 5, 4]), lib.tensor([3, 2, 1])),
    "float lengths": lambda lib, lp, t: lib.nn.functional.ctc_loss(
        lp, t, lib.tensor([6., 5., 4.]), lib.tensor([3, 2, 1])),
    "float target lengths": lambda lib, lp, t: lib.nn.functional.ctc_loss(
        lp, t, lib.tensor([6, 5, 4]), lib.tensor([3., 2., 1.])),
    "blank out of range": lambda lib, lp, t: lib.nn.functional.ctc_loss(
        lp, t, [6, 5, 4], [3, 2, 1], blank=5),
    "negative blank": lambda lib, lp, t: lib.nn.functional.ctc_loss(
        lp, t, [6, 5, 4], [3, 2, 1], blank=-1),
    "reduction": lambda lib, lp, t: lib.nn.functional.ctc_loss(
        lp, t, [6, 5, 4], [3, 2, 1], reduction="foo"),
    "4-d log_probs": lambda lib, lp, t: lib.nn.functional.ctc_loss(
        lp.unsqueeze(0), t, [6, 5, 4], [3, 2, 1]),
    "integer log_probs": lambda lib, lp, t: lib.nn.functional.ctc_loss(
        lp.to(lib.int32), t, [6, 5, 4], [3, 2, 1]),
    "empty log_probs": lambda lib, lp, t: lib.nn.functional.ctc_loss(
        lp[:0], t, [0, 0, 0], [0, 0, 0]),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_as_torch(case):
    log_probs, targets, _, _ = _case(6, 3, 5, 3)
    assert_same_error(lambda lib: ERRORS[case](lib, lib.tensor(log_probs), lib.tensor(targets)))


def test_second_derivative_raises_as_torch():
    log_probs, targets, inputs, lengths = _case(5, 2, 4, 2)

    def fn(lib):
        lp = lib.tensor(log_probs, requires_grad=True)
        loss = lib.nn.functional.ctc_loss(lp, lib.tensor(targets), lib.tensor(inputs),
                                          lib.tensor(lengths))
        (grad,) = lib.autograd.grad(loss, lp, create_graph=True)
        assert grad.requires_grad
        grad.sum().backward()
    assert_same_error(fn)
