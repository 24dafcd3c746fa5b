"""Shrinks a mismatching program to a small one that still mismatches.

Lines are dropped greedily, last first, with every line that reads what they define; then the
optional keyword arguments of what is left (``retain_graph=True``, ``create_graph=True``, ...)
are dropped one at a time. Each candidate is kept only if hookgrad and torch still disagree.
"""
from __future__ import annotations

import re

from .interpreter import check
from .prelude import PASTE_HEADER, PRELUDE
from .programs import render


def _without(program: dict, index: int) -> dict:
    removed = set(program["lines"][index]["outs"])
    kept = []
    for i, line in enumerate(program["lines"]):
        if i == index or removed.intersection(line["ins"]):
            removed.update(line["outs"])
            continue
        kept.append(line)
    return {**program, "lines": kept}


_OPTION = re.compile(r", (retain_graph|create_graph|allow_unused)=True"
                     r"|(retain_graph|create_graph)=True(, )?")


def _simpler_lines(program: dict):
    for i, line in enumerate(program["lines"]):
        for match in _OPTION.finditer(line["code"]):
            code = line["code"][:match.start()] + line["code"][match.end():]
            lines = list(program["lines"])
            lines[i] = {**line, "code": code}
            yield {**program, "lines": lines}


def shrink(program: dict, still_fails=None, budget: int = 400) -> tuple[dict, str]:
    """The smallest program found (within ``budget`` runs) and its mismatch."""
    def failing(candidate):
        found = check(candidate)
        return found if found and not found.startswith("interpreter failed") else None

    still_fails = still_fails or failing
    best, reason = program, still_fails(program) or check(program)
    progress = True
    while progress and budget > 0:
        progress = False
        for index in reversed(range(len(best["lines"]))):
            if index >= len(best["lines"]) or budget <= 0:
                continue
            candidate = _without(best, index)
            budget -= 1
            found = still_fails(candidate)
            if found:
                best, reason, progress = candidate, found, True
        for candidate in _simpler_lines(best):
            if budget <= 0:
                break
            budget -= 1
            found = still_fails(candidate)
            if found:
                best, reason, progress = candidate, found, True
                break
    return best, reason


def report(program: dict, reason: str) -> str:
    """A readable block for one failing program: what differs and the code to paste."""
    return (f"# seed {program['seed']} ({program['dtype']}): {reason}\n"
            f"{render(program)}\n")


def report_header() -> str:
    """Printed once at the top of a failures file: the helpers every program may use."""
    return ("# Paste this header, then one program below, and run it under torch and under\n"
            "# hookgrad (`import hookgrad as torch`) to see the difference.\n"
            + PASTE_HEADER + PRELUDE + "\n")
