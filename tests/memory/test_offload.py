"""offload(): no file outlives its use, whichever way a step ends; prefetch runs ahead."""
import contextlib
import gc
import importlib
import os
import shutil
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest
import torch

import hookgrad
from hookgrad import memory
from hookgrad.memory.savers._directories import PREFIX


def _files(root) -> list:
    return [os.path.join(d, f) for d, _, names in os.walk(root) for f in names]


def _chain(x, length=6):
    h = x
    for _ in range(length):
        h = (h * 0.5).exp()  # ExpBackward0 saves each result: one file each
    return h.sum()


def _wait_written(saver):
    store = saver._store_obj
    for ref in store.items:
        item = ref() if ref is not None else None
        if item is not None and item.write is not None and not item.write.cancelled():
            item.write.result()


def _drain(saver):
    """Wait until the worker has finished what it was given (it runs jobs in order): a job
    still writing holds its saved tensor, whose file goes when the job lets go of it."""
    saver._store_obj.pool.submit(lambda: None).result()


@pytest.fixture
def x(rng):
    return hookgrad.tensor(rng.standard_normal((32, 16)).astype(np.float32), requires_grad=True)


@pytest.mark.parametrize("non_blocking", [False, True])
def test_files_are_written_then_removed_as_backward_reads_them(tmp_path, x, non_blocking):
    saver = memory.offload(tmp_path, non_blocking=non_blocking)
    with saver:
        loss = _chain(x)
    _wait_written(saver)
    assert len(_files(tmp_path)) == 6
    loss.backward()
    assert _files(tmp_path) == []


@pytest.mark.parametrize("non_blocking", [False, True])
def test_a_graph_freed_without_backward_removes_its_files(tmp_path, x, non_blocking):
    saver = memory.offload(tmp_path, non_blocking=non_blocking)
    with saver:
        loss = _chain(x)
    _wait_written(saver)
    del loss
    gc.collect()
    _drain(saver)
    assert _files(tmp_path) == []


@pytest.mark.parametrize("non_blocking", [False, True])
@pytest.mark.parametrize("error", [ValueError, KeyboardInterrupt])
def test_an_error_raised_inside_backward_leaves_no_files(tmp_path, x, error, non_blocking):
    saver = memory.offload(tmp_path, non_blocking=non_blocking)
    with saver:
        h = (x * 0.5).exp()
        h.register_hook(lambda grad: (_ for _ in ()).throw(error("stop")))
        loss = _chain(h)
    with pytest.raises(error):
        loss.backward()
    del loss, h
    gc.collect()
    _drain(saver)
    assert _files(tmp_path) == []


@pytest.mark.parametrize("non_blocking", [False, True])
@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_an_error_leaving_the_block_removes_its_files_at_once(tmp_path, x, error, non_blocking):
    saver = memory.offload(tmp_path, non_blocking=non_blocking)
    kept = []
    with pytest.raises(error):
        with saver:
            kept.append(_chain(x))  # the graph stays referenced: only the context can clean up
            raise error("interrupted")
    _drain(saver)
    assert _files(tmp_path) == []
    with pytest.raises(RuntimeError, match="discarded"):
        kept[0].backward()


def test_close_removes_the_private_directory(tmp_path, x):
    saver = memory.offload(tmp_path)
    with saver:
        loss = _chain(x)
    path = saver.path
    assert os.path.isdir(path)
    saver.close()
    assert not os.path.exists(path)
    del loss


def test_prefetch_reads_the_next_older_tensors_ahead(tmp_path, x):
    saver = memory.offload(tmp_path, prefetch=2)
    with saver:
        loss = _chain(x, length=5)
    _wait_written(saver)
    items = [ref() for ref in saver._store_obj.items]
    newest = items[-1]
    newest.decode()  # what backward does first
    assert [item.read is not None for item in items[:-1]] == [False, False, True, True]
    loss.backward()


def test_read_ahead_stays_within_the_prefetch_window(tmp_path, x):
    # each unpack tops the window up to `prefetch` older tensors; it never starts more, so the
    # reads waiting in memory do not pile up through backward
    saver = memory.offload(tmp_path, prefetch=2)
    with saver:
        loss = _chain(x, length=7)
    _wait_written(saver)
    items = [ref() for ref in saver._store_obj.items]
    for position in range(len(items) - 1, 2, -1):
        items[position].decode()
        waiting = [item.read is not None and item.loaded is None for item in items[:position]]
        assert sum(waiting) == 2 and waiting[-2:] == [True, True]
    loss.backward()


def test_gradients_survive_retain_graph(tmp_path, x):
    with memory.offload(tmp_path):
        loss = _chain(x, length=3)
    loss.backward(retain_graph=True)
    first = x.grad.numpy().copy()
    loss.backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * first)
    del loss
    gc.collect()
    assert _files(tmp_path) == []  # read once, removed at once


def test_an_inplace_change_after_the_write_keeps_the_saved_values(tmp_path, x):
    saver = memory.offload(tmp_path)
    with saver:
        h = x * 1
        loss = h.sin().sum()  # SinBackward0 saves h; the file holds h as it was
    _wait_written(saver)
    with hookgrad.no_grad():
        h.mul_(2)
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos(x.detach().numpy()), rtol=1e-6)


def test_an_inplace_change_before_the_write_is_an_error(tmp_path, x):
    saver = memory.offload(tmp_path, non_blocking=True)
    gate = threading.Event()
    saver._disk().pool.submit(gate.wait)  # hold the writer back
    with saver:
        h = x * 1
        loss = h.sin().sum()
    with hookgrad.no_grad():
        h.mul_(2)
    gate.set()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


_CHILD = textwrap.dedent("""
    import os, sys
    import numpy as np
    import hookgrad
    from hookgrad import memory
    saver = memory.offload(sys.argv[1])
    x = hookgrad.tensor(np.ones((64, 64), np.float32), requires_grad=True)
    with saver:
        loss = (x.exp() * 2).exp().sum()
    for ref in saver._store_obj.items:
        assert ref().write is None  # written as saved, on this thread
    print(saver.path, flush=True)
    if sys.argv[2] == "kill":
        os._exit(0)  # no cleanup at all, as if killed
""")


def _child(tmp_path, how: str) -> str:
    done = subprocess.run([sys.executable, "-c", _CHILD, str(tmp_path), how],
                          capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.strip()


def test_interpreter_exit_removes_the_directory(tmp_path):
    path = _child(tmp_path, "exit")
    assert path.startswith(str(tmp_path)) and not os.path.exists(path)
    assert os.listdir(tmp_path) == []


def test_a_directory_left_by_a_dead_process_is_cleaned_on_next_use(tmp_path, x):
    path = _child(tmp_path, "kill")
    assert os.path.basename(path).startswith(PREFIX) and _files(path)
    unrelated = tmp_path / "keep-me.txt"
    unrelated.write_text("not ours")
    with memory.offload(tmp_path):
        loss = _chain(x, length=1)
    assert not os.path.exists(path) and unrelated.exists()
    loss.backward()


def test_a_directory_removed_under_a_live_graph_is_reported_as_such(tmp_path, x):
    saver = memory.offload(tmp_path, prefetch=0)
    with saver:
        loss = _chain(x)
    _wait_written(saver)
    shutil.rmtree(saver.path)
    with pytest.raises(RuntimeError, match="was removed while a graph still needed them"):
        loss.backward()


def test_stale_clean_up_trusts_the_lock_not_the_pid(tmp_path, monkeypatch):
    module = importlib.import_module("hookgrad.memory.savers._directories")

    # a directory whose owner died, its PID since reused by a live process: lock free, old
    reused = tmp_path / f"{PREFIX}{os.getppid()}-abc"
    reused.mkdir()
    (reused / "0.bin").write_bytes(b"left over")
    old = os.stat(reused).st_mtime - 2 * module.SETTLED_SECONDS
    os.utime(reused, (old, old))
    # a live directory of another process: it holds the lock
    live = tmp_path / f"{PREFIX}{os.getppid()}-def"
    live.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import fcntl, os, sys, time
        descriptor = os.open(sys.argv[1], os.O_RDONLY)
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        print("locked", flush=True)
        time.sleep(60)
    """), str(live)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        os.utime(live, (old, old))
        monkeypatch.setattr(module, "pid_alive", lambda pid: True)  # every PID looks alive
        removed = module.clean_stale(str(tmp_path))
    finally:
        holder.kill()
        holder.wait(timeout=10)
    assert removed == [str(reused)] and live.exists() and not reused.exists()


def test_a_fresh_unlocked_directory_of_a_live_process_is_kept(tmp_path):
    module = importlib.import_module("hookgrad.memory.savers._directories")

    fresh = tmp_path / f"{PREFIX}{os.getppid()}-new"  # made a moment ago, lock not yet taken
    fresh.mkdir()
    assert module.clean_stale(str(tmp_path)) == [] and fresh.exists()


def test_a_buffer_two_nodes_saved_is_not_held_between_their_turns(tmp_path, rng):
    # ReluBackward0 saves h and max pooling saves h again: one file, read by both nodes; what
    # pooling read is let go after its turn instead of staying resident until ReLU's
    values = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    x = hookgrad.tensor(values, requires_grad=True)
    saver = memory.offload(tmp_path)
    with saver:
        out = hookgrad.nn.functional.max_pool2d(x.relu(), 2)
    _wait_written(saver)
    shared = saver._store_obj.items[0]
    relu = out.grad_fn.next_functions[0][0]
    assert relu.name() == "ReluBackward0"
    seen = []
    relu.register_prehook(lambda grads: seen.append(shared()._cached()))
    out.sum().backward()
    assert seen == [None]
    reference = torch.tensor(values, requires_grad=True)
    torch.nn.functional.max_pool2d(reference.relu(), 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), reference.grad.numpy())
    del out, relu
    gc.collect()
    _drain(saver)
    assert _files(tmp_path) == []


def test_integers_go_to_disk_in_the_narrowest_type(tmp_path, rng):
    x = hookgrad.tensor(rng.standard_normal((2, 3, 8, 8)).astype(np.float32), requires_grad=True)
    saver = memory.offload(tmp_path)
    with saver:
        out, indices = hookgrad.nn.functional.max_pool2d(x * 1, 2, return_indices=True)
    _wait_written(saver)
    stored = saver._store_obj.items[1]()  # max pooling saves its input, then its indices
    assert stored.kind == "uint8 on disk"  # an 8 x 8 plane: indices 0 to 63
    assert stored.disk_nbytes == indices.numel()
    decoded = stored.decode()
    assert decoded.dtype == np.int64
    np.testing.assert_array_equal(decoded, indices.numpy())
    del stored, decoded
    out.sum().backward()
    reference = torch.tensor(x.detach().numpy(), requires_grad=True)
    torch.nn.functional.max_pool2d(reference, 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), reference.grad.numpy())


# Where the work runs: writes on the saving thread unless non_blocking=True, reads ahead on
# the worker, a read ahead the worker has not started made by backward itself.

def _conv_net_grads(lib, values, weights, context=None):
    """Gradients of a conv-relu-pool-linear step in ``lib`` (hookgrad or torch)."""
    functional = lib.nn.functional
    x = lib.tensor(values, requires_grad=True)
    params = [lib.tensor(w, requires_grad=True) for w in weights]

    def step():
        h = functional.max_pool2d(functional.conv2d(x, params[0], params[1], padding=1).relu(), 2)
        return functional.linear(h.flatten(1), params[2]).tanh().pow(2).sum()

    with context or contextlib.nullcontext():
        loss = step()
    loss.backward()
    return [t.grad.detach().numpy().copy() for t in [x] + params]


@pytest.mark.parametrize("non_blocking", [False, True])
def test_both_ways_of_writing_give_the_gradients_of_no_policy_and_of_torch(tmp_path, rng,
                                                                           non_blocking):
    values = rng.standard_normal((4, 3, 8, 8))
    weights = [rng.standard_normal((5, 3, 3, 3)) / 4, rng.standard_normal(5),
               rng.standard_normal((2, 5 * 4 * 4)) / 8]
    exact = _conv_net_grads(hookgrad, values, weights)
    saver = memory.offload(tmp_path, non_blocking=non_blocking)
    offloaded = _conv_net_grads(hookgrad, values, weights, saver)
    reference = _conv_net_grads(torch, values, weights)
    for ours, plain, theirs in zip(offloaded, exact, reference):
        np.testing.assert_array_equal(ours, plain)
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    gc.collect()
    _drain(saver)
    assert _files(tmp_path) == []


def test_by_default_each_tensor_is_in_its_file_as_soon_as_it_is_saved(tmp_path, x):
    saver = memory.offload(tmp_path, prefetch=0)
    with saver:
        loss = _chain(x)
        items = [ref() for ref in saver._store_obj.items]
        # written here and now: no write queued, no array held unwritten, no worker started
        assert [(item.write, item.arrays) for item in items] == [(None, None)] * 6
        assert sorted(_files(tmp_path)) == sorted(item.path for item in items)
    assert not saver._store_obj.pool._threads
    del items
    loss.backward()
    assert _files(tmp_path) == []
    assert repr(saver) == f"offload(directory={str(tmp_path)!r})"


def test_non_blocking_writes_on_the_worker_within_max_pending_bytes(tmp_path, x, monkeypatch):
    module = importlib.import_module("hookgrad.memory.savers.offload")
    slow_write = module._DiskStored.write_file

    def write_slowly(item):  # a slow disk: the queue fills up unless saving waits
        threading.Event().wait(0.005)
        slow_write(item)

    monkeypatch.setattr(module._DiskStored, "write_file", write_slowly)
    one = x.numel() * x.element_size()
    saver = memory.offload(tmp_path, non_blocking=True, max_pending_bytes=2 * one)
    store = saver._disk()
    unwritten = []
    original_add = store.add

    def add(*args):
        item = original_add(*args)
        unwritten.append(sum(i().size for i in store.items if i() is not None and i().arrays))
        return item

    monkeypatch.setattr(store, "add", add)
    with saver:
        loss = _chain(x, length=8)
    assert len(unwritten) == 8 and max(unwritten) <= 2 * one
    assert any(item() is not None and item().write is not None for item in store.items)
    assert repr(saver) == f"offload(directory={str(tmp_path)!r}, non_blocking=True)"
    loss.backward()
    _drain(saver)
    assert _files(tmp_path) == []


def test_backward_reads_a_file_itself_rather_than_wait_for_a_stalled_worker(tmp_path, rng):
    values = rng.standard_normal((32, 16)) / 10
    x = hookgrad.tensor(values, requires_grad=True)
    saver = memory.offload(tmp_path, prefetch=2)
    with saver:
        loss = _chain(x)
    gate = threading.Event()
    stalled = saver._store_obj.pool.submit(gate.wait, 60)  # the worker gets no core
    loss.backward()  # every read ahead it was given is still queued behind the stall
    gate.set()
    assert stalled.result() is True  # released by us, not by its timeout: nothing waited on it
    np.testing.assert_allclose(x.grad.numpy(), _chain_grad(values), rtol=1e-10)
    _drain(saver)
    assert _files(tmp_path) == []


def _chain_grad(values, length=6):
    reference = torch.tensor(values, requires_grad=True)
    h = reference
    for _ in range(length):
        h = (h * 0.5).exp()
    h.sum().backward()
    return reference.grad.numpy()
