"""``privet.search``: certified lower bounds on epsilon by correlated sampling and
optimization (DP-Finder, Bichsel et al., CCS 2018).

``search(mech)`` runs N iterations. Each draws a random triple (x, x', Phi) -- a singleton
Phi for discrete outputs, a box for continuous ones -- estimates eps(x, x', Phi) with
correlated sampling (Eqs. (5)-(6), :mod:`privet.search.estimate`) using an adaptive sample
size (Sec. 6.1: 2,000 samples, doubled until the M-CLT interval of Sec. 4.5 -- an
approximate interval, used for sample sizing only -- is narrower than 4e-3), then
maximizes the smooth surrogate eps^d (Sec. 5, :mod:`privet.search.relaxed`) with SLSQP
under the neighbor relation and p^(x) >= 1e-2 (:mod:`privet.search.optimize`), then walks
the pair toward the event's tail (where ratios such as noisyMax's approach e^eps).
Mechanisms that do not use ``privet.ops`` get a derivative-free search over the correlated
estimate. The best triple is then confirmed: exactly by enumeration when the noise is finite
and discrete, otherwise by a fresh large sample and Clopper-Pearson bounds joined by a union
bound, so the result reads "eps >= L with confidence 1 - alpha". Black boxes (no Replay) are
searched with independent samples over StatDP-style events and certified the same way.

Use ``from privet.search import correlated_estimate, adaptive_estimate, Relaxed`` for the
pieces; ``privet.search`` itself is the function :func:`search`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..attacks.features import check_bit_features
from ..attacks.sampling import either_text
from ..core.errors import (
    GridTooLargeError,
    InputError,
    NotEnumerableError,
    ParameterError,
    advice,
    check_epsilon,
    check_seconds,
)
from ..core.events import Event, Hits, Singleton
from ..core.mechanism import Mechanism, as_mechanism
from ..core.noise import Sampler
from ..core.randomness import check_noise_only
from ..core.results import Bound, CertifiedProfile, Counterexample
from ..core.seeds import SeedLike, as_seed, seed_sequence
from ..core.text import fmt_apart, fmt_num, pct
from ..execution import (
    Borrowed,
    InProcess,
    chunk_for,
    get_executor,
    map_reduce,
    timed_probe,
    whole_rounds,
)
from ..stats.counts import two_sample_counts
from ..stats.intervals import (
    METHODS,
    Moments,
    certified_lower_bound,
    either_lower_bound,
    paired_lower_bound,
    pvalue_of_bound,
)
from ..stats.sequential import CONTINUE, Design, clearly_below, decide, schedule
from .blackbox import SECONDS, attack_family, paired_projection, wants_attack
from .estimate import (
    N_CAP,
    N_START,
    TARGET_DIAMETER,
    Estimate,
    adaptive_estimate,
    correlated_estimate,
    hard_checks,
    record,
)
from .optimize import compass_search, local_search, slsqp, tail_walk
from .relaxed import DEFAULT_C, Relaxed, SoftOps, soft_contains, uses_ops
from .space import (
    PointBox,
    Space,
    default_length,
    is_discrete,
    random_event,
    random_input,
    random_neighbor,
)

__all__ = [
    "DEFAULT_C", "Estimate", "PointBox", "Relaxed", "SoftOps", "adaptive_estimate", "confirm",
    "correlated_estimate", "random_search", "search", "soft_contains",
]

P_MIN = 1e-2
N_CONFIRM = None  # auto: about 100,000 expected events under x, between 1e6 and 4e6 samples
CONFIRM_EVENTS = 100_000
CONFIRM_RANGE = (1_000_000, 4_000_000)
CONFIRM_CHUNK = 250_000
CONFIRM_FIRST_LOOK = 10_000  # the first look of a sequential (black-box) confirmation
ENUM_CAP = 1 << 20
N_OPT = 1 << 14


# --------------------------------------------------------------------------------------------
# confirmation (Sec. 3 "Final step" of DP-Finder)
# --------------------------------------------------------------------------------------------

def _exact_probabilities(mech: Mechanism, x, x2, event: Event, args) -> tuple | None:
    if not mech.supports("enumerate"):
        return None
    try:
        d1 = mech.distribution(x, args, cap=ENUM_CAP)
        d2 = mech.distribution(x2, args, cap=ENUM_CAP)
    except (NotEnumerableError, GridTooLargeError):
        return None
    # a randomized boundary counts its exact share of each output, on both sides alike
    p1 = float(np.sum(np.asarray(d1.probs, dtype=float) * event.weights(d1.outputs)))
    p2 = float(np.sum(np.asarray(d2.probs, dtype=float) * event.weights(d2.outputs)))
    return p1, p2


def confirm(mech: Mechanism, x, x2, event: Event, *, args: Mapping[str, Any] | None = None,
            n: int = 1_000_000, confidence: float = 0.9,
            seed: SeedLike = None, certify: str = "paired",
            executor: Any = None, sequential: bool | None = None,
            plan: tuple[str, float] | None = None) -> dict:
    """The violation of one triple, confirmed.

    Exact when the noise can be enumerated (finite discrete noise): ``eps = log(p/p')``,
    infinite only when ``p' = 0`` exactly. Otherwise a *fresh* sample of ``n``: with Replay,
    paired samples and :func:`~privet.stats.intervals.paired_lower_bound` (Clopper-Pearson on
    the discordant pairs and on p', union bound over the three); for black boxes,
    independent samples and :func:`~privet.stats.intervals.certified_lower_bound`
    (Clopper-Pearson on both probabilities, union bound) -- also used for every mechanism
    with ``certify='marginal'``. ``plan``: ``('either', share)`` certifies the paired
    samples with :func:`~privet.stats.intervals.either_lower_bound` instead (Clopper-Pearson
    on the pairs with the event on either side, ``share`` of alpha on x'), chosen before the
    sample is drawn. Returns a dict with ``value``,
    ``exact``, ``method``, ``probabilities`` or ``counts``, ``unbounded`` (True when the
    event never occurred under x' in the fresh sample, so the bound grows with n) and
    ``p_value``: the p-value of H0: eps <= claimed from the fresh sample
    (:func:`~privet.stats.intervals.pvalue_of_bound`; None when exact or nothing is claimed).

    ``sequential`` (default: on for independent samples when the mechanism claims an eps):
    the independent samples come in looks of 10,000, 20,000, ... up to ``n`` per input and
    stop as soon as the bound certifies a violation of the claim or the event is clearly
    within it (:mod:`privet.stats.sequential`); each look's bound is held to the level an
    alpha-spending function gives it (alpha = 1 - confidence in all, a union bound over
    looks), and ``value`` is the largest of them.

    The fresh sample is sample-and-reduce over chunks (each chunk is reduced to its counts
    where it runs), so ``executor`` (see :func:`privet.execution.get_executor`: a spec such
    as ``'dask://HOST:PORT'``, a ``distributed.Client`` or an executor object) can run the
    chunks elsewhere; chunk seeds and the in-order sum do not depend on it. None keeps the
    defaults: paired chunks in this process, independent samples as
    :meth:`Mechanism.sample` draws them.
    """
    xa = mech.domain.check(x)
    xb = mech.domain.check(x2)
    exact = _exact_probabilities(mech, xa, xb, event, args)
    if exact is not None:
        p1, p2 = exact
        if p2 == 0:
            value = math.inf if p1 > 0 else 0.0
        else:
            value = math.log(p1 / p2) if p1 > 0 else -math.inf
            if mech.epsilon is not None and abs(value - mech.epsilon) <= 1e-9:
                value = float(mech.epsilon)  # float round-off, not a violation
        return {"value": value, "exact": True, "method": "exact enumeration",
                "probabilities": (p1, p2), "unbounded": False, "n": None, "p_value": None}
    ss = seed_sequence(seed)
    if certify not in ("paired", "marginal"):
        raise ParameterError(f"certify must be 'paired' or 'marginal', got {certify!r}.")
    if certify == "paired" and mech.supports("replay"):
        n11 = n10 = n01 = 0
        done = 0
        sizes = _chunks(n, confirm_chunk(mech, xa, args, n))
        seeds = [ss.spawn(1)[0] if i else ss for i in range(len(sizes))]  # chunk order
        jobs = [(mech, xa, xb, event, args, s, size) for s, size in zip(seeds, sizes)]
        ex = InProcess() if executor is None else get_executor(executor)
        results = None
        try:
            results = ex.map(_paired_chunk, jobs)
            for size, (a11, a10, a01) in zip(sizes, results):
                n11, n10, n01, done = n11 + a11, n10 + a10, n01 + a01, done + size
        finally:
            if results is not None and hasattr(results, "close"):
                results.close()
            if ex is not executor:
                ex.close()
        k1, k2 = n11 + n10, n11 + n01
        if plan is not None and plan[0] == "either":
            share = float(plan[1])

            def bound(a: float) -> float:
                return either_lower_bound(n11, n10, n01, share=share, alpha=a)

            method = either_text("paired samples", share)
        else:
            def bound(a: float) -> float:
                return paired_lower_bound(n11, n10, n01, done, alpha=a)

            method = "Clopper-Pearson on paired samples (union bound over 3)"
        value = bound(1.0 - float(confidence))
        p_value = None if mech.epsilon is None else pvalue_of_bound(bound, mech.epsilon)
    else:
        seq = mech.epsilon is not None if sequential is None else bool(sequential)
        k1, k2, done, value, p_value, method = _confirm_independent(
            mech, xa, xb, event, args, int(n), confidence, ss, executor,
            seq and mech.epsilon is not None)
    return {"value": value, "exact": False, "method": method, "counts": (k1, k2),
            "n": done, "unbounded": k2 == 0 and k1 > 0,
            "estimate": _log_ratio(k1, k2), "p_value": p_value}


def _confirm_independent(mech, xa, xb, event, args, n, confidence, ss, executor,
                         sequential) -> tuple:
    """Independent fresh samples of x and x' (black boxes): ``(k1, k2, n, value, p_value,
    method)``, in looks when ``sequential`` (see :func:`confirm`)."""
    s1, s2 = ss.spawn(2)
    hits = Hits(event)  # the chunks of Mechanism.sample, reduced
    alpha = 1.0 - float(confidence)
    design = Design(schedule(n, first=CONFIRM_FIRST_LOOK) if sequential else (n,), alpha)
    claimed = mech.epsilon
    k1 = k2 = 0
    value, previous, step = -math.inf, 1.0, None
    for look, size in enumerate(design.looks):
        start = design.looks[look - 1] if look else 0
        # look 0 keeps the seeds of the fixed-size confirmation; later looks get their own
        keys = [(int(s.generate_state(1)[0]) if look == 0 else
                 np.random.SeedSequence(s.entropy, spawn_key=(*s.spawn_key, look)))
                for s in (s1, s2)]
        r1 = map_reduce(mech, xa, size - start, hits, args, seed=keys[0],
                        executor=executor, chunk=None)
        r2 = map_reduce(mech, xb, size - start, hits, args, seed=keys[1],
                        executor=executor, chunk=None)
        if r1.interrupted or r2.interrupted:
            raise KeyboardInterrupt
        k1, k2 = k1 + int(r1.value or 0), k2 + int(r2.value or 0)
        value = max(value, certified_lower_bound(k1, size, k2, size, alpha=design.level(look)))
        if claimed is None:
            continue
        p_look = pvalue_of_bound(
            lambda a, k1=k1, k2=k2, m=size: certified_lower_bound(k1, m, k2, m, alpha=a),
            claimed)
        step = decide(p_look, design, look, previous,
                      lambda k1=k1, k2=k2, m=size: clearly_below(k1, k2, m, m, claimed))
        previous = step.bonferroni
        if step.decision != CONTINUE:
            done = size
            break
    else:
        done = design.budget
    method = "Clopper-Pearson on independent samples (union bound over 2)"
    if len(design.looks) > 1:
        method += f", sequential: {done:,} of at most {design.budget:,} per input"
    return k1, k2, done, value, None if step is None else step.p_value, method


def _paired_chunk(mech: Mechanism, xa: np.ndarray, xb: np.ndarray, event: Event, args,
                  seed: np.random.SeedSequence, size: int) -> tuple[int, int, int]:
    """One chunk of the paired confirmation: (n11, n10, n01) of Phi on M(x), M(x') under one
    recorded tape (runs wherever the executor puts it)."""
    rng = np.random.default_rng(seed)
    tape, out = record(mech, xa, size, rng, args)
    # a randomized boundary's coins: the chunk's generator past the recorded draws
    s1 = event.indicator(out, rng)
    s2 = hard_checks(mech, tape, size, xb, event, args, rng=rng)
    return (int(np.count_nonzero(s1 & s2)), int(np.count_nonzero(s1 & ~s2)),
            int(np.count_nonzero(~s1 & s2)))


def confirm_chunk(mech: Mechanism, x: np.ndarray, args, n: int | None = None) -> int:
    """Pairs per chunk of the paired confirmation: :data:`CONFIRM_CHUNK`, fewer for wide
    outputs (:func:`privet.execution.chunk_for`)."""
    return chunk_for(mech, CONFIRM_CHUNK, x, mech.resolve_args(args), n)


def _chunks(n: int, chunk: int) -> list[int]:
    sizes = [chunk] * (int(n) // chunk)
    if int(n) % chunk:
        sizes.append(int(n) % chunk)
    return sizes


def _log_ratio(k1: float, k2: float) -> float:
    if k2 == 0:
        return math.inf if k1 > 0 else math.nan
    return math.log(k1 / k2) if k1 > 0 else -math.inf


# --------------------------------------------------------------------------------------------
# one iteration of DP-Finder (Fig. 5)
# --------------------------------------------------------------------------------------------

def _swap(m: Moments) -> Moments:
    return Moments(m.p2, m.p1, m.var2, m.var1, m.cov, m.n)


def _random_triple(mech, rng, args, opts, informed: bool = False):
    if mech.neighbors.kind == "custom":
        # a custom relation's pairs are the ones it suggests, or the start's (the predicate
        # alone cannot make a neighbor of a random input; an unrelated x and x' are not
        # neighbors)
        pairs = opts["custom_pairs"]
        x, x2 = pairs[rng.integers(len(pairs))]
    else:
        x = random_input(mech, rng, opts["length"], opts["input_range"])
        x2 = random_neighbor(mech, x, rng)
    event = _contrast_event(mech, x, x2, rng, args) if informed and rng.random() < 0.5 else None
    if event is None:
        event = random_event(mech, x if rng.random() < 0.5 else x2, rng, args,
                             opts["box_width"])
    return x, x2, event


def _contrast_event(mech, x, x2, rng, args, probe: int = 2000) -> Event | None:
    """For discrete outputs, the singleton {y} whose observed frequencies under x and x'
    differ most in ratio (half of the search's iterations start from it; the rest, and
    random search, draw y at random as in Sec. 6.2). An output seen under one input only
    is a candidate infinity, e.g. for AT5 whenever x and x' order their entries
    differently; a uniform draw mostly lands on the all-0 / all-1 outputs there."""
    o1 = np.asarray(mech.run(Sampler(rng, probe), x, args, check_input=False), dtype=float)
    o2 = np.asarray(mech.run(Sampler(rng, probe), x2, args, check_input=False), dtype=float)
    r1 = o1.reshape(probe, -1)
    r2 = o2.reshape(probe, -1)
    if not (is_discrete(mech, r1) and is_discrete(mech, r2)):
        return None
    uniq, c1, c2 = two_sample_counts(r1, r2)
    c1, c2 = c1 + 0.5, c2 + 0.5
    score = np.abs(np.log(c1 / c2)) + rng.uniform(0, 1e-9, len(uniq))  # random tie-break
    y = uniq[int(np.argmax(score))]
    return Singleton(tuple(float(v) for v in y))


def _estimate_triple(mech, x, x2, event, rng, args, opts) -> tuple:
    """Adaptive correlated estimate, oriented so that eps^ >= 0 (Sec. 2: |eps|)."""
    cap = opts["n_cap"] or N_CAP
    est = adaptive_estimate(mech, x, x2, event, rng, args, opts["method"], opts["confidence"],
                            opts["target"], opts["n_start"], cap)
    m = est.moments
    if m.p2 == 0 and m.p1 > 0 and m.n < cap:
        # a candidate infinity: look again with the largest sample before believing it
        est = correlated_estimate(mech, x, x2, event, cap, rng, args, opts["method"],
                                  opts["confidence"])
        m = est.moments
    if m.p1 < m.p2:
        x, x2, m = x2, x, _swap(m)
    return x, x2, m, est


def _iteration(mech: Mechanism, rng: np.random.Generator, args, opts: dict,
               start: tuple | None = None, optimize: bool = True) -> dict:
    t0 = time.perf_counter()
    if start is not None:
        x, x2, event = start
    else:
        x, x2, event = _random_triple(mech, rng, args, opts, informed=optimize)
    x, x2, m, est = _estimate_triple(mech, x, x2, event, rng, args, opts)
    rec = {"x": x, "x2": x2, "event": event, "start_estimate": m.epsilon, "n": m.n,
           "estimate": m.epsilon, "p": (m.p1, m.p2), "optimizer": "none", "evaluations": 0,
           "surrogate": None}
    if m.p1 == 0 and m.p2 == 0:
        rec.update(status="skipped (0/0)", estimate=-math.inf)
    elif m.p2 == 0:
        rec.update(status="candidate infinity (p^(x') = 0)")
    elif not optimize:
        rec.update(status="random")
    else:
        rec.update(_optimize(mech, x, x2, event, est, rng, args, opts))
    rec["seconds"] = time.perf_counter() - t0
    return rec


def _optimize(mech, x, x2, event, est: Estimate, rng, args, opts) -> dict:
    swap = False
    if mech.neighbors.kind == "add_remove" and len(x) < len(x2):
        space, swap = Space.of(mech, x2, x, opts["bounds"]), True
        z0 = space.pack(x2, x)
    else:
        space = Space.of(mech, x, x2, opts["bounds"])
        z0 = space.pack(x, x2)
    tape, n = est.tape, est.n
    if n > opts["n_opt"]:  # optimize on a prefix of the tape: cheaper, still smooth
        tape, n = _prefix(tape, opts["n_opt"]), opts["n_opt"]
    gradient = opts["gradient"] and not mech.domain.integer and \
        mech.neighbors.kind != "custom"
    if gradient:
        z, surrogate, evals = slsqp(mech, space, z0, event, tape, n, args, p_min=opts["p_min"],
                                    c=opts["c"], maxiter=opts["maxiter"], swap=swap,
                                    step=opts["fd_step"],
                                    max_evals=opts["max_evals"])
        how = "SLSQP on eps^d (Relaxed)"
        if opts["polish"]:  # a short hard local search: the sigmoids cannot see below 1/c
            z, _, more = compass_search(mech, space, z, event, tape, n, args,
                                        p_min=opts["p_min"], budget=opts["polish"], swap=swap,
                                        accept=mech.neighbors.are_neighbors,
                                        step=max(space.delta / 4, 1.0 / opts["c"]))
            evals += more
            how += " + polish"
        if opts["tail"]:  # SLSQP stops early of the tail where the ratio nears e^eps
            walk_tape, _ = record(mech, space.unpack(z)[0], opts["n_walk"], rng, args)
            z2, _, more = tail_walk(mech, space, z, event, walk_tape, opts["n_walk"],
                                    _projector(opts), args, p_min=opts["p_min"], swap=swap,
                                    accept=mech.neighbors.are_neighbors)
            evals += more
            # the walk picks its point on one tape, so it can follow that tape's noise (on
            # expMech, whose ratio needs no tail, it did): keep it only if it also projects
            # the better certificate on a fresh tape
            if not np.array_equal(z2, z) and _fresh_score(
                    mech, space, z2, event, rng, args, opts, swap) > _fresh_score(
                    mech, space, z, event, rng, args, opts, swap):
                z = z2
                how += " + tail walk"
    else:
        z, surrogate, evals = local_search(
            mech, space, z0, event, tape, n, rng, args, p_min=opts["p_min"],
            budget=opts["budget"], accept=mech.neighbors.are_neighbors, swap=swap)
        how = "derivative-free local search on eps^"
    xo, x2o = space.unpack(z)
    if swap:
        xo, x2o = x2o, xo
    out = {"optimizer": how, "evaluations": evals, "surrogate": surrogate}
    valid = mech.neighbors.are_neighbors(xo, x2o)
    try:
        xo, x2o = mech.domain.check(xo), mech.domain.check(x2o)
    except InputError:
        valid = False
    if not valid:
        out["status"] = "optimizer left the relation: kept the random triple"
        return out
    p1 = float(np.mean(hard_checks(mech, tape, n, xo, event, args)))
    if p1 < opts["p_min"]:
        out["status"] = "optimum below p_min: kept the random triple"
        return out
    # a fresh tape, so the reported estimate is not fitted to the noise it was optimized on
    nf = max(n, opts["n_walk"]) if opts["tail"] else n
    fresh_tape, out1 = record(mech, xo, nf, rng, args)
    s1 = event.contains(out1)
    s2 = hard_checks(mech, fresh_tape, nf, x2o, event, args)
    k1, k2 = int(np.count_nonzero(s1)), int(np.count_nonzero(s2))
    fe = _log_ratio(k1, k2) if k1 or k2 else -math.inf
    n11 = int(np.count_nonzero(s1 & s2))
    out.update(status="optimized", x=xo, x2=x2o, estimate=fe, p=(k1 / nf, k2 / nf),
               score=_projector(opts)(n11, k1 - n11, k2 - n11, nf))
    return out


def _fresh_score(mech, space, z, event, rng, args, opts, swap) -> float:
    x, x2 = space.unpack(z)
    if swap:
        x, x2 = x2, x
    n = opts["n_walk"]
    tape, out1 = record(mech, x, n, rng, args)
    s1 = event.contains(out1)
    s2 = hard_checks(mech, tape, n, x2, event, args)
    if np.mean(s1) < opts["p_min"]:
        return -math.inf
    n11 = int(np.count_nonzero(s1 & s2))
    return _projector(opts)(n11, int(np.count_nonzero(s1)) - n11,
                            int(np.count_nonzero(s2)) - n11, n)


def _projector(opts: dict):
    """The certificate a confirmation of the default size would give if the fresh sample
    showed these paired frequencies: what the tail walk and the choice among iterations
    maximize (a selection heuristic only; the confirmation draws its own sample)."""
    n_confirm, confidence = opts["n_confirm"], opts["confidence"]

    def score(n11: int, n10: int, n01: int, n: int) -> float:
        if n10 + n11 == 0:
            return -math.inf
        size = _confirm_size(n_confirm, (n11 + n10) / n)
        r = size / n
        return paired_lower_bound(round(n11 * r), round(n10 * r), round(n01 * r), size,
                                  confidence)

    return score


def _prefix(tape, n: int):
    from ..core.noise import Tape

    return Tape([(d, shape, values[:n]) for d, shape, values in tape.entries], tape.fresh)


def _best(records: list[dict]) -> dict | None:
    usable = [r for r in records if not r["status"].startswith("skipped")
              and not math.isnan(r["estimate"])]
    if not usable:
        return None
    # ties (several candidate infinities) go to the larger p^(x): easier to certify; the
    # optimized finite triples compare by the certificate their fresh counts project
    def key(r):
        scored = r.get("score") is not None
        return (math.isinf(r["estimate"]), scored, r["score"] if scored else r["estimate"],
                r["p"][0])

    return max(usable, key=key)


WITNESS_SAMPLES = 20_000  # per input, for the report's picture of the witness
WITNESS_BINS = 40
WITNESS_PILOT = 256       # per input, drawn first: continuous outputs get no picture
WITNESS_SECONDS = 2.0     # a slow mechanism's picture is drawn from fewer samples


def witness_histograms(mech: Mechanism, x, x2, event: Event, args, seed: int | None,
                       n: int = WITNESS_SAMPLES) -> dict | None:
    """The output distributions of a witness pair, for reports: frequencies of every
    distinct output under x and x' with the outputs inside Phi flagged (the
    ``Counterexample.details["histograms"]`` format of :mod:`privet.detect.histograms`,
    kind ``discrete``). Drawn from ``n`` fresh samples per input (seeded from the run);
    None when the outputs take more than ``WITNESS_BINS`` distinct values (continuous
    outputs: the witness table and the epsilon chart describe them instead). A pilot of
    ``WITNESS_PILOT`` samples per input comes first: outputs of more distinct values get
    no picture, and a mechanism whose pilot projects the picture past
    ``WITNESS_SECONDS`` (a slow black box) is pictured from as many samples as that time
    allows (at least the pilot's)."""
    # a stream of its own (spawn key 7), apart from the search's iterations and confirmation
    ss = np.random.SeedSequence(seed, spawn_key=(7,)).spawn(3) if seed is not None \
        else [None, None, None]
    tick = time.perf_counter()
    pilot = [np.asarray(mech.sample(v, WITNESS_PILOT, args, seed=_int_seed(ss[2])))
             for v in (x, x2)]
    took = time.perf_counter() - tick
    if len(two_sample_counts(*pilot)[0]) > WITNESS_BINS:
        return None
    if took > 0:
        n = int(min(n, max(WITNESS_PILOT, WITNESS_SECONDS / took * WITNESS_PILOT)))
    o1 = np.asarray(mech.sample(x, n, args, seed=_int_seed(ss[0])))
    o2 = np.asarray(mech.sample(x2, n, args, seed=_int_seed(ss[1])))
    uniq, c1, c2 = two_sample_counts(o1, o2)
    if len(uniq) > WITNESS_BINS:
        return None
    order = np.argsort(-(c1 + c2), kind="stable")
    inside = np.asarray(event.contains(uniq.reshape((len(uniq),) + o1.shape[1:])), bool)

    def label(row: np.ndarray) -> str:
        vals = [int(v) if float(v).is_integer() else round(float(v), 4) for v in row]
        return str(vals[0]) if len(vals) == 1 else "[" + ", ".join(map(str, vals)) + "]"

    return {"kind": "discrete", "statistic": "ω", "source": "fresh samples of the witness",
            "n": [n, n], "d1": c1[order].tolist(), "d2": c2[order].tolist(),
            "labels": [label(uniq[i]) for i in order],
            "in_event": inside[order].tolist(), "event": event.describe(),
            "event_counts": [int(c1[inside].sum()), int(c2[inside].sum())]}


def _int_seed(ss: np.random.SeedSequence | None) -> int | None:
    return None if ss is None else int(ss.generate_state(1)[0])


def _witness(mech, rec: dict, conf: dict, args, confidence, seed,
             extra: dict | None = None) -> Counterexample:
    try:
        hist = witness_histograms(mech, rec["x"], rec["x2"], rec["event"], args, seed)
    except Exception:  # noqa: BLE001 - a picture for the report must never fail the search
        hist = None
    extra = {**(extra or {}), **({"histograms": hist} if hist is not None else {})}
    return Counterexample(
        mechanism=mech.name, d1=tuple(np.asarray(rec["x"], float).tolist()),
        d2=tuple(np.asarray(rec["x2"], float).tolist()),
        args={k: v for k, v in (args or {}).items()}, event=rec["event"].describe(),
        event_spec=rec["event"].spec(), counts=conf.get("counts"),
        n=(conf["n"], conf["n"]) if conf.get("n") else None,
        probabilities=conf.get("probabilities"), epsilon_witnessed=conf["value"],
        p_value=conf.get("p_value"), test_epsilon=mech.epsilon,
        confidence=1.0 if conf["exact"] else confidence, exact=conf["exact"], seed=seed,
        details={"search_estimate": rec["estimate"], "unbounded": conf["unbounded"],
                 "method": conf["method"], **extra},
    )


def _trace_row(rec: dict) -> dict:
    return {"status": rec["status"], "start_estimate": rec["start_estimate"],
            "estimate": rec["estimate"], "surrogate": rec["surrogate"], "n": rec["n"],
            "optimizer": rec["optimizer"], "evaluations": rec["evaluations"],
            "seconds": round(rec["seconds"], 4), "event": rec["event"].describe()}


# --------------------------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------------------------

def _check_start(mech: Mechanism, start) -> tuple:
    """``start`` as (x, x2, event or None): a pair of neighbors, with or without an event."""
    items = tuple(start) if isinstance(start, (tuple, list)) else ()
    if len(items) not in (2, 3):
        raise InputError("start must be a pair (x, x2) or a triple (x, x2, event).")
    x, x2, event = items[0], items[1], items[2] if len(items) == 3 else None
    xa, xb = mech.domain.check(x), mech.domain.check(x2)
    mech.neighbors.check(xa, xb)
    if event is not None and not isinstance(event, Event):
        raise InputError(f"the event of start must be a privet event, got {event!r}.")
    return xa.astype(float), xb.astype(float), event


def _options(mech, iterations, confidence, method, n_confirm, kw) -> dict:
    if int(iterations) < 1:
        raise ParameterError(f"iterations must be at least 1, got {iterations}.")
    if not 0 < float(confidence) < 1:
        raise ParameterError(f"confidence must lie in (0, 1), got {confidence}.")
    if n_confirm is not None and int(n_confirm) < 100:
        raise ParameterError(f"n_confirm must be at least 100, got {n_confirm}.")
    interval = kw.pop("interval", "mclt")
    if interval not in METHODS:
        raise ParameterError(f"unknown interval {interval!r}; use one of {', '.join(METHODS)}.")
    if method not in ("auto", "slsqp", "local"):
        raise ParameterError(f"unknown method {method!r}; use 'auto', 'slsqp' or 'local'.")
    timed = kw.get("seconds") is not None  # given: it also sizes a white box's fresh sample
    opts = {
        "confidence": float(confidence), "method": interval,
        "target": float(kw.pop("target", TARGET_DIAMETER)),
        "n_start": int(kw.pop("n_start", N_START)), "n_cap": _opt_int(kw.pop("n_cap", None)),
        "p_min": float(kw.pop("p_min", P_MIN)), "c": float(kw.pop("c", DEFAULT_C)),
        "fd_step": kw.pop("fd_step", None),
        "maxiter": int(kw.pop("maxiter", 20)), "max_evals": int(kw.pop("max_evals", 150)),
        "n_opt": int(kw.pop("n_opt", N_OPT)), "budget": int(kw.pop("budget", 60)),
        "box_width": float(kw.pop("box_width", 3.0)), "polish": int(kw.pop("polish", 40)),
        "length": default_length(mech, kw.pop("length", None)),
        "input_range": kw.pop("input_range", None), "bounds": kw.pop("bounds", None),
        "certify": kw.pop("certify", "paired"),
        "tail": bool(kw.pop("tail", True)), "n_walk": int(kw.pop("n_walk", 1 << 17)),
        "n_confirm": n_confirm,
        # black boxes (privet.attacks): selection sample, finalists, models
        "n_select": _opt_int(kw.pop("n_select", None)), "finalists": int(kw.pop("finalists", 8)),
        "models": tuple(kw.pop("models", ())), "attack": kw.pop("attack", "auto"),
        "float_features": check_bit_features(kw.pop("float_features", "auto")),
        "seconds": _seconds(kw.pop("seconds", SECONDS)),
        "couple": kw.pop("couple", "auto"),
    }
    if kw:
        raise InputError(f"search got unknown option(s) {', '.join(sorted(kw))}.")
    if opts["couple"] not in ("auto", True, False):
        raise ParameterError(f"couple must be 'auto', True or False, got {opts['couple']!r}.")
    if opts["certify"] not in ("paired", "marginal"):
        raise ParameterError(f"certify must be 'paired' or 'marginal', got {opts['certify']!r}.")
    opts["requested"] = method
    opts["timed"] = timed
    return opts


def _seconds(v: Any) -> float | None:
    return check_seconds(v, none="no limit", finite=False)


def _opt_int(v: Any) -> int | None:
    return None if v is None else int(v)


def _progress(enabled: bool, total: int, label: str):
    if not enabled:
        return contextlib.nullcontext(None)
    from rich.progress import Progress

    return Progress(transient=True)


def random_search(mechanism: Any, *, iterations: int = 10, confidence: float = 0.9,
                  n_confirm: int | None = N_CONFIRM, seed: SeedLike = None,
                  args: Mapping[str, Any] | None = None, **options: Any) -> Bound:
    """The baseline of Fig. 12: the same number of random triples, estimated the same way,
    no optimization; the best is confirmed like :func:`search`'s."""
    return search(mechanism, iterations=iterations, confidence=confidence,
                  n_confirm=n_confirm, seed=seed, args=args, method="random", **options)


def search(mechanism: Any, epsilon: float | None = None, *, iterations: int = 10,
           confidence: float = 0.9,
           method: str = "auto", start: tuple | None = None, n_confirm: int | None = N_CONFIRM,
           seed: SeedLike = None, progress: bool = False, baseline: bool = False,
           args: Mapping[str, Any] | None = None, executor: Any = None,
           delta: float | None = None, **options: Any) -> Bound | CertifiedProfile:
    """Search for the largest violation of differential privacy and certify it.

    Returns a :class:`~privet.core.results.Bound`: "eps >= ``value`` with confidence
    ``confidence``" (``exact=True`` and confidence 1 when confirmed by enumeration; ``value``
    is ``inf`` only when the event has probability exactly 0 under x'), its ``witness``
    (x, x', Phi, counts or probabilities) and ``details``: the per-iteration ``trace``, the
    search's own estimate, ``unbounded`` (the event never occurred under x' in the fresh
    sample: the certified bound grows with the sample size), and with ``baseline=True`` the
    random-search baseline of Fig. 12 (same number of iterations) as a nested Bound.

    ``epsilon`` is the test ε: the bound is compared with it for the verdict (default: the
    claimed ε; for an (ε, δ) claim, the ε at which δ is certified); the mechanism always
    runs with its own claimed ε (``mech.replace(epsilon=...)`` changes it). ``seed``: an
    int, a numpy
    Generator or SeedSequence, or None (fresh; the Bound records the int that replays it).

    ``n_confirm``: the fresh confirmation sample; None picks it from the search's estimate
    of p (about 100,000 expected events, 1e6 to 4e6 samples; 200,000 for black boxes).

    ``method``: ``'auto'`` (SLSQP on eps^d when the mechanism uses ``privet.ops`` and has
    real inputs, else derivative-free), ``'slsqp'``, ``'local'``. ``start=(x, x2, event)``
    seeds the first iteration (x and x2 must be neighbors); ``start=(x, x2)`` hands the
    pair to the classifier attack, which chooses its event and keeps the pair among its
    finalists (on a white box it then runs where ``attack='auto'`` would skip it; with
    ``attack=False`` such a start is refused). Options: ``interval`` ('mclt' | 'clt' |
    'hoeffding'), ``target`` (4e-3), ``n_start`` (2000), ``n_cap``
    (2**17), ``p_min`` (1e-2), ``c`` (50), ``maxiter`` (25), ``budget`` (60 evaluations of
    the derivative-free search), ``box_width`` (3), ``length`` (4), ``input_range``,
    ``bounds``, ``n_opt`` (2**14 samples of the tape used by the optimizer), ``fd_step``
    (finite-difference step, default Delta/2), ``max_evals``
    (150), ``polish`` (40 evaluations of the hard pattern search after SLSQP), ``certify``
    ('paired': Clopper-Pearson on the paired fresh sample, union bound over 3; 'marginal':
    independent fresh samples, union bound over both probabilities), ``tail`` (True: after
    SLSQP and the polish, walk x and x' together toward the event's tail, keeping the point
    whose paired counts on a ``n_walk``-sample tape (2**17) project the best certificate;
    the iterations are then ranked by that projection on a fresh tape of the same size),
    ``float_features`` (the float-exact feature maps of the classifier attacks: the outputs'
    granularity, ulp-grid position, low mantissa bits and residue against the inputs'
    lattice; ``'auto'``, the default, uses them for black boxes whose outputs are fractional
    doubles; ``'all'``, ``'off'`` or feature names), ``couple`` (black boxes: ``'auto'``,
    the default, runs both inputs with the same seeds -- common random numbers -- when the
    outputs follow the generator privet gives, checked on a probe; the screening, fits and
    race then end at :data:`~privet.search.blackbox.COUPLED_STAGES` of their shares of the
    time budget, a per-sample box is certified on its coupled pairs with the paired
    certificate and a vectorized one on independent runs; True or False force it),
    ``seconds`` (black boxes: the wall time
    the search and its certificate aim at, default 55; the screening's halving, the
    selection race and the fresh sample shrink to fit it, never below their least sizes --
    so a slow black box may take longer, and the fresh sample's size depends on the
    machine's speed; a plan that reaches the largest fresh sample, 2^27 pairs, takes the
    time left instead; None: no limit, the full sizes. White boxes: the attack family's
    stages aim at it; given explicitly, with ``n_confirm`` left at None, it is spent as a
    black box's: the attack family runs even on few distinct outputs, its stages aim at the
    time DP-Finder left (its iterations start within the first fifth of it, unless
    ``attack=False``) and its finalists are judged at the fresh sample that time affords,
    and the fresh paired sample takes the time left, timed on a throwaway probe, never
    below its planned size).
    Half of the search's iterations on discrete outputs start from the singleton whose
    frequencies under x and x' differ most (probes of 2,000 runs each); random search always
    draws Phi at random.

    ``executor`` (``'inprocess'``, ``'processes'``, ``'dask'``, ``'dask://HOST:PORT'``, a
    ``distributed.Client``; see :func:`privet.execution.get_executor`) runs the
    sample-and-reduce parts: the fresh confirmation sample (paired chunks, or independent
    ones) and, for black boxes, the per-pair samples and StatDP event selection. The
    iterations themselves stay in this process: correlated sampling replays one tape for
    x and x', and the optimizer's steps depend on each other. The result does not depend
    on the executor; None keeps the in-process defaults.

    Approximate DP: for an (ε, δ) or zCDP claim, or with ``delta`` given, the question is
    the privacy profile, and the answer a :class:`~privet.core.results.CertifiedProfile`
    from :func:`privet.search.approx.certify_profile`: δ(ε) ≥ L at ``epsilon`` (default
    the claim's), ε(δ) ≥ L at ``delta``, and the certified lower curve ε_L(δ) against the
    claim's, all from one fresh sample with confidence ``confidence`` (options
    ``n_select``, ``n_final``, ``n_max``, ``deltas``, ``inputs``).
    """
    mech0 = as_mechanism(mechanism)
    claim = mech0.claim
    if delta is not None or (claim is not None and claim.kind != "pure"):
        from .approx import certify_profile

        allowed = {k: options.pop(k) for k in ("n_select", "n_final", "n_max", "deltas",
                                                "inputs") if k in options}
        if "seconds" in options:
            raise InputError("search of an (ε, δ) or zCDP claim is sized by its samples, not "
                             "by a time budget; "
                             + advice("drop seconds= and give n_select=, n_final= or n_max=",
                                      "drop --seconds and give --n-max")
                             + " instead.")
        if options.pop("float_features", "auto") != "auto":
            # its event families are StatDP's, read off the outputs' values: no classifier
            # attack, so no float-exact views (the default 'auto' means nothing here)
            raise InputError("search of an (ε, δ) or zCDP claim tests events of the outputs' "
                             "values, not the classifier attacks' float-exact views; drop "
                             + advice("float_features=", "--float-features") + ".")
        if options:
            raise InputError(f"search of an (ε, δ) claim got unknown option(s) "
                             f"{', '.join(sorted(options))}; it takes n_select, n_final, "
                             "n_max, deltas and inputs.")
        return certify_profile(mech0, epsilon=epsilon, delta=delta, confidence=confidence,
                               args=args, seed=seed, progress=progress, executor=executor,
                               **allowed)
    if executor is not None and not isinstance(executor, Borrowed):
        ex = get_executor(executor)
        try:
            return search(mechanism, epsilon, iterations=iterations, confidence=confidence,
                          method=method, start=start, n_confirm=n_confirm, seed=seed,
                          progress=progress, baseline=baseline, args=args, executor=Borrowed(ex),
                          **options)
        finally:
            if ex is not executor:
                ex.close()
    t0 = time.perf_counter()
    mech = as_mechanism(mechanism)
    unseeded = check_noise_only(mech, None, args, options.get("length"))
    test_eps = check_epsilon(epsilon, "the test ε") if epsilon is not None else None
    compared = test_eps if test_eps is not None else mech.epsilon
    resolved = mech.resolve_args(args)
    random_only = method == "random"
    opts = _options(mech, iterations, confidence, "auto" if random_only else method,
                    n_confirm, dict(options))
    starting = _check_start(mech, start) if start is not None else None
    mech.neighbors.require_pairs(given=starting is not None)
    if mech.neighbors.kind == "custom":
        opts["custom_pairs"] = [
            tuple(mech.domain.check(v) for v in (p.d1, p.d2))
            for p in mech.neighbors.pairs(both_orders=True)] or [starting[:2]]
    if starting is not None and starting[2] is None and mech.supports("replay"):
        # a pair without an event: the classifier attack chooses the event (its witness
        # search keeps the pair among its finalists); DP-Finder's iterations start at random
        if random_only or opts.get("attack") is False:
            raise InputError("start=(x, x2) without an event needs the classifier attack to "
                             "choose one; give start=(x, x2, event) or drop "
                             f"{'method=random' if random_only else 'attack=False'}.")
        opts["attack"] = True
    seed = as_seed(seed)  # recorded in the Bound: a run with seed=None replays too
    root = np.random.SeedSequence(seed)
    it_seeds, confirm_seed, base_seed = root.spawn(3)
    if not mech.supports("replay"):
        from .blackbox import refuse_slsqp, search_blackbox

        if method == "slsqp":
            refuse_slsqp(mech)
        found = search_blackbox(mech, resolved, opts, iterations, n_confirm, root, seed,
                                starting, progress, t0, executor, compared)
        return dataclasses.replace(found, test_epsilon=test_eps, details={
            **found.details, **({"notes": unseeded} if unseeded else {})})
    if not random_only:
        opts["gradient"] = _wants_gradient(mech, resolved, opts, it_seeds)
    seeds = it_seeds.spawn(int(iterations))
    records: list[dict] = []
    stopped = False  # Ctrl-C during the iterations
    with _progress(progress, iterations, mech.name) as bar:
        task = bar.add_task(f"search {mech.name}", total=iterations) if bar else None
        try:
            for i in range(int(iterations)):
                if i and not random_only and _share_spent(opts, t0):
                    break  # the attack family and the fresh sample get the time left
                rng = np.random.default_rng(seeds[i])
                st = starting if (i == 0 and starting is not None
                                  and starting[2] is not None) else None
                records.append(_iteration(mech, rng, resolved, opts, st, not random_only))
                if bar:
                    bar.advance(task)
        except KeyboardInterrupt:
            stopped = True
    best = _best(records)
    # the classifier-attack family (privet.attacks) beside the random boxes and singletons
    s_attack, s_score = root.spawn(2)
    interrupted_attack, done = False, len(records)
    if not random_only and not stopped and wants_attack(
            mech, opts, resolved, best, np.random.default_rng(s_score)):
        attack, cut = attack_family(mech, resolved, opts, iterations, s_attack, executor,
                                    progress, starting, t0)
        if cut:
            interrupted_attack = True
        if attack is not None:
            records.append(attack)
            # DP-Finder's triple keeps its place when it is infinite and enumerable noise
            # can confirm that exactly; otherwise both are judged by their projected
            # certificates (an event never seen under x' in DP-Finder's 2,000 samples may
            # certify nothing on the fresh ones)
            exact_inf = False
            if best is not None and math.isinf(best["estimate"]):
                ex = _exact_probabilities(mech, mech.domain.check(best["x"]),
                                          mech.domain.check(best["x2"]), best["event"],
                                          resolved)
                exact_inf = ex is not None and ex[1] == 0 and ex[0] > 0
            if best is None or not exact_inf and \
                    attack["attack_score"] > paired_projection(mech, best, resolved, opts,
                                                               s_score.spawn(1)[0]):
                best = attack
    details: dict[str, Any] = {
        "trace": [_trace_row(r) for r in records], "iterations": done,
        "interrupted": stopped or interrupted_attack,
        "optimizer": "random search" if random_only else (
            "SLSQP on eps^d (Relaxed)" if opts.get("gradient") else
            "derivative-free local search"),
    }
    if done < int(iterations) and not stopped:
        details["iterations_planned"] = int(iterations)  # their share of the time ended
    if best is None or details["interrupted"]:
        # Ctrl-C: no fresh-sample confirmation (it takes seconds), so nothing is certified
        verdict = "no violation found" if not details["interrupted"] else (
            "interrupted before the fresh-sample confirmation: nothing is certified")
        if best is not None:
            details["search_estimate"] = best["estimate"]
        bound = Bound(mechanism=mech.name, value=0.0, confidence=float(confidence),
                      method="dpfinder" if not random_only else "random search",
                      claimed_epsilon=mech.epsilon, seed=seed, test_epsilon=test_eps,
                      claim=mech.describe_claim(),
                      seconds=time.perf_counter() - t0,
                      details={**details, "verdict": verdict})
    else:
        size = best["size"] if "size" in best else _confirm_size(n_confirm, best["p"][0])
        if opts["timed"] and n_confirm is None and not random_only:
            size = _timed_size(mech, best, resolved, opts, t0, size, root.spawn(1)[0],
                               executor)
        conf = confirm(mech, best["x"], best["x2"], best["event"], args=resolved,
                       n=size, confidence=confidence, seed=confirm_seed,
                       certify=opts["certify"], executor=executor,
                       plan=best.get("certificate"))
        value = max(conf["value"], 0.0)
        details.update(search_estimate=best["estimate"], unbounded=conf["unbounded"],
                       winner=best["optimizer"],
                       confirmation=conf["method"], n_confirm=conf.get("n"),
                       verdict=_verdict(value, conf, compared, confidence,
                                        test=test_eps is not None))
        bound = Bound(mechanism=mech.name, value=value,
                      confidence=1.0 if conf["exact"] else float(confidence),
                      method="random search" if random_only else "dpfinder",
                      exact=conf["exact"],
                      witness=_witness(mech, best, conf, resolved, confidence, seed),
                      claimed_epsilon=mech.epsilon, seed=seed, test_epsilon=test_eps,
                      claim=mech.describe_claim(),
                      seconds=time.perf_counter() - t0, details=details)
    if baseline and not random_only and not details["interrupted"]:
        base = search(mech, iterations=iterations, confidence=confidence, n_confirm=n_confirm,
                      seed=int(base_seed.generate_state(1)[0]), args=args, method="random",
                      executor=executor, **options)
        bound = Bound(**{**{f: getattr(bound, f) for f in bound.__dataclass_fields__},
                         "details": {**bound.details, "baseline": base}})
    return bound


DPFINDER_SHARE = 0.1  # of a time budget given explicitly: DP-Finder's iterations start before


def _share_spent(opts: dict, t0: float) -> bool:
    """Whether DP-Finder's iterations have spent their share of a time budget given
    explicitly (:data:`DPFINDER_SHARE`; never without one). Each of its iterations is an
    SLSQP run of a few seconds on a 2^17-sample tape; on DP-Sniper's svt1-svt4 (seed
    1) ten of them took 12.7-20.7 s of 55 and never gave the winning triple (svt3:
    20.5 s, estimates at most 0.086, while the attack family certified 0.22), and at a
    share of 0.2 the attack won all 26 timed runs of svt1, svt3, svt4, both RAPPORs and
    laplace: past the share, the attack's stages and the fresh sample get the time."""
    # "timed": seconds was given, and not None (_options)
    return bool(opts.get("timed")) and opts.get("attack") is not False \
        and time.perf_counter() - t0 >= DPFINDER_SHARE * float(opts["seconds"])


# the throwaway samples that time a white box's certificate: from TIMED_PROBE pairs in whole
# rounds of chunks over the executor's workers (a last round of one chunk leaves the others
# idle; 2^22 pairs took 4.5 s of RAPPOR's 55, as much again was lost rounding the fresh
# sample down to a multiple of it), doubled until one has run
# privet.execution.PROBE_SECONDS or the next would pass TIMED_PROBE_MAX pairs
TIMED_PROBE = 1 << 20
TIMED_PROBE_MAX = 1 << 22
TIMED_MAX = 1 << 31     # the largest fresh sample the time left may buy


def _timed_size(mech: Mechanism, best: dict, args: dict, opts: dict, t0: float, size: int,
                seed: np.random.SeedSequence, executor: Any, clock=time.perf_counter) -> int:
    """A white box searched with ``seconds`` given: the fresh sample takes the time left of
    it, at the pace of the last of the timed probes of the same certificate on throwaway
    samples (:func:`privet.execution.timed_probe`, from :data:`TIMED_PROBE` pairs, at most
    :data:`TIMED_PROBE_MAX`; their counts are dropped: only the sample drawn after them
    certifies), rounded down to whole rounds, never below the planned ``size`` and at most
    :data:`TIMED_MAX`; an exact confirmation (enumerable noise) needs no sample."""
    chunk = confirm_chunk(mech, mech.domain.check(best["x"]), args)

    def run(k: int) -> bool:
        got = confirm(mech, best["x"], best["x2"], best["event"], args=args, n=k,
                      confidence=opts["confidence"], seed=seed.spawn(1)[0],
                      certify=opts["certify"], executor=executor, sequential=False)
        return not got["exact"]

    timed = timed_probe(run, TIMED_PROBE, TIMED_PROBE_MAX, chunk, executor, clock)
    if timed is None:
        return size
    pairs, took, now = timed
    left = float(opts["seconds"]) - (now - t0)
    afford = whole_rounds(int(pairs / took * max(left, 0.0)), chunk, executor, up=False)
    return timed_pairs(size, afford)


def timed_pairs(size: int, afford: float) -> int:
    """The fresh sample a white box's time budget buys: the ``afford`` pairs the time left
    allows, never below the planned ``size`` and at most :data:`TIMED_MAX`."""
    return int(min(max(size, afford), TIMED_MAX))


def _confirm_size(n_confirm: int | None, p1: float) -> int:
    """The fresh sample size: ``n_confirm``, or (None) about CONFIRM_EVENTS expected events
    under x by the search's estimate of p -- chosen before the fresh sample is drawn, so the
    Clopper-Pearson bounds stay valid."""
    if n_confirm is not None:
        return int(n_confirm)
    lo, hi = CONFIRM_RANGE
    want = CONFIRM_EVENTS / max(float(p1), 1e-12)
    return int(min(max(want, lo), hi))


def _verdict(value: float, conf: dict, claimed: float | None, confidence: float,
             test: bool = False) -> str:
    """The verdict in the words of the table in :mod:`privet.core.results`, then the bound;
    ``claimed`` is the ε compared with (the test ε when ``test``)."""
    how = "exact" if conf["exact"] else f"{pct(confidence)} confidence"
    if math.isinf(value):
        bound = f"ε = ∞ ({how}: the event is impossible under D2)"
    elif conf.get("unbounded"):
        bound = (f"ε ≥ {fmt_num(value)} ({how}); the event never occurred under D2 in "
                 f"{conf['n']:,} samples, so the bound grows with n (looks unbounded)")
    else:
        # above the claim: as many digits as show it above ("ε ≥ 1.000178", not "ε ≥ 1")
        shown = fmt_apart(value, claimed)[0] if claimed is not None and value > claimed \
            else fmt_num(value)
        bound = f"ε ≥ {shown} ({how})"
    if claimed is None:
        return bound
    if value <= claimed:
        which = "test" if test else "claimed"
        return f"no violation found: {bound}, not above the {which} ε = {fmt_num(claimed)}"
    return ("violation (exact): " if conf["exact"] else "violation certified: ") + bound


def _wants_gradient(mech: Mechanism, args, opts: dict, ss: np.random.SeedSequence) -> bool:
    if opts["requested"] == "local":
        return False
    if mech.domain.integer or mech.neighbors.kind == "custom":
        return opts["requested"] == "slsqp" and not mech.domain.integer
    if opts["requested"] == "slsqp":
        return True
    rng = np.random.default_rng(ss.spawn(1)[0])
    x = random_input(mech, rng, opts["length"], opts["input_range"])
    return uses_ops(lambda: mech.run(Relaxed(opts["c"], rng=rng, size=4), x, args,
                                     check_input=False))


