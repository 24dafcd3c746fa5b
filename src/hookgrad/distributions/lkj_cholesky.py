"""The LKJ distribution over Cholesky factors of correlation matrices.

The density of L is proportional to prod_{i>=2} L_ii^(D - i + 2 eta - 2) (rows counted from 1),
with the normaliser of Lewandowski, Kurowicka and Joe (2009). Drawing is the onion method: row
i of the factor is a uniform direction in its first i coordinates scaled by the square root of
a Beta draw (see ``gamma``'s note for Beta's sampler), and the diagonal fills each row to unit
length.
"""
from __future__ import annotations

import math

import hookgrad as torch

from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


def _onion_betas(dim: int, concentration, validate_args):
    """Beta(offset + 1/2, eta + (dim - 2)/2 - offset/2) per row, offsets 0, 0, 1, ..., dim-2."""
    offsets = torch.arange(dim - 1, dtype=concentration.dtype)
    offsets = torch.cat([offsets.new_zeros((1,)), offsets])
    marginal = concentration + 0.5 * (dim - 2)
    return Beta(offsets + 0.5, marginal.unsqueeze(-1) - 0.5 * offsets,
                validate_args=validate_args)


class LKJCholesky(Distribution):
    """LKJ(``dim``, ``concentration`` eta) on lower Cholesky factors of correlation matrices;
    eta = 1 is uniform over correlation matrices, larger eta favours the identity."""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration=1.0, validate_args=None) -> None:
        if dim < 2:
            raise ValueError("Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        self._beta = _onion_betas(dim, self.concentration, validate_args)
        if not isinstance(dim, int):
            raise TypeError("torch.Size() takes an iterable of 'int' (item 0 is "
                            f"'{type(dim).__name__}')")
        super().__init__(self.concentration.size(), torch.Size((dim, dim)),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """LKJCholesky with the concentration (and its row Betas) expanded."""
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = torch.Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=()):
        """The onion method: Beta radii first, then normal directions."""
        with torch.no_grad():
            radius_sq = self._beta.sample(sample_shape).unsqueeze(-1)
            shape = self._extended_shape(sample_shape)
            normals = torch.randn(shape, dtype=radius_sq.dtype).tril(-1)
            directions = normals / normals.norm(dim=-1, keepdim=True)
            directions[..., 0, :] = 0.0  # the first row has no free coordinate (0 / 0 above)
            rows = radius_sq.sqrt() * directions
            tiny = torch.finfo(rows.dtype).tiny
            diagonal = (1 - rows.pow(2).sum(-1)).clamp(min=tiny).sqrt()
            return rows + torch.diag_embed(diagonal)

    def log_prob(self, value):
        """sum_{i>=2} (D - i + 2 (eta - 1)) log L_ii - log of the LKJ normaliser."""
        if self._validate_args:
            self._validate_sample(value)
        dim = self.dim
        diagonal = value.diagonal(dim1=-2, dim2=-1)[..., 1:]
        rows = torch.arange(2, dim + 1, dtype=self.concentration.dtype)
        exponents = 2 * (self.concentration.unsqueeze(-1) - 1) + dim - rows
        unnormalised = (exponents * diagonal.log()).sum(-1)
        return unnormalised - self._log_normaliser()

    def _log_normaliser(self):
        """log c_D(eta) of Lewandowski et al.: a sum over k = 1..D-1 of
        (2 eta - 2 + D - k)(D - k) log 2 + (D - k) log B(b_k, b_k), b_k = eta + (D-k-1)/2."""
        dim, eta = self.dim, self.concentration
        total = torch.zeros_like(eta)
        for k in range(1, dim):
            width = dim - k
            b = eta + 0.5 * (width - 1)
            total = total + (2 * eta - 2 + width) * width * math.log(2.0)
            total = total + width * (2 * torch.lgamma(b) - torch.lgamma(2 * b))
        return total
