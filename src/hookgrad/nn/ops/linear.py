"""addmm, the fused op behind ``F.linear`` for 2-D inputs (torch's AddmmBackward0), and linear."""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

from ... import _blas, _dtype
from ...ops.linalg import (_transposed, matmul, mm_grads, mm_grads_on_arrays, operand_geometry,
                           plain_product_grads, shown_geometry)
from ...ops.reduce import sum_array_to
from ...tensor import Tensor
from ...ops._base import Op

_BFLOAT16 = _dtype.BFLOAT16_NUMPY  # ml_dtypes' bfloat16 matmul answers in float32
_C_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "int64": "long int"}


def _check(self: np.ndarray, mat1: np.ndarray, mat2: np.ndarray) -> None:
    for name, mat in (("mat1", mat1), ("mat2", mat2)):
        if mat.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {mat.ndim}-D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x"
                           f"{mat1.shape[1]} and {mat2.shape[0]}x{mat2.shape[1]})")
    if mat1.dtype != mat2.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_C_NAMES.get(mat1.dtype.name, mat1.dtype.name)} != "
                           f"{_C_NAMES.get(mat2.dtype.name, mat2.dtype.name)}")
    if self.dtype != mat1.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{self.dtype.name.capitalize()} and {mat2.dtype.name.capitalize()}")
    out_shape = (mat1.shape[0], mat2.shape[1])
    if self.shape == out_shape[1:] or self.shape == out_shape:  # a bias row, a full matrix
        return
    try:
        np.broadcast_shapes(self.shape, out_shape)
    except ValueError:
        raise RuntimeError(f"The expanded size of the tensor ({mat2.shape[1]}) must match the "
                           f"existing size ({self.shape[-1]}) at non-singleton dimension 1.  "
                           f"Target sizes: [{mat1.shape[0]}, {mat2.shape[1]}].  Tensor sizes: "
                           f"{list(self.shape)}") from None


def _scaled(grad: Tensor, factor) -> Tensor:
    """``grad * factor``, with no multiply recorded when the factor is 1 (as torch)."""
    return grad if factor == 1 else grad * factor


class Addmm(Op):
    """out = beta self + alpha mat1 mat2;  d mat1 = alpha grad mat2^T, d mat2 = alpha mat1^T grad"""

    node_name = "AddmmBackward0"
    saved_names = ("mat1", "mat2")
    saved_values = {"alpha": "alpha", "beta": "beta", **shown_geometry("mat1", "mat2")}

    @staticmethod
    def forward(ctx, self, mat1, mat2, beta=1, alpha=1):
        _check(self, mat1, mat2)
        ctx.beta, ctx.alpha = beta, alpha
        ctx.layouts = (_transposed(mat1), _transposed(mat2))
        ctx.geometry = operand_geometry(mat1, mat2)
        _need_self, need_mat1, need_mat2 = ctx.needs_input_grad[:3]
        ctx.save_for_backward(mat1 if need_mat2 else None, mat2 if need_mat1 else None)
        out_dtype = mat1.dtype
        if out_dtype == _BFLOAT16:  # computed in float32 and rounded once, as torch's kernel
            self, mat1, mat2 = (a.astype(np.float32) for a in (self, mat1, mat2))
        product = _blas.matmul(mat1, mat2)
        if alpha != 1:
            product = product * mat1.dtype.type(alpha)
        if beta != 0:
            product += self if beta == 1 else self * self.dtype.type(beta)
        return product.astype(out_dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        mat1, mat2 = ctx.saved_tensors
        if plain_product_grads(grad, mat1, mat2):
            return _addmm_grads_on_arrays(ctx, grad._data, mat1, mat2)
        grad_self = _scaled(grad, ctx.beta) if ctx.needs_input_grad[0] else None
        grad_mat1, grad_mat2 = mm_grads(grad, mat1, mat2, *ctx.layouts)
        if grad_mat1 is not None:
            grad_mat1 = _scaled(grad_mat1, ctx.alpha)
        if grad_mat2 is not None:
            grad_mat2 = _scaled(grad_mat2, ctx.alpha)
        return grad_self, grad_mat1, grad_mat2


def _addmm_grads_on_arrays(ctx, grad: np.ndarray, mat1, mat2) -> tuple:
    """Addmm's first-order gradients on arrays (``plain_product_grads``): the products as
    ``mm_grads_on_arrays``, and ``self``'s gradient already summed to its shape (a bias row),
    which is what the engine would make of ``grad`` (``sum_to_size``) one Tensor op later."""
    beta, alpha = ctx.beta, ctx.alpha
    grad_self = None
    if ctx.needs_input_grad[0]:
        self_shape = ctx._input_meta[0][0]
        grad_self = Tensor._make(sum_array_to(grad if beta == 1 else grad * grad.dtype.type(beta),
                                              self_shape))
    grad_mat1, grad_mat2 = mm_grads_on_arrays(grad, mat1, mat2, *ctx.layouts)
    if alpha != 1:
        factor = grad.dtype.type(alpha)
        grad_mat1 = None if grad_mat1 is None else Tensor._make(grad_mat1._data * factor)
        grad_mat2 = None if grad_mat2 is None else Tensor._make(grad_mat2._data * factor)
    return grad_self, grad_mat1, grad_mat2


class Baddbmm(Op):
    """out = beta self + alpha (batch1 @ batch2), batched; self broadcasts"""

    node_name = "BaddbmmBackward0"
    saved_names = ("batch1", "batch2")

    @staticmethod
    def forward(ctx, self, batch1, batch2, beta=1, alpha=1):
        if batch1.ndim != 3 or batch2.ndim != 3:
            raise RuntimeError("batch1 must be a 3D tensor" if batch1.ndim != 3
                               else "batch2 must be a 3D tensor")
        if batch1.shape[0] != batch2.shape[0] or batch1.shape[2] != batch2.shape[1]:
            raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                               f"[{batch1.shape[0]}, {batch1.shape[2]}] but got: "
                               f"[{batch2.shape[0]}, {batch2.shape[1]}].")
        ctx.beta, ctx.alpha = beta, alpha
        _need_self, need_batch1, need_batch2 = ctx.needs_input_grad[:3]
        ctx.save_for_backward(batch1 if need_batch2 else None, batch2 if need_batch1 else None)
        out_dtype = batch1.dtype
        if out_dtype == _BFLOAT16:  # computed in float32 and rounded once, as torch's kernel
            self, batch1, batch2 = (a.astype(np.float32) for a in (self, batch1, batch2))
        product = np.matmul(batch1, batch2)
        if alpha != 1:
            product = product * batch1.dtype.type(alpha)
        if beta != 0:
            product = product + (self if beta == 1 else self * self.dtype.type(beta))
        return product.astype(out_dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        batch1, batch2 = ctx.saved_tensors
        grad_self = _scaled(grad, ctx.beta) if ctx.needs_input_grad[0] else None
        grad_batch1 = (_scaled(grad.bmm(batch2.transpose(1, 2)), ctx.alpha)
                       if batch2 is not None else None)
        grad_batch2 = (_scaled(batch1.transpose(1, 2).bmm(grad), ctx.alpha)
                       if batch1 is not None else None)
        return grad_self, grad_batch1, grad_batch2


# -- linear ---------------------------------------------------------------------------------------
def linear(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None) -> Tensor:
    """y = x W^T + b, composed as torch composes it: addmm for 2-D input, a flattened addmm for
    other contiguous inputs with a bias, else matmul (+ bias)."""
    if not (isinstance(input, Tensor) and isinstance(weight, Tensor)
            and (bias is None or isinstance(bias, Tensor))):
        for position, (name, value) in enumerate((("input", input), ("weight", weight),
                                                  ("bias", bias)), 1):
            if not isinstance(value, Tensor) and (value is not None or name != "bias"):
                raise TypeError(f"linear(): argument '{name}' (position {position}) must be "
                                f"Tensor, not {type(value).__name__}")
    shape = input._data.shape  # (the arrays' own shapes: no torch.Size per read)
    if bias is not None and len(shape) == 2:
        return Addmm.apply(bias, input, weight.t())
    if bias is not None and shape and bias._data.ndim == 1 and input.is_contiguous():
        flat = input.reshape(math.prod(shape[:-1]), shape[-1])
        result = Addmm.apply(bias, flat, weight.t())
        return result.view(shape[:-1] + (result._data.shape[1],))
    output = matmul(input, weight.t())
    # the bias lands in the product's own fresh buffer, as torch's add_ there does (a new
    # array of the output's size costs several passes more than the add)
    return output.add_(bias) if bias is not None else output
