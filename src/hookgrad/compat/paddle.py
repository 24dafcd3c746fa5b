"""PaddlePaddle's spelling of hookgrad: ``import hookgrad.compat.paddle as paddle``.

A thin layer: Paddle's names (``to_tensor``, ``multiply``, ``stop_gradient``, ``PyLayer``,
``ctx.saved_tensor()``) map onto the same Tensor, Function and saved-tensor hooks, so everything a
Paddle example does passes through hookgrad's single door for saved tensors.
"""
from __future__ import annotations

import sys
import types

import numpy as np

import hookgrad
from hookgrad.autograd.function import BackwardCFunction, Function
from hookgrad.autograd.graph import saved_tensors_hooks as _saved_tensors_hooks
from hookgrad.tensor import Tensor as _Tensor

_PADDLE_DTYPES = {"float32": "float32", "float64": "float64", "float16": "float16",
                  "int64": "int64", "int32": "int32", "bool": "bool"}


class Tensor(_Tensor):
    """A hookgrad Tensor with Paddle's attributes (``stop_gradient``, ``numpy()`` always)."""

    __slots__ = ()

    @property
    def stop_gradient(self) -> bool:
        return not self.requires_grad

    @stop_gradient.setter
    def stop_gradient(self, value: bool) -> None:
        self.requires_grad = not value

    def numpy(self) -> np.ndarray:
        return self._data

    @property
    def shape(self) -> list:
        return list(self._data.shape)

    @property
    def grad(self):
        grad = _Tensor.grad.fget(self)
        return None if grad is None else _paddle(grad)

    @grad.setter
    def grad(self, value) -> None:
        _Tensor.grad.fset(self, value)

    def __repr__(self) -> str:
        body = np.array2string(self._data, separator=", ", prefix=" " * 7,
                               formatter={"float_kind": lambda v: f"{v:.8f}".rstrip("0")})
        return (f"Tensor(shape={list(self._data.shape)}, dtype="
                f"{_PADDLE_DTYPES.get(self._data.dtype.name, self._data.dtype.name)}, "
                f"place=Place(cpu), stop_gradient={self.stop_gradient},\n       {body})")


def _returning_paddle(name: str):
    method = getattr(_Tensor, name)

    def wrapper(self, *args, **kwargs):
        return _wrap(method(self, *args, **kwargs))

    wrapper.__name__ = name
    return wrapper


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
              "__truediv__", "__rtruediv__", "__matmul__", "__neg__", "__pow__", "__getitem__",
              "sum", "mean", "exp", "log", "tanh", "sigmoid", "relu", "reshape", "transpose",
              "matmul", "detach", "clone", "astype" if hasattr(_Tensor, "astype") else "to"):
    setattr(Tensor, _name, _returning_paddle(_name))


def _paddle(tensor: _Tensor) -> Tensor:
    """The same tensor seen through Paddle's class (shares data, version counter and history)."""
    if isinstance(tensor, Tensor):
        return tensor
    view = Tensor._make(tensor._data)
    view._version_counter = tensor._version_counter
    view._requires_grad = tensor._requires_grad
    view._grad_fn = tensor._grad_fn
    view._output_nr = tensor._output_nr
    if tensor._grad_fn is None and tensor._requires_grad:
        view._extras().grad_accumulator = tensor._grad_accumulator()
    return view


def _wrap(result):
    if isinstance(result, _Tensor):
        return _paddle(result)
    if isinstance(result, tuple):
        return tuple(_wrap(r) for r in result)
    return result


def to_tensor(data, dtype=None, place=None, stop_gradient: bool = True) -> Tensor:
    if isinstance(dtype, str):
        dtype = getattr(hookgrad, dtype)
    if isinstance(data, _Tensor):
        data = data._data
    tensor = Tensor._make(hookgrad.tensor(data, dtype=dtype)._data)
    tensor.stop_gradient = stop_gradient
    return tensor


def _shape(shape) -> tuple:
    return tuple(shape) if isinstance(shape, (list, tuple)) else (shape,)


def ones(shape, dtype=None, name=None) -> Tensor:
    return _paddle(hookgrad.ones(*_shape(shape), dtype=getattr(hookgrad, dtype) if
                                 isinstance(dtype, str) else dtype))


def zeros(shape, dtype=None, name=None) -> Tensor:
    return _paddle(hookgrad.zeros(*_shape(shape), dtype=getattr(hookgrad, dtype) if
                                  isinstance(dtype, str) else dtype))


def multiply(x, y, name=None) -> Tensor:
    return _paddle(hookgrad.mul(x, y))


def add(x, y, name=None) -> Tensor:
    return _paddle(hookgrad.add(x, y))


def matmul(x, y, transpose_x: bool = False, transpose_y: bool = False, name=None) -> Tensor:
    if transpose_x:
        x = x.transpose(-1, -2)
    if transpose_y:
        y = y.transpose(-1, -2)
    return _paddle(hookgrad.matmul(x, y))


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=False):
    return _wrap(hookgrad.autograd.grad(outputs, inputs, grad_outputs, retain_graph,
                                        create_graph, allow_unused=allow_unused))


# ---------------------------------------------------------------------------------------------
# paddle.autograd
# ---------------------------------------------------------------------------------------------
class PyLayerContext(BackwardCFunction):
    """Paddle's ctx: ``saved_tensor()`` is a method; backward returns one grad per tensor."""

    def saved_tensor(self) -> tuple:
        return tuple(_wrap(t) for t in self.saved_tensors)

    def apply(self, grad_outputs: tuple) -> tuple:
        grads = self._forward_cls.backward(self, *[_wrap(g) for g in grad_outputs])
        grads = grads if isinstance(grads, tuple) else (grads,)
        if len(grads) != len(self._tensor_positions):
            raise RuntimeError(f"{self._forward_cls.__name__}.backward returned {len(grads)} "
                               f"gradients, but forward has {len(self._tensor_positions)} tensor "
                               "inputs")
        return grads


class PyLayer(Function):
    """Paddle's custom layer: static ``forward(ctx, *args)`` and ``backward(ctx, *grads)``."""

    _ctx_base = PyLayerContext

    @classmethod
    def apply(cls, *args, **kwargs):
        return _wrap(super().apply(*args, **kwargs))


class saved_tensors_hooks(_saved_tensors_hooks):
    """paddle.autograd.saved_tensors_hooks: hooks see and return Paddle tensors."""

    def __init__(self, pack_hook, unpack_hook):
        super().__init__(lambda tensor: pack_hook(_paddle(tensor)), unpack_hook)


autograd = types.ModuleType(__name__ + ".autograd")
autograd.PyLayer = PyLayer
autograd.PyLayerContext = PyLayerContext
autograd.saved_tensors_hooks = saved_tensors_hooks
autograd.grad = grad
autograd.backward = hookgrad.autograd.backward
sys.modules[autograd.__name__] = autograd

float32, float64, int64, int32 = "float32", "float64", "int64", "int32"
no_grad = hookgrad.no_grad
seed = hookgrad.manual_seed
