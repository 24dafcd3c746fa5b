"""What ``memory.plan`` returns: the chosen policy and the figures behind it, printed side by
side (estimated and measured saved bytes, step peak and extra time per step)."""
from __future__ import annotations

import math
from typing import Dict, List, Optional

from .ledger import format_bytes
from .policy import Policy


class Plan:
    """What ``plan()`` chose: ``policy`` to use, and the figures behind it (``print(plan)``).

    Two memory figures: ``*_peak`` is the ledger's saved bytes (what savers cut), ``*_memory_peak``
    the measured peak of the whole step (tracemalloc over NumPy's allocations for hookgrad, the
    torch profiler or ``max_memory_allocated`` for torch), which ``budget_on="peak"`` budgets.
    """

    def __init__(self):
        self.policy: Optional[Policy] = None
        self.budget = 0
        self.budget_on = "saved"
        self.feasible = False
        self.reason = ""
        self.baseline_peak = 0
        self.baseline_seconds = 0.0
        self.estimated_peak = 0
        self.estimated_extra_seconds = 0.0
        # the estimate's standard error, from those of the parts' timings (None: not known)
        self.estimated_extra_error: Optional[float] = None
        self.measured_peak: Optional[int] = None
        self.measured_seconds: Optional[float] = None
        self.measured_extra_seconds: Optional[float] = None
        # the standard error of that measurement (from the spread of its paired differences)
        self.measured_extra_error: Optional[float] = None
        self.clock = "cpu"  # what the seconds are: process CPU time, or wall time
        self.framework = "hookgrad"
        self.baseline_memory_peak: Optional[int] = None  # the whole step's, measured
        self.estimated_memory_peak: Optional[int] = None
        self.memory_peak: Optional[int] = None
        self.memory_peak_split: Optional[dict] = None  # hookgrad: saved, gradients, transient
        self.choices: List[tuple] = []  # (modules, choice, bytes before, bytes after, seconds)
        # estimated seconds paid once per step, not per module: the policy's own hooks, and a
        # saver's own work (offload's directory and thread) when it stores anything
        self.per_step_seconds: Dict[str, float] = {}

    def __str__(self) -> str:
        lines = [f"memory plan: budget {format_bytes(self.budget)} on the "
                 + ("whole-step peak" if self.budget_on == "peak" else "saved bytes")
                 + f" (no policy: saved peak {format_bytes(self.baseline_peak)}"
                 + ("" if self.baseline_memory_peak is None
                    else f", step peak {format_bytes(self.baseline_memory_peak)}")
                 + f", step {self.baseline_seconds * 1e3:.1f} ms {self._clock_name})"]
        if self.choices:
            width = max(len(c[0]) for c in self.choices)
            named = max([26] + [len(c[1]) for c in self.choices])  # choices' names line up
            lines.append(f"  {'modules'.ljust(width)}  {'choice'.ljust(named)} "
                         f"{'saved bytes':>23}  extra ms")
            for modules, choice, before, after, seconds in self.choices:
                lines.append(f"  {modules.ljust(width)}  {choice.ljust(named)} "
                             f"{format_bytes(before):>10} -> {format_bytes(after):>9}  "
                             f"{seconds * 1e3:8.2f}")
        if self.per_step_seconds:
            lines.append("  once per step: " + ", ".join(
                f"{name} {seconds * 1e3:.2f} ms" for name, seconds in
                self.per_step_seconds.items()))
        if self.policy is not None:
            def cell(value, show):
                return "-" if value is None else show(value)

            size = format_bytes

            def extra(value, error=None):
                known = error is not None and math.isfinite(error)
                return f"{value * 1e3:+.1f}" + (f" ± {error * 1e3:.1f}" if known else "") + " ms"
            rows = [("", "estimated", "measured"),
                    ("saved peak", size(self.estimated_peak), cell(self.measured_peak, size)),
                    ("step peak", cell(self.estimated_memory_peak, size),
                     cell(self.memory_peak, size)),
                    (f"extra {self._clock_name} per step",
                     extra(self.estimated_extra_seconds, self.estimated_extra_error),
                     cell(self.measured_extra_seconds,
                          lambda value: extra(value, self.measured_extra_error)))]
            widths = [max(len(row[i]) for row in rows) for i in range(3)]
            for row in rows:
                lines.append("  " + row[0].ljust(widths[0]) + "  " + row[1].rjust(widths[1])
                             + "  " + row[2].rjust(widths[2]))
        split = self.memory_peak_split
        if split and "peak" in split:
            lines.append(f"  step peak with the plan: saved activations "
                         f"{format_bytes(split['saved'])}, gradients "
                         f"{format_bytes(split['gradients'])}, transient workspaces "
                         f"{format_bytes(split['transient'])}; reached at {split['where']}")
        lines.append(("  meets the budget" if self.feasible else "  cannot meet the budget: ")
                     + ("" if self.feasible else self.reason))
        return "\n".join(lines)

    __repr__ = __str__

    @property
    def _clock_name(self) -> str:
        return "CPU time" if self.clock == "cpu" else "wall time"

    @property
    def estimate_error(self) -> Optional[float]:
        """(estimated - measured) / measured extra time, or None before a measurement."""
        measured = self.measured_extra_seconds
        if measured is None or measured <= 0:
            return None
        return (self.estimated_extra_seconds - measured) / measured
