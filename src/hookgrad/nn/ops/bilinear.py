"""bilinear: y[..., o] = sum_ij x1[..., i] A[o, i, j] x2[..., j] + b[o], recorded as torch
records it: the inputs flattened to rows (``ViewBackward0``), one ``TrilinearBackward0`` node
with torch's saved attributes, the rows viewed back to the batch shape, then the bias added.
The node's gradients are einsums of tensors, so double backward works as torch's does."""
from __future__ import annotations

from typing import Optional

import numpy as np

import hookgrad
from ...ops._base import Op
from ...tensor import Tensor

# torch's _trilinear arguments for bilinear, kept on its node: where each operand is expanded
# (i1 (N, in1) -> (N, 1, in1, 1), i2 (O, in1, in2) -> (1, O, in1, in2), i3 (N, in2) ->
# (N, 1, 1, in2)) and the dims summed (in1, in2)
_LAYOUT = {"expand1": (1, 3), "expand2": (0,), "expand3": (1, 2), "sumdim": (2, 3)}


class Trilinear(Op):
    """out[n, o] = sum_ij i1[n, i] i2[o, i, j] i3[n, j];  each operand's gradient is the
    same product with grad in its place"""

    node_name = "TrilinearBackward0"
    saved_names = ("i1", "i2", "i3")
    saved_values = {key: (lambda node, value=value: value) for key, value in _LAYOUT.items()}

    @staticmethod
    def forward(ctx, i1, i2, i3):
        ctx.save_for_backward(i1, i2, i3)
        return np.ascontiguousarray(np.einsum("ni,oij,nj->no", i1, i2, i3, optimize=True))

    @staticmethod
    def backward(ctx, grad):
        i1, i2, i3 = ctx.saved_tensors
        need1, need2, need3 = ctx.needs_input_grad[:3]
        return (hookgrad.einsum("no,oij,nj->ni", grad, i2, i3) if need1 else None,
                hookgrad.einsum("no,ni,nj->oij", grad, i1, i3) if need2 else None,
                hookgrad.einsum("no,oij,ni->nj", grad, i2, i1) if need3 else None)


def _name(tensor: Tensor) -> str:
    return str(tensor.dtype).split(".")[-1].replace("float32", "float").replace(
        "float64", "double").replace("int64", "long").replace("float16", "half")


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor,
             bias: Optional[Tensor] = None) -> Tensor:
    """x1^T A x2 + b over the last dims of input1 (*, in1) and input2 (*, in2), weight
    (out, in1, in2)."""
    tensors = [("input1", input1), ("input2", input2), ("weight", weight)]
    if bias is not None:
        tensors.append(("bias", bias))
    if len({t.dtype for _, t in tensors}) > 1:
        raise RuntimeError("All tensors must have the same dtype, got "
                           + ", ".join(f"{name}: {_name(t)}" for name, t in tensors))
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and "
                           f"{input2.ndim}")
    for dim in range(input1.ndim - 1):
        if input1.shape[dim] != input2.shape[dim]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {dim}: "
                               f"got {input1.shape[dim]} and {input2.shape[dim]}")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got "
                           f"{input1.shape[-1]} but expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got "
                           f"{input2.shape[-1]} but expected {weight.shape[2]}")
    if bias is not None and bias.shape[0] != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[0]} but expected {weight.shape[0]}")
    rows = Trilinear.apply(input1.reshape(-1, input1.shape[-1]), weight,
                           input2.reshape(-1, input2.shape[-1]))
    output = rows.view(*input1.shape[:-1], weight.shape[0])
    return output + bias if bias is not None else output
