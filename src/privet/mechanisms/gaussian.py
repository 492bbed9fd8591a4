"""The Gaussian family: approximate-DP and zCDP mechanisms, sound and broken, with known truths.

Sound:

* ``gaussian.classic`` -- the classic calibration σ = Δ·sqrt(2 ln(1.25/δ))/ε (Dwork & Roth
  2014, Thm A.1), at (ε, δ) = (0.5, 1e-3), inside its proven range ε < 1;
* ``gaussian.classic_eps2`` -- the same formula at ε = 2, outside the range of the proof
  but still private (true δ(2) ≈ 2.6e-5 < 1e-3): the sound control of the next one;
* ``gaussian.analytic`` -- Balle & Wang's analytic calibration (ICML 2018, Thm 8) at
  (1, 1e-5): tight, its true δ(1) is 1e-5;
* ``gaussian.discrete`` -- the discrete Gaussian N_Z(0, σ²) of Canonne, Kamath, Steinke
  (NeurIPS 2020) on integer counts, sampled exactly; σ² = 14 gives (1, 1e-5) by their Thm 7;
* ``gaussian.zcdp`` -- N(0, Δ²/(2ρ)): ρ-zCDP with ρ = 0.125 (Bun & Steinke 2016, Prop 1.6),
  the way OpenDP states its Gaussian;
* ``gaussian.noisy_max`` / ``gaussian.svt`` -- report-noisy-max and above-threshold with
  Gaussian noise; claimed by post-processing of the Gaussian mechanism on the whole vector
  (L2 sensitivity sqrt(k)·Δ when every answer moves by Δ): sound and loose;
* ``gaussian.dpsgd`` -- one DP-SGD step (Abadi et al., CCS 2016, Algorithm 1) on a
  two-parameter logistic model: per-example gradients clipped to norm C, summed, plus
  N(0, z²C²), under add/remove-one-record: the Gaussian mechanism with μ = 1/z.

Broken, each one mistake away from a sound one, with its true δ at the claimed ε
(``true_delta``, from the exact Gaussian profile of :mod:`privet.stats.profiles`):

* ``gaussian.classic_eps10`` -- the classic σ used at ε = 10, δ = 1e-3: true δ ≈ 3.4e-3;
* ``gaussian.dpsgd_noclip`` -- the DP-SGD step with clipping forgotten: a record with
  |x| = 10 moves the gradient sum by about 10 C;
* ``gaussian.mean_sens`` -- a mean of values in [-1, 1] with sensitivity taken as 1/n,
  on replace-one neighbors (true sensitivity 2/n);
* ``gaussian.wrong_neighbors`` -- a sum of values in [-1, 1] calibrated for add/remove
  (Δ = 1) but claimed for replace-one (Δ = 2).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..core import ops
from ..core.mechanism import Domain, Output, mechanism
from ..core.neighbors import add_remove, all_differ, replace_one
from ..stats.profiles import (
    analytic_sigma,
    classic_sigma,
    discrete_gaussian_delta,
    gaussian_delta,
    gaussian_epsilon,
)
from ._common import INDEXED, first_index, index_categories, row

PAPER = "Gaussian family"
SCALAR = Domain(length=1)
RECORDS = Domain(length=5, low=-1.0, high=1.0)
DPSGD_DATA = Domain(length=(2, 8), low=-10.0, high=10.0)
DPSGD_Z, DPSGD_C, DPSGD_LR = 1.0, 1.0, 1.0
DPSGD_LOT = 4   # the public lot size L that the noisy sum is divided by (Abadi et al., Alg. 1)
THETA0 = np.array([0.5, -0.2])
DG_SIGMA2 = 14


def _profile_mech(name: str, epsilon: float, delta: float, mu_true: float, source: str,
                  **spec) -> dict:
    """Spec fields of a Gaussian-profile mechanism whose true μ = Δ/σ is ``mu_true``."""
    return dict(name=name, epsilon=epsilon, delta=delta, source=f"{PAPER}: {source}",
                true_epsilon=gaussian_epsilon(delta, mu_true),
                true_delta=gaussian_delta(epsilon, mu_true),
                true_profile=functools.partial(gaussian_epsilon, mu=mu_true), **spec)


def _scalar(noise, x, sigma: float):
    return x[0] + noise.gaussian(sigma)


CLASSIC = classic_sigma(0.5, 1e-3)


@mechanism(**_profile_mech("gaussian.classic", 0.5, 1e-3, 1 / CLASSIC,
                           "classic calibration (Dwork & Roth Thm A.1), ε < 1",
                           neighbors=all_differ(1), domain=SCALAR, output=Output.numeric()))
def classic(noise, x, *, epsilon, delta):
    """x + N(0, σ²) with σ = sqrt(2 ln(1.25/δ))/ε (sensitivity 1)."""
    return _scalar(noise, x, classic_sigma(epsilon, delta))


@mechanism(**_profile_mech("gaussian.classic_eps2", 2.0, 1e-3, 1 / classic_sigma(2.0, 1e-3),
                           "classic calibration at ε = 2 (outside its proof, still private)",
                           neighbors=all_differ(1), domain=SCALAR, output=Output.numeric()))
def classic_eps2(noise, x, *, epsilon, delta):
    """The classic σ at ε = 2: the proof does not cover it, but δ(2) ≈ 2.6e-5 < 1e-3."""
    return _scalar(noise, x, classic_sigma(epsilon, delta))


@mechanism(**_profile_mech("gaussian.classic_eps10", 10.0, 1e-3,
                           1 / classic_sigma(10.0, 1e-3),
                           "classic calibration at ε = 10 (BROKEN: true δ ≈ 3.4e-3)",
                           neighbors=all_differ(1), domain=SCALAR, output=Output.numeric()))
def classic_eps10(noise, x, *, epsilon, delta):
    """The classic σ at ε = 10, far outside ε < 1: the claimed δ = 1e-3 does not hold."""
    return _scalar(noise, x, classic_sigma(epsilon, delta))


ANALYTIC = analytic_sigma(1.0, 1e-5)


@mechanism(**_profile_mech("gaussian.analytic", 1.0, 1e-5, 1 / ANALYTIC,
                           "analytic calibration (Balle & Wang 2018, Thm 8), tight",
                           neighbors=all_differ(1), domain=SCALAR, output=Output.numeric()))
def analytic(noise, x, *, epsilon, delta):
    """x + N(0, σ²) with Balle & Wang's smallest σ for (ε, δ) (sensitivity 1)."""
    return _scalar(noise, x, analytic_sigma(epsilon, delta))


@mechanism(name="gaussian.discrete", epsilon=1.0, delta=1e-5, neighbors=all_differ(1),
           domain=Domain(length=1, integer=True, low=0, high=3),
           output=Output.numeric(integer=True),
           true_epsilon=None, true_delta=discrete_gaussian_delta(1.0, DG_SIGMA2),
           source=f"{PAPER}: discrete Gaussian (Canonne, Kamath, Steinke 2020, Thm 7)")
def discrete(noise, x, *, sigma2=DG_SIGMA2):
    """x + N_Z(0, σ²), σ² = 14: (1, 1e-5)-DP for integer counts of sensitivity 1 (CKS20
    Thm 7 gives δ(1) ≈ 9.3e-6); sampled exactly (CKS20 Algorithms 1-3)."""
    return x[0] + noise.discrete_gaussian(sigma2)


RHO = 0.125


@mechanism(name="gaussian.zcdp", rho=RHO, neighbors=all_differ(1), domain=SCALAR,
           output=Output.numeric(), true_epsilon=gaussian_epsilon(1e-5, math.sqrt(2 * RHO)),
           true_profile=functools.partial(gaussian_epsilon, mu=math.sqrt(2 * RHO)),
           source=f"{PAPER}: N(0, 1/(2ρ)) is ρ-zCDP (Bun & Steinke 2016, Prop 1.6)")
def zcdp(noise, x, *, rho):
    """x + N(0, 1/(2ρ)): ρ-zCDP at sensitivity 1 (``true_epsilon`` is ε at δ = 1e-5)."""
    return _scalar(noise, x, 1 / math.sqrt(2 * rho))


K_QUERIES = 4


@mechanism(name="gaussian.noisy_max", rho=0.5, neighbors=all_differ(1), domain=INDEXED,
           output=Output.categorical(index_categories()),
           source=f"{PAPER}: report-noisy-max with Gaussian noise, claimed by post-processing")
def noisy_max(noise, x, *, rho):
    """argmax(x + N(0, σ² I)) with σ = sqrt(k/(2ρ)): the vector release is ρ-zCDP when every
    answer moves by at most 1 (L2 sensitivity sqrt(k)), and the index is post-processing."""
    sigma = math.sqrt(x.shape[-1] / (2 * rho))
    return ops.argmax(x + noise.gaussian(sigma, x.shape), axis=-1)


@mechanism(name="gaussian.svt", rho=0.5, neighbors=all_differ(1), domain=INDEXED,
           output=Output.categorical(index_categories(one_based_with_none=True)),
           arg_ranges={"T": (-2.0, 4.0)},
           source=f"{PAPER}: above-threshold with Gaussian noise, claimed by post-processing")
def svt(noise, x, *, rho, T=1.0):
    """Index of the first x_i + N(0, σ²) ≥ T + N(0, σ²) (len(x) when none), σ =
    sqrt((k + 1)/(2ρ)): post-processing of a Gaussian release of the threshold and all k
    answers (L2 sensitivity sqrt(k) with a public threshold), so ρ-zCDP, loosely."""
    sigma = math.sqrt((x.shape[-1] + 1) / (2 * rho))
    t = T + noise.gaussian(sigma)
    return first_index(ops.ge(x + noise.gaussian(sigma, x.shape), row(t)), x.shape[-1])


def _logistic_grads(x: np.ndarray) -> np.ndarray:
    """Per-example gradients of the logistic loss at THETA0 for features x (label 1 when
    x < 0, so θ0 misclassifies large |x|): (sigmoid(θ·[x, 1]) − y)·[x, 1], shape (n, 2)."""
    feats = np.stack([x, np.ones_like(x)], axis=-1)
    y = (x < 0).astype(float)
    p = 1 / (1 + np.exp(-(feats @ THETA0)))
    return (p - y)[:, None] * feats


def _dpsgd_step(noise, x, clip: bool, z: float, c: float, lr: float):
    g = _logistic_grads(np.asarray(x, dtype=float))
    if clip:
        norms = np.linalg.norm(g, axis=1, keepdims=True)
        g = g / np.maximum(1.0, norms / c)
    total = g.sum(axis=0)
    noisy = total + noise.gaussian(z * c, (2,))
    return THETA0 - lr * noisy / DPSGD_LOT   # not len(x): the record count is private


DPSGD_EPS = gaussian_epsilon(1e-5, 1 / DPSGD_Z)


@mechanism(**_profile_mech("gaussian.dpsgd", DPSGD_EPS, 1e-5, 1 / DPSGD_Z,
                           "one DP-SGD step (Abadi et al. 2016, Alg. 1), clipped",
                           neighbors=add_remove(), domain=DPSGD_DATA,
                           output=Output.numeric(length=2)))
def dpsgd(noise, x, *, z=DPSGD_Z, c=DPSGD_C, lr=DPSGD_LR):
    """θ1 = θ0 − lr·(Σ clip_C(∇ℓ(θ0; x_i)) + N(0, z²C² I))/L on a logistic model with
    θ = (weight, bias) and the public lot size L; one record added or removed moves the
    clipped sum by at most C. (Dividing by the actual record count n instead leaks n through
    the noise's scale: white-box detect finds δ(4.38) ≥ 4e-5 on n = 5 vs 6.)"""
    return _dpsgd_step(noise, x, True, z, c, lr)


def _noclip_mu() -> float:
    xs = np.linspace(-10, 10, 4001)
    return float(np.linalg.norm(_logistic_grads(xs), axis=1).max()) / (DPSGD_Z * DPSGD_C)


@mechanism(**_profile_mech("gaussian.dpsgd_noclip", DPSGD_EPS, 1e-5, _noclip_mu(),
                           "the DP-SGD step with clipping forgotten (BROKEN)",
                           neighbors=add_remove(), domain=DPSGD_DATA,
                           output=Output.numeric(length=2)))
def dpsgd_noclip(noise, x, *, z=DPSGD_Z, c=DPSGD_C, lr=DPSGD_LR):
    """The same step without per-example clipping: a record with |x| = 10 moves the
    gradient sum by about 10, while the noise is calibrated for C = 1."""
    return _dpsgd_step(noise, x, False, z, c, lr)


MEAN_SIGMA = analytic_sigma(1.0, 1e-5, 1 / 5)


@mechanism(**_profile_mech("gaussian.mean_sens", 1.0, 1e-5, (2 / 5) / MEAN_SIGMA,
                           "mean of [-1, 1] values with sensitivity 1/n (BROKEN: 2/n)",
                           neighbors=replace_one(), domain=RECORDS, output=Output.numeric()))
def mean_sens(noise, x, *, epsilon, delta):
    """mean(x) + N(0, σ²) with σ calibrated for sensitivity 1/n; replacing a record of
    [-1, 1] moves the mean by up to 2/n."""
    n = x.shape[-1]
    return x.mean(axis=-1) + noise.gaussian(analytic_sigma(epsilon, delta, 1 / n))


SUM_SIGMA = analytic_sigma(0.5, 1e-3, 1.0)


@mechanism(**_profile_mech("gaussian.wrong_neighbors", 0.5, 1e-3, 2 / SUM_SIGMA,
                           "sum calibrated for add/remove, claimed for replace-one (BROKEN)",
                           neighbors=replace_one(), domain=RECORDS, output=Output.numeric()))
def wrong_neighbors(noise, x, *, epsilon, delta):
    """sum(x) + N(0, σ²), σ for sensitivity 1 (adding or removing a [-1, 1] record), while
    the claim is about replacing a record, which moves the sum by up to 2."""
    return x.sum(axis=-1) + noise.gaussian(analytic_sigma(epsilon, delta, 1.0))


MECHANISMS = (classic, classic_eps2, classic_eps10, analytic, discrete, zcdp, noisy_max, svt,
              dpsgd, dpsgd_noclip, mean_sens, wrong_neighbors)

BROKEN = frozenset({"gaussian.classic_eps10", "gaussian.dpsgd_noclip", "gaussian.mean_sens",
                    "gaussian.wrong_neighbors"})

PER_QUERY: frozenset = frozenset()

EXAMPLES: dict[str, list[float]] = {
    "gaussian.classic": [1.0], "gaussian.classic_eps2": [1.0], "gaussian.classic_eps10": [1.0],
    "gaussian.analytic": [1.0], "gaussian.discrete": [1], "gaussian.zcdp": [1.0],
    "gaussian.noisy_max": [1, 2, 3, 4], "gaussian.svt": [0, 2, 1, 3],
    "gaussian.dpsgd": [1, -2, 3, -4], "gaussian.dpsgd_noclip": [1, -2, 3, -4],
    "gaussian.mean_sens": [0.5, -0.5, 1, 0, -1], "gaussian.wrong_neighbors": [0.5, -0.5, 1, 0, -1],
}


def _known(name: str) -> Callable[[float, int | None, Mapping[str, Any]], float | None]:
    def known(e: float, n: int | None, a: Mapping[str, Any]) -> float | None:
        from . import get

        return get(name).true_epsilon

    return known


KNOWN = {m.name: _known(m.name) for m in MECHANISMS}
