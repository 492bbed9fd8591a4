"""findExpr (KOLAHAL Sec. IV.D): enumerate, prune by the region, rank, verify.

cand = {η ∈ G | γ(η) ∈ Nbhd(R)}, where Nbhd(R) is every concrete vector within L1
distance 3 of a point of R (appendix; ⊥ counts as 0). Candidates are ranked by

1. how many test examples Ex ∪ Ex_test they violate (fewer is better; a violation is a
   conditional-binomial p-value below α / #tests, Bonferroni over the examples),
2. their privacy loss on the examples (higher is better): t = the mean over the settings of
   max |log L| / ε (each estimate less one standard error),
3. the magnitude of the noise (smaller is better): Σ over settings and holes of the scale.

Keys 2 and 3 are not applied strictly one after the other: every candidate whose loss is
within 30% of ε (t >= 0.7, "tight") ranks before the others, and the tight ones are ordered
by magnitude (the less noisy tight completion first), the others by t. Sorting strictly by
the estimated loss lets sampling noise decide between equally tight completions and favors
near-misses whose loss exceeds ε by less than the tests can resolve (for SVT/AboveT,
(2|q|/ε, 2/ε) is non-private by 5-10% and looks "tighter" than (2/ε, 4/ε)); magnitude is the
paper's accuracy proxy and it separates them.

The top 5 x #locations are then checked with ``privet.detect`` at the target ε (or the
internal tester when detect is unavailable) at every setting, on fresh and larger samples
against every example of Ex ∪ Ex_test, and on 500,000 samples against the examples where
the candidate's estimated loss came within 20% of ε; exactly (enumeration over the example
pairs) when every hole draws discrete noise.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.noise import Sampler
from .examples import Example, Tester, example_pairs
from .grammar import Expr
from .quicktest import p_value
from .sketch import Sketch, _args

RADIUS = 3.0
ALPHA = 0.05
TIGHT = 0.7
SUSPECT = 0.8


@dataclass
class Scored:
    """A candidate expression vector with its ranking evidence."""

    exprs: tuple[Expr, ...]
    violations: int
    tightness: float
    magnitude: float
    violated: list[tuple[Example, float]] = field(default_factory=list)
    losses: dict[int, float] = field(default_factory=dict)   # setting -> max |log L|

    @property
    def tight(self) -> bool:
        return self.tightness >= TIGHT

    def key(self) -> tuple:
        if self.tight:
            return (self.violations, 0, self.magnitude, 0.0)
        return (self.violations, 1, -self.tightness, self.magnitude)

    def describe(self) -> str:
        return "(" + ", ".join(e.describe() for e in self.exprs) + ")"


def concrete(exprs: Sequence[Expr], setting: Mapping[str, Any]) -> tuple[float, ...]:
    n = int(setting["length"])
    args = _args(setting)
    return tuple(e.value(n, args) for e in exprs)


def neighborhood(sketch: Sketch, region, setting: Mapping[str, Any],
                 radius: float = RADIUS) -> list[tuple[Expr, ...]]:
    """cand: grammar vectors whose value at γ lies within L1 ``radius`` of the region."""
    vectors = list(sketch.grammar.vectors(sketch.n_holes))
    if region is None:
        return vectors
    values = np.array([concrete(v, setting) for v in vectors])
    keep = region.distance(values) <= radius
    return [v for v, k in zip(vectors, keep) if k]


class Evaluator:
    """Counts of every example's event for a candidate, with common random numbers.

    Samples for a (setting, pair) come from the same seeds for every candidate, and
    candidates that agree on the concrete scales at a setting share the counts (cache).
    """

    def __init__(self, sketch: Sketch, settings: Sequence[Mapping[str, Any]],
                 examples: Sequence[Example], m: int = 20_000, seed: int = 0,
                 alpha: float = ALPHA):
        self.sketch = sketch
        self.settings = list(settings)
        self.m = int(m)
        self.seed = int(seed)
        groups: dict[tuple, list[Example]] = {}
        for ex in examples:
            groups.setdefault((ex.setting, ex.d1, ex.d2), []).append(ex)
        # the most violated examples first, so that non-private candidates exit early
        self.groups = sorted(groups.items(),
                             key=lambda kv: -max(abs(e.loss) for e in kv[1]))
        self.n_tests = max(1, 2 * len(examples))
        self.alpha = alpha
        self.cache: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
        self.runs = 0

    def _counts(self, g: int, scales: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray]:
        (s, d1, d2), exs = self.groups[g]
        key = (g, tuple(round(v, 12) for v in scales))
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        args = _args(self.settings[s])
        ss = np.random.SeedSequence([self.seed, g])
        r1, r2 = (np.random.default_rng(x) for x in ss.spawn(2))
        o1 = self.sketch.run(Sampler(r1, self.m), np.asarray(d1, float), args, scales)
        o2 = self.sketch.run(Sampler(r2, self.m), np.asarray(d2, float), args, scales)
        self.runs += 2
        c1 = np.array([np.count_nonzero(e.event.contains(o1)) for e in exs])
        c2 = np.array([np.count_nonzero(e.event.contains(o2)) for e in exs])
        self.cache[key] = (c1, c2)
        return c1, c2

    def example_losses(self, exprs: Sequence[Expr]) -> list[tuple[Example, float]]:
        """Each example with the candidate's estimated |log L| / ε there (cached counts)."""
        out = []
        for g, ((s, _, _), exs) in enumerate(self.groups):
            setting = self.settings[s]
            c1, c2 = self._counts(g, concrete(exprs, setting))
            loss = np.abs(np.log((c1 + 0.5) / (c2 + 0.5))) / float(setting["epsilon"])
            out.extend(zip(exs, loss.tolist()))
        return out

    def score(self, exprs: Sequence[Expr], stop_after: int = 2) -> Scored:
        """Rank evidence of ``exprs``; stops early once ``stop_after`` examples are violated
        (such a candidate ranks below every candidate with fewer violations anyway)."""
        exprs = tuple(exprs)
        violated: list[tuple[Example, float]] = []
        per_setting: dict[int, float] = {}
        level = self.alpha / self.n_tests
        for g, ((s, _, _), exs) in enumerate(self.groups):
            setting = self.settings[s]
            eps = float(setting["epsilon"])
            c1, c2 = self._counts(g, concrete(exprs, setting))
            p = np.minimum(p_value(c1, c2, eps), p_value(c2, c1, eps))
            for ex, pv in zip(exs, p):
                if pv < level:
                    violated.append((ex, float(pv)))
            ok = (c1 + c2) >= 20
            if np.any(ok):
                a, b = c1[ok] + 0.5, c2[ok] + 0.5
                # point estimate less one standard error (var of log a/b ~ 1/a + 1/b), so a
                # rare event's sampling noise does not pass for tightness
                loss = (np.abs(np.log(a / b)) - np.sqrt(1 / a + 1 / b)).max() / eps
                per_setting[s] = max(per_setting.get(s, 0.0), float(loss))
            else:
                per_setting.setdefault(s, 0.0)
            if len(violated) >= stop_after:
                break
        tight = float(np.mean(list(per_setting.values()))) if per_setting else 0.0
        mag = float(sum(sum(concrete(exprs, st)) for st in self.settings))
        return Scored(exprs, len(violated), tight, mag, violated, per_setting)


def verify_band(ranked: Sequence[Scored], top: int, cap: int) -> int:
    """How many of the ranked candidates verification may walk: at least ``top``, and every
    candidate up to the last one with no violated example and a tight loss (the top
    tightness/magnitude band), at most ``cap``."""
    last = max((i + 1 for i, sc in enumerate(ranked) if sc.violations == 0 and sc.tight),
               default=0)
    return min(len(ranked), max(top, min(last, cap)))


def rank(evaluator: Evaluator, cands: Sequence[tuple[Expr, ...]],
         budget: float | None = None) -> tuple[list[Scored], bool]:
    """Score and sort ``cands``; stops after ``budget`` seconds (returns ``timed_out``)."""
    t0 = time.perf_counter()
    scored = []
    for c in cands:
        scored.append(evaluator.score(c))
        if budget is not None and time.perf_counter() - t0 > budget:
            scored.sort(key=Scored.key)
            return scored, True
    scored.sort(key=Scored.key)
    return scored, False


@dataclass
class Verification:
    """The outcome of checking one completion."""

    passed: bool
    method: str
    p_value: float | None = None
    exact_epsilon: float | None = None
    witness: Example | None = None
    detail: str = ""
    seconds: float = 0.0


def verify(sketch: Sketch, exprs: Sequence[Expr], settings: Sequence[Mapping[str, Any]], *,
           tester: Tester, seed: int = 0, alpha: float = ALPHA, use_detect: bool = False,
           n: tuple[int, int] = (20_000, 100_000), recheck: Evaluator | None = None,
           ranker: Evaluator | None = None, m_suspect: int = 500_000,
           executor: Any = None) -> Verification:
    """Check a completion: exact enumeration when every hole is discrete (and bounded), else
    a re-test of the examples on fresh samples (``recheck``) and ``privet.detect``
    (``use_detect``) or the internal tester at the target ε (γ) and at every varied setting
    of Ex_test (the expressions are symbolic, so one ε proves nothing about another).
    ``executor`` is passed to ``privet.detect`` (its sample-and-reduce chunks; the p-values
    do not depend on it); the re-tests and the internal tester run in this process."""
    t0 = time.perf_counter()
    gamma = settings[0]
    eps = float(gamma["epsilon"])
    mech = sketch.complete(exprs, epsilon=eps)
    if sketch.discrete and sketch.geometric_bound is not None:
        per, wit = _exact(mech, sketch, settings)
        ok = all(v <= float(settings[i]["epsilon"]) + 1e-9 for i, v in per.items())
        ex = None
        if wit is not None:
            from ..core.events import Singleton

            s, d1, d2, y = wit
            ex = Example(s, d1, d2, Singleton(tuple(np.atleast_1d(y).tolist())), 0.0,
                         per[s], concrete(exprs, settings[s]), "exact")
        detail = "; ".join(f"ε={float(settings[i]['epsilon']):g}, |q|={settings[i]['length']}:"
                           f" exact {v:.4g}" for i, v in sorted(per.items()))
        return Verification(ok, "exact", None, per.get(0), ex,
                            "exact over the representative pairs: " + detail,
                            time.perf_counter() - t0)
    checks = []
    if recheck is not None:
        checks.append((recheck, "violates an example of Ex ∪ Ex_test on fresh samples"))
    if ranker is not None:
        # the examples where the candidate came near ε, re-tested on much larger samples:
        # a near-miss (loss a few % above ε) needs them to be told apart from a tight one
        suspects = [ex for ex, loss in ranker.example_losses(exprs) if loss >= SUSPECT]
        if suspects:
            checks.append((Evaluator(sketch, settings, suspects, m=m_suspect,
                                     seed=seed + 4242),
                           f"violates one of its {len(suspects)} nearest examples on "
                           f"{m_suspect:,} fresh samples"))
    for ev, text in checks:
        scored = ev.score(exprs, stop_after=1)
        if scored.violated:
            ex, p = min(scored.violated, key=lambda t: t[1])
            return Verification(False, "examples", p * ev.n_tests, None,
                                dataclasses.replace(ex, p_value=p, source="re-test"), text,
                                time.perf_counter() - t0)
    method = "detect" if use_detect else "test"
    return _test_settings(sketch, mech, exprs, settings, tester, use_detect, n, seed, alpha,
                          executor, f"{method} at", method, t0)


def _test_settings(sketch: Sketch, mech, exprs, settings, tester: Tester | None,
                   use_detect: bool, n: tuple[int, int], seed: int, alpha: float,
                   executor: Any, what: str, method: str, t0: float) -> Verification:
    """The tester at every setting (γ first), Bonferroni over the settings; stops at the
    first setting whose corrected p-value is below ``alpha``."""
    worst: tuple[float, Example | None, str] = (1.0, None, "")
    for i in range(len(settings)):
        p, ex, text = _test_setting(sketch, mech, exprs, settings, i, tester, use_detect, n,
                                    seed + 7 * i, alpha, executor)
        p = min(1.0, p * len(settings))
        if p <= worst[0]:
            worst = (p, ex, text)
        if p < alpha:
            break
    detail = f"{what} {len(settings)} settings (Bonferroni); worst: {worst[2]}"
    return Verification(worst[0] >= alpha, method, worst[0], None, worst[1], detail,
                        time.perf_counter() - t0)


FULL_N = (100_000, 500_000)     # privet.detect's own sample sizes (StatDP's)


def final_check(sketch: Sketch, exprs: Sequence[Expr], settings: Sequence[Mapping[str, Any]],
                *, seed: int = 0, alpha: float = ALPHA, n: tuple[int, int] = FULL_N,
                executor: Any = None) -> Verification:
    """privet's full test of a completion that passed verification: ``privet.detect`` at its
    own sample sizes, at every setting (Bonferroni over the settings). A completion is
    ranked only when this finds no violation, so the quick tester (or reduced sizes) can
    never rank a completion that ``detect`` rejects."""
    t0 = time.perf_counter()
    mech = sketch.complete(exprs, epsilon=float(settings[0]["epsilon"]))
    return _test_settings(sketch, mech, exprs, settings, None, True, n, seed, alpha, executor,
                          f"final check: privet.detect ({n[0]:,} + {n[1]:,} samples per "
                          "input) at", "detect", t0)


def _test_setting(sketch: Sketch, mech, exprs, settings, index: int, tester: Tester | None,
                  use_detect: bool, n: tuple[int, int], seed: int, alpha: float,
                  executor: Any = None):
    """(p-value, witness, text) of testing ``mech`` at setting ``index``."""
    setting = settings[index]
    eps = float(setting["epsilon"])
    pairs = example_pairs(sketch, setting)
    mech = mech.replace(epsilon=eps)
    if use_detect:
        from ..core.events import from_spec
        from ..detect import detect

        res = detect(mech, eps, inputs=[(p.d1, p.d2) for p in pairs], args=_args(setting),
                     n_select=n[0], n_final=n[1], alpha=alpha, seed=seed, executor=executor)
        cx = res.counterexample or (res.candidates[0] if res.candidates else None)
        ex = None
        if cx is not None and cx.event_spec is not None:
            try:
                ex = Example(index, tuple(np.asarray(cx.d1, float).tolist()),
                             tuple(np.asarray(cx.d2, float).tolist()),
                             from_spec(cx.event_spec), float(cx.p_value), 0.0,
                             concrete(exprs, setting), "privet.detect")
            except Exception:
                ex = None
        return float(res.p_value), ex, f"ε={eps:g}, |q|={setting['length']}: {res.verdict}"
    witnesses = tester(mech, _args(setting), pairs, eps, seed)
    if not witnesses:
        return 1.0, None, "no events to test"
    best = min(witnesses, key=lambda w: w.p_value)
    # Bonferroni over the tested pairs: the minimum p-value over the pairs' tests
    p = min(1.0, best.p_value * len(witnesses))
    ex = Example(index, tuple(np.asarray(best.d1).tolist()),
                 tuple(np.asarray(best.d2).tolist()), best.event, p, best.loss,
                 concrete(exprs, setting), "verify")
    return p, ex, f"ε={eps:g}, |q|={setting['length']}: p = {p:.3g}"


def _exact(mech, sketch: Sketch, settings):
    """Exact ε of a discrete completion over the representative pairs of each setting.

    Returns ({setting: ε}, (setting, d1, d2, y) of the worst output relative to its ε).
    """
    per: dict[int, float] = {}
    wit, worst_rel = None, -1.0
    for s, setting in enumerate(settings):
        args = _args(setting)
        eps = float(setting["epsilon"])
        for pair in sketch.neighbors.pairs(lengths=(int(setting["length"]),)):
            p1 = mech.distribution(pair.d1, args).as_dict()
            p2 = mech.distribution(pair.d2, args).as_dict()
            for y in set(p1) | set(p2):
                a, b = p1.get(y, 0.0), p2.get(y, 0.0)
                if a <= 0 and b <= 0:
                    continue
                e = math.inf if min(a, b) <= 0 else abs(math.log(a / b))
                per[s] = max(per.get(s, 0.0), e)
                if e / eps > worst_rel:
                    worst_rel = e / eps
                    wit = (s, tuple(pair.d1.tolist()), tuple(pair.d2.tolist()), y)
    return per, wit
