"""The noise protocol and its interpreters.

A mechanism is ordinary vectorized NumPy code whose only randomness comes from the
``noise`` object it receives. Every draw returns an array with a leading batch axis of
length ``noise.size``; the same mechanism then runs under different interpreters:

* :class:`Sampler` -- fresh i.i.d. draws from a NumPy ``Generator``;
* :class:`Replay`  -- records the draws of one run and replays them, in call order, in the
  next run, so ``M(x)`` and ``M(x')`` share their noise (correlated sampling);
* :class:`Enumerate` -- every joint outcome of finite discrete noise with its exact
  probability (float64 or :class:`fractions.Fraction`), see :func:`enumerate_outputs`.

Engines add interpreters of their own (``Importance``, ``Relaxed``, ``Trace``) by
subclassing :class:`Noise` and implementing :meth:`Noise._draw`; ``Noise.semantics``
tells :mod:`privet.core.ops` which meaning its primitives take while the mechanism runs.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from .errors import GridTooLargeError, NoiseError, NotEnumerableError, ReplayError, advice
from .text import fmt_num, fmt_value, fmt_vec

Shape = tuple[int, ...]

DEFAULT_ENUMERATION_CAP = 1 << 22
PROB_TOL = 1e-9  # a discrete draw's probabilities sum to 1 within this


def as_fraction(value: Any) -> Fraction:
    """Exact rational of ``value``; a float is read as the decimal it prints as (0.2 -> 1/5)."""
    if isinstance(value, Fraction):
        return value
    if isinstance(value, (int, np.integer)):
        return Fraction(int(value))
    if isinstance(value, (float, np.floating)):
        return Fraction(repr(float(value)))
    return Fraction(value)


def _shape(shape: int | Sequence[int]) -> Shape:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(s) for s in shape)


def _params_equal(a: dict[str, Any], b: dict[str, Any]) -> bool:
    if a.keys() != b.keys():
        return False
    for key in a:
        va, vb = a[key], b[key]
        try:
            if not np.array_equal(np.asarray(va, dtype=object), np.asarray(vb, dtype=object)):
                return False
        except Exception:  # pragma: no cover - exotic parameter types
            if va != vb:
                return False
    return True


@dataclass(frozen=True, eq=False)
class Dist:
    """One noise distribution: its family ``kind`` and parameters.

    Continuous families: ``laplace(scale)``, ``exponential(scale)``, ``gaussian(sigma)``,
    ``uniform(low, high)``. Discrete families: ``geometric(alpha, low, high)`` (two-sided,
    P(k) = (1-alpha)/(1+alpha) * alpha^|k|; with bounds, the tails are censored onto the
    bounds, which is the truncated geometric mechanism of FAIER Sec. 4.1),
    ``bernoulli(p)``, ``discrete(values, probs)`` (values may be vectors: the event shape),
    ``discrete_gaussian(sigma2)`` (N_Z(0, sigma2), P(k) proportional to exp(-k^2/(2 sigma2)),
    sampled exactly; enumerated on the integers where its tails still carry more than
    ``DGAUSS_TAIL``, so exact inference over it is exact up to that mass).
    """

    kind: str
    params: dict[str, Any] = field(default_factory=dict)

    # -- description -----------------------------------------------------------------
    def describe(self) -> str:
        inner = ", ".join(f"{k}={_short(v)}" for k, v in self.params.items())
        return f"{self.kind}({inner})"

    def same_as(self, other: Dist) -> bool:
        return self.kind == other.kind and _params_equal(self.params, other.params)

    @property
    def event_shape(self) -> Shape:
        if self.kind == "discrete":
            return tuple(np.asarray(self.params["values"]).shape[1:])
        if self.kind == "permutation":
            return (int(self.params["m"]),)
        return ()

    @property
    def is_finite(self) -> bool:
        if self.kind in ("bernoulli", "discrete", "permutation", "discrete_gaussian"):
            return True
        if self.kind == "geometric":
            return self.params.get("low") is not None and self.params.get("high") is not None
        return False

    @property
    def is_discrete(self) -> bool:
        return self.kind in ("bernoulli", "discrete", "geometric", "permutation",
                             "discrete_gaussian")

    # -- sampling ----------------------------------------------------------------------
    def sample(self, rng: np.random.Generator, shape: Shape) -> np.ndarray:
        p = self.params
        k = self.kind
        if "sampler" in p:
            return SAMPLERS[(k, p["sampler"])](rng, p, shape)
        if k == "laplace":
            return rng.laplace(0.0, p["scale"], size=shape)
        if k == "exponential":
            return rng.exponential(p["scale"], size=shape)
        if k == "gaussian":
            return rng.normal(0.0, p["sigma"], size=shape)
        if k == "uniform":
            return rng.uniform(p["low"], p["high"], size=shape)
        if k == "bernoulli":
            return (rng.random(size=shape) < float(p["p"])).astype(np.int64)
        if k == "geometric":
            lo, hi = p.get("low"), p.get("high")
            if lo is not None and hi is not None:
                if int(hi) - int(lo) + 1 > LISTED_SUPPORT:
                    return self._censored_geometric(rng, shape)
                return self._inverse_cdf(rng, shape)
            # two-sided geometric = difference of two one-sided geometrics, each the floor of
            # an exponential with rate -ln(alpha)
            rate = -math.log(float(p["alpha"]))
            g1 = np.floor(rng.standard_exponential(shape) / rate)
            g2 = np.floor(rng.standard_exponential(shape) / rate)
            out = (g1 - g2).astype(np.int64)
            if lo is not None or hi is not None:
                out = np.clip(out, lo, hi)
            return out
        if k == "permutation":
            return np.argsort(rng.random((*shape, int(p["m"]))), axis=-1)
        if k == "discrete_gaussian":
            return sample_discrete_gaussian(rng, p["sigma2"], shape)
        if k == "discrete":
            values = np.asarray(p["values"])
            probs = np.asarray([float(q) for q in p["probs"]])
            if np.all(probs == probs[0]):
                return values[rng.integers(0, len(values), size=shape)]
            return values[self._inverse_cdf(rng, shape, index=True)]
        raise NoiseError(f"unknown noise family {k!r}.")  # pragma: no cover

    def _censored_geometric(self, rng: np.random.Generator, shape: Shape) -> np.ndarray:
        """One uniform per draw through the closed-form inverse distribution function of the
        two-sided geometric (F(k) = alpha^-k / (1 + alpha) below 0, 1 - alpha^(k+1) /
        (1 + alpha) from 0), clipped to [low, high]: the censored law, as
        :meth:`_inverse_cdf` draws it, without listing a support of millions of values."""
        p = self.params
        a = float(p["alpha"])
        u = rng.random(size=shape)
        la = math.log(a)
        with np.errstate(divide="ignore"):
            below = u < a / (1 + a)  # F(-1)
            neg = -(np.ceil(np.log(np.maximum(u, 1e-300) * (1 + a)) / la) - 1)
            pos = np.floor(np.log((1 - u) * (1 + a)) / la)
        k = np.where(below, np.minimum(neg, -1), np.maximum(pos, 0))
        return np.clip(k, int(p["low"]), int(p["high"])).astype(np.int64)

    def _inverse_cdf(self, rng: np.random.Generator, shape: Shape, index: bool = False
                     ) -> np.ndarray:
        """One uniform per draw through the cumulative distribution of a finite support."""
        values, probs = self.support()
        cdf = np.cumsum(np.asarray(probs, dtype=float))
        cdf /= cdf[-1]
        idx = np.minimum(np.searchsorted(cdf, rng.random(size=shape), side="right"),
                         len(cdf) - 1)
        return idx if index else np.asarray(values)[idx]

    # -- exact support -------------------------------------------------------------------
    def support_size(self) -> int:
        """How many values :meth:`support` lists, without listing them (a geometric on
        [0, 10^7] has ten million)."""
        p = self.params
        if not self.is_finite:
            self.support()  # its sentence: continuous or unbounded
        if self.kind == "bernoulli":
            return 2
        if self.kind == "permutation":
            return math.factorial(int(p["m"]))
        if self.kind == "discrete":
            return len(p["values"])
        if self.kind == "geometric":
            return int(p["high"]) - int(p["low"]) + 1
        return len(self.support()[0])

    def support(self, exact: bool = False) -> tuple[np.ndarray, list]:
        """Finite support ``(values, probs)``; probs are Fractions when ``exact``."""
        if not self.is_finite:
            why = "continuous" if not self.is_discrete else "unbounded (give low and high)"
            raise NotEnumerableError(
                f"noise {self.describe()} is {why}, so it cannot be enumerated exactly."
            )
        p = self.params
        num = as_fraction if exact else float
        if self.kind == "discrete_gaussian":
            if exact:
                raise NotEnumerableError(
                    f"noise {self.describe()} has irrational probabilities, so it cannot be "
                    "enumerated with Fractions; enumerate it with floats (fractions=False).")
            return discrete_gaussian_support(p["sigma2"])
        if self.kind == "bernoulli":
            q = num(p["p"])
            return np.array([0, 1], dtype=np.int64), [1 - q, q]
        if self.kind == "permutation":
            m = int(p["m"])
            values = np.array(list(itertools.permutations(range(m))), dtype=np.int64)
            return values, [num(1) / math.factorial(m)] * len(values)
        if self.kind == "discrete":
            values = np.asarray(p["values"])
            probs = [num(q) for q in p["probs"]]
            total = sum(probs)
            if exact and total != 1:
                if abs(float(total) - 1) <= PROB_TOL and not all(
                        isinstance(q, (Fraction, int)) for q in p["probs"]):
                    # floats such as a softmax's sum to 1 only up to round-off: each is taken
                    # as its share of their exact sum (the law they stand for)
                    return values, [q / total for q in probs]
                raise NoiseError(
                    f"noise {self.describe()} has probabilities summing to {total}; give "
                    "probabilities that sum to 1 (Fractions for an exact run).")
            return values, probs
        # censored two-sided geometric on [low, high]
        alpha = num(p["alpha"])
        lo, hi = int(p["low"]), int(p["high"])
        values = np.arange(lo, hi + 1, dtype=np.int64)
        c = (1 - alpha) / (1 + alpha)
        probs = []
        for v in values.tolist():
            if v == lo and v == hi:
                probs.append(num(1))
            elif v == lo:
                probs.append(_geom_tail(alpha, v, below=True))
            elif v == hi:
                probs.append(_geom_tail(alpha, v, below=False))
            else:
                probs.append(c * alpha ** abs(v))
        return values, probs

    # -- densities (for importance weights) -------------------------------------------------
    def logpdf(self, x: np.ndarray) -> np.ndarray:
        p = self.params
        if self.kind == "laplace":
            b = np.asarray(p["scale"], dtype=float)
            return -np.abs(x) / b - np.log(2 * b)
        if self.kind == "exponential":
            b = np.asarray(p["scale"], dtype=float)
            return np.where(x >= 0, -x / b - np.log(b), -np.inf)
        if self.kind == "gaussian":
            s = np.asarray(p["sigma"], dtype=float)
            return -0.5 * (x / s) ** 2 - np.log(s * math.sqrt(2 * math.pi))
        if self.kind == "uniform":
            lo, hi = float(p["low"]), float(p["high"])
            return np.where((x >= lo) & (x <= hi), -math.log(hi - lo), -np.inf)
        values, probs = self.support()
        table = dict(zip(np.asarray(values).tolist(), probs))
        flat = np.vectorize(lambda v: math.log(table[v]) if table.get(v, 0) > 0 else -np.inf)
        return flat(x)


DGAUSS_TAIL = 2.0 ** -120  # mass of N_Z(0, s2) left out of its enumerated support


LISTED_SUPPORT = 1 << 16  # a bounded geometric wider than this is drawn in closed form


def discrete_gaussian_support(sigma2: Any) -> tuple[np.ndarray, list]:
    """Support and float probabilities of N_Z(0, sigma2) on [-T, T], where the two tails
    beyond T together carry less than ``DGAUSS_TAIL`` (Gaussian tail bound on the sum); the
    probabilities are normalized by the sum over the whole integers (to double precision)."""
    s2 = float(sigma2)
    top = int(math.ceil(math.sqrt(2 * s2 * math.log(2 / DGAUSS_TAIL)))) + 1
    far = top + int(math.ceil(math.sqrt(2 * s2 * 745))) + 2   # beyond: exp underflows
    k = np.arange(-far, far + 1)
    w = np.exp(-(k.astype(float) ** 2) / (2 * s2))
    total = math.fsum(w.tolist())
    keep = np.abs(k) <= top
    return k[keep].astype(np.int64), (w[keep] / total).tolist()


def _bern_exp(rng: np.random.Generator, num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """Bernoulli(exp(-num/den)) for arrays of non-negative integers (CKS20 Algorithm 1).

    Exact: every coin is a uniform integer compared with an integer. exp(-gamma) for
    gamma > 1 is the product of floor(gamma) Bernoulli(exp(-1)) coins and one
    Bernoulli(exp(-(gamma - floor(gamma)))) coin."""
    num = np.asarray(num, dtype=np.int64)
    den = np.asarray(den, dtype=np.int64)
    out = np.ones(num.shape, dtype=bool)
    whole = num // den
    # floor(gamma) coins of exp(-1): all must succeed
    j = 0
    while True:
        live = out & (whole > j)
        if not live.any():
            break
        out[live] = _bern_exp_small(rng, np.ones(int(live.sum()), np.int64),
                                    np.ones(int(live.sum()), np.int64))
        j += 1
    live = out
    if live.any():
        out[live] = _bern_exp_small(rng, (num - whole * den)[live], den[live])
    return out


def _bern_exp_small(rng: np.random.Generator, num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """Bernoulli(exp(-gamma)) for gamma = num/den in [0, 1]: draw A_k ~ Bernoulli(gamma/k)
    for k = 1, 2, ... until one is 0; the answer is 1 when that k is odd (CKS20 Alg. 1)."""
    k = np.ones(num.shape, dtype=np.int64)
    active = np.ones(num.shape, dtype=bool)
    while active.any():
        idx = np.flatnonzero(active)
        a = rng.integers(0, den[idx] * k[idx]) < num[idx]   # Bernoulli(gamma / k)
        k[idx[a]] += 1
        active[idx[~a]] = False
    return (k % 2) == 1


def _discrete_laplace(rng: np.random.Generator, t: int, n: int) -> np.ndarray:
    """n draws of the discrete Laplace with scale t (P(x) proportional to exp(-|x|/t); CKS20
    Algorithm 2 with s = 1), exact."""
    out = np.empty(n, dtype=np.int64)
    todo = np.arange(n)
    while todo.size:
        m = todo.size
        u = rng.integers(0, t, size=m)
        ok = _bern_exp(rng, u, np.full(m, t, np.int64))
        v = np.zeros(m, dtype=np.int64)
        going = ok.copy()
        while going.any():                       # V ~ geometric: count exp(-1) successes
            idx = np.flatnonzero(going)
            c = _bern_exp_small(rng, np.ones(idx.size, np.int64), np.ones(idx.size, np.int64))
            v[idx[c]] += 1
            going[idx[~c]] = False
        x = u + t * v
        b = rng.integers(0, 2, size=m)
        ok &= ~((b == 1) & (x == 0))
        out[todo[ok]] = ((1 - 2 * b) * x)[ok]
        todo = todo[~ok]
    return out


def sample_discrete_gaussian(rng: np.random.Generator, sigma2: Any, shape: Shape) -> np.ndarray:
    """Exact N_Z(0, sigma2) draws (CKS20 Algorithm 3): discrete Laplace proposals with
    t = floor(sigma) + 1, accepted with probability exp(-(|Y| - sigma2/t)^2 / (2 sigma2)),
    all in integer arithmetic (sigma2 = p/q)."""
    s2 = as_fraction(sigma2)
    p, q = s2.numerator, s2.denominator
    t = math.isqrt(p // q) + 1                       # floor(sigma) + 1
    while (t - 1) ** 2 * q > p:                      # isqrt of the floor may overshoot
        t -= 1
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    out = np.empty(n, dtype=np.int64)
    todo = np.arange(n)
    den = 2 * p * q * t * t
    if den > 2**40:
        raise NoiseError(f"discrete_gaussian needs sigma2 as a small fraction, got {sigma2}; "
                         "round it (for example to 6 decimals).")
    while todo.size:
        y = _discrete_laplace(rng, t, todo.size)
        num = (np.abs(y) * q * t - p) ** 2             # gamma = num / (2 p q t^2)
        ok = _bern_exp(rng, num, np.full(todo.size, den, np.int64))
        out[todo[ok]] = y[ok]
        todo = todo[~ok]
    return out.reshape(shape)


# -- declared float samplers ----------------------------------------------------------------
# ``noise.laplace(scale, sampler=...)`` / ``noise.gaussian(sigma, sampler=...)`` choose how a
# draw is computed from 53-bit uniforms ``rng.random()``; the default (no sampler) is NumPy's
# own Generator method (``random_laplace``: inverse CDF; ``random_standard_normal``:
# ziggurat). privet.floats decides which doubles each sampler can produce.

def _laplace_inverse_cdf(rng: np.random.Generator, p: dict, shape: Shape) -> np.ndarray:
    """The textbook inverse CDF, u uniform on [-1/2, 1/2): -b sgn(u) ln(1 - 2|u|)."""
    u = rng.random(size=shape) - 0.5
    with np.errstate(divide="ignore"):
        return -np.asarray(p["scale"], dtype=float) * np.sign(u) * np.log(1.0 - 2.0 * np.abs(u))


def _gaussian_box_muller(rng: np.random.Generator, p: dict, shape: Shape) -> np.ndarray:
    """Box-Muller (1958), the cosine branch: sqrt(-2 ln(1 - u1)) cos(2 pi u2)."""
    u1 = rng.random(size=shape)
    u2 = rng.random(size=shape)
    z = np.sqrt(-2.0 * np.log1p(-u1)) * np.cos(2.0 * np.pi * u2)
    return np.asarray(p["sigma"], dtype=float) * z


def _gaussian_polar(rng: np.random.Generator, p: dict, shape: Shape) -> np.ndarray:
    """Marsaglia's polar method as NumPy's legacy ``RandomState.normal`` computes its first
    value: x_i = 2 u_i - 1 until 0 < r2 = x1^2 + x2^2 < 1, then x2 sqrt(-2 ln(r2) / r2)."""
    out = np.empty(shape)
    flat = out.reshape(-1)
    todo = np.arange(flat.size)
    for _ in range(200):  # vectorized rejection: each round redraws the rejected entries
        if not todo.size:
            break
        x1 = 2.0 * rng.random(size=todo.size) - 1.0
        x2 = 2.0 * rng.random(size=todo.size) - 1.0
        r2 = x1 * x1 + x2 * x2
        ok = (r2 < 1.0) & (r2 != 0.0)
        flat[todo[ok]] = np.sqrt(-2.0 * np.log(r2[ok]) / r2[ok]) * x2[ok]
        todo = todo[~ok]
    if todo.size:  # 200 rejections of one entry have probability (1 - pi/4)^200 < 1e-130
        raise NoiseError("the polar method rejected 200 times in a row: the generator is "
                         "not producing uniforms.")
    return np.asarray(p["sigma"], dtype=float) * out


SAMPLERS: dict[tuple[str, str], Callable[[np.random.Generator, dict, Shape], np.ndarray]] = {
    ("laplace", "numpy"): lambda rng, p, shape: rng.laplace(0.0, p["scale"], size=shape),
    ("laplace", "inverse_cdf"): _laplace_inverse_cdf,
    ("gaussian", "numpy"): lambda rng, p, shape: rng.normal(0.0, p["sigma"], size=shape),
    ("gaussian", "box_muller"): _gaussian_box_muller,
    ("gaussian", "polar"): _gaussian_polar,
}


def _sampler_params(kind: str, params: dict, sampler: str | None) -> dict:
    if sampler is None:
        return params
    if (kind, sampler) not in SAMPLERS:
        known = ", ".join(s for k, s in SAMPLERS if k == kind)
        raise NoiseError(f"unknown {kind} sampler {sampler!r}; use one of {known}.")
    return {**params, "sampler": sampler}


def _geom_tail(alpha, v: int, below: bool):
    """P(Z <= v) (below) or P(Z >= v) of the two-sided geometric, v on the right side of 0."""
    if below:
        if v <= 0:
            return alpha ** (-v) / (1 + alpha)
        # P(Z <= v) = 1 - P(Z >= v+1)
        return 1 - alpha ** (v + 1) / (1 + alpha)
    if v >= 0:
        return alpha**v / (1 + alpha)
    return 1 - alpha ** (-(v - 1)) / (1 + alpha)


def _short(v: Any) -> str:
    arr = np.asarray(v, dtype=object)
    if arr.ndim == 0:
        return fmt_value(v)
    if arr.size <= 6:
        return fmt_vec(arr.ravel().tolist())
    return f"array{arr.shape}"


def _given(v: Any) -> str:
    """A parameter as given: a scalar as a number (∞, not the sentinel ABORTED)."""
    return fmt_num(v) if np.ndim(v) == 0 else _short(v)


def _positive(name: str, value: Any) -> None:
    if type(value) in (float, int):  # the common case, without NumPy's per-call cost
        if value > 0 and math.isfinite(value):
            return
        raise NoiseError(
            f"noise parameter {name} must be positive and finite, got {_given(value)}."
        )
    arr = np.asarray(value, dtype=float)
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise NoiseError(
            f"noise parameter {name} must be positive and finite, got {_given(value)}."
        )


class Noise:
    """The noise protocol. Subclasses implement :meth:`_draw`.

    Every public draw returns an array of shape ``(size, *shape, *event_shape)``.
    """

    size: int = 1
    semantics: str = "hard"

    def _draw(self, dist: Dist, shape: Shape) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- continuous -------------------------------------------------------------------------
    def laplace(self, scale, shape: int | Sequence[int] = (), sampler: str | None = None
                ) -> np.ndarray:
        """Laplace(0, scale) draws; ``sampler`` declares how they are computed (default
        NumPy's ``Generator.laplace``; ``'inverse_cdf'``: the textbook formula)."""
        _positive("scale", scale)
        return self._draw(Dist("laplace", _sampler_params("laplace", {"scale": scale}, sampler)),
                          _shape(shape))

    def exponential(self, scale, shape: int | Sequence[int] = ()) -> np.ndarray:
        """Exponential draws with mean ``scale`` (support [0, inf))."""
        _positive("scale", scale)
        return self._draw(Dist("exponential", {"scale": scale}), _shape(shape))

    def gaussian(self, sigma, shape: int | Sequence[int] = (), sampler: str | None = None
                 ) -> np.ndarray:
        """Normal(0, sigma^2) draws; ``sampler`` declares how they are computed (default
        NumPy's ziggurat ``Generator.normal``; ``'box_muller'``, ``'polar'``)."""
        _positive("sigma", sigma)
        return self._draw(
            Dist("gaussian", _sampler_params("gaussian", {"sigma": sigma}, sampler)),
            _shape(shape))

    def uniform(self, low: float = 0.0, high: float = 1.0, shape: int | Sequence[int] = ()):
        """Uniform draws on [low, high)."""
        if not float(high) > float(low):
            raise NoiseError(f"uniform noise needs low < high, got [{low}, {high}).")
        return self._draw(Dist("uniform", {"low": low, "high": high}), _shape(shape))

    # -- discrete ---------------------------------------------------------------------------
    def geometric(self, alpha, shape: int | Sequence[int] = (), low: int | None = None,
                  high: int | None = None) -> np.ndarray:
        """Two-sided geometric draws, P(k) proportional to alpha^|k| (alpha = e^-eps/Delta).

        With ``low`` and ``high``, the tails are censored onto the bounds (the mass of
        ``Z <= low`` sits on ``low``): ``clip(x + Z, 0, n)`` with ``low=-n, high=n`` is the
        truncated geometric mechanism on {0..n} (FAIER Sec. 4.1), and it is finite, so it can
        be enumerated.
        """
        a = float(alpha)
        if not 0 < a < 1:
            raise NoiseError(f"geometric noise needs 0 < alpha < 1, got {alpha}.")
        if low is not None and high is not None and int(low) > int(high):
            raise NoiseError(f"geometric noise needs low <= high, got [{low}, {high}].")
        params = {"alpha": alpha, "low": None if low is None else int(low),
                  "high": None if high is None else int(high)}
        return self._draw(Dist("geometric", params), _shape(shape))

    def truncated_geometric(self, alpha, n: int, shape: int | Sequence[int] = ()) -> np.ndarray:
        """Noise Z such that ``clip(x + Z, 0, n)`` is the truncated alpha-geometric mechanism."""
        return self.geometric(alpha, shape, low=-int(n), high=int(n))

    def bernoulli(self, p, shape: int | Sequence[int] = ()) -> np.ndarray:
        """0/1 draws with P(1) = p."""
        if not 0 <= float(p) <= 1:
            raise NoiseError(f"bernoulli noise needs 0 <= p <= 1, got {p}.")
        return self._draw(Dist("bernoulli", {"p": p}), _shape(shape))

    def discrete(self, values, probs=None, shape: int | Sequence[int] = ()) -> np.ndarray:
        """Draws from a finite distribution; ``values`` may be vectors (an event shape)."""
        vals = np.asarray(values)
        if vals.ndim == 0 or len(vals) == 0:
            raise NoiseError("discrete noise needs a non-empty list of values.")
        if probs is None:
            probs = [Fraction(1, len(vals))] * len(vals)
        probs = list(probs)
        if len(probs) != len(vals):
            raise NoiseError(
                f"discrete noise has {len(vals)} values but {len(probs)} probabilities."
            )
        if any(float(q) < 0 for q in probs) or not math.isclose(
            sum(float(q) for q in probs), 1.0, rel_tol=0, abs_tol=PROB_TOL
        ):
            raise NoiseError("discrete noise probabilities must be non-negative and sum to 1.")
        return self._draw(Dist("discrete", {"values": vals, "probs": tuple(probs)}),
                          _shape(shape))

    def discrete_gaussian(self, sigma2, shape: int | Sequence[int] = ()) -> np.ndarray:
        """N_Z(0, sigma2) draws: integers k with P(k) proportional to exp(-k^2 / (2 sigma2)).

        ``sigma2`` (the variance parameter sigma^2) is read as an exact rational (2.5 is 5/2)
        and sampled exactly by Algorithms 1-3 of Canonne, Kamath, Steinke (NeurIPS 2020): no
        floating-point number enters the sampler, so no output is more or less likely than
        the definition says.
        """
        _positive("sigma2", sigma2)
        return self._draw(Dist("discrete_gaussian", {"sigma2": as_fraction(sigma2)}),
                          _shape(shape))

    def permutation(self, m: int) -> np.ndarray:
        """A uniformly random permutation of 0..m-1 per sample, shape ``(size, m)``.

        Useful for uniform tie-breaking that exact enumeration can still see through (its
        support has m! outcomes). Sampling is an argsort of uniforms.
        """
        m = int(m)
        if m < 1:
            raise NoiseError(f"a permutation needs m >= 1 elements, got {m}.")
        return self._draw(Dist("permutation", {"m": m}), ())


class Sampler(Noise):
    """Fresh i.i.d. draws from a NumPy ``Generator``; ``size`` samples per draw."""

    def __init__(self, rng: np.random.Generator | int | None, size: int):
        self.rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        self.size = int(size)

    def _draw(self, dist: Dist, shape: Shape) -> np.ndarray:
        return dist.sample(self.rng, (self.size, *shape))


@dataclass
class Tape:
    """Draws recorded in call order: ``(dist, shape, values)`` triples; ``fresh``: the
    generator a replay draws what the tape cannot give it from (:class:`Replay`), None to
    refuse."""

    entries: list[tuple[Dist, Shape, np.ndarray]] = field(default_factory=list)
    fresh: np.random.Generator | None = None

    def __len__(self) -> int:
        return len(self.entries)


class Replay(Noise):
    """Record a tape from ``source`` on the first run, replay it on every later run.

    Call :meth:`rewind` between runs. In replay, the i-th draw must ask for the same
    distribution and shape as the i-th recorded draw; otherwise :class:`ReplayError`, since
    the two runs would not share their noise -- unless the tape has a :attr:`Tape.fresh`
    generator (``fresh=True`` when recording from a :class:`Sampler`: its own): such a draw
    (another distribution or shape, as the exponential mechanism's probabilities or a
    histogram's length change with the input, or one draw more than the tape holds) is
    then drawn afresh and the replay goes on with the next recorded draw. Each run's
    outputs still have their own distribution (every draw, given the run's earlier ones,
    has the law the run asks for: a replayed value was drawn from that very law,
    independently of everything before it; a fresh one is new), so the pairs stay valid
    pairs of samples of M(x) and M(x'); only the changed draws no longer tie them together.
    """

    def __init__(self, source: Noise | Tape, fresh: bool = False):
        if isinstance(source, Tape):
            self.source: Noise | None = None
            self.tape = source
            self.size = int(source.entries[0][2].shape[0]) if source.entries else 1
            self.recording = False
        else:
            if fresh and not isinstance(source, Sampler):
                raise NoiseError("Replay draws afresh from a Sampler's generator only.")
            self.source = source
            self.tape = Tape(fresh=source.rng if fresh else None)
            self.size = source.size
            self.recording = True
        self.position = 0
        self.semantics = getattr(source, "semantics", "hard")

    def rewind(self) -> Replay:
        """Start replaying from the first recorded draw; returns self."""
        self.recording = False
        self.position = 0
        return self

    def _draw(self, dist: Dist, shape: Shape) -> np.ndarray:
        if self.recording:
            assert self.source is not None
            values = self.source._draw(dist, shape)
            values.flags.writeable = False  # an in-place edit would corrupt the tape
            self.tape.entries.append((dist, shape, values))
            return values
        i = self.position
        if self.tape.fresh is not None and (
                i >= len(self.tape) or self.tape.entries[i][1] != shape
                or not self.tape.entries[i][0].same_as(dist)):
            self.position += 1
            return dist.sample(self.tape.fresh, (self.size, *shape))
        if i >= len(self.tape):
            raise ReplayError(
                f"under Replay the mechanism asked for draw #{i + 1} ({dist.describe()}), but the "
                f"recorded run made only {len(self.tape)}: its draws must not depend on the input."
            )
        rdist, rshape, values = self.tape.entries[i]
        if rshape != shape or not rdist.same_as(dist):
            raise ReplayError(
                f"under Replay draw #{i + 1} changed from {rdist.describe()} of shape {rshape} to "
                f"{dist.describe()} of shape {shape}: the mechanism's draws must not depend on "
                "the input."
            )
        self.position += 1
        return values


class _Probe(Noise):
    """Records the draws of one run (size 1), returning a legal value of each draw."""

    def __init__(self):
        self.size = 1
        self.draws: list[tuple[Dist, Shape]] = []

    def _draw(self, dist: Dist, shape: Shape) -> np.ndarray:
        self.draws.append((dist, shape))
        if dist.is_finite:
            values, _ = dist.support()
            first = np.asarray(values)[0]
            return np.broadcast_to(first, (1, *shape, *first.shape)).copy()
        return np.zeros((1, *shape))


@dataclass(frozen=True)
class Distribution:
    """An exact output distribution: unique outputs (rows) and their probabilities."""

    outputs: np.ndarray
    probs: tuple  # floats or Fractions, aligned with outputs
    grid_size: int

    @property
    def exact(self) -> bool:
        return bool(self.probs) and isinstance(self.probs[0], Fraction)

    def total(self):
        return sum(self.probs, Fraction(0) if self.exact else 0.0)

    def as_dict(self) -> dict:
        """``{output: probability}`` with outputs as Python scalars or tuples."""
        return {_key(row): p for row, p in zip(self.outputs, self.probs)}

    def prob(self, y) -> Any:
        """Probability of output ``y`` (0 if never produced)."""
        zero = Fraction(0) if self.exact else 0.0
        return self.as_dict().get(_key(np.asarray(y)), zero)


def _key(row: np.ndarray):
    arr = np.asarray(row)
    if arr.ndim == 0:
        return arr.item()
    return tuple(arr.ravel().tolist())


class Enumerate(Noise):
    """Every joint outcome of finite discrete noise, as one batch; see :func:`enumerate_outputs`.

    Used directly, the instance carries the grid built by :func:`enumerate_outputs` and
    replays it; its ``weights`` are the joint probabilities of the batch rows.
    """

    def __init__(self, exact: bool = False, cap: int = DEFAULT_ENUMERATION_CAP):
        self.exact = exact
        self.cap = int(cap)
        self.size = 1
        self._replay: Replay | None = None
        self._draws: list[tuple[Dist, Shape]] = []
        self.weights: Any = None

    def _draw(self, dist: Dist, shape: Shape) -> np.ndarray:
        if self._replay is None:
            raise NoiseError("run mechanisms under Enumerate through enumerate_outputs().")
        return self._replay._draw(dist, shape)

    def prepare(self, run: Callable[[Noise], Any]) -> None:
        """Probe ``run`` for its draws and build the joint grid with its weights.

        The grid depends only on the draws, not on the input: preparing the same instance
        again for a run with the same draws (another input of the same mechanism) reuses it.
        """
        probe = _Probe()
        run(probe)
        if self._replay is not None and len(probe.draws) == len(self._draws) and all(
                d.same_as(cd) and sh == csh
                for (d, sh), (cd, csh) in zip(probe.draws, self._draws)):
            return
        grid = 1
        for i, (dist, shape) in enumerate(probe.draws):
            try:  # sized before any support is listed (a geometric on [0, 10^7])
                grid *= dist.support_size() ** int(np.prod(shape, dtype=np.int64))
            except NotEnumerableError as err:
                raise NotEnumerableError(f"draw #{i + 1}: {err}") from None
        if grid > self.cap:
            raise GridTooLargeError(
                f"exact enumeration needs {grid:,} joint noise outcomes, above the cap of "
                f"{self.cap:,}; " + advice("raise the cap (cap=...) or use the BDD backend "
                                           "(backend='bdd')",
                                           "use the BDD backend (--backend bdd)") + "."
            )
        self._draws = list(probe.draws)
        factors = []
        for dist, shape in probe.draws:
            values, probs = dist.support(exact=self.exact)
            factors.append((dist, shape, np.asarray(values), probs))
        self.size = grid
        tape = Tape()
        per_coord: list[np.ndarray] = []  # one probability vector per scalar noise coordinate
        stride = grid
        for dist, shape, values, probs in factors:
            ncoord = int(np.prod(shape, dtype=np.int64))
            k = len(values)
            idx = np.empty((grid, ncoord), dtype=np.int64)
            for c in range(ncoord):
                stride //= k
                idx[:, c] = (np.arange(grid, dtype=np.int64) // stride) % k
                per_coord.append(probs)
            vals = values[idx].reshape((grid, *shape, *values.shape[1:]))
            tape.entries.append((dist, shape, vals))
        self.weights = _joint_weights(per_coord, self.exact)
        self._replay = Replay(tape)
        self._replay.size = grid

    def rewind(self) -> Enumerate:
        if self._replay is not None:
            self._replay.rewind()
        return self


def _joint_weights(per_coord: list, exact: bool) -> Any:
    """Joint probabilities of the mixed-radix grid (first coordinate slowest): the Kronecker
    product of the per-coordinate probability vectors. Exact weights are integer numerators
    over a common denominator (int64 when they fit, Python ints otherwise), divided once."""
    if not exact:
        weight = np.ones(1)
        for probs in per_coord:
            weight = np.kron(weight, np.asarray(probs, dtype=float))
        return weight
    denominator = 1
    numerators = []
    for probs in per_coord:
        d = math.lcm(*(Fraction(q).denominator for q in probs))
        numerators.append([int(Fraction(q) * d) for q in probs])
        denominator *= d
    bits = sum(max(n).bit_length() for n in numerators) if numerators else 0
    dtype = np.int64 if bits < 62 else object
    weight = np.ones(1, dtype=dtype)
    for nums in numerators:
        weight = np.kron(weight, np.array(nums, dtype=dtype))
    return ExactWeights(weight, denominator)


@dataclass(frozen=True)
class ExactWeights:
    """Exact joint probabilities: ``numerators / denominator``."""

    numerators: np.ndarray
    denominator: int

    def __len__(self) -> int:
        return len(self.numerators)

    def __getitem__(self, i) -> Any:
        if isinstance(i, (int, np.integer)):
            return Fraction(int(self.numerators[i]), self.denominator)
        return ExactWeights(self.numerators[i], self.denominator)


def enumerate_outputs(
    run: Callable[[Noise], np.ndarray],
    exact: bool = False,
    cap: int = DEFAULT_ENUMERATION_CAP,
    grid: Enumerate | None = None,
) -> Distribution:
    """Exact output distribution of ``run(noise)`` over every joint outcome of its noise.

    ``run`` is called twice: once with a probe that lists its draws (which must not depend
    on the noise values), once with the whole grid as one batch. Outputs are grouped by
    value; probabilities are float64, or :class:`fractions.Fraction` when ``exact``. Pass the
    same ``grid`` (an :class:`Enumerate`) across inputs of one mechanism to build the joint
    grid once.
    """
    noise = grid if grid is not None else Enumerate(exact=exact, cap=cap)
    if noise.exact != exact:
        raise NoiseError("the reused Enumerate grid was built with the other number type.")
    noise.prepare(run)
    outputs = np.asarray(run(noise.rewind()))
    return group_outputs(outputs, noise.weights, grid_size=noise.size)


def row_codes(flat: np.ndarray) -> np.ndarray:
    """One int64 code per row, equal exactly when the rows are equal (mixed radix over the
    per-column value codes; falls back to a structured sort for very wide rows)."""
    codes = np.zeros(flat.shape[0], dtype=np.int64)
    radix = 1
    for j in range(flat.shape[1]):
        col = _column_codes(flat[:, j])
        k = int(col.max()) + 1 if col.size else 1
        if radix * k >= 2**62:
            return np.unique(flat, axis=0, return_inverse=True)[1].ravel()
        codes = codes * k + col.ravel()
        radix *= k
    return codes


def value_codes(rows: np.ndarray, values) -> np.ndarray:
    """One int64 code per row of a matrix whose entries take a few known (distinct)
    ``values``: each entry's index among them plus one (0: not one of them), the digits of
    a row in base ``len(values) + 1`` (the caller keeps that below 2**63). Unlike
    :func:`row_codes`, the codes depend only on the ``values`` given, not on the rows seen,
    so rows coded in different batches compare. One equality pass over the whole matrix
    per value: no per-entry search, no strided column gathers."""
    rows = np.asarray(rows)
    base = len(values) + 1
    digits = _value_digits(rows, values)
    if rows.ndim == 2 and rows.shape[1] * math.log2(base) < 52:
        # combined by one matrix-vector product in doubles: exact below 2**53, and four to
        # five times faster than adding up strided integer columns
        weights = float(base) ** np.arange(rows.shape[1] - 1, -1, -1)
        return (digits @ weights).astype(np.int64)
    codes = digits[:, 0].astype(np.int64)
    for j in range(1, rows.shape[1]):
        codes *= base
        codes += digits[:, j]
    return codes


def _value_digits(rows: np.ndarray, values) -> np.ndarray:
    """Each entry's index among the distinct ``values`` plus one (0: none of them). Below
    255 values, one byte per entry, built in place: each equality mask, read as bytes, is
    scaled and added (twice as fast as a masked copy per value)."""
    hit = np.empty(rows.shape, dtype=bool)
    if len(values) < 255:
        digits = np.zeros(rows.shape, dtype=np.uint8)
        as_bytes = hit.view(np.uint8)
        for k, v in enumerate(values):
            np.equal(rows, v, out=hit)
            if k:
                np.multiply(as_bytes, k + 1, out=as_bytes)
            np.add(digits, as_bytes, out=digits)
        return digits
    digits = np.zeros(rows.shape, dtype=np.int64)
    for k, v in enumerate(values):
        np.equal(rows, v, out=hit)
        np.copyto(digits, k + 1, where=hit)
    return digits


PROBE_ROWS = 4096  # a column's values are first guessed from this many of its rows
FEW_VALUES = 8     # "few": compared value by value rather than sorted


def _column_codes(col: np.ndarray) -> np.ndarray:
    """Each value's rank among the column's distinct values (``np.unique``'s inverse): when
    the first rows show at most ``FEW_VALUES`` values and these cover the column (flags,
    categories, bits), the rank counts the values below (a few comparisons, twice as fast
    as the sort); a full sort otherwise."""
    if col.size > 4 * PROBE_ROWS:
        vals = np.unique(col[:PROBE_ROWS])
        if len(vals) <= FEW_VALUES:
            idx = np.zeros(col.shape, dtype=np.int64)
            for v in vals[:-1]:  # a few vectorized comparisons beat a sort
                idx += col > v
            if np.array_equal(vals[idx], col):
                return idx
    return np.unique(col, return_inverse=True)[1].ravel()


def group_outputs(outputs: np.ndarray, weights, grid_size: int) -> Distribution:
    """Sum ``weights`` of equal output rows: one sort of integer row codes, then segment sums."""
    n = outputs.shape[0]
    flat = outputs.reshape(n, -1) if outputs.ndim > 1 else outputs.reshape(n, 1)
    codes = row_codes(flat)
    order = np.argsort(codes, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(codes[order]) != 0]) if n else \
        np.array([], dtype=np.int64)
    uniq = flat[order[starts]]
    if isinstance(weights, ExactWeights):
        nums = weights.numerators
        sums = np.add.reduceat(nums[order], starts) if n else np.array([], dtype=nums.dtype)
        probs = tuple(Fraction(int(v), weights.denominator) for v in sums)
    else:
        w = np.asarray(weights, dtype=float)
        probs = tuple(np.add.reduceat(w[order], starts).tolist()) if n else ()
    shaped = uniq.reshape((len(uniq), *outputs.shape[1:])) if outputs.ndim > 1 else uniq[:, 0]
    return Distribution(outputs=shaped, probs=probs, grid_size=grid_size)
