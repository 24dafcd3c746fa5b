"""Padding: ``nn.functional.pad`` in its four modes.

constant pads (or crops, for negative widths) in one op; reflect and replicate read every output
position from one input position along each padded dim; circular is composed of in-place copies
into views, as torch composes it.
"""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from . import _layout
from ._args import _shape_args
from .clone import copy_
from .views import narrow
from ._base import Op


class ConstantPadNd(Op):
    """gradient: grad with the negated padding (crops what was added, pads what was cut)"""

    node_name = "ConstantPadNdBackward0"

    @staticmethod
    def forward(ctx, self, pad, value):
        ctx.pad = pad
        ctx._saved_pad = tuple(int(p) % 2 ** 64 for p in pad)  # a negative one read unsigned
        ndim = self.ndim
        crop = [slice(None)] * ndim
        widths = [(0, 0)] * ndim
        for i in range(len(pad) // 2):
            dim = ndim - 1 - i
            before, after = pad[2 * i], pad[2 * i + 1]
            start, stop = 0, self.shape[dim]
            if before < 0:  # torch narrows for negative pads first, with narrow's message
                start = -before
                _check_length(stop - start)
            if after < 0:
                stop += after
                _check_length(stop - start)
            crop[dim] = slice(start, stop)
            widths[dim] = (max(before, 0), max(after, 0))
        cropped = self[tuple(crop)]
        padded = np.pad(cropped, widths, mode="constant", constant_values=value)
        return _layout.suggested(padded, self)  # self's memory format, as torch's

    @staticmethod
    def backward(ctx, grad):
        return ConstantPadNd.apply(grad, tuple(-p for p in ctx.pad), 0), None, None


def _check_length(length: int) -> None:
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")


def pad(input: Tensor, pad, mode: str = "constant", value=None) -> Tensor:
    """torch.nn.functional.pad; ``pad`` lists (before, after) pairs from the last dim back."""
    pad = _shape_args((pad,), "pad")
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    ndim = input._data.ndim
    if len(pad) // 2 > ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{ndim}")
    if mode == "constant":
        fill = np.asarray(0 if value is None else value).astype(input._data.dtype)
        return ConstantPadNd.apply(input, pad, fill)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    count = len(pad) // 2
    if count not in (1, 2, 3) or ndim not in (count + 1, count + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if mode == "circular":
        return _pad_circular(input, pad)
    return _pad_by_index(input, pad, mode)


# reflect / replicate: every output position reads one input position along each padded dim
class _IndexPad(Op):
    """gradient: grad added back onto the positions each output element was read from"""

    saved_names = ("self",)  # torch keeps the input (for its shape)
    saved_values = {"padding": "padding"}

    @staticmethod
    def forward(ctx, self, pad, mode):
        ctx.pad, ctx.mode, ctx.self_shape = pad, mode, self.shape
        ctx.padding = tuple(pad)
        ctx.save_for_backward(self)
        for dim, index in _reads(self.shape, pad, mode):
            self = np.take(self, index, axis=dim)
        return self

    @staticmethod
    def backward(ctx, grad):
        ctx.saved_tensors  # unpacked as torch's node does: hooks run, versions are checked
        return _IndexPadBackward.apply(grad, ctx.pad, ctx.mode, ctx.self_shape), None, None


class _IndexPadBackward(Op):
    @staticmethod
    def forward(ctx, grad, pad, mode, shape):
        ctx.pad, ctx.mode = pad, mode
        for dim, index in reversed(_reads(shape, pad, mode)):
            out = np.zeros(grad.shape[:dim] + (shape[dim],) + grad.shape[dim + 1:], grad.dtype)
            np.add.at(out, (slice(None),) * dim + (index,), grad)
            grad = out
        return grad

    @staticmethod
    def backward(ctx, grad):
        return _IndexPad.apply(grad, ctx.pad, ctx.mode), None, None, None


def _reads(shape: tuple, pad: tuple, mode: str) -> list:
    """(dim, input positions) that each padded dim's output reads, last dim first; made from
    the padding again in backward rather than kept on ctx."""
    reads = []
    for i in range(len(pad) // 2):
        dim = len(shape) - 1 - i
        before, after, size = pad[2 * i], pad[2 * i + 1], shape[dim]
        positions = np.arange(-before, size + after)
        if mode == "reflect":
            positions = np.abs(positions)
            positions = np.where(positions >= size, 2 * (size - 1) - positions, positions)
        else:
            positions = np.clip(positions, 0, size - 1)
        reads.append((dim, positions))
    return reads


_PAD_OPS: dict = {}


def _pad_op(kind: str, count: int):
    """One class per torch node name (ReflectionPad2DBackward0, ...), made on first use."""
    key = (kind, count)
    if key not in _PAD_OPS:
        _PAD_OPS[key] = type(f"{kind}Pad{count}D", (_IndexPad,),
                             {"node_name": f"{kind}Pad{count}DBackward0"})
    return _PAD_OPS[key]


def _pad_by_index(input: Tensor, pad: tuple, mode: str) -> Tensor:
    shape = input._data.shape
    count = len(pad) // 2
    batch = len(shape) - count
    if any(n == 0 for n in shape[1 if batch == 2 else 0:]):
        raise RuntimeError(f"Expected {count + 1}D or {count + 2}D (batch mode) tensor with "
                           f"possibly 0 batch size and other non-zero dimensions for input, but "
                           f"got: {list(shape)}")
    for i in range(count):
        dim = len(shape) - 1 - i
        before, after = pad[2 * i], pad[2 * i + 1]
        size = shape[dim]
        if mode == "reflect" and (before >= size or after >= size):
            raise RuntimeError(f"Argument #{4 + 2 * i}: Padding size should be less than the "
                               f"corresponding input dimension, but got: padding ({before}, "
                               f"{after}) at dimension {dim} of input {list(shape)}")
        if count == 1 and size + before + after < 1:
            raise RuntimeError(f"input (W: {size}) is too small. Calculated output W: "
                               f"{size + before + after}")
        if size + before + after < 0:
            bad = list(shape[:dim]) + [size + before + after] + list(shape[dim + 1:])
            raise RuntimeError(f"Trying to create tensor with negative dimension "
                               f"{size + before + after}: {bad}")
    kind = "Reflection" if mode == "reflect" else "Replication"
    return _pad_op(kind, count).apply(input, tuple(pad), mode)


def _pad_circular(input: Tensor, pad: tuple) -> Tensor:
    """torch's recipe: copy the kept part into a new tensor, then copy its ends around the
    edges dim by dim (in-place copies into views, so the history is CopySlices, as torch's)."""
    shape = input._data.shape
    count = len(pad) // 2
    out_shape = list(shape)
    for i in range(count):
        dim = len(shape) - 1 - i
        before, after = pad[2 * i], pad[2 * i + 1]
        if before > shape[dim] or after > shape[dim]:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        out_shape[dim] = shape[dim] + before + after
        if out_shape[dim] < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
    out = Tensor._make(np.zeros(out_shape, input._data.dtype))
    target, source = out, input
    for i in range(count):
        dim = len(shape) - 1 - i
        before, after = pad[2 * i], pad[2 * i + 1]
        target = narrow(target, dim, max(before, 0), out_shape[dim] - max(before, 0)
                        - max(after, 0))
        source = narrow(source, dim, max(-before, 0), shape[dim] - max(-before, 0)
                        - max(-after, 0))
    copy_(target, source)
    for i in range(count):
        dim = len(shape) - 1 - i
        before, after = pad[2 * i], pad[2 * i + 1]
        if before > 0:
            copy_(narrow(out, dim, 0, before),
                  narrow(out, dim, out_shape[dim] - before - max(after, 0), before))
        if after > 0:
            copy_(narrow(out, dim, out_shape[dim] - after, after),
                  narrow(out, dim, max(before, 0), after))
    return out
