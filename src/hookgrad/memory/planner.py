"""plan(model, inputs, budget_bytes): choose savers or recomputation per module under a budget.

1. Profile: a ledger files every saved tensor under the innermost module, module hooks count
   each module's forward work and note its inputs (``_work``: counts, the same every run).
2. Saved tensors that share a buffer form one *unit* (a ReLU's output and the next Linear's
   input): a saver helps only if every module saving it uses it. Each unit can stay, or take a
   candidate saver (bytes kept, and a weight from its tensors and bytes). A module can instead
   be recomputed: every unit inside it is freed (but the input checkpoint keeps), for a weight
   from its forward work.
3. A knapsack over the module tree (min-plus over bytes kept, in bins) finds the least added
   weight whose kept bytes plus the largest recompute transient fit the budget. The weights
   are counts at reference rates, so the plan repeats.
4. The plan is timed in parts on the model (``_parts``: each saver on the modules the plan
   gives it, and its recomputes; a plan of several parts also whole, in the same rounds),
   which scales the chosen options' weights into the estimated seconds. Then measured
   steps with the chosen policy check the peak against the budget and time the plan
   against no policy. Both timings pair each policy step with a step without one and take
   a robust mean of the differences, sampling until its standard error is within 10 % of
   it or ``time_limit`` passes (``_timing``); the estimate and the check each carry their
   standard error.

The budget is on the measured peak of the whole step by default (what a user runs out of),
or on saved bytes (``budget_on="saved"``, and always when ``measure=False``); the plan
reports both, estimated and measured side by side
(``baseline_memory_peak``, ``estimated_memory_peak``, ``memory_peak``): tracemalloc over
NumPy's allocations for hookgrad, the profiler's memory events on a CPU and
``max_memory_allocated`` on a GPU for torch.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence

from ._backend import Backend, backend_for
from ._modules import tracker_for
from . import _timing
from ._costs import (MODEL_COSTS, SAVER_RATES, TOGETHER, ModelCosts, install_costs,
                     install_rates, load_costs, rate_key, save_costs, signature,
                     stable_signature)
from ._timing import clock_of, time_contexts
from ._knapsack import solve
from ._lower_peak import fit_peak
from .ledger import Ledger, format_bytes
from ._plan import Plan
from .policy import Policy, recompute
from .savers import Saver, cast, offload, quantize
from .savers.offload import reads_done_at_once
from ._work import ModuleWork


def _default_loss(output: Any) -> Any:
    first = output[0] if isinstance(output, (tuple, list)) else output
    return first.sum()


def _step(model, inputs: tuple, loss_fn: Callable, context: Any = None) -> None:
    """One forward and backward, forward under ``context`` (a policy) when given."""
    if context is None:
        loss = loss_fn(model(*inputs))
    else:
        with context:
            loss = loss_fn(model(*inputs))
    loss.backward()


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
            unit.dtypes.add(record.dtype)
    result = []
    for unit in units.values():
        if not unit.savable and unit.nbytes:
            fixed += unit.nbytes
            continue
        unit.home = _common(unit.modules)
        if unit.nbytes:
            result.append(unit)
    return result, fixed


def _measured_peak(model, inputs: tuple, loss_fn: Callable, backend: Backend, device: Any,
                   context: Any = None) -> tuple:
    """(whole-step peak, its split or None) of one step, under ``context``, after one step
    under it unmeasured: what the first step allocates once and keeps (workspaces, offload's
    files) is then in place, so the figure is a steady step's and repeats from call to call."""
    # offload's reads ahead at their worst, one intra-op thread: the figure repeats
    with reads_done_at_once(), backend.one_thread():
        _step(model, inputs, loss_fn, context)
        with Ledger(backend.name, measure=True, device=device) as led:
            _step(model, inputs, loss_fn, context)
    return led.measured_peak, led.peak_split


def plan(model: Any, example_inputs: Any, budget_bytes: int, loss_fn: Optional[Callable] = None,
         candidates: Optional[Sequence[Any]] = None, verify: bool = True,
         measure: bool = True, budget_on: Optional[str] = None, rounds: int = 5,
         recalibrate: bool = False, clock: str = "cpu", costs_file: Any = None,
         time_limit: Optional[float] = None) -> Plan:
    """Profile ``model`` on ``example_inputs`` and choose, per module, a saver or recomputation
    so that memory stays under ``budget_bytes`` at the least added time.

    ``budget_on="peak"`` (the default when ``measure`` is true) budgets the measured peak of
    the whole step: saved activations plus transient workspaces and gradients. Savers and
    recomputation cut only the saved part, so the rest is first taken as measured without a
    policy; if the plan's measured peak is still over the budget, modules are run in
    micro-batches (``recompute(chunks=k)``) until it fits or nothing lowers it.
    ``budget_on="saved"`` (the default when ``measure=False``, which measures no peak)
    budgets the ledger's saved bytes. ``candidates``: savers
    and/or ``recompute()`` to choose from (default bfloat16, 8-bit with dense codes, offload
    and recompute).
    The choice rests on counts alone (bytes and tensors each option keeps or frees, each
    module's forward work) at reference rates, ties broken by fewest bytes, then candidate
    order: the same model, inputs and candidates give the same plan in every call and every
    process. The plan is then timed in parts on the model, one per saver it uses (its
    policy with the other entries set to None) and one for its recomputes, and the parts
    scale the chosen options' weights into the estimate (``estimated_extra_seconds``, with
    its standard error ``estimated_extra_error``); a plan of several parts is timed whole in
    the same rounds, and that figure is its estimate (what it differs from the parts' sum
    by is in ``per_step_seconds``, as "the parts together"). Each timing warms the policies
    up (up to 20 steps), then pairs every policy step with a step without policy, in alternating
    order, and takes the 20 % trimmed mean of the differences: at least ``rounds`` pairs,
    then more until its standard error is within 10 % of it, or ``time_limit`` seconds
    (default ``_timing.TIME_LIMIT``, 20) have passed. Steps are timed in process CPU time
    (``clock="cpu"``, steadier than wall time on a shared machine) or wall time
    (``clock="wall"``); measurements are kept per process, model and plan
    (``recalibrate=True`` measures again).
    ``costs_file`` (a path) keeps them across processes: read when it holds this plan's
    (same model structure, shapes, candidates, plan, clock, host and version), written when
    they were measured, so later runs estimate alike too. ``verify`` times the plan against
    no policy the same way and reports the measured extra time beside the estimate, with
    its standard error (``measured_extra_error``). Returns a ``Plan``; use ``plan.policy``
    as a context manager around forward. Parameters' ``.grad`` are left as they were.
    ``measure=False`` skips the whole-step peak measurements.
    """
    if budget_on is None:
        budget_on = "peak" if measure else "saved"
    if budget_on not in ("saved", "peak"):
        raise ValueError(f"budget_on must be 'saved' or 'peak', got {budget_on!r}")
    if budget_on == "peak" and not measure:
        raise ValueError("budget_on='peak' needs measure=True")
    clock_of(clock)
    backend = backend_for(model)
    tracker = tracker_for(backend.name)
    inputs = example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)
    loss_fn = loss_fn or _default_loss
    if candidates is None:
        # dense 8-bit codes: the cost model's rates are for them (sparse storage on a ReLU's
        # output keeps fewer bytes but takes time the rates do not weigh, see _work.py)
        candidates = [cast("bfloat16"), quantize(8, sparse=False), offload(), recompute()]
    savers = [c for c in candidates if isinstance(c, Saver)]
    allow_recompute = any(isinstance(c, recompute) for c in candidates)
    params = list(model.parameters())
    saved_grads = [p.grad for p in params]
    result = Plan()
    result.framework = backend.name
    result.budget = int(budget_bytes)
    result.budget_on = budget_on
    result.clock = clock
    device = backend.device_of(model)
    rounds = max(1, int(rounds))
    time_limit = _timing.TIME_LIMIT if time_limit is None else max(0.0, float(time_limit))
    stable = stored = None
    if costs_file is not None:
        stable = stable_signature(model, inputs, backend, savers, allow_recompute, clock)
        stored = None if recalibrate else load_costs(costs_file, stable)
        if stored is not None:
            install_rates(stored, backend, savers)
    try:
        _step(model, inputs, loss_fn)  # warm up
        if measure:
            result.baseline_memory_peak, _ = _measured_peak(model, inputs, loss_fn, backend,
                                                            device)
        led, work, inputs_of = _profile(model, inputs, loss_fn, backend, tracker)
        result.baseline_peak = led.peak
        inputs_bytes = sum(r.counted for r in led.records if r.kind == "input")
        other = None
        budget = result.budget
        if result.baseline_memory_peak is not None:
            # what the step holds besides saved activations (workspaces, gradients)
            other = max(0, result.baseline_memory_peak - (led.peak - inputs_bytes))
            if budget_on == "peak":
                budget = result.budget - other + inputs_bytes
        units, fixed = _units(led)
        measured: list = []

        def costs_of(rules: list) -> ModelCosts:
            """The chosen plan timed in parts on the model (or read from the file)."""
            key = _costs_key(model, inputs, backend, rules, clock)
            if stored is not None and not recalibrate:
                install_costs(stored, key, _rules_text(rules))
            fresh = recalibrate or key not in MODEL_COSTS
            measured.append((fresh, rules))
            return _model_costs(model, inputs, loss_fn, backend, rules, rounds, recalibrate,
                                clock, time_limit)

        costs = solve(result, model, led, units, fixed, work, inputs_of, savers,
                      allow_recompute, backend, budget, recalibrate, costs_of)
        result.baseline_seconds = costs.baseline
        if stable is not None and any(fresh for fresh, _ in measured):
            previous = load_costs(costs_file, stable) or {}  # other budgets' plans: kept
            plans = previous.get("plans")
            plans = dict(plans) if isinstance(plans, dict) else {}
            plans[_rules_text(measured[-1][1])] = dict(vars(costs))  # errors too
            save_costs(costs_file, stable, {
                "plans": plans,
                "rates": {repr(s): list(SAVER_RATES[rate_key(s, backend)]) for s in savers}})
        if budget_on == "peak" and result.policy is None and other is not None:
            result.reason = (f"besides saved activations the step holds "
                             f"{format_bytes(other)} (transient workspaces, gradients), which "
                             "no saver or recompute reduces; the saved part would have to fit "
                             f"in {format_bytes(max(0, budget))}; " + result.reason)
        if other is not None and result.policy is not None:
            result.estimated_memory_peak = other + result.estimated_peak - inputs_bytes
        if budget_on == "peak":
            costs = _fit_peak(result, model, inputs, loss_fn, backend, device, savers,
                              costs_of) or costs
        if verify and result.policy is not None:
            _verify(result, model, inputs, loss_fn, backend, device, rounds, measure, clock,
                    time_limit)
    finally:
        for p, grad in zip(params, saved_grads):
            p.grad = grad
    return result


def _fit_peak(result: Plan, model, inputs: tuple, loss_fn: Callable, backend: Backend,
              device: Any, savers: list, costs_of: Callable):
    """Step 3b (``_lower_peak.fit_peak``): micro-batches when the plan's measured step peak is
    over a budget on it; returns the new plan's costs, or None when nothing changed."""
    def peak_of(policy):
        return _measured_peak(model, inputs, loss_fn, backend, device, policy)

    def saved_peak(policy) -> int:
        with Ledger(backend.name, measure=False) as saved:
            _step(model, inputs, loss_fn, policy)
        return saved.peak

    return fit_peak(result, model, backend, savers, costs_of, peak_of, saved_peak)


def _costs_key(model, inputs: tuple, backend: Backend, rules: list, clock: str) -> tuple:
    return signature(model, inputs, backend), _rules_text(rules), clock


def _rules_text(rules: list) -> str:
    """A plan's rules as text: what its costs are filed under (the same in every process,
    as the plan is)."""
    return "; ".join(f"{key if isinstance(key, str) else key.__name__}: {entry!r}"
                     for key, entry in rules)


def _parts(rules: list) -> Dict[str, list]:
    """The plan's rules in parts, each timed as a policy of its own: one per saver (named by
    its repr) and ``"recompute"``; a part keeps every rule's key, the other parts' entries
    set to None, so each tensor resolves to the rule it does in the whole plan."""
    parts: Dict[str, list] = {}
    for _, entry in rules:
        name = "recompute" if isinstance(entry, recompute) else repr(entry)
        if name not in parts:
            same = ((lambda e: isinstance(e, recompute)) if name == "recompute"
                    else (lambda e, entry=entry: e is entry))
            parts[name] = [(key, e if same(e) else None) for key, e in rules]
    return parts


def _profile(model, inputs: tuple, loss_fn: Callable, backend: Backend, tracker) -> tuple:
    """Step 1: a ledger of one step, each module's inputs and its forward work (counts: the
    same on every run). Returns (ledger, ModuleWork, input storages per module name)."""
    led = Ledger(backend.name, measure=False)
    inputs_of: Dict[str, set] = {}
    work = ModuleWork(backend)
    running: Dict[int, List[str]] = {}

    def enter(module, args):
        name = tracker.current()[1] if tracker.current() else ""
        running.setdefault(id(module), []).append(name)
        inputs_of[name] = {("storage", backend.storage_key(a))
                           for a in args if backend.is_tensor(a)}

    def leave(module, args, output):
        names = running.get(id(module))
        if names:
            work.add(names.pop(), module, args, output)

    tracker.acquire()
    try:
        handles = backend.module_hooks(enter, leave)
        try:
            with led:
                _step(model, inputs, loss_fn)
        finally:
            for handle in handles:
                handle.remove()
    finally:
        tracker.release()
    return led, work, inputs_of


def _model_costs(model, inputs: tuple, loss_fn: Callable, backend: Backend, rules: list,
                 rounds: int, recalibrate: bool, clock: str,
                 time_limit: float = 0.0) -> ModelCosts:
    """The plan's parts (``_parts``) each timed on the model against no policy (paired steps,
    going on while a part's extra time is not yet known to 10 %, for up to ``time_limit``
    seconds; kept for the process). A plan of several parts is timed whole too, in the same
    rounds (``TOGETHER``): what the parts cost together is not their sum (``solve``)."""
    key = _costs_key(model, inputs, backend, rules, clock)
    if key in MODEL_COSTS and not recalibrate:
        return MODEL_COSTS[key]
    name = backend.name
    contexts: Dict[str, Callable[[], Any]] = {"none": lambda: None}
    parts = _parts(rules)
    for part, part_rules in parts.items():
        # one policy object per part, entered every step, as the plan's is when verified
        part_policy = Policy(part_rules, model=model, framework=name)
        contexts[part] = lambda part_policy=part_policy: part_policy
    if len(parts) > 1:
        whole = Policy(rules, model=model, framework=name)
        contexts[TOGETHER] = lambda: whole
    spread: Dict[str, float] = {}
    seconds = time_contexts(lambda context: _step(model, inputs, loss_fn, context), contexts,
                            rounds, clock, time_limit=time_limit, spread=spread,
                            warm_steps=_timing.WARM_STEPS,
                            warm_seconds=_timing.MEASURE_SECONDS)
    costs = ModelCosts(seconds["none"],
                       {part: seconds[part] - seconds["none"] for part in parts
                        if part != "recompute"},
                       seconds["recompute"] - seconds["none"] if "recompute" in parts
                       else None,
                       {part: spread[part] for part in contexts if part in spread},
                       seconds[TOGETHER] - seconds["none"] if TOGETHER in contexts else None)
    MODEL_COSTS[key] = costs
    return costs


def _verify(result: Plan, model, inputs: tuple, loss_fn: Callable, backend: Backend,
            device: Any, rounds: int, measure: bool, clock: str,
            time_limit: float = 0.0) -> None:
    """Step 4: run the plan; its saved peak, its time against no policy (each plan step
    paired with a step without, so load from other processes falls on both alike, until
    known to 10 % or ``time_limit``) and its whole-step peak."""
    with Ledger(backend.name, measure=False) as check:
        _step(model, inputs, loss_fn, result.policy)
    result.measured_peak = check.peak
    policy = result.policy
    spread: Dict[str, float] = {}
    seconds = time_contexts(lambda context: _step(model, inputs, loss_fn, context),
                            {"none": lambda: None, "plan": lambda: policy}, rounds, clock,
                            time_limit=time_limit, spread=spread,
                            warm_steps=_timing.WARM_STEPS,
                            warm_seconds=_timing.MEASURE_SECONDS)
    result.measured_seconds = seconds["plan"]
    result.measured_extra_seconds = seconds["plan"] - seconds["none"]
    result.measured_extra_error = spread.get("plan")
    if measure:
        result.memory_peak, result.memory_peak_split = _measured_peak(
            model, inputs, loss_fn, backend, device, result.policy)
    saved_budget = result.budget_on == "saved"
    over = (check.peak > result.budget if saved_budget
            else result.memory_peak is not None and result.memory_peak > result.budget)
    if result.feasible and over:
        result.feasible = False
        measured = check.peak if saved_budget else result.memory_peak
        estimated = result.estimated_peak if saved_budget else result.estimated_memory_peak
        result.reason = (f"the measured peak {format_bytes(measured)} is over the "
                         f"budget (estimated {format_bytes(estimated or 0)})")
