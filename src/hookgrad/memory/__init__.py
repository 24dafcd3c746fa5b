"""hookgrad.memory: see and cut the memory that saving tensors for backward costs.

Built only on public hook APIs (saved-tensor hooks, ``current_saved_tensor()``, global module
forward hooks, ``utils.checkpoint``), so every part is a worked example:

* ``ledger()`` records each saved tensor: op, module, shape, bytes, what it really holds;
* savers ``cast``, ``quantize``, ``offload`` store saved activations in fewer resident bytes;
* ``policy({...})`` picks a saver (or ``recompute()``) per module by name or type;
* ``plan(model, inputs, budget_bytes)`` profiles a step and chooses a policy under a budget.

Each tool also serves PyTorch models, through torch's own public hooks: the framework is the
model's (``plan(model, ...)``, ``policy(rules, model=model)``, ``ledger(model=model)``), or
``framework="torch"`` for a context used without one. torch is imported only then. One
implementation per tool; what differs per framework is asked of ``_backend.py``.
"""
from ._packed import Held, Packed, unpack_any
from ._timeline import timeline_png
from .ledger import Ledger, Record, format_bytes, ledger
from .planner import Plan, plan
from .policy import Policy, policy, recompute
from .savers import Saver, cast, offload, quantize

__all__ = [
    "Held", "Ledger", "Packed", "Plan", "Policy", "Record", "Saver", "cast", "format_bytes",
    "ledger", "offload", "plan", "policy", "quantize", "recompute", "timeline_png",
    "unpack_any",
]
