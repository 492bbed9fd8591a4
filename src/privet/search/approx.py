"""``privet.search`` for approximate DP: certified lower bounds on the privacy profile.

For an (ε, δ) or zCDP claim the question is not one ε but the whole curve δ(ε). One fresh
sample certifies all of it at once (the family-of-pairs idea of Delta-Siege, Lokna et al.,
CCS 2023):

1. candidate pairs: StatDP's neighbor patterns and arguments (Algorithm 4) plus the
   domain's edges (:func:`privet.attacks.tails.extreme_pairs`);
2. selection samples fit, per ordered pair, a statistic and a family of tail events
   (:mod:`privet.attacks.tails`); the pair whose events show the largest δ at the target ε
   is kept;
3. a fresh sample counts every event, D2's side sized by the claim (up to about 50·e^ε/δ
   runs, looked at first at D1's size, where a certified violation stops it);
4. Clopper–Pearson bounds on both sides of every event, joined by one union bound over the
   events and D2's looks (:func:`privet.stats.approx.simultaneous_bounds`), hold together
   with probability at least ``confidence``; from them, simultaneously:
   δ(ε) ≥ max_k L1_k − e^ε U2_k at every ε and ε(δ) ≥ max_k ln((L1_k − δ)/U2_k) at every δ.

White-box first: when the mechanism's noise can be enumerated (finite discrete noise), the
selected pair's profile is computed exactly instead (confidence 1). Black boxes (library
adapters) go through steps 1-4 with the samples they can give.
"""

from __future__ import annotations

import math
import secrets
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..attacks import tails
from ..core.claims import Claim
from ..core.errors import ParameterError, check_count, check_epsilon
from ..core.mechanism import Mechanism
from ..core.results import CertifiedProfile, Counterexample
from ..core.text import fmt_apart, fmt_num
from ..stats.approx import ProfileBound, simultaneous_bounds

N_MAX = 400_000_000
CURVE_DELTAS = tuple(np.geomspace(1e-7, 1e-1, 13).tolist())


def target_point(claim: Claim | None, epsilon: float | None, delta: float | None
                 ) -> tuple[float, float]:
    """The (ε, δ) whose δ is certified: the claim's, ``epsilon`` with δ(ε), ``delta`` with
    ε(δ), or for a zCDP claim its ε at δ = 1e-5."""
    if claim is None:
        if epsilon is None or delta is None:
            raise ParameterError("the mechanism claims nothing: give both epsilon= and delta=.")
        return float(epsilon), float(delta)
    if claim.kind == "zcdp" and epsilon is None and delta is None:
        delta = 1e-5
    if epsilon is None and delta is not None and claim.kind == "approx" and \
            math.isinf(float(claim.epsilon_at(float(delta)))):
        # below the claim's δ it says nothing (ε = ∞): δ is certified at the claim's own ε,
        # and ε(δ) at the δ asked for (before: "δ(∞) ≥ 0")
        return float(claim.epsilon), float(delta)
    return claim.point(epsilon, delta)


def certify_profile(mech: Mechanism, *, epsilon: float | None = None,
                    delta: float | None = None, confidence: float = 0.9, inputs=None,
                    args: Mapping[str, Any] | None = None, n_select: int = 100_000,
                    n_final: int = 500_000, n_max: int = N_MAX,
                    deltas: Sequence[float] | None = None, seed: int | None = None,
                    progress: bool = False, executor: Any = None) -> CertifiedProfile:
    """Certified δ at ε, ε at δ and the lower curve ε_L(δ) over ``deltas`` (default 1e-7 ..
    0.1 plus the target δ), simultaneously with confidence ``confidence``."""
    from ..detect.approx import (
        approx_pairs,
        check_sizes,
        exact_gaussian_select,
        sample_audit,
    )

    t0 = time.perf_counter()
    if not 0 < float(confidence) < 1:
        raise ParameterError(f"confidence must lie in (0, 1), got {confidence}.")
    check_sizes(n_select, n_final)
    claim = mech.claim
    if epsilon is not None:
        check_epsilon(epsilon, "the test epsilon")
    if delta is not None and not (isinstance(delta, (int, float, np.floating))
                                  and 0 < float(delta) < 1):
        raise ParameterError(f"the test delta must lie in (0, 1), got {delta!r}.")
    check_count(n_max, "n_max")  # n_select and n_final: check_sizes above
    eps, dlt = target_point(claim, epsilon, delta)
    if seed is None:
        seed = secrets.randbits(63)
    base = np.asarray(list(deltas) if deltas is not None else CURVE_DELTAS, dtype=float)
    # the target δ replaces a grid point within round-off of it (geomspace's 1.0000000000000004e-05
    # beside 1e-05 printed as two rows of "1.0e-05", one claimed ∞ and one 1)
    base = base[~np.isclose(base, dlt, rtol=1e-9, atol=0)]
    grid = np.unique(np.r_[base, dlt])
    grid = grid[(grid > 0) & (grid < 1)]
    planned, path, notes = approx_pairs(mech, inputs, args)
    e = math.exp(eps)

    def score(c1, c2, n1, n2):
        return np.asarray(c1) / n1 - e * np.asarray(c2) / n2

    n1, n2 = tails.sample_sizes(eps, dlt, n_final, n_max)
    claimed_d = claim.delta_at(eps) if claim is not None else dlt
    white = exact_gaussian_select(mech, planned, score)
    counts = None
    if white is not None:
        cand, exact = white[0], white[1:]
        method = ("exact normal tails of the selected pair (white box: the output is affine "
                  "in Gaussian noise, z3)")
    else:
        method = "exact enumeration of the selected pair (white box)"

        def decided(c: tails.TailCounts, looks: int) -> bool:
            # a certified violation, or futility: D2's full sample would not certify one at
            # its present hit rate (tails.projected; the union bound over looks holds at
            # whichever look the run stops)
            level = 1 - (1 - confidence) / looks
            bounds = [simultaneous_bounds(t.c1, t.n1, t.c2, t.n2, level)
                      for t in (c, tails.projected(c, n2))]
            return bounds[0].delta_at(eps) > claimed_d or bounds[1].delta_at(eps) <= claimed_d

        cand, exact, counts = sample_audit(mech, planned, score, "search (ε, δ)", decided,
                                           n_select=n_select, n1=n1, n2=n2, seed=seed,
                                           executor=executor, progress=progress)
    if exact is not None:
        p1, p2 = exact
        pb = ProfileBound(p1, p2, 1.0)   # the pair's exact event probabilities
        conf = 1.0
    else:
        # the union bound also covers D2's looks: each look's bounds at 1 - α/looks
        pb = simultaneous_bounds(counts.c1, counts.n1, counts.c2, counts.n2,
                                 1 - (1 - confidence) / counts.looks)
        pb = ProfileBound(pb.lower1, pb.upper2, float(confidence))
        method = (f"Clopper-Pearson over {cand.family.size} tail events and "
                  f"{counts.looks} look(s), one union bound (privet.stats.approx)")
        conf = float(confidence)
    d_low = float(pb.delta_at(eps))
    e_low = float(pb.epsilon_at(dlt))
    curve = np.asarray(pb.epsilon_at(grid), dtype=float)
    claimed = (np.asarray(claim.epsilon_at(grid), dtype=float) if claim is not None
               else np.full(len(grid), np.inf))
    above = np.nonzero(curve > claimed + 1e-12)[0]   # where the certified curve exceeds it
    delta_over = d_low > claimed_d + 1e-15
    over = delta_over or above.size > 0
    how = "exact" if exact is not None else f"{conf:.0%} confidence"
    # the words of the table in privet.core.results, then the certified figures
    word = ("violation (exact)" if exact is not None else "violation certified") if over \
        else "no violation found"
    verdict = (f"{word}: δ({fmt_num(eps)}) ≥ {fmt_num(d_low, 3)} ({how}; claimed "
               f"{fmt_num(claimed_d, 3)}); ε({fmt_num(dlt, 3)}) ≥ {fmt_num(e_low)}")
    if above.size and not delta_over:
        # the violation lies elsewhere on the curve: name where it is largest
        j = int(above[np.argmax(curve[above] - claimed[above])])
        got, want = fmt_apart(curve[j], claimed[j])
        verdict += f"; ε({fmt_num(grid[j], 3)}) ≥ {got} > claimed {want}"
    k = pb.best_event(epsilon=eps)
    witness = _witness(mech, cand, k, pb, counts, exact, eps, d_low, conf, seed)
    interrupted = bool(counts is not None and counts.interrupted)
    if interrupted:
        notes.append("interrupted: the bounds use the fresh runs drawn so far")
    return CertifiedProfile(
        mechanism=mech.name, claim=mech.describe_claim(), confidence=conf, epsilon=eps,
        delta_lower=d_low, delta=dlt, epsilon_lower=e_low,
        curve_delta=tuple(grid.tolist()), curve_epsilon=tuple(curve.tolist()),
        claimed_curve=tuple(claimed.tolist()), verdict=verdict,
        known_curve=None if mech.true_profile is None else
        tuple(float(mech.true_profile(float(d))) for d in grid), witness=witness,
        method=method, seed=int(seed), seconds=time.perf_counter() - t0,
        details={"delta_violation": bool(delta_over), "claimed_delta":
                 claimed_d, "pattern": cand.pattern, "family_size": cand.family.size,
                 "statistic": cand.family.statistic.describe(), "n_select": int(n_select),
                 "n_fresh": [counts.n1, counts.n2] if counts is not None else None,
                 "pairs": len(planned), "arg_path": path, "notes": notes,
                 "interrupted": interrupted},
    )


def _witness(mech, cand, k, pb, counts, exact, eps, d_low, conf, seed) -> Counterexample:
    fam = cand.family
    return Counterexample(
        mechanism=mech.name, d1=tuple(np.asarray(cand.x1, float).tolist()),
        d2=tuple(np.asarray(cand.x2, float).tolist()), args=dict(cand.args),
        event=fam.describe(k), event_spec=fam.spec(k),
        counts=None if counts is None else (int(counts.c1[k]), int(counts.c2[k])),
        n=None if counts is None else (counts.n1, counts.n2),
        probabilities=None if exact is None else (float(exact[0][k]), float(exact[1][k])),
        test_epsilon=eps, epsilon_witnessed=None, confidence=conf, exact=exact is not None,
        seed=int(seed),
        details={"delta_witnessed": d_low, "lower_d1": float(pb.lower1[k]),
                 "upper_d2": float(pb.upper2[k]), "pattern": cand.pattern},
    )


__all__ = ["CURVE_DELTAS", "N_MAX", "certify_profile", "target_point"]
