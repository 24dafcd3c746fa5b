"""hookgrad.capture: record and export module inputs, outputs and gradients.

Built only on public hook APIs (module forward pre/post hooks, full backward hooks, tensor
hooks), so it doubles as a worked example. The same calls take a PyTorch model (torch's own
hooks are used then; records are NumPy copies made on the CPU by torch, and a model wrapped in
``DistributedDataParallel`` is named as the model it wraps)::

    from hookgrad.capture import capture, patch

    with capture(model, layers=["conv1", "fc"], kinds=("output", "grad_output")) as cap:
        loss_fn(model(x), y).backward()
    cap["conv1.output"][0]          # a NumPy copy of conv1's output at the first call
    print(cap.summary())

    with capture(model, ops=["matmul", "softmax"]) as cap:   # functional calls in forward
        model(x)
    cap["attn/softmax:0.output"]    # the first softmax computed in attn's forward, per call

    with capture(model, layers="conv*", to="run1/"):   # stream to disk: safetensors or .npy
        ...
    run = capture.load("run1/")     # same reading API; framework="torch" gives torch tensors

    with patch(model, "layer1", lambda module, h: h * 0):   # ablate a layer's output
        model(x)
"""
from .disk import DiskRun, load, safetensors_available
from .patch import patch
from .recorder import capture, select_modules
from .storage import KINDS, CaptureKeyError, Record, Stats, Summary, SummaryRow

__all__ = [
    "KINDS", "CaptureKeyError", "DiskRun", "Record", "Stats", "Summary", "SummaryRow", "capture",
    "load", "patch", "safetensors_available", "select_modules",
]
