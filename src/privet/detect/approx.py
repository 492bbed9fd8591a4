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
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..attacks import tails
from ..core.claims import Claim
from ..core.errors import InputError, ParameterError, check_epsilon
from ..core.mechanism import Mechanism
from ..core.results import Counterexample, DetectResult
from ..execution import get_executor
from ..execution.progress import progress_bar
from ..stats.approx import approx_pvalue, point_envelope
from .engine import _lengths, _plain, _Shared, generate_inputs, verdict_text

N_MAX = 400_000_000


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

    if null.claim is None:
        n1, n2 = tails.sample_sizes(null.epsilon, null.delta, n_final, n_max)
    else:
        n1 = n2 = int(n_final)
    ex = get_executor(executor, mech)
    shared = _Shared(ex, owned=ex is not executor)
    try:
        with progress_bar(total_runs(planned, n_select, n1, n2), "detect (ε, δ)",
                          enabled=progress) as advance:
            cand = tails.select(mech, planned, score, n_select=n_select, seed=seed,
                                executor=shared, progress=advance)
            counts = tails.count_fresh(mech, cand, n1, n2, seed=seed, executor=shared,
                                       progress=advance,
                                       stop=lambda c, L: family_pvalue(c, f)[0] * L < alpha)
    finally:
        shared.shutdown()
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


__all__ = ["N_MAX", "Null", "approx_pairs", "check_sizes", "detect_approx", "null_for",
           "total_runs"]
