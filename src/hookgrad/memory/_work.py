"""What the planner decides on: a cost model of counts that do not change from run to run.

Timings on a shared machine swing by tens of per cent from one process to the next, and a plan
decided on them changed with them. So the planner *chooses* on weights computed from counts
that one forward and backward fix exactly, and uses its timings only to scale those weights
into the seconds it *estimates* (``_costs``):

- a saver on a unit of saved tensors costs ``tensors * per_tensor + bytes * per_byte``, at
  reference rates per saver (``REFERENCE_RATES``: seconds on a reference machine, process CPU
  time, one BLAS thread: the per-byte rate from each saver on chains of small ops, the least
  of many rounds; the per-tensor rate as a policy on the demo CNN pays it, about three times
  the chain's, for the policy's own work per tensor). The pack and unpack around each tensor
  (dispatch, the saver's tables, offload's thread and files) weigh far more than the bytes at
  the sizes of small models. A saver with work of its own per step (offload's directory and
  writer thread, ``REFERENCE_STEP``) costs that once if it stores anything: the solver tries
  the plans with and without each such saver;
- a recompute of a module costs ``RECOMPUTE_FIXED`` (checkpointing's own work: wrapping the
  forward, re-entering it in backward; about 0.9 ms measured per recomputed module) plus the
  module's forward work: its matrix products' FLOPs at ``FLOP_SECONDS`` each, the elements
  its leaf modules read and write at ``ELEMENT_SECONDS`` each, and ``CALL_SECONDS`` per
  module call (``ModuleWork``): a least-squares fit of leaf modules' forward times on the
  benchmark models (Linear, Conv2d, ReLU, MaxPool2d).

A policy's own work (``policy_weight``: its hooks per module call and per saved tensor) is the
same for every plan, so it steers nothing; it only gets its share of the estimate.

Only the ratios of these rates steer choices; on another machine the plan may be a little off
the fastest one, but it is the same plan on every run. A saver this table does not know is
weighted by its own rates, measured on a chain of ops (``_costs.calibrate``) and snapped to a
grid: such plans can differ between processes when the machine is loaded.
"""
from __future__ import annotations

import math
from typing import Any, Dict, Optional

# seconds per saved tensor and per byte stored (float32 activations), reference machine.
# quantize's are from chains of ``sin`` (no zeros), where choosing sparse storage costs one
# counting pass; on a ReLU's output 8-bit sparse costs ~0.8 ns a byte more (compress, expand)
# and keeps ~40 % fewer bytes, neither of which this table or the chain's kept ratio weighs
# (so ``plan``'s default candidates use dense codes: ``quantize(8, sparse=False)``)
REFERENCE_RATES: Dict[str, tuple] = {
    "cast bfloat16": (200e-6, 0.3e-9),
    "cast float16": (150e-6, 1.3e-9),
    "quantize 8": (300e-6, 0.15e-9),
    "quantize 4": (400e-6, 2.1e-9),
    "quantize 2": (500e-6, 2.4e-9),
    "offload": (350e-6, 0.05e-9),
}
# seconds a saver costs once per step as soon as it stores anything: offload's directory
# and writer thread (on the demo CNN, offloading two of seven units cost half of all seven)
REFERENCE_STEP: Dict[str, float] = {"offload": 1.5e-3}
RECOMPUTE_FIXED = 800e-6
# what a policy costs before it stores anything: its hooks on every module call, and its pack
# hook's lookup on every saved tensor (the demo CNN: 0.6 ms for 10 calls and 19 tensors)
POLICY_CALL = 30e-6
POLICY_TENSOR = 15e-6
FLOP_SECONDS = 1.2e-11
ELEMENT_SECONDS = 1e-9
CALL_SECONDS = 150e-6


def _key(saver: Any) -> str:
    kind = type(saver).__name__
    if kind == "cast":
        return f"cast {getattr(saver, 'dtype', '')}"
    if kind == "quantize":
        return f"quantize {getattr(saver, 'bits', '')}"
    return kind


def reference_rates(saver: Any) -> Optional[tuple]:
    """(seconds per tensor, seconds per byte) of a saver of the planner's table, or None."""
    return REFERENCE_RATES.get(_key(saver))


def step_cost(saver: Any) -> float:
    """Reference seconds ``saver`` costs once per step in which it stores anything."""
    return REFERENCE_STEP.get(_key(saver), 0.0) if reference_rates(saver) else 0.0


class ModuleWork:
    """Forward work per module name, counted in one step through module hooks: each call adds
    the FLOPs of its own weights (a weight of shape ``(out, ...)`` does ``2 * weight.numel()``
    FLOPs per ``out`` elements of the output: a Linear's or a convolution's product) and, for a
    module without children, the elements it reads and writes. ``work(name)`` is inclusive of
    the module's descendants, in reference seconds."""

    def __init__(self, backend: Any):
        self.backend = backend
        self.flops: Dict[str, float] = {}
        self.elements: Dict[str, float] = {}
        self.calls: Dict[str, int] = {}

    def add(self, name: str, module: Any, args: tuple, output: Any) -> None:
        is_tensor = self.backend.is_tensor
        outputs = output if isinstance(output, (tuple, list)) else (output,)
        produced = sum(_numel(o) for o in outputs if is_tensor(o))
        flops = 0.0
        for weight in module.parameters(recurse=False):
            if weight.dim() >= 2 and weight.shape[0]:
                flops += 2.0 * _numel(weight) * produced / weight.shape[0]
        self.flops[name] = self.flops.get(name, 0.0) + flops
        self.calls[name] = self.calls.get(name, 0) + 1
        if not any(True for _ in module.children()):
            read = sum(_numel(a) for a in args if is_tensor(a))
            self.elements[name] = self.elements.get(name, 0.0) + read + produced

    def own(self, name: str) -> float:
        return (self.flops.get(name, 0.0) * FLOP_SECONDS
                + self.elements.get(name, 0.0) * ELEMENT_SECONDS
                + self.calls.get(name, 0) * CALL_SECONDS)

    def work(self, name: str) -> float:
        """Reference seconds of ``name``'s forward, its descendants' included."""
        prefix = name + "."
        return math.fsum(self.own(n) for n in sorted(self.calls)
                         if not name or n == name or n.startswith(prefix))


def policy_weight(calls: int, tensors: int) -> float:
    """Reference seconds of a policy's own work on a step of ``calls`` module calls that
    saves ``tensors`` tensors."""
    return calls * POLICY_CALL + tensors * POLICY_TENSOR


def _numel(tensor: Any) -> int:
    return math.prod(tuple(tensor.shape))
