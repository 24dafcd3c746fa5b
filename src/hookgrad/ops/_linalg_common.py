"""What the linear algebra modules share: torch's named results (``torch.return_types.linalg_qr``
and friends), the input checks torch makes before factorising, and small Tensor helpers used by
the gradient formulas."""
from __future__ import annotations

import numpy as np

from .. import _dtype
from ..tensor import Tensor
from .minmax import return_types


def named_result(name: str, fields: tuple) -> type:
    """A tuple subclass printed and reached like ``torch.return_types.<name>``."""

    def __new__(cls, *values):
        return tuple.__new__(cls, values)

    def __repr__(self) -> str:
        body = ",\n".join(f"{field}={value!r}" for field, value in zip(fields, self))
        return f"torch.return_types.{name}(\n{body})"

    namespace = {"__slots__": (), "__new__": __new__, "__repr__": __repr__,
                 "n_fields": len(fields), "n_sequence_fields": len(fields),
                 "_fields": fields, "__doc__": f"torch.return_types.{name}{fields}"}
    for index, field in enumerate(fields):
        namespace[field] = property(lambda self, index=index: self[index])
    result = type(name, (tuple,), namespace)
    setattr(return_types, name, result)
    return result


def check_float(A: np.ndarray, op: str, name: str = "A") -> None:
    if A.dtype.kind not in "fV" or A.dtype.itemsize < 4:
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got "
                           f"{_dtype.scalar_type_name(A.dtype)}")


def check_matrix(A: np.ndarray, op: str, name: str = "A") -> None:
    """At least two dims and a float dtype (float32/float64: LAPACK's types)."""
    if A.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor {name} must have at least 2 dimensions.")
    check_float(A, op, name)


def check_square(A: np.ndarray, op: str, name: str = "A") -> None:
    check_matrix(A, op, name)
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{op}: {name} must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


def same_dtype(A: np.ndarray, B: np.ndarray, op: str) -> None:
    if A.dtype != B.dtype:
        raise RuntimeError(f"{op}: Expected A and B to have the same dtype, but found A of type "
                           f"{_dtype.scalar_type_name(A.dtype)} and B of type "
                           f"{_dtype.scalar_type_name(B.dtype)} instead")


def column_major(array: np.ndarray) -> np.ndarray:
    """Each matrix stored column by column, as LAPACK leaves torch's results."""
    return np.ascontiguousarray(array.swapaxes(-1, -2)).swapaxes(-1, -2)


def eye_like(n: int, dtype) -> Tensor:
    return Tensor._make(np.eye(n, dtype=dtype))


def tensor_of(value, like: np.ndarray) -> Tensor:
    """A gradient the engine left out (None) as zeros, so the formulas need no special case."""
    return value if value is not None else Tensor._make(np.zeros_like(like))
