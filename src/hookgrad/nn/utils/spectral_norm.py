"""The hook-based spectral normalization: ``weight`` is kept as ``weight_orig`` with the power
iteration's vectors as buffers ``weight_u`` and ``weight_v``, and a forward pre-hook sets
``weight = weight_orig / sigma`` before every call. A state-dict hook writes a version into the
checkpoint's metadata, and a load hook upgrades checkpoints without it (which stored ``weight``
and no ``weight_v``), as torch's do.
"""
from __future__ import annotations

from typing import Any, TypeVar

import hookgrad
from ...autograd import grad_mode
from ...tensor import Tensor
from .. import functional as F
from ..modules.module import Module
from ..parameter import Parameter, UninitializedParameter

__all__ = ["SpectralNorm", "SpectralNormLoadStateDictPreHook", "SpectralNormStateDictHook",
           "spectral_norm", "remove_spectral_norm"]

T_module = TypeVar("T_module", bound=Module)


class SpectralNorm:
    """The forward pre-hook: one or more power-iteration steps (in training mode) on
    ``<name>_u``/``<name>_v``, then ``<name> = <name>_orig / (u . W v)``."""

    # the checkpoint layout: version 1 stores ``<name>_v`` (and no ``<name>``)
    _version: int = 1
    name: str
    n_power_iterations: int
    dim: int
    eps: float

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        """The weight as a matrix whose rows run along ``dim``."""
        if self.dim != 0:
            weight = weight.permute(self.dim, *[d for d in range(weight.dim()) if d != self.dim])
        return weight.reshape(weight.size(0), -1)

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        """``<name>_orig / sigma``, updating ``u`` and ``v`` in place first if asked."""
        weight, u, v = (getattr(module, self.name + suffix) for suffix in ("_orig", "_u", "_v"))
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with grad_mode.no_grad():
                for _ in range(self.n_power_iterations):
                    v = F.normalize(hookgrad.mv(weight_mat.t(), u), dim=0, eps=self.eps, out=v)
                    u = F.normalize(hookgrad.mv(weight_mat, v), dim=0, eps=self.eps, out=u)
                # copies, so the next step's in-place update leaves this graph's saved u, v
                u = u.clone(memory_format=hookgrad.contiguous_format)
                v = v.clone(memory_format=hookgrad.contiguous_format)
        sigma = hookgrad.dot(u, hookgrad.mv(weight_mat, v))
        return weight / sigma

    def remove(self, module: Module) -> None:
        """Leave one plain parameter holding the current normalized weight."""
        with grad_mode.no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        for suffix in ("", "_u", "_v", "_orig"):
            delattr(module, self.name + suffix)
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name,
                self.compute_weight(module, do_power_iteration=module.training))

    def _solve_v_and_rescale(self, weight_mat: Tensor, u: Tensor, target_sigma: Tensor) -> Tensor:
        # the v with u . W v == target_sigma, for checkpoints that stored no v
        v = hookgrad.linalg.multi_dot([weight_mat.t().mm(weight_mat).pinverse(), weight_mat.t(),
                                       u.unsqueeze(1)]).squeeze(1)
        return v.mul_(target_sigma / hookgrad.dot(u, hookgrad.mv(weight_mat, v)))

    @staticmethod
    def apply(module: Module, name: str, n_power_iterations: int, dim: int,
              eps: float) -> "SpectralNorm":
        """Move ``<name>`` to ``<name>_orig``, draw ``u`` and ``v`` and register the hooks."""
        if any(isinstance(hook, SpectralNorm) and hook.name == name
               for hook in module._forward_pre_hooks.values()):
            raise RuntimeError(f"Cannot register two spectral_norm hooks on the same "
                               f"parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        _check_weight_ready(weight, name)
        with grad_mode.no_grad():
            u, v = fn._random_unit_vectors(weight)
        fn._install(module, weight, u, v)
        # the checkpoint hooks (version metadata, upgrade of old layouts), then the forward one
        module._register_state_dict_hook(SpectralNormStateDictHook(fn))
        module._register_load_state_dict_pre_hook(SpectralNormLoadStateDictPreHook(fn))
        module.register_forward_pre_hook(fn)
        return fn

    def _random_unit_vectors(self, weight: Tensor):
        # the power iteration starts from normal draws scaled to length one: u first, then v
        shape = self.reshape_weight_to_matrix(weight).size()
        return tuple(F.normalize(weight.new_empty(length).normal_(0, 1), dim=0, eps=self.eps)
                     for length in shape)

    def _install(self, module: Module, weight: Tensor, u: Tensor, v: Tensor) -> None:
        delattr(module, self.name)
        module.register_parameter(f"{self.name}_orig", weight)
        for suffix, vector in (("_u", u), ("_v", v)):
            module.register_buffer(self.name + suffix, vector)
        # a plain attribute until the first forward: the pre-hook replaces it on every call
        setattr(module, self.name, weight.data)


def _check_weight_ready(weight, name: str) -> None:
    if isinstance(weight, UninitializedParameter):
        raise ValueError("The module passed to `SpectralNorm` can't have uninitialized "
                         "parameters. Make sure to run the dummy forward before applying "
                         "spectral normalization")
    if weight is None:
        raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")


class SpectralNormLoadStateDictPreHook:
    """Upgrades a checkpoint written before version 1 (it has ``<name>`` and ``<name>_u`` but no
    ``<name>_v``) by solving for the ``v`` that reproduces its sigma."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, state_dict, prefix, local_metadata, strict, missing_keys,
                 unexpected_keys, error_msgs) -> None:
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version", None)
        if version is not None and version >= 1:
            return
        weight_key = prefix + fn.name
        if version is None and weight_key not in state_dict and all(
                weight_key + suffix in state_dict for suffix in ("_orig", "_u", "_v")):
            return  # already the current layout, only the metadata was lost
        orig_key, u_key = weight_key + "_orig", weight_key + "_u"
        absent = [key for key in (orig_key, weight_key, u_key) if key not in state_dict]
        if absent:
            # an old checkpoint without what the upgrade needs: report it, change nothing
            if strict:
                missing_keys.extend(absent)
            return
        with grad_mode.no_grad():
            unnormalized = state_dict[orig_key]
            # the old layout stored the normalized weight; the ratio recovers its sigma
            sigma = (unnormalized / state_dict.pop(weight_key)).mean()
            state_dict[weight_key + "_v"] = fn._solve_v_and_rescale(
                fn.reshape_weight_to_matrix(unnormalized), state_dict[u_key], sigma)


class SpectralNormStateDictHook:
    """Records ``{"<name>.version": 1}`` under ``metadata["spectral_norm"]`` of the module's
    entry in ``state_dict._metadata``, so the load hook knows the layout."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata) -> None:
        versions = local_metadata.setdefault("spectral_norm", {})
        key = self.fn.name + ".version"
        if key in versions:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        versions[key] = self.fn._version


def spectral_norm(module: T_module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int = None) -> T_module:
    """Divide ``module.<name>`` by its spectral norm before every forward, estimated by power
    iteration (``n_power_iterations`` steps per call in training mode, none in eval).

    ``dim`` is the weight's output dim (default 0, 1 for transposed convolutions). The hooks
    are a forward pre-hook, a state-dict hook (the version metadata) and a load-state-dict
    pre-hook, as in torch; ``u`` and ``v`` come from the default generator. Returns ``module``.
    """
    if dim is None:
        transposed = (hookgrad.nn.ConvTranspose1d, hookgrad.nn.ConvTranspose2d,
                      hookgrad.nn.ConvTranspose3d)
        dim = 1 if isinstance(module, transposed) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module: T_module, name: str = "weight") -> T_module:
    """Undo :func:`spectral_norm`: one plain parameter with the current normalized value, and
    all three hooks removed. Returns ``module``."""
    if not _drop_hook(module._forward_pre_hooks, name,
                      lambda hook: isinstance(hook, SpectralNorm) and hook,
                      on_found=lambda hook: hook.remove(module)):
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    # the checkpoint hooks go too; each knows its weight's name through its SpectralNorm
    _drop_hook(module._state_dict_hooks, name,
               lambda hook: isinstance(hook, SpectralNormStateDictHook) and hook.fn)
    _drop_hook(module._load_state_dict_pre_hooks, name,
               lambda hook: isinstance(hook, SpectralNormLoadStateDictPreHook) and hook.fn)
    return module


def _drop_hook(hooks: dict, name: str, norm_of, on_found=None) -> bool:
    """Delete the first hook in ``hooks`` whose SpectralNorm (``norm_of(hook)``, falsy when
    the hook is of another kind) is for ``name``; whether one was found."""
    for key in list(hooks):
        norm = norm_of(hooks[key])
        if norm and norm.name == name:
            if on_found is not None:
                on_found(hooks[key])
            del hooks[key]
            return True
    return False
