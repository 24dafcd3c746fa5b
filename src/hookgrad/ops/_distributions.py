"""The arithmetic between torch's mt19937 words and its CPU samples, on NumPy arrays.

Each function takes a ``Generator`` and a count and returns the values torch's CPU kernel
produces for that many elements, in its iteration order, consuming the same words:

- a float32 uniform takes the low 24 bits of one 32-bit word, a float64 one the low 53 bits of
  one 64-bit word (two 32-bit words, the first one high);
- ``normal_`` on 16 or more contiguous elements fills uniforms and runs Box-Muller on blocks of
  16 (the last, partial block is redrawn from 16 fresh uniforms and overwrites the tail); float32
  blocks go through the AVX2 polynomial ``log``/``sincos`` torch's AVX2 kernels use, emulated
  here step by step in float32 with the fused multiply-adds the compiler forms;
- fewer (or non-contiguous) elements take the scalar Box-Muller in double, which makes a pair
  and keeps the second value in the generator for the next scalar draw.
"""
from __future__ import annotations

import numpy as np
import math

F32, F64 = np.float32, np.float64
_MASK24, _MASK53 = np.uint64((1 << 24) - 1), np.uint64((1 << 53) - 1)
_TWO_PI = 2.0 * np.pi


# -- exact helpers ------------------------------------------------------------------------------
# torch's scalar kernels call the C library's log/log1p/pow; NumPy's vectorised versions of
# those round differently in the last place on some processors, so where a value (or a
# rejection test) must be torch's bit for bit they go through ``math`` element by element.
def _in_c(function, at_pole: float):
    """``function`` with the C library's answers where ``math`` raises instead: a pole gives
    ``at_pole`` (-inf for log of 0), overflow gives inf, other domain errors NaN."""
    def wrapped(*args):
        try:
            return function(*args)
        except OverflowError:
            return math.inf
        except ValueError:
            return at_pole if args[0] == (-1.0 if function is math.log1p else 0.0) else math.nan
    return wrapped


def _numpy_agrees(function, ufunc) -> bool:
    """Whether NumPy's vectorised ``ufunc`` gives the C library's ``function`` bit for bit
    on this processor, judged on 4,096 values over the range the samplers use. Without
    AVX-512 NumPy calls the C library itself for these float64 functions; with it, it has
    kernels of its own that differ in the last place for a few values in a thousand."""
    probe = np.random.default_rng(20261126).random(4096) * 8.0 - 4.0
    arguments = (np.abs(probe) + 0.5, probe) if function is math.pow else (
        (np.abs(probe) + 1e-6,) if function is math.log else (probe,))
    if function is math.log1p:
        arguments = (np.abs(probe) * 0.25 - 0.999,)
    with np.errstate(all="ignore"):
        expected = np.array([function(*values) for values in zip(*arguments)])
        return bool(np.array_equal(ufunc(*arguments), expected))


def _elementwise(function, at_pole: float, ufunc):
    """``function`` over float64 arrays: NumPy's ``ufunc`` where that is the C library's
    (checked once, on first use), else element by element through ``math`` (fast while no
    element raises; then again with the C library's answers for the ones that do)."""
    plain = np.frompyfunc(function, 2 if function is math.pow else 1, 1)
    careful = np.frompyfunc(_in_c(function, at_pole), 2 if function is math.pow else 1, 1)
    agrees: list = []

    def run(*arrays):
        arrays = [np.asarray(a, F64) for a in arrays]
        if not agrees:
            agrees.append(_numpy_agrees(function, ufunc))
        with np.errstate(all="ignore"):
            if agrees[0]:
                return ufunc(*arrays)
            try:
                return plain(*arrays).astype(F64)
            except (OverflowError, ValueError):
                return careful(*arrays).astype(F64)
    return run


exact_log = _elementwise(math.log, -math.inf, np.log)
exact_log.__doc__ = "The C library's log of each float64 element."
exact_log1p = _elementwise(math.log1p, -math.inf, np.log1p)
exact_log1p.__doc__ = "The C library's log1p of each float64 element."
exact_pow = _elementwise(math.pow, math.inf, np.power)
exact_pow.__doc__ = "The C library's pow, elementwise on float64."
exact_exp = _elementwise(math.exp, math.nan, np.exp)
exact_exp.__doc__ = "The C library's exp of each float64 element."
exact_tan = _elementwise(math.tan, math.nan, np.tan)
exact_tan.__doc__ = "The C library's tan of each float64 element."


def fma32(a, b, c) -> np.ndarray:
    """float32 a * b + c rounded once (the product is exact in float64)."""
    return (np.asarray(a, F32).astype(F64) * F64(b) + np.asarray(c, F32).astype(F64)).astype(F32)


def fma64(a, b, c) -> np.ndarray:
    """float64 a * b + c with one rounding: an error-free product (Dekker) and sum (Knuth)."""
    a = np.asarray(a, F64)
    product = a * b
    if b == 1.0 or b == 0.0:
        return product + c
    split = 134217729.0  # 2**27 + 1
    a_hi = a * split - (a * split - a)
    a_lo = a - a_hi
    b_hi = b * split - (b * split - b)
    b_lo = b - b_hi
    product_error = ((a_hi * b_hi - product) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    total = product + c
    virtual = total - product
    sum_error = (product - (total - virtual)) + (c - virtual)
    return total + (product_error + sum_error)


# -- uniforms -----------------------------------------------------------------------------------
def unit_floats(generator, count: int, double: bool) -> np.ndarray:
    """``count`` uniforms on [0, 1): float64 from 53 bits of a 64-bit word, float32 from 24."""
    if double:
        return (generator._random64(count) & _MASK53).astype(F64) * F64(2.0 ** -53)
    return (generator._random(count) & _MASK24).astype(F32) * F32(2.0 ** -24)


def uniform(generator, count: int, np_dtype: np.dtype, low: float, high: float) -> np.ndarray:
    """``uniform_(low, high)``: x * (high - low) + low in the op's precision (float32 for
    float32 and float16, fused), and a value that rounds up to ``high`` becomes ``low``."""
    double = np_dtype == F64
    x = unit_floats(generator, count, double)
    if double:
        values = fma64(x, high - low, low)
    else:
        low32, high32 = F32(low), F32(high)
        values = fma32(x, high32 - low32, low32)
    values = values.astype(np_dtype)
    with np.errstate(over="ignore"):
        top, bottom = np_dtype.type(high), np_dtype.type(low)
    return np.where(values == top, bottom, values)


class Tape:
    """Uniforms read ahead of ``generator``; ``close`` leaves the generator where torch's would
    be after ``used`` uniforms, with the cached Box-Muller value ``cached`` (or None)."""

    def __init__(self, generator):
        self.generator = generator
        self._state = generator._engine.state
        self._fresh = generator._fresh
        self.values = np.empty(0, F64)
        self._floats: list = []  # the same values as Python floats, for the scalar loops
        self.used = 0
        self.cached = generator._double_normal
        self.last_pair = -1
        generator._double_normal = None

    def reach(self, end: int) -> None:
        """Make sure uniforms up to index ``end`` (excluded) are on the tape."""
        have = self.values.size
        if end > have:
            more = unit_floats(self.generator, max(end - have, have, 1024), True)
            self.values = np.concatenate([self.values, more])
            self._floats.extend(more.tolist())

    def take(self) -> float:
        index = self.used
        if index >= len(self._floats):
            self.reach(index + 1)
        self.used = index + 1
        return self._floats[index]

    def normal(self) -> float:
        """One standard normal as torch's scalar ``normal_distribution<double>`` gives it."""
        if self.cached is not None:
            value, self.cached = self.cached, None
            return value
        self.last_pair = self.used
        first, second = self.take(), self.take()
        radius = math.sqrt(-2.0 * math.log1p(-second))
        self.cached = radius * math.sin(_TWO_PI * first)
        return radius * math.cos(_TWO_PI * first)

    def close(self) -> None:
        generator = self.generator
        generator._engine.state = self._state
        generator._fresh = self._fresh
        if self.used:
            generator._random(2 * self.used)
        generator._double_normal = self.cached


# -- normals ------------------------------------------------------------------------------------
def normal(generator, count: int, np_dtype: np.dtype, mean: float, std: float,
           contiguous: bool = True) -> np.ndarray:
    """``normal_(mean, std)`` on ``count`` elements, as torch's CPU kernel draws them."""
    if count >= 16 and contiguous:
        if np_dtype == F64:
            return _normal_blocks(generator, count, True, mean, std, fill_first=True)
        values = _normal_blocks(generator, count, False, mean, std,
                                fill_first=np_dtype == F32)
        return values.astype(np_dtype)
    return fma64(scalar_normals(generator, count), std, mean).astype(np_dtype)


def scalar_normals(generator, count: int) -> np.ndarray:
    """Standard normals from the scalar Box-Muller pair path, using and refilling the
    generator's cached second value."""
    values = np.empty(count, F64)
    start = 0
    if count and generator._double_normal is not None:
        values[0], generator._double_normal = generator._double_normal, None
        start = 1
    wanted = count - start
    pairs = (wanted + 1) // 2
    if pairs:
        words = unit_floats(generator, 2 * pairs, True)
        radius = np.sqrt(-2.0 * exact_log1p(-words[1::2]))
        theta = _TWO_PI * words[0::2]
        both = np.empty(2 * pairs, F64)
        both[0::2] = radius * np.cos(theta)
        both[1::2] = radius * np.sin(theta)
        values[start:] = both[:wanted]
        if wanted % 2:
            generator._double_normal = float(both[-1])
    return values


def _normal_blocks(generator, count: int, double: bool, mean: float, std: float,
                   fill_first: bool) -> np.ndarray:
    """The vectorised path: float32/float64 fill all ``count`` uniforms first (``fill_first``),
    float16 only the whole blocks; a partial last block is redrawn and written over the tail."""
    blocks = count // 16
    out = unit_floats(generator, count if fill_first else 16 * blocks, double)
    if not fill_first:
        out = np.concatenate([out, np.zeros(count - 16 * blocks, out.dtype)])
    transform = _box_muller16_double if double else _box_muller16_float
    out[:16 * blocks] = transform(out[:16 * blocks].reshape(blocks, 16), mean, std).reshape(-1)
    if count % 16:
        tail = unit_floats(generator, 16, double).reshape(1, 16)
        out[count - 16:] = transform(tail, mean, std).reshape(-1)
    return out


def _box_muller16_double(block: np.ndarray, mean: float, std: float) -> np.ndarray:
    radius = np.sqrt(-2.0 * exact_log(1.0 - block[:, :8]))
    theta = _TWO_PI * block[:, 8:]
    return np.concatenate([fma64(radius * np.cos(theta), std, mean),
                           fma64(radius * np.sin(theta), std, mean)], axis=1)


def _box_muller16_float(block: np.ndarray, mean: float, std: float) -> np.ndarray:
    with np.errstate(all="ignore"):
        radius = np.sqrt(F32(-2.0) * avx_log(F32(1.0) - block[:, :8]))
        sine, cosine = avx_sincos(F32(_TWO_PI) * block[:, 8:])
        return np.concatenate([fma32(radius * cosine, F32(std), F32(mean)),
                               fma32(radius * sine, F32(std), F32(mean))], axis=1)


# -- torch's AVX2 float32 log and sincos (Cephes polynomials), emulated in float32 ---------------
_LOG_P = [F32(v) for v in (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1,
                           -1.2420140846e-1, 1.4249322787e-1, -1.6668057665e-1,
                           2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1)]
_LOG_Q1, _LOG_Q2 = F32(-2.12194440e-4), F32(0.693359375)
_SQRT_HALF = F32(0.707106781186547524)


def avx_log(x: np.ndarray) -> np.ndarray:
    """Natural log of positive float32 values as torch's AVX2 ``log256_ps`` computes it."""
    x = np.maximum(np.asarray(x, F32), np.uint32(0x00800000).view(F32))
    bits = x.view(np.uint32)
    exponent = ((bits >> np.uint32(23)).astype(np.int32) - 0x7F).astype(F32) + F32(1)
    x = ((bits & np.uint32(0x807FFFFF)) | F32(0.5).view(np.uint32)).view(F32)
    small = x < _SQRT_HALF
    x = (x - F32(1)) + np.where(small, x, F32(0))
    exponent = exponent - np.where(small, F32(1), F32(0))
    z = x * x
    y = np.full_like(x, _LOG_P[0])
    for coefficient in _LOG_P[1:]:
        y = fma32(y, x, coefficient)
    y = y * x
    y = fma32(y, z, exponent * _LOG_Q1)
    y = fma32(-z, F32(0.5), y)
    x = x + y
    return fma32(exponent, _LOG_Q2, x)


_DP = (F32(-0.78515625), F32(-2.4187564849853515625e-4), F32(-3.77489497744594108e-8))
_SIN_P = (F32(-1.9515295891e-4), F32(8.3321608736e-3), F32(-1.6666654611e-1))
_COS_P = (F32(2.443315711809948e-5), F32(-1.388731625493765e-3), F32(4.166664568298827e-2))
_FOUR_OVER_PI = F32(1.27323954473516)


def avx_sincos(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sin, cos) of float32 values as torch's AVX2 ``sincos256_ps`` computes them."""
    x = np.asarray(x, F32)
    sign_sin = x.view(np.uint32) & np.uint32(0x80000000)
    x = np.abs(x)
    octant = (x * _FOUR_OVER_PI).astype(np.int32)
    octant = (octant + 1) & ~1
    y = octant.astype(F32)
    swap_sin = ((octant & 4) << 29).astype(np.uint32)
    use_sine_poly = (octant & 2) == 0
    x = fma32(y, _DP[0], x)
    x = fma32(y, _DP[1], x)
    x = fma32(y, _DP[2], x)
    sign_cos = ((~(octant - 2) & 4) << 29).astype(np.uint32)
    sign_sin = sign_sin ^ swap_sin
    z = x * x
    cos_poly = np.full_like(x, _COS_P[0])
    cos_poly = fma32(cos_poly, z, _COS_P[1])
    cos_poly = fma32(cos_poly, z, _COS_P[2])
    cos_poly = cos_poly * z
    cos_poly = fma32(cos_poly, z, -(z * F32(0.5)))
    cos_poly = cos_poly + F32(1)
    sin_poly = np.full_like(x, _SIN_P[0])
    sin_poly = fma32(sin_poly, z, _SIN_P[1])
    sin_poly = fma32(sin_poly, z, _SIN_P[2])
    sin_poly = sin_poly * z
    sin_poly = fma32(sin_poly, x, x)
    sine = np.where(use_sine_poly, sin_poly, cos_poly)
    cosine = np.where(use_sine_poly, cos_poly, sin_poly)
    return ((sine.view(np.uint32) ^ sign_sin).view(F32),
            (cosine.view(np.uint32) ^ sign_cos).view(F32))


# -- integers -----------------------------------------------------------------------------------
def random_from_to(generator, count: int, np_dtype: np.dtype, low: int, span: int) -> np.ndarray:
    """``random_(low, low + span)``: a word modulo ``span`` plus ``low``; spans of 2**28 or more
    take 64-bit words (torch's bound on the modulo's skew)."""
    words = generator._random64(count) if span >= 1 << 28 else generator._random(count)
    values = (words % np.uint64(span)).astype(np.int64) + np.int64(low)
    return _cast_int64(values, np_dtype)


def float_digits(np_dtype: np.dtype) -> int:
    """Significand bits, the implicit one included, of a floating dtype (NumPy's ``finfo`` does
    not know ml_dtypes' bfloat16, so that one asks ml_dtypes)."""
    if np_dtype.kind == "V":
        import ml_dtypes  # optional extra, only for bfloat16

        return int(ml_dtypes.finfo(np_dtype).nmant) + 1
    return int(np.finfo(np_dtype).nmant) + 1


def random_full_range(generator, count: int, np_dtype: np.dtype) -> np.ndarray:
    """``random_(-2**63, None)``: a whole 64-bit word read as int64."""
    return _cast_int64(generator._random64(count).view(np.int64), np_dtype)


def random_default(generator, count: int, np_dtype: np.dtype) -> np.ndarray:
    """``random_()``: [0, 2**mantissa] for floats, [0, max] for integers, 0/1 for bool."""
    wide = np_dtype in (np.dtype(np.float64), np.dtype(np.int64))
    words = generator._random64(count) if wide else generator._random(count)
    if np_dtype.kind == "b":
        return (words & np.uint64(1)).astype(np.bool_)
    if np_dtype.kind in "fV":
        modulus = (1 << float_digits(np_dtype)) + 1
    else:
        modulus = int(np.iinfo(np_dtype).max) + 1
    return (words % np.uint64(modulus)).astype(np_dtype)


def _cast_int64(values: np.ndarray, np_dtype: np.dtype) -> np.ndarray:
    if np_dtype.kind == "b":
        return values != 0
    with np.errstate(all="ignore"):
        return values.astype(np_dtype)


def randperm(generator, n: int) -> np.ndarray:
    """torch's forward Fisher-Yates: step i swaps slot i with slot i + word % (n - i). The
    swaps depend on each other, so they run in order over Python ints (fast for the sizes a
    data loader shuffles); the words come in one call."""
    words = generator._random(n - 1).tolist() if n > 1 else []
    order = list(range(n))
    for i, word in enumerate(words):
        j = i + word % (n - i)
        order[i], order[j] = order[j], order[i]
    return np.array(order, dtype=np.int64)


# -- other distributions (scalar kernels in double, cast to the tensor's dtype) ----------------
def exponential(generator, count: int, lambd: float) -> np.ndarray:
    """-1/lambda * log1p(-u)."""
    return (-1.0 / lambd) * exact_log1p(-unit_floats(generator, count, True))


def cauchy(generator, count: int, median: float, sigma: float) -> np.ndarray:
    """median + sigma * tan(pi * (u - 1/2))."""
    return fma64(exact_tan(np.pi * (unit_floats(generator, count, True) - 0.5)), sigma, median)


def log_normal(generator, count: int, mean: float, std: float) -> np.ndarray:
    """exp of the scalar Box-Muller normal (it shares the cached second value)."""
    return exact_exp(fma64(scalar_normals(generator, count), std, mean))


def geometric(generator, count: int, p: float) -> np.ndarray:
    """ceil(log(u) / log1p(-p))."""
    with np.errstate(divide="ignore"):
        return np.ceil(exact_log(unit_floats(generator, count, True)) / math.log1p(-p))


def bernoulli_scalar(generator, count: int, p: float) -> np.ndarray:
    """A 53-bit uniform below ``p`` (the kernel torch runs where MKL's stream is not used)."""
    return unit_floats(generator, count, True) < p


def bernoulli_tensor(generator, probabilities: np.ndarray) -> np.ndarray:
    """One uniform per element, compared with its own probability: float64 probabilities use
    53-bit uniforms, other dtypes 24-bit float32 ones."""
    double = probabilities.dtype == F64
    uniforms = unit_floats(generator, probabilities.size, double)
    return uniforms < probabilities.reshape(-1).astype(F64 if double else F32)


def multinomial_with_replacement(generator, rows: np.ndarray, samples: int) -> np.ndarray:
    """Each row's running sum (in its dtype, float32 for float16) divided by the total, the last
    bucket set to 1; each sample is the first bucket whose sum reaches a 53-bit uniform."""
    work = F64 if rows.dtype == F64 else F32
    cumulative = np.cumsum(rows.astype(work), axis=1, dtype=work)
    cumulative /= cumulative[:, -1:]
    cumulative[:, -1] = 1
    uniforms = unit_floats(generator, rows.shape[0] * samples, True).reshape(-1, samples)
    return np.stack([np.searchsorted(row.astype(F64), draws, side="left")
                     for row, draws in zip(cumulative, uniforms)]).astype(np.int64)


def poisson(generator, rates: np.ndarray) -> np.ndarray:
    """torch's CPU Poisson sampler, element by element: each sample takes as many uniforms as
    its rejection loop needs, so they are read from a ``Tape`` ahead of the generator.
    Rates below 10 multiply uniforms until the product drops to exp(-rate); larger rates use
    Hoermann's transformed rejection."""
    tape = Tape(generator)
    out = np.empty(rates.size, np.float64)
    for index, rate in enumerate(rates.reshape(-1).tolist()):
        out[index] = _poisson_one(float(rate), tape.take)
    tape.close()
    return out


def _poisson_one(rate: float, uniform) -> int:
    if rate == 0:
        return 0
    if rate < 10:
        threshold, count, product = math.exp(-rate), 0, 1.0
        while True:
            product *= uniform()
            if product <= threshold:
                return count
            count += 1
    root, log_rate = math.sqrt(rate), math.log(rate)
    b = 0.931 + 2.53 * root
    a = -0.059 + 0.02483 * b
    inverse_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)
    while True:
        u = uniform() - 0.5
        v = uniform()
        u_s = 0.5 - abs(u)
        k = math.floor((2 * a / u_s + b) * u + rate + 0.43)
        if u_s >= 0.07 and v <= v_r:
            return k
        if k < 0 or (u_s < 0.013 and v > u_s):
            continue
        if (math.log(v) + math.log(inverse_alpha) - math.log(a / (u_s * u_s) + b)
                <= -rate + k * log_rate - math.lgamma(k + 1.0)):
            return k
