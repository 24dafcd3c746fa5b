"""Tensor: a NumPy array plus what autograd needs (grad, grad_fn, a shared version counter).

This is the ground floor: it imports nothing from ``autograd/`` or ``ops/``. Everything that
computes, records history or registers hooks (``grad_fn``, ``register_hook``, ``backward``,
operators, ``Tensor(data)``) is bound in one table by ``_tensor_methods.py``.
"""
from __future__ import annotations

import copy
from typing import Optional

import numpy as np

from ._grad_state import (INFERENCE_REQUIRES_GRAD_ERROR, INFERENCE_VERSION_ERROR,
                          InferenceVersion, _state as _grad_state, inference_users,
                          marking_constructor)
from ._strides import (check_overlap, empty_strides, has_internal_overlap,  # noqa: F401
                       keeping_strides,
                       root_array, torch_strides, with_empty_strides)
from ._warnings import NON_LEAF_GRAD, SCALAR_OF_GRAD, warn, warn_once
from . import _dtype
from . import _memory_format
from ._tensor_str import tensor_repr
from .storage import UntypedStorage

class Size(tuple):
    """torch.Size: a tuple that prints as ``torch.Size([2, 3])``."""

    def __repr__(self) -> str:
        return f"torch.Size({list(self)})"

    def __getitem__(self, key):
        result = tuple.__getitem__(self, key)
        return Size(result) if isinstance(key, slice) else result

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))

    def __radd__(self, other):
        return Size(tuple(other) + tuple(self))

    def numel(self) -> int:
        """The number of elements."""
        return int(np.prod(self, dtype=np.int64))


class TensorExtra:
    """State few tensors carry, kept off the Tensor itself so a plain tensor pays one ``None``.

    Created on first need by ``Tensor._extras()``; ``tensor._extra is None`` is the fast test
    that a tensor has none of it (no retain_grad, hooks after accumulation, view error, ...).
    """

    __slots__ = ("retains_grad", "grad_accumulator", "post_accumulate_hooks", "view_error",
                 "buffer_persistent", "shared")

    def __init__(self) -> None:
        self.retains_grad = False
        # a weak reference to the leaf's AccumulateGrad, or the node itself for an unpacked alias
        self.grad_accumulator = None
        self.post_accumulate_hooks = None
        self.view_error: Optional[str] = None  # why an in-place op on this view is refused
        self.buffer_persistent: Optional[bool] = None  # set by nn.Buffer
        self.shared = False  # set by share_memory_


class Tensor:
    """An n-dimensional array on a NumPy buffer that records the operations applied to it, so that
    ``backward`` can compute gradients.

    Differs from torch: the data always lives in host memory (``device`` is always ``cpu``);
    ``numpy()`` shares that buffer."""
    __slots__ = ("_data", "_requires_grad", "_grad", "_grad_fn", "_output_nr", "_version_counter",
                 "_base", "_view_fn", "_view_version", "_hooks", "_extra", "__weakref__")

    __array_priority__ = 1000  # so ndarray <op> Tensor defers to Tensor's reflected operator

    def _init(self, array: np.ndarray, requires_grad: bool = False) -> None:
        # the same fields as ``_make`` sets (keep the two in step)
        self._data = array
        self._requires_grad = requires_grad
        self._grad = None
        self._grad_fn = None
        self._output_nr = 0
        self._version_counter = [0]
        self._base = None
        self._view_fn = None
        self._view_version = 0
        self._hooks = None
        self._extra = None

    @classmethod
    def _make(cls, array: np.ndarray, requires_grad: bool = False) -> "Tensor":
        """A tensor on ``array`` without validation (the ops' constructor)."""
        # the body of ``_init``, inline: every op's result is made here
        tensor = object.__new__(cls)
        tensor._data = array
        tensor._requires_grad = requires_grad
        tensor._grad = None
        tensor._grad_fn = None
        tensor._output_nr = 0
        tensor._version_counter = [0]
        tensor._base = None
        tensor._view_fn = None
        tensor._view_version = 0
        tensor._hooks = None
        tensor._extra = None
        return tensor

    # -- autograd state --------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        """Whether operations on this tensor are recorded for gradients."""
        if self._requires_grad or self._grad_fn is not None:
            return True
        # a (float) view of a base that requires grad does too, as in torch, with or without
        # a history: one made before its base required grad, or under no_grad, acts as a leaf
        # whose gradient goes nowhere, yet what is computed from it requires grad. A view
        # whose base changed in place is answered without rebuilding its history (torch
        # rebuilds only when grad_fn is asked for)
        base = self._base
        return base is not None and self._data.dtype.kind in "fcV" and base.requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if self._grad_fn is not None and not value:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If you "
                               "want to use a computed variable in a subgraph that doesn't require "
                               "differentiation use var_no_grad = var.detach().")
        if value and self._data.dtype.kind not in "fcV":
            raise RuntimeError("only Tensors of floating point dtype can require "
                               "gradients")
        if value and type(self._version_counter) is InferenceVersion \
                and not _grad_state.inference:
            raise RuntimeError(INFERENCE_REQUIRES_GRAD_ERROR)
        self._requires_grad = bool(value)

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        """Sets ``requires_grad`` in place and returns the tensor; only a leaf can be switched
        off, and only a floating tensor switched on."""
        self.requires_grad = requires_grad
        return self

    @property
    def is_leaf(self) -> bool:
        """True for tensors created by the user (or with ``requires_grad=False``), not by a
        differentiable op."""
        return self.grad_fn is None

    @property
    def output_nr(self) -> int:
        """Which output of its ``grad_fn`` this tensor is (0 for leaves)."""
        return self._output_nr

    @property
    def _version(self) -> int:
        if type(self._version_counter) is InferenceVersion:
            raise RuntimeError(INFERENCE_VERSION_ERROR)
        return self._version_counter[0]

    def is_inference(self) -> bool:
        """Whether this is an inference tensor: made inside ``inference_mode``, or a view of
        one (a view of a normal tensor made there is not)."""
        return type(self._version_counter) is InferenceVersion

    @property
    def grad(self) -> Optional["Tensor"]:
        """The accumulated gradient (None until a backward pass reaches this leaf, or one that
        retains its grad)."""
        if self._grad_fn is not None and not self.retains_grad:
            warn(NON_LEAF_GRAD, UserWarning)
        return self._grad

    @grad.setter
    def grad(self, value: Optional["Tensor"]) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of "
                                f"type {type(value).__name__}")
            if value._data.shape != self._data.shape:
                raise RuntimeError("assigned grad has data of a different size")
            if value._data.dtype != self._data.dtype:
                raise RuntimeError("assigned grad has data of a different type")
        self._grad = value

    @property
    def retains_grad(self) -> bool:
        """True when ``retain_grad()`` asked a non-leaf to keep its ``.grad``."""
        return self._extra is not None and self._extra.retains_grad

    @property
    def data(self) -> "Tensor":
        """The same values detached from the graph (shares memory); assigning replaces the values
        but keeps the tensor's identity."""
        tensor = Tensor._make(self._data)
        if type(self._version_counter) is InferenceVersion:  # an inference tensor's is one too
            tensor._version_counter = InferenceVersion([0])
        return tensor

    @data.setter
    def data(self, value: "Tensor") -> None:
        self._data = value._data if isinstance(value, Tensor) else np.asarray(value)

    def detach(self) -> "Tensor":
        """Same data and version counter, no history (torch's detach)."""
        tensor = Tensor._make(self._data)
        tensor._version_counter = self._version_counter
        return tensor

    def detach_(self) -> "Tensor":
        """Cuts this tensor from the graph in place: it becomes a leaf without ``grad_fn``."""
        if self._base is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self._grad_fn = None
        self._requires_grad = False
        self._output_nr = 0
        return self

    def _extras(self) -> TensorExtra:
        if self._extra is None:
            self._extra = TensorExtra()
        return self._extra

    # -- plain data access -------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        """The size of each dimension, as a ``hookgrad.Size``."""
        return Size(self._data.shape)

    def size(self, dim: Optional[int] = None):
        """The shape as a ``hookgrad.Size``, or the size of one dimension ``dim``."""
        if dim is None:
            return Size(self._data.shape)
        ndim = max(self._data.ndim, 1)
        if not -ndim <= dim < ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                             f"{ndim - 1}], but got {dim})")
        return self._data.shape[dim] if self._data.ndim else 1

    @property
    def dtype(self) -> _dtype.dtype:
        """The element type (``hookgrad.float32`` and so on)."""
        return _dtype.from_numpy_dtype(self._data.dtype)

    @property
    def ndim(self) -> int:
        """The number of dimensions (property)."""
        return self._data.ndim

    def dim(self) -> int:
        """The number of dimensions."""
        return self._data.ndim

    ndimension = dim

    def numel(self) -> int:
        """The number of elements."""
        return self._data.size

    nelement = numel

    def element_size(self) -> int:
        """Bytes per element."""
        return self._data.itemsize

    @property
    def itemsize(self) -> int:
        """Bytes per element (the property spelling of ``element_size()``)."""
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        """Bytes the elements take: ``numel() * element_size()``."""
        return self._data.nbytes

    is_cuda = False
    is_sparse = False
    is_quantized = False
    is_meta = False
    layout = "torch.strided"

    @property
    def is_floating_point_(self) -> bool:
        """The same test as ``is_floating_point()``, under a second name some callers use."""
        return self._data.dtype.kind in "fV"

    def is_floating_point(self) -> bool:
        """True for float16, bfloat16, float32 and float64 tensors."""
        return self._data.dtype.kind in "fV"

    def is_contiguous(self, *, memory_format=_memory_format.contiguous_format) -> bool:
        """True when the elements lie without gaps in row-major order, or in the order
        ``memory_format`` names (``channels_last``: N, H, W, C for a 4-d tensor)."""
        array = self._data
        if memory_format is _memory_format.contiguous_format:
            return array.flags.c_contiguous
        _memory_format.check(memory_format, "is_contiguous", optional=False)
        return _memory_format.is_contiguous(
            array.shape, tuple(s // array.itemsize for s in array.strides),
            array.flags.c_contiguous, memory_format)

    def stride(self, dim: Optional[int] = None):
        """Elements to step in memory for one step along each dimension (or along ``dim``)."""
        strides = torch_strides(self._data)
        return strides if dim is None else strides[dim]

    def storage_offset(self) -> int:
        """Offset, in elements, of the first element from the start of the storage."""
        root = root_array(self._data)
        start = self._data.__array_interface__["data"][0]
        return (start - root.__array_interface__["data"][0]) // self._data.itemsize

    def data_ptr(self) -> int:
        """Address of the first element in memory (of the NumPy buffer)."""
        return self._data.__array_interface__["data"][0]

    def untyped_storage(self):
        """The raw byte storage behind the tensor, shared with its views."""
        return UntypedStorage(root_array(self._data))

    def numpy(self, *, force: bool = False) -> np.ndarray:
        """A NumPy array sharing this tensor's memory; raises if the tensor requires grad unless
        ``force=True``.

        Differs from torch: a bfloat16 tensor gives an ml_dtypes bfloat16 array (NumPy has no such
        type)."""
        if self.requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        return self._data

    def item(self):
        """The single element as a Python number; raises if the tensor has more than one element."""
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted "
                               "to Scalar")
        return self._data.item()

    def tolist(self):
        """The values as (nested) Python lists of numbers."""
        return self._data.tolist()

    def cpu(self) -> "Tensor":
        """This tensor: every hookgrad tensor already lives on the CPU."""
        return self

    def get_device(self) -> int:
        """-1: torch's answer for a CPU tensor."""
        return -1

    def cuda(self, *args, **kwargs):
        """Raises torch's CPU-build error: there is no GPU to copy to."""
        raise AssertionError("Torch not compiled with CUDA enabled")

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with "
                               f"{'no values' if not self._data.size else 'more than one value'}"
                               " is ambiguous")
        return bool(self._data)

    def is_nonzero(self) -> bool:
        """The truth of a one-element tensor (``bool(t)``); more or fewer elements raise."""
        return self.__bool__()

    def __float__(self) -> float:
        if self.requires_grad:  # torch 2.13 warns once per process here (not for int or item)
            warn_once(SCALAR_OF_GRAD)
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return int(self._data.item())

    def __hash__(self) -> int:
        return id(self)

    def __array__(self, dtype=None, copy=None):
        return self._data if dtype is None else self._data.astype(dtype)

    def __repr__(self) -> str:
        return tensor_repr(self)

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0 and type(self) is Tensor:  # torch formats a 0-d tensor's value
            return self._data.item().__format__(spec)
        return repr(self)

    def __reduce_ex__(self, protocol):
        return (_rebuild, (self._data, self._requires_grad))

    def __deepcopy__(self, memo):
        if self._grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support "
                               "the deepcopy protocol at the moment.")
        result = type(self).__new__(type(self))
        Tensor._init(result, self._data.copy(), self._requires_grad)
        if hasattr(self, "__dict__"):
            result.__dict__.update(copy.deepcopy(self.__dict__, memo))
        if self._grad is not None:
            result._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = result
        return result


def _rebuild(array, requires_grad):
    return Tensor._make(array, requires_grad)


_PLAIN = (Tensor.__dict__["_make"], Tensor._init)
_MARKING = (classmethod(marking_constructor(_PLAIN[0].__func__)), marking_constructor(_PLAIN[1]))


def mark_inference_tensors(entering: bool) -> None:
    """Called as a thread enters (True) or leaves (False) inference mode: while any thread is
    inside, tensors are made by constructors that mark those made in such a thread."""
    Tensor._make, Tensor._init = _MARKING if inference_users(entering) else _PLAIN
