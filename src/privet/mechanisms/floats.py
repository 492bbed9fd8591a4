"""Floating-point mechanisms: the textbook ones with their implementation bugs, and the fixes.

* ``floats.laplace`` -- ``x + Lap(Δ/ε)`` with NumPy's sampler, on one query: the textbook
  floating-point Laplace mechanism. Its outputs are porous (Mironov, *On significance of the
  least significant bits for differential privacy*, CCS 2012, Sec. 3): many doubles that
  ``M(x')`` outputs ``M(x)`` cannot, so its true ε is infinite.
* ``floats.laplace_inverse_cdf`` -- the same with the textbook formula
  ``-b·sgn(u)·ln(1 - 2|u|)`` (equally porous).
* ``floats.gaussian`` -- ``x + N(0, σ²)`` with NumPy's ziggurat, σ from the classic
  calibration ``σ = Δ·sqrt(2 ln(1.25/δ))/ε`` (Dwork and Roth, Thm. 3.22), claimed
  (ε, δ); ``floats.gaussian_box_muller`` and ``floats.gaussian_polar`` draw it by
  Box-Muller and by Marsaglia's polar method (Jin, McMurtry, Rubinstein, Ohrimenko, S&P
  2022, Sec. 4, find such samplers porous too).
* ``floats.snapping`` -- Mironov's snapping mechanism (CCS 2012, Sec. 5.2, Eq. (2)):
  ``clamp_B(round_Λ(clamp_B(x) + S·λ·ln U))``, ``U`` a uniform double of (0, 1] drawn to
  106 bits and rounded once, ``S`` a fair sign, ``Λ`` the smallest power of two ``>= λ``;
  ``(1/λ + 2^-49·B/λ)``-DP for sensitivity 1 (Theorem 1), so ``λ = (1 + 2^-49·B)/ε``.
* ``floats.clamped_sum`` -- ``sum(clamp(x, L, U)) + Lap((U - L)/ε)`` summed left to right
  in float64, for replace-one neighbors (a public number of records);
  ``floats.clamped_sum_f32`` accumulates in float32, as the tensors of ML libraries do.
  Casacuberta, Shoemate, Vadhan, Wagaman (*Widespread Underestimation of Sensitivity in
  Differentially Private Libraries*, CCS 2022, Sec. 3) show that rounding makes the real
  sensitivity of such a sum larger than ``U - L``: :func:`privet.floats.sum_sensitivity`
  finds the pairs.
* integer versions: ``floats.geometric`` (``x + two-sided geometric``, exact integers) and
  ``floats.int32_sum`` (a clamped sum in int32, wrapping around on overflow as NumPy's
  fixed-width integers do -- Casacuberta et al., Sec. 3.1).

``aggregate(mech)`` gives the deterministic statistic of the sums (what the noise is added
to), for the sensitivity checker.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..core.mechanism import Domain, Mechanism, Output, mechanism
from ..core.neighbors import all_differ, replace_one

PAPER = "floats"
MIRONOV = "Mironov, CCS 2012"
CASACUBERTA = "Casacuberta, Shoemate, Vadhan, Wagaman, CCS 2022"
SNAP_B = 100.0
SUM_LENGTH = 16
SUM_DOMAIN = Domain(length=(1, 1 << 16))
# one real query: the noise of each mechanism is calibrated to one answer of sensitivity 1
QUERY = Domain(length=1)


@mechanism(name="floats.laplace", domain=QUERY, epsilon=1.0, neighbors=all_differ(1),
           true_epsilon=math.inf, source=f"{MIRONOV}, Sec. 3 (NumPy's Generator.laplace)")
def laplace(noise, x, *, epsilon):
    """Textbook float Laplace: x + Lap(1/eps) on one query, NumPy's sampler (porous)."""
    return x + noise.laplace(1.0 / epsilon, x.shape)


@mechanism(name="floats.laplace_inverse_cdf", domain=QUERY, epsilon=1.0, neighbors=all_differ(1),
           true_epsilon=math.inf, source=f"{MIRONOV}, Sec. 3 (textbook formula)")
def laplace_inverse_cdf(noise, x, *, epsilon):
    """Textbook float Laplace by the inverse CDF -b sgn(u) ln(1 - 2|u|) (porous)."""
    return x + noise.laplace(1.0 / epsilon, x.shape, sampler="inverse_cdf")


def gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The classic Gaussian mechanism's σ = Δ sqrt(2 ln(1.25/δ)) / ε (Dwork-Roth Thm. 3.22)."""
    return sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


@mechanism(name="floats.gaussian", domain=QUERY, epsilon=1.0, delta=1e-5, neighbors=all_differ(1),
           true_epsilon=math.inf, source="Jin et al., S&P 2022, Sec. 4 (NumPy's ziggurat)")
def gaussian(noise, x, *, epsilon, delta=1e-5):
    """Float Gaussian: x + N(0, sigma^2) on one query, classic sigma, NumPy's ziggurat."""
    return x + noise.gaussian(gaussian_sigma(epsilon, delta), x.shape)


@mechanism(name="floats.gaussian_box_muller", domain=QUERY, epsilon=1.0, delta=1e-5,
           neighbors=all_differ(1), source="Jin et al., S&P 2022, Sec. 4 (Box-Muller)")
def gaussian_box_muller(noise, x, *, epsilon, delta=1e-5):
    """Float Gaussian drawn by Box-Muller (cosine branch)."""
    return x + noise.gaussian(gaussian_sigma(epsilon, delta), x.shape, sampler="box_muller")


@mechanism(name="floats.gaussian_polar", domain=QUERY, epsilon=1.0, delta=1e-5,
           neighbors=all_differ(1), source="Jin et al., S&P 2022, Sec. 4 (polar method)")
def gaussian_polar(noise, x, *, epsilon, delta=1e-5):
    """Float Gaussian drawn by Marsaglia's polar method (NumPy's legacy normal)."""
    return x + noise.gaussian(gaussian_sigma(epsilon, delta), x.shape, sampler="polar")


def snapping_lambda(epsilon: float, bound: float) -> float:
    """λ such that the snapping mechanism is ε-DP for sensitivity 1 (Mironov Thm. 1)."""
    return (1.0 + 2.0 ** -49 * bound) / epsilon


@mechanism(name="floats.snapping", domain=QUERY, epsilon=1.0, neighbors=all_differ(1),
           arg_ranges={"B": (10.0, 1000.0)}, true_epsilon=1.0,
           source=f"{MIRONOV}, Sec. 5.2")
def snapping(noise, x, *, epsilon, B=SNAP_B):
    """Mironov's snapping mechanism: clamp_B(round_Lambda(clamp_B(x) + S lambda ln U))."""
    lam = snapping_lambda(epsilon, B)
    grid = 2.0 ** math.ceil(math.log2(lam))          # Λ: smallest power of two >= λ
    sign = 2.0 * noise.bernoulli(0.5, x.shape) - 1.0
    u = noise.uniform(0.0, 1.0, x.shape) + noise.uniform(0.0, 1.0, x.shape) * 2.0 ** -53
    with np.errstate(divide="ignore"):
        z = np.clip(x, -B, B) + sign * lam * np.log(u)
    return np.clip(grid * np.rint(z / grid), -B, B)


def sequential_sum(values: np.ndarray, dtype: Any = np.float64) -> Any:
    """Left-to-right sum in ``dtype`` over the last axis (``np.add.accumulate`` rounds after
    every addition, as a Python loop would; ``np.sum`` pairs the terms instead)."""
    arr = np.asarray(values, dtype=dtype)
    if arr.shape[-1] == 0:
        return np.zeros(arr.shape[:-1], dtype=dtype)[()]
    return np.add.accumulate(arr, axis=-1, dtype=dtype)[..., -1][()]


def _noisy_sum(noise, x, lower: float, upper: float, epsilon: float, dtype: Any):
    total = sequential_sum(np.clip(x, lower, upper), dtype)
    return float(total) + noise.laplace((upper - lower) / epsilon)


@mechanism(name="floats.clamped_sum", epsilon=1.0, neighbors=replace_one(), domain=SUM_DOMAIN,
           true_epsilon=math.inf, source=f"{CASACUBERTA}, Sec. 3")
def clamped_sum(noise, x, *, epsilon, lower=0.0, upper=1.0):
    """Clamped sum, float64, left to right, + Lap((U - L)/eps): declared sensitivity U - L."""
    return _noisy_sum(noise, x, lower, upper, epsilon, np.float64)


@mechanism(name="floats.clamped_sum_f32", epsilon=1.0, neighbors=replace_one(),
           domain=SUM_DOMAIN, true_epsilon=math.inf, source=f"{CASACUBERTA}, Sec. 3")
def clamped_sum_f32(noise, x, *, epsilon, lower=0.0, upper=1.0):
    """Clamped sum accumulated in float32 (ML tensors) + Lap((U - L)/eps)."""
    return _noisy_sum(noise, x, lower, upper, epsilon, np.float32)


@mechanism(name="floats.geometric", epsilon=1.0, neighbors=all_differ(1),
           domain=Domain(length=1, integer=True), output=Output.numeric(integer=True),
           true_epsilon=1.0, source="Ghosh, Roughgarden, Sundararajan (geometric mechanism)")
def geometric(noise, x, *, epsilon):
    """Integer counts + two-sided geometric noise (alpha = e^-eps): exact integers."""
    return x + noise.geometric(math.exp(-epsilon), x.shape)


@mechanism(name="floats.int32_sum", epsilon=1.0, neighbors=replace_one(),
           domain=Domain(length=(1, 1 << 16), integer=True),
           output=Output.numeric(integer=True), true_epsilon=math.inf,
           source=f"{CASACUBERTA}, Sec. 3.1")
def int32_sum(noise, x, *, epsilon, lower=0, upper=1 << 30):
    """Clamped integer sum in int32 (wraps around on overflow) + geometric noise."""
    total = np.clip(np.asarray(x, dtype=np.int64), lower, upper).astype(np.int32).sum(
        dtype=np.int32)
    return np.int64(total) + noise.geometric(math.exp(-epsilon / (upper - lower)))


MECHANISMS = (laplace, laplace_inverse_cdf, gaussian, gaussian_box_muller, gaussian_polar,
              snapping, clamped_sum, clamped_sum_f32, geometric, int32_sum)

PER_QUERY = frozenset({"floats.laplace", "floats.laplace_inverse_cdf", "floats.gaussian",
                       "floats.gaussian_box_muller", "floats.gaussian_polar",
                       "floats.snapping", "floats.geometric"})  # one query: one entry each

EXAMPLES: dict[str, list[float]] = {m.name: [0.0] for m in MECHANISMS}
EXAMPLES["floats.clamped_sum"] = [0.5] * SUM_LENGTH
EXAMPLES["floats.clamped_sum_f32"] = [0.5] * SUM_LENGTH
EXAMPLES["floats.int32_sum"] = [1] * SUM_LENGTH


def _known(value: float | None) -> Callable[[float, int | None, Mapping[str, Any]], float | None]:
    return lambda eps, length, args: value


def _snapping_known(eps: float, length: int | None, args: Mapping[str, Any]) -> float:
    B = float(args.get("B", SNAP_B))
    return (1.0 + 2.0 ** -49 * B) / snapping_lambda(eps, B)


KNOWN: dict[str, Callable[[float, int | None, Mapping[str, Any]], float | None]] = {
    "floats.laplace": _known(math.inf), "floats.laplace_inverse_cdf": _known(math.inf),
    "floats.gaussian": _known(math.inf), "floats.gaussian_box_muller": _known(None),
    "floats.gaussian_polar": _known(None), "floats.snapping": _snapping_known,
    "floats.clamped_sum": _known(math.inf), "floats.clamped_sum_f32": _known(math.inf),
    "floats.geometric": lambda eps, length, args: eps,
    "floats.int32_sum": _known(math.inf),
}


def aggregate(mech: Mechanism) -> Callable[[np.ndarray], Any]:
    """The noiseless statistic of a clamped-sum mechanism of this module as a function of
    the (unclamped) dataset, with the mechanism's default bounds; it also takes a 2-D array
    (one dataset per row)."""
    lower, upper = mech.args.get("lower", 0.0), mech.args.get("upper", 1.0)
    if mech.name == "floats.int32_sum":
        return lambda x: np.clip(np.asarray(x, dtype=np.int64), lower, upper).astype(
            np.int32).sum(axis=-1, dtype=np.int32)
    dtype = np.float32 if mech.name == "floats.clamped_sum_f32" else np.float64
    return lambda x: sequential_sum(np.clip(x, lower, upper), dtype)


SUMS = {"floats.clamped_sum": np.float64, "floats.clamped_sum_f32": np.float32,
        "floats.int32_sum": np.int64}


__all__ = ["EXAMPLES", "KNOWN", "MECHANISMS", "PER_QUERY", "SUMS", "aggregate", "clamped_sum",
           "clamped_sum_f32", "gaussian", "gaussian_box_muller", "gaussian_polar",
           "gaussian_sigma", "geometric", "int32_sum", "laplace", "laplace_inverse_cdf",
           "sequential_sum", "snapping", "snapping_lambda"]
