"""The ``Importance`` interpreter: one presampled noise set reused for every candidate scale.

KOLAHAL Sec. IV.C ("Computing the objective efficiently"): instead of sampling afresh for
each candidate noise vector c of the differential-evolution population, the sketch is run
once on noise drawn from a *proposal* of the same family (scale 4.0, appendix), and the
probability of an event E under any candidate c is the importance-weighted frequency

    P_c[M(d) ∈ E] ≈ Σ_j w_c(v_j) 1[o_j ∈ E] / Σ_j w_c(v_j),   w_c(v) = p_c(v) / q(v),

where v_j are the recorded draws of run j and o_j its output. Because the draws are kept,
the weights of a whole population are one vectorized formula over the per-draw values
(the family's log-density, as :meth:`privet.core.noise.Dist.logpdf`). Running d1 with
``Replay(Importance(...))`` and replaying on d2 gives the correlated sampling of DP-Finder:
both inputs share the draws and therefore the weights, so in the loss ratio the
normalization cancels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.errors import NoiseError
from ..core.noise import Dist, Noise, Shape

PROPOSAL_SCALE = 4.0
SCALE_FAMILIES = ("laplace", "exponential", "gaussian", "geometric")


def family_dist(kind: str, scale, bound: int | None = None) -> Dist:
    """The :class:`Dist` of a hole of family ``kind`` at ``scale`` (geometric: α = e^(-1/scale))."""
    if kind == "gaussian":
        return Dist("gaussian", {"sigma": scale})
    if kind == "geometric":
        alpha = np.exp(-1.0 / np.asarray(scale, dtype=float))
        return Dist("geometric", {"alpha": alpha, "low": None if bound is None else -bound,
                                  "high": bound})
    return Dist(kind, {"scale": scale})


@dataclass
class Draw:
    """One recorded draw: its family, the hole it filled (None = fixed noise), its values."""

    kind: str
    hole: int | None
    values: np.ndarray          # shape (m, *shape)
    bound: int | None = None

    def stats(self) -> tuple[np.ndarray, int]:
        """Sufficient statistic per run and the number of coordinates per run (cached)."""
        cached = getattr(self, "_stats", None)
        if cached is not None:
            return cached
        self._stats = self._compute_stats()
        return self._stats

    def _compute_stats(self) -> tuple[np.ndarray, int]:
        v = self.values.reshape(self.values.shape[0], -1).astype(float)
        k = v.shape[1]
        if self.kind == "geometric" and self.bound is not None:
            edge = np.abs(v) >= self.bound
            interior = np.where(edge, 0.0, np.abs(v)).sum(axis=1)
            return np.stack([interior, (~edge).sum(axis=1), edge.sum(axis=1)]), k
        if self.kind in ("laplace", "geometric"):
            return np.abs(v).sum(axis=1), k
        if self.kind == "exponential":
            return v.sum(axis=1), k
        return (v * v).sum(axis=1), k


class Importance(Noise):
    """Draw every hole from a proposal of the same family with scale ``proposal_scale``.

    Draws that do not belong to a hole (fixed noise of the sketch) are drawn from their own
    distribution and get weight 1. :meth:`log_weights` gives log p_c(v) - log q(v) for a
    whole population of scale vectors at once.
    """

    def __init__(self, rng: np.random.Generator | int | None, size: int,
                 proposal_scale: float = PROPOSAL_SCALE):
        self.rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        self.size = int(size)
        self.proposal_scale = float(proposal_scale)
        self.draws: list[Draw] = []
        self._hole: int | None = None

    def tag_hole(self, hole: int) -> None:
        """Called by the sketch's hole noise: the next draw fills ``hole``."""
        self._hole = hole

    def _draw(self, dist: Dist, shape: Shape) -> np.ndarray:
        hole, self._hole = self._hole, None
        if hole is None:
            values = dist.sample(self.rng, (self.size, *shape))
            self.draws.append(Draw(dist.kind, None, values))
            return values
        if dist.kind not in SCALE_FAMILIES:
            raise NoiseError(
                f"importance sampling needs a scale family ({', '.join(SCALE_FAMILIES)}), got "
                f"{dist.describe()}."
            )
        bound = dist.params.get("high") if dist.kind == "geometric" else None
        proposal = family_dist(dist.kind, self.proposal_scale, bound)
        values = proposal.sample(self.rng, (self.size, *shape))
        self.draws.append(Draw(dist.kind, hole, values, bound))
        return values

    # -- weights ---------------------------------------------------------------------------
    def log_weights(self, scales: np.ndarray) -> np.ndarray:
        """log w for each row of ``scales`` (P x holes; 0 = ⊥ is not allowed for a drawn hole).

        Returns shape (P, size). Closed forms of the families' log-densities on the
        sufficient statistics (Σ|v| for Laplace and geometric, Σv for exponential, Σv² for
        Gaussian) are used, which is the same number as summing ``Dist.logpdf`` over the
        coordinates (tested); censored geometric draws add the tail mass of the bounds.
        """
        sc = np.atleast_2d(np.asarray(scales, dtype=float))
        out = np.zeros((sc.shape[0], self.size))
        for d in self.draws:
            if d.hole is None:
                continue
            c = sc[:, d.hole]
            if np.any(c <= 0):
                raise NoiseError(f"hole {d.hole} was drawn, so its scale must be positive.")
            q = getattr(d, "_proposal_logq", None)
            if q is None:
                q = d._proposal_logq = _log_density(d, np.array([self.proposal_scale]))
            out += _log_density(d, c) - q
        return out

    def log_weights_generic(self, scales: np.ndarray) -> np.ndarray:
        """The same as :meth:`log_weights` through ``Dist.logpdf`` (reference, slower)."""
        sc = np.atleast_2d(np.asarray(scales, dtype=float))
        out = np.zeros((sc.shape[0], self.size))
        for d in self.draws:
            if d.hole is None:
                continue
            flat = d.values.reshape(d.values.shape[0], -1)
            q = family_dist(d.kind, self.proposal_scale, d.bound).logpdf(flat).sum(axis=1)
            for r, c in enumerate(sc[:, d.hole]):
                out[r] += family_dist(d.kind, c, d.bound).logpdf(flat).sum(axis=1) - q
        return out


def _log_density(d: Draw, c: np.ndarray) -> np.ndarray:
    """Σ_coords log p_c(v) for each run, for each scale in ``c``: shape (len(c), m)."""
    c = np.asarray(c, dtype=float)[:, None]
    if d.kind == "geometric" and d.bound is not None:
        # censored two-sided geometric on [-B, B]: interior P(v) = (1-a)/(1+a) a^|v|, each
        # bound holds the tail P(|Z| >= B on that side) = a^B / (1+a)
        (s_int, k_int, k_edge), _ = d.stats()
        alpha = np.exp(-1.0 / c)
        return (k_int[None, :] * np.log((1 - alpha) / (1 + alpha)) - s_int[None, :] / c
                + k_edge[None, :] * (-d.bound / c - np.log1p(alpha)))
    s, k = d.stats()
    s = s[None, :]
    if d.kind == "laplace":
        return -s / c - k * np.log(2 * c)
    if d.kind == "exponential":
        if np.any(d.values < 0):
            return np.full((c.shape[0], s.shape[1]), -np.inf)
        return -s / c - k * np.log(c)
    if d.kind == "gaussian":
        return -s / (2 * c * c) - k * np.log(c * math.sqrt(2 * math.pi))
    # unbounded two-sided geometric, alpha = exp(-1/c): P(v) = (1-a)/(1+a) a^|v|
    alpha = np.exp(-1.0 / c)
    return k * np.log((1 - alpha) / (1 + alpha)) - s / c


def normalized_weights(log_w: np.ndarray) -> np.ndarray:
    """Weights scaled so each row's maximum is 1 (ratios of sums are unchanged)."""
    return np.exp(log_w - log_w.max(axis=1, keepdims=True))


def effective_sample_size(log_w: np.ndarray) -> np.ndarray:
    """Kish's effective sample size (Σw)²/Σw² per row."""
    w = normalized_weights(log_w)
    return w.sum(axis=1) ** 2 / np.maximum((w * w).sum(axis=1), 1e-300)
