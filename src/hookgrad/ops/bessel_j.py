"""torch.special's Bessel functions of integer order J0, J1, Y0, Y1 and the Airy function Ai,
all without derivatives (torch records no node for them).

Each uses the classic Cephes rational approximations, whose published coefficients are below:
for |x| <= 5 a ratio of polynomials in x^2 (J0 and J1 carry their first two zeros as explicit
factors, Y0 and Y1 add the ``(2/pi) log(x) J`` term); above 5 the Hankel form
``sqrt(2 / (pi x)) (P cos(x - phase) - (5/x) Q sin(x - phase))`` with P and Q rational in
25/x^2. Ai is a power series on [-2.09, 2.09), a rational function of 1/zeta times
``exp(-zeta)`` above, and the oscillating modulus-phase form below. The arithmetic runs in the
input's own float type, as torch's kernels do, so float32 results round like torch's.

Cephes evaluates several denominators as monic polynomials (an implied leading 1); torch's
kernels evaluate just the stored coefficients, which shifts the values by up to ~1e-6 near the
branch points. The tables below are those stored coefficients and are used as torch uses them.
"""
from __future__ import annotations

import math

import numpy as np

from ..tensor import Tensor
from ._base import HALF_TYPES, not_implemented
from ._util import quiet_errors
from .unary import _apply_float

_QUARTER_PI = math.pi / 4
_THREE_QUARTER_PI = 3 * math.pi / 4
_TWO_OVER_PI = 2 / math.pi
_SQRT_TWO_OVER_PI = math.sqrt(2 / math.pi)
_INV_SQRT_PI = 1 / math.sqrt(math.pi)

# J0: the two first zeros squared, then the small- and large-argument coefficients
_J0_ZERO_SQUARES = (5.78318596294678452118e0, 3.04712623436620863991e1)
_J0_SMALL_NUM = (-4.79443220978201773821e9, 1.95617491946556577543e12,
                 -2.49248344360967716204e14, 9.70862251047306323952e15)
_J0_SMALL_DEN = (4.99563147152651017219e2, 1.73785401676374683123e5,
                 4.84409658339962045305e7, 1.11855537045356834862e10, 2.11277520115489217587e12,
                 3.10518229857422583814e14, 3.18121955943204943306e16, 1.71086294081043136091e18)
_J0_P_NUM = (7.96936729297347051624e-4, 8.28352392107440799803e-2, 1.23953371646414299388e0,
             5.44725003058768775090e0, 8.74716500199817011941e0, 5.30324038235394892183e0,
             9.99999999999999997821e-1)
_J0_P_DEN = (9.24408810558863637013e-4, 8.56288474354474431428e-2, 1.25352743901058953537e0,
             5.47097740330417105182e0, 8.76190883237069594232e0, 5.30605288235394617618e0,
             1.00000000000000000218e0)
_J0_Q_NUM = (-1.13663838898469149931e-2, -1.28252718670509318512e0, -1.95539544257735972385e1,
             -9.32060152123768231369e1, -1.77681167980488050595e2, -1.47077505154951170175e2,
             -5.14105326766599330220e1, -6.05014350600728481186e0)
_J0_Q_DEN = (6.43178256118178023184e1, 8.56430025976980587198e2, 3.88240183605401609683e3,
             7.24046774195652478189e3, 5.93072701187316984827e3, 2.06209331660327847417e3,
             2.42005740240291393179e2)
_Y0_SMALL_NUM = (1.55924367855235737965e4, -1.46639295903971606143e7, 5.43526477051876500413e9,
                 -9.82136065717911466409e11, 8.75906394395366999549e13,
                 -3.46628303384729719441e15, 4.42733268572569800351e16,
                 -1.84950800436986690637e16)
_Y0_SMALL_DEN = (1.04128353664259848412e3, 6.26107330137134956842e5,
                 2.68919633393814121987e8, 8.64002487103935000337e10, 2.02979612750105546709e13,
                 3.17157752842975028269e15, 2.50596256172653059228e17)

# J1
_J1_ZERO_SQUARES = (1.46819706421238932572e1, 4.92184563216946036703e1)
_J1_SMALL_NUM = (-8.99971225705559398224e8, 4.52228297998194034323e11,
                 -7.27494245221818276015e13, 3.68295732863852883286e15)
_J1_SMALL_DEN = (6.20836478118054335476e2, 2.56987256757748830383e5,
                 8.35146791431949253037e7, 2.21511595479792499675e10, 4.74914122079991414898e12,
                 7.84369607876235854894e14, 8.95222336184627338078e16, 5.32278620332680085395e18)
_J1_P_NUM = (7.62125616208173112003e-4, 7.31397056940917570436e-2, 1.12719608129684925192e0,
             5.11207951146807644818e0, 8.42404590141772420927e0, 5.21451598682361504063e0,
             1.00000000000000000254e0)
_J1_P_DEN = (5.71323128072548699714e-4, 6.88455908754495404082e-2, 1.10514232634061696926e0,
             5.07386386128601488557e0, 8.39985554327604159757e0, 5.20982848682361821619e0,
             9.99999999999999997461e-1)
_J1_Q_NUM = (5.10862594750176621635e-2, 4.98213872951233449420e0, 7.58238284132545283818e1,
             3.66779609360150777800e2, 7.10856304998926107277e2, 5.97489612400613639965e2,
             2.11688757100572135698e2, 2.52070205858023719784e1)
_J1_Q_DEN = (7.42373277035675149943e1, 1.05644886038262816351e3, 4.98641058337653607651e3,
             9.56231892404756170795e3, 7.99704160447350683650e3, 2.82619278517639096600e3,
             3.36093607810698293419e2)
_Y1_SMALL_NUM = (1.26320474790178026440e9, -6.47355876379160291031e11,
                 1.14509511541823727583e14, -8.12770255501325109621e15,
                 2.02439475713594898196e17, -7.78877196265950026825e17)
_Y1_SMALL_DEN = (5.94301592346128195359e2, 2.35564092943068577943e5,
                 7.34811944459721705660e7, 1.87601316108706159478e10, 3.88231277496238566008e12,
                 6.20557727146953693363e14, 6.87141087355300489866e16, 3.97270608116560655612e18)

# Ai: the series constants Ai(0) and -Ai'(0), the decaying and the oscillating regions
_AI_AT_ZERO = 0.35502805388781723926
_AI_SLOPE_AT_ZERO = 0.258819403792806798405
_AI_SERIES_BELOW = 2.09
_AI_ZERO_ABOVE = 103.892
_AI_DECAY_NUM = (3.46538101525629032477e-1, 1.20075952739645805542e1, 7.62796053615234516538e1,
                 1.68089224934630576269e2, 1.59756391350164413639e2, 7.05360906840444183113e1,
                 1.40264691163389668864e1, 9.99999999999999995305e-1)
_AI_DECAY_DEN = (5.67594532638770212846e-1, 1.47562562584847203173e1, 8.45138970141474626562e1,
                 1.77318088145400459522e2, 1.64234692871529701831e2, 7.14778400825575695274e1,
                 1.40959135607834029598e1, 1.00000000000000000470e0)
_AI_MODULUS_NUM = (-1.31696323418331795333e-1, -6.26456544431912369773e-1,
                   -6.93158036036933542233e-1, -2.79779981545119124951e-1,
                   -4.91900132609500318020e-2, -4.06265923594885404393e-3,
                   -1.59276496239262096340e-4, -2.77649108155232920844e-6,
                   -1.67787698489114633780e-8)
_AI_MODULUS_DEN = (1.33560420706553243746e1, 3.26825032795224613948e1,
                   2.67367040941499554804e1, 9.18707402907259625840e0, 1.47529146771666414581e0,
                   1.15687173795188044134e-1, 4.40291641615211203805e-3,
                   7.54720348287414296618e-5, 4.51850092970580378464e-7)
_AI_PHASE_NUM = (1.97339932091685679179e-2, 3.91103029615688277255e-1, 1.06579897599595591108e0,
                 9.39169229816650230044e-1, 3.51465656105547619242e-1, 6.33888919628925490927e-2,
                 5.85804113048388458567e-3, 2.82851600836737019778e-4, 6.98793669997260967291e-6,
                 8.11789239554389293311e-8, 3.41551784765923618484e-10)
_AI_PHASE_DEN = (9.30892908077441974853e0, 1.98352928718312140417e1,
                 1.55646628932864612953e1, 5.47686069422975497931e0, 9.54293611618961883998e-1,
                 8.64580826352392193095e-2, 4.12656523824222607191e-3, 1.01259085116509135510e-4,
                 1.17166733214413521882e-6, 4.91834570062930015649e-9)


def _horner(z: np.ndarray, coefficients: tuple) -> np.ndarray:
    """The polynomial with ``coefficients`` (highest power first) at ``z``, in z's dtype."""
    kind = z.dtype.type
    total = np.full_like(z, coefficients[0])
    for coefficient in coefficients[1:]:
        total = total * z + kind(coefficient)
    return total


def _ratio(z: np.ndarray, numerator: tuple, denominator: tuple) -> np.ndarray:
    return _horner(z, numerator) / _horner(z, denominator)


def _hankel(a: np.ndarray, p: tuple, q: tuple, phase: float) -> tuple[np.ndarray, np.ndarray]:
    """For a > 5 the pair (J, Y) of one order from its modulus polynomials P, Q in 25 / a^2."""
    kind = a.dtype.type
    z = kind(25.0) / (a * a)
    modulus_p = _ratio(z, *p)
    modulus_q = kind(5.0) / a * _ratio(z, *q)
    shifted = a - kind(phase)
    cosine, sine = np.cos(shifted), np.sin(shifted)
    scale = kind(_SQRT_TWO_OVER_PI) / np.sqrt(a)
    return ((modulus_p * cosine - modulus_q * sine) * scale,
            (modulus_p * sine + modulus_q * cosine) * scale)


def _large(x: np.ndarray, small: np.ndarray) -> np.ndarray:
    """x where the large-argument form applies, a harmless 6 elsewhere."""
    return np.where(small, x.dtype.type(6.0), x)


def _j0_small(a: np.ndarray) -> np.ndarray:
    kind = a.dtype.type
    square = a * a
    value = ((square - kind(_J0_ZERO_SQUARES[0])) * (square - kind(_J0_ZERO_SQUARES[1]))
             * _ratio(square, _J0_SMALL_NUM, _J0_SMALL_DEN))
    return np.where(a < kind(1e-5), kind(1.0) - square / kind(4.0), value)


def _j1_small(a: np.ndarray) -> np.ndarray:
    kind = a.dtype.type
    square = a * a
    return (_ratio(square, _J1_SMALL_NUM, _J1_SMALL_DEN) * a
            * (square - kind(_J1_ZERO_SQUARES[0])) * (square - kind(_J1_ZERO_SQUARES[1])))


_J0_HANKEL = ((_J0_P_NUM, _J0_P_DEN), (_J0_Q_NUM, _J0_Q_DEN), _QUARTER_PI)
_J1_HANKEL = ((_J1_P_NUM, _J1_P_DEN), (_J1_Q_NUM, _J1_Q_DEN), _THREE_QUARTER_PI)


def _j0(x: np.ndarray) -> np.ndarray:
    a = np.abs(x)
    small = a <= 5
    return np.where(small, _j0_small(np.where(small, a, 1)), _hankel(_large(a, small),
                                                                     *_J0_HANKEL)[0])


def _j1(x: np.ndarray) -> np.ndarray:
    a = np.abs(x)
    small = a <= 5
    value = np.where(small, _j1_small(np.where(small, a, 1)), _hankel(_large(a, small),
                                                                      *_J1_HANKEL)[0])
    return np.where(x < 0, -value, value)  # J1 is odd


def _y_edges(x: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Y0 and Y1 are -inf at 0 and undefined for negative x."""
    return np.where(x == 0, -np.inf, np.where(x < 0, np.nan, value))


def _y0(x: np.ndarray) -> np.ndarray:
    kind = x.dtype.type
    small = x <= 5
    s = np.where(small & (x > 0), x, 1)
    square = s * s
    near = (_ratio(square, _Y0_SMALL_NUM, _Y0_SMALL_DEN)
            + kind(_TWO_OVER_PI) * np.log(s) * _j0_small(s))
    return _y_edges(x, np.where(small, near, _hankel(_large(x, small), *_J0_HANKEL)[1]))


def _y1(x: np.ndarray) -> np.ndarray:
    kind = x.dtype.type
    small = x <= 5
    s = np.where(small & (x > 0), x, 1)
    square = s * s
    near = (s * _ratio(square, _Y1_SMALL_NUM, _Y1_SMALL_DEN)
            + kind(_TWO_OVER_PI) * (_j1_small(s) * np.log(s) - kind(1.0) / s))
    return _y_edges(x, np.where(small, near, _hankel(_large(x, small), *_J1_HANKEL)[1]))


def _airy_series(x: np.ndarray) -> np.ndarray:
    """Ai(x) = Ai(0) f(x) + Ai'(0) g(x) with the two Maclaurin series in x^3, each element
    summed until its next term no longer changes f (the loop runs over terms, not elements)."""
    kind = x.dtype.type
    cube = x * x * x
    f, g = np.ones_like(x), x.copy()
    f_term, g_term = np.ones_like(x), x.copy()
    denominator = kind(1.0)
    active = np.ones(x.shape, bool)
    tolerance = np.finfo(x.dtype).eps
    while active.any():
        f_next = f_term * cube / (denominator + 1) / (denominator + 2)
        g_next = g_term * cube / (denominator + 2) / (denominator + 3)
        denominator += 3
        f_term = np.where(active, f_next, f_term)
        g_term = np.where(active, g_next, g_term)
        f = np.where(active, f + f_next, f)
        g = np.where(active, g + g_next, g)
        active &= np.abs(f_term / f) > tolerance
    return kind(_AI_AT_ZERO) * f - kind(_AI_SLOPE_AT_ZERO) * g


def _airy_decaying(x: np.ndarray) -> np.ndarray:
    """x >= 2.09: Ai = R(1/zeta) / (2 sqrt(pi) x^(1/4) e^zeta), zeta = (2/3) x^(3/2)."""
    kind = x.dtype.type
    root = np.sqrt(x)
    zeta = kind(2.0) * x * root / kind(3.0)
    denominator = kind(2.0) * np.sqrt(root) * np.exp(zeta)
    return kind(_INV_SQRT_PI) * _ratio(kind(1.0) / zeta, _AI_DECAY_NUM, _AI_DECAY_DEN) / denominator


def _airy_oscillating(x: np.ndarray) -> np.ndarray:
    """x < -2.09: Ai = (sin(theta) F - cos(theta) G) / (sqrt(pi) |x|^(1/4)), theta = zeta + pi/4."""
    kind = x.dtype.type
    root = np.sqrt(-x)
    zeta = kind(-2.0) * x * root / kind(3.0)
    inverse = kind(1.0) / zeta
    inverse_square = inverse * inverse
    modulus = kind(1.0) + inverse_square * _ratio(inverse_square, _AI_MODULUS_NUM, _AI_MODULUS_DEN)
    phase = inverse * _ratio(inverse_square, _AI_PHASE_NUM, _AI_PHASE_DEN)
    theta = zeta + kind(_QUARTER_PI)
    scale = kind(_INV_SQRT_PI) / np.sqrt(root)
    return scale * (np.sin(theta) * modulus - np.cos(theta) * phase)


def _airy_ai(x: np.ndarray) -> np.ndarray:
    below = x < -_AI_SERIES_BELOW
    above = x >= _AI_SERIES_BELOW
    middle = ~(below | above)
    value = np.where(middle, _airy_series(np.where(middle, x, 0)), np.nan)
    value = np.where(below, _airy_oscillating(np.where(below, x, -3)), value)
    value = np.where(above, _airy_decaying(np.where(above, x, 3)), value)
    value = np.where(x > _AI_ZERO_ABOVE, 0, value)
    return np.where(np.isinf(x) | np.isnan(x), np.nan, value).astype(x.dtype, copy=False)


def _untracked(kernel, input: Tensor, name: str, argument: str = "input") -> Tensor:
    """torch records no node for these: the result never requires grad; its CPU kernels take
    float32, float64 and integers (as the default float), not half types"""
    if not isinstance(input, Tensor):
        raise TypeError(f"special_{name}(): argument '{argument}' (position 1) must be Tensor, "
                        f"not {type(input).__name__}")
    if input._data.dtype in HALF_TYPES or input._data.dtype.kind == "c":
        raise not_implemented(name + "_cpu", input._data.dtype)
    with quiet_errors():
        return Tensor._make(_apply_float(kernel, input._data))


def bessel_j0(input: Tensor, *, out=None) -> Tensor:
    """The Bessel function of the first kind of order 0 (even in x)."""
    return _untracked(_j0, input, "bessel_j0")


def bessel_j1(input: Tensor, *, out=None) -> Tensor:
    """The Bessel function of the first kind of order 1 (odd in x)."""
    return _untracked(_j1, input, "bessel_j1")


def bessel_y0(input: Tensor, *, out=None) -> Tensor:
    """The Bessel function of the second kind of order 0; -inf at 0, NaN for negative x."""
    return _untracked(_y0, input, "bessel_y0")


def bessel_y1(input: Tensor, *, out=None) -> Tensor:
    """The Bessel function of the second kind of order 1; -inf at 0, NaN for negative x."""
    return _untracked(_y1, input, "bessel_y1")


def airy_ai(x: Tensor, *, out=None) -> Tensor:
    """The Airy function Ai, the solution of ``y'' = x y`` that decays as x grows."""
    return _untracked(_airy_ai, x, "airy_ai", "x")
