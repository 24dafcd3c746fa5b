"""InstanceNorm1d/2d/3d: per-sample, per-channel normalisation (``instance_norm``), with an
optional affine map and optional running statistics (both off by default, as in torch)."""
from __future__ import annotations

from typing import Optional

from ..._warnings import warn
from ...tensor import Tensor
from ..ops.instancenorm import instance_norm
from .normalization import _BatchNorm

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]


class _InstanceNorm(_BatchNorm):
    _spatial = 1  # spatial dims; an input of 1 + _spatial dims is one unbatched sample

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: Optional[float] = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device=None,
                 dtype=None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)

    def _check_input_dim(self, input: Tensor) -> None:
        nd = self._spatial
        if input.ndim not in (nd + 1, nd + 2):
            raise ValueError(f"expected {nd + 1}D or {nd + 2}D input (got {input.ndim}D input)")

    def _apply_instance_norm(self, input: Tensor) -> Tensor:
        return instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                             self.training or not self.track_running_stats,
                             self.momentum if self.momentum is not None else 0.0, self.eps)

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        feature_dim = input.ndim - self._spatial - 1
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match "
                                 f"num_features ({self.num_features}), but got: "
                                 f"{input.shape[feature_dim]}.")
            warn(f"input's size at dim={feature_dim} does not match num_features. You "
                 "can silence this warning by not passing in num_features, which is "
                 "not used because affine=False")
        if input.ndim == self._spatial + 1:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs) -> None:
        """Checkpoints from before running statistics were off by default carry them: drop
        them with torch's message when this layer does not track any."""
        if local_metadata.get("version", None) is None and not self.track_running_stats:
            keys = [prefix + name for name in ("running_mean", "running_var")
                    if prefix + name in state_dict]
            if keys:
                kind = type(self).__name__
                error_msgs.append(
                    "Unexpected running stats buffer(s) {} for {} with track_running_stats=False."
                    " If state_dict is a checkpoint saved before 0.4.0, this may be expected "
                    "because {} does not track running stats by default since 0.4.0. Please "
                    "remove these keys from state_dict. If the running stats are actually "
                    "needed, instead set track_running_stats=True in {} to enable them. See the "
                    "documentation of {} for details.".format(
                        " and ".join(f'"{k}"' for k in keys), kind, kind, kind, kind))
                for key in keys:
                    state_dict.pop(key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


class InstanceNorm1d(_InstanceNorm):
    """Instance norm of (N, C, L) or (C, L) inputs."""

    _spatial = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance norm of (N, C, H, W) or (C, H, W) inputs."""

    _spatial = 2


class InstanceNorm3d(_InstanceNorm):
    """Instance norm of (N, C, D, H, W) or (C, D, H, W) inputs."""

    _spatial = 3
