"""The special functions NumPy lacks, vectorised over float64 arrays: log-gamma, digamma, trigamma, the Hurwitz
zeta function and polygamma, the inverse error function, and the modified Bessel function I1.

NumPy has no lgamma, digamma or erfinv, and SciPy is not a dependency (one more large package for four
functions); `math.lgamma` called per element is two orders of magnitude slower than these. Each is written from
its textbook series, with a fixed number of whole-array steps (no loop over elements):

- lgamma: the reflection formula below 0.5, the recurrence Γ(x + 1) = xΓ(x) up to x >= 10, then Stirling's
  series; digamma alike; trigamma as PyTorch computes it (six steps of its recurrence and a short series: its
  values are PyTorch's) (their reflection formulas, recurrences and asymptotic series with the
  Bernoulli numbers); polygamma(n >= 2, x) = (-1)^(n+1) n! ζ(n + 1, x), ζ by direct summation up to q >= 10 and
  then the Euler-Maclaurin formula.
- erfinv: an approximation good to 1e-3, then Newton steps on erf (erfc in the tails, where 1 - |y| is exact).
- i1: its power series up to |x| = 20 (positive terms, no cancellation), the asymptotic series beyond.

They compute in float64; callers cast back to the tensor's dtype (float32 results are then correctly rounded
from a double computation). Absolute accuracy is about 1e-15 times the size of the terms (near lgamma's zeros at 1
and 2 the result is an absolute, not a relative, 1e-15).
"""

from __future__ import annotations

import math

import numpy as np

# B_2k, the Bernoulli numbers of the asymptotic series
_B = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510)
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
_SHIFT = 10.0  # the recurrences move every argument to at least this before the asymptotic series
_erf = np.frompyfunc(math.erf, 1, 1)  # correctly rounded (NumPy has no erf)
_erfc = np.frompyfunc(math.erfc, 1, 1)


def _f64(x: np.ndarray) -> np.ndarray:
    return np.array(x, dtype=np.float64, copy=True)


def _nonpositive_integer(x: np.ndarray) -> np.ndarray:
    return (x <= 0) & (np.floor(x) == x)


def _sinpi(x: np.ndarray) -> np.ndarray:
    """sin(pi x) with x reduced exactly to [-0.5, 0.5] first (sin(pi * x) loses digits for large x)."""
    n = np.round(x)
    s = np.sin(np.pi * (x - n))
    return np.where(np.fmod(n, 2) == 0, s, -s)


def _shift_up(x: np.ndarray, each: np.ndarray, term: object) -> None:
    """Add term(x) to `each` and 1 to x wherever x < _SHIFT, until none is (whole-array steps)."""
    while True:
        low = x < _SHIFT
        if not low.any():
            return
        each[low] += term(x[low])  # type: ignore[operator]
        x[low] += 1.0


def lgamma(a: np.ndarray) -> np.ndarray:
    """log|Γ(a)|, elementwise (inf at 0 and the negative integers)."""
    x = _f64(a)
    with np.errstate(all="ignore"):
        out = np.full(x.shape, np.inf)
        finite = np.isfinite(x) & ~_nonpositive_integer(x)
        out[np.isnan(x)] = np.nan
        xf = x[finite]
        reflect = xf < 0.5
        z = np.where(reflect, 1.0 - xf, xf)
        log_product = np.zeros_like(z)  # log of z (z + 1) ... until z >= 10: lgamma(z) = lgamma(z + n) - that
        product = np.ones_like(z)
        while True:
            low = z < _SHIFT
            if not low.any():
                break
            product[low] *= z[low]
            z[low] += 1.0
            big = product > 1e280  # take the log before the product overflows
            log_product[big] += np.log(product[big])
            product[big] = 1.0
        log_product += np.log(product)
        iz, iz2 = 1.0 / z, 1.0 / (z * z)
        series = np.zeros_like(z)
        for k in range(len(_B), 0, -1):
            series = series * iz2 + _B[k - 1] / (2 * k * (2 * k - 1))
        value = (z - 0.5) * np.log(z) - z + _HALF_LOG_2PI + series * iz - log_product
        # Γ(x) Γ(1 - x) = π / sin(π x)
        value = np.where(reflect, math.log(math.pi) - np.log(np.abs(_sinpi(xf))) - value, value)
        out[finite] = value
        # near the zeros at 1 and 2 the series above loses its relative precision (an absolute 1e-15): there
        # the Taylor series of lgamma(1 + z) instead, exact at 1 and 2 (as C's lgamma)
        for centre, extra in ((1.0, False), (2.0, True)):
            near = np.abs(x - centre) <= 0.5
            if near.any():
                z = x[near] - centre  # exact (Sterbenz)
                out[near] = _lgamma_1p(z) + (np.log1p(z) if extra else 0.0)
    return out


_ZETAS: list[float] = []  # ζ(2), ζ(3), ...: the coefficients of lgamma's Taylor series, computed when first used
_EULER_GAMMA = 0.5772156649015329


def _lgamma_1p(z: np.ndarray) -> np.ndarray:
    """lgamma(1 + z) for |z| <= 0.5: -γ z + Σ_k>=2 (-1)^k ζ(k) z^k / k (56 terms: 0.5^56 / 56 is below an ulp)."""
    if not _ZETAS:
        _ZETAS.extend(float(hurwitz_zeta(k, np.ones(1))[0]) for k in range(2, 57))
    total = np.zeros_like(z)
    for k in range(56, 1, -1):  # Horner, from the smallest term
        total = (total + (-1) ** k * _ZETAS[k - 2] / k) * z
    return (total - _EULER_GAMMA) * z


def digamma(a: np.ndarray) -> np.ndarray:
    """ψ(a) = Γ'(a) / Γ(a), elementwise: -inf at +0, +inf at -0 (PyTorch's), nan at the negative integers."""
    x = _f64(a)
    with np.errstate(all="ignore"):
        out = np.empty(x.shape)
        pole = _nonpositive_integer(x)
        out[pole] = np.nan
        zero = x == 0
        out[zero] = np.copysign(np.inf, -x[zero])
        out[x == np.inf] = np.inf
        out[x == -np.inf] = np.nan
        out[np.isnan(x)] = np.nan
        ok = np.isfinite(x) & ~pole
        xf = x[ok]
        reflect = xf < 0
        z = np.where(reflect, 1.0 - xf, xf)
        acc = np.zeros_like(z)
        _shift_up(z, acc, lambda t: -1.0 / t)  # ψ(z) = ψ(z + 1) - 1 / z
        iz2 = 1.0 / (z * z)
        series = np.zeros_like(z)
        for k in range(len(_B), 0, -1):
            series = series * iz2 + _B[k - 1] / (2 * k)
        value = np.log(z) - 0.5 / z - series * iz2 + acc
        # ψ(1 - x) - ψ(x) = π / tan(π x), with x reduced exactly (tan has period 1)
        value = np.where(reflect, value - np.pi / np.tan(np.pi * (xf - np.round(xf))), value)
        out[ok] = value
    return out


def trigamma(a: np.ndarray) -> np.ndarray:
    """ψ'(a), elementwise, as PyTorch computes it (its reflection takes sin(pi x) unreduced: at the negative
    integers a large finite value, as there)."""
    x = _f64(a)
    with np.errstate(all="ignore"):
        out = np.empty(x.shape)
        out[x == np.inf] = 0.0
        out[(x == -np.inf) | np.isnan(x)] = np.nan
        ok = np.isfinite(x)
        xf = x[ok]
        reflect = xf < 0.5
        z = np.where(reflect, 1.0 - xf, xf)
        acc = np.zeros_like(z)
        # PyTorch's trigamma, term for term: six steps of ψ'(z) = ψ'(z + 1) + 1 / z², then the asymptotic series
        # to its B_6 term. Its truncation error (~5e-10 relative near z = 1) is PyTorch's values: kept, so that
        # gradients (digamma's is trigamma) agree with PyTorch's to the last digits
        for _ in range(6):
            acc += 1.0 / (z * z)
            z += 1.0
        iz, iz2 = 1.0 / z, 1.0 / (z * z)
        value = (1.0 + 0.5 * iz + iz2 * (1 / 6 - iz2 * (1 / 30 - iz2 / 42))) * iz + acc
        # ψ'(1 - x) + ψ'(x) = π² / sin²(π x)
        value = np.where(reflect, np.pi**2 / np.sin(np.pi * xf) ** 2 - value, value)
        out[ok] = value
    return out


def hurwitz_zeta(s: int, a: np.ndarray) -> np.ndarray:
    """ζ(s, a) = Σ_k (a + k)^-s for an integer s >= 2 (inf at the non-positive integers a)."""
    q = _f64(a)
    with np.errstate(all="ignore"):
        out = np.empty(q.shape)
        out[_nonpositive_integer(q) | (q == -np.inf)] = np.inf  # (PyTorch's values at the infinities)
        out[(q == np.inf) | np.isnan(q)] = np.nan
        ok = np.isfinite(q) & ~_nonpositive_integer(q)
        z = q[ok]
        acc = np.zeros_like(z)
        _shift_up(z, acc, lambda t: t ** float(-s))
        # Euler-Maclaurin: z^(1-s)/(s-1) + z^-s/2 + Σ_j B_2j/(2j)! s(s+1)...(s+2j-2) z^(-s-2j+1)
        value = z ** float(1 - s) / (s - 1) + 0.5 * z ** float(-s)
        rising, power, factorial = float(s), z ** float(-s - 1), 2.0
        for j in range(1, len(_B) + 1):
            value += _B[j - 1] / factorial * rising * power
            rising *= (s + 2 * j - 1) * (s + 2 * j)
            factorial *= (2 * j + 1) * (2 * j + 2)
            power = power / (z * z)
        out[ok] = value + acc
    return out


def polygamma(n: int, a: np.ndarray) -> np.ndarray:
    """ψ^(n)(a), the n-th derivative of digamma: ψ, ψ', then (-1)^(n+1) n! ζ(n + 1, a)."""
    if n == 0:
        return digamma(a)
    if n == 1:
        return trigamma(a)
    with np.errstate(all="ignore"):
        return (-1.0) ** (n + 1) * math.exp(math.lgamma(n + 1)) * hurwitz_zeta(n + 1, a)


def erfinv(a: np.ndarray) -> np.ndarray:
    """The inverse of erf on [-1, 1] (±inf at ±1, nan beyond)."""
    y = _f64(a)
    with np.errstate(all="ignore"):
        out = np.full(y.shape, np.nan)
        out[np.abs(y) == 1] = np.copysign(np.inf, y[np.abs(y) == 1])
        ok = np.abs(y) < 1
        yv = y[ok]
        w = np.abs(yv)
        # Winitzki's approximation (relative error below 2e-3), in |y|
        k = 0.147
        ln = np.log1p(-w * w)
        t = 2 / (np.pi * k) + ln / 2
        x = np.sqrt(np.sqrt(t * t - ln / k) - t)
        # Newton's steps (quadratic convergence: 1e-3 -> 1e-6 -> 1e-12 -> exact): on erf(x) = |y| in the middle;
        # in the tails on log erfc(x) = log(1 - |y|) (1 - |y| is exact there, and the log nearly linear in x)
        tail = w > 0.5
        rest = np.log(1.0 - w)
        for _ in range(3):
            slope = 2 / math.sqrt(math.pi) * np.exp(-x * x)
            c = _erfc(x).astype(np.float64)
            mid = (_erf(x).astype(np.float64) - w) / slope
            x = x - np.where(tail, (np.log(c) - rest) * -c / slope, mid)
        out[ok] = np.copysign(x, yv)
    return out


def i1(a: np.ndarray) -> np.ndarray:
    """The modified Bessel function of the first kind of order one, I1(a) (odd)."""
    x = _f64(a)
    ax = np.abs(x)
    with np.errstate(all="ignore"):
        out = np.empty(x.shape)
        small = ax <= 20
        xs = ax[small] / 2
        term = xs.copy()  # (x/2)^(2k+1) / (k! (k+1)!)
        total = term.copy()
        sq = xs * xs
        for k in range(1, 60):
            term = term * sq / (k * (k + 1))
            total += term
        out[small] = total
        xl = ax[~small]
        # I_1(x) ~ e^x / sqrt(2 pi x) Σ_k (-1)^k a_k / x^k, a_k = (4 - 1)(4 - 9)...(4 - (2k - 1)²) / (k! 8^k)
        coef = np.ones_like(xl)
        series = np.ones_like(xl)
        for k in range(1, 40):
            coef = coef * -(4.0 - (2 * k - 1) ** 2) / (k * 8 * xl)
            series += coef
        # e^x overflows from x = 709.78 on, and so does PyTorch's I1 (though the value would fit up to 713)
        out[~small] = np.exp(xl) / np.sqrt(2 * np.pi * xl) * series
        out[np.isnan(x)] = np.nan
    return np.copysign(out, x)
