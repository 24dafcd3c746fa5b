"""Printed tables: the two runs side by side, and the per-module ledger of each."""
from __future__ import annotations

from typing import List, Optional, Sequence

from .training import RunResult


def format_bytes(value: Optional[float]) -> str:
    if value is None:
        return "-"
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(value) >= size:
            return f"{value / size:.1f} {unit}"
    return f"{int(value)} B"


def table(rows: Sequence[Sequence[str]], right_from: int = 1) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for number, row in enumerate(rows):
        cells = [cell.ljust(width) if i < right_from else cell.rjust(width)
                 for i, (cell, width) in enumerate(zip(row, widths))]
        lines.append("  ".join(cells).rstrip())
        if number == 0:
            lines.append("-" * len(lines[0]))
    return "\n".join(lines)


def side_by_side(runs: List[RunResult]) -> str:
    """Accuracy, step time, saved bytes and the measured step peak; then saved bytes per module,
    one column per run."""
    header = ["", *[run.label for run in runs]]
    rows = [header,
            ["test accuracy", *[f"{100 * run.accuracy:.1f} %" for run in runs]],
            ["step time (median)", *[f"{run.step_ms:.1f} ms" for run in runs]],
            ["final epoch loss", *[f"{run.epoch_losses[-1]:.4f}" for run in runs]]]
    ledgers = [run.ledger for run in runs]
    if any(led is not None for led in ledgers):
        rows.append(["saved for backward (peak)",
                     *[format_bytes(led.peak) if led is not None else "-" for led in ledgers]])
        rows.append(["step peak (first step)",
                     *[format_bytes(led.measured_peak)
                       if led is not None and led.measured_peak is not None else "-"
                       for led in ledgers]])
    text = [table(rows)]
    if any(led is not None for led in ledgers):
        modules: List[str] = []
        types = {}
        for led in ledgers:
            if led is None:
                continue
            for name, row in led.by_module().items():
                if name not in modules:
                    modules.append(name)
                    types[name] = row["type"] or ""
        per_run = [led.by_module() if led is not None else {} for led in ledgers]
        module_rows = [["module", "type", *[f"{run.label}: saved / held" for run in runs]]]
        for name in modules:
            cells = []
            for rows_of_run in per_run:
                row = rows_of_run.get(name)
                cells.append("-" if row is None else
                             f"{row['tensors']} / {format_bytes(row['counted'])}")
            module_rows.append([name, types[name], *cells])
        module_rows.append(["total held", "", *[format_bytes(led.total) if led else "-"
                                                for led in ledgers]])
        text.append("saved tensors per module (memory ledger, first training step):\n"
                    + table(module_rows, right_from=2))
    return "\n\n".join(text)
