"""Command line: run many programs, shrink the failures, write them to a file.

    python -m tests.fuzz --seed 0 --count 50000 [--out fuzz-failures.py]

Progress is shown only on a terminal; the summary (programs, mismatches, time) always. Exits 1
if any program mismatched, after writing every shrunk failing program to ``--out``.
"""
from __future__ import annotations

import argparse
import sys
import time

from .interpreter import check
from .programs import generate
from .shrink import report, report_header, shrink


def run_range(seed: int, count: int, progress: bool = False, max_shrink: int = 50):
    """Check programs ``seed .. seed+count-1``; the list of (shrunk program, mismatch)."""
    failures = []
    started = time.perf_counter()
    for n, program_seed in enumerate(range(seed, seed + count)):
        program = generate(program_seed)
        reason = check(program)
        if reason:
            if len(failures) < max_shrink:
                program, reason = shrink(program)
            failures.append((program, reason))
        if progress and (n + 1) % 100 == 0:
            rate = (n + 1) / (time.perf_counter() - started)
            sys.stderr.write(f"\r{n + 1}/{count} programs, {len(failures)} mismatches, "
                             f"{rate:.0f}/s ")
            sys.stderr.flush()
    if progress:
        sys.stderr.write("\n")
    return failures


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0, help="first program seed")
    parser.add_argument("--count", type=int, default=50000, help="how many programs")
    parser.add_argument("--out", default="fuzz-failures.py",
                        help="where shrunk failing programs are written")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    failures = run_range(args.seed, args.count, progress=sys.stderr.isatty())
    elapsed = time.perf_counter() - started
    if failures:
        with open(args.out, "w") as file:
            file.write(report_header())
            for program, reason in failures:
                file.write("\n" + report(program, reason))
        for program, reason in failures[:3]:
            print(report(program, reason))
    print(f"fuzz: {args.count} programs (seeds {args.seed}..{args.seed + args.count - 1}), "
          f"{len(failures)} mismatches, {elapsed:.1f} s"
          + (f"; shrunk programs in {args.out}" if failures else ""))
    return 1 if failures else 0
