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

The top band (at least 5 x #locations) is then checked at the target ε (γ) and at every
setting: exactly (enumeration over the example pairs) when every hole draws discrete noise;
otherwise by the group-sequential re-test of Ex ∪ Ex_test on fresh samples
(:class:`ExampleTest`) and then ``privet.detect`` (or the internal tester when detect is
unavailable).

What the checks control: each check is a test of H0 "the completion's privacy loss is at
most ε" at level α = 0.05 *per completion* (Bonferroni over the examples and the settings,
a union bound over the looks of a sequential test). A completion whose loss is at most ε
is therefore rejected with probability at most α by each check: 2α in all for the example
re-test followed by ``privet.detect`` (the final check, at detect's own level so that no
ranked completion is one detect rejects). The re-test spends most of its α at its last,
largest look (16x the first), where the p-value of an example whose loss is strictly below
ε concentrates near 1: a tight textbook answer (loss 0.98ε on its examples) is rejected far
less often than α, while a near-miss (loss a few % above ε) is rejected with growing power.
The band is not corrected as a family (Holm over its candidates): each completion is its own
hypothesis, the error that costs a rank is the false rejection of that one completion, and
a band-wide correction would divide the level by up to 60 and let near-misses through.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from ..core.noise import Sampler
from ..stats.sequential import ACCEPT, REJECT, Design, clearly_below, decide
from .examples import Example, Tester, example_pairs
from .grammar import Expr
from .quicktest import p_value
from .sketch import Sketch, _args

RADIUS = 3.0
ALPHA = 0.05
TIGHT = 0.7
CHUNK = 200_000         # runs per side drawn at once by an Evaluator (bounds the memory)
LOOKS = 3               # looks of the sequential example re-test ...
GROWTH = 4              # ... each 4x the previous (twice the drift of a strictly-below loss)


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
        # one sample of m runs per side (the streams of m <= CHUNK), or m in chunks
        chunks = [(ss, self.m)] if self.m <= CHUNK else \
            list(zip(ss.spawn(-(-self.m // CHUNK)), _split(self.m, CHUNK)))
        c1 = np.zeros(len(exs), dtype=np.int64)
        c2 = np.zeros(len(exs), dtype=np.int64)
        for seq, size in chunks:
            r1, r2 = (np.random.default_rng(x) for x in seq.spawn(2))
            o1 = self.sketch.run(Sampler(r1, size), np.asarray(d1, float), args, scales)
            o2 = self.sketch.run(Sampler(r2, size), np.asarray(d2, float), args, scales)
            c1 += [np.count_nonzero(e.event.contains(o1)) for e in exs]
            c2 += [np.count_nonzero(e.event.contains(o2)) for e in exs]
        self.runs += 2 * len(chunks)
        self.cache[key] = (c1, c2)
        return c1, c2

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


def _split(m: int, size: int) -> list[int]:
    """``m`` as chunks of at most ``size``."""
    return [size] * (m // size) + ([m % size] if m % size else [])


class ExampleTest:
    """The examples Ex ∪ Ex_test re-tested on fresh samples, group-sequentially.

    Looks at ``first``, 4x, 16x ``first`` fresh runs per input (each look its own samples,
    shared by all candidates: common random numbers and a cache per concrete scale vector).
    At look k every example still open is tested (the conditional binomial p-value of
    :mod:`~privet.synth.quicktest` in the worse direction, x 2 for the two directions and
    x #examples, Bonferroni) against the level α_k of a power spending function α t²
    (:class:`privet.stats.sequential.Design`, Kim and DeMets 1987): α/256 at the first look,
    15α/256 at the second, 15α/16 at the last. An example is closed for futility once the
    99.9% Clopper-Pearson bounds put its ratio below e^ε in both directions
    (:func:`~privet.stats.sequential.clearly_below`); the test rejects at the first look
    where some example falls below its level. Under H0 (loss ≤ ε on every example) the
    rejection probability is at most α (union bound over the looks and the examples; the
    futility stops only remove looks). An example whose true loss is strictly below ε has a
    drift away from the rejection region growing like √m, so it is rejected far less often
    than α at the large last look; one strictly above ε is rejected with power growing the
    same way (a near-miss a few % above ε, which a fixed sample cannot tell from a tight
    answer).
    """

    def __init__(self, sketch: Sketch, settings: Sequence[Mapping[str, Any]],
                 examples: Sequence[Example], first: int, *, alpha: float = ALPHA,
                 seed: int = 0, looks: int = LOOKS, growth: int = GROWTH):
        sizes = tuple(int(first) * growth ** k for k in range(looks))
        self.design = Design(sizes, alpha)
        self.settings = list(settings)
        self.n_examples = max(1, len(examples))
        self.evaluators = [Evaluator(sketch, settings, examples, m=m, seed=seed + 7_919 * k)
                           for k, m in enumerate(sizes)]

    def describe(self) -> str:
        looks = self.design.looks
        return (f"{self.n_examples} examples of Ex ∪ Ex_test re-tested on fresh samples, "
                f"group-sequential: looks at {looks[0]:,} to {looks[-1]:,} runs per input, "
                f"α spent as α t², Bonferroni over the examples")

    def run(self, exprs: Sequence[Expr]) -> tuple[Example | None, float, int]:
        """(the violated example or None, the completion's p-value, the looks made).

        The p-value is the smallest sequential p-value over the examples (each corrected
        for the number of examples): at most α exactly when the test rejects."""
        groups = self.evaluators[0].groups
        open_ = [np.ones(len(exs), bool) for _, exs in groups]
        prev = [np.ones(len(exs)) for _, exs in groups]
        best: tuple[float, Example | None] = (1.0, None)
        k = 0
        for k, ev in enumerate(self.evaluators):
            for g, ((s, _, _), exs) in enumerate(groups):
                if not open_[g].any():
                    continue
                eps = float(self.settings[s]["epsilon"])
                c1, c2 = ev._counts(g, concrete(exprs, self.settings[s]))
                p = np.minimum(1.0, 2 * self.n_examples *
                               np.minimum(p_value(c1, c2, eps), p_value(c2, c1, eps)))
                for j in np.flatnonzero(open_[g]):
                    step = decide(float(p[j]), self.design, k, float(prev[g][j]),
                                  partial(_within, int(c1[j]), int(c2[j]), ev.m, eps))
                    prev[g][j] = step.bonferroni
                    if step.p_value < best[0]:
                        best = (step.p_value, exs[j])
                    if step.decision == REJECT:
                        return exs[j], step.p_value, k + 1
                    if step.decision == ACCEPT:
                        open_[g][j] = False
            if not any(o.any() for o in open_):
                break
        return None, best[0], k + 1


def _within(c1: int, c2: int, m: int, eps: float) -> bool:
    """The futility stop: the ratio is clearly below e^ε in both directions."""
    return clearly_below(c1, c2, m, m, eps) and clearly_below(c2, c1, m, m, eps)


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
           n: tuple[int, int] = (20_000, 100_000), examples: ExampleTest | None = None,
           test: bool = True, executor: Any = None) -> Verification:
    """Check a completion: exact enumeration when every hole is discrete (and bounded), else
    the group-sequential re-test of the examples on fresh samples (``examples``) and, when
    ``test``, ``privet.detect`` (``use_detect``) or the internal tester at the target ε (γ)
    and at every varied setting of Ex_test (the expressions are symbolic, so one ε proves
    nothing about another). ``test=False`` when :func:`final_check` follows (it is the same
    test at full sizes: a second one at reduced sizes would add its α of false alarms).
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
    p_ex = None
    if examples is not None:
        ex, p_ex, looks = examples.run(exprs)
        if ex is not None:
            return Verification(False, "examples", p_ex, None,
                                dataclasses.replace(ex, p_value=p_ex, source="re-test"),
                                f"violates an example at look {looks}: {examples.describe()}",
                                time.perf_counter() - t0)
    if not test:
        return Verification(True, "examples", p_ex, None, None,
                            examples.describe() if examples is not None else "",
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
        for pair in sketch.neighbors.pairs(lengths=(int(setting["length"]),),
                                           domain=sketch.domain):
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
