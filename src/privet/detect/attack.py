"""The classifier-attack event family of ``privet.detect`` for black boxes.

StatDP's event families (:mod:`privet.detect.space`) are intervals and counts of one
output statistic; a black box whose violation lives in a bit pattern (randomized response
over many bits), a weighted sum, or an interaction of entries escapes them. For mechanisms
that can only be sampled, :func:`attack_witness` searches a (D1, D2, event) with the
classifier attacks of :mod:`privet.attacks` (DP-Sniper, Bichsel et al., S&P 2021) on
*its own* samples -- the input search, the models and the threshold never see the final
test's samples -- choosing the candidate whose final test at the test epsilon would be the
most significant; :func:`attack_test` hands it to detect's final test
(:func:`sequential_test`: Algorithm 2 on fresh samples, in looks that grow to
:data:`GROWTH` times ``n_final`` for vectorized mechanisms). :func:`combine` joins it
with StatDP's selected candidate: two final tests, so the reported p-value is the smaller
of the two doubled (Bonferroni), which keeps the level at alpha.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

from ..attacks import Budget, search_witness
from ..core import events as _events
from ..core.mechanism import Mechanism
from ..core.results import Counterexample
from ..stats.hypothesis import approx_z, pvalues
from ..stats.sequential import ACCEPT, CONTINUE, Design, schedule, sequential_step

__all__ = ["applies", "attack_test", "attack_witness", "combine", "final_looks", "hook",
           "sequential_test", "test_objective"]

SHRINK = 2.0  # selection counts moved this many standard errors towards no violation
GROWTH = 16   # a vectorized mechanism's final test may grow to this many times n_final


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
    fast = not mech.per_sample
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
                float_features: Any = "auto", seconds: float | None = None,
                sequential: bool = True) -> tuple[Counterexample | None, bool]:
    """The attack family's candidate, final-tested on fresh samples per input in the looks
    of :func:`final_looks` (:func:`sequential_test`, its design at ``alpha / 2``: the
    candidate's p-value is doubled when joined with StatDP's; ``sequential=False``: one
    look of ``n_final``), or None when it found none; and whether Ctrl-C cut the attack or
    its test short."""
    root = np.random.SeedSequence(seed, spawn_key=(13,))  # a stream of its own
    s_search, s_test = root.spawn(2)
    cand, interrupted = attack_witness(mech, epsilon, n_select=n_select, n_final=n_final,
                                       args=args, seed=s_search, executor=executor,
                                       progress=progress, pairs=pairs,
                                       float_features=float_features, seconds=seconds)
    if cand is None or interrupted:
        return None, interrupted
    try:
        cx = sequential_test(mech, cand.x, cand.x2, cand.event, epsilon, args=args,
                             looks=final_looks(mech, n_final, sequential), alpha=alpha / 2.0,
                             seed=int(s_test.generate_state(1)[0]),
                             executor=executor if executor is not None else "inprocess")
    except KeyboardInterrupt:
        return None, True
    details = {**cx.details, "family": "classifier attack", "model": cand.model,
               "pattern": cand.pattern, "selection_counts": [cand.counts[0] + cand.counts[1],
                                                             cand.counts[0] + cand.counts[2]],
               "n_select": cand.n}
    # its design spends alpha/2, the level its p-value is held to after the correction for
    # both families (combine); the candidate states the detect run's confidence
    return Counterexample(**{**_fields(cx), "details": details, "confidence": 1 - alpha}), False


def final_looks(mech: Mechanism, n_final: int, sequential: bool = True) -> tuple:
    """The cumulative sizes per input at which the attack's final test looks: ``n_final``
    alone for a mechanism sampled one call per output (a black box, StatDP-style) and for
    ``sequential=False`` (detect's fixed sizes), else
    ``n_final``, twice, four times ... up to :data:`GROWTH` times it
    (:func:`privet.stats.sequential.schedule`: no look between a third of the budget and
    the budget)."""
    n_final = int(n_final)
    if mech.per_sample or not sequential:
        return (n_final,)
    return schedule(GROWTH * n_final, first=n_final)


def sequential_test(mech: Mechanism, x, x2, event, epsilon: float, *, looks: tuple,
                    alpha: float, args: dict | None, seed: int, executor: Any
                    ) -> Counterexample:
    """The group-sequential final test of H0: P[M(x) in E] <= e^eps P[M(x2) in E] for an
    event chosen to favour x: fresh samples of both inputs up to each of ``looks`` in turn
    (each look's increment from its own seed stream), stopping at the first look that
    rejects at the level the alpha-spending design gives it, or that finds the event
    clearly inside the null (:func:`privet.stats.sequential.sequential_step`). The looks
    are fixed in advance and the event was chosen on other samples, so the union bound
    over looks keeps the type-I error at ``alpha``; ``p_value`` is the sequential p-value,
    valid at every level (one look: the fixed-size test's one-sided p-value). A weak
    violation a fixed ``n_final`` leaves undecided (svt3 at seed 0: a ratio of 1.12
    against e^0.1) gets the samples that decide it, and a clear one stops at the first
    look. Ctrl-C raises KeyboardInterrupt (a cut look is no test)."""
    from ..execution import get_executor
    from . import event_counts

    a, b = mech.domain.check(x), mech.domain.check(x2)
    mech.neighbors.check(a, b)
    design = Design(tuple(int(n) for n in looks), float(alpha))
    hits = _events.Hits(event)
    ex = get_executor(executor)
    c, n, bonf, made = [0, 0], [0, 0], 1.0, []
    try:
        for k, size in enumerate(design.looks):  # each look's increment, a stream of its own
            got = event_counts(mech, (a, b), int(size) - n[0], hits, args=args,
                               seed=int(seed), executor=ex, key=(k,))
            c = [c[i] + got[i][0] for i in (0, 1)]
            n = [n[i] + got[i][1] for i in (0, 1)]
            step = sequential_step(c[0], c[1], n[0], n[1], epsilon, design=design, look=k,
                                   previous=bonf)
            bonf = step.bonferroni
            made.append({"n": n[0], "counts": (c[0], c[1]), "p": step.p_look,
                         "level": step.level, "decision": step.decision})
            if step.decision != CONTINUE:
                break
    finally:
        if ex is not executor:
            ex.close()
    p_top, p_bot = (float(v) for v in pvalues(c[0], c[1], n[0], n[1], epsilon))
    p = p_top if len(design.looks) == 1 else step.p_value
    sizes = ", ".join(f"{m:,}" for m in design.looks)
    stop = ("rejected" if step.decision != ACCEPT else
            "stopped for futility" if step.futile else "budget used") + \
        f" at look {len(made)} of {len(design.looks)} ({n[0]:,} per input)"
    return Counterexample(
        mechanism=mech.name, d1=tuple(a.tolist()), d2=tuple(b.tolist()),
        args=dict(args or {}), event=event.describe(), event_spec=event.spec(),
        counts=(c[0], c[1]), n=(n[0], n[1]), p_value=float(p), test_epsilon=epsilon,
        epsilon_witnessed=epsilon if p < alpha else None, confidence=1 - alpha,
        seed=int(seed),
        details={"p_top": p_top, "p_bottom": p_bot, "looks": made, "stopped": stop,
                 "design": f"group-sequential, looks at {sizes} per input, alpha {alpha:g} "
                           f"spent as alpha t^{design.rho:g}"},
    )


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
         float_features: Any = "auto", seconds: float | None = None,
         sequential: bool = True) -> tuple[Counterexample, list, bool, bool]:
    """detect's hook: for a black box, the attack family's final test joined with StatDP's
    (:func:`combine`; on detect's ``inputs`` when given): ``(shown, candidates, True,
    False)``, where ``shown.p_value`` is the joint p-value (StatDP's, sequential or not, is
    valid at every level, so the Bonferroni minimum of the two doubled is too). Other
    mechanisms, a ``skip`` (Ctrl-C during StatDP's test) and an attack that found nothing
    pass through: ``(chosen, cands, False, False)``. An attack cut short by Ctrl-C ends
    ``(chosen, cands, True, True)`` with StatDP's p-value doubled: the family was meant to
    be tested, so the correction stays, and the run is marked interrupted.
    ``sequential=False`` (detect's fixed sizes) gives the attack's test one look."""
    if skip or not applies(mech):
        return chosen, cands, False, False
    pairs = [tuple(p) for p in inputs] if inputs is not None else None
    extra, cut = attack_test(mech, epsilon, n_select=n_select, n_final=n_final, alpha=alpha,
                             args=args, seed=seed, executor=executor, progress=progress,
                             pairs=pairs, float_features=float_features, seconds=seconds,
                             sequential=sequential)
    if cut:
        shown = _doubled(chosen, alpha, "StatDP events (the classifier attack was "
                                        "interrupted; Bonferroni over 2 kept)")
        return shown, [shown, *cands[1:]], True, True
    if extra is None:
        return chosen, cands, False, False
    shown, _, pair = combine(chosen, extra, alpha)
    return shown, pair + list(cands[1:]), True, False
