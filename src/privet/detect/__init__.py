"""``privet.detect``: statistical counterexample detection (StatDP, Ding et al., CCS 2018).

Public API (``from privet.detect import ...``; ``privet.detect`` is the function
:func:`detect` itself):

* :func:`detect` -- Algorithm 1: is the mechanism epsilon-DP at a test epsilon? Returns a
  :class:`~privet.core.results.DetectResult` with a readable counterexample or "no
  violation found", optionally with the p-value curve over test epsilons.
* :func:`pvalue_curve` -- Figures 1-4: p-values over test epsilons and their summary (the
  largest test epsilon rejected at level alpha, a statistical lower bound on epsilon).
* :func:`select_event` -- Algorithm 3 alone on given samples; :func:`test_event` --
  Algorithm 2 alone (the final hypothesis test of one event on fresh samples).

Inputs and samples are shared across test epsilons: each input is sampled once for event
selection and once (fresh, own seed stream) for the final tests.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..attacks.events import FLOAT_NOTE, reads_float_bits
from ..attacks.features import check_bit_features
from ..core import events as _events
from ..core.errors import ParameterError, advice, check_epsilon, check_seconds
from ..core.mechanism import as_mechanism
from ..core.randomness import check_noise_only
from ..core.results import (
    Counterexample,
    DetectResult,
    PValueCurve,
    interrupted,
    mark_interrupted,
)
from ..core.seeds import SeedLike, as_seed
from ..core.text import fmt_num, fmt_p
from ..stats.hypothesis import pvalues as _pvalues
from ..stats.sequential import REJECT, first_rejections
from . import attack as _attack
from .approx import N_MAX, detect_approx, null_for
from .engine import Session, open_session, run_curve, test_point, verdict_text
from .space import NoEventError
from .trace import Trace

MAX_CANDIDATES = 3


def _test_epsilon(mech, epsilon) -> float:
    eps = epsilon if epsilon is not None else mech.epsilon
    if eps is None:
        raise ParameterError(
            f"mechanism {mech.name!r} claims no ε: give the test ε, "
            + advice("epsilon=...", "--epsilon E") + "."
        )
    return check_epsilon(eps, "the test epsilon")


def _check_curve_eps(test_epsilons: Sequence[float]) -> list[float]:
    eps = [check_epsilon(e, "every test epsilon") for e in test_epsilons]
    if not eps:
        raise ParameterError("test_epsilons is empty.")
    return eps


def _curve(session: Session, eps: list[float], claimed, seconds: float,
           per_point: list[float]) -> PValueCurve:
    e, chosen, secs, outcomes = run_curve(session, eps)
    ps = tuple(float(c.p_value) for c in chosen)
    lb, verdict = _curve_summary(e, ps, session.alpha, claimed)
    per_point.extend(secs)
    curve = PValueCurve(
        mechanism=session.mech.name, claimed_epsilon=claimed, test_epsilons=tuple(e),
        p_values=ps, alpha=session.alpha, lower_bound=lb, counterexamples=tuple(chosen),
        verdict=verdict, seed=session.seed, seconds=seconds + sum(secs),
        claim=session.mech.describe_claim(),
        details={"seconds_per_point": secs, "arg_path": session.arg_path,
                 "schema": session.plan.schema.describe(), "pairs": len(session.pairs),
                 "inputs": len(session.sources), "candidates": session.n_candidates,
                 "samples": session.samples, "design": _design_text(session),
                 "looks": [o.look + 1 for o in outcomes],
                 "interrupted": any(o.interrupted for o in outcomes) or len(e) < len(eps),
                 "lower_bound_rule": "fixed-sequence: the test epsilons in increasing order, "
                                     "up to the first one not rejected"},
    )
    # Ctrl-C kept the points done
    return mark_interrupted(curve) if len(e) < len(eps) else curve


def _curve_summary(eps: Sequence[float], ps: Sequence[float], alpha: float,
                   claimed) -> tuple[float | None, str]:
    """The lower bound and verdict of a p-value curve, family-wise error at most alpha.

    The nulls are nested (eps-DP implies eps'-DP for eps' > eps), so the test epsilons are
    tested in increasing order, each at level alpha, stopping at the first that is not
    rejected (fixed-sequence testing, :func:`privet.stats.sequential.first_rejections`):
    the lower bound is the last rejected one. A rejection above a non-rejected point is
    not a claim (it is shown, not counted).
    """
    order = sorted(range(len(eps)), key=lambda i: eps[i])
    k = first_rejections([ps[i] for i in order], alpha)
    lb = float(eps[order[k - 1]]) if k else None
    if claimed is not None and lb is not None and lb >= claimed:
        verdict = f"violation found: ε > {fmt_num(lb)}, the claimed ε is {fmt_num(claimed)}"
    elif lb is not None:
        verdict = f"no violation found at the claimed ε; ε > {fmt_num(lb)}"
    else:
        verdict = "no violation found"
    return lb, verdict


def _design_text(session: Session) -> str:
    d = session.design
    if len(d.looks) == 1:
        return f"fixed size: {d.budget:,} fresh samples per input"
    return (f"group-sequential: looks at {d.looks[0]:,} to {d.budget:,} fresh samples per "
            f"input (x{d.looks[1] / d.looks[0]:g}), alpha spent as alpha t^{d.rho:g}, "
            "union bound over looks")


def detect(mechanism: Any, epsilon: float | None = None, *,
           test_epsilons: Sequence[float] | None = None, inputs=None,
           args: Mapping[str, Any] | None = None, n_select: int = 100_000,
           n_final: int = 500_000, alpha: float = 0.05, seed: SeedLike = None,
           progress: bool = False, executor: Any = None,
           max_candidates: int = MAX_CANDIDATES, sequential: bool = True,
           delta: float | None = None, n_max: int = N_MAX,
           float_features: Any = "auto", seconds: float | None = None) -> DetectResult:
    """Test whether ``mechanism`` is ``epsilon``-DP (Algorithm 1 of StatDP).

    ``epsilon`` is the test epsilon (default: the claimed one); the mechanism always runs
    with its own claimed epsilon. ``inputs``: (d1, d2) pairs (checked against the neighbor
    relation), default the Table 1 patterns, both orientations, at lengths 5 and 10 (the
    domain's length when it fixes one). ``args``: fixed non-private arguments, or None to
    generate them (Sec. 4.4.2; ``result.arg_path`` says how).

    ``sequential=True`` (default): the final test runs in looks of 2,000, 4,000, ... fresh
    samples per input up to ``n_final``, re-selecting the event before each look on
    selection samples that grow with it (the pilot first; the leading pairs' grow with the
    looks, the others' a quarter as fast, all reach ``n_select`` at the last look), and
    stops as soon as a look is decisive: a rejection at the level an alpha-spending
    function gives that look, or a clear pass (futility). The type-I error
    stays at most ``alpha`` under this optional stopping (union bound over looks, see
    :mod:`privet.stats.sequential`); ``p_value`` is then the sequential p-value.
    ``sequential=False``: StatDP's fixed sizes, ``n_select`` samples per input for
    selection (Algorithm 3) and ``n_final`` fresh ones for the final test.

    ``test_epsilons`` adds the p-value curve (sharing all samples); its lower bound is the
    last of the test epsilons rejected in increasing order (fixed-sequence testing), and
    when the curve is asked for, a violation at ``epsilon`` is claimed only if every test
    epsilon below it is rejected too, so the family-wise error of all these claims
    together stays at most ``alpha``. ``max_candidates`` pairs get a final test of their
    best event (``result.candidates``). ``seed`` replays the run exactly, on any
    ``executor``: where the sample-and-reduce chunks run -- ``'inprocess'``,
    ``'processes'``, ``'dask'`` (a local cluster), ``'dask://HOST:PORT'`` (a running
    scheduler), a ``distributed.Client`` (left open), or None (in-process; a process pool
    for picklable black boxes); see :func:`privet.execution.get_executor`.

    Approximate DP: ``delta`` is the test δ. An (ε, δ) claim is tested at its (ε, δ), a
    zCDP claim along its whole profile (or at ``epsilon`` with δ(ε), or at ``delta`` with
    ε(δ)); that test is :mod:`privet.detect.approx` (tail events, fresh samples sized by
    the claim up to ``n_max`` runs per input, a valid p-value for
    H0: P[M(D1) ∈ E] ≤ e^ε P[M(D2) ∈ E] + δ). ``test_epsilons`` is for pure tests only.

    ``float_features``: the float-exact feature maps of the classifier attacks on black boxes
    (:class:`privet.attacks.features.BitView`: the outputs' granularity, ulp-grid position,
    low mantissa bits, residue against the inputs' lattice). ``"auto"`` (default) uses them
    when the outputs are fractional doubles; ``"all"``, ``"off"``, or feature names.
    ``seconds``: a time budget for the classifier attack's witness search on black boxes
    (its stages sized from their measured pace, as in :func:`privet.search`); StatDP's test
    keeps ``n_select`` and ``n_final``. The attack's final test on a vectorized mechanism
    is group-sequential: looks at ``n_final``, twice, four and sixteen times it per input,
    stopping at the first decisive one (:func:`privet.detect.attack.sequential_test`: a
    clear violation stops at the first, a weak one gets the samples that decide it); on a
    per-sample black box, and with ``sequential=False``, it is the fixed test of
    ``n_final``.
    """
    t0 = time.perf_counter()
    float_features = check_bit_features(float_features)
    seconds = check_seconds(seconds, none="the attack's fixed sizes")
    mech = as_mechanism(mechanism)
    unseeded = check_noise_only(mech, None, args)
    null = null_for(mech, epsilon, delta)
    if null is not None:
        if test_epsilons is not None:
            raise ParameterError("test_epsilons (the p-value curve) is for pure ε tests; "
                                 "an (ε, δ) test takes epsilon= and delta=.")
        found = detect_approx(mech, null, inputs=inputs, args=args, n_select=n_select,
                              n_final=n_final, n_max=n_max, alpha=alpha, seed=seed,
                              progress=progress, executor=executor)
        return replace(found, details={**found.details, "notes": [
            *found.details.get("notes", []), *unseeded]}) if unseeded else found
    eps = _test_epsilon(mech, epsilon)
    curve_eps = _check_curve_eps(test_epsilons) if test_epsilons is not None else None
    session = open_session(mech, inputs=inputs, args=args, n_select=n_select, n_final=n_final,
                           alpha=alpha, seed=seed, progress=progress, executor=executor,
                           sequential=sequential)
    try:
        setup = time.perf_counter() - t0
        chosen, cands, outcome = test_point(session, eps, max_candidates)
        # black boxes: the classifier-attack family's own witness and final test, joined
        # with the (sequential) StatDP test by Bonferroni; then chosen.p_value is the joint
        # p-value and decides
        chosen, cands, joined, cut = _attack.hook(
            mech, chosen, cands, eps, n_select=session.n_select, n_final=session.n_final,
            alpha=session.alpha, args=args, seed=session.seed, executor=session.executor,
            progress=progress, inputs=inputs, skip=outcome.interrupted,
            float_features=float_features, seconds=seconds, sequential=sequential)
        curve = None
        per_point: list[float] = []
        if curve_eps is not None and not outcome.interrupted and not cut:
            curve = _curve(session, curve_eps, mech.epsilon, setup, per_point)
    finally:
        session.executor.shutdown()
    p = float(chosen.p_value)
    decided = p <= session.alpha if joined else outcome.step.decision == REJECT
    rejected = decided
    notes = [*unseeded, *session.notes]
    if rejected and curve is not None:
        # fixed-sequence over the curve and this point: every smaller test eps must fall too
        below = [(x, q) for x, q in zip(curve.test_epsilons, curve.p_values) if x < eps]
        lb, _ = _curve_summary([x for x, _ in below] + [eps], [q for _, q in below] + [p],
                               session.alpha, None)
        if lb is None or lb < eps:
            rejected = False
            notes.append("p <= alpha at this test epsilon, but a smaller test epsilon of the "
                         "curve was not rejected: not a violation under fixed-sequence "
                         "testing")
    if outcome.interrupted:
        notes.append("interrupted (Ctrl-C) before the sequential test was decisive")
    if cut:
        notes.append("interrupted (Ctrl-C) during the classifier attack: its family was not "
                     "tested, and StatDP's p-value keeps the correction for both")
    stopped = outcome.interrupted or cut
    # the classifier attack's own final test (black boxes) counts among the samples drawn
    # (its selection samples are the witness search's, not counted here)
    attack = next((c for c in cands if c.details.get("family") == "classifier attack"
                   and c.n is not None), None) if joined else None
    attack_samples = int(sum(attack.n)) if attack is not None else 0
    attack_note = "" if attack is None else (
        "; the classifier attack's final test: "
        + attack.details.get("stopped", f"{attack.n[0]:,} per input")
        + (", which gives the p-value" if chosen.details.get("family") == "classifier attack"
           else ""))
    verdict = verdict_text(p, session.alpha, rejected)
    if stopped and not rejected:
        verdict = f"inconclusive: interrupted ({fmt_p(p)} so far)"
    if rejected != decided:
        verdict = f"inconclusive: {fmt_p(p)}, but a smaller test ε was not rejected"
    elif rejected and chosen is not None and reads_float_bits(chosen.event_spec):
        verdict += f"; {FLOAT_NOTE}"
    result = DetectResult(
        mechanism=mech.name, claimed_epsilon=mech.epsilon, test_epsilon=eps,
        claim=mech.describe_claim(), test_delta=0.0 if delta is not None else None,
        verdict=verdict, p_value=p,
        counterexample=chosen if rejected else None, candidates=tuple(cands),
        curve=curve, arg_path=session.arg_path, seed=session.seed,
        seconds=time.perf_counter() - t0, alpha=session.alpha,
        details={"setup_seconds": setup, "n_select": session.n_select,
                 "n_final": session.n_final, "pairs": len(session.pairs),
                 "inputs": len(session.sources), "schema": session.plan.schema.describe(),
                 "candidate_events": session.n_candidates, "notes": notes,
                 "selected": chosen, "samples": session.samples + attack_samples,
                 "design": _design_text(session), "looks": outcome.look + 1,
                 "stopped": "interrupted during the classifier attack" if cut
                 else ("StatDP's test " if attack is not None else "") + _stopped(outcome)
                 + (" at its own level, not after the correction for both families"
                    if joined and not decided and outcome.step.decision == REJECT else "")
                 + attack_note, "interrupted": stopped},
    )
    return mark_interrupted(result) if interrupted(curve) or cut else result


def _stopped(outcome) -> str:
    step, n = outcome.step, outcome.look + 1
    if outcome.interrupted:
        return f"interrupted after look {n}"
    if step.decision == REJECT:
        return f"rejected at look {n}"
    looks = f"{n} look" + ("" if n == 1 else "s")
    return f"stopped for futility at look {n}" if step.futile else \
        f"budget used in {looks}"


def pvalue_curve(mechanism: Any, test_epsilons: Sequence[float], *, inputs=None,
                 args: Mapping[str, Any] | None = None, n_select: int = 100_000,
                 n_final: int = 500_000, alpha: float = 0.05, seed: SeedLike = None,
                 progress: bool = False, executor: Any = None,
                 sequential: bool = True) -> PValueCurve:
    """p-values of the selected counterexample at each test epsilon (StatDP Figs. 1-4).

    ``lower_bound`` is a statistical lower bound on the mechanism's true epsilon with
    family-wise error at most ``alpha``: the test epsilons are tested in increasing order
    and the bound is the last one rejected before the first that is not (the nulls are
    nested, so no correction is needed). Samples are drawn once and shared by all points
    (each point's final test uses samples that did not select its event); ``sequential``
    as in :func:`detect`. ``executor`` as in :func:`detect` (the curve does not depend on
    it).
    """
    t0 = time.perf_counter()
    mech = as_mechanism(mechanism)
    eps = _check_curve_eps(test_epsilons)
    session = open_session(mech, inputs=inputs, args=args, n_select=n_select, n_final=n_final,
                           alpha=alpha, seed=seed, progress=progress, executor=executor,
                           sequential=sequential)
    try:
        return _curve(session, eps, mech.epsilon, time.perf_counter() - t0, [])
    finally:
        session.executor.shutdown()


def select_event(mechanism: Any, d1: Any, d2: Any, epsilon: float | None = None, *,
                 args: Mapping[str, Any] | None = None, n_select: int = 100_000,
                 seed: SeedLike = None, executor: Any = None) -> tuple[_events.Event, float]:
    """EventSelector (Algorithm 3) for one input pair: ``(event, selection p-value)``.

    The p-value is computed on the selection samples themselves, so it is exploratory only;
    test the event on fresh samples with :func:`test_event`.
    """
    mech = as_mechanism(mechanism)
    eps = _test_epsilon(mech, epsilon)
    session = open_session(mech, inputs=[(d1, d2)], args=args, n_select=n_select, n_final=10,
                           seed=seed, executor=executor)
    try:
        sel = session.select(eps)[0]
    finally:
        session.executor.shutdown()
    event = session.plans[session.pairs[sel.pair].group].event(sel.cand)
    return event, sel.p_value


def event_counts(mech, inputs: Sequence, n: int, hits: _events.Hits, *,
                 args: Mapping[str, Any] | None, seed: int, executor: Any,
                 key: tuple = ()) -> list[tuple[int, int]]:
    """``(count, n)`` of ``hits`` (picklable: it runs on process or Dask workers) on ``n``
    fresh outputs of each of ``inputs``, input ``i`` drawn from the stream of spawn key
    ``(3, i, *key)`` of ``seed``. Ctrl-C raises KeyboardInterrupt: a cut sample is no
    test, and the caller reports the interruption."""
    from ..execution import map_reduce

    entropy = np.random.SeedSequence(seed).entropy
    out = []
    for i, x in enumerate(inputs):
        red = map_reduce(mech, x, int(n), hits, args=args, executor=executor,
                         seed=np.random.SeedSequence(entropy, spawn_key=(3, i, *key)))
        if red.interrupted:
            raise KeyboardInterrupt
        out.append((int(red.value or 0), int(red.n)))
    return out


def test_event(mechanism: Any, d1: Any, d2: Any, event: _events.Event,
               epsilon: float | None = None, *, args: Mapping[str, Any] | None = None,
               n: int = 500_000, seed: SeedLike = None, alpha: float = 0.05,
               executor: Any = "inprocess", alternative: str = "two-sided") -> Counterexample:
    """HypothesisTest (Algorithm 2) of one event on ``n`` fresh samples of each input.

    ``alternative`` is the violation tested: ``"greater"`` that P[M(d1) ∈ E] exceeds
    e^ε P[M(d2) ∈ E], ``"less"`` the reverse, and ``"two-sided"`` (the default) either,
    its p-value twice the smaller one-sided p-value (at most 1: a Bonferroni correction
    over the two directions, so a result at level α is one). The paper plots the smaller
    one-sided p-value uncorrected, which holds the level only when the direction was fixed
    in advance: pass that direction then (a witness of :func:`detect` favours its D1, so it
    is replayed with ``"greater"``). Returns a :class:`Counterexample` of the inputs as
    given, with the counts and both directions' p-values in ``details`` (``p_top``: D1
    favoured; ``p_bottom``: D2). ``executor`` runs the sample-and-reduce chunks (see
    :func:`privet.execution.get_executor`; the counts do not depend on it). Ctrl-C during
    the sampling raises KeyboardInterrupt: the counts drawn so far are no test at the
    level asked for.
    """
    if alternative not in ALTERNATIVES:
        raise ParameterError(f"alternative={alternative!r} is not a test direction: use one "
                             f"of {', '.join(map(repr, ALTERNATIVES))}.")
    mech = as_mechanism(mechanism)
    eps = _test_epsilon(mech, epsilon)
    a, b = mech.domain.check(d1), mech.domain.check(d2)
    mech.neighbors.check(a, b)
    from ..execution import get_executor

    seed = as_seed(seed)
    ex = get_executor(executor)
    try:
        counts = event_counts(mech, (a, b), n, _events.Hits(event), args=args, seed=seed,
                              executor=ex)
    finally:
        if ex is not executor:
            ex.close()
    (c1, n1), (c2, n2) = counts
    p_top, p_bot = (float(v) for v in _pvalues(c1, c2, n1, n2, eps))
    p = {"greater": p_top, "less": p_bot,
         "two-sided": min(1.0, 2.0 * min(p_top, p_bot))}[alternative]
    return Counterexample(
        mechanism=mech.name, d1=tuple(a.tolist()), d2=tuple(b.tolist()),
        args=dict(args or {}), event=event.describe(), event_spec=event.spec(),
        counts=(c1, c2), n=(n1, n2), p_value=p, test_epsilon=eps,
        epsilon_witnessed=eps if p < alpha else None, confidence=1 - alpha,
        seed=seed,
        details={"p_top": p_top, "p_bottom": p_bot, "alternative": alternative},
    )


ALTERNATIVES = ("two-sided", "greater", "less")


test_event.__test__ = False  # a library function, not a pytest test


__all__ = ["NoEventError", "Trace", "detect", "pvalue_curve", "select_event", "test_event"]
