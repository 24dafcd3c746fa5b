"""bilinear: y[..., o] = sum_ij x1[..., i] A[o, i, j] x2[..., j] + b[o], one einsum (so its
gradients and double backward are einsum's)."""
from __future__ import annotations

from typing import Optional

import hookgrad
from ...tensor import Tensor


def _name(tensor: Tensor) -> str:
    return str(tensor.dtype).split(".")[-1].replace("float32", "float").replace(
        "float64", "double").replace("int64", "long").replace("float16", "half")


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor,
             bias: Optional[Tensor] = None) -> Tensor:
    """x1^T A x2 + b over the last dims of input1 (*, in1) and input2 (*, in2), weight
    (out, in1, in2). Differs from torch: the node is einsum's, not TrilinearBackward0."""
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
    output = hookgrad.einsum("...i,oij,...j->...o", input1, weight, input2)
    return output + bias if bias is not None else output
