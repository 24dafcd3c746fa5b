"""The planner's second stage for a budget on the whole-step peak: micro-batched recompute.

The knapsack (``_knapsack``) chooses what to keep of the saved tensors; what a step holds
besides them (a module's working set while it runs forward, the gradients and rerun tensors of
its backward) it takes as fixed. When the plan's measured peak is still over the budget, that
working set is what sets it, and only running a module on part of its batch at a time lowers
it (``recompute(chunks=k)``, see ``_chunked``). This stage tries that on the model's top-level
modules that allow it, measuring the peak of one step for each option (tracemalloc for
hookgrad, the torch backend's meter for torch: the same count on every run, so the choice
repeats), and keeps the option that lowers the peak most, until the peak fits or nothing
lowers it further. Of options that fit, the fewest chunks on the earliest module wins: each
slice costs a little time.
"""
from __future__ import annotations

from typing import Any, Callable, List, Optional, Tuple

from ._chunked import check_chunkable
from ._costs import TOGETHER, calibrate
from .ledger import format_bytes
from .policy import Policy, recompute

CHUNKS = (2, 4, 8)
ROUNDS = 4  # top-level modules chunked at most
GAIN = 0.01  # a smaller fall of the peak is not worth the time of more slices
# A peak counts as fitting when it is this share of the budget below it: tracemalloc's count
# moves by a few KiB from process to process (Python's own objects), and a plan decided by
# such a difference would not repeat
MARGIN = 0.01


def fits(peak: int, budget: int) -> bool:
    """Whether a measured peak fits the budget with the margin against noise."""
    return peak <= budget * (1 - MARGIN)


def _chunkable(model: Any) -> List[str]:
    """The model's direct children that may run in micro-batches (no batch statistics)."""
    names = []
    for name, child in model.named_children():
        if not any(True for _ in child.parameters()) and not list(child.children()):
            continue  # a parameterless leaf (Flatten, ReLU alone): little to gain
        try:
            check_chunkable(child, name)
        except ValueError:
            continue
        names.append(name)
    return names


def _where(split: Optional[dict]) -> str:
    """The module a measured peak was reached in (``"forward of 1.0"`` gives ``"1.0"``)."""
    where = (split or {}).get("where", "")
    for word in (" of ", " in "):
        if word in where:
            return where.rsplit(word, 1)[1]
    return ""


def lower_peak(rules: list, model: Any, backend: Any, budget: int, peak: int,
               split: Optional[dict],
               measure: Callable[[Any], Tuple[int, Optional[dict]]]) -> Tuple[list, int, list]:
    """(rules, peak, chunked module names) after chunking top-level modules while the peak of
    ``rules``'s policy (``peak``, measured, reached where ``split`` says) is over ``budget``.
    ``measure(policy)`` returns the whole-step peak of one step under ``policy`` and its split.

    Each round adds one module to those run in micro-batches, trying first the top-level
    module the peak was reached in, then the others in the model's order; all chunked modules
    share one number of slices, tried anew each round (where one module's slices meet the
    next module's whole batch, the peak moves there: finer slices must go together)."""
    chunked: List[str] = []
    chunks_now = 0
    candidates = _chunkable(model)

    def with_chunks(names: List[str], chunks: int) -> list:
        return [(name, recompute(chunks=chunks)) for name in names] + rules

    for _ in range(ROUNDS):
        if fits(peak, budget):
            break
        home = _where(split).split(".")[0]
        order = sorted((name for name in candidates if name not in chunked),
                       key=lambda name: name != home)  # stable: the model's order otherwise
        best = None  # (key, peak, split, chunks, name)
        for index, name in enumerate(order):
            for chunks in CHUNKS:
                policy = Policy(with_chunks(chunked + [name], chunks), model=model,
                                framework=backend.name)
                try:
                    found, found_split = measure(policy)
                except ValueError:
                    break  # the module does not take one batched tensor
                # an option that fits ranks by fewest slices, then order; others by peak
                key = ((0, chunks, index, 0) if fits(found, budget)
                       else (1, found, chunks, index))
                if best is None or key < best[0]:
                    best = (key, found, found_split, chunks, name)
                if fits(found, budget):
                    break  # more slices only cost time
            if best is not None and best[1] <= peak * (1 - GAIN):
                break  # this module lowers the peak: take it before trying others
        if best is None or best[1] > peak * (1 - GAIN):
            break
        _, peak, split, chunks_now, name = best
        chunked.append(name)
    return (with_chunks(chunked, chunks_now) if chunked else rules), peak, chunked

def adopt(result: Any, rules: list, chunked: List[str], peak: int, costs: Any) -> None:
    """Make ``rules`` (with ``chunked`` modules run in micro-batches) the plan in ``result``:
    its policy, its lines (choices inside a chunked module give way to it), its estimated
    step peak (``peak``, measured) and its estimated extra time, from ``costs``, the new
    plan timed in parts (``ModelCosts``): the parts together when there are several."""
    entries = dict(rules)
    def covered(modules: str) -> bool:
        return all(any(m == c or m.startswith(c + ".") for c in chunked)
                   for m in modules.split(", "))

    recompute_seconds = costs.recompute or 0.0
    lines = [line for line in result.choices if not covered(line[0])]
    share = recompute_seconds / max(1, len(chunked) + sum(
        1 for line in lines if line[1].startswith("recompute")))
    before = {name: sum(line[2] for line in result.choices if covered(line[0])
                        and (line[0] == name or line[0].startswith(name + ".")))
              for name in chunked}
    result.choices = [(name, repr(entries[name]), before[name], 0, share)
                      for name in chunked] + lines
    result.policy = Policy(rules, model=result.policy.model, framework=result.framework)
    if costs.together is not None:
        result.estimated_extra_seconds = costs.together
        result.estimated_extra_error = costs.errors.get(TOGETHER)
    else:
        result.estimated_extra_seconds = sum(costs.savers.values()) + recompute_seconds
        parts = list(costs.savers) + (["recompute"] if costs.recompute is not None else [])
        result.estimated_extra_error = costs.errors.get(parts[0]) if len(parts) == 1 else None
    result.per_step_seconds = {}
    result.estimated_memory_peak = int(peak)
    result.feasible = peak <= result.budget
    if result.feasible:
        result.reason = ""
    else:  # why the knapsack alone fell short stays, after what was found
        found = (f"the lowest step peak found{', with micro-batches,' if chunked else ''} "
                 f"is {format_bytes(int(peak))}, above the budget")
        result.reason = found + ("; " + result.reason if result.reason else "")


def fit_peak(result: Any, model: Any, backend: Any, savers: list, costs_of: Callable,
             peak_of: Callable, saved_peak: Callable) -> Any:
    """For a budget on the whole-step peak: when the knapsack's plan in ``result`` still peaks
    above it (its working sets, not its saved tensors, set the peak), run top-level modules
    in micro-batches (``lower_peak``) and time the plan that comes out in parts again; returns
    those costs, or None when nothing changed. Where the knapsack found no plan at all (what
    the step holds besides saved tensors is over the budget by itself), micro-batches start
    from every module stored by the candidate saver that keeps the fewest bytes; if the
    budget is still not met, that plan stays as the best effort (``feasible`` False, the
    lowest peak found in ``reason``) when it lowers the step's peak at all.
    ``peak_of(policy)``: (step peak, split) measured; ``saved_peak(policy)``: saved bytes."""
    fallback = result.policy is None
    if fallback:
        if not savers:
            return None
        fewest = min(savers, key=lambda saver: (calibrate(saver, backend)[0],
                                                savers.index(saver)))
        result.policy = Policy([("*", fewest)], model=model, framework=backend.name)
        result.choices = [("*", repr(fewest), result.baseline_peak, 0, 0.0)]
    peak, split = peak_of(result.policy)
    rules, chunked = list(result.policy.rules), []
    if not fits(peak, result.budget):
        rules, peak, chunked = lower_peak(rules, model, backend, result.budget, peak, split,
                                          peak_of)
    if not chunked:
        if not fallback:
            return None  # the knapsack's plan stands
        lowered = (result.baseline_memory_peak is None
                   or peak <= result.baseline_memory_peak * (1 - GAIN))
        if not (fits(peak, result.budget) or lowered):
            result.policy, result.choices = None, []  # it lowers nothing: no plan
            return None
    costs = costs_of(rules)
    adopt(result, rules, chunked, peak, costs)
    if fallback:  # the saver on every module: its line carries its part's timing
        result.choices = [line[:4] + (costs.savers.get(line[1], line[4]),)
                          if line[0] == "*" else line for line in result.choices]
    result.estimated_peak = saved_peak(result.policy)
    return costs
