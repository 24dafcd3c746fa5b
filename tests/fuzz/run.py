"""Command line: run many programs, shrink the failures, write them to a file.

    python -m tests.fuzz --seed 0 --count 50000 [--out fuzz-failures.py]

Programs run in a child process that reports each seed before running it, so a program that
crashes the interpreter (a segmentation fault in either library) is recorded as a failure and
the run goes on from the next seed. Progress is shown only on a terminal; the summary
(programs, mismatches, time) always. Exits 1 if any program mismatched or crashed, after
writing every shrunk failing program to ``--out``.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from .interpreter import check
from .programs import generate
from .shrink import report, report_header, shrink

_STOP = threading.Event()  # set by SIGINT/SIGTERM: stop the workers, summarise what ran
_CHILDREN: set = set()

MAX_SHRUNK = 50  # later failures are reported unshrunk: shrinking costs hundreds of runs each


def run_range(seed: int, count: int, emit=None) -> list:
    """Check programs ``seed .. seed+count-1`` here; the list of (program, mismatch)."""
    failures = []
    for program_seed in range(seed, seed + count):
        if emit:
            emit(f"S {program_seed}")
        program = generate(program_seed)
        reason = check(program)
        if reason:
            if len(failures) < MAX_SHRUNK:
                program, reason = shrink(program)
            failures.append((program, reason))
            if emit:
                emit("F " + json.dumps([program, reason]))
    return failures


def _worker(seed: int, count: int) -> int:
    def emit(line):
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
    run_range(seed, count, emit)
    emit("E")
    return 0


class _Progress:
    """Programs done over all workers; printed (on a terminal only) every 100."""

    def __init__(self, total: int, show: bool):
        self.total, self.show, self.done, self.failed = total, show, 0, 0
        self.started = time.perf_counter()
        self.lock = threading.Lock()

    def step(self, failed: int = 0) -> None:
        with self.lock:
            self.done += 1
            self.failed += failed
            if self.show and self.done % 100 == 0:
                rate = self.done / max(time.perf_counter() - self.started, 1e-9)
                sys.stderr.write(f"\r{self.done}/{self.total} programs, {self.failed} "
                                 f"mismatches, {rate:.0f}/s ")
                sys.stderr.flush()


def _supervise(seed: int, count: int, progress: _Progress) -> list:
    """Run the range in child processes, restarting after the seed that crashed one."""
    failures = []
    end = seed + count
    while seed < end:
        command = [sys.executable, "-m", "tests.fuzz", "--worker", "--seed", str(seed),
                   "--count", str(end - seed)]
        if _STOP.is_set():
            break
        child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True,
                                 cwd=os.getcwd(), start_new_session=True)
        _CHILDREN.add(child)
        current, finished = None, False
        for line in child.stdout:
            kind, _, rest = line.rstrip("\n").partition(" ")
            if kind == "S":
                if current is not None:
                    progress.step()
                current = int(rest)
            elif kind == "F":
                program, reason = json.loads(rest)
                failures.append((program, reason))
                progress.step(failed=1)
                current = None
            elif kind == "E":
                finished = True
                if current is not None:
                    progress.step()
        code = child.wait()
        _CHILDREN.discard(child)
        if finished or _STOP.is_set():
            break
        if current is None:
            raise RuntimeError(f"the fuzz worker failed before its first program (exit {code})")
        program = generate(current)
        failures.append((program, f"the interpreter process died (exit {code}) running it"))
        progress.step(failed=1)
        seed = current + 1
    return failures


def _interrupt(signum, frame) -> None:
    _STOP.set()
    for child in list(_CHILDREN):
        if child.poll() is None:
            child.terminate()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0, help="first program seed")
    parser.add_argument("--count", type=int, default=50000, help="how many programs")
    parser.add_argument("--out", default="fuzz-failures.py",
                        help="where shrunk failing programs are written")
    parser.add_argument("--jobs", type=int, default=1,
                        help="worker processes, each on its own share of the seeds")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return _worker(args.seed, args.count)
    started = time.perf_counter()
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    progress = _Progress(args.count, sys.stderr.isatty())
    jobs = max(1, min(args.jobs, args.count))
    bounds = [args.seed + args.count * i // jobs for i in range(jobs + 1)]
    with ThreadPoolExecutor(jobs) as pool:
        parts = pool.map(lambda i: _supervise(bounds[i], bounds[i + 1] - bounds[i], progress),
                         range(jobs))
        failures = [failure for part in parts for failure in part]
    if progress.show:
        sys.stderr.write("\n")
    elapsed = time.perf_counter() - started
    if failures:
        with open(args.out, "w") as file:
            file.write(report_header())
            for program, reason in failures:
                file.write("\n" + report(program, reason))
        for program, reason in failures[:3]:
            print(report(program, reason))
    ran = f"{progress.done} of {args.count}" if _STOP.is_set() else f"{args.count}"
    print(f"fuzz: {ran} programs (seeds {args.seed}..{args.seed + args.count - 1}"
          f"{', interrupted' if _STOP.is_set() else ''}), {len(failures)} mismatches, "
          f"{elapsed:.1f} s" + (f"; shrunk programs in {args.out}" if failures else ""))
    return 1 if failures or _STOP.is_set() else 0
