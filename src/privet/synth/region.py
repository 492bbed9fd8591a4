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

Extension: the whole boundary, not one point of it. With coupled holes the tight vectors
form a curve (for (q1 + η1, q1 + q2 + η2), 1/c1 + 1/c2 = ε), and differential evolution
settles on an arbitrary point of it. So for every kept support the boundary
{c : max L(c) = e^ε} is also traced along rays from the origin (the loss falls as the noise
grows along a ray): a batched bisection on the scale of ``rays`` directions (the axes, the
diagonal and spread directions of the positive orthant), and a farthest-point subset of
``boundary_points`` well-spread boundary points (in log scale) joins R. Candidates are then
kept when they lie near any of them.
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
    """The noise region R at γ: its points (scales, 0 = ⊥), the per-support optima and the
    well-spread boundary points."""

    epsilon: float
    supports: list[SupportRegion]
    points: np.ndarray
    seconds: float = 0.0
    evaluations: int = 0
    notes: list[str] = field(default_factory=list)
    boundary: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))

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
                 proposal_scale: float = PROPOSAL_SCALE, rays: int = 24,
                 boundary_points: int = 12) -> Region:
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
    boundary = np.zeros((0, n))
    # importance weights keep a finite variance up to twice the proposal's scale (sqrt 2 for
    # Gaussian noise): the rays stay below that
    reliable = min(hi, (1.4 if "gaussian" in sketch.families else 1.9) * proposal_scale)
    if examples:
        found = []
        for k, r in enumerate(supports):
            if r in kept and any(r.mask):
                model = LossModel(sketch, setting, examples, r.mask, m,
                                  seed * 7919 + 104_729 + k, proposal_scale)
                found.append(trace_boundary(model, r.mask, target, lo, reliable, rays,
                                            seed + k))
        if found:
            boundary = spread(np.vstack(found), boundary_points)
            points = np.vstack([points, boundary])
    return Region(eps, supports, points, time.perf_counter() - t0, evaluations, notes,
                  boundary)


def ray_directions(active: int, count: int, seed: int) -> np.ndarray:
    """Directions in the positive orthant of ``active`` holes, max coordinate 1: the axes
    (one hole carries the noise, the others 1/8 of it), the diagonal, then Dirichlet draws."""
    dirs = [np.ones(active)]
    if active > 1:
        for i in range(active):
            d = np.full(active, 0.125)
            d[i] = 1.0
            dirs.append(d)
    rng = np.random.default_rng(seed)
    while active > 1 and len(dirs) < count:
        d = rng.dirichlet(np.ones(active))
        dirs.append(d / d.max())
    return np.asarray(dirs)


def trace_boundary(model: LossModel, mask: Sequence[bool], target: float, lo: float,
                   hi: float, rays: int, seed: int, steps: int = 16) -> np.ndarray:
    """Points where the estimated max loss crosses e^ε along rays from the origin (the
    private side of the crossing), by a bisection on the scale batched over the rays."""
    n = len(mask)
    active = [i for i in range(n) if mask[i]]
    dirs = ray_directions(len(active), rays, seed)

    def full(t: np.ndarray) -> np.ndarray:
        s = np.zeros((len(dirs), n))
        s[:, active] = dirs * t[:, None]
        return s

    # bracket the first crossing from above to below on a geometric grid. Both ends of the
    # box are unreliable: at tiny scales the importance weights collapse (the estimate reads
    # "no loss"), and beyond about twice the proposal's scale their variance is infinite
    # (Laplace weights grow like exp(|x| (1/b_p - 1/b))), so ``hi`` is capped by the caller
    grid = np.geomspace(lo, hi, 16)
    losses = np.stack([model.max_loss(full(np.full(len(dirs), g))) for g in grid], axis=1)
    above = losses > target
    cross = above[:, :-1] & ~above[:, 1:]
    ok = cross.any(axis=1)
    j = np.argmax(cross, axis=1)
    t_lo, t_hi = grid[j], grid[j + 1]
    for _ in range(steps):
        mid = np.sqrt(t_lo * t_hi)
        above = model.max_loss(full(mid)) > target
        t_lo = np.where(above, mid, t_lo)
        t_hi = np.where(above, t_hi, mid)
    return full(t_hi)[ok]


def spread(points: np.ndarray, k: int) -> np.ndarray:
    """A farthest-point subset of ``k`` points (distances in log scale; ⊥ stays apart)."""
    points = np.unique(np.round(points, 9), axis=0)
    if len(points) <= k:
        return points
    z = np.log(np.maximum(points, 1e-3))
    chosen = [int(np.argmin(points.sum(axis=1)))]          # the least noisy first
    d = np.abs(z - z[chosen[0]]).sum(axis=1)
    while len(chosen) < k:
        i = int(np.argmax(d))
        chosen.append(i)
        d = np.minimum(d, np.abs(z - z[i]).sum(axis=1))
    return points[chosen]
