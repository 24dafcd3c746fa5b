"""A direct lane for the arithmetic operators when nothing is recorded.

Backward formulas are written once, with Tensor operators, so that double backward comes free.
When ``create_graph`` is False the engine runs them with grad mode off, and then each ``*``,
``+``, ``-`` or ``/`` is only a NumPy ufunc on two arrays of one float dtype: the full path
(the operator's wrapper, promotion, ``Function.apply``, a throwaway ctx, the op's checks) costs
several times the arithmetic on a small tensor. This lane computes exactly what the full path
computes, for the cases where the answer is plain: exact ``Tensor`` operands (or a Python float
or small int) of one dtype, float32 or float64, no mode active, and no gradient to record
(grad mode off, or neither operand has a history). Everything else (other dtypes, broadcasting
errors, subclasses, modes) takes the full path, which also gives the errors.
"""
from __future__ import annotations

import numpy as np

from ..autograd.builtin import record_builtin
from ..autograd.grad_mode import _state
from ..autograd.tensor_hooks import grad_edge
from ..overrides import _mode_stack
from ..tensor import Tensor
from . import _layout
from ._util import quiet_errors

_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
# NumPy 2 casts a Python number to the array's dtype (as the full path does); NumPy 1 may
# promote by value, so there numbers take the full path
_NUMBERS_OK = int(np.__version__.split(".")[0]) >= 2
_INT_LIMIT = 2 ** 53


def _plain(tensor: Tensor) -> bool:
    """No history to record through: grad mode is off, or the tensor is a leaf without grad
    that is not a view (a view's history is looked up lazily)."""
    return not _state.enabled or (not tensor._requires_grad and tensor._grad_fn is None
                                  and tensor._base is None)


def binary(ufunc, full, reflected: bool = False, op=None, extra: tuple = ()):
    """``full`` (the operator's usual implementation) with the direct lane in front. ``op``
    (with ``extra`` arguments) is the Function ``full`` ends in for a float tensor and a
    number or a tensor of its dtype: recorded calls of that kind go to it at once, with the
    arguments ``full`` would give it (and, when ``self`` is known to need a gradient, past
    ``apply``'s search for one, straight to the recording)."""
    enter, leave = quiet_errors.enter, quiet_errors.exit
    if op is not None:
        # what ``builtin_inputs`` finds for (self, number, dtype, number, *extra) when self
        # needs a gradient and is no view: only self's need; an edge for self and for each
        # number torch wraps
        count = 4 + len(extra)
        number_needs = (True,) + (False,) * (count - 1)
        number_positions = (0,) + tuple(i for i in op._wrapped_scalars if 0 < i < count)
        number_tail = [_NO_EDGE] * (len(number_positions) - 1)
        number_metas = (None,) * (len(number_positions) - 1)
        # two tensors: the same, unless a later position is a wrapped number too
        pair_tail = (None if any(1 < i < count for i in op._wrapped_scalars)
                     else (False,) * (count - 2))

    def operator(self, other):
        if _mode_stack or type(self) is not Tensor:
            return full(self, other)
        array = self._data
        dtype = array.dtype
        if dtype not in _DTYPES:
            return full(self, other)
        kind = type(other)
        if _state.enabled and (self._requires_grad or self._grad_fn is not None
                               or self._base is not None):
            if op is None:
                return full(self, other)
            if kind is float or kind is int:
                if self._base is None:  # self needs a gradient: nothing left to search
                    history = self._grad_fn
                    edge = ((history, self._output_nr) if history is not None
                            else grad_edge(self))
                    return record_builtin(op, (self, other, dtype, other, *extra),
                                          [array, other, dtype, other, *extra], _NO_KWARGS,
                                          (number_needs, number_positions,
                                           [edge, *number_tail],
                                           ((array.shape, dtype), *number_metas)))
                return op.apply(self, other, dtype, other, *extra)
            if kind is Tensor and other._data.dtype is dtype:
                if self._base is None and other._base is None:
                    b = other._data
                    if b is array and other is not self:
                        b = b.view()  # one array object per tensor, as builtin_inputs gives
                    return record_builtin(op, (self, other, dtype, None, *extra),
                                          [array, b, dtype, None, *extra], _NO_KWARGS,
                                          _pair_inputs(self, other, pair_tail)
                                          if pair_tail is not None else None)
                return op.apply(self, other, dtype, None, *extra)
            return full(self, other)
        if kind is Tensor:
            b = other._data
            if b.dtype is not dtype or not _plain(other):
                return full(self, other)
        elif _NUMBERS_OK and (kind is float
                              or (kind is int and -_INT_LIMIT <= other <= _INT_LIMIT)):
            b = other
        else:
            return full(self, other)
        token = enter()
        try:
            result = ufunc(b, array) if reflected else ufunc(array, b)
        except ValueError:  # shapes that do not broadcast: the full path words the error
            return full(self, other)
        finally:
            leave(token)
        if type(result) is not np.ndarray:  # NumPy gives scalars for 0-dim results
            result = np.asarray(result)
        if result.ndim < 2:  # one layout only (see _layout.pointwise)
            return Tensor._make(result)
        return Tensor._make(_layout.pointwise(result, array, b))  # torch's layout, as full's

    operator.__name__ = getattr(full, "__name__", ufunc.__name__)
    operator.__doc__ = getattr(full, "__doc__", None)
    operator._torch_function_wrapped = True  # ``full`` is the mode-visible wrapper
    return operator


_NO_KWARGS: dict = {}
_NO_EDGE = (None, 0)


def _pair_inputs(self: Tensor, other: Tensor, tail: tuple) -> tuple:
    """``builtin_inputs`` for two tensors of one dtype, neither a view, where self needs a
    gradient (the arrays list is completed by the caller's: see the note on ``other``)."""
    history = self._grad_fn
    edges = [(history, self._output_nr) if history is not None else grad_edge(self)]
    array = self._data
    metas = [(array.shape, array.dtype)]
    history = other._grad_fn
    need = other._requires_grad or history is not None
    if need:
        edges.append((history, other._output_nr) if history is not None else grad_edge(other))
        metas.append((other._data.shape, other._data.dtype))
    else:
        edges.append(_NO_EDGE)
        metas.append(None)
    return (True, need, *tail), (0, 1), edges, tuple(metas)


def negative(full):
    """``-tensor`` with the direct lane in front."""

    def operator(self):
        if _mode_stack or type(self) is not Tensor or self._data.dtype not in _DTYPES \
                or not _plain(self):
            return full(self)
        result = np.negative(self._data)
        result = result if type(result) is np.ndarray else np.asarray(result)
        return Tensor._make(_layout.pointwise(result, self._data))

    operator.__name__ = getattr(full, "__name__", "neg")
    operator._torch_function_wrapped = True
    return operator
