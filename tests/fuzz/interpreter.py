"""Runs a program under one library and records what happened, then compares two recordings.

The record is one ordered list of events: for every line ``("ok", i)`` or ``("error", i, kind)``,
then the state of the names the line shows; every ``note`` a hook makes, where it happens (so
hook order is compared); and at the end the state and ``.grad`` of every name still defined.
A tensor's state is its values, shape, dtype, ``requires_grad``, ``is_leaf``, whether ``grad_fn``
is None, ``is_contiguous()`` and ``stride()``.
"""
from __future__ import annotations

import functools
import warnings

import numpy as np

from .prelude import PRELUDE

# (rtol, atol) per dtype; float64 is near-exact, float32 allows for a different summation order
TOLERANCE = {"float64": (1e-9, 1e-11), "float32": (2e-4, 1e-5)}

# The families an error is compared by: torch and hookgrad must raise the same one.
ERROR_KINDS = (IndexError, TypeError, ValueError, AttributeError, RuntimeError, NameError)


class _Library:
    """One library's namespace with the prelude already defined in it."""

    def __init__(self, module):
        self.module = module
        self.tensor_type = module.Tensor
        self.events: list = []
        self.namespace = {"torch": module, "numpy": np, "note": self.note}
        exec(compile(PRELUDE, "<fuzz prelude>", "exec"), self.namespace)

    def note(self, label, *values):
        self.events.append(("note", label, [self.state(v) for v in values]))

    def state(self, value):
        if isinstance(value, self.tensor_type):
            try:
                data = np.array(value.detach().numpy(), copy=True)
            except RuntimeError:  # torch's ZeroTensor (an undefined gradient made zeros)
                data = np.zeros(tuple(value.shape), dtype=str(value.dtype).split(".")[-1])
            state = {"shape": tuple(value.shape), "dtype": str(value.dtype).split(".")[-1],
                     "data": data}
            for key, read in _PROPERTIES:
                try:
                    state[key] = read(value)
                except Exception as error:  # noqa: BLE001 - torch raises for stale views
                    state[key] = f"raises {_kind(error)}"
            return state
        if isinstance(value, (tuple, list)):
            return [self.state(v) for v in value]
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        if type(value).__name__ == "Size":
            return tuple(value)
        return type(value).__name__


_PROPERTIES = (("requires_grad", lambda t: t.requires_grad), ("is_leaf", lambda t: t.is_leaf),
               ("grad_fn", lambda t: t.grad_fn is not None),
               ("contiguous", lambda t: t.is_contiguous()), ("stride", lambda t: tuple(t.stride())))


@functools.lru_cache(maxsize=None)
def _library(name: str) -> _Library:
    if name == "torch":
        import torch
        torch.set_num_threads(1)
        return _Library(torch)
    import hookgrad
    return _Library(hookgrad)


@functools.lru_cache(maxsize=65536)
def _compiled(code: str):
    return compile(code, "<fuzz program>", "exec")


def _kind(error: BaseException) -> str:
    for kind in ERROR_KINDS:
        if isinstance(error, kind):
            return kind.__name__
    return type(error).__name__


def run(program: dict, library: str) -> list:
    """Execute ``program`` with ``torch`` bound to ``library`` ("torch" or "hookgrad")."""
    lib = _library(library)
    lib.events = events = []
    scope = dict(lib.namespace)
    defined: set = set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            for i, line in enumerate(program["lines"]):
                if any(name not in defined for name in line["ins"]):
                    events.append(("skipped", i))
                    continue
                try:
                    exec(_compiled(line["code"]), scope)
                except Exception as error:  # noqa: BLE001 - every error is compared by kind
                    events.append(("error", i, _kind(error), f"{type(error).__name__}: {error}"))
                    continue
                defined.update(line["outs"])
                events.append(("ok", i))
                for name in line["show"]:
                    events.append(("state", name, lib.state(scope[name])))
            for name in sorted(defined):
                value = scope[name]
                if isinstance(value, lib.tensor_type):
                    events.append(("final", name, lib.state(value), lib.state(value.grad)))
        finally:
            saved = scope.get("saved_hooks")
            if saved is not None:
                try:
                    saved.__exit__(None, None, None)
                except Exception:  # noqa: BLE001 - already closed by the program
                    pass
    return events


def _addressing(stride: tuple, shape: tuple) -> tuple:
    return tuple(st if size > 1 else None for st, size in zip(stride, shape))


def _same(a, b, dtype: str, path: str, layout: bool = True):
    """None if the two recorded values agree, else a sentence saying where they differ.

    ``layout=False`` leaves out contiguity and strides: torch defines them for the results of
    ops, not for the gradients its backward formulas happen to produce (a sum's gradient is an
    expanded view there, a fresh array here; both are the same values)."""
    if isinstance(a, dict) and isinstance(b, dict):
        keys = ("shape", "dtype", "requires_grad", "is_leaf", "grad_fn")
        for key in keys + (("contiguous", "stride") if layout else ()):
            mine, theirs = a[key], b[key]
            if key == "stride" and isinstance(mine, tuple) and isinstance(theirs, tuple):
                # a size-1 dimension's stride is never used to address memory (torch's own
                # is_contiguous ignores it) and torch's choice there follows its kernels
                mine, theirs = _addressing(mine, a["shape"]), _addressing(theirs, b["shape"])
            if mine != theirs:
                return f"{path}: {key} hookgrad {a[key]} != torch {b[key]}"
        rtol, atol = TOLERANCE.get(b["dtype"], TOLERANCE[dtype])
        x, y = a["data"], b["data"]
        if x.dtype.kind == "f" or y.dtype.kind == "f":
            close = np.allclose(x, y, rtol=rtol, atol=atol, equal_nan=True)
        else:
            close = np.array_equal(x, y)
        if not close:
            return f"{path}: values hookgrad {x.tolist()} != torch {y.tolist()}"
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} items != torch {len(b)}"
        for i, (u, v) in enumerate(zip(a, b)):
            found = _same(u, v, dtype, f"{path}[{i}]", layout)
            if found:
                return found
        return None
    if isinstance(a, float) and isinstance(b, float):
        return None if np.isclose(a, b, equal_nan=True) else f"{path}: {a} != torch {b}"
    return None if a == b and type(a) is type(b) else f"{path}: hookgrad {a!r} != torch {b!r}"


def compare(hookgrad_events: list, torch_events: list, program: dict):
    """None when the two runs agree, else a description of the first difference."""
    lines = program["lines"]
    for a, b in zip(hookgrad_events, torch_events):
        if b[0] == "error" and "INTERNAL ASSERT FAILED" in b[3]:
            # torch stopped on its own internal consistency check: what follows is not torch's
            # behaviour to match, so the comparison ends here (what came before was compared)
            return None
        where = f"line {a[1]}: {lines[a[1]]['code']}" if a[0] in ("ok", "error") else ""
        if a[0] != b[0] or (a[0] != "note" and a[1] != b[1]):
            return (f"event differs: hookgrad {_describe(a, lines)} / torch {_describe(b, lines)}")
        if a[0] == "error":
            if a[2] != b[2]:
                return f"{where}: hookgrad raised {a[3]} / torch raised {b[3]}"
        elif a[0] == "note":
            found = a[1] != b[1] and f"hook {a[1]} != torch {b[1]}"
            found = found or _same(a[2], b[2], program["dtype"], f"hook {a[1]}", False)
            if found:
                return found
        elif a[0] == "state":
            found = _same(a[2], b[2], program["dtype"], a[1], not a[1].startswith("g"))
            if found:
                return found
        elif a[0] == "final":
            found = _same(a[2], b[2], program["dtype"], f"final {a[1]}",
                          not a[1].startswith("g"))
            found = found or _same(a[3], b[3], program["dtype"], f"final {a[1]}.grad")
            if found:
                return found
    if len(hookgrad_events) != len(torch_events):
        longer = hookgrad_events if len(hookgrad_events) > len(torch_events) else torch_events
        extra = longer[min(len(hookgrad_events), len(torch_events))]
        who = "hookgrad" if longer is hookgrad_events else "torch"
        return f"only {who} has {_describe(extra, lines)}"
    return None


def _describe(event, lines) -> str:
    if event[0] == "error":
        return f"error at line {event[1]} ({lines[event[1]]['code']}): {event[3]}"
    if event[0] in ("ok", "skipped"):
        return f"{event[0]} line {event[1]} ({lines[event[1]]['code']})"
    return f"{event[0]} {event[1]}"


def check(program: dict):
    """Run ``program`` under both libraries; None if they agree, else the first difference."""
    try:
        theirs = run(program, "torch")
    except Exception as error:  # noqa: BLE001 - the interpreter itself failed under torch
        return f"interpreter failed under torch: {error!r}"
    try:
        ours = run(program, "hookgrad")
    except Exception as error:  # noqa: BLE001
        return f"interpreter failed under hookgrad: {error!r}"
    return compare(ours, theirs, program)
