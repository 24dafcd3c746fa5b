"""torch.autograd.functional: vjp, jvp, jacobian, hessian, all built on ``autograd.grad``."""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..tensor import Tensor
from . import grad_mode
from .engine import grad as autograd_grad


def _as_tuple(value):
    if isinstance(value, Tensor):
        return (value,), True
    return tuple(value), False


def _prepare(inputs, create_graph: bool) -> tuple:
    # fresh leaves so the user's tensors' .grad and history stay untouched
    return tuple(i.detach().requires_grad_(True) if not create_graph or not i.requires_grad
                 else i.view_as(i) for i in inputs)


def _fill(grads, like) -> tuple:
    return tuple(Tensor._make(np.zeros_like(x._data)) if g is None else g
                 for g, x in zip(grads, like))


def _rows(rows: list) -> Tensor:
    """Stack gradient rows with Tensor methods only (autograd imports no op): each row is
    copied into its slot in place, which stays differentiable through the copy."""
    stacked = rows[0].new_zeros((len(rows),) + tuple(rows[0].shape))
    for index, row in enumerate(rows):
        stacked[index] = row
    return stacked


def _detach(values, create_graph: bool):
    return tuple(v if create_graph else v.detach() for v in values)


def vjp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), v^T J): the vector-Jacobian product."""
    inputs, single_in = _as_tuple(inputs)
    with grad_mode.enable_grad():
        inputs = _prepare(inputs, create_graph)
        outputs, single_out = _as_tuple(func(*inputs))
        if v is not None:
            v, _ = _as_tuple(v)
        grads = autograd_grad(outputs, inputs, v, create_graph=create_graph, allow_unused=True)
    grads = _detach(_fill(grads, inputs), create_graph)
    outputs = _detach(outputs, create_graph)
    return (outputs[0] if single_out else outputs), (grads[0] if single_in else grads)


def jvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), J v), by the double-vjp trick: differentiate u -> u^T J w.r.t. u."""
    inputs, single_in = _as_tuple(inputs)
    with grad_mode.enable_grad():
        inputs = _prepare(inputs, create_graph)
        outputs, single_out = _as_tuple(func(*inputs))
        if v is None:
            v = tuple(Tensor._make(np.ones_like(i._data)) for i in inputs)
        else:
            v, _ = _as_tuple(v)
        dummies = tuple(Tensor._make(np.zeros_like(o._data), requires_grad=True) for o in outputs)
        grads = autograd_grad(outputs, inputs, dummies, create_graph=True, allow_unused=True)
        pairs = [(g, vi) for g, vi in zip(grads, v) if g is not None]
        result = autograd_grad([g for g, _ in pairs], dummies, [vi for _, vi in pairs],
                               create_graph=create_graph, allow_unused=True)
    result = _detach(_fill(result, outputs), create_graph)
    outputs = _detach(outputs, create_graph)
    return (outputs[0] if single_out else outputs), (result[0] if single_out else result)


def jacobian(func: Callable, inputs, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode"):
    """The Jacobian, shaped ``output.shape + input.shape`` (nested tuples for several)."""
    inputs, single_in = _as_tuple(inputs)
    with grad_mode.enable_grad():
        inputs = _prepare(inputs, create_graph)
        outputs, single_out = _as_tuple(func(*inputs))
        table = []
        for output in outputs:
            rows = [[] for _ in inputs]
            for k in range(output._data.size):  # one backward per output element
                seed = np.zeros(output._data.size, dtype=output._data.dtype)
                seed[k] = 1
                grads = autograd_grad(output, inputs, Tensor._make(seed.reshape(
                    output._data.shape)), retain_graph=True, create_graph=create_graph,
                    allow_unused=True)
                for row, g, x in zip(rows, _fill(grads, inputs), inputs):
                    row.append(g)
            entry = []
            for row, x in zip(rows, inputs):
                if row:
                    jac = _rows(row).reshape(tuple(output.shape) + tuple(x.shape))
                else:
                    jac = Tensor._make(np.zeros(tuple(output.shape) + tuple(x.shape),
                                                x._data.dtype))
                entry.append(jac if create_graph else jac.detach())
            table.append(tuple(entry))
    if single_out and single_in:
        return table[0][0]
    if single_out:
        return table[0]
    if single_in:
        return tuple(row[0] for row in table)
    return tuple(table)


def hessian(func: Callable, inputs, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of a scalar function: the Jacobian of its gradient."""
    inputs_tuple, single_in = _as_tuple(inputs)

    def gradient(*xs):
        out = func(*xs)
        grads = autograd_grad(out, xs, create_graph=True, allow_unused=True)
        grads = _fill(grads, xs)
        return grads[0] if single_in else grads

    return jacobian(gradient, inputs, create_graph=create_graph)


def _scalar_function_output(func: Callable, inputs: tuple, name: str):
    """Run ``func`` and check it returned one single-element tensor, as hvp/vhp need."""
    outputs = func(*inputs)
    if not isinstance(outputs, Tensor):
        raise RuntimeError(f"The function given to {name} should return a single Tensor")
    if outputs.numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {name} should contain "
                           "a single element")
    return outputs


def _check_v(v, inputs: tuple, single_in: bool, name: str) -> tuple:
    """``v`` as a tuple shaped like ``inputs`` (it may be left out for one 1-element input)."""
    if v is None:
        if len(inputs) != 1 or inputs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided "
                               "function is a single Tensor with a single element.")
        return (Tensor._make(np.ones_like(inputs[0]._data)),)
    v, _ = _as_tuple(v)
    if len(v) != len(inputs):
        if not single_in:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(inputs)} but got "
                               f"{len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for index, (vi, x) in enumerate(zip(v, inputs)):
        if tuple(vi.shape) != tuple(x.shape):
            prefix = "" if single_in else f"Entry {index} in "
            raise RuntimeError(f"{prefix}v has invalid size: should be {x.size()} but got "
                               f"{vi.size()}.")
    return tuple(vi.detach() for vi in v)


def vhp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), v^T H) for a scalar ``func``: the gradient of ``grad(func) . v``."""
    inputs, single_in = _as_tuple(inputs)
    with grad_mode.enable_grad():
        inputs = _prepare(inputs, create_graph)
        v = _check_v(v, inputs, single_in, "vhp")
        output = _scalar_function_output(func, inputs, "vhp")
        jac = autograd_grad(output, inputs, create_graph=True, allow_unused=True)
        used = [(g, x, vi) for g, x, vi in zip(jac, inputs, v) if g is not None]
        grads = autograd_grad([g for g, _, _ in used], inputs, [vi for _, _, vi in used],
                              create_graph=create_graph, allow_unused=True) if used else ()
    result = _detach(_fill(grads or (None,) * len(inputs), inputs), create_graph)
    output = output if create_graph else output.detach()
    return output, (result[0] if single_in else result)


def hvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), H v) for a scalar ``func``, by differentiating ``u -> u^T H`` (the
    double-backward trick), so only reverse mode is needed."""
    inputs, single_in = _as_tuple(inputs)
    with grad_mode.enable_grad():
        inputs = _prepare(inputs, create_graph)
        v = _check_v(v, inputs, single_in, "hvp")
        output = _scalar_function_output(func, inputs, "hvp")
        jac = _fill(autograd_grad(output, inputs, create_graph=True, allow_unused=True), inputs)
        dummies = tuple(Tensor._make(np.zeros_like(x._data), requires_grad=True) for x in inputs)
        live = [(g, d) for g, d in zip(jac, dummies) if g.requires_grad]
        double_back = autograd_grad([g for g, _ in live], inputs, [d for _, d in live],
                                    create_graph=True, allow_unused=True) if live else ()
        pairs = [(b, vi) for b, vi in zip(double_back, v) if b is not None]
        grads = autograd_grad([b for b, _ in pairs], dummies, [vi for _, vi in pairs],
                              create_graph=create_graph, allow_unused=True) if pairs else ()
    result = _detach(_fill(grads or (None,) * len(inputs), inputs), create_graph)
    output = output if create_graph else output.detach()
    return output, (result[0] if single_in else result)
