"""Ready-made parametrizations: ``orthogonal``, ``spectral_norm`` and ``weight_norm``.

Each registers a small module with :func:`~hookgrad.nn.utils.parametrize.register_parametrization`,
so the trained tensors live under ``parametrizations.<name>`` exactly as in torch and
checkpoints move between the two libraries.
"""
from __future__ import annotations

from enum import Enum, auto
from typing import Optional

import hookgrad
from ...autograd import grad_mode
from ...tensor import Tensor
from .. import functional as F
from ..modules.module import Module
from . import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _is_orthogonal(Q: Tensor) -> bool:
    n, k = Q.size(-2), Q.size(-1)
    identity = hookgrad.eye(k, dtype=Q.dtype)
    tolerance = 10.0 * n * hookgrad.finfo(Q.dtype).eps
    return hookgrad.allclose(Q.mH @ Q, identity, atol=tolerance)


def _make_orthogonal(A: Tensor) -> Tensor:
    # Q of A's QR decomposition with the signs that make R's diagonal positive, so it is unique
    reflectors, tau = hookgrad.geqrf(A)
    Q = hookgrad.linalg.householder_product(reflectors, tau)
    Q *= reflectors.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)
    return Q


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


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
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        """The orthogonal matrix (batch) that ``X`` parametrizes."""
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:
                X = hookgrad.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)],
                                 dim=-1)
            A = X - X.mH
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = hookgrad.matrix_exp(A)
            else:
                identity = hookgrad.eye(n, dtype=A.dtype)
                Q = hookgrad.linalg.solve(hookgrad.add(identity, A, alpha=-0.5),
                                          hookgrad.add(identity, A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = hookgrad.linalg.householder_product(A, tau)
            # the diagonal of X (rounded toward zero) picks the sign of each column
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        """What to store so that ``forward`` returns ``Q`` (orthogonalized first if it is not
        orthogonal); with a trivialization this sets ``base`` and stores -I."""
        with grad_mode.no_grad():
            if Q.shape != self.shape:
                raise ValueError(f"Expected a matrix or batch of matrices of shape "
                                 f"{self.shape}. Got a tensor of shape {Q.shape}.")
            Q_init = Q
            n, k = Q.size(-2), Q.size(-1)
            transpose = n < k
            if transpose:
                Q = Q.mT
                n, k = k, n
            if not hasattr(self, "base"):
                if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                    raise NotImplementedError(
                        "It is not possible to assign to the matrix exponential or the Cayley "
                        "parametrizations when use_trivialization=False.")
                A, tau = hookgrad.geqrf(Q)
                # forward turns the diagonal into column signs; a zero tau flips its reflector
                A.diagonal(dim1=-2, dim2=-1).sign_()
                A.diagonal(dim1=-2, dim2=-1)[tau == 0.0] *= -1
                return A.mT if transpose else A
            if n == k:
                Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
            else:
                completion = hookgrad.randn(*(Q.size()[:-2] + (n, n - k)), dtype=Q.dtype)
                Q = _make_orthogonal(hookgrad.cat([Q, completion], dim=-1))
            self.base = Q
            negative_identity = hookgrad.zeros_like(Q_init)
            negative_identity.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return negative_identity


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
