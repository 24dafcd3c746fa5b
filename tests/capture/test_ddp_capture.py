"""capture on rank 0 of a model under DistributedDataParallel: 2 gloo processes on 127.0.0.1.

Rank 0's records, of modules and of functional calls (``ops=``) alike, must equal a
single-process capture of the same model on rank 0's batch (activations and activation
gradients are local to a rank; DDP averages parameter gradients only), under the same names
whether the DDP wrapper or ``ddp.module`` was captured; and the capture must not disturb DDP:
rank 0's parameter gradients are the mean over both ranks.

The ranks are forked from the test process, which has torch imported already: starting two
fresh interpreters would spend most of the test importing torch twice.
"""
import faulthandler
import importlib
import multiprocessing
import os
import socket
import traceback
from datetime import timedelta
from pathlib import Path

import capture_models as _models
import numpy as np
import pytest
import torch
import torch.distributed as dist

from hookgrad.capture import capture, load

pytestmark = [
    pytest.mark.filterwarnings("ignore:Full backward hook is firing"),
    pytest.mark.skipif(not dist.is_available(), reason="this torch build has no torch.distributed"),
    pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                       reason="the ranks are forked (POSIX only)")]
WORLD_SIZE = 2
TIMEOUT = 30  # seconds per rank; a run takes about one
LAYERS = ["inp", "shared", "pair", "head"]
OPS = ["matmul", "tanh", "relu"]  # functional calls inside forward, seen by torch's mode


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def rank_main(rank: int, port: int, out_dir: Path) -> None:
    """Every rank builds the same model, wraps it in DDP and trains one step on its own batch,
    twice. Rank 0 captures: first through the DDP wrapper, then through ``ddp.module``; then it
    saves its parameter gradients (averaged across ranks by DDP)."""
    # a rank that hangs writes where it is before it is killed
    stack = open(out_dir / f"rank{rank}.stack", "w")  # noqa: SIM115 - open until os._exit
    faulthandler.dump_traceback_later(TIMEOUT - 5, exit=True, file=stack)
    try:
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")  # the loopback device, in this rank
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                                world_size=WORLD_SIZE, timeout=timedelta(seconds=TIMEOUT - 10))
        model = _models.build(torch)
        ddp = torch.nn.parallel.DistributedDataParallel(model)
        seed = 10 + rank  # each rank sees its own batch, as under a DistributedSampler
        for target, run in ((ddp, "wrapper"), (ddp.module, "module")):
            ddp.zero_grad(set_to_none=True)
            if rank == 0:
                with capture(target, layers=LAYERS, ops=OPS, to=out_dir / run):
                    _models.step(torch, ddp, seed=seed)
            else:
                _models.step(torch, ddp, seed=seed)
        if rank == 0:
            np.savez(out_dir / "grads.npz", **{
                name: parameter.grad.numpy() for name, parameter in model.named_parameters()})
        dist.barrier()
        dist.destroy_process_group()
    except BaseException:
        (out_dir / f"rank{rank}.error").write_text(traceback.format_exc())
        os._exit(1)
    # leave without running destructors: tearing DDP's reducer down after the process group
    # was destroyed can block in gloo, and a forked child has nothing else to clean up
    os._exit(0)


def run_ranks(out_dir: Path) -> None:
    # DDP's constructor imports torch._dynamo (seconds): once here rather than once per rank
    importlib.import_module("torch._dynamo")
    context = multiprocessing.get_context("fork")
    port = free_port()
    ranks = [context.Process(target=rank_main, args=(rank, port, out_dir), daemon=True)
             for rank in range(WORLD_SIZE)]
    for process in ranks:
        process.start()
    try:
        for process in ranks:
            process.join(TIMEOUT)
    finally:
        for process in ranks:  # on a timeout or an error: leave no rank behind
            if process.is_alive():
                process.kill()
                process.join()
    for rank, process in enumerate(ranks):
        report = [out_dir / f"rank{rank}.{what}" for what in ("error", "stack")]
        assert process.exitcode == 0, (f"rank {rank} exit code {process.exitcode}:\n" + "\n".join(
            path.read_text() for path in report if path.exists()))


@pytest.fixture(scope="module")
def ddp_run(tmp_path_factory):
    out_dir = tmp_path_factory.mktemp("ddp")
    run_ranks(out_dir)
    return out_dir


def single_process_capture():
    model = _models.build(torch)
    with capture(model, layers=LAYERS, ops=OPS) as cap:
        _models.step(torch, model, seed=10)
    return cap


@pytest.mark.parametrize("run", ["wrapper", "module"])
def test_rank0_capture_equals_a_single_process_capture(ddp_run, run):
    reference = single_process_capture()
    captured = load(ddp_run / run)
    assert captured.keys() == reference.keys()  # names without the "module." prefix
    assert "shared/matmul:0.grad_output" in reference.keys()
    assert ([(r.key, r.step, r.call) for r in captured.records()]
            == [(r.key, r.step, r.call) for r in reference.records()])
    for key in reference:
        for got, want in zip(captured[key], reference[key]):
            np.testing.assert_array_equal(got, want, err_msg=key)


def test_ddp_still_averages_parameter_gradients_under_capture(ddp_run):
    grads = np.load(ddp_run / "grads.npz")
    expected = {}
    for rank in range(WORLD_SIZE):
        model = _models.build(torch)
        _models.step(torch, model, seed=10 + rank)
        for name, parameter in model.named_parameters():
            expected[name] = expected.get(name, 0) + parameter.grad.numpy() / WORLD_SIZE
    assert sorted(grads.files) == sorted(expected)
    for name, value in expected.items():
        np.testing.assert_allclose(grads[name], value, rtol=1e-12, atol=1e-14, err_msg=name)
