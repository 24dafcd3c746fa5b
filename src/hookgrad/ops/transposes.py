"""The transposing properties ``x.T``, ``x.mT``, ``x.H`` and ``x.mH``.

hookgrad has no complex dtypes, so the conjugating ``H``/``mH`` transpose as ``T``/``mT`` do.
torch accepts each on a 0-D tensor as the identity with a deprecation warning given once per
process (``warn_once``), and ``x.T`` on any other rank but 2 with another once-only warning.
"""
from __future__ import annotations

from .._warnings import warn_once
from ..tensor import Tensor
from .views import Permute, Transpose

_T_NOT_2D = ("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
             "deprecated and it will throw an error in a future release. Consider `x.mT` to "
             "transpose batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` "
             "to reverse the dimensions of a tensor.")


def _deprecated_on_0d(name: str, advice: str) -> None:
    warn_once(f"Tensor.{name} is deprecated on 0-D tensors. {advice}", UserWarning)


def numpy_T(input: Tensor) -> Tensor:
    """``x.T``: all dims reversed (a view)."""
    ndim = input._data.ndim
    if ndim == 0:
        _deprecated_on_0d("T", "This function is the identity in these cases.")
    elif ndim != 2:
        warn_once(_T_NOT_2D, UserWarning)
    return Permute.apply(input, tuple(range(ndim))[::-1])


def _last_two_swapped(input: Tensor, name: str, hint: str) -> Tensor:
    """``x.mT`` / ``x.mH``: the last two dims swapped (a view); a 0-D tensor is given back as it
    is, with torch's once-only warning naming the property."""
    ndim = input._data.ndim
    if ndim == 0:
        _deprecated_on_0d(name, hint)
        return input
    if ndim < 2:
        raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of matrices. "
                           f"Got {ndim}-D tensor.")
    return Transpose.apply(input, -2, -1)


def matrix_T(input: Tensor) -> Tensor:
    """``x.mT``: the last two dims swapped (a view)."""
    return _last_two_swapped(input, "mT", "This function is the identity in these cases.")


def H(input: Tensor) -> Tensor:
    """``x.H``: the conjugate transpose of a matrix, here its transpose (a view)."""
    ndim = input._data.ndim
    if ndim == 0:
        _deprecated_on_0d("H", "Consider using x.conj().")
        return input
    if ndim != 2:
        batches = " For batches of matrices, consider using tensor.mH" if ndim > 2 else ""
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {ndim}-D "
                           f"tensor.{batches}")
    return Transpose.apply(input, 0, 1)


def mH(input: Tensor) -> Tensor:
    """``x.mH``: the conjugate transpose of the last two dims, here their transpose (a view)."""
    return _last_two_swapped(input, "mH", "Consider using x.conj().")
