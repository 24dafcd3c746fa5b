"""The memory tools under torch's DistributedDataParallel: two processes, gloo on 127.0.0.1.

Each rank trains the same model on its own half of the batch three ways: no policy, ``offload()``
and ``policy({...: quantize(8)}, model=ddp)``; DDP averages the gradients across ranks in
backward. Offloaded gradients must equal plain DDP's bit for bit, 8-bit ones stay within
quantize's tolerance, and both ranks end with the same gradients.
"""
import os
import socket
import subprocess
import sys
import textwrap

import numpy as np
import pytest

torch = pytest.importorskip("torch")
if not torch.distributed.is_available():  # pragma: no cover
    pytest.skip("torch.distributed is not built in", allow_module_level=True)

_RANK = textwrap.dedent("""
    import datetime, os, sys
    import numpy as np
    import torch
    import torch.distributed as dist
    from hookgrad import memory

    rank, world, port, out, directory = int(sys.argv[1]), 2, sys.argv[2], sys.argv[3], sys.argv[4]
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world, timeout=datetime.timedelta(seconds=30))
    try:
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(),
                                    torch.nn.Linear(64, 64), torch.nn.Tanh(),
                                    torch.nn.Linear(64, 4)).double()
        ddp = torch.nn.parallel.DistributedDataParallel(model)
        torch.manual_seed(100 + rank)  # each rank its own data
        x = torch.randn(32, 16, dtype=torch.float64)
        results = {}
        contexts = {
            "plain": lambda: memory.policy({}, model=ddp),
            "offload": lambda: memory.offload(directory, framework="torch"),
            "quantize": lambda: memory.policy({"module.*": memory.quantize(8)}, model=ddp),
        }
        for name, context in contexts.items():
            ddp.zero_grad()
            with context():
                loss = ddp(x).pow(2).mean()
            loss.backward()
            for index, parameter in enumerate(model.parameters()):
                results[f"{name}_{index}"] = parameter.grad.numpy().copy()
        np.savez(out, **results)
    finally:
        dist.destroy_process_group()
    # results are written and the group is gone: skip the interpreter's teardown, where gloo's
    # threads once aborted the process ("terminate called without an active exception")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
""")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_offload_is_exact_and_quantize_close_under_ddp(tmp_path):
    source = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "src"))
    environment = dict(os.environ, PYTHONPATH=source, OMP_NUM_THREADS="1")
    port = str(_free_port())
    outputs = [tmp_path / f"rank{rank}.npz" for rank in range(2)]
    directory = tmp_path / "offload"
    ranks = [subprocess.Popen([sys.executable, "-c", _RANK, str(rank), port, str(outputs[rank]),
                               str(directory)], env=environment, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for rank in range(2)]
    try:
        for rank in ranks:
            _, errors = rank.communicate(timeout=90)
            assert rank.returncode == 0, errors
    finally:
        for rank in ranks:
            if rank.poll() is None:
                rank.kill()
                rank.wait(timeout=10)
    results = [dict(np.load(path)) for path in outputs]
    count = sum(1 for key in results[0] if key.startswith("plain_"))
    assert count == 6
    for index in range(count):
        plain = results[0][f"plain_{index}"]
        for rank in range(2):  # gradients are averaged: every rank holds the same
            np.testing.assert_array_equal(results[rank][f"plain_{index}"], plain)
            np.testing.assert_array_equal(results[rank][f"offload_{index}"], plain)
            quantized = results[rank][f"quantize_{index}"]
            assert np.abs(quantized - plain).max() <= 3e-2 * np.abs(plain).max()
        assert not np.array_equal(results[0][f"quantize_{index}"], plain) or index >= 4
    assert not directory.exists() or [f for _, _, n in os.walk(directory) for f in n] == []
