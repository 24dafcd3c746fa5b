"""PaddlePaddle's spelling of hookgrad: ``import hookgrad.compat.paddle as paddle``.

A thin layer: Paddle's names (``to_tensor``, ``multiply``, ``stop_gradient``, ``PyLayer``,
``ctx.saved_tensor()``) map onto the same Tensor, Function and saved-tensor hooks, so everything a
Paddle example does passes through hookgrad's single door for saved tensors.

Written only against the public API a torch user has (``Tensor.as_subclass``, ``Function``,
``saved_tensors_hooks``), so it shows how to put another framework's spelling over hookgrad.
"""
from __future__ import annotations

import sys
import types

import numpy as np

from typing import Any, Callable

import hookgrad
from hookgrad.autograd import Function
from hookgrad.autograd.graph import saved_tensors_hooks as _saved_tensors_hooks

_Tensor = hookgrad.Tensor

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
        """Paddle's ``numpy()`` works on tensors that need a gradient too."""
        return _Tensor.numpy(self.detach())

    @property
    def shape(self) -> list:
        return list(self.size())

    @property
    def grad(self) -> "Tensor | None":
        grad = _Tensor.grad.fget(self)
        return None if grad is None else _paddle(grad)

    @grad.setter
    def grad(self, value) -> None:
        _Tensor.grad.fset(self, value)

    def __repr__(self) -> str:
        array = self.numpy()
        body = np.array2string(array, separator=", ", prefix=" " * 7,
                               formatter={"float_kind": lambda v: f"{v:.8f}".rstrip("0")})
        return (f"Tensor(shape={list(array.shape)}, dtype="
                f"{_PADDLE_DTYPES.get(array.dtype.name, array.dtype.name)}, "
                f"place=Place(cpu), stop_gradient={self.stop_gradient},\n       {body})")


def _returning_paddle(name: str) -> Callable:
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
    """The same tensor seen through Paddle's class: an alias sharing data, version counter and
    history (torch's ``as_subclass``)."""
    if isinstance(tensor, Tensor):
        return tensor
    return tensor.as_subclass(Tensor)


def _wrap(result: Any) -> Any:
    if isinstance(result, _Tensor):
        return _paddle(result)
    if isinstance(result, tuple):
        return tuple(_wrap(r) for r in result)
    return result


def to_tensor(data: Any, dtype: Any = None, place: Any = None,
              stop_gradient: bool = True) -> Tensor:
    """A new leaf holding a copy of ``data`` (Paddle's default: no gradient)."""
    if isinstance(dtype, str):
        dtype = getattr(hookgrad, dtype)
    if isinstance(data, _Tensor):
        data = data.detach()
    tensor = hookgrad.tensor(data, dtype=dtype).as_subclass(Tensor)
    tensor.stop_gradient = stop_gradient
    return tensor


def _shape(shape: Any) -> tuple:
    return tuple(shape) if isinstance(shape, (list, tuple)) else (shape,)


def ones(shape: Any, dtype: Any = None, name: Any = None) -> Tensor:
    return _paddle(hookgrad.ones(*_shape(shape), dtype=getattr(hookgrad, dtype) if
                                 isinstance(dtype, str) else dtype))


def zeros(shape: Any, dtype: Any = None, name: Any = None) -> Tensor:
    return _paddle(hookgrad.zeros(*_shape(shape), dtype=getattr(hookgrad, dtype) if
                                  isinstance(dtype, str) else dtype))


def multiply(x: Any, y: Any, name: Any = None) -> Tensor:
    return _paddle(hookgrad.mul(x, y))


def add(x: Any, y: Any, name: Any = None) -> Tensor:
    return _paddle(hookgrad.add(x, y))


def matmul(x: Any, y: Any, transpose_x: bool = False, transpose_y: bool = False,
           name: Any = None) -> Tensor:
    if transpose_x:
        x = x.transpose(-1, -2)
    if transpose_y:
        y = y.transpose(-1, -2)
    return _paddle(hookgrad.matmul(x, y))


def grad(outputs: Any, inputs: Any, grad_outputs: Any = None, retain_graph: Any = None,
         create_graph: bool = False, allow_unused: bool = False) -> Any:
    return _wrap(hookgrad.autograd.grad(outputs, inputs, grad_outputs, retain_graph,
                                        create_graph, allow_unused=allow_unused))


# ---------------------------------------------------------------------------------------------
# paddle.autograd
# ---------------------------------------------------------------------------------------------
class PyLayerContext:
    """Paddle's ctx over the ctx hookgrad gives a Function: attributes set on it (``ctx.scale``)
    and ``save_for_backward`` go to that ctx; ``saved_tensor()`` is Paddle's method."""

    __slots__ = ("ctx",)

    def __init__(self, ctx: Any) -> None:
        object.__setattr__(self, "ctx", ctx)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.ctx, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.ctx, name, value)

    def saved_tensor(self) -> tuple:
        return tuple(_wrap(t) for t in self.ctx.saved_tensors)


class PyLayer(Function):
    """Paddle's custom layer: static ``forward(ctx, *args)`` and ``backward(ctx, *grads)``;
    backward returns one gradient per tensor input (torch's returns one per input)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        forward, backward = cls.__dict__.get("forward"), cls.__dict__.get("backward")
        if isinstance(forward, staticmethod):
            cls.forward = staticmethod(_paddle_forward(forward.__func__))
        if isinstance(backward, staticmethod):
            cls.backward = staticmethod(_paddle_backward(cls.__name__, backward.__func__))
        super().__init_subclass__(**kwargs)

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        return _wrap(super().apply(*args, **kwargs))


def _paddle_forward(forward: Callable) -> Callable:
    def run(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        # which arguments are tensors: Paddle's backward returns a gradient for those only
        ctx.paddle_tensor_positions = tuple(i for i, a in enumerate(args)
                                            if isinstance(a, _Tensor))
        ctx.paddle_arg_count = len(args)
        return forward(PyLayerContext(ctx), *args, **kwargs)

    return run


def _paddle_backward(name: str, backward: Callable) -> Callable:
    def run(ctx: Any, *grad_outputs: Any) -> tuple:
        grads = backward(PyLayerContext(ctx), *[_wrap(g) for g in grad_outputs])
        grads = grads if isinstance(grads, tuple) else (grads,)
        positions = ctx.paddle_tensor_positions
        if len(grads) != len(positions):
            raise RuntimeError(f"{name}.backward returned {len(grads)} gradients, but forward "
                               f"has {len(positions)} tensor inputs")
        result = [None] * ctx.paddle_arg_count
        for position, grad in zip(positions, grads):
            result[position] = grad
        return tuple(result)

    return run


class saved_tensors_hooks(_saved_tensors_hooks):
    """paddle.autograd.saved_tensors_hooks: hooks see and return Paddle tensors."""

    def __init__(self, pack_hook: Callable, unpack_hook: Callable) -> None:
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
