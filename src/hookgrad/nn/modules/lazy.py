"""Lazy modules: layers that read their input size (``in_features``, ``in_channels``,
``num_features``) off their first input instead of taking it in the constructor.

Until then their parameters (and a lazy norm's running statistics) are
``UninitializedParameter`` / ``UninitializedBuffer``. A forward pre-hook, registered when the
module is built and so ahead of any hook of the user's, gives them their shapes from the first
input, draws their values as the ordinary layer would, removes itself and turns the module
into that ordinary layer (``cls_to_become``). Loading a state dict into a lazy module gives its
parameters the checkpoint's shapes first, so a trained model loads without a dummy forward.
"""
from __future__ import annotations

from typing import Any

from ... import _dtype
from ...ops.creation import tensor
from ...tensor import Tensor
from ..parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from .conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from .conv3d import Conv3d, ConvTranspose3d
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .linear import Linear
from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d


class LazyModuleMixin:
    """What every lazy module shares: the inferring pre-hook, the state-dict load hook and
    ``has_uninitialized_params``. A subclass writes ``initialize_parameters(*inputs)`` (and sets
    ``cls_to_become``)."""

    cls_to_become: Any = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._add_lazy_hooks()

    def _add_lazy_hooks(self) -> None:
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters,
                                                               with_kwargs=True)

    def has_uninitialized_params(self) -> bool:
        """True while a parameter or buffer still waits for its shape."""
        return any(is_lazy(value) for value in
                   list(self._parameters.values()) + list(self._buffers.values()))

    def initialize_parameters(self, *args, **kwargs) -> None:
        """Shapes and draws the parameters from the first input (each lazy layer's own)."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def _infer_parameters(self, module, args: tuple, kwargs: dict = None) -> None:
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        del module._initialize_hook, module._load_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys,
                        unexpected_keys, error_msgs) -> None:
        for name, value in list(self._parameters.items()) + list(self._buffers.items()):
            key = prefix + name
            if value is not None and is_lazy(value) and key in state_dict:
                saved = state_dict[key]
                if isinstance(saved, Tensor) and not is_lazy(saved):
                    value.materialize(saved.shape)

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        # a parameter still waiting for its shape is saved as itself, so it loads back lazy
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars or is_lazy(param) else (
                    param.detach())
        for name, buffer in self._buffers.items():
            if buffer is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buffer if keep_vars or is_lazy(buffer) else (
                    buffer.detach())

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with "
                           "`DataParallel`. Run a dummy forward pass to correctly initialize "
                           "the modules")


class LazyLinear(LazyModuleMixin, Linear):
    """A ``Linear`` whose ``in_features`` is its first input's last dim."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(0, 0, False, device=device, dtype=dtype)
        self.weight = UninitializedParameter(dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def reset_parameters(self) -> None:
        """Draws the parameters once they have shapes (nothing to draw before)."""
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args, **kwargs) -> None:
        """Shapes the parameters from ``input``'s last dim and draws them."""
        if self.has_uninitialized_params():
            self.in_features = input.shape[-1]
            self.weight.materialize((self.out_features, self.in_features))
            if self.bias is not None:
                self.bias.materialize((self.out_features,))
            self.reset_parameters()


class _LazyConvMixin(LazyModuleMixin):
    """``in_channels`` from the first input's channel dim (dim 0 of an unbatched input)."""

    _spatial_dims = 0

    def _lazy_parameters(self, out_channels: int, bias: bool, dtype) -> None:
        self.weight = UninitializedParameter(dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def reset_parameters(self) -> None:
        """Draws the parameters once they have shapes (nothing to draw before)."""
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args, **kwargs) -> None:
        """Shapes weight and bias from the input's channels and draws them."""
        if not self.has_uninitialized_params():
            return
        self.in_channels = self._get_in_channels(input)
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if self.transposed:
            shape = (self.in_channels, self.out_channels // self.groups)
        else:
            shape = (self.out_channels, self.in_channels // self.groups)
        self.weight.materialize(shape + tuple(self.kernel_size))
        if self.bias is not None:
            self.bias.materialize((self.out_channels,))
        self.reset_parameters()

    def _get_in_channels(self, input: Tensor) -> int:
        unbatched = self._spatial_dims + 1
        if input.ndim not in (unbatched, unbatched + 1):
            raise RuntimeError(f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) "
                               f"input to {self.__class__.__name__}, but got input of size: "
                               f"{input.shape}")
        return input.shape[1] if input.ndim == unbatched + 1 else input.shape[0]


def _lazy_conv(plain: type, spatial_dims: int) -> type:
    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None,
                 dtype=None) -> None:
        plain.__init__(self, 0, 0, kernel_size, stride, padding, dilation, groups, False,
                       padding_mode, device=device, dtype=dtype)
        self._add_lazy_hooks()
        self._lazy_parameters(out_channels, bias, dtype)

    return _lazy_class(plain, spatial_dims, __init__)


def _lazy_conv_transpose(plain: type, spatial_dims: int) -> type:
    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros",
                 device=None, dtype=None) -> None:
        plain.__init__(self, 0, 0, kernel_size, stride, padding, output_padding, groups, False,
                       dilation, padding_mode, device=device, dtype=dtype)
        self._add_lazy_hooks()
        self._lazy_parameters(out_channels, bias, dtype)

    return _lazy_class(plain, spatial_dims, __init__)


def _lazy_class(plain: type, spatial_dims: int, init) -> type:
    name = "Lazy" + plain.__name__
    init.__qualname__ = f"{name}.__init__"
    doc = (f"A ``{plain.__name__}`` whose ``in_channels`` is read off its first input "
           f"(dim 1, or dim 0 of an unbatched input).")
    return type(name, (_LazyConvMixin, plain), {
        "__init__": init, "__doc__": doc, "cls_to_become": plain,
        "_spatial_dims": spatial_dims, "__module__": __name__})


LazyConv1d = _lazy_conv(Conv1d, 1)
LazyConv2d = _lazy_conv(Conv2d, 2)
LazyConv3d = _lazy_conv(Conv3d, 3)
LazyConvTranspose1d = _lazy_conv_transpose(ConvTranspose1d, 1)
LazyConvTranspose2d = _lazy_conv_transpose(ConvTranspose2d, 2)
LazyConvTranspose3d = _lazy_conv_transpose(ConvTranspose3d, 3)


class _LazyNormMixin(LazyModuleMixin):
    """``num_features`` from the first input's dim 1; the affine parameters and running
    statistics wait for it."""

    def __init__(self, eps: float = 1e-5, momentum=0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None) -> None:
        super().__init__(0, eps, momentum, False, False, device=device, dtype=dtype)
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = UninitializedParameter(dtype=dtype)
            self.bias = UninitializedParameter(dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(dtype=dtype)
            self.running_var = UninitializedBuffer(dtype=dtype)
            self.num_batches_tracked = tensor(0, dtype=_dtype.int64)

    def reset_parameters(self) -> None:
        """Resets statistics and affine parameters once they have shapes."""
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args, **kwargs) -> None:
        """Shapes the parameters and statistics from the input's dim 1."""
        if not self.has_uninitialized_params():
            return
        self.num_features = input.shape[1]
        if self.affine:
            self.weight.materialize((self.num_features,))
            self.bias.materialize((self.num_features,))
        if self.track_running_stats:
            self.running_mean.materialize((self.num_features,))
            self.running_var.materialize((self.num_features,))
        self.reset_parameters()


def _lazy_norm(plain: type) -> type:
    name = "Lazy" + plain.__name__
    doc = f"A ``{plain.__name__}`` whose ``num_features`` is its first input's dim 1."
    return type(name, (_LazyNormMixin, plain), {"__doc__": doc, "cls_to_become": plain,
                                                "__module__": __name__})


LazyBatchNorm1d = _lazy_norm(BatchNorm1d)
LazyBatchNorm2d = _lazy_norm(BatchNorm2d)
LazyBatchNorm3d = _lazy_norm(BatchNorm3d)
LazyInstanceNorm1d = _lazy_norm(InstanceNorm1d)
LazyInstanceNorm2d = _lazy_norm(InstanceNorm2d)
LazyInstanceNorm3d = _lazy_norm(InstanceNorm3d)
