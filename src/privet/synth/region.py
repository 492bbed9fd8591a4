"""getNoiseRegion (KOLAHAL Sec. IV.C): the noise vectors that make the examples tight.

The objective over concrete noise vectors c is

    | max_{<d1,d2,E> ∈ Ex} L(γ(M^c), d1, d2, γ(ε), E) - e^{γ(ε)} | + λ ||c||_0,

minimized by differential evolution (scipy), population 50, 500 x #locations evaluations,
λ = 1 (appendix). Event probabilities come from one presampled noise set per example pair,
reused for every candidate and generation through :class:`~privet.synth.importance.
Importance` (proposal of the same family, scale 4.0) with d1 and d2 correlated by
``Replay``.

A ⊥ hole is a point mass at 0 that no proposal can weight, so the support of c (which holes
are ⊥) is enumerated rather than evolved: one differential evolution per support, each with
its own presampled set (at most 2^#locations, 8 for the paper's largest sketch). The region
R is the union of the final populations of the supports whose best objective comes within
``tol`` of the tightness target (|max L - e^ε| <= tol e^ε), plus the best support overall.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import differential_evolution

from ..core.noise import Replay
from .examples import Example
from .importance import PROPOSAL_SCALE, Importance, normalized_weights
from .sketch import Sketch, _args

LAMBDA = 1.0
POPULATION = 50
STEPS_PER_LOCATION = 500


@dataclass
class SupportRegion:
    """The result of one differential evolution over the holes in ``mask`` (others ⊥)."""

    mask: tuple[bool, ...]
    best: tuple[float, ...]
    objective: float
    max_loss: float
    population: np.ndarray
    evaluations: int


@dataclass
class Region:
    """The noise region R at γ: its points (scales, 0 = ⊥) and the per-support optima."""

    epsilon: float
    supports: list[SupportRegion]
    points: np.ndarray
    seconds: float = 0.0
    evaluations: int = 0
    notes: list[str] = field(default_factory=list)

    def distance(self, scales: np.ndarray) -> np.ndarray:
        """L1 distance from each row of ``scales`` to the nearest region point."""
        s = np.atleast_2d(np.asarray(scales, dtype=float))
        if len(self.points) == 0:
            return np.zeros(len(s))
        d = np.abs(s[:, None, :] - self.points[None, :, :]).sum(axis=2)
        return d.min(axis=1)

    def best(self) -> SupportRegion:
        return min(self.supports, key=lambda r: r.objective)


class LossModel:
    """Privacy loss at the examples for any population of scale vectors with one support."""

    def __init__(self, sketch: Sketch, setting: Mapping[str, Any], examples: Sequence[Example],
                 mask: Sequence[bool], m: int, seed: int,
                 proposal_scale: float = PROPOSAL_SCALE):
        self.mask = tuple(bool(b) for b in mask)
        self.m = int(m)
        args = _args(setting)
        placeholder = [proposal_scale if b else 0.0 for b in self.mask]
        groups: dict[tuple, list[Example]] = {}
        for ex in examples:
            groups.setdefault((ex.d1, ex.d2), []).append(ex)
        self.groups = []
        ss = np.random.SeedSequence(seed)
        for (d1, d2), exs in groups.items():
            imp = Importance(np.random.default_rng(ss.spawn(1)[0]), self.m, proposal_scale)
            rp = Replay(imp)
            o1 = sketch.run(rp, np.asarray(d1, float), args, placeholder)
            rp.rewind()
            o2 = sketch.run(rp, np.asarray(d2, float), args, placeholder)
            i1 = np.column_stack([e.event.contains(o1) for e in exs]).astype(float)
            i2 = np.column_stack([e.event.contains(o2) for e in exs]).astype(float)
            self.groups.append((imp, i1, i2))

    def max_loss(self, scales: np.ndarray) -> np.ndarray:
        """max over examples of L = max(P1/P2, P2/P1) for each row of ``scales`` (P x holes)."""
        sc = np.atleast_2d(np.asarray(scales, dtype=float))
        worst = np.ones(len(sc))
        for imp, i1, i2 in self.groups:
            w = normalized_weights(imp.log_weights(sc))
            s1, s2 = w @ i1, w @ i2
            half = 0.5 * w.sum(axis=1, keepdims=True) / self.m
            r = (s1 + half) / (s2 + half)
            worst = np.maximum(worst, np.maximum(r, 1.0 / r).max(axis=1))
        return worst


def noise_region(sketch: Sketch, setting: Mapping[str, Any], examples: Sequence[Example], *,
                 m: int = 20_000, seed: int = 0, lam: float = LAMBDA,
                 population: int = POPULATION, steps_per_location: int = STEPS_PER_LOCATION,
                 bounds: tuple[float, float] | None = None, tol: float = 0.25,
                 proposal_scale: float = PROPOSAL_SCALE) -> Region:
    """getNoiseRegion: differential evolution per support of c, with importance-sampled loss."""
    t0 = time.perf_counter()
    eps = float(setting["epsilon"])
    target = math.exp(eps)
    n = sketch.n_holes
    lo, hi = bounds or (0.1, 4.0 * proposal_scale)
    supports: list[SupportRegion] = []
    evaluations = 0
    notes: list[str] = []
    if not examples:
        notes.append("no examples: the region is the whole box (every candidate is kept)")
    for k, mask in enumerate(itertools.product((False, True), repeat=n)):
        active = [i for i in range(n) if mask[i]]
        model = LossModel(sketch, setting, examples, mask, m, seed * 7919 + k, proposal_scale)

        def full(x: np.ndarray, active=active) -> np.ndarray:
            s = np.zeros((x.shape[1], n))
            s[:, active] = x.T
            return s

        if not active:
            loss = float(model.max_loss(np.zeros((1, n)))[0])
            supports.append(SupportRegion(mask, (0.0,) * n, abs(loss - target), loss,
                                          np.zeros((1, n)), 1))
            evaluations += 1
            continue

        def objective(x: np.ndarray, model=model, full=full, active=active) -> np.ndarray:
            x = np.atleast_2d(x.T).T if x.ndim == 1 else x
            return np.abs(model.max_loss(full(x)) - target) + lam * len(active)

        popsize = max(1, math.ceil(population / len(active)))
        generations = max(1, math.ceil(steps_per_location * n / (popsize * len(active))) - 1)
        res = differential_evolution(
            objective, [(lo, hi)] * len(active), popsize=popsize, maxiter=generations,
            vectorized=True, updating="deferred", polish=False, seed=seed + k, tol=0.0,
            init="latinhypercube",
        )
        pop = full(np.asarray(res.population).T)
        best = full(np.asarray(res.x)[:, None])[0]
        loss = float(model.max_loss(best[None, :])[0])
        nfev = int(len(res.population)) * (int(res.nit) + 1)   # candidates evaluated
        supports.append(SupportRegion(mask, tuple(best.tolist()), float(res.fun), loss, pop,
                                      nfev))
        evaluations += nfev
    kept = [r for r in supports if abs(r.max_loss - target) <= tol * target and any(r.mask)]
    best = min(supports, key=lambda r: r.objective)
    if best not in kept:
        kept.append(best)
    points = np.vstack([r.population for r in kept]) if examples else np.zeros((0, n))
    return Region(eps, supports, points, time.perf_counter() - t0, evaluations, notes)
