"""hookgrad against torch and MyGrad on the workloads of ``workloads.py``, in one run.

Run by hand (or ``make bench``)::

    python benchmarks/compare.py --threads 1 2 --json bench.json

Each framework runs in its own long-lived process, started with the BLAS/OpenMP thread variables
set, so that one framework's threads, allocator and imports never touch another's. The parent
asks the processes in turn for one timed sample of each workload (the order rotates each round),
so slow drifts of a shared machine hit every framework alike; the table shows medians over the
rounds. A sample times as many steps as fill about ``--sample`` seconds.

Ratios: hookgrad / torch (lower is better, 1.0 is parity); hookgrad / MyGrad (below 1.0 means
hookgrad is faster); for the hook rows, the hooked step over the same framework's plain step.
MyGrad is optional (``pip install hookgrad[bench]``); without it its column says so.
``--quick`` runs one step of every workload under hookgrad in this process and times nothing.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import workloads  # noqa: E402  (found next to this file)

FRAMEWORKS = ("torch", "hookgrad", "mygrad")
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


# -- child: one framework ----------------------------------------------------------------------
def serve(framework: str, names: list[str], threads: int, sample: float,
          cpu_time: bool = False) -> None:
    """Build every workload, calibrate how many steps fill a sample, then answer one line
    per request ("name" -> seconds per step) until stdin closes. ``cpu_time``: the process's
    CPU time (all its threads) instead of the wall clock."""
    clock = time.process_time if cpu_time else time.perf_counter
    if framework == "torch":
        import torch
        torch.set_num_threads(threads)
    steps, numbers = {}, {}
    for name in names:
        step = workloads.build(name, framework)
        if step is None:
            continue
        step()  # warm up: first-call allocations and lazy imports
        start = clock()
        step()
        once = clock() - start
        steps[name], numbers[name] = step, max(1, round(sample / max(once, 1e-9)))
    print(json.dumps(sorted(steps)), flush=True)
    for line in sys.stdin:
        name = line.strip()
        step, number = steps[name], numbers[name]
        for _ in range(max(1, number // 5)):  # untimed: caches and clocks after the pause
            step()
        start = clock()
        for _ in range(number):
            step()
        print(json.dumps((clock() - start) / number), flush=True)


# -- parent ------------------------------------------------------------------------------------
def peer_environment(framework: str, environ: dict) -> dict:
    """``environ`` for a framework's child, with MyGrad given the malloc thresholds hookgrad sets
    for itself at import (``hookgrad._allocator``; torch has an allocator of its own).

    Without them MyGrad's MLP step depends on glibc's moving thresholds, hence on whatever the
    process allocated before: 12.5-14 ms of CPU a step (1 thread) built alone, 7.4-8.3 ms built
    after another workload or with these settings, as hookgrad's 7.5-8.5. hookgrad's settings
    are its own work; a peer should not be timed against an accident of its heap. A user's
    own malloc settings are left as they are."""
    if framework != "mygrad" or any(name.startswith("MALLOC_") for name in environ) \
            or "glibc.malloc" in environ.get("GLIBC_TUNABLES", ""):
        return environ
    from hookgrad._allocator import MMAP_THRESHOLD, TRIM_THRESHOLD
    return dict(environ, MALLOC_MMAP_THRESHOLD_=str(MMAP_THRESHOLD),
                MALLOC_TRIM_THRESHOLD_=str(TRIM_THRESHOLD))


def _start(framework: str, names: list[str], threads: int, sample: float,
           cpu_time: bool = False) -> subprocess.Popen:
    env = peer_environment(framework,
                           dict(os.environ, **{name: str(threads) for name in THREAD_VARIABLES}))
    return subprocess.Popen([sys.executable, os.path.abspath(__file__), "--child", framework,
                             "--threads", str(threads), "--sample", str(sample),
                             *(["--cpu-time"] if cpu_time else []), "--workloads", *names],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True)


# With more than one thread, a framework's worker threads (OpenBLAS's, OpenMP's) keep spinning
# for a while after its sample ends; started at once, the next framework would share the cores
# with them. Each sample therefore starts after this pause.
SETTLE_SECONDS = 0.25


def measure(frameworks: list[str], names: list[str], threads: int, rounds: int,
            sample: float, cpu_time: bool = False) -> dict:
    """{framework: {workload: [seconds per step, one per round]}}"""
    children = {fw: _start(fw, names, threads, sample, cpu_time) for fw in frameworks}
    try:
        available = {fw: set(json.loads(child.stdout.readline()))
                     for fw, child in children.items()}
        times = {fw: {name: [] for name in available[fw]} for fw in frameworks}
        for round_ in range(rounds):
            shift = round_ % len(frameworks)
            order = frameworks[shift:] + frameworks[:shift]
            for name in names:
                for fw in order:
                    if name in available[fw]:
                        if threads > 1:
                            time.sleep(SETTLE_SECONDS)
                        children[fw].stdin.write(name + "\n")
                        children[fw].stdin.flush()
                        times[fw][name].append(json.loads(children[fw].stdout.readline()))
    finally:
        for child in children.values():
            child.stdin.close()
            child.wait()
    return times


def _ratio(numerator, denominator) -> str:
    if numerator is None or denominator is None:
        return "-"
    return f"{numerator / denominator:.2f}x"


def table(medians: dict, threads: int, mygrad_note: str, clock: str = "wall clock") -> str:
    """The ratio table of one thread count, as Markdown."""
    torch_m, ours, peer = (medians.get(fw, {}) for fw in FRAMEWORKS)
    lines = [f"threads: {threads}; medians of interleaved rounds; ms per step ({clock})",
             "", "| workload | torch | hookgrad | MyGrad | hookgrad / torch | hookgrad / MyGrad |",
             "|---|---|---|---|---|---|"]

    def ms(value):
        return "-" if value is None else f"{value * 1e3:.2f}"

    for name, (title, _, _) in workloads.WORKLOADS.items():
        if name in workloads.HOOK_ROWS:
            continue
        t, h, m = torch_m.get(name), ours.get(name), peer.get(name)
        lines.append(f"| {title} | {ms(t)} | {ms(h)} | {ms(m) if peer else mygrad_note} | "
                     f"{_ratio(h, t)} | {_ratio(h, m) if peer else '-'} |")
    lines += ["", "| hook overhead (hooked / plain, same framework) | torch | hookgrad |",
              "|---|---|---|"]
    for name, plain in workloads.HOOK_ROWS.items():
        title = workloads.WORKLOADS[name][0]
        lines.append(f"| {title} | {_ratio(torch_m.get(name), torch_m.get(plain))} | "
                     f"{_ratio(ours.get(name), ours.get(plain))} |")
    return "\n".join(lines)


def quick(names: list[str]) -> None:
    """One step of each workload under hookgrad (and MyGrad when installed): a smoke test."""
    for name in names:
        for framework in ("hookgrad", "mygrad"):
            if framework == "mygrad" and importlib.util.find_spec("mygrad") is None:
                continue
            step = workloads.build(name, framework)
            if step is not None:
                step()
                print(f"ok {framework:8s} {name}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1], choices=(1, 2),
                        help="BLAS/OpenMP threads of every framework; several give one table each")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved samples per workload")
    parser.add_argument("--sample", type=float, default=0.1, help="seconds per timed sample")
    parser.add_argument("--workloads", nargs="+", default=list(workloads.WORKLOADS),
                        choices=list(workloads.WORKLOADS))
    parser.add_argument("--json", help="write every sample and median to this file")
    parser.add_argument("--quick", action="store_true", help="one untimed step each, hookgrad")
    parser.add_argument("--cpu-time", action="store_true",
                        help="time by process CPU time rather than the wall clock: steadier on "
                             "a shared machine (with 1 thread; with more, all threads add up)")
    parser.add_argument("--child", choices=FRAMEWORKS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        return quick(args.workloads)
    if args.child:
        return serve(args.child, args.workloads, args.threads[0], args.sample, args.cpu_time)
    frameworks = list(FRAMEWORKS)
    mygrad_note = "-"
    if importlib.util.find_spec("mygrad") is None:
        frameworks.remove("mygrad")
        mygrad_note = "not installed"
        print("MyGrad is not installed (pip install 'hookgrad[bench]'): its column is skipped")
    report = {"frameworks": frameworks, "runs": []}
    for threads in args.threads:
        times = measure(frameworks, args.workloads, threads, args.rounds, args.sample,
                        args.cpu_time)
        medians = {fw: {name: statistics.median(samples) for name, samples in per.items()}
                   for fw, per in times.items()}
        print(table(medians, threads, mygrad_note,
                    "process CPU time" if args.cpu_time else "wall clock"), end="\n\n", flush=True)
        report["runs"].append({"threads": threads, "rounds": args.rounds, "samples": times,
                               "medians": medians,
                               "clock": "cpu" if args.cpu_time else "wall"})
    if args.json:
        with open(args.json, "w") as file:
            json.dump(report, file, indent=1)


if __name__ == "__main__":
    main()
