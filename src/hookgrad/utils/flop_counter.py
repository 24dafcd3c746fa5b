"""``FlopCounterMode``: torch's FLOP counter, built on ``TorchFunctionMode`` and the global module
forward hooks only (a worked example of both).

Counts follow torch's CPU counter: a multiply-add is 2 FLOPs; matrix products (``mm``, ``addmm``,
``bmm``, ``baddbmm``, ``matmul`` of matrices, ``linear``) and convolutions are counted, under the
ATen name torch reports (``aten.addmm`` for a Linear with bias, ``aten.convolution`` ...).
Their backward, when it runs inside the mode, is counted when the node runs (``aten.mm``,
``aten.bmm``, ``aten.convolution_backward``), once per input that needs a gradient (a grouped
convolution's weight gradient ``groups`` times, as torch counts it). Products of
vectors (``dot``, ``mv``) and CPU attention count nothing, as in torch.

Example::

    with FlopCounterMode(display=False) as counter:
        model(x).sum().backward()
    counter.get_total_flops()          # same number as torch's counter on the same model
    counter.get_flop_counts()          # {"Global": {...}, "Sequential.0": {"aten.convolution": n}}
"""
from __future__ import annotations

import math
from collections import defaultdict
from typing import Any, Callable

from ..nn.modules._module_hooks import (register_module_forward_hook,
                                        register_module_forward_pre_hook)
from ..overrides import TorchFunctionMode
from ..tensor import Tensor

__all__ = ["FlopCounterMode"]


def _needs(*tensors) -> tuple:
    return tuple(isinstance(t, Tensor) and t.requires_grad for t in tensors)


def _matmul_shapes(a: Tensor, b: Tensor):
    """(key, flops) of ``a @ b`` as torch lowers it: vectors are not counted; a batched left side
    against a matrix folds into one ``mm``, two batched sides become a ``bmm``."""
    if a.dim() < 2 or b.dim() < 2:
        return None, 0
    flops = 2 * math.prod(a.shape[:-2]) * a.shape[-2] * a.shape[-1] * b.shape[-1]
    if b.dim() == 2:
        return "aten.mm", flops
    batch = math.prod(max(x, y) for x, y in zip(
        (1,) * (b.dim() - a.dim()) + tuple(a.shape[:-2]),
        (1,) * (a.dim() - b.dim()) + tuple(b.shape[:-2])))
    return ("aten.mm" if a.dim() == 2 and batch == 1 else "aten.bmm",
            2 * batch * a.shape[-2] * a.shape[-1] * b.shape[-1])


def _arguments(args: tuple, kwargs: dict, names: tuple) -> list:
    values = list(args) + [None] * (len(names) - len(args))
    for index, name in enumerate(names):
        if name in kwargs:
            values[index] = kwargs[name]
    return values


def _count(name: str, args: tuple, kwargs: dict):
    """(forward key, flops, backward key, inputs whose gradient costs a product) or None."""
    if name in ("mm", "matmul", "bmm", "__rmatmul__"):
        a, b = _arguments(args, kwargs, ("input", "mat2" if name != "matmul" else "other"))[:2]
        if name == "__rmatmul__":
            a, b = b, a
        if not isinstance(a, Tensor) or not isinstance(b, Tensor):
            return None
        key, flops = _matmul_shapes(a, b)
        return key and (key, flops, key, _needs(a, b))
    if name in ("addmm", "baddbmm"):
        _, a, b = _arguments(args, kwargs, ("input", "mat1" if name == "addmm" else "batch1",
                                            "mat2" if name == "addmm" else "batch2"))[:3]
        key, flops = _matmul_shapes(a, b)
        return ("aten." + name, flops, key, _needs(a, b))
    if name == "linear":
        x, weight, bias = _arguments(args, kwargs, ("input", "weight", "bias"))[:3]
        if x.dim() < 2:
            return None
        flops = 2 * math.prod(x.shape[:-1]) * weight.shape[0] * weight.shape[1]
        return ("aten.addmm" if bias is not None else "aten.mm", flops, "aten.mm",
                _needs(x, weight))
    if name.startswith(("conv1d", "conv2d", "conv3d", "conv_transpose")):
        x, weight = _arguments(args, kwargs, ("input", "weight"))[:2]
        return ("aten.convolution", None, "aten.convolution_backward", _needs(x, weight))
    return None


def _conv_flops(x: Tensor, weight: Tensor, out: Tensor, transposed: bool) -> int:
    spatial = x.shape[2:] if transposed else out.shape[2:]
    batch = x.shape[0] if x.dim() == weight.dim() else 1
    return 2 * batch * math.prod(weight.shape) * math.prod(spatial)


class FlopCounterMode(TorchFunctionMode):
    """Count the FLOPs of matrix products and convolutions run inside the ``with`` block, per
    module (``"Global"`` holds them all). ``display=True`` prints a table on exit, down to
    ``depth`` levels of modules."""

    def __init__(self, mods: Any = None, depth: int = 2, display: bool = True,
                 custom_mapping: dict | None = None) -> None:
        super().__init__()
        self.depth, self.display = depth, display
        self.flop_counts: dict = defaultdict(lambda: defaultdict(int))
        self._names: dict = {}
        self._parents: list = ["Global"]
        self._handles: list = []
        self._active = False

    # -- results -----------------------------------------------------------------------------
    def get_total_flops(self) -> int:
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self) -> dict:
        """``{module name or "Global": {op: flops}}``."""
        return {module: dict(ops) for module, ops in self.flop_counts.items()}

    def get_table(self, depth: int | None = None) -> str:
        depth = self.depth if depth is None else depth
        rows = [("Module", "FLOP", "% Total")]
        total = max(self.get_total_flops(), 1)
        for module, ops in self.flop_counts.items():
            level = 0 if module == "Global" else module.count(".") + 1
            if level > depth:
                continue
            indent = " " * level
            rows.append((indent + module, f"{sum(ops.values()):,}",
                         f"{100 * sum(ops.values()) / total:.2f}%"))
            for op, flops in ops.items():
                rows.append((indent + " - " + op, f"{flops:,}", f"{100 * flops / total:.2f}%"))
        widths = [max(len(row[i]) for row in rows) for i in range(3)]
        return "\n".join(f"{a:<{widths[0]}}  {b:>{widths[1]}}  {c:>{widths[2]}}"
                         for a, b, c in rows)

    # -- module attribution: global forward hooks keep the stack of enclosing modules ----------
    def _name_of(self, module) -> str:
        if module not in self._names:
            root = type(module).__name__
            for child_name, child in module.named_modules(prefix=root):
                self._names.setdefault(child, child_name)
        return self._names[module]

    def _enter_module(self, module, args) -> None:
        self._parents.append(self._name_of(module))

    def _exit_module(self, module, args, output) -> None:
        if len(self._parents) > 1:
            self._parents.pop()

    def _add(self, parents: tuple, op: str, flops: int) -> None:
        for parent in dict.fromkeys(parents):
            self.flop_counts[parent][op] += flops

    def __enter__(self) -> "FlopCounterMode":
        self.flop_counts.clear()
        self._parents = ["Global"]
        self._handles = [register_module_forward_pre_hook(self._enter_module),
                         register_module_forward_hook(self._exit_module, always_call=True)]
        self._active = True
        return super().__enter__()

    def __exit__(self, *exc) -> None:
        super().__exit__(*exc)
        self._active = False
        for handle in self._handles:
            handle.remove()
        if self.display:
            print(self.get_table(self.depth))

    # -- the counting itself ------------------------------------------------------------------
    def __torch_function__(self, func: Callable, types: tuple, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        result = func(*args, **kwargs)
        counted = _count(func.__name__, args, kwargs)
        if counted is None or not isinstance(result, Tensor):
            return result
        key, flops, backward_key, needs = counted
        products = sum(needs)
        if flops is None:
            x, weight = _arguments(args, kwargs, ("input", "weight"))[:2]
            transposed = "transpose" in func.__name__
            flops = _conv_flops(x, weight, result, transposed)
            # torch counts a grouped weight gradient as one convolution over all channels
            groups = (result if transposed else x).shape[1] // weight.shape[1]
            products = needs[0] + groups * needs[1]
        parents = tuple(self._parents)
        self._add(parents, key, flops)
        if result.grad_fn is not None and products:
            def count_backward(grad_inputs, grad_outputs):
                if self._active:
                    self._add(parents, backward_key, flops * products)

            result.grad_fn.register_hook(count_backward)
        return result
