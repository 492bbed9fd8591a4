"""``privet.detect`` for approximate-DP and zCDP claims: a test of
H0: P[M(D1) ∈ E] ≤ e^ε·P[M(D2) ∈ E] + δ for every event E of a family, on fresh samples.

The pure test (StatDP's thinned Fisher test, :mod:`privet.detect.engine`) has no room for
δ, and approximate-DP violations hide in the tails where StatDP's event space, chosen on
100,000 samples, does not reach. Here:

1. the input pairs are StatDP's (Algorithm 4: the neighbor patterns of Table 1 and the
   arguments), each sampled ``n_select`` times (selection samples);
2. per ordered pair a family of tail events is fitted on those samples
   (:mod:`privet.attacks.tails`), and the pair whose best event looks most violating is
   kept;
3. fresh samples count every event of the family: D1 about 50/δ times, D2 up to about
   50·e^ε/δ times (the claim decides how much evidence a violation needs; ``n_max`` caps
   both), D2 looked at twice: at D1's size, stopping there when the test rejects;
4. each event gets the valid p-value of :func:`privet.stats.approx.approx_pvalue`, and the
   result's p-value is the smallest one times the family's size times the number of
   possible looks (Bonferroni), so it is valid for the whole family and the early stop:
   P_H0[p ≤ α] ≤ α.

The null is one (ε, δ) point, or for a zCDP claim tested as a whole, the claim's envelope
f(q) = inf_ε e^ε q + δ(ε) (every point of its profile at once).

White box (before step 2): when every input's output is affine in the mechanism's Gaussian
draws (:func:`affine_gaussian`, proved by z3 symbolic execution), the statistic, the family
and every event's probabilities on both sides are computed exactly as normal tails
(:func:`exact_gaussian_select`), so no sample is drawn and the verdict is exact (in real
arithmetic: the floating-point artefacts of the samplers are :mod:`privet.floats`' subject).
Noise that can be enumerated gets the selected family's probabilities exactly as well
(:func:`exact_pair`).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..attacks import tails
from ..core import ops
from ..core.claims import Claim
from ..core.errors import (
    GridTooLargeError,
    InputError,
    NotEnumerableError,
    ParameterError,
    check_epsilon,
)
from ..core.mechanism import Mechanism
from ..core.results import Counterexample, DetectResult
from ..execution import get_executor
from ..execution.progress import progress_bar
from ..stats.approx import approx_pvalue, point_envelope
from . import trace as tr
from .engine import _lengths, _plain, _Shared, generate_inputs, verdict_text

N_MAX = 400_000_000
ENUM_CAP = 1 << 20


@dataclass(frozen=True)
class Null:
    """What is tested: the point (``epsilon``, ``delta``), or a claim's whole profile
    (``claim`` set, ``epsilon``/``delta`` None)."""

    epsilon: float | None
    delta: float | None
    claim: Claim | None = None

    def envelope(self):
        if self.claim is not None:
            return self.claim.envelope
        return point_envelope(self.epsilon, self.delta)

    def describe(self) -> str:
        if self.claim is not None:
            return f"every (ε, δ(ε)) of {self.claim.describe()}"
        return f"(ε, δ) = ({self.epsilon:g}, {self.delta:g})"

    def witness_point(self, p2: float) -> tuple[float, float]:
        """The (ε, δ) of the profile whose line e^ε q + δ is lowest at q = ``p2``."""
        if self.claim is None:
            return float(self.epsilon), float(self.delta)
        grid = np.concatenate([[0.0], np.geomspace(1e-4, max(self.claim.epsilon_at(1e-300),
                                                               1.0), 800)])
        lines = np.exp(grid) * p2 + self.claim.delta_at(grid)
        e = float(grid[int(np.argmin(lines))])
        return e, float(self.claim.delta_at(e))


def null_for(mech: Mechanism, epsilon: float | None, delta: float | None) -> Null | None:
    """The approximate-DP null of a detect run, or None when the pure test applies
    (a pure claim, or no claim, and no test δ)."""
    claim = mech.claim
    if delta is not None:
        d = float(delta)
        if not 0 <= d < 1:
            raise ParameterError(f"the test delta must lie in [0, 1), got {delta!r}.")
    if epsilon is not None:
        check_epsilon(epsilon, "the test epsilon")
    if delta is None and (claim is None or claim.kind == "pure"):
        return None
    if delta is not None and float(delta) == 0:
        return None   # δ = 0: StatDP's pure test at the test ε
    if claim is None:
        if epsilon is None:
            raise ParameterError(f"mechanism {mech.name!r} claims nothing: give the test "
                                 "epsilon with the test delta (epsilon=..., delta=...).")
        return Null(float(epsilon), float(delta))
    if epsilon is None and delta is None and claim.kind == "zcdp":
        return Null(None, None, claim)
    e, d = claim.point(epsilon, delta)
    if d == 0:
        return None
    return Null(e, d)


def family_pvalue(counts: tails.TailCounts, f) -> tuple[float, int, np.ndarray]:
    """(Bonferroni p-value over the family, its best event, the per-event p-values)."""
    ps = np.atleast_1d(approx_pvalue(counts.c1, counts.n1, counts.c2, counts.n2,
                                     envelope=f))
    k = int(np.argmin(ps))
    return float(min(1.0, ps[k] * len(ps))), k, ps


def total_runs(planned: list, n_select: int, n1: int, n2: int) -> int:
    """Runs an audit may draw (for its progress bar): selection on every distinct input,
    then the fresh samples of one pair."""
    inputs = {np.asarray(x, float).tobytes() for a, b, _, _ in planned for x in (a, b)}
    return int(n_select) * len(inputs) + int(n1) + int(n2)


def check_sizes(n_select: int, n_final: int) -> None:
    if int(n_select) < 10 or int(n_final) < 10:
        raise InputError("n_select and n_final must be at least 10.")


def approx_pairs(mech: Mechanism, inputs=None, args: Mapping[str, Any] | None = None
                 ) -> tuple[list, str, list]:
    """Candidate pairs of an approximate-DP audit: StatDP's (Algorithm 4) in both orders,
    plus the domain's edges, where the sensitivity of sums and means is largest."""
    planned, path, notes = generate_inputs(mech, inputs, args)
    if inputs is not None:  # both orders: the family tests one direction per ordered pair
        return planned + [(b, a, p + " (swapped)", g) for a, b, p, g in planned], path, notes
    fixed = planned[0][3] if planned else {}
    return planned + [(a, b, p, dict(fixed)) for a, b, p, _ in
                      tails.extreme_pairs(mech, _lengths(mech))], path, notes


# -- white box: outputs affine in Gaussian noise -----------------------------------------------

WB_LEVELS = np.geomspace(0.5, 1e-16, 400)   # D1-side tail probabilities of the exact family
WB_MAX_DRAWS = 64                           # Gaussian coordinates the symbolic check handles
WB_RTOL = 1e-9                              # float round-off allowed before an excess counts


@dataclass(frozen=True)
class AffineGaussian:
    """A run's output entries as y = a + B z, z_i ~ N(0, σ_i²) independent (white box)."""

    a: np.ndarray
    b: np.ndarray
    sigma: np.ndarray

    def statistic(self, w: np.ndarray) -> tuple[float, float]:
        """Mean and standard deviation of the statistic w·y (a normal variable)."""
        return float(w @ self.a), float(np.linalg.norm((w @ self.b) * self.sigma))


class _GaussianSymbols(tr.Trace):
    """Every Gaussian draw is a fresh z3 real; any other draw marks the run unsupported."""

    def __init__(self) -> None:
        super().__init__()
        self.symbols: list = []
        self.sigmas: list[float] = []
        self.other = False

    def _draw(self, dist, shape):
        if dist.kind != "gaussian":
            self.other = True
            return super()._draw(dist, shape)
        z3 = tr._z3()
        sig = np.broadcast_to(np.asarray(dist.params["sigma"], dtype=float), shape)
        out = np.empty((1, *shape), dtype=object)
        for idx in np.ndindex(*shape):
            v = z3.Real(f"z{len(self.symbols)}")
            self.symbols.append(v)
            self.sigmas.append(float(sig[idx]))
            out[(0, *idx)] = v
        return out


def _z3_float(v) -> float | None:
    z3 = tr._z3()
    v = z3.simplify(v)
    if z3.is_rational_value(v):
        return v.numerator_as_long() / v.denominator_as_long()
    return None


def affine_gaussian(mech: Mechanism, x, args: Mapping[str, Any]) -> AffineGaussian | None:
    """The output of ``mech`` on ``x`` as an affine function of its Gaussian draws, proved by
    symbolic execution (z3): every draw a real variable, no branch on the noise, and each
    output entry equal (z3-unsat of the difference) to its affine form. None when the
    mechanism is a black box, draws other noise, branches on it or is not affine in it."""
    if not mech.supports("ops"):
        return None
    try:
        z3 = tr._z3()
    except ImportError:   # the smt extra is not installed: the sampling path
        return None
    noise = _GaussianSymbols()
    token = tr._ACTIVE.set(noise)
    try:
        with ops.semantics("symbolic"):
            out = mech.fn(noise, mech.domain.check(x), **mech.resolve_args(args))
        arr = np.asarray(out, dtype=object)
    except Exception:  # noqa: BLE001 - anything the symbolic run cannot do: not affine
        return None
    finally:
        tr._ACTIVE.reset(token)
    syms = noise.symbols
    if noise.other or noise.conditions or not syms or len(syms) > WB_MAX_DRAWS or \
            arr.ndim == 0 or arr.shape[0] != 1:
        return None
    zero = [(v, z3.RealVal(0)) for v in syms]
    a, b = [], []
    for e in arr.reshape(1, -1)[0].tolist():
        e = tr._py(e)
        if not isinstance(e, z3.ExprRef):
            a.append(float(e))
            b.append([0.0] * len(syms))
            continue
        if not z3.is_arith(e):
            return None
        c0 = z3.substitute(e, *zero)
        cs = [z3.substitute(e, *[(u, z3.RealVal(int(u.eq(v)))) for u in syms]) - c0
              for v in syms]
        solver = z3.Solver()
        solver.add(e != c0 + z3.Sum([c * v for c, v in zip(cs, syms)]))
        vals = [_z3_float(c) for c in [c0, *cs]]
        if solver.check() != z3.unsat or any(v is None for v in vals):
            return None
        a.append(vals[0])
        b.append(vals[1:])
    return AffineGaussian(np.asarray(a), np.asarray(b, dtype=float).reshape(len(a), -1),
                          np.asarray(noise.sigmas))


def exact_pair(mech: Mechanism, cand: tails.Candidate) -> tuple | None:
    """Exact probabilities (p1, p2) of every event of the candidate's family under its pair
    when the noise can be enumerated (finite discrete noise), else None."""
    if not mech.supports("enumerate"):
        return None
    try:
        dists = [mech.distribution(x, cand.args, cap=ENUM_CAP) for x in (cand.x1, cand.x2)]
    except (NotEnumerableError, GridTooLargeError):
        return None
    fam = cand.family
    out = []
    for dist in dists:
        s = fam.statistic(dist.outputs)
        probs = np.asarray(dist.probs, dtype=float)
        out.append(np.asarray([probs[s > t].sum() for t in fam.above] +
                              [probs[s < t].sum() for t in fam.below], dtype=float))
    return out[0], out[1]


def _normal_tails(fam: tails.Family, mu: float, tau: float) -> np.ndarray:
    """Exact probabilities of the family's events {s > t}, {s < t} for s ~ N(mu, tau²)."""
    from scipy import special

    up = special.ndtr((mu - np.asarray(fam.above, dtype=float)) / tau)
    low = special.ndtr((np.asarray(fam.below, dtype=float) - mu) / tau)
    return np.r_[up, low]


def exact_gaussian_select(mech: Mechanism, planned: list, score
                          ) -> tuple[tails.Candidate, np.ndarray, np.ndarray] | None:
    """White-box selection and exact event probabilities, or None when some input's output
    is not affine in Gaussian noise (:func:`affine_gaussian`).

    Per ordered pair: the statistic is the output itself (one entry) or the projection on
    Fisher's direction w = Σ⁻¹(a1 − a2) with the pair's pooled noise covariance (the
    likelihood ratio's direction when the covariances agree: Neyman–Pearson); the family
    holds {s > t}, {s < t} at D1-side probabilities 1e-16 .. 1 − 1e-16 (``WB_LEVELS``
    and their complements);
    each event's probabilities are normal tails, exactly. The pair whose best event scores
    highest (``score(p1, p2, 1, 1)``) is kept: (candidate, p1, p2)."""
    from scipy import special

    forms: dict = {}
    best = None
    for d1, d2, pattern, args in planned:
        gs = []
        for x in (d1, d2):
            key = (np.asarray(x, float).tobytes(), repr(sorted(args.items())))
            if key not in forms:
                forms[key] = affine_gaussian(mech, x, args)
            gs.append(forms[key])
        g1, g2 = gs
        if g1 is None or g2 is None:
            return None
        if g1.a.shape != g2.a.shape:
            continue
        if g1.a.size == 1:
            w, stat = np.ones(1), tails.Statistic("identity")
        else:
            cov = 0.5 * sum((g.b * g.sigma) @ (g.b * g.sigma).T for g in gs)
            w = np.linalg.pinv(cov) @ (g1.a - g2.a)
            norm = float(np.linalg.norm(w))
            if norm == 0:
                continue
            w = w / norm
            stat = tails.Statistic("projection", weights=tuple(float(v) for v in w))
        (m1, t1), (m2, t2) = g1.statistic(w), g2.statistic(w)
        if t1 <= 0 or t2 <= 0:
            continue
        z = special.ndtri(WB_LEVELS)
        z = np.r_[z, -z]                    # thresholds on both sides of D1's mean
        fam = tails.Family(stat, tuple(np.unique(m1 + t1 * z).tolist()),
                           tuple(np.unique(m1 - t1 * z).tolist()))
        p1, p2 = _normal_tails(fam, m1, t1), _normal_tails(fam, m2, t2)
        sc = np.asarray(score(p1, p2, 1, 1), dtype=float)
        k = int(np.argmax(sc))
        if best is None or sc[k] > best[0].score:
            best = (tails.Candidate(np.asarray(d1), np.asarray(d2), dict(args), pattern, fam,
                                    float(sc[k]), k), p1, p2)
    return best


def sample_audit(mech: Mechanism, planned: list, score, label: str, decided, *, n_select: int,
                 n1: int, n2: int, seed: int, executor: Any, progress: bool) -> tuple:
    """Steps 2-3 on one shared executor: selection, then the selected family's exact
    probabilities (enumerable noise) or its fresh counts with the caller's stopping rule
    ``decided(counts, looks)``. Returns (candidate, exact (p1, p2) or None, counts or None)."""
    ex = get_executor(executor, mech)
    shared = _Shared(ex, owned=ex is not executor)
    try:
        with progress_bar(total_runs(planned, n_select, n1, n2), label,
                          enabled=progress) as advance:
            cand = tails.select(mech, planned, score, n_select=n_select, seed=seed,
                                executor=shared, progress=advance)
            exact = exact_pair(mech, cand)
            counts = None if exact is not None else tails.count_fresh(
                mech, cand, n1, n2, seed=seed, executor=shared, progress=advance, stop=decided)
    finally:
        shared.shutdown()
    return cand, exact, counts


def detect_approx(mech: Mechanism, null: Null, *, inputs=None,
                  args: Mapping[str, Any] | None = None, n_select: int = 100_000,
                  n_final: int = 500_000, n_max: int = N_MAX, alpha: float = 0.05,
                  seed: int | None = None, progress: bool = False,
                  executor: Any = None) -> DetectResult:
    """Steps 1-4 of the module docstring; a :class:`DetectResult` whose counterexample
    carries the event, the counts on both sides and the tested (ε, δ)."""
    t0 = time.perf_counter()
    check_sizes(n_select, n_final)
    if not 0 < float(alpha) < 1:
        raise InputError(f"alpha must lie in (0, 1), got {alpha!r}.")
    if seed is None:
        seed = secrets.randbits(63)
    planned, path, notes = approx_pairs(mech, inputs, args)
    f = null.envelope()

    def score(c1, c2, n1, n2):
        return np.asarray(c1) / n1 - f(np.asarray(c2) / n2)

    white = exact_gaussian_select(mech, planned, score)
    if white is not None:
        return _exact_detect(mech, null, white, f, path, notes, len(planned), alpha, seed, t0)
    if null.claim is None:
        n1, n2 = tails.sample_sizes(null.epsilon, null.delta, n_final, n_max)
    else:
        n1 = n2 = int(n_final)
    def decided(c: tails.TailCounts, looks: int) -> bool:
        # reject now, or stop for futility: D2's full sample would not reject at its
        # present hit rate (tails.projected; stopping without a rejection keeps the test
        # valid whatever the rule)
        return family_pvalue(c, f)[0] * looks < alpha or \
            family_pvalue(tails.projected(c, n2), f)[0] * looks >= alpha

    cand, exact, counts = sample_audit(mech, planned, score, "detect (ε, δ)", decided,
                                       n_select=n_select, n1=n1, n2=n2, seed=seed,
                                       executor=executor, progress=progress)
    if exact is not None:
        return _exact_detect(mech, null, (cand, *exact), f, path, notes, len(planned), alpha,
                             seed, t0, "exact enumeration of the selected pair (white box)")
    fam = cand.family
    p, k, ps = family_pvalue(counts, f)
    p = float(min(1.0, p * counts.looks))       # Bonferroni over D2's looks as well
    if counts.interrupted:
        notes.append(f"interrupted: {counts.n1:,} and {counts.n2:,} fresh runs drawn of "
                     f"{n1:,} and {n2:,}")
    e_w, d_w = null.witness_point(counts.c2[k] / counts.n2)
    rejected = p < alpha
    shown_args = {key: _plain(v) for key, v in cand.args.items()}
    cx = Counterexample(
        mechanism=mech.name, d1=tuple(_plain(cand.x1)), d2=tuple(_plain(cand.x2)),
        args=shown_args, event=fam.describe(k), event_spec=fam.spec(k),
        counts=(int(counts.c1[k]), int(counts.c2[k])), n=(counts.n1, counts.n2),
        p_value=p, test_epsilon=e_w, epsilon_witnessed=e_w if rejected else None,
        confidence=1 - alpha, exact=False, seed=int(seed),
        details={"test_delta": d_w, "null": null.describe(), "pattern": cand.pattern,
                 "p_event": float(ps[k]), "family_size": fam.size, "looks": counts.looks,
                 "statistic": fam.statistic.describe(),
                 "selection_score": cand.score, "n_select": int(n_select),
                 "arg_path": path, "test": "Clopper-Pearson union bound, Bonferroni over "
                                           f"{fam.size} events and {counts.looks} look(s) "
                                           "(privet.stats.approx)"},
    )
    verdict = verdict_text(p, alpha)
    if counts.interrupted:
        verdict += " (interrupted)" if rejected else ""
        if not rejected:
            verdict = "inconclusive (interrupted)"
    return DetectResult(
        mechanism=mech.name, claimed_epsilon=mech.epsilon, test_epsilon=e_w, verdict=verdict,
        p_value=p, counterexample=cx if rejected else None, candidates=(cx,), curve=None,
        arg_path=path, seed=int(seed), seconds=time.perf_counter() - t0, alpha=float(alpha),
        claim=mech.describe_claim(), test_delta=d_w,
        details={"null": null.describe(), "n_select": int(n_select), "n_final": [n1, n2],
                 "pairs": len(planned), "notes": notes, "selected": cx,
                 "interrupted": counts.interrupted},
    )


def _exact_detect(mech: Mechanism, null: Null, white: tuple, f, path: str, notes: list,
                  pairs: int, alpha: float, seed: int, t0: float,
                  how: str = "exact normal tails of the selected pair (white box: the output "
                             "is affine in Gaussian noise, z3)") -> DetectResult:
    """The white-box result: the family's exact probabilities decide with certainty (an
    excess above the envelope beyond float round-off, ``WB_RTOL``, is a violation)."""
    cand, p1, p2 = white
    fam = cand.family
    bound = f(p2)
    excess = p1 - bound
    k = int(np.argmax(excess))
    rejected = bool(excess[k] > WB_RTOL * bound[k])
    e_w, d_w = null.witness_point(float(p2[k]))
    shown_args = {key: _plain(v) for key, v in cand.args.items()}
    cx = Counterexample(
        mechanism=mech.name, d1=tuple(_plain(cand.x1)), d2=tuple(_plain(cand.x2)),
        args=shown_args, event=fam.describe(k), event_spec=fam.spec(k),
        probabilities=(float(p1[k]), float(p2[k])), p_value=0.0 if rejected else 1.0,
        test_epsilon=e_w, epsilon_witnessed=e_w if rejected else None, confidence=1.0,
        exact=True, seed=int(seed),
        details={"test_delta": d_w, "null": null.describe(), "pattern": cand.pattern,
                 "excess": float(excess[k]), "family_size": fam.size,
                 "statistic": fam.statistic.describe(), "arg_path": path, "test": how},
    )
    verdict = (f"violation (exact): P[M(D1) ∈ E] = {p1[k]:.4g} exceeds "
               f"e^ε·P[M(D2) ∈ E] + δ = {bound[k]:.4g}" if rejected else "no violation found")
    return DetectResult(
        mechanism=mech.name, claimed_epsilon=mech.epsilon, test_epsilon=e_w, verdict=verdict,
        p_value=0.0 if rejected else 1.0, counterexample=cx if rejected else None,
        candidates=(cx,), curve=None, arg_path=path, seed=int(seed),
        seconds=time.perf_counter() - t0, alpha=float(alpha), claim=mech.describe_claim(),
        test_delta=d_w,
        details={"null": null.describe(), "pairs": pairs, "notes": notes, "selected": cx,
                 "interrupted": False, "method": how},
    )


__all__ = ["N_MAX", "AffineGaussian", "Null", "affine_gaussian", "approx_pairs", "check_sizes",
           "detect_approx", "exact_gaussian_select", "exact_pair", "null_for", "sample_audit",
           "total_runs"]
