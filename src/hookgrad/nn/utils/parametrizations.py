"""Ready-made parametrizations: ``orthogonal``, ``spectral_norm`` and ``weight_norm``.

Each registers a small module with :func:`~hookgrad.nn.utils.parametrize.register_parametrization`,
so the trained tensors live under ``parametrizations.<name>`` exactly as in torch and
checkpoints move between the two libraries.
"""
from __future__ import annotations

from enum import Enum
from typing import Optional

import hookgrad
from ...autograd import grad_mode
from ...tensor import Tensor
from .. import functional as F
from ..modules.module import Module
from . import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _is_orthogonal(Q: Tensor) -> bool:
    rows, cols = Q.shape[-2:]
    slack = 10.0 * rows * hookgrad.finfo(Q.dtype).eps
    return hookgrad.allclose(Q.mH @ Q, hookgrad.eye(cols, dtype=Q.dtype), atol=slack)


def _make_orthogonal(A: Tensor) -> Tensor:
    # the Q factor of A = QR, its columns flipped so that R's diagonal is positive: that
    # choice of signs makes the factor unique
    packed, tau = hookgrad.geqrf(A)
    flips = packed.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)
    return hookgrad.linalg.householder_product(packed, tau) * flips


# the three ways of turning an unconstrained matrix into an orthogonal one
_OrthMaps = Enum("_OrthMaps", "matrix_exp cayley householder")


class _Orthogonal(Module):
    """Maps an unconstrained matrix to one with orthonormal columns (or rows, if wide).

    ``matrix_exp`` and ``cayley`` read the lower triangle as a skew-symmetric matrix A and take
    exp(A) or (I - A/2)^-1 (I + A/2); ``householder`` reads the strict lower triangle as
    Householder reflectors. With ``use_trivialization`` the result is multiplied by a stored
    ``base`` that ``right_inverse`` sets, so any orthogonal matrix can be assigned.
    """

    base: Tensor

    def __init__(self, weight: Tensor, orthogonal_map: _OrthMaps, *,
                 use_trivialization: bool = True) -> None:
        super().__init__()
        if orthogonal_map is _OrthMaps.householder and weight.is_complex():
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.orthogonal_map = orthogonal_map
        self.shape = weight.shape
        if use_trivialization:
            # filled by right_inverse; its presence is what switches the trivialization on
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        """The orthogonal matrix (batch) that ``X`` parametrizes."""
        wide = X.size(-2) < X.size(-1)
        tall = X.mT if wide else X
        if self.orthogonal_map is _OrthMaps.householder:
            Q = self._from_reflectors(tall)
        else:
            Q = self._from_skew(tall)
        if hasattr(self, "base"):
            Q = self.base @ Q
        return Q.mT if wide else Q

    def _from_skew(self, tall: Tensor) -> Tensor:
        # a square skew-symmetric matrix from the lower triangle (padded with zero columns
        # when tall); its exponential or Cayley transform is orthogonal
        rows, cols = tall.shape[-2:]
        lower = tall.tril()
        if rows > cols:
            padding = lower.new_zeros(rows, rows - cols).expand(*lower.shape[:-2], -1, -1)
            lower = hookgrad.cat([lower, padding], dim=-1)
        skew = lower - lower.mH
        if self.orthogonal_map is _OrthMaps.matrix_exp:
            square = hookgrad.matrix_exp(skew)
        else:
            eye = hookgrad.eye(rows, dtype=skew.dtype)
            half = 0.5 * skew
            square = hookgrad.linalg.solve(eye - half, eye + half)
        return square[..., :cols] if rows > cols else square

    @staticmethod
    def _from_reflectors(tall: Tensor) -> Tensor:
        vectors = tall.tril(diagonal=-1)
        # with an implicit unit head, tau = 2 / ||v||^2 makes each factor a reflection
        tau = 2.0 / (1.0 + (vectors * vectors).sum(dim=-2))
        product = hookgrad.linalg.householder_product(vectors, tau)
        # the diagonal of the input, rounded toward zero, picks each column's sign
        return product * tall.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)

    def right_inverse(self, Q: Tensor) -> Tensor:
        """What to store so that ``forward`` returns ``Q`` (orthogonalized first if it is not
        orthogonal); with a trivialization this sets ``base`` and stores -I."""
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape "
                             f"{self.shape}. Got a tensor of shape {Q.shape}.")
        with grad_mode.no_grad():
            wide = Q.size(-2) < Q.size(-1)
            tall = Q.mT if wide else Q
            if not hasattr(self, "base"):
                stored = self._reflectors_for(tall)
                return stored.mT if wide else stored
            self.base = self._orthogonal_base(tall)
            # forward at -I gives the identity for every map, so the product is the base
            start = hookgrad.zeros_like(Q)
            start.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return start

    def _reflectors_for(self, tall: Tensor) -> Tensor:
        if self.orthogonal_map is not _OrthMaps.householder:
            raise NotImplementedError(
                "It is not possible to assign to the matrix exponential or the Cayley "
                "parametrizations when use_trivialization=False.")
        packed, tau = hookgrad.geqrf(tall)
        # forward reads the diagonal as column signs; a zero tau means a flipped reflector
        diagonal = packed.diagonal(dim1=-2, dim2=-1)
        diagonal.sign_()
        diagonal[tau == 0.0] *= -1
        return packed

    @staticmethod
    def _orthogonal_base(tall: Tensor) -> Tensor:
        rows, cols = tall.shape[-2:]
        if rows > cols:
            # complete the columns to a square matrix with random ones, then orthogonalize
            extra = hookgrad.randn(*tall.shape[:-2], rows, rows - cols, dtype=tall.dtype)
            return _make_orthogonal(hookgrad.cat([tall, extra], dim=-1))
        return tall.clone() if _is_orthogonal(tall) else _make_orthogonal(tall)


def orthogonal(module: Module, name: str = "weight", orthogonal_map: Optional[str] = None, *,
               use_trivialization: bool = True) -> Module:
    """Constrain ``module.<name>`` (a matrix or batch) to be orthogonal, or to have orthonormal
    columns/rows when it is not square.

    ``orthogonal_map`` is ``"matrix_exp"`` (default for square or complex), ``"cayley"`` or
    ``"householder"`` (default otherwise). With ``use_trivialization=True`` (default) the
    current weight is kept as the ``base`` buffer and the trained tensor starts at the map's
    origin, which optimizes better and lets any orthogonal value be assigned. Returns
    ``module``.
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. "
                         f"Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.size(-2) == weight.size(-1)
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    kind = getattr(_OrthMaps, orthogonal_map, None)
    if kind is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    parametrization = _Orthogonal(weight, kind, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, parametrization, unsafe=True)
    return module


class _WeightNorm(Module):
    """``w = g v / ||v||``: stores the magnitude ``g`` (``original0``) and direction ``v``
    (``original1``)."""

    def __init__(self, dim: Optional[int] = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        """The weight rebuilt from magnitude and direction."""
        return hookgrad._weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor):
        """Split ``weight`` into (its norm over all dims but ``dim``, itself)."""
        return hookgrad.norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int = 0) -> Module:
    """Reparametrize ``module.<name>`` as magnitude times direction, ``g * v / ||v||``.

    ``g`` is stored as ``parametrizations.<name>.original0`` and ``v`` as ``original1``; the
    norm is over every dim but ``dim`` (``None``: over the whole tensor). Checkpoints of the
    hook-based ``nn.utils.weight_norm`` (``<name>_g``, ``<name>_v``) still load: a load hook
    renames their keys. Returns ``module``.
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def rename_old_keys(state_dict, prefix, local_metadata, strict, missing_keys,
                        unexpected_keys, error_msgs) -> None:
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            magnitude, direction = state_dict.pop(g_key), state_dict.pop(v_key)
            state_dict[f"{prefix}parametrizations.{name}.original0"] = magnitude
            state_dict[f"{prefix}parametrizations.{name}.original1"] = direction

    module._register_load_state_dict_pre_hook(rename_old_keys)
    return module


class _SpectralNorm(Module):
    """``w / sigma``, sigma the largest singular value of ``w`` seen as a matrix (dim ``dim``
    first), estimated by power iteration on the buffers ``_u`` and ``_v``; the iteration runs
    only in training mode, so evaluation reuses the last estimate."""

    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            rows, columns = weight_mat.size()
            u = weight_mat.new_empty(rows).normal_(0, 1)
            v = weight_mat.new_empty(columns).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            # start from a good estimate rather than random vectors
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        # u and v are updated in place (out=), so a copy of the module sees the same buffers
        with grad_mode.no_grad():
            for _ in range(n_power_iterations):
                self._u = F.normalize(hookgrad.mv(weight_mat, self._v), dim=0, eps=self.eps,
                                      out=self._u)
                self._v = F.normalize(hookgrad.mv(weight_mat.mH, self._u), dim=0,
                                      eps=self.eps, out=self._v)

    def forward(self, weight: Tensor) -> Tensor:
        """``weight`` divided by its estimated spectral norm (a vector is just normalized)."""
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        # clones, so the next in-place update does not bump the versions backward checks
        u = self._u.clone(memory_format=hookgrad.contiguous_format)
        v = self._v.clone(memory_format=hookgrad.contiguous_format)
        sigma = hookgrad.vdot(u, hookgrad.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        """Any assigned value is stored as is; ``forward`` rescales it."""
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: Optional[int] = None) -> Module:
    """Divide ``module.<name>`` by its spectral norm (largest singular value), estimated by
    ``n_power_iterations`` power-iteration steps per forward in training mode.

    The weight is read as a matrix with dim ``dim`` as rows (default 0, 1 for transposed
    convolutions); the iteration vectors are the buffers ``parametrizations.<name>.0._u`` and
    ``_v``, drawn from the default generator at registration. Returns ``module``.
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        transposed = (hookgrad.nn.ConvTranspose1d, hookgrad.nn.ConvTranspose2d,
                      hookgrad.nn.ConvTranspose3d)
        dim = 1 if isinstance(module, transposed) else 0
    parametrization = _SpectralNorm(weight, n_power_iterations, dim, eps)
    parametrize.register_parametrization(module, name, parametrization)
    return module
