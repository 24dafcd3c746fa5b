"""plan(model, inputs, budget_bytes): choose savers or recomputation per module under a budget.

1. Profile one step: a ledger files every saved tensor under the innermost module, module hooks
   time each module's forward and note its inputs.
2. Saved tensors that share a buffer form one *unit* (a ReLU's output and the next Linear's
   input): a saver helps only if every module saving it uses it. Each unit can stay, or take a
   candidate saver (bytes kept and seconds added, calibrated once per saver on a sample array).
   A module can instead be recomputed: every unit inside it is freed (but the input checkpoint
   keeps), for the time of its forward.
3. A knapsack over the module tree (min-plus over bytes kept, in bins) finds the least added
   time whose kept bytes plus the largest recompute transient fit the budget.
4. One measured step with the chosen policy checks the ledger's peak against the budget.
"""
from __future__ import annotations

import math
import time
from typing import Any, Callable, Dict, List, Optional, Sequence

import numpy as np

from ..ops.random import randn
from ..tensor import Tensor
from ._modules import tracker
from ._packed import array_of, root_of
from .ledger import Ledger, format_bytes
from .policy import Policy, recompute
from .savers import Saver, cast, offload, quantize

BINS = 256


class _Timer:
    """Tracker listener: inclusive forward seconds per module name."""

    def __init__(self):
        self.started: Dict[int, float] = {}
        self.seconds: Dict[str, float] = {}

    def enter(self, module, name: str, is_root: bool) -> None:
        self.started[id(module)] = time.perf_counter()

    def exit(self, module, name: str, is_root: bool) -> None:
        start = self.started.pop(id(module), None)
        if start is not None:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start


def _default_loss(output: Any) -> Tensor:
    first = output[0] if isinstance(output, (tuple, list)) else output
    return first.sum()


def _step(model, inputs: tuple, loss_fn: Callable) -> float:
    start = time.perf_counter()
    loss = loss_fn(model(*inputs))
    loss.backward()
    return time.perf_counter() - start


def _calibrate(saver: Saver) -> tuple:
    """(bytes kept per byte, seconds per saved tensor, seconds per byte) of a saver."""
    kept, small = _measure(saver, 1 << 10)
    _, large = _measure(saver, 1 << 18)
    per_byte = max(0.0, (large - small) / ((1 << 18) - (1 << 10)) / 4)
    per_tensor = max(0.0, small - per_byte * (1 << 10) * 4)
    return kept, per_tensor, per_byte


def _measure(saver: Saver, size: int, length: int = 6) -> tuple:
    """(bytes kept per byte, seconds added per saved tensor) on a chain of ops that each save
    a float32 activation of ``size`` elements, forward and backward, against no saver."""
    source = randn(size, requires_grad=True)

    def chain(context) -> float:
        start = time.perf_counter()
        with context:
            value = source
            for _ in range(length):
                value = value.sin()  # saves its input: an activation (but the first)
            loss = value.sum()
        loss.backward()
        return time.perf_counter() - start

    saved = size * 4 * (length - 1)  # the first sin saves the leaf: not an activation
    plain = min(chain(_Nothing()) for _ in range(3))
    with Ledger() as led:
        timed = min(chain(saver) for _ in range(3))
    source.grad = None
    return led.total / (3 * saved), max(0.0, timed - plain) / (length - 1)


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _Unit:
    __slots__ = ("keys", "modules", "nbytes", "tensors", "savable", "home", "dtypes")

    def __init__(self):
        self.keys: set = set()
        self.modules: set = set()
        self.nbytes = 0
        self.tensors = 0
        self.savable = True
        self.home = ""
        self.dtypes: set = set()


def _common(names: set) -> str:
    parts = [n.split(".") if n else [] for n in names]
    prefix: List[str] = []
    for group in zip(*parts):
        if len(set(group)) != 1:
            break
        prefix.append(group[0])
    return ".".join(prefix)


def _units(led: Ledger) -> tuple:
    """Group counted records by shared buffers; returns (units, fixed bytes)."""
    parent: Dict[Any, Any] = {}

    def find(key):
        while parent.setdefault(key, key) != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    counted = [r for r in led.records if r.kind not in ("parameter", "buffer") and r.keys]
    for record in counted:
        keys = record.buffers
        for key in keys[1:]:
            parent[find(key)] = find(keys[0])
    units: Dict[Any, _Unit] = {}
    fixed = 0
    for record in counted:
        unit = units.setdefault(find(record.buffers[0]), _Unit())
        unit.keys.update(record.buffers)
        unit.nbytes += record.counted
        unit.tensors += 1
        if record.module is None:  # saved outside any module: no rule can reach it
            unit.savable = False
        else:
            unit.modules.add(record.module)
        if record.kind != "activation" or record.dtype is None:
            unit.savable = False
        else:
            unit.dtypes.add(np.dtype(record.dtype))
    result = []
    for unit in units.values():
        if not unit.savable and unit.nbytes:
            fixed += unit.nbytes
            continue
        unit.home = _common(unit.modules)
        if unit.nbytes:
            result.append(unit)
    return result, fixed


def _combine(left: np.ndarray, right: np.ndarray) -> tuple:
    """Min-plus convolution over kept-byte bins; also which left bin each result came from."""
    size = len(left)
    best = np.full(size, np.inf)
    source = np.zeros(size, dtype=np.int64)
    for i in np.flatnonzero(np.isfinite(left)):
        candidate = left[i] + right[:size - i]
        better = candidate < best[i:]
        best[i:][better] = candidate[better]
        source[i:][better] = i
    return best, source


class Plan:
    """What ``plan()`` chose: ``policy`` to use, and the figures behind it (``print(plan)``)."""

    def __init__(self):
        self.policy: Optional[Policy] = None
        self.budget = 0
        self.feasible = False
        self.reason = ""
        self.baseline_peak = 0
        self.baseline_seconds = 0.0
        self.estimated_peak = 0
        self.estimated_extra_seconds = 0.0
        self.measured_peak: Optional[int] = None
        self.measured_seconds: Optional[float] = None
        self.choices: List[tuple] = []  # (modules, choice, bytes before, bytes after, seconds)

    def __str__(self) -> str:
        lines = [f"memory plan: budget {format_bytes(self.budget)} "
                 f"(no policy: peak {format_bytes(self.baseline_peak)}, "
                 f"step {self.baseline_seconds * 1e3:.1f} ms)"]
        if self.choices:
            width = max(len(c[0]) for c in self.choices)
            lines.append(f"  {'modules'.ljust(width)}  {'choice':<26} {'saved bytes':>23}  "
                         "extra ms")
            for modules, choice, before, after, seconds in self.choices:
                lines.append(f"  {modules.ljust(width)}  {choice:<26} "
                             f"{format_bytes(before):>10} -> {format_bytes(after):>9}  "
                             f"{seconds * 1e3:8.2f}")
        if self.policy is not None:
            lines.append(f"  estimated: peak {format_bytes(self.estimated_peak)}, "
                         f"+{self.estimated_extra_seconds * 1e3:.1f} ms per step")
        if self.measured_peak is not None:
            lines.append(f"  measured:  peak {format_bytes(self.measured_peak)}, "
                         f"step {self.measured_seconds * 1e3:.1f} ms")
        lines.append(("  meets the budget" if self.feasible else "  cannot meet the budget: ")
                     + ("" if self.feasible else self.reason))
        return "\n".join(lines)

    __repr__ = __str__


def plan(model: Any, example_inputs: Any, budget_bytes: int, loss_fn: Optional[Callable] = None,
         candidates: Optional[Sequence[Any]] = None, verify: bool = True) -> Plan:
    """Profile one step of ``model`` on ``example_inputs`` and choose, per module, a saver or
    recomputation so that saved bytes stay under ``budget_bytes`` at the least added time.

    ``candidates``: savers and/or ``recompute()`` to choose from (default bfloat16, 8-bit,
    offload and recompute). Returns a ``Plan``; use ``plan.policy`` as a context manager around
    forward. Parameters' ``.grad`` are left as they were.
    """
    inputs = example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)
    loss_fn = loss_fn or _default_loss
    if candidates is None:
        candidates = [cast("bfloat16"), quantize(8), offload(), recompute()]
    savers = [c for c in candidates if isinstance(c, Saver)]
    allow_recompute = any(isinstance(c, recompute) for c in candidates)
    params = list(model.parameters())
    saved_grads = [p.grad for p in params]
    result = Plan()
    result.budget = int(budget_bytes)
    try:
        _step(model, inputs, loss_fn)  # warm up
        timer = _Timer()
        led = Ledger()
        tracker.acquire(timer)
        try:
            inputs_of: Dict[str, set] = {}

            def note(module, args):
                name = tracker.current()[1] if tracker.current() else ""
                inputs_of[name] = {("storage", id(root_of(array_of(a))))
                                   for a in args if isinstance(a, Tensor)}
            from ..nn.modules.module import register_module_forward_pre_hook
            handle = register_module_forward_pre_hook(note)
            try:
                with led:
                    result.baseline_seconds = _step(model, inputs, loss_fn)
            finally:
                handle.remove()
        finally:
            tracker.release(timer)
        result.baseline_peak = led.peak
        _solve(result, model, led, timer.seconds, inputs_of, savers, allow_recompute)
        if verify and result.policy is not None:
            with Ledger() as check:
                with result.policy:
                    result.measured_seconds = _step(model, inputs, loss_fn)
            result.measured_peak = check.peak
            if result.feasible and check.peak > result.budget:
                result.feasible = False
                result.reason = (f"the measured peak {format_bytes(check.peak)} is over the "
                                 f"budget (estimated {format_bytes(result.estimated_peak)})")
    finally:
        for p, grad in zip(params, saved_grads):
            p.grad = grad
    return result


def _solve(result: Plan, model, led: Ledger, seconds: Dict[str, float],
           inputs_of: Dict[str, set], savers: List[Saver], allow_recompute: bool) -> None:
    units, fixed = _units(led)
    total = fixed + sum(u.nbytes for u in units)
    quantum = max(1, -(-total // BINS))
    size = BINS + 1
    rates = [(saver, *_calibrate(saver)) for saver in savers]
    names = dict(model.named_modules())
    children: Dict[str, List[str]] = {name: [] for name in names}
    for name in names:
        if name:
            parent = name.rsplit(".", 1)[0] if "." in name else ""
            children.setdefault(parent, []).append(name)
    homes: Dict[str, List[_Unit]] = {}
    for unit in units:
        homes.setdefault(unit.home if unit.home in names else "", []).append(unit)

    def bin_of(nbytes: float) -> int:
        return min(BINS, int(math.ceil(nbytes / quantum - 1e-9)))

    def unit_table(unit: _Unit) -> tuple:
        table = np.full(size, np.inf)
        choice: Dict[int, tuple] = {}
        options = [(unit.nbytes, 0.0, None)] + [
            (unit.nbytes * kept, unit.tensors * per_tensor + unit.nbytes * per_byte, saver)
            for saver, kept, per_tensor, per_byte in rates
            if all(saver.accepts(d) for d in unit.dtypes)]
        for kept, cost, saver in options:
            b = bin_of(kept)
            if cost < table[b]:
                table[b] = cost
                choice[b] = (saver, kept, cost)
        return table, choice

    def inside(name: str, home: str) -> bool:
        return name == "" or home == name or home.startswith(name + ".")

    def subtree_bytes(name: str) -> int:
        return sum(u.nbytes for u in units if inside(name, u.home))

    def node(name: str, reserve: int) -> tuple:
        parts: List[tuple] = [("unit", u, *unit_table(u)) for u in homes.get(name, [])]
        parts += [("node", child, *node(child, reserve)) for child in children.get(name, [])]
        table = np.full(size, np.inf)
        table[0] = 0.0
        trail = []
        for part in parts:
            table, source = _combine(table, part[2])
            trail.append((part, source))
        options: Dict[int, tuple] = {}  # kept bin -> (seconds, transient, entry)
        if allow_recompute and any(u.nbytes for u in units if inside(name, u.home)):
            for kept, cost, transient, entry in recompute_options(name):
                b = bin_of(kept)
                if transient <= reserve and cost < table[b]:
                    table = table.copy()
                    table[b] = cost
                    options[b] = (cost, transient, entry)
        return table, (trail, options)

    def child_index(name: str, module: str, order: Dict[str, int]) -> Optional[int]:
        rest = module if name == "" else module[len(name) + 1:]
        if module == name or not rest:
            return None
        return order.get((name + "." if name else "") + rest.split(".")[0])

    def recompute_options(name: str) -> list:
        """(kept bytes, seconds, transient bytes, entry): the whole module, or a Sequential
        in runs as recompute(segments=k) does it."""
        inside_units = [u for u in units if inside(name, u.home)]
        freed = sum(u.nbytes for u in inside_units)
        result = []
        if name:
            held = sum(u.nbytes for u in inside_units if u.keys & inputs_of.get(name, set()))
            result.append((held, seconds.get(name, 0.0), freed - held, recompute()))
        kids = children.get(name, [])
        if len(kids) < 3 or not hasattr(names[name], "__getitem__"):
            return result
        order = {kid: i for i, kid in enumerate(kids)}
        for count in range(2, min(len(kids), 8) + 1):
            width = -(-len(kids) // count)
            runs = [kids[i:i + width] for i in range(0, len(kids), width)]
            if len(runs) < 2:
                continue
            run_of = {kid: r for r, run in enumerate(runs) for kid in run}
            freed_in = [0] * len(runs)
            for unit in inside_units:
                spots = {child_index(name, m, order) for m in unit.modules}
                if None in spots:
                    continue
                owners = {run_of[kids[i]] for i in spots}
                run = owners.pop()
                if owners or run == len(runs) - 1:
                    continue  # spans runs, or in the last run (not checkpointed)
                if unit.keys & inputs_of.get(runs[run][0], set()):
                    continue  # the run's input: checkpoint keeps it
                freed_in[run] += unit.nbytes
            cost = sum(seconds.get(kid, 0.0) for run in runs[:-1] for kid in run)
            # backward frees the last run's tensors before it recomputes any other run
            last = sum(u.nbytes for u in inside_units
                       if {child_index(name, m, order) for m in u.modules}
                       <= {order[kid] for kid in runs[-1]})
            result.append((freed - sum(freed_in), cost, max(0, max(freed_in) - last),
                           recompute(segments=len(runs))))
        return result

    def unwind(name: str, how: tuple, b: int, out: list) -> None:
        trail, options = how
        if b in options:
            cost, transient, entry = options[b]
            out.append(("recompute", name, subtree_bytes(name), b * quantum, cost, transient,
                        entry))
            return
        for part, source in reversed(trail):
            left = int(source[b])
            here = b - left
            if part[0] == "unit":
                saver, kept, cost = part[3][here]
                if saver is not None:
                    out.append(("saver", part[1], saver, kept, cost))
            else:
                unwind(part[1], part[3], here, out)
            b = left

    reserve = total
    best = None
    for _ in range(4):  # a recompute re-saves its module in backward: leave room for that
        table, how = node("", reserve)
        room = result.budget - fixed
        limit = min(BINS, room // quantum) if room >= 0 else -1
        if limit < 0 or not np.isfinite(table[:limit + 1]).any():
            break
        b = int(np.argmin(table[:limit + 1]))
        chosen: list = []
        unwind("", how, b, chosen)
        transient = max([c[5] for c in chosen if c[0] == "recompute"], default=0)
        peak = fixed + b * quantum + transient
        best = (chosen, float(table[b]), peak)
        if peak <= result.budget:
            break
        reserve = max(0, transient - 1 - (peak - result.budget))
    if best is None:
        floor_table, _ = node("", total)
        least = fixed + int(np.argmax(np.isfinite(floor_table))) * quantum
        result.reason = (f"even with every candidate the saved bytes stay near "
                         f"{format_bytes(least)} ({format_bytes(fixed)} cannot be reduced: "
                         "inputs and tensors saved outside modules)")
        return
    chosen, extra, peak = best
    rules: Dict[str, Any] = {}
    for choice in chosen:
        if choice[0] == "recompute":
            _, name, before, after, cost, _transient, entry = choice
            rules[name] = entry
            result.choices.append((name or "(model)", repr(entry), before, after, cost))
        else:
            _, unit, saver, kept, cost = choice
            for module in sorted(unit.modules):
                rules.setdefault(module, saver)
            result.choices.append((", ".join(sorted(unit.modules)), repr(saver), unit.nbytes,
                                   int(kept), cost))
    # recompute first: a module inside a recomputed one has nothing left to pack
    ordered = sorted(rules.items(), key=lambda kv: not isinstance(kv[1], recompute))
    result.policy = Policy(ordered, model=model)
    result.estimated_peak = int(peak)
    result.estimated_extra_seconds = extra
    result.feasible = peak <= result.budget
    if not result.feasible:
        result.reason = (f"the best plan found keeps {format_bytes(peak)} "
                         "(the recompute transient does not fit)")
