"""The device story matches torch's CPU-only build: CUDA is absent, asked-for GPUs raise torch's
errors (never a silent CPU tensor), device objects are built and compared as in torch."""
from __future__ import annotations

import pytest
import torch

import hookgrad


def _outcome(call: str):
    """(error type, message) of ``call`` under a library, or ('ok', repr of the result)."""
    results = []
    for lib in (hookgrad, torch):
        try:
            value = eval(call, {"L": lib})
        except Exception as error:  # noqa: BLE001  (the type is what is compared)
            results.append((type(error).__name__, str(error).split("\n")[0]))
        else:
            results.append(("ok", repr(value) if not hasattr(value, "shape") else "tensor"))
    return results


NEEDS_A_GPU = [
    "L.ones(2).to('cuda')", "L.ones(2).to(device='cuda:0')", "L.ones(2).to(L.device('cuda', 1))",
    "L.ones(2).to('cuda', L.float64)", "L.ones(2).cuda()", "L.zeros(2, device='cuda')",
    "L.ones(2, device='cuda:0')", "L.empty(2, device='cuda')", "L.full((2,), 1.0, device='cuda')",
    "L.tensor([1.0], device='cuda')", "L.as_tensor([1.0], device='cuda')",
    "L.arange(3, device='cuda')", "L.linspace(0, 1, 3, device='cuda')", "L.eye(2, device='cuda')",
    "L.zeros_like(L.ones(2), device='cuda')", "L.ones_like(L.ones(2), device='cuda')",
    "L.full_like(L.ones(2), 3, device='cuda')", "L.empty_like(L.ones(2), device='cuda')",
    "L.rand(2, device='cuda')", "L.randn(2, device='cuda')", "L.randint(0, 3, (2,), device='cuda')",
    "L.randperm(3, device='cuda')", "L.rand_like(L.ones(2), device='cuda')",
    "L.randn_like(L.ones(2), device='cuda')", "L.normal(0.0, 1.0, (2,), device='cuda')",
    "L.nn.Linear(2, 2).cuda()", "L.nn.Linear(2, 2).to('cuda')",
    "L.nn.Linear(2, 2).to(device='cuda:0')",
    "L.cuda.current_device()", "L.cuda.get_device_name()", "L.cuda.get_device_name(0)",
    "L.cuda.synchronize()", "L.cuda.get_device_properties(0)", "L.cuda.get_rng_state()",
    "L.cuda.get_device_capability()", "L.ones(2).to('mps')", "L.device('gpu')",
]


@pytest.mark.parametrize("call", NEEDS_A_GPU)
def test_gpu_requests_raise_like_torch(call):
    ours, theirs = _outcome(call)
    assert ours[0] == theirs[0] != "ok"
    if theirs[0] == "AssertionError":
        assert ours[1] == theirs[1] == "Torch not compiled with CUDA enabled"


ANSWERS = [
    "L.cuda.is_available()", "L.cuda.device_count()", "L.cuda.is_initialized()",
    "L.cuda.manual_seed(0)", "L.cuda.manual_seed_all(0)", "L.cuda.empty_cache()",
    "L.cuda.memory_allocated()", "L.cuda.max_memory_allocated()", "L.cuda.is_bf16_supported()",
    "L.backends.mps.is_available()", "L.backends.mps.is_built()", "L.backends.cudnn.is_available()",
    "L.backends.cudnn.enabled", "L.backends.cudnn.benchmark", "L.backends.cudnn.deterministic",
    "L.device('cuda')", "L.device('cuda:1')", "L.device('cuda', 0)", "L.device('cpu')",
    "str(L.device('cuda:1'))", "L.device('cuda:1').index", "L.device('cuda').type",
    "L.device('cpu') == L.device('cpu')", "L.device('cuda') == L.device('cuda:0')",
    "L.device(L.device('cuda', 2))", "L.ones(2).device", "L.ones(2).is_cuda",
    "L.ones(2).get_device()",
    "L.get_default_device()", "L.zeros(1, device='cpu').device",
    "L.zeros(1, device=L.device('cpu')).device", "L.ones(2).to('cpu').device",
    "L.nn.Linear(2, 2).to('cpu').weight.device",
    "L.cuda.is_available() and 'cuda' or 'cpu'",
]


@pytest.mark.parametrize("call", ANSWERS)
def test_cpu_only_answers_like_torch(call):
    ours, theirs = _outcome(call)
    assert ours == theirs


def test_default_device_like_torch():
    for lib in (hookgrad, torch):
        lib.set_default_device("cpu")
        assert lib.get_default_device() == lib.device("cpu")
        lib.set_default_device("cuda")  # accepted; the first use raises
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            lib.zeros(1)
        with pytest.raises(AssertionError):
            lib.get_default_device()
        lib.set_default_device(None)
        assert lib.zeros(1).device == lib.device("cpu")


def test_device_as_context_sets_the_default():
    with hookgrad.device("cpu"):
        assert hookgrad.zeros(1).device == hookgrad.device("cpu")
    with pytest.raises(AssertionError):
        with hookgrad.device("cuda"):
            hookgrad.zeros(1)
    assert hookgrad.zeros(1).device == hookgrad.device("cpu")


def test_cuda_device_context_needs_a_gpu():
    for lib in (hookgrad, torch):
        context = lib.cuda.device(0)
        with pytest.raises(RuntimeError, match="compiled without CUDA support"):
            with context:
                pass
