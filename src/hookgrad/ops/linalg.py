"""Matrix products. ``matmul`` is composed from mm/mv/dot/bmm and views exactly as torch composes
it, so the graph (and what pack hooks see) matches torch's."""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from .elementwise import _Op


def _check_mm(op: str, a: np.ndarray, b: np.ndarray) -> None:
    if a.shape[-1] != b.shape[-2 if b.ndim > 1 else 0]:
        rows = "x".join(str(s) for s in a.shape)
        cols = "x".join(str(s) for s in b.shape)
        raise RuntimeError(f"{op}: mat1 and mat2 shapes cannot be multiplied ({rows} and {cols})")
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {a.dtype} != "
                           f"{b.dtype}")


class Mm(_Op):
    """d(A B) = dC B^T, A^T dC"""

    node_name = "MmBackward0"
    saved_names = ("mat2", "self")

    @staticmethod
    def forward(ctx, self, mat2):
        if self.ndim != 2 or mat2.ndim != 2:
            raise RuntimeError(f"self must be a matrix" if self.ndim != 2 else
                               "mat2 must be a matrix")
        _check_mm("mm", self, mat2)
        need_self, need_mat2 = ctx.needs_input_grad
        ctx.save_for_backward(mat2 if need_self else None, self if need_mat2 else None)
        return self @ mat2

    @staticmethod
    def backward(ctx, grad):
        mat2, self = ctx.saved_tensors
        return (grad.mm(mat2.t()) if mat2 is not None else None,
                self.t().mm(grad) if self is not None else None)


class Bmm(_Op):
    node_name = "BmmBackward0"
    saved_names = ("mat2", "self")

    @staticmethod
    def forward(ctx, self, mat2):
        if self.ndim != 3 or mat2.ndim != 3:
            raise RuntimeError("batch1 must be a 3D tensor" if self.ndim != 3
                               else "batch2 must be a 3D tensor")
        if self.shape[0] != mat2.shape[0]:
            raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                               f"[{self.shape[0]}, {self.shape[2]}] but got: "
                               f"[{mat2.shape[0]}, {mat2.shape[1]}].")
        _check_mm("bmm", self, mat2)
        need_self, need_mat2 = ctx.needs_input_grad
        ctx.save_for_backward(mat2 if need_self else None, self if need_mat2 else None)
        return np.matmul(self, mat2)

    @staticmethod
    def backward(ctx, grad):
        mat2, self = ctx.saved_tensors
        return (grad.bmm(mat2.transpose(1, 2)) if mat2 is not None else None,
                self.transpose(1, 2).bmm(grad) if self is not None else None)


class Mv(_Op):
    node_name = "MvBackward0"
    saved_names = ("vec", "self")

    @staticmethod
    def forward(ctx, self, vec):
        _check_mm("mv", self, vec)
        need_self, need_vec = ctx.needs_input_grad
        ctx.save_for_backward(vec if need_self else None, self if need_vec else None)
        return self @ vec

    @staticmethod
    def backward(ctx, grad):
        vec, self = ctx.saved_tensors
        return (grad.unsqueeze(1) * vec.unsqueeze(0) if vec is not None else None,
                self.t().mv(grad) if self is not None else None)


class Dot(_Op):
    node_name = "DotBackward0"
    saved_names = ("tensor", "self")

    @staticmethod
    def forward(ctx, self, tensor):
        if self.shape != tensor.shape:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{self.shape[0]}] and "
                               f"src [{tensor.shape[0]}] to have the same number of elements, "
                               f"but got {self.shape[0]} and {tensor.shape[0]} elements "
                               f"respectively")
        need_self, need_tensor = ctx.needs_input_grad
        ctx.save_for_backward(tensor if need_self else None, self if need_tensor else None)
        return np.asarray(np.dot(self, tensor))

    @staticmethod
    def backward(ctx, grad):
        tensor, self = ctx.saved_tensors
        return (grad * tensor if tensor is not None else None,
                grad * self if self is not None else None)


def mm(input: Tensor, mat2: Tensor) -> Tensor:
    return Mm.apply(input, mat2)


def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    return Bmm.apply(input, mat2)


def mv(input: Tensor, vec: Tensor) -> Tensor:
    return Mv.apply(input, vec)


def dot(input: Tensor, other: Tensor) -> Tensor:
    return Dot.apply(input, other)


def matmul(input: Tensor, other: Tensor) -> Tensor:
    """torch.matmul: dot, mv, mm, folded mm or batched bmm, by the operands' dims."""
    dim1, dim2 = input.ndim, other.ndim
    if dim1 == 0 or dim2 == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{dim1}D and {dim2}D")
    if dim1 == 1 and dim2 == 1:
        return dot(input, other)
    if dim1 == 2 and dim2 == 1:
        return mv(input, other)
    if dim1 == 1 and dim2 == 2:
        return mm(input.unsqueeze(0), other).squeeze(0)
    if dim1 == 2 and dim2 == 2:
        return mm(input, other)
    if dim1 >= 3 and dim2 <= 2:
        # fold the batch into the rows of one mm
        batch = input.shape[:-1]
        folded = input.reshape(-1, input.shape[-1])
        if dim2 == 1:
            return mv(folded, other).unsafe_view(batch)
        return mm(folded, other).unsafe_view(batch + (other.shape[-1],))
    return _batched_matmul(input, other)


def _batched_matmul(input: Tensor, other: Tensor) -> Tensor:
    dim1, dim2 = input.ndim, other.ndim
    a = input.unsqueeze(0) if dim1 == 1 else input
    b = other.unsqueeze(-1) if dim2 == 1 else other
    if dim1 <= 2 and dim2 >= 3 and dim1 == 2:
        # torch transposes to fold: (b^T @ a^T)^T
        result = matmul(other.transpose(-1, -2), input.transpose(-1, -2))
        return result.transpose(-1, -2).contiguous() if dim1 == 2 else result
    n, m1 = a.shape[-2], a.shape[-1]
    m2, p = b.shape[-2], b.shape[-1]
    if m1 != m2:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{int(np.prod(a.shape[:-2] or (1,)))}, {m1}] but got: "
                           f"[{int(np.prod(b.shape[:-2] or (1,)))}, {m2}].")
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    count = int(np.prod(batch, dtype=np.int64))
    a3 = a.expand(batch + (n, m1)).reshape(count, n, m1)
    b3 = b.expand(batch + (m2, p)).reshape(count, m2, p)
    out_shape = batch + ((n,) if dim1 > 1 else ()) + ((p,) if dim2 > 1 else ())
    return bmm(a3, b3).unsafe_view(out_shape)
