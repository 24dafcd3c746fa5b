"""ledger(): which tensors are saved, filed under which module, and what they cost in bytes."""
import contextlib
import gc
import json

import numpy as np
import pytest
import torch

import hookgrad
from hookgrad import memory

BATCH, IN, HIDDEN, OUT = 8, 5, 7, 3


def _model(lib):
    """Linear -> ReLU -> Linear written the same way in both libraries."""

    class Affine(lib.nn.Module):
        def __init__(self, fan_in, fan_out):
            super().__init__()
            self.weight = lib.nn.Parameter(lib.ones(fan_out, fan_in) * 0.1)
            self.bias = lib.nn.Parameter(lib.zeros(fan_out))

        def forward(self, x):
            return x @ self.weight.t() + self.bias

    class ReLU(lib.nn.Module):
        def forward(self, x):
            return x.relu()

    return lib.nn.Sequential(Affine(IN, HIDDEN), ReLU(), Affine(HIDDEN, OUT))


def _saved_by_torch():
    log = []

    def pack(t):
        log.append((tuple(t.shape), t._base is not None or t.requires_grad))
        return t

    model = _model(torch)
    x = torch.ones(BATCH, IN)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        model(x).sum()
    return log


def test_records_the_tensors_torch_saves_with_hand_computed_bytes():
    model = _model(hookgrad)
    x = hookgrad.ones(BATCH, IN)
    with memory.ledger() as led:
        loss = model(x).sum()
    torch_log = _saved_by_torch()
    assert [r.shape for r in led.records] == [shape for shape, _ in torch_log]
    # x (for W1's grad; x needs none, so W1.t() is not saved), the ReLU's result, then the
    # second layer's W2.t() (a parameter view) and its input: the ReLU's result again
    assert [r.kind for r in led.records] == ["input", "activation", "parameter", "activation"]
    assert [r.module for r in led.records] == ["0", "1", "2", "2"]
    assert [r.op for r in led.records] == ["MmBackward0", "ReluBackward0", "MmBackward0",
                                          "MmBackward0"]
    assert [r.nbytes for r in led.records] == [BATCH * IN * 4, BATCH * HIDDEN * 4,
                                              HIDDEN * OUT * 4, BATCH * HIDDEN * 4]
    assert led.records[3].alias_of == 1 and led.records[3].counted == 0
    assert led.records[2].counted == 0  # parameters are listed, not counted
    expected = BATCH * IN * 4 + BATCH * HIDDEN * 4  # the input and one ReLU output
    assert led.total == expected and led.peak == expected and led.current == expected
    loss.backward()
    assert led.current == 0 and led.peak == expected


def test_freeing_the_graph_without_backward_releases_everything():
    model = _model(hookgrad)
    with memory.ledger() as led:
        loss = model(hookgrad.ones(BATCH, IN)).sum()
    assert led.current > 0
    del loss
    gc.collect()
    assert led.current == 0


def test_peak_is_the_most_alive_at_once_not_the_sum(rng):
    x = hookgrad.tensor(rng.standard_normal(100).astype(np.float32), requires_grad=True)
    with memory.ledger() as led:
        for _ in range(3):
            (x * 1).exp().sum().backward()  # each step saves one 400-byte result, then frees it
    assert led.total == 3 * 400 and led.peak == 400 and led.current == 0


@pytest.mark.parametrize("saver, held", [
    (memory.cast("bfloat16"), BATCH * HIDDEN * 2),
    (memory.quantize(8, per="tensor"), BATCH * HIDDEN + 8),
    (memory.offload(), 0),
], ids=["bfloat16", "int8", "offload"])
@pytest.mark.parametrize("ledger_outside", [True, False])
def test_counts_what_a_saver_holds_in_either_order(saver, held, ledger_outside):
    model = _model(hookgrad)
    x = hookgrad.ones(BATCH, IN)
    led = memory.ledger()
    outer, inner = (led, saver) if ledger_outside else (saver, led)
    with outer, inner:
        loss = model(x).sum()
    activations = [r for r in led.records if r.kind == "activation"]
    assert all(r.held == held for r in activations)
    assert led.total == BATCH * IN * 4 + held  # the input is left alone, the ReLU output packed
    loss.backward()
    assert led.current == 0


def test_table_and_json_list_modules_largest_first():
    model = _model(hookgrad)
    with memory.ledger() as led:
        model(hookgrad.ones(BATCH, IN)).sum()
    table = led.table()
    lines = table.splitlines()
    assert lines[0].split()[:3] == ["module", "type", "saved"]
    assert [line.split()[0] for line in lines[2:5]] == ["1", "0", "2"]  # 224, 160, 0 bytes
    assert "not counted" in table and "peak" in lines[-1]
    data = json.loads(led.to_json())
    assert data["total"] == led.total and len(data["records"]) == 4
    assert list(data["modules"]) == ["1", "0", "2"]


def test_no_hooks_remain_after_the_ledger_closes():
    from hookgrad.nn.modules import module as module_file

    before = (len(module_file._global_forward_pre_hooks), len(module_file._global_forward_hooks))
    with memory.ledger():
        with memory.ledger():
            pass
    after = (len(module_file._global_forward_pre_hooks), len(module_file._global_forward_hooks))
    assert before == after
    x = hookgrad.ones(3, requires_grad=True)
    y = x.exp()
    assert y.grad_fn._raw_saved_result._packed is None  # no hook packed it


def test_nn_linear_relu_linear_saves_what_torch_saves():
    shapes = {}
    for lib in (torch, hookgrad):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(IN, HIDDEN), lib.nn.ReLU(),
                                  lib.nn.Linear(HIDDEN, OUT))
        log = []

        def pack(t, log=log):
            log.append(tuple(t.shape))
            return t

        with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            model(lib.ones(BATCH, IN)).sum()
        shapes[lib.__name__] = log
    with memory.ledger() as led:
        model(hookgrad.ones(BATCH, IN)).sum()
    assert [r.shape for r in led.records] == shapes["torch"] == shapes["hookgrad"]
    assert [(r.module, r.module_type, r.op, r.kind) for r in led.records] == [
        ("0", "Linear", "AddmmBackward0", "input"),
        ("1", "ReLU", "ReluBackward0", "activation"),
        ("2", "Linear", "AddmmBackward0", "activation"),
        ("2", "Linear", "AddmmBackward0", "parameter")]
    assert led.total == BATCH * IN * 4 + BATCH * HIDDEN * 4


def test_the_measured_peak_of_a_step_is_split_and_placed():
    import tracemalloc
    hookgrad.manual_seed(0)
    model = hookgrad.nn.Sequential(hookgrad.nn.Linear(64, 256), hookgrad.nn.ReLU(),
                                   hookgrad.nn.Linear(256, 8))
    x = hookgrad.randn(512, 64)
    with memory.ledger() as led:
        loss = model(x).pow(2).sum()
        loss.backward()
    split = led.peak_split
    assert not tracemalloc.is_tracing()  # started for the block, stopped after it
    assert led.measured_peak == split["peak"] > 0
    assert split["saved"] + split["gradients"] + split["transient"] == split["peak"]
    # the two hidden activations (the ReLU's output is shared with the next Linear) are alive
    assert split["saved"] >= 512 * 256 * 4
    assert split["where"].startswith(("forward", "backward", "after forward"))
    assert "transient workspaces" in led.table()
    with memory.ledger(measure=False) as quiet:
        model(x).sum().backward()
    assert quiet.measured_peak is None and quiet.peak_split is None


def test_the_timeline_follows_the_step_and_draws_to_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    hookgrad.manual_seed(0)
    model = hookgrad.nn.Sequential(hookgrad.nn.Linear(64, 256), hookgrad.nn.ReLU(),
                                   hookgrad.nn.Linear(256, 8))
    x = hookgrad.randn(512, 64)
    with memory.ledger() as led:
        loss = model(x).pow(2).sum()
        loss.backward()
    wheres = [row[0] for row in led.timeline]
    assert "forward of 0" in wheres and any(w.startswith("backward") for w in wheres)
    assert max(row[1] for row in led.timeline) >= 512 * 256 * 4  # both hidden activations
    assert max(row[3] for row in led.timeline) <= led.measured_peak
    assert max(row[4] for row in led.timeline) == led.measured_peak
    path = led.timeline_png(str(tmp_path / "timeline.png"))
    with open(path, "rb") as handle:
        assert handle.read(8) == b"\x89PNG\r\n\x1a\n"
    with memory.ledger(measure=False) as quiet:
        model(x).sum().backward()
    with pytest.raises(RuntimeError, match="no timeline"):
        quiet.timeline_png(str(tmp_path / "none.png"))


def test_the_timeline_splits_saved_bytes_by_module_and_draws_runs_side_by_side(tmp_path):
    pytest.importorskip("matplotlib")
    hookgrad.manual_seed(0)
    model = hookgrad.nn.Sequential(hookgrad.nn.Linear(64, 256), hookgrad.nn.ReLU(),
                                   hookgrad.nn.Linear(256, 8))
    x = hookgrad.randn(512, 64)
    with memory.ledger() as plain:
        model(x).pow(2).sum().backward()
    with memory.ledger() as quantized:
        with memory.quantize(8):
            loss = model(x).pow(2).sum()
        loss.backward()
    for led in (plain, quantized):
        # per module, the saved bytes alive add up to the saved total at every event
        assert all(sum(row[5].values()) == row[1] for row in led.timeline)
        assert led.timeline[-1][5] == {}  # all freed by backward
    hidden = 512 * 256 * 4  # ReLU's output, saved by ReLU (first) and the second Linear

    def when_backward_starts(led):
        return next(row for row in led.timeline if row[0].startswith("backward"))[5]

    assert when_backward_starts(plain)["1"] == hidden
    assert when_backward_starts(quantized)["1"] < hidden / 3
    path = memory.timeline_png({"no policy": plain, "int8": quantized},
                               str(tmp_path / "both.png"))
    with open(path, "rb") as handle:
        assert handle.read(8) == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("saver", ["offload", "quantize"])
def test_backward_events_name_the_op_when_a_saver_inside_the_ledger_unpacks(tmp_path, saver):
    # the saver's unpack hook opens the ledger's box before the ledger's own hook runs; the
    # timeline and the peak's place still say which node was reading its saved tensors
    hookgrad.manual_seed(0)
    model = hookgrad.nn.Sequential(hookgrad.nn.Linear(64, 256), hookgrad.nn.ReLU(),
                                   hookgrad.nn.Linear(256, 8))
    x = hookgrad.randn(512, 64)
    inner = memory.offload(tmp_path) if saver == "offload" else memory.quantize(8)
    with memory.ledger() as led:
        with inner:
            loss = model(x).pow(2).sum()
        loss.backward()
    wheres = [row[0] for row in led.timeline]
    assert "backward" not in wheres
    assert "backward: ReluBackward0 of 1" in wheres
    assert "backward: AddmmBackward0 of 2" in wheres


def test_a_ledger_does_not_keep_a_checkpoint_rerun_alive():
    # while a checkpoint reruns, each module is a root of its own; the tracker must not keep the
    # last root's arguments (a tensor whose grad_fn holds that rerun's graph) after it returns
    import tracemalloc
    hookgrad.manual_seed(0)
    nn = hookgrad.nn
    model = nn.Sequential(nn.Linear(64, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 8))
    x = hookgrad.randn(256, 64)

    def step():
        with memory.policy({"": memory.recompute(segments=2)}, model=model):
            loss = model(x).pow(2).sum()
        loss.backward()

    def peak(context):
        step()
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            with context:
                step()
            return tracemalloc.get_traced_memory()[1] - base
        finally:
            tracemalloc.stop()

    alone = peak(contextlib.nullcontext())
    with_ledger = peak(memory.ledger(measure=False))
    assert with_ledger < alone + 256 * 512 * 4  # the ledger's records, not a rerun's graph
    assert memory._modules.tracker_for("hookgrad").state.root_args == ()
