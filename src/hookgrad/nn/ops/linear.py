"""addmm, the fused op behind ``F.linear`` for 2-D inputs (torch's AddmmBackward0)."""
from __future__ import annotations

import numpy as np

from ...ops.elementwise import _Op
from ...ops.linalg import _check_mm


class Addmm(_Op):
    """out = beta self + alpha (mat1 @ mat2);  d mat1 = alpha grad mat2^T, d mat2 = alpha mat1^T grad"""

    node_name = "AddmmBackward0"
    saved_names = ("mat1", "mat2")

    @staticmethod
    def forward(ctx, self, mat1, mat2, beta=1, alpha=1):
        if mat1.ndim != 2 or mat2.ndim != 2:
            raise RuntimeError("mat1 must be a matrix, got {}-D tensor".format(mat1.ndim)
                               if mat1.ndim != 2 else
                               "mat2 must be a matrix, got {}-D tensor".format(mat2.ndim))
        _check_mm("addmm", mat1, mat2)
        ctx.beta, ctx.alpha = beta, alpha
        _need_self, need_mat1, need_mat2 = ctx.needs_input_grad[:3]
        ctx.save_for_backward(mat1 if need_mat2 else None, mat2 if need_mat1 else None)
        product = mat1 @ mat2
        if alpha != 1:
            product = product * mat1.dtype.type(alpha)
        if beta == 0:
            return product
        scaled = self if beta == 1 else self * self.dtype.type(beta)
        try:
            return np.add(product, scaled, dtype=product.dtype)
        except ValueError:
            raise RuntimeError(f"The expanded size of the tensor ({product.shape[-1]}) must match "
                               f"the existing size ({self.shape[-1]}) at non-singleton dimension "
                               f"1.  Target sizes: {list(product.shape)}.  Tensor sizes: "
                               f"{list(self.shape)}") from None

    @staticmethod
    def backward(ctx, grad):
        mat1, mat2 = ctx.saved_tensors
        alpha = ctx.alpha
        grad_self = grad_mat1 = grad_mat2 = None
        if ctx.needs_input_grad[0]:
            grad_self = grad if ctx.beta == 1 else grad * ctx.beta
        if mat2 is not None:
            grad_mat1 = grad.mm(mat2.t())
            grad_mat1 = grad_mat1 if alpha == 1 else grad_mat1 * alpha
        if mat1 is not None:
            grad_mat2 = mat1.t().mm(grad)
            grad_mat2 = grad_mat2 if alpha == 1 else grad_mat2 * alpha
        return grad_self, grad_mat1, grad_mat2
