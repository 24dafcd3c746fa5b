"""Where one training step of an MLP workload of ``workloads.py`` spends its CPU time, under
hookgrad and under MyGrad: the matrix products (BLAS) against everything else (the framework's
Python, its elementwise passes, the loss, the SGD update).

Run by hand::

    PYTHONPATH=src python benchmarks/step_parts.py --workload mlp --threads 1

Each framework runs in a process of its own, MyGrad's with the malloc thresholds hookgrad
sets for itself (``compare.peer_environment``), and the two alternate ``--rounds`` times;
each round reports the best of ``--repeats`` samples of ``--number`` steps, and the table
shows the median round. CPU time
(``time.process_time``) counts every thread of the process, so with more than one BLAS thread
a worker spinning between products adds to the products' share.

The products are timed where each framework calls them: ``hookgrad._blas.matmul`` (every
2-D product of hookgrad's mm, addmm and their backward) and MyGrad's ``MatMul`` forward and
``backward_var``. Both workloads issue the same eight products per step (three forward, five
backward: no gradient for the input batch) on float32 arrays of the same shapes; hookgrad's
weight gradient is ``grad^T x`` (out x in, the parameter's layout) where MyGrad's is
``x^T grad`` (in x out, its parameter's layout).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from compare import peer_environment  # noqa: E402  (MyGrad gets hookgrad's malloc settings)


def _instrument(framework: str, spent: list) -> None:
    """Add the CPU time of every matrix product of ``framework`` to ``spent[0]``."""
    def timed(function):
        def wrapper(*args, **kwargs):
            start = time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                spent[0] += time.process_time() - start
        return wrapper

    if framework == "hookgrad":
        from hookgrad import _blas
        _blas.matmul = timed(_blas.matmul)
    else:
        from mygrad.math.misc.ops import MatMul
        MatMul.__call__ = timed(MatMul.__call__)
        MatMul.backward_var = timed(MatMul.backward_var)


def child(framework: str, workload: str, repeats: int, number: int) -> None:
    """Build the step, then answer each line on stdin with one sample as JSON:
    [seconds per step, seconds in products per step], the best of ``repeats``."""
    import workloads
    spent = [0.0]
    _instrument(framework, spent)
    if framework == "hookgrad":
        import hookgrad
        hookgrad.set_num_threads(int(os.environ["OPENBLAS_NUM_THREADS"]))
    step = workloads.build(workload, framework)
    for _ in range(10):
        step()
    print("ready", flush=True)
    for _ in sys.stdin:
        best = None
        for _ in range(repeats):
            spent[0] = 0.0
            start = time.process_time()
            for _ in range(number):
                step()
            sample = ((time.process_time() - start) / number, spent[0] / number)
            best = sample if best is None or sample[0] < best[0] else best
        print(json.dumps(best), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", default="mlp", choices=("mlp", "mlp_b16", "deep_mlp"))
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--number", type=int, default=20, help="steps per sample")
    parser.add_argument("--child", choices=("hookgrad", "mygrad"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child, args.workload, args.repeats, args.number)
    env = dict(os.environ, **{name: str(args.threads) for name in
                              ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")})
    children = {fw: subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), "--child", fw, "--workload", args.workload,
         "--repeats", str(args.repeats), "--number", str(args.number)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=peer_environment(fw, env), text=True)
        for fw in ("hookgrad", "mygrad")}
    try:
        for process in children.values():
            process.stdout.readline()
        samples = {fw: [] for fw in children}
        for round_ in range(args.rounds):
            order = list(children) if round_ % 2 == 0 else list(children)[::-1]
            for fw in order:
                children[fw].stdin.write("go\n")
                children[fw].stdin.flush()
                samples[fw].append(json.loads(children[fw].stdout.readline()))
    finally:
        for process in children.values():
            process.stdin.close()
            process.wait()
    print(f"{args.workload}, {args.threads} thread(s): CPU ms per step, median of "
          f"{args.rounds} alternating rounds\n")
    print("| framework | step | products | the rest |\n|---|---|---|---|")
    for fw, rows in samples.items():
        total, products = (statistics.median(column) * 1e3 for column in zip(*rows))
        print(f"| {fw} | {total:.2f} | {products:.2f} | {total - products:.2f} |")


if __name__ == "__main__":
    main()
