"""Finite-difference checks of analytical gradients (torch.autograd.gradcheck / gradgradcheck)."""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..tensor import Tensor
from .engine import grad as autograd_grad


class GradcheckError(RuntimeError):
    """Raised by gradcheck when analytical and numerical gradients disagree."""


def _tensors(inputs) -> tuple:
    return (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)


def _outputs(fn: Callable, inputs: tuple) -> tuple:
    result = fn(*inputs)
    return (result,) if isinstance(result, Tensor) else tuple(r for r in result
                                                               if isinstance(r, Tensor))


def _numerical_jacobian(fn, inputs, index, eps) -> list:
    """d outputs / d inputs[index], one column per perturbed element (central differences)."""
    target = inputs[index]
    flat = target._data.reshape(-1)  # a view: perturb in place
    columns = []
    for k in range(flat.size):  # one forward pair per input element: what a Jacobian is
        original = flat[k]
        flat[k] = original + eps
        plus = [o._data.astype(np.float64).ravel().copy() for o in _outputs(fn, inputs)]
        flat[k] = original - eps
        minus = [o._data.astype(np.float64).ravel().copy() for o in _outputs(fn, inputs)]
        flat[k] = original
        columns.append([(p - m) / (2 * eps) for p, m in zip(plus, minus)])
    return columns


def _analytical_jacobian(fn, inputs, index) -> list:
    outputs = _outputs(fn, inputs)
    rows = []
    for out_index, output in enumerate(outputs):
        jac = np.zeros((output._data.size, inputs[index]._data.size))
        if output.requires_grad:
            for k in range(output._data.size):
                seed = np.zeros(output._data.size, dtype=output._data.dtype)
                seed[k] = 1
                (grad,) = autograd_grad(output, inputs[index],
                                        Tensor._make(seed.reshape(output._data.shape)),
                                        retain_graph=True, allow_unused=True)
                if grad is not None:
                    jac[k] = grad._data.astype(np.float64).ravel()
        rows.append(jac)
    return rows


def gradcheck(func: Callable, inputs, *, eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, raise_exception: bool = True, **kwargs) -> bool:
    """Compare gradients from backward with central finite differences, for every input that
    requires grad (use float64 inputs)."""
    inputs = _tensors(inputs)
    for index, tensor in enumerate(inputs):
        if not getattr(tensor, "requires_grad", False):
            continue
        numerical = _numerical_jacobian(func, inputs, index, eps)
        analytical = _analytical_jacobian(func, inputs, index)
        for out_index, jac in enumerate(analytical):
            num = np.stack([col[out_index] for col in numerical], axis=1) if numerical else jac
            if not np.allclose(jac, num, rtol=rtol, atol=atol):
                if raise_exception:
                    raise GradcheckError(
                        f"Jacobian mismatch for output {out_index} with respect to input {index},"
                        f"\nnumerical:{num}\nanalytical:{jac}\n")
                return False
    return True


def gradgradcheck(func: Callable, inputs, grad_outputs=None, *, eps: float = 1e-6,
                  atol: float = 1e-5, rtol: float = 1e-3, raise_exception: bool = True,
                  **kwargs) -> bool:
    """gradcheck of the function that maps inputs to their gradients (second derivatives)."""
    inputs = _tensors(inputs)
    outputs = _outputs(func, inputs)
    if grad_outputs is None:  # torch's make_tensor(low=-1, high=1): uniform_ on its stream
        grad_outputs = tuple(
            Tensor._make(np.empty(o._data.shape, o._data.dtype if o._data.dtype.kind in "fV"
                                  else np.float64)).uniform_(-1, 1).requires_grad_()
            for o in outputs if o.requires_grad)
    differentiable = [t for t in inputs if getattr(t, "requires_grad", False)]

    def first_order(*args):
        values, seeds = args[:len(inputs)], args[len(inputs):]
        outs = _outputs(func, values)
        wanted = [v for v in values if getattr(v, "requires_grad", False)]
        grads = autograd_grad(outs, wanted, seeds, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    del differentiable
    return gradcheck(first_order, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
