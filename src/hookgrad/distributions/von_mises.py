"""The von Mises distribution on the circle, (-pi, pi].

Its normaliser is the modified Bessel function I0; like torch it is evaluated with the
polynomial approximations of Abramowitz and Stegun (9.8.1-9.8.4), so scores agree with
torch's to rounding rather than differing at the approximation's ~1e-7.  ``sample`` is Best and
Fisher's (1979) rejection sampler run in float64 on uniform triples, as torch draws it.
"""
from __future__ import annotations

import math

import hookgrad as torch

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]

# Abramowitz & Stegun 9.8.1-9.8.4, lowest power first: I0 and I1/x in (x / 3.75)^2 below 3.75,
# sqrt(x) exp(-x) I0 and sqrt(x) exp(-x) I1 in 3.75 / x above.
_I0_SMALL = (1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813)
_I1_SMALL = (0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532, 0.00032411)
_I0_LARGE = (0.39894228, 0.01328592, 0.00225319, -0.00157565, 0.00916281, -0.02057706,
             0.02635537, -0.01647633, 0.00392377)
_I1_LARGE = (0.39894228, -0.03988024, -0.00362018, 0.00163801, -0.01031555, 0.02282967,
             -0.02895312, 0.01787654, -0.00420059)


def _horner(y, coefficients):
    result = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        result = c + y * result
    return result


def _log_bessel(x, order: int, scaled: bool):
    """log I_order(x) for order 0 or 1, or log(exp(-x) I_order(x)) when ``scaled``."""
    small_coefficients, large_coefficients = ((_I0_SMALL, _I0_LARGE) if order == 0
                                              else (_I1_SMALL, _I1_LARGE))
    small = torch.log(_horner((x / 3.75).pow(2), small_coefficients))
    if order == 1:
        small = small + x.log()
    if scaled:
        small = small - x
    # the scaled value is the unscaled one minus x (not built without x), which is how torch
    # rounds it in float32
    large = x - 0.5 * x.log() + torch.log(_horner(3.75 / x, large_coefficients))
    if scaled:
        large = large - x
    return torch.where(x < 3.75, small, large)


class VonMises(Distribution):
    """Circular distribution with mean direction ``loc`` and ``concentration`` (kappa):
    density exp(kappa cos(x - loc)) / (2 pi I0(kappa))."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """VonMises with loc and concentration expanded to ``batch_shape``."""
        return self._expanded(VonMises, batch_shape, ("loc", "concentration"), _instance)

    def log_prob(self, value):
        """kappa cos(x - loc) - log(2 pi) - log I0(kappa)."""
        if self._validate_args:
            self._validate_sample(value)
        normaliser = math.log(2 * math.pi) + _log_bessel(self.concentration, 0, scaled=False)
        return self.concentration * torch.cos(value - self.loc) - normaliser

    @lazy_property
    def _loc(self):
        return self.loc.to(torch.double)

    @lazy_property
    def _concentration(self):
        return self.concentration.to(torch.double)

    @lazy_property
    def _proposal_r(self):
        """Best and Fisher's r = (1 + rho^2) / (2 rho), from tau = 1 + sqrt(1 + 4 kappa^2)."""
        kappa = self._concentration
        tau = 1 + torch.sqrt(1 + 4 * kappa.pow(2))
        rho = (tau - torch.sqrt(2 * tau)) / (2 * kappa)
        return (1 + rho.pow(2)) / (2 * rho)

    def sample(self, sample_shape=()):
        """Rejection sampling: uniform triples (u1, u2, u3) in float64, all entries redrawn
        together until each has accepted once; the angle is wrapped into [-pi, pi)."""
        shape = torch.Size(self._extended_shape(sample_shape))
        with torch.no_grad():
            kappa, r = self._concentration, self._proposal_r
            angle = torch.empty(shape, dtype=torch.double)
            done = torch.zeros(shape, dtype=torch.bool)
            while not bool(done.all()):
                u1, u2, u3 = torch.rand((3,) + tuple(shape), dtype=torch.double).unbind()
                z = torch.cos(math.pi * u1)
                f = (1 + r * z) / (r + z)
                c = kappa * (r - f)
                accepted = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
                if bool(accepted.any()):
                    angle = torch.where(accepted, (u3 - 0.5).sign() * f.acos(), angle)
                    done = done | accepted
            wrapped = (angle + math.pi + self._loc) % (2 * math.pi) - math.pi
            return wrapped.to(self.loc.dtype)

    @property
    def mean(self):
        """loc, the mean direction."""
        return self.loc

    @property
    def mode(self):
        """loc."""
        return self.loc

    @lazy_property
    def variance(self):
        """The circular variance 1 - I1(kappa) / I0(kappa)."""
        ratio = (_log_bessel(self.concentration, 1, scaled=True)
                 - _log_bessel(self.concentration, 0, scaled=True)).exp()
        return 1 - ratio
