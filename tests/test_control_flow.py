"""cond and while_loop against torch: results, gradients, output nesting and the errors torch
raises for predicates, operands and branch/body outputs (type RuntimeError in both; torch's
tracing-time errors are RuntimeError subclasses). torch compiles these on first use, which is
slow, so the cases are few and small."""
import warnings

import pytest
import torch

import hookgrad
from conftest import assert_close, assert_same_error

LIBS = (torch, hookgrad)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _flat(value):
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in _flat(item)]
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _flat(item)]
    return [value]


def _same(results):
    ours, theirs = results[1], results[0]
    assert type(ours) is type(theirs) or (isinstance(ours, hookgrad.Tensor)
                                          and isinstance(theirs, torch.Tensor))
    for a, b in zip(_flat(ours), _flat(theirs), strict=True):
        if isinstance(b, torch.Tensor):
            assert_close(a, b)
        else:
            assert a == b


@pytest.mark.parametrize("pred", [True, False, 1, 0.0, "tensor_true", "tensor_false",
                                  "tensor_int"])
def test_cond_picks_the_branch(pred):
    results = []
    for lib in LIBS:
        given = {"tensor_true": lib.tensor(True), "tensor_false": lib.tensor([False]),
                 "tensor_int": lib.tensor(3)}.get(pred, pred) if isinstance(pred, str) else pred
        x = lib.arange(3.0, requires_grad=True)
        out = lib.cond(given, lambda v: v.cos(), lambda v: v.sin() * 2, (x,))
        out.sum().backward()
        results.append((out, x.grad))
    _same(results)


def test_cond_nested_outputs_and_operands():
    results = []
    for lib in LIBS:
        x = lib.arange(3.0)
        out = lib.cond(lib.tensor(False),
                       lambda d, y: ((d["a"] + 1,), [y * 2]),
                       lambda d, y: ((d["a"] - 1,), [y * 3]),
                       ({"a": x}, x + 1))
        results.append(out)
    _same(results)


@pytest.mark.parametrize("call", [
    lambda lib: lib.cond(lib.tensor([True, False]), lambda x: x + 1, lambda x: x - 1,
                         (lib.ones(2),)),
    lambda lib: lib.cond(None, lambda x: x + 1, lambda x: x - 1, (lib.ones(2),)),
    lambda lib: lib.cond("a", lambda x: x + 1, lambda x: x - 1, (lib.ones(2),)),
    lambda lib: lib.cond(lib.tensor(True), 3, 4, (lib.ones(2),)),
    lambda lib: lib.cond(lib.tensor(True), lambda x: x + 1, lambda x: x - 1, lib.ones(2)),
    lambda lib: lib.cond(lib.tensor(True), lambda x, y: x + y, lambda x, y: x - y,
                         (lib.ones(2), 2)),
])
def test_cond_argument_errors(call):
    assert_same_error(call)


@pytest.mark.parametrize("branches", [
    (lambda x: x + 1, lambda x: (x * 2).sum()),
    (lambda x: x.double() + 1, lambda x: x * 2),
    (lambda x: x + 1, lambda x: x),
])
def test_cond_branch_output_errors(branches):
    for lib in LIBS:
        with pytest.raises(RuntimeError):
            lib.cond(lib.tensor(True), *branches, (lib.ones(2),))


def test_cond_with_a_python_predicate_just_calls_the_branch():
    for lib in LIBS:
        x = lib.ones(2)
        assert lib.cond(True, lambda v: v, lambda v: v, (x,)) is x
        assert lib.cond(False, lambda v, n: n, lambda v, n: n + 1, (x, 2)) == 3


@pytest.mark.parametrize("case", [
    lambda lib: ((lambda i, x: i < 3), (lambda i, x: (i + 1, x * 2 + 1)),
                 (lib.tensor(0), lib.ones(2, requires_grad=True))),
    lambda lib: ((lambda i, x: i < 3), (lambda i, x: [i + 1, x + i]), (0, lib.zeros(2))),
    lambda lib: ((lambda i: i < 3), (lambda i: i + 1), (lib.tensor(0),)),
    lambda lib: ((lambda d: d["i"] < 2), (lambda d: {"i": d["i"] + 1}), ({"i": lib.tensor(0)},)),
    lambda lib: ((lambda i, x: i < 0), (lambda i, x: (i + 1, x + 1)),
                 [lib.tensor(0), lib.zeros(2)]),
    lambda lib: ((lambda i: i < 0), (lambda i: i + 1), (lib.tensor(0),)),
])
def test_while_loop_results(case):
    results = []
    for lib in LIBS:
        cond_fn, body_fn, carried = case(lib)
        out = lib.while_loop(cond_fn, body_fn, carried)
        leaves = [v for v in _flat(out) if isinstance(v, (torch.Tensor, hookgrad.Tensor))]
        grads = []
        if leaves and leaves[-1].requires_grad:
            leaves[-1].sum().backward()
            grads = [c.grad for c in _flat(carried) if getattr(c, "requires_grad", False)]
        results.append((out, grads))
    _same(results)


def test_while_loop_returns_copies_when_the_body_never_runs():
    for lib in LIBS:
        x = lib.zeros(2)
        out = lib.while_loop(lambda i, v: i < 0, lambda i, v: (i + 1, v + 1), (lib.tensor(0), x))
        assert out[1] is not x


@pytest.mark.parametrize("case", [
    lambda lib: (3, lambda i: i + 1, (lib.tensor(0),)),
])
def test_while_loop_argument_errors(case):
    assert_same_error(lambda lib: lib.while_loop(*case(lib)))


@pytest.mark.parametrize("body", [
    lambda i, x: (i + 1, x.sum()),
    lambda i, x: (i + 1, x.double() + 1),
    lambda i, x: (i + 1,),
    lambda i, x: (i + 1, x),
])
def test_while_loop_body_errors(body):
    for lib in LIBS:
        with pytest.raises(RuntimeError):
            lib.while_loop(lambda i, x: i < 3, body, (lib.tensor(0), lib.zeros(2)))


@pytest.mark.parametrize("cond_fn", [lambda i, x: x < 3, lambda i, x: (i < 3).float(),
                                     lambda i, x: 1])
def test_while_loop_condition_errors(cond_fn):
    for lib in LIBS:
        with pytest.raises(RuntimeError):
            lib.while_loop(cond_fn, lambda i, x: (i + 1, x + 1), (lib.tensor(0), lib.zeros(2)))


def test_while_loop_carried_values_are_tensors_or_ints():
    for lib in LIBS:
        with pytest.raises(AssertionError):
            lib.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x + 1), (lib.tensor(0), 1.5))


def test_node_names_of_recorded_results():
    seen = []
    for lib in LIBS:
        x = lib.arange(3.0, requires_grad=True)
        branch = lib.cond(lib.tensor(True), lambda v: (v.cos(), v.sum() * 2),
                          lambda v: (v.sin(), v.sum()), (x,))
        looped = lib.while_loop(lambda i, v: i < 2, lambda i, v: (i + 1, v * 2),
                                (lib.tensor(0), x))
        never = lib.while_loop(lambda i, v: i < 0, lambda i, v: (i + 1, v * 2),
                               (lib.tensor(0), x))
        (looped[1].sum() + branch[0].sum()).backward()
        seen.append(([type(t.grad_fn).__name__ for t in branch + looped + never],
                     x.grad.tolist()))
    assert seen[1] == seen[0]


def test_int_carries_refused_while_recording_gradients():
    for lib in LIBS:
        with pytest.raises(RuntimeError):
            lib.while_loop(lambda i, v: i < 2, lambda i, v: (i + 1, v * 2),
                           (0, lib.ones(2, requires_grad=True)))
