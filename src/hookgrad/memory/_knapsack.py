"""The planner's solver: a knapsack over the module tree, in bins of saved bytes kept.

Each *unit* (saved tensors sharing one buffer, see ``planner._units``) can stay as it is or
take a candidate saver; each module can instead be recomputed as a whole, and a ``Sequential``
in ``k`` runs. Tables map a bin of kept bytes to the least weight added; children combine by
a min-plus convolution. Tables hold decision weights, computed from counts alone (``_work``):
bytes and tensors per unit, each module's forward work. So the plan is the same on every run
whatever the timings. Each option also carries its estimated seconds: its weight scaled by
what its part of the plan (its saver on the modules the plan gives it) measured against the
weight of that part, which the estimate sums (corrected by what the parts measured
together, for a plan of several). Ties keep the first option met (no saver
before a saver, savers in the order given, fewer bytes kept), so equal weights always give
the same plan.
"""
from __future__ import annotations

import copy
import math
from typing import Any, Callable, Dict, List, Optional, Sequence

import numpy as np

from ._backend import Backend, dtype_from_name
from ._costs import TOGETHER, ModelCosts, calibrate
from ._work import RECOMPUTE_FIXED, ModuleWork, policy_weight, step_cost
from .ledger import Ledger, format_bytes
from .policy import Policy, recompute
from .savers import Saver

BINS = 256
# a candidate measured on the model at less than this fraction of its weight there is taken
# at this fraction: timing noise on a loaded machine, not a free saver
LEAST_SCALE = 0.25


def extra_error_of(parts: Sequence[tuple], policy: float) -> Optional[float]:
    """The standard error of the estimate from those of its parts, each ``(weight, standard
    error of what it measured)``. A part's options and per-step work come to its scale times
    its weight less the policy's own work, and the policy's own work to the parts' mean scale
    times it, so the estimate moves by ``(weight - policy + policy / parts) / weight`` per
    second a part measures; the parts are timed on steps of their own, so their errors add
    in quadrature. (A part floored at ``LEAST_SCALE`` does not move the estimate, yet what it
    measured is known no better: its error counts alike.) None when a part's error is not
    known (an older costs file)."""
    if not parts or any(error is None for _, error in parts):
        return None
    return math.sqrt(math.fsum(((weight - policy + policy / len(parts)) / weight * error) ** 2
                               for weight, error in parts))


def together_estimate(composed: float, together: float) -> float:
    """The estimate of a plan of several parts: what the parts measured together, in the
    same rounds as each alone (``composed`` is the parts' sum, the policy's own work counted
    once). The difference is what the parts do to each other when all are active (caches,
    the allocator, offload's writer thread beside another saver's work) and what summing
    gets wrong; ``solve`` shows it beside the per-step costs. At least ``LEAST_SCALE`` of
    the sum: a lower figure is timing noise."""
    return max(together, LEAST_SCALE * composed)


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


class Knapsack:
    """One solve: the module tree, the units filed under it and the calibrated costs."""

    def __init__(self, model, units: list, fixed: int, work: ModuleWork,
                 inputs_of: Dict[str, set], savers: List[Saver], allow_recompute: bool,
                 backend: Backend, recalibrate: bool = False,
                 costs: Optional[ModelCosts] = None, tensors: int = 0):
        self.units, self.fixed = units, fixed
        self.work, self.inputs_of = work, inputs_of
        self.allow_recompute = allow_recompute
        self.total = fixed + sum(u.nbytes for u in units)
        self.quantum = max(1, -(-self.total // BINS))
        self.size = BINS + 1
        self.rates = [(saver, *calibrate(saver, backend, recalibrate)) for saver in savers]
        self.policy = policy_weight(sum(work.calls.values()), tensors)
        self.calibrate(costs)
        self.names = dict(model.named_modules())
        self.children: Dict[str, List[str]] = {name: [] for name in self.names}
        for name in self.names:
            if name:
                parent = name.rsplit(".", 1)[0] if "." in name else ""
                self.children.setdefault(parent, []).append(name)
        self._options: Dict[str, list] = {}
        self.homes: Dict[str, list] = {}
        for unit in units:
            self.homes.setdefault(unit.home if unit.home in self.names else "", []).append(unit)

    def without(self, left_out: set) -> "Knapsack":
        """The same solve with the savers whose ids are in ``left_out`` not offered."""
        other = copy.copy(self)
        other.rates = [r for r in self.rates if id(r[0]) not in left_out]
        other._options = self._options
        return other

    # -- costs ---------------------------------------------------------------------------------
    def _accepts(self, saver: Saver, unit) -> bool:
        return all(saver.accepts(dtype_from_name(d)) for d in unit.dtypes)

    def calibrate(self, costs: Optional[ModelCosts], chosen: Sequence[tuple] = ()) -> None:
        """Scales from weights to seconds, from what ``costs`` measured: the plan in parts,
        each part (one saver on the units the plan gives it, or the plan's recomputes) a
        policy of its own timed against no policy. A part's scale is what it added over its
        weight: the policy's own work (``policy_weight``), the saver's per-step work, and
        the weights of ``chosen``'s options in that part. So an estimate rests on the modules
        and tensors the plan uses, not on a saver spread over the whole model (offload's
        cost per tensor there is not its cost on a few of them). At least ``LEAST_SCALE``:
        a lower figure, even below 0, is timing noise. 1 where nothing was measured. The
        policy's own work, paid once whatever the parts, is estimated at their mean scale.
        ``extra_error``: the estimate's standard error from the parts' (``extra_error_of``)."""
        self.scales: Dict[int, float] = {id(saver): 1.0 for saver, *_ in self.rates}
        self.rerun = 1.0
        measured = []
        parts = []  # (weight, standard error) of each part measured
        if costs is not None:
            for saver, *_ in self.rates:
                if repr(saver) not in costs.savers:
                    continue
                weight = self.policy + step_cost(saver) + math.fsum(
                    c[4] for c in chosen if c[0] == "saver" and c[2] is saver)
                self.scales[id(saver)] = max(LEAST_SCALE, costs.savers[repr(saver)] / weight)
                measured.append(self.scales[id(saver)])
                parts.append((weight, costs.errors.get(repr(saver))))
            if costs.recompute is not None:
                weight = self.policy + math.fsum(c[4] for c in chosen if c[0] == "recompute")
                self.rerun = max(LEAST_SCALE, costs.recompute / weight)
                measured.append(self.rerun)
                parts.append((weight, costs.errors.get("recompute")))
        self.policy_seconds = self.policy * (float(np.mean(measured)) if measured else 1.0)
        self.extra_error = extra_error_of(parts, self.policy)

    def saver_cost(self, unit, saver: Saver, per_tensor: float, per_byte: float) -> tuple:
        """(decision weight, estimated seconds) of ``saver`` on ``unit``."""
        weight = unit.tensors * per_tensor + unit.nbytes * per_byte
        return weight, weight * self.scales[id(saver)]

    def recompute_cost(self, weight: float) -> tuple:
        """(decision weight, estimated seconds) of a recompute of ``weight``."""
        return weight, weight * self.rerun

    # -- tables --------------------------------------------------------------------------------
    def bin_of(self, nbytes: float) -> int:
        return min(BINS, int(math.ceil(nbytes / self.quantum - 1e-9)))

    def unit_table(self, unit) -> tuple:
        """Kept bin -> least weight for one unit, and the (saver, kept, estimate) behind it
        (the estimate is the weight until ``calibrate``)."""
        table = np.full(self.size, np.inf)
        choice: Dict[int, tuple] = {}
        options = [(unit.nbytes, (0.0, 0.0), None)] + [
            (unit.nbytes * kept, self.saver_cost(unit, saver, per_tensor, per_byte), saver)
            for saver, kept, per_tensor, per_byte in self.rates if self._accepts(saver, unit)]
        for kept, (cost, estimate), saver in options:
            b = self.bin_of(kept)
            if cost < table[b]:
                table[b] = cost
                choice[b] = (saver, kept, estimate)
        return table, choice

    def node(self, name: str, reserve: int) -> tuple:
        """The table of a module: its own units and children combined, or recompute options
        whose transient (what backward re-saves) is at most ``reserve``."""
        parts: List[tuple] = [("unit", u, *self.unit_table(u)) for u in self.homes.get(name, [])]
        parts += [("node", child, *self.node(child, reserve))
                  for child in self.children.get(name, [])]
        table = np.full(self.size, np.inf)
        table[0] = 0.0
        trail = []
        for part in parts:
            table, source = _combine(table, part[2])
            trail.append((part, source))
        options: Dict[int, tuple] = {}  # kept bin -> (estimate, transient, entry)
        if self.allow_recompute and self.subtree_bytes(name):
            for kept, weight, transient, entry in self.recompute_options(name):
                b = self.bin_of(kept)
                cost, estimate = self.recompute_cost(weight)
                if transient <= reserve and cost < table[b]:
                    table = table.copy()
                    table[b] = cost
                    options[b] = (estimate, transient, entry)
        return table, (trail, options)

    # -- recompute -----------------------------------------------------------------------------
    @staticmethod
    def inside(name: str, home: str) -> bool:
        return name == "" or home == name or home.startswith(name + ".")

    def subtree_bytes(self, name: str) -> int:
        return sum(u.nbytes for u in self.units if self.inside(name, u.home))

    def recompute_options(self, name: str) -> list:
        """(kept bytes, weight, transient bytes, entry): the whole module, or a Sequential
        in runs as recompute(segments=k) does it (worked out once per module)."""
        if name not in self._options:
            self._options[name] = self._recompute_options(name)
        return self._options[name]

    def _recompute_options(self, name: str) -> list:
        inside_units = [u for u in self.units if self.inside(name, u.home)]
        freed = sum(u.nbytes for u in inside_units)
        result = []
        if name:
            held = sum(u.nbytes for u in inside_units
                       if u.keys & self.inputs_of.get(name, set()))
            result.append((held, RECOMPUTE_FIXED + self.work.work(name), freed - held,
                           recompute()))
        kids = self.children.get(name, [])
        if len(kids) < 3 or not hasattr(self.names[name], "__getitem__"):
            return result
        for count in range(2, min(len(kids), 8) + 1):
            width = -(-len(kids) // count)
            runs = [kids[i:i + width] for i in range(0, len(kids), width)]
            if len(runs) >= 2:
                result.append(self.segments_option(name, kids, runs, inside_units, freed))
        return result

    def segments_option(self, name: str, kids: list, runs: list, inside_units: list,
                        freed: int) -> tuple:
        """recompute(segments=len(runs)) of the Sequential ``name``: each run but the last is
        checkpointed, so its units are freed unless they are its input or span runs."""
        order = {kid: i for i, kid in enumerate(kids)}
        run_of = {kid: r for r, run in enumerate(runs) for kid in run}
        freed_in = [0] * len(runs)
        for unit in inside_units:
            spots = {_child_index(name, m, order) for m in unit.modules}
            if None in spots:
                continue
            owners = {run_of[kids[i]] for i in spots}
            run = owners.pop()
            if owners or run == len(runs) - 1:
                continue  # spans runs, or in the last run (not checkpointed)
            if unit.keys & self.inputs_of.get(runs[run][0], set()):
                continue  # the run's input: checkpoint keeps it
            freed_in[run] += unit.nbytes
        cost = sum(RECOMPUTE_FIXED + sum(self.work.work(kid) for kid in run) for run in runs[:-1])
        # backward frees the last run's tensors before it recomputes any other run
        last = sum(u.nbytes for u in inside_units
                   if {_child_index(name, m, order) for m in u.modules}
                   <= {order[kid] for kid in runs[-1]})
        return (freed - sum(freed_in), cost, max(0, max(freed_in) - last),
                recompute(segments=len(runs)))

    # -- the answer ----------------------------------------------------------------------------
    def unwind(self, name: str, how: tuple, b: int, out: list) -> None:
        """The choices behind bin ``b`` of module ``name``'s table, appended to ``out``."""
        trail, options = how
        if b in options:
            cost, transient, entry = options[b]
            out.append(("recompute", name, self.subtree_bytes(name), b * self.quantum, cost,
                        transient, entry))
            return
        for part, source in reversed(trail):
            left = int(source[b])
            here = b - left
            if part[0] == "unit":
                saver, kept, cost = part[3][here]
                if saver is not None:
                    out.append(("saver", part[1], saver, kept, cost))
            else:
                self.unwind(part[1], part[3], here, out)
            b = left

    def best(self, budget: int) -> Optional[tuple]:
        """(choices, weight, peak) of the least added weight under ``budget``, or None.

        A recompute re-saves its module during backward: its transient must fit beside what
        is kept. So for each cap on the transient (0 and each recompute's own), recomputes
        above the cap are left out and the kept bytes get the budget less the cap; every plan
        found that way fits, and the cheapest wins (of equal ones, the lower cap). Without
        any that fits, the plan keeping the fewest bytes within the budget is returned, as
        infeasible."""
        found = None
        for cap in self.transient_levels():
            room = budget - self.fixed - cap
            if room < 0:
                break
            table, how = self.node("", cap)
            limit = min(BINS, room // self.quantum)
            if not np.isfinite(table[:limit + 1]).any():
                continue
            b = int(np.argmin(table[:limit + 1]))  # the first of equal costs: fewest bytes
            if found is not None and not table[b] < found[1]:
                continue
            chosen: list = []
            self.unwind("", how, b, chosen)
            transient = max([c[5] for c in chosen if c[0] == "recompute"], default=0)
            found = (chosen, float(table[b]), self.fixed + b * self.quantum + transient)
        if found is not None:
            return found
        table, how = self.node("", self.total)
        room = budget - self.fixed
        limit = min(BINS, room // self.quantum) if room >= 0 else -1
        if limit < 0 or not np.isfinite(table[:limit + 1]).any():
            return None
        b = int(np.argmin(table[:limit + 1]))
        chosen = []
        self.unwind("", how, b, chosen)
        transient = max([c[5] for c in chosen if c[0] == "recompute"], default=0)
        return chosen, float(table[b]), self.fixed + b * self.quantum + transient

    def transient_levels(self) -> list:
        """0 and every recompute option's transient, ascending."""
        levels = {0}
        if self.allow_recompute:
            for name in self.names:
                if self.subtree_bytes(name):
                    levels.update(option[2] for option in self.recompute_options(name))
        return sorted(levels)

    def floor(self) -> int:
        """The fewest saved bytes any plan keeps."""
        table, _ = self.node("", self.total)
        return self.fixed + int(np.argmax(np.isfinite(table))) * self.quantum


def _child_index(name: str, module: str, order: Dict[str, int]) -> Optional[int]:
    rest = module if name == "" else module[len(name) + 1:]
    if module == name or not rest:
        return None
    return order.get((name + "." if name else "") + rest.split(".")[0])


def solve(result, model, led: Ledger, units: list, fixed: int, work: ModuleWork,
          inputs_of: Dict[str, set], savers: List[Saver], allow_recompute: bool,
          backend: Backend, budget: int, recalibrate: bool = False,
          measure: Optional[Callable[[list], ModelCosts]] = None) -> Optional[ModelCosts]:
    """Fill ``result`` (a ``Plan``) with the knapsack's answer; ``budget`` is on saved bytes
    (``plan`` converts a whole-step budget). A saver that costs something once per step
    (``_work.step_cost``) is tried in and out of the candidates, and the plans compared with
    that cost added. The choice made, ``measure(rules)`` times the plan's policy (``rules``)
    in parts on the model, one part per saver used and one for its recomputes (each part
    the plan's rules with the other parts' entries set to ``None``), and the estimate is
    the options' weights scaled by their part's figure, plus what a policy adds before it
    stores anything (once), plus the per-step cost of each such saver used. A plan of
    several parts was also timed whole in the same rounds (``ModelCosts.together``): its
    estimate is that figure, and what it differs from the parts' sum by is shown as a
    per-step entry (``TOGETHER``). Returns what ``measure`` returned."""
    knapsack = Knapsack(model, units, fixed, work, inputs_of, savers, allow_recompute,
                        backend, recalibrate, tensors=len(led.records))
    once = [s for s in savers if step_cost(s) > 0]
    found = None
    for mask in range(1 << len(once)):  # the fewest per-step savers first: they win ties
        left_out = {id(s) for i, s in enumerate(once) if not mask >> i & 1}
        trial = knapsack if not left_out else knapsack.without(left_out)
        best = trial.best(budget)
        if best is None:
            continue
        used = {id(c[2]) for c in best[0] if c[0] == "saver"}
        total = best[1] + sum(step_cost(s) for s in once if id(s) in used)
        key = (best[2] > budget, total)
        if found is None or key < found[0]:
            found = (key, best, trial)
    if found is None:
        result.reason = (f"even with every candidate the saved bytes stay near "
                         f"{format_bytes(knapsack.floor())} ({format_bytes(fixed)} cannot be "
                         "reduced: inputs and tensors saved outside modules)")
        return None if measure is None else measure([])
    _, (chosen, _, peak), knapsack = found
    used_savers = {id(c[2]): c[2] for c in chosen if c[0] == "saver"}
    # recompute first: a module inside a recomputed one has nothing left to pack
    ordered = sorted(_rules_of(chosen).items(), key=lambda kv: not isinstance(kv[1], recompute))
    costs = None
    if measure is not None:
        costs = measure(ordered)
        knapsack.calibrate(costs, chosen)
    chosen = [_rescaled(knapsack, choice) for choice in chosen]
    extra = sum(choice[4] for choice in chosen)
    per_step: Dict[str, float] = {}
    if chosen:
        per_step["policy"] = knapsack.policy_seconds
    for saver in used_savers.values():
        if step_cost(saver) > 0:
            per_step[repr(saver)] = step_cost(saver) * knapsack.scales[id(saver)]
    extra += sum(per_step.values())
    error = knapsack.extra_error if costs is not None else None
    if costs is not None and costs.together is not None:
        together = together_estimate(extra, costs.together)
        per_step[TOGETHER] = together - extra
        extra, error = together, costs.errors.get(TOGETHER)
    _record_choices(result, chosen)
    result.policy = Policy(ordered, model=model, framework=backend.name)
    result.estimated_peak = int(peak)
    result.estimated_extra_seconds = extra
    result.estimated_extra_error = error
    result.per_step_seconds = per_step
    result.feasible = peak <= budget
    if not result.feasible:
        result.reason = (f"the best plan found keeps {format_bytes(peak)} "
                         "(the recompute transient does not fit)")
    return costs


def _rescaled(knapsack: Knapsack, choice: tuple) -> tuple:
    """``choice`` with its weight (index 4, as the tables held it before any timing) turned
    into estimated seconds by the calibrated scales."""
    if choice[0] == "recompute":
        return choice[:4] + (knapsack.recompute_cost(choice[4])[1],) + choice[5:]
    return choice[:4] + (choice[4] * knapsack.scales[id(choice[2])],)


def _rules_of(chosen: list) -> Dict[str, Any]:
    """The policy's rules for ``chosen``: each recomputed module, each module of a stored
    unit."""
    rules: Dict[str, Any] = {}
    for choice in chosen:
        if choice[0] == "recompute":
            rules[choice[1]] = choice[6]
        else:
            for module in sorted(choice[1].modules):
                rules.setdefault(module, choice[2])
    return rules


def _record_choices(result, chosen: list) -> None:
    """One line per choice in ``result.choices``."""
    for choice in chosen:
        if choice[0] == "recompute":
            _, name, before, after, cost, _transient, entry = choice
            result.choices.append((name or "(model)", repr(entry), before, after, cost))
        else:
            _, unit, saver, kept, cost = choice
            result.choices.append((", ".join(sorted(unit.modules)), repr(saver), unit.nbytes,
                                   int(kept), cost))
