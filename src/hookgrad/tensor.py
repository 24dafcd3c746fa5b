"""Tensor: a NumPy array plus what autograd needs (grad, grad_fn, a shared version counter).

Operators and methods that compute are attached by ``_tensor_methods.py`` from the op modules, so
this file holds only the state autograd relies on and the hooks a user registers on a tensor.
"""
from __future__ import annotations

import warnings
import weakref
from collections import OrderedDict
from typing import Callable, Optional

import numpy as np

from . import _dtype
from .autograd import function as _function
from .autograd import graph as _graph
from .autograd import grad_mode
from .autograd.graph import AccumulateGrad
from .utils.hooks import RemovableHandle, add_hook

_state = grad_mode._state

_NO_GRAD_VIEW_ERROR = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. "
    "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your "
    "code by moving both the view and the inplace either both inside the no_grad block (if you "
    "don't want the inplace to be tracked) or both outside (if you want the inplace to be "
    "tracked).")

_NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad field "
    "to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
    "access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead.")


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
        return int(np.prod(self, dtype=np.int64))


class Tensor:
    __slots__ = ("_data", "_requires_grad", "_grad", "_grad_fn", "_output_nr", "_version_counter",
                 "_base", "_view_fn", "_view_version", "_hooks", "_extra", "__weakref__")

    __array_priority__ = 1000  # so ndarray <op> Tensor defers to Tensor's reflected operator

    def __init__(self, data=None, *, requires_grad: bool = False):
        from .ops.creation import _to_array

        array = np.zeros(0, _dtype.get_default_dtype().numpy) if data is None else _to_array(data)
        self._init(array, requires_grad)

    def _init(self, array: np.ndarray, requires_grad: bool = False) -> None:
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
        tensor = object.__new__(cls)
        tensor._init(array, requires_grad)
        return tensor

    @classmethod
    def _make_view(cls, array, source: "Tensor", fn, args, index: int) -> "Tensor":
        """A view op's output: shares the version counter of ``source`` and remembers how to
        replay the view from the root base (for in-place ops on views)."""
        tensor = object.__new__(Tensor)
        tensor._init(array)
        tensor._version_counter = source._version_counter
        base = source._base if source._base is not None else source
        tensor._base = base
        tensor._view_version = source._version_counter[0]
        if fn._multi_view or (source._base is not None and source._view_fn is None):
            tensor._view_fn = None  # views of split outputs cannot be replayed from the base
            if fn._multi_view:
                name = (fn.node_name or fn.__name__).replace("Backward0", "")
                tensor._extras()["view_error"] = (
                    f"Output {index} of {name} is a view and is being modified inplace. This view "
                    "is the output of a function that returns multiple views. Such functions do "
                    "not allow the output views to be modified inplace. You should replace the "
                    "inplace operation by an out-of-place one.")
        else:
            if not _state.enabled and base.requires_grad:
                tensor._extras()["view_error"] = _NO_GRAD_VIEW_ERROR
            position = fn._view_of
            parent_fn = source._view_fn if source._base is not None else None
            before, after = args[:position], args[position + 1:]

            def replay(root, _parent=parent_fn, _fn=fn, _before=before, _after=after):
                start = _parent(root) if _parent is not None else root
                return _fn.apply(*_before, start, *_after)

            tensor._view_fn = replay
        return tensor

    def _alias(self, function_name: str) -> "Tensor":
        """A custom Function's output that is one of its inputs: a new tensor on the same data
        and version counter, which (as in torch) may not be modified in place."""
        tensor = Tensor._make(self._data)
        tensor._version_counter = self._version_counter
        tensor._base = self._base if self._base is not None else self
        tensor._extras()["view_error"] = (
            f"Output 0 of {function_name} is a view and is being modified inplace. This view was "
            "created inside a custom Function (or because an input was returned as-is) and the "
            "autograd logic to handle view+inplace would override the custom backward associated "
            "with the custom Function, leading to incorrect gradients. This behavior is "
            "forbidden. You can fix this by cloning the output of the custom Function.")
        return tensor

    # -- autograd state --------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._requires_grad or self.grad_fn is not None

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if self._grad_fn is not None and not value:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If you "
                               "want to use a computed variable in a subgraph that doesn't require "
                               "differentiation use var_no_grad = var.detach().")
        if value and self._data.dtype.kind not in "fc":
            raise RuntimeError("only Tensors of floating point dtype can require "
                               "gradients")
        self._requires_grad = bool(value)

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        self.requires_grad = requires_grad
        return self

    @property
    def grad_fn(self):
        base = self._base
        if base is not None and self._view_version != self._version_counter[0]:
            self._regenerate_view_grad_fn()
        return self._grad_fn

    def _regenerate_view_grad_fn(self) -> None:
        """After an in-place change of the base or a sibling view, this view's history is the
        view of the base's new history (torch regenerates it lazily the same way)."""
        base = self._base
        self._view_version = self._version_counter[0]
        if self._view_fn is None or not base.requires_grad:
            return
        with grad_mode.enable_grad():
            fresh = self._view_fn(base)
        self._grad_fn = fresh._grad_fn
        self._output_nr = fresh._output_nr

    def _rebase_history(self, node, index: int) -> None:
        """An in-place op on a view: the base's history becomes CopySlices of the op."""
        from .ops.views import copy_slices

        error = self._extra.get("view_error") if self._extra else None
        if error is not None:
            raise RuntimeError(error)
        if self._view_fn is None:
            raise RuntimeError("this view cannot be modified in place while its base needs a "
                               "gradient: its history cannot be replayed from the base; clone "
                               "it first")
        copy_slices(self, node, index)

    def _history_moved(self, old_node, old_nr: int) -> None:
        """An in-place op gave this tensor a new grad_fn. As in torch, hooks registered before
        stay with the old value's node; retain_grad follows the tensor to its new node."""
        if old_node is None:
            return  # a leaf modified in place keeps its accumulator and its hooks
        self._hooks = None
        retains = old_node._retains_grad_hooks
        if self.retains_grad and retains and old_nr in retains:
            self._grad_fn._register_retains_grad(self._output_nr, retains.pop(old_nr))

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def output_nr(self) -> int:
        return self._output_nr

    @property
    def _version(self) -> int:
        return self._version_counter[0]

    @property
    def grad(self) -> Optional["Tensor"]:
        if self._grad_fn is not None and not self.retains_grad:
            warnings.warn(_NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
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
        return bool(self._extra and self._extra.get("retains_grad"))

    @property
    def data(self) -> "Tensor":
        return Tensor._make(self._data)

    @data.setter
    def data(self, value: "Tensor") -> None:
        self._data = value._data if isinstance(value, Tensor) else np.asarray(value)

    def detach(self) -> "Tensor":
        """Same data and version counter, no history (torch's detach)."""
        tensor = Tensor._make(self._data)
        tensor._version_counter = self._version_counter
        return tensor

    def detach_(self) -> "Tensor":
        if self._base is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self._grad_fn = None
        self._requires_grad = False
        self._output_nr = 0
        return self

    def _extras(self) -> dict:
        if self._extra is None:
            self._extra = {}
        return self._extra

    def _grad_accumulator(self) -> AccumulateGrad:
        """The leaf's AccumulateGrad node; the graph holds it, the leaf only refers weakly."""
        extra = self._extras()
        held = extra.get("grad_accumulator")
        if isinstance(held, AccumulateGrad):  # an unpacked alias of a leaf: fixed target
            return held
        node = held() if held is not None else None
        if node is None:
            node = AccumulateGrad(self)
            if self._hooks is not None:
                node._tensor_hooks_for(0, self._hooks)
            extra["grad_accumulator"] = weakref.ref(node)
        return node

    def _accumulate_grad(self, grad: "Tensor") -> None:
        """AccumulateGrad's work: a fresh tensor the first time, then add (out of place when
        building a graph of the gradient, as torch does)."""
        if self._grad is None:
            if _state.enabled:
                self._grad = grad if grad._grad_fn is not None else grad.detach().clone()
            else:
                self._grad = Tensor._make(np.array(grad._data, copy=True, order="C"))
        elif _state.enabled:
            self._grad = self._grad + grad
        else:
            self._grad._data += grad._data
            self._grad._version_counter[0] += 1

    def _post_accumulate_hooks(self):
        return self._extra.get("post_accumulate_hooks") if self._extra else None

    # -- hooks -------------------------------------------------------------------------------
    def register_hook(self, hook: Callable[["Tensor"], Optional["Tensor"]]) -> RemovableHandle:
        """``hook(grad) -> Tensor | None`` runs each time the gradient w.r.t. this tensor is
        computed, before it flows on; a returned tensor replaces the gradient.

        Example: ``h = x.register_hook(lambda g: g * 2)``; ``h.remove()`` takes it away.
        """
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        self._ensure_hooks_attached()
        return add_hook(self._hooks, hook)

    def _ensure_hooks_attached(self) -> None:
        if self._hooks is None:
            self._hooks = OrderedDict()
        node = self.grad_fn
        if node is not None:
            node._tensor_hooks_for(self._output_nr, self._hooks)
        else:
            self._grad_accumulator()._tensor_hooks_for(0, self._hooks)

    def retain_grad(self) -> None:
        """Keep ``.grad`` for this non-leaf tensor after backward (a clone of the gradient,
        after this tensor's own hooks have run)."""
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        node = self.grad_fn
        if node is None or self.retains_grad:
            return
        self._extras()["retains_grad"] = True
        ref = weakref.ref(self)

        def retain(grad):
            tensor = ref()
            if tensor is not None and grad is not None:
                if tensor._grad is None:
                    tensor._grad = grad.detach().clone() if not _state.enabled else grad.clone()
                else:
                    tensor._grad = tensor._grad + grad
            return grad

        node._register_retains_grad(self._output_nr, retain)

    def register_post_accumulate_grad_hook(self, hook: Callable[["Tensor"], None]
                                           ) -> RemovableHandle:
        """``hook(tensor) -> None`` runs on a leaf after its ``.grad`` has been accumulated."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors")
        extra = self._extras()
        hooks = extra.setdefault("post_accumulate_hooks", OrderedDict())
        return add_hook(hooks, hook)

    def backward(self, gradient: Optional["Tensor"] = None, retain_graph: Optional[bool] = None,
                 create_graph: bool = False, inputs=None) -> None:
        from .autograd import engine

        engine.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    # -- plain data access -------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: Optional[int] = None):
        if dim is None:
            return Size(self._data.shape)
        ndim = max(self._data.ndim, 1)
        if not -ndim <= dim < ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                             f"{ndim - 1}], but got {dim})")
        return self._data.shape[dim] if self._data.ndim else 1

    @property
    def dtype(self) -> _dtype.dtype:
        return _dtype.from_numpy_dtype(self._data.dtype)

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    ndimension = dim

    def numel(self) -> int:
        return self._data.size

    nelement = numel

    def element_size(self) -> int:
        return self._data.itemsize

    @property
    def itemsize(self) -> int:
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        return self._data.nbytes

    @property
    def device(self):
        from ._device import device

        return device("cpu")

    is_cuda = False
    is_sparse = False
    is_quantized = False
    is_meta = False
    layout = "torch.strided"

    @property
    def is_floating_point_(self) -> bool:
        return self._data.dtype.kind == "f"

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f"

    def is_contiguous(self, memory_format=None) -> bool:
        return self._data.flags.c_contiguous

    def stride(self, dim: Optional[int] = None):
        strides = tuple(s // self._data.itemsize for s in self._data.strides)
        return strides if dim is None else strides[dim]

    def storage_offset(self) -> int:
        root = _graph._root_array(self._data)
        start = self._data.__array_interface__["data"][0]
        return (start - root.__array_interface__["data"][0]) // self._data.itemsize

    def data_ptr(self) -> int:
        return self._data.__array_interface__["data"][0]

    def untyped_storage(self):
        return _Storage(_graph._root_array(self._data))

    def numpy(self, *, force: bool = False) -> np.ndarray:
        if self.requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        return self._data

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted "
                               "to Scalar")
        return self._data.item()

    def tolist(self):
        return self._data.tolist()

    def cpu(self) -> "Tensor":
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
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._data)

    def __float__(self) -> float:
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
        from ._tensor_str import tensor_repr

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
            import copy

            result.__dict__.update(copy.deepcopy(self.__dict__, memo))
        if self._grad is not None:
            result._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = result
        return result


def _rebuild(array, requires_grad):
    return Tensor._make(array, requires_grad)


class _Storage:
    __slots__ = ("_array",)

    def __init__(self, array: np.ndarray):
        self._array = array

    def data_ptr(self) -> int:
        return self._array.__array_interface__["data"][0]

    def nbytes(self) -> int:
        return self._array.nbytes

    def size(self) -> int:
        return self._array.nbytes


def _make_saved(array, version_counter, grad_fn, output_nr, leaf_accumulator=False):
    tensor = Tensor._make(array)
    tensor._version_counter = version_counter
    if leaf_accumulator:
        tensor._requires_grad = True
        tensor._extras()["grad_accumulator"] = grad_fn
    elif grad_fn is not None:
        tensor._grad_fn = grad_fn
        tensor._output_nr = output_nr
    return tensor


_graph._make_tensor = _make_saved
_graph._plain_tensor = Tensor._make
_function.Tensor = Tensor
