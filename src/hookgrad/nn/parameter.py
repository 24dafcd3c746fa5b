"""Parameter: a leaf Tensor that a Module registers automatically when it is assigned."""
from __future__ import annotations

from typing import Optional

import numpy as np

from .. import _dtype
from ..tensor import Tensor


class Parameter(Tensor):
    """A Tensor that is a module parameter: ``requires_grad=True`` by default.

    It shares the data and the version counter of the tensor it wraps (like torch's
    ``_make_subclass``), so ``Parameter(t)`` sees later in-place changes of ``t``.
    """

    __slots__ = ()

    def __init__(self, data: Optional[Tensor] = None, requires_grad: bool = True) -> None:
        if data is None:
            self._init(np.zeros(0, _dtype.get_default_dtype().numpy))
        else:
            if not isinstance(data, Tensor):
                raise TypeError(f"Parameter(): argument 'data' must be Tensor, not "
                                f"{type(data).__name__}")
            self._init(data._data)
            self._version_counter = data._version_counter
        if requires_grad:
            if self._data.dtype.kind not in "fcV":
                raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                                   "gradients")
            self.requires_grad = True  # (the setter refuses an inference tensor's data)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (self._data, self._requires_grad))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = Parameter(Tensor._make(self._data.copy()), self._requires_grad)
        if self._grad is not None:
            result._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = result
        return result


_NO_SHAPE_YET = ("Can't access the shape of an uninitialized parameter or buffer. This error "
                 "usually happens in `load_state_dict` when trying to load an uninitialized "
                 "parameter into an initialized one. Call `forward` to initialize the "
                 "parameters before accessing their attributes.")


def _no_shape_yet(self):
    """An uninitialised parameter or buffer has no shape yet: asking for one raises."""
    raise RuntimeError(_NO_SHAPE_YET)


class UninitializedParameter(Parameter):
    """A parameter whose shape is not known yet: a lazy module gives it one (``materialize``)
    when it first sees an input, and it becomes a plain Parameter."""

    __slots__ = ()

    def __init__(self, requires_grad: bool = True, device=None, dtype=None) -> None:
        dtype = (dtype or _dtype.get_default_dtype()).numpy
        super().__init__(Tensor._make(np.zeros(0, dtype)), requires_grad)

    shape = property(_no_shape_yet)

    def __repr__(self) -> str:
        return "<UninitializedParameter>"

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Gives this parameter ``shape`` (uninitialised values) and makes it a Parameter."""
        dtype = self._data.dtype if dtype is None else dtype.numpy
        self._data = np.empty(tuple(shape), dtype)
        self.__class__ = Parameter


class UninitializedBuffer(Tensor):
    """A buffer whose shape is not known yet (a lazy batch norm's running statistics): the
    module gives it one (``materialize``) from its first input, and it becomes a plain
    Tensor."""

    __slots__ = ()

    def __init__(self, requires_grad: bool = False, device=None, dtype=None,
                 persistent: bool = True) -> None:
        self._init(np.zeros(0, (dtype or _dtype.get_default_dtype()).numpy))
        self._requires_grad = bool(requires_grad)
        self._extras().buffer_persistent = persistent

    shape = property(_no_shape_yet)

    def __repr__(self) -> str:
        return "<UninitializedBuffer>"

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Gives this buffer ``shape`` (uninitialised values) and makes it a plain Tensor."""
        dtype = self._data.dtype if dtype is None else dtype.numpy
        self._data = np.empty(tuple(shape), dtype)
        self.__class__ = Tensor


def is_lazy(value: object) -> bool:
    """Whether ``value`` is a parameter or buffer still waiting for its shape."""
    return isinstance(value, (UninitializedParameter, UninitializedBuffer))


def _rebuild_parameter(array: np.ndarray, requires_grad: bool) -> Parameter:
    return Parameter(Tensor._make(array), requires_grad)


class _BufferMeta(type):
    """``isinstance(t, Buffer)`` is true for the plain tensors ``Buffer(...)`` returns."""

    def __instancecheck__(cls, instance: object) -> bool:
        extra = getattr(instance, "_extra", None) if isinstance(instance, Tensor) else None
        return extra is not None and extra.buffer_persistent is not None


class Buffer(metaclass=_BufferMeta):
    """``nn.Buffer(t)`` marks a tensor to be registered as a buffer when assigned to a module.

    Like torch, it returns a plain Tensor (a detached alias of ``t`` keeping its
    ``requires_grad``) that carries the mark and ``persistent``.
    """

    def __new__(cls, data: Optional[Tensor] = None, *, persistent: bool = True) -> Tensor:
        if data is None:
            data = Tensor._make(np.zeros(0, _dtype.get_default_dtype().numpy))
        tensor = data.detach()
        tensor._requires_grad = data.requires_grad
        tensor._extras().buffer_persistent = persistent
        return tensor


def buffer_persistent(tensor: Tensor) -> bool:
    """The ``persistent`` flag of a tensor made by ``Buffer``."""
    return tensor._extra.buffer_persistent
