"""Helpers that run the same computation under hookgrad and torch and compare the results.

``compare(fn, *arrays)`` is the one comparison used by the op tables: ``fn(lib, *tensors)``
receives the library module (``hookgrad`` or ``torch``) so the same lambda runs in both.
"""
from __future__ import annotations

import collections
import os

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, settings

import hookgrad
from hookgrad import _warnings as hookgrad_warnings

torch.set_num_threads(1)

# Fuzzing is derandomized so CI is reproducible: the same examples every run, no flaky reds.
# Set HYPOTHESIS_PROFILE=explore locally to draw fresh examples.
settings.register_profile("ci", derandomize=True, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("explore", deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

TOLERANCE = {np.dtype(np.float64): (1e-10, 1e-12), np.dtype(np.float32): (1e-4, 1e-5),
             np.dtype(np.float16): (1e-2, 1e-2)}


def to_torch(tensor: hookgrad.Tensor, requires_grad: bool = None) -> torch.Tensor:
    result = torch.from_numpy(np.array(tensor._data, copy=True))
    if requires_grad if requires_grad is not None else tensor.requires_grad:
        result.requires_grad_(True)
    return result


def to_numpy(value) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        return value.detach().numpy()
    if isinstance(value, hookgrad.Tensor):
        return value.detach().numpy()
    return np.asarray(value)


def assert_close(actual, expected, rtol: float = None, atol: float = None, what: str = ""):
    """Compare a hookgrad result with a torch result: shape, dtype and values."""
    a, e = to_numpy(actual), to_numpy(expected)
    assert a.shape == e.shape, f"{what} shape {a.shape} != torch {e.shape}"
    assert a.dtype == e.dtype, f"{what} dtype {a.dtype} != torch {e.dtype}"
    default_rtol, default_atol = TOLERANCE.get(e.dtype, (0, 0))
    np.testing.assert_allclose(a, e, rtol=rtol if rtol is not None else default_rtol,
                               atol=atol if atol is not None else default_atol,
                               err_msg=what, equal_nan=True)


def _flatten(result):
    if isinstance(result, (tuple, list)):
        out = []
        for item in result:
            out.extend(_flatten(item))
        return out
    return [result]


def compare(fn, *arrays, grad: bool = True, rtol=None, atol=None, seed: int = 0,
            requires_grad=None):
    """Run ``fn(lib, *tensors)`` under both libraries on copies of ``arrays``; compare outputs
    and, if ``grad``, the gradients of every floating input for a random output gradient."""
    rng = np.random.default_rng(seed)
    flags = requires_grad if requires_grad is not None else [
        grad and np.asarray(a).dtype.kind == "f" for a in arrays]
    hg_inputs = [hookgrad.tensor(np.array(a, copy=True), requires_grad=f)
                 for a, f in zip(arrays, flags)]
    th_inputs = [torch.tensor(np.array(a, copy=True), requires_grad=f)
                 for a, f in zip(arrays, flags)]
    hg_out = _flatten(fn(hookgrad, *hg_inputs))
    th_out = _flatten(fn(torch, *th_inputs))
    assert len(hg_out) == len(th_out)
    for i, (h, t) in enumerate(zip(hg_out, th_out)):
        if isinstance(t, torch.Tensor):
            assert_close(h, t, rtol, atol, what=f"output {i}")
        else:
            assert h == t, f"output {i}: {h!r} != {t!r}"
    if not grad or not any(flags):
        return hg_out, th_out
    pairs = [(h, t) for h, t in zip(hg_out, th_out)
             if isinstance(t, torch.Tensor) and t.requires_grad]
    if not pairs:
        return hg_out, th_out
    th_grads = [torch.from_numpy(rng.standard_normal(t.shape).astype(to_numpy(t).dtype))
                for _, t in pairs]
    hg_grads = [hookgrad.tensor(g.numpy().copy()) for g in th_grads]
    torch.autograd.backward([t for _, t in pairs], th_grads)
    hookgrad.autograd.backward([h for h, _ in pairs], hg_grads)
    for i, (h, t) in enumerate(zip(hg_inputs, th_inputs)):
        if t.requires_grad:
            if t.grad is None:
                assert h.grad is None or not np.any(h.grad.numpy()), f"grad of input {i}"
            else:
                assert h.grad is not None, f"grad of input {i} is None, torch has one"
                assert_close(h.grad, t.grad, rtol, atol, what=f"grad of input {i}")
    return hg_out, th_out


def saved_log(lib, fn, *tensors):
    """What pack hooks see while ``fn`` runs: (shape, dtype name, role) per saved tensor, where
    role is the index of the input it is, 'out' for a tensor with a grad_fn, or 'other'."""
    log = []

    def pack(t):
        role = next((str(i) for i, x in enumerate(tensors) if t is x), None)
        if role is None:
            role = "other"
        log.append((tuple(t.shape), str(t.dtype).replace("torch.", ""), role))
        return t

    with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn(*tensors)
    return log


def grad_fn_chain(tensor) -> list:
    """grad_fn names from the output back along first edges, up to the leaf."""
    names, node = [], tensor.grad_fn
    while node is not None and "AccumulateGrad" not in node.name():
        names.append(node.name())
        node = node.next_functions[0][0] if node.next_functions else None
    return names


def graph_nodes(tensor) -> collections.Counter:
    """Every node of the backward graph, by name (AccumulateGrad without torch's prefix)."""
    seen, stack, names = set(), [tensor.grad_fn], []
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.append(node.name().replace("torch::autograd::", ""))
        stack.extend(next_node for next_node, _ in node.next_functions)
    return collections.Counter(names)


def graph_names(node, depth: int):
    """The names of ``node`` and of the nodes below it, ``depth`` levels down, as nested lists
    (None where an edge is empty): two graphs compared level by level."""
    if node is None:
        return None
    if depth == 0:
        return node.name()
    return [node.name(), [graph_names(child, depth - 1) for child, _ in node.next_functions]]


def graph_edges(node, depth: int = 3):
    """Each node's name with its edges' output numbers (empty edges included), ``depth`` down."""
    if node is None:
        return None
    name = node.name().replace("torch::autograd::", "")
    if depth == 0:
        return name
    return [name, [(graph_edges(child, depth - 1), nr) for child, nr in node.next_functions]]


def graph_with_numbers(node, depth: int = 12):
    """``graph_names`` with each node's non-tensor saved numbers (``_saved_other``,
    ``_saved_alpha``, ``_saved_p``) and 0-d saved tensors' values: two graphs compared by the
    numbers torch keeps on its nodes too."""
    if node is None:
        return None
    kept = {}
    for attribute in ("_saved_other", "_saved_alpha", "_saved_p"):
        try:
            value = getattr(node, attribute)
        except AttributeError:
            continue
        if hasattr(value, "shape"):
            value = ("tensor", value.item()) if tuple(value.shape) == () else "tensor"
        kept[attribute] = value
    name = node.name().replace("torch::autograd::", "")
    if depth == 0:
        return name, kept
    return [name, kept, [graph_with_numbers(child, depth - 1)
                         for child, _ in node.next_functions]]


def backward_outcome(tensor) -> str:
    """"ok" when ``tensor.sum().backward()`` runs, "refused" when it raises the error of a saved
    tensor modified in place (any other error fails the test)."""
    try:
        tensor.sum().backward()
    except RuntimeError as error:
        assert "modified by an inplace operation" in str(error)
        return "refused"
    return "ok"


def error_of(fn):
    """(exception type, message) of the error ``fn()`` raises, or None if it raises none."""
    try:
        fn()
    except Exception as error:  # noqa: BLE001  (the type is what is compared)
        return type(error), str(error)
    return None


def raised(fn, lib):
    """(exception type, message) of the error ``fn(lib)`` raises; the test fails if none."""
    with pytest.raises(Exception) as info:
        fn(lib)
    return type(info.value), str(info.value)


def assert_same_error(fn):
    """hookgrad raises torch's exception type with a message that starts with torch's."""
    kind, message = raised(fn, torch)
    with pytest.raises(kind) as info:
        fn(hookgrad)
    message = message.splitlines()[0]  # torch's argument-parser errors go on listing overloads
    assert str(info.value).startswith(message), (str(info.value), message)


def compare_double_backward(fn, *arrays, seed=0):
    """Second derivatives: grad of <first grads, v> w.r.t. the inputs and the output gradient
    (that one checks backward is built from differentiable ops even for linear maps). Of a
    ``(values, indices)`` result only the values count."""
    results = []
    for lib in (torch, hookgrad):
        rng = np.random.default_rng(seed)
        inputs = [lib.tensor(a.copy(), requires_grad=True) for a in arrays]
        out = fn(lib, *inputs)
        out = out[0] if isinstance(out, tuple) else out
        weight = lib.tensor(rng.standard_normal(tuple(out.shape)), requires_grad=True)
        firsts = lib.autograd.grad(out, inputs, weight, create_graph=True)
        total = sum((g * lib.tensor(rng.standard_normal(a.shape))).sum()
                    for g, a in zip(firsts, arrays))
        results.append(lib.autograd.grad(total, inputs + [weight], allow_unused=True))
    for ours, theirs in zip(results[1], results[0]):
        if theirs is not None and theirs._is_zerotensor():  # torch's symbolic zero
            theirs = torch.zeros(theirs.shape, dtype=theirs.dtype)
        if theirs is None:
            assert ours is None or not np.any(ours.detach().numpy())
        else:
            assert ours is not None, "hookgrad has no second derivative, torch has one"
            assert_close(ours, theirs, what="second derivative")


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def double_backward(fn, *arrays, seed=0):
    """``compare_double_backward`` for ops whose second derivative in some input is zero: torch
    may return a dense zero tensor where hookgrad returns None (an unused input)."""
    results = []
    for lib in (torch, hookgrad):
        rng = np.random.default_rng(seed)
        inputs = [lib.tensor(a.copy(), requires_grad=True) for a in arrays]
        out = fn(lib, *inputs)
        out = out[0] if isinstance(out, tuple) else out
        weight = lib.tensor(rng.standard_normal(tuple(out.shape)), requires_grad=True)
        firsts = lib.autograd.grad(out, inputs, weight, create_graph=True, allow_unused=True)
        total = sum((g * lib.tensor(rng.standard_normal(a.shape))).sum()
                    for g, a in zip(firsts, arrays) if g is not None)
        results.append(lib.autograd.grad(total, inputs + [weight], allow_unused=True))
    for ours, theirs in zip(results[1], results[0]):
        if theirs is None or theirs._is_zerotensor() or not np.any(theirs.detach().numpy()):
            assert ours is None or not np.any(ours.detach().numpy()), "torch's is zero"
        else:
            assert ours is not None, "hookgrad has no second derivative, torch has one"
            assert_close(ours, theirs, what="second derivative")


def init_draws(lib, build):
    """The random draws ``build()`` makes while it runs, as (kind, shape, a, b) in order: every
    ``uniform_`` (a, b = bounds) and ``normal_`` (a, b = mean, std), whether called through
    ``nn.init`` or on a tensor. Two layers whose lists agree initialise the same way, draw for
    draw, whatever the random stream."""
    draws, depth = [], [0]

    def recorder(kind, original):
        def record(tensor, a=0.0, b=1.0, *args, **kwargs):
            if depth[0] == 0:
                draws.append((kind, tuple(tensor.shape), round(float(a), 12), round(float(b), 12)))
            depth[0] += 1
            try:
                return original(tensor, a, b, *args, **kwargs)
            finally:
                depth[0] -= 1
        return record

    owners = [lib.Tensor] + ([lib.nn.init] if lib is hookgrad else [])
    saved = [(owner, name, getattr(owner, name)) for owner in owners
             for name in ("uniform_", "normal_")]
    try:
        for owner, name, original in saved:
            setattr(owner, name, recorder(name, original))
        module = build()
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)
    return module, draws


@pytest.fixture(autouse=True)
def _fresh_warn_once_state():
    """Every test sees hookgrad's once-per-process warnings as a fresh process would, whatever
    ran before it (torch's own once-state cannot be reset: compare it in a subprocess)."""
    hookgrad_warnings.forget_warned_once()


@pytest.fixture(autouse=True)
def _short_planner_timings(request, monkeypatch):
    """Planner calls in tests/memory assert choices and bytes, never timings: a short
    measurement keeps the suite fast (``plan`` otherwise times each candidate for a few
    seconds, and goes on sampling for up to ``TIME_LIMIT`` while a figure is not known to
    10 %). Kept here, not in a conftest of that folder: two modules named ``conftest`` would
    shadow each other's helpers."""
    if "memory" in request.node.path.parent.parts[-1:]:
        from hookgrad.memory import _timing
        monkeypatch.setattr(_timing, "MEASURE_SECONDS", 0.25)
        monkeypatch.setattr(_timing, "TIME_LIMIT", 0.25)


def traced_peak(fn) -> int:
    """The most bytes NumPy and Python held at once while ``fn()`` ran, above what was held
    when it started (tracemalloc sees NumPy's buffers)."""
    import tracemalloc
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        fn()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
