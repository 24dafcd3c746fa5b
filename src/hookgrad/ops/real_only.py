"""torch's complex-number functions on hookgrad's tensors, which are all real.

Code written for both kinds calls ``conj``, ``resolve_conj``, ``x.real`` or ``angle`` on real
tensors too; torch answers them without work (the tensor itself, a view, or a constant), and so
does hookgrad. ``imag`` has nothing to return for a real tensor and raises torch's error.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from .. import _dtype
from ..tensor import Tensor
from . import _layout
from ._base import Op
from .views import transpose


def conj(input: Tensor) -> Tensor:
    """The conjugate: a real tensor is its own, so ``input`` itself."""
    return input


def conj_physical(input: Tensor) -> Tensor:
    """The conjugate computed at once (``input`` itself for a real tensor)."""
    return input


def conj_physical_(input: Tensor) -> Tensor:
    """In place conjugate: nothing to change in a real tensor."""
    return input


def resolve_conj(input: Tensor) -> Tensor:
    """``input`` with any pending conjugation applied: a real tensor has none."""
    return input


def resolve_neg(input: Tensor) -> Tensor:
    """``input`` with any pending negation applied: hookgrad makes none."""
    return input


def is_conj(input: Tensor) -> bool:
    """Whether ``input`` is a lazily conjugated view: never in hookgrad."""
    return False


def is_neg(input: Tensor) -> bool:
    """Whether ``input`` is a lazily negated view: never in hookgrad."""
    return False


def real(input: Tensor) -> Tensor:
    """The real part: a real tensor itself."""
    return input


def imag(input: Tensor) -> Tensor:
    """The imaginary part, which real tensors do not have: raises as torch does."""
    raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")


def isreal(input: Tensor) -> Tensor:
    """Elementwise: the value has no imaginary part, true everywhere for a real tensor."""
    return Tensor._make(_layout.pointwise(np.ones(input._data.shape, bool), input._data))


def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dimensions, a view (for real tensors, ``mT``)."""
    if input._data.ndim < 2:
        raise RuntimeError(f"tensor.adjoint() is only supported on matrices or batches of "
                           f"matrices. Got {input._data.ndim}-D tensor.")
    return transpose(input, -2, -1)


class Angle(Op):
    """angle of a real number: pi below zero, else 0 (NaN stays NaN); its slope is 0"""

    node_name = "AngleBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self):
        ctx.save_for_backward(self)
        dtype = self.dtype if self.dtype.kind in "fV" else _dtype.get_default_dtype().numpy
        values = np.where(self < 0, math.pi, 0.0).astype(dtype)
        if self.dtype.kind in "fV":
            values = np.where(np.isnan(self), self, values).astype(dtype, copy=False)
        return _layout.pointwise(values, self)

    @staticmethod
    def backward(ctx, grad):
        return grad * 0


def angle(input: Tensor, *, out=None) -> Tensor:
    """The argument of each element seen as a complex number: 0 or pi for real tensors
    (integer inputs give the default floating dtype)."""
    return Angle.apply(input)


def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=None,
                  requires_grad: bool = False) -> Tensor:
    """A 0-dim tensor holding ``s``, of the default floating dtype unless ``dtype`` says
    otherwise (also for integer and bool values, as in torch)."""
    from .creation import tensor
    if isinstance(s, Tensor):
        s = s.item()
    if not isinstance(s, (numbers.Number, np.generic)):
        raise TypeError(f"scalar_tensor(): argument 's' (position 1) must be Number, not "
                        f"{type(s).__name__}")
    return tensor(s, dtype=dtype if dtype is not None else _dtype.get_default_dtype(),
                  device=device, requires_grad=requires_grad)


def _new(self: Tensor, *args, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """torch's legacy constructor on a tensor: ``x.new(2, 3)`` or ``x.new(torch.Size(...))`` an
    uninitialised (here zero) tensor of that size, ``x.new(data)`` a copy of the data, ``x.new()``
    an empty one; each with ``x``'s dtype."""
    from ..tensor import Size
    from .creation import tensor, zeros
    dtype = dtype if dtype is not None else self.dtype
    if len(args) == 1 and not isinstance(args[0], (numbers.Integral, Size)):
        return tensor(args[0], dtype=dtype, requires_grad=requires_grad)
    size = tuple(args[0]) if len(args) == 1 and isinstance(args[0], Size) else args or (0,)
    return zeros(*size, dtype=dtype, requires_grad=requires_grad)


METHODS = {
    "conj": conj, "conj_physical": conj_physical, "conj_physical_": conj_physical_,
    "resolve_conj": resolve_conj, "resolve_neg": resolve_neg, "is_conj": is_conj,
    "is_neg": is_neg, "isreal": isreal, "angle": angle, "adjoint": adjoint, "new": _new,
}
def _is_cpu(self: Tensor) -> bool:
    """True: every hookgrad tensor lives in the CPU's memory."""
    return True


PROPERTIES = {"imag": imag, "is_cpu": _is_cpu}
