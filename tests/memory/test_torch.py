"""What only torch has: savers computing with torch ops where the tensor lives, the ledger's
view of torch's modules and storages, the measured peak of allocated memory, and the CUDA
staging (run only where a GPU is present)."""
import os

import numpy as np
import pytest
import torch

from hookgrad import memory
from hookgrad.memory.savers.base import View


def _saved(saver, x):
    """The saver's packed form of ``exp(x)``'s saved result, and the result."""
    seen = {}

    def pack(value):
        seen["packed"] = saver.pack(value)
        return seen["packed"]

    with torch.autograd.graph.saved_tensors_hooks(pack, saver.unpack):
        out = x.exp()
    return seen["packed"], out


@pytest.fixture
def x():
    torch.manual_seed(0)
    return torch.randn(64, 32, requires_grad=True)


def test_quantize_and_cast_never_leave_torch(x, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a saver went through NumPy")

    monkeypatch.setattr(torch.Tensor, "numpy", refuse)
    monkeypatch.setattr(torch.Tensor, "__array__", refuse)
    for saver in (memory.quantize(8), memory.quantize(2, per="tensor"), memory.cast("bfloat16"),
                  memory.cast("float16")):
        with memory.policy({"*": saver}, framework="torch"):
            pass
        with torch.autograd.graph.saved_tensors_hooks(saver.pack, saver.unpack):
            loss = (x * 2).tanh().sum()
        loss.backward()


def test_quantized_codes_are_torch_tensors_on_the_tensors_device(x):
    packed, out = _saved(memory.quantize(8), x)
    assert isinstance(packed, View)
    stored = packed.stored
    assert isinstance(stored.codes, torch.Tensor) and stored.codes.dtype == torch.uint8
    assert stored.codes.device == out.device and stored.scale.device == out.device
    assert packed.nbytes == 64 * 32 + 2 * 32 * 4  # one byte a value, a scale and low a column
    step = (out.amax(0) - out.amin(0)) / 255
    assert torch.all((packed.unpack() - out).abs() <= step / 2 * 1.0001 + 1e-6)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_cast_matches_torch_own_conversion(x, dtype):
    packed, out = _saved(memory.cast(dtype), x)
    target = getattr(torch, dtype)
    assert packed.stored.data.dtype == target
    assert torch.equal(packed.unpack(), out.detach().to(target).to(out.dtype))


@pytest.mark.parametrize("non_blocking", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_offload_round_trips_every_float_dtype_bit_exactly(tmp_path, dtype, non_blocking):
    x = torch.randn(16, 8, dtype=dtype, requires_grad=True)
    saver = memory.offload(tmp_path, non_blocking=non_blocking)
    packed, out = _saved(saver, x)
    back = packed.unpack()
    assert back.dtype == dtype and torch.equal(back, out.detach())
    saver.close()


def test_quantize_keeps_the_relu_mask_exact(x):
    with memory.quantize(4, framework="torch"):
        y = x.relu()
    y.backward(torch.ones_like(y))
    assert torch.equal(x.grad, (x > 0).to(x.dtype))


def test_a_saver_context_alone_leaves_inputs_and_parameters_alone(x):
    weight = torch.nn.Parameter(torch.randn(32, 32))
    with memory.ledger(framework="torch", measure=False) as led:
        with memory.quantize(8, framework="torch"):
            (x.detach().t() @ (x @ weight)).sum()  # saves x and weight, then x.detach()
    assert {r.kind: r.stored_as for r in led.records} == {"input": "tensor",
                                                          "parameter": "tensor"}


def test_ledger_finds_buffers_parameters_inputs_and_saved_statistics():
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8),
                                torch.nn.ReLU())
    x = torch.randn(2, 3, 8, 8)
    for training, statistics in ((True, "activation"), (False, None)):
        model.train(training)
        with memory.ledger(model=model, measure=False) as led:
            model(x).sum().backward()
        kinds = [(r.module, r.kind) for r in led.records]
        assert ("0", "input") in kinds and ("0", "parameter") in kinds
        assert kinds.count(("1", "buffer")) == 2  # running mean and variance
        if statistics:  # the batch's mean and inverse std, made by the op and saved for backward
            assert [r.shape for r in led.records if r.module == "1"
                    and r.kind == "activation" and r.shape == (8,)] == [(8,), (8,)]
        conv = next(r for r in led.records if r.module == "1" and r.shape == (2, 8, 6, 6))
        assert conv.op == "ConvolutionBackward0" and conv.kind == "activation"


def test_ledger_counts_one_storage_saved_by_several_ops_once(x):
    with memory.ledger(framework="torch", measure=False) as led:
        h = (x * 3).relu()  # relu saves its result
        loss = (h.sin() + h.cos()).sum()  # sin, cos: the same storage again
    relu = [r for r in led.records if r.shape == (64, 32)]
    assert len(relu) == 3 and sum(r.counted for r in relu) == 64 * 32 * 4
    assert {r.alias_of for r in relu[1:]} == {relu[0].index}
    loss.backward()
    assert led.current == 0


def test_the_measured_peak_follows_the_activations():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(128, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 128))
    peaks = {}
    for rows in (64, 512):
        x = torch.randn(rows, 128)
        with memory.ledger(model=model) as led:
            model(x).pow(2).sum().backward()
        assert led.measured_peak >= led.peak > 0
        peaks[rows] = led.measured_peak
    # eight times the batch: the activations' share of the peak grows eightfold
    activations = 512 * 512 * 4
    assert peaks[512] - peaks[64] >= activations * 7 / 8 * 0.9
    assert "measured peak" in led.table() and '"measured_peak"' in led.to_json()


@pytest.mark.parametrize("non_blocking", [False, True])
def test_training_a_conv_net_under_offload_is_bit_exact(tmp_path, non_blocking):
    def run(context):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1),
                                    torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
                                    torch.nn.Conv2d(8, 4, 3), torch.nn.Flatten(),
                                    torch.nn.Linear(4 * 6 * 6, 5))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        data = torch.randn(6, 3, 8, 8)
        for _ in range(3):
            optimizer.zero_grad()
            with context():
                loss = model(data).logsumexp(1).mean()
            loss.backward()
            optimizer.step()
        return [p.detach().clone() for p in model.parameters()]

    exact = run(lambda: memory.policy({}, framework="torch"))
    saver = memory.offload(tmp_path, non_blocking=non_blocking)
    offloaded = run(lambda: memory.policy({"*": saver}, framework="torch"))
    assert all(torch.equal(a, b) for a, b in zip(offloaded, exact))
    saver._store_obj.pool.submit(lambda: None).result()  # reads cancelled ahead let go
    assert [f for _, _, files in os.walk(saver.path) for f in files] == []
    saver.close()


def test_framework_is_inferred_from_a_torch_module_type_in_the_rules():
    rules = memory.policy({torch.nn.Linear: memory.quantize(8)})
    assert rules.framework == "torch"
    assert memory.policy({"x": None}).framework == "hookgrad"


cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@cuda
def test_on_a_gpu_savers_stay_on_it_and_offload_stages_through_pinned_memory(tmp_path):
    x = torch.randn(256, 64, device="cuda", requires_grad=True)
    packed, out = _saved(memory.quantize(8), x)
    assert packed.stored.codes.device == out.device
    saver = memory.offload(tmp_path)
    packed, out = _saved(saver, x)
    back = packed.unpack()
    assert back.device == out.device and torch.equal(back, out.detach())
    with memory.ledger(framework="torch", device=x.device) as led:
        x.exp().sum().backward()
    assert led.measured_peak > 0
    saver.close()


def test_quantized_bfloat16_activations_keep_their_dtype_on_unpack():
    x = torch.randn(8, 8, dtype=torch.bfloat16, requires_grad=True)
    packed, out = _saved(memory.quantize(8), x)
    assert packed.unpack().dtype == torch.bfloat16
    out = out.detach().float()
    np.testing.assert_allclose(packed.unpack().float().numpy(), out.numpy(),
                               atol=float((out.max() - out.min()) / 255 + 1e-2))
