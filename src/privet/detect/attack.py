"""The classifier-attack event family of ``privet.detect`` for black boxes.

StatDP's event families (:mod:`privet.detect.space`) are intervals and counts of one
output statistic; a black box whose violation lives in a bit pattern (randomized response
over many bits), a weighted sum, or an interaction of entries escapes them. For mechanisms
that can only be sampled, :func:`attack_witness` searches a (D1, D2, event) with the
classifier attacks of :mod:`privet.attacks` (DP-Sniper, Bichsel et al., S&P 2021) on
*its own* samples -- the input search, the models and the threshold never see the final
test's samples -- choosing the candidate whose final test at the test epsilon would be the
most significant; :func:`attack_test` hands it to detect's final test
(:func:`privet.detect.test_event`, Algorithm 2 on fresh samples). :func:`combine` joins it
with StatDP's selected candidate: two final tests, so the reported p-value is the smaller
of the two doubled (Bonferroni), which keeps the level at alpha.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

from ..attacks import Budget, search_witness
from ..core.mechanism import Mechanism
from ..core.results import Counterexample
from ..stats.hypothesis import approx_z

__all__ = ["applies", "attack_test", "attack_witness", "combine", "hook", "test_objective"]

SHRINK = 2.0  # selection counts moved this many standard errors towards no violation


def applies(mech: Mechanism) -> bool:
    """The family runs for mechanisms without Replay (black boxes, vectorized, StatDP-style)."""
    return not mech.supports("replay")


def test_objective(n_final: int, epsilon: float):
    """``-log10`` of the final test's p-value (normal approximation) if the final samples
    showed the selection frequencies, each count first moved ``shrink`` standard errors
    towards no violation (default ``SHRINK``; 0 for a held-out sample's counts)."""

    def objective(n11, n10, n01, n, shrink=SHRINK):
        k1 = np.asarray(n11, float) + np.asarray(n10, float)
        k2 = np.asarray(n11, float) + np.asarray(n01, float)
        k1 = np.maximum(k1 - shrink * np.sqrt(k1), 0.0)
        k2 = np.minimum(k2 + shrink * np.sqrt(k2 + 1.0) + (shrink > 0), float(n))
        r = float(n_final) / float(n)
        # -log10 p from the normal tail's logarithm: p-values below 1e-300 still rank (an
        # event never seen under D2 against one seen there a few times)
        z = approx_z(k1 * r, k2 * r, n_final, n_final, epsilon)
        return -special.log_ndtr(-z) / math.log(10.0)

    return objective


def attack_witness(mech: Mechanism, epsilon: float, *, n_select: int, n_final: int,
                   args: dict | None, seed: Any, executor: Any, progress: bool = False,
                   pairs: list | None = None, float_features: Any = "auto",
                   seconds: float | None = None):
    """The attack's best (D1, D2, event) for a final test at ``epsilon`` (None if none), and
    whether Ctrl-C cut the search short; ``pairs`` (the inputs given to detect) replace the
    generated candidates; ``float_features`` the float-exact views
    (:class:`privet.attacks.Budget`)."""
    fast = mech.kind not in ("statdp", "blackbox")
    # the race may grow a finalist's selection sample to the final test's size (vectorized
    # mechanisms; per-sample black boxes keep n_select)
    race = max(int(n_select), int(n_final)) if fast else int(n_select)
    # the final test draws its own fresh sample, so the race's events are judged on the
    # counts that chose them (crossfit=False): cross-fitted, each is chosen on half the
    # race's sample, and svt3's p-value at seed 0 went from 0.0036 to 0.29
    budget = Budget(n_train=min(1 << (15 if fast else 12), int(n_select)),
                    n_fit=min(1 << 16, int(n_select)), n_select=race,
                    random_pairs=8, iterations=8, finalists=3,
                    models=("table", "bins", "logistic", "stats"),
                    float_features=float_features, crossfit=False, seconds=seconds)
    cand, _, interrupted = search_witness(
        mech, test_objective(n_final, epsilon), budget=budget, args=args, seed=seed,
        executor=executor, progress=progress, pairs=pairs)
    return cand, interrupted


def attack_test(mech: Mechanism, epsilon: float, *, n_select: int, n_final: int,
                alpha: float, args: dict | None, seed: int, executor: Any,
                progress: bool = False, pairs: list | None = None,
                float_features: Any = "auto", seconds: float | None = None
                ) -> tuple[Counterexample | None, bool]:
    """The attack family's candidate, final-tested on ``n_final`` fresh samples per input
    (None when it found none), and whether Ctrl-C cut the attack or its test short."""
    from . import test_event  # the final test (Algorithm 2) of any event

    root = np.random.SeedSequence(seed, spawn_key=(13,))  # a stream of its own
    s_search, s_test = root.spawn(2)
    cand, interrupted = attack_witness(mech, epsilon, n_select=n_select, n_final=n_final,
                                       args=args, seed=s_search, executor=executor,
                                       progress=progress, pairs=pairs,
                                       float_features=float_features, seconds=seconds)
    if cand is None or interrupted:
        return None, interrupted
    try:
        cx = test_event(mech, cand.x, cand.x2, cand.event, epsilon, args=args, n=n_final,
                        seed=int(s_test.generate_state(1)[0]), alpha=alpha,
                        executor=executor if executor is not None else "inprocess")
    except KeyboardInterrupt:
        return None, True
    details = {**cx.details, "family": "classifier attack", "model": cand.model,
               "pattern": cand.pattern, "selection_counts": [cand.counts[0] + cand.counts[1],
                                                             cand.counts[0] + cand.counts[2]],
               "n_select": cand.n}
    return Counterexample(**{**_fields(cx), "details": details}), False


def _fields(cx: Counterexample) -> dict:
    return {f: getattr(cx, f) for f in cx.__dataclass_fields__}


def combine(statdp: Counterexample, attack: Counterexample | None, alpha: float
            ) -> tuple[Counterexample, float, list[Counterexample]]:
    """The reported candidate, its p-value over both families (the smaller final-test
    p-value doubled, at most 1) and the candidates (StatDP's first)."""
    if attack is None:
        return statdp, float(statdp.p_value), [statdp]
    chosen = min([statdp, attack], key=lambda c: float(c.p_value))
    shown = _doubled(chosen, alpha,
                     "StatDP events and classifier attacks (Bonferroni over 2)")
    return shown, float(shown.p_value), [shown, attack if chosen is statdp else statdp]


def _doubled(chosen: Counterexample, alpha: float, families: str) -> Counterexample:
    """``chosen`` with its p-value doubled (Bonferroni over the two families, at most 1)."""
    p = min(1.0, 2.0 * float(chosen.p_value))
    details = {**chosen.details, "p_uncorrected": float(chosen.p_value), "families": families}
    return Counterexample(**{**_fields(chosen), "p_value": p,
                             "epsilon_witnessed": chosen.test_epsilon if p < alpha else None,
                             "details": details})


def hook(mech: Mechanism, chosen: Counterexample, cands: list, epsilon: float, *,
         n_select: int, n_final: int, alpha: float, args: dict | None, seed: int,
         executor: Any, progress: bool, inputs=None, skip: bool = False,
         float_features: Any = "auto", seconds: float | None = None
         ) -> tuple[Counterexample, list, bool, bool]:
    """detect's hook: for a black box, the attack family's final test joined with StatDP's
    (:func:`combine`; on detect's ``inputs`` when given): ``(shown, candidates, True,
    False)``, where ``shown.p_value`` is the joint p-value (StatDP's, sequential or not, is
    valid at every level, so the Bonferroni minimum of the two doubled is too). Other
    mechanisms, a ``skip`` (Ctrl-C during StatDP's test) and an attack that found nothing
    pass through: ``(chosen, cands, False, False)``. An attack cut short by Ctrl-C ends
    ``(chosen, cands, True, True)`` with StatDP's p-value doubled: the family was meant to
    be tested, so the correction stays, and the run is marked interrupted."""
    if skip or not applies(mech):
        return chosen, cands, False, False
    pairs = [tuple(p) for p in inputs] if inputs is not None else None
    extra, cut = attack_test(mech, epsilon, n_select=n_select, n_final=n_final, alpha=alpha,
                             args=args, seed=seed, executor=executor, progress=progress,
                             pairs=pairs, float_features=float_features, seconds=seconds)
    if cut:
        shown = _doubled(chosen, alpha, "StatDP events (the classifier attack was "
                                        "interrupted; Bonferroni over 2 kept)")
        return shown, [shown, *cands[1:]], True, True
    if extra is None:
        return chosen, cands, False, False
    shown, _, pair = combine(chosen, extra, alpha)
    return shown, pair + list(cands[1:]), True, False
