"""``privet.search`` on mechanisms without Replay (black boxes, vectorized ``m(a, n)``,
StatDP-style functions): classifier attacks with sound selection.

DP-Sniper's method (Bichsel, Steffen, Bogunovic, Vechev, S&P 2021): train a
classifier to tell outputs of M(a) from outputs of M(a'), threshold its posterior, estimate
eps on a fresh sample with Clopper-Pearson bounds. Here (:mod:`privet.attacks`):

* the witness search has three disjoint samples (:func:`privet.attacks.search_witness`):
  one trains and screens the candidate pairs (patterns in both orientations, random pairs,
  a local search driven by the attack's estimate), one chooses the pair, the model and the
  threshold of the finalists, one -- fresh, of ``n_confirm`` pairs -- certifies;
* the threshold is not fixed at P[M(a') in S] = c, so the bound is never capped at
  ln(1/c): it maximizes the certificate the fresh sample is projected to give, and an
  event never seen under a' gets the Clopper-Pearson bound that grows with n;
* the certificate is decided before the fresh sample is drawn: Clopper-Pearson on both
  probabilities with a union bound, the exact conditional test on discordant pairs, or
  Clopper-Pearson on the pairs with the event on either side (and, on pairs that share
  their noise, the paired one; :mod:`privet.stats.bounds`), whichever projects the larger
  bound for the winner;
* the fresh sample is streamed in chunks through the executor (flat memory, progress bar,
  Ctrl-C keeps the chunks done and says so);
* a black box whose outputs follow the generator privet gives it runs x and x' with the same
  seeds (common random numbers, :func:`wants_coupling`): the two outputs of a pair then
  differ only where the change of input moves them, and the training and selection judge
  events on those discordant pairs, so their stages end at :data:`COUPLED_STAGES` of
  their shares of the time and the fresh sample gets the rest. A vectorized box is
  certified on independent runs (its coupled pairs may depend on each other); a per-sample
  box, whose every call has a stream of its own, on coupled pairs with the paired
  certificate.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any

import numpy as np

from ..attacks import Budget, certify, search_witness
from ..attacks.events import FLOAT_NOTE, reads_float_bits
from ..attacks.sampling import per_call
from ..attacks.witness import affordable
from ..core.errors import UnsupportedError, advice
from ..core.mechanism import Mechanism
from ..core.results import Bound
from ..stats.bounds import SHARE, SHARES, decoupled, projected

__all__ = ["budget_for", "certificate_objective", "confirm_size", "search_blackbox"]

# per-sample black boxes (one Python call per output) get smaller samples; a fresh sample
# whose plan reaches ``n_confirm`` grows on up to ``n_confirm_timed`` when a time budget
# leaves room for it (the time is the user's limit then, not the size)
FAST = {"n_train": 1 << 15, "n_fit": 1 << 18, "n_select": 1 << 22, "n_confirm": 1 << 27,
        "n_confirm_min": 1 << 22, "n_confirm_timed": 1 << 31}
SLOW = {"n_train": 1 << 12, "n_fit": 1 << 14, "n_select": 1 << 17, "n_confirm": 1 << 21,
        "n_confirm_min": 1 << 17, "n_confirm_timed": 1 << 25}
# the automatic fresh sample stops growing within this share of the limit: a half percent
# is what a bound within 0.998 of a true epsilon near 0.25 needs (DP-Sniper's noisy max
# releasing the value: 0.2488 of 0.25 takes 2^27 pairs of its best event)
CLOSE = 0.005
CERTIFY_SECONDS = 5.0  # the least time a fresh sample is sized to, whatever is left
SMALLEST = 1 << 10  # the least fresh sample of a box too slow for the least automatic size
PROBE_SHARE = 0.1  # a per-sample box's timed probe of the certificate runs only if it
                   # takes at most this share of the time left (at the race's pace)
SECONDS = 55.0  # default wall-time target of a black-box search (Budget.seconds)
PROBE_START = 1.0  # seconds: the first throwaway run of the certificate's probe, at most
# the certificates that rank candidates: their plans (PLANS) add the either-side one, for
# the winner only (ranked by it, lucky rare events won: its margin is smaller on few counts,
# and one_time_rappor's race picked an event of 8,000 counts in 1.9e8 pairs, 0.775 against
# 0.7996 when ranked by the paired certificate)
INDEPENDENT = ("union", "conditional")
# how a search sampled, by (coupled, paired certificate)
SAMPLING = {
    (False, False): "classifier attacks on independent samples (train, select, certify)",
    (True, False): "classifier attacks: train and select on runs sharing their seeds (common "
                   "random numbers), certify on independent samples",
    (True, True): "classifier attacks on runs sharing their seeds (common random numbers; "
                  "train, select, certify on pairs independent of each other)",
}
# selection counts are moved this many standard errors towards no violation before they are
# projected: the best of ~1000 thresholds of several scores is otherwise an event seen a few
# times whose lucky ratio the fresh sample does not repeat
SHRINK = 2.0
# with common random numbers the selection's estimates need fewer pairs: its stages end at
# this share of their usual times, and the fresh sample gets the time
COUPLED_STAGES = 0.6


def _sizes(mech: Mechanism) -> dict:
    return SLOW if mech.per_sample else FAST


def refuse_slsqp(mech: Mechanism) -> None:
    method = advice("method='slsqp'", "--method slsqp")
    auto = advice("use method='auto'", "leave --method at auto")
    raise UnsupportedError(
        f"{method} needs correlated sampling (Replay), which the {mech.kind} mechanism "
        f"{mech.name!r} cannot give; {auto} (classifier attacks on independent samples) or "
        "write it against privet's noise API."
    )


def budget_for(mech: Mechanism, opts: dict, iterations: int) -> Budget:
    """The witness search's sizes: ``n_cap`` samples per input of each screened pair
    (default 2^15; 2^12 for per-sample black boxes), ``n_select`` the largest selection
    sample per finalist (2^22; 2^17), ``iterations`` random pairs and as many local-search
    steps, ``finalists`` (8), ``models`` (table, histogram, logistic regression,
    statistics, and the neural network for continuous vectors; a subset restricts them),
    ``seconds`` the wall time the search and its certificate aim at (:data:`SECONDS`; None:
    no limit); on outputs of few values the screening chooses each pair's event without
    the shrink (``raw_tables``: :func:`privet.attacks.witness._screen_objective`)."""
    sizes = _sizes(mech)
    models = tuple(opts.get("models") or Budget.models)
    n_select = int(opts.get("n_select") or sizes["n_select"])
    return Budget(n_train=int(opts.get("n_cap") or sizes["n_train"]),
                  n_fit=min(sizes["n_fit"], n_select), n_select=n_select,
                  random_pairs=int(iterations), iterations=int(iterations),
                  finalists=int(opts.get("finalists", 8)), models=models,
                  float_features=opts.get("float_features", "auto"),
                  seconds=opts.get("seconds", SECONDS), raw_tables=True)


def confirm_size(mech: Mechanism, n_confirm: int | None, counts: tuple | None = None,
                 n: int = 0, confidence: float = 0.9, method: str = "union",
                 share: float = 0.8, afford: float | None = None,
                 least: int | None = None) -> int:
    """The fresh sample: ``n_confirm``; or, from the selection counts of the chosen event,
    the smallest power of two between 2^22 and 2^27 pairs (2^17 and 2^21 for per-sample
    black boxes) whose projected bound is within ``CLOSE`` (half a percent) of what an
    unlimited sample would project -- decided before the fresh sample is drawn. An event
    never seen under x' (whose bound keeps growing) gets the largest. ``afford``: the pairs
    the time left allows, rounded down to a multiple of a quarter of the least size (and
    at least the least size, or ``least`` (:func:`shortest`: a slow box) when the time
    left affords fewer); the size is then at most that, and a plan that reaches the
    largest size takes all of it (up to 2^31 pairs; 2^25 for per-sample black boxes):
    with a time budget, the time left bounds the sample, not a fixed size."""
    if n_confirm is not None:
        return int(n_confirm)
    sizes = _sizes(mech)
    lo, hi = sizes["n_confirm_min"], sizes["n_confirm"]
    timed = None
    if afford is not None:
        step = lo // 4
        timed = max(lo, min(int(afford // step) * step, sizes["n_confirm_timed"])) \
            if afford >= lo else max(int(afford), least or lo)  # a slow box: the time
        if timed < hi:
            hi = timed
    if counts is None:
        return hi if timed is None else timed
    limit = float(projected(*counts, n, float(2**40), confidence, method, shrink=SHRINK,
                            share=share))
    size = lo
    while size < hi:
        got = float(projected(*counts, n, size, confidence, method, shrink=SHRINK,
                              share=share))
        if math.isfinite(limit) and got >= limit - CLOSE * abs(limit):
            break
        size *= 2
    if timed is not None and size >= sizes["n_confirm"]:
        return int(timed)  # the plan reaches the largest size: the time left decides
    return int(min(size, hi))


def certificate_objective(size: int, confidence: float, paired: bool, coupled: bool = False):
    """The projected certificate at ``size`` fresh pairs: the paired one under Replay, the
    better of the union and the conditional one for independent samples; the counts are
    first moved ``shrink`` standard errors towards no violation (0 for counts of a held-out
    sample, which are honest already). ``coupled``: the counts are of pairs that shared
    their seed (common random numbers) and the fresh sample is independent: the moved
    counts are read as independent pairs of the same frequencies
    (:func:`privet.stats.bounds.decoupled`)."""
    methods = ("paired",) if paired else INDEPENDENT

    def objective(n11, n10, n01, n, shrink=SHRINK):
        if coupled:
            n11, n10, n01 = decoupled(n11, n10, n01, n, shrink)
            shrink = 0.0
        vals = [projected(n11, n10, n01, n, size, confidence, m, shrink=shrink, fast=True)
                for m in methods]
        return np.maximum.reduce(vals) if len(vals) > 1 else vals[0]

    return objective


# the certificates plan_method chooses between for the winner: (method, share of alpha),
# for independent samples and for pairs that shared their noise
PLANS = ([("union", SHARE)] + [("conditional", s) for s in SHARES]
         + [("either", s) for s in SHARES])
PAIRED_PLANS = [("paired", SHARE)] + [("either", s) for s in SHARES]


def plan_method(counts: tuple, n: int, size: int, confidence: float, paired: bool = False
                ) -> tuple[str, float]:
    """The certificate (and, for the conditional and either-side ones, its split of alpha)
    that projects the larger bound for these selection counts -- decided before the fresh
    sample is drawn; ``paired``: for pairs that share their noise."""
    plans = PAIRED_PLANS if paired else PLANS
    vals = [float(projected(*counts, n, size, confidence, m, shrink=SHRINK, share=s))
            for m, s in plans]
    return plans[int(np.argmax(vals))]


def search_blackbox(mech: Mechanism, args: dict, opts: dict, iterations: int,
                    n_confirm: int | None, root: np.random.SeedSequence, seed: int | None,
                    starting: tuple | None, progress: bool, t0: float, executor: Any = None,
                    compared: float | None = None) -> Bound:
    """The black-box search (module docstring): witness search, then the fresh certificate;
    the verdict compares the bound with ``compared`` (the test epsilon, default the claim).
    An executor given by name is made once: the witness search, the timed probe of the
    certificate and the certificate share it (a probe on a pool of its own timed the pool's
    start and came out low, and the fresh sample ended seconds before the budget)."""
    from ..execution import get_executor

    search_ex = get_executor("inprocess" if executor is None else executor, mech)
    # without an executor the witness search runs in this process and the certificate where
    # the mechanism's kind runs best (a process pool for a per-sample black box)
    cert_ex = search_ex if executor is not None else get_executor(None, mech)
    try:
        return _search_blackbox(mech, args, opts, iterations, n_confirm, root, seed,
                                starting, progress, t0, search_ex, cert_ex, compared)
    finally:
        for ex in {id(search_ex): search_ex, id(cert_ex): cert_ex}.values():
            if ex is not executor:
                ex.close()


def _search_blackbox(mech: Mechanism, args: dict, opts: dict, iterations: int,
                     n_confirm: int | None, root: np.random.SeedSequence, seed: int | None,
                     starting: tuple | None, progress: bool, t0: float, where: Any,
                     executor: Any, compared: float | None) -> Bound:
    from . import _verdict, _witness  # the witness and verdict of every search

    confidence = float(opts["confidence"])
    plan = confirm_size(mech, n_confirm)
    budget = budget_for(mech, opts, iterations)
    s_search, s_cert = root.spawn(2)
    couple = wants_coupling(mech, opts, args)
    # a per-sample black box's calls each have a stream of their own: coupled pairs are
    # independent of each other, and the paired certificate applies
    paired = couple and per_call(mech)
    if couple:
        budget = dataclasses.replace(budget, stages=COUPLED_STAGES)
    objective = certificate_objective(plan, confidence, paired=paired,
                                      coupled=couple and not paired)
    # the witness search judges its finalists at the fresh sample the time left affords
    objective.resized = lambda pairs: certificate_objective(
        confirm_size(mech, n_confirm, afford=pairs), confidence, paired=paired,
        coupled=couple and not paired)
    cand, trace, interrupted = search_witness(
        mech, objective, budget=budget, args=args, seed=s_search, executor=where,
        progress=progress, start=starting, length=opts.get("length"), couple=couple)
    method_text = SAMPLING[(couple, paired)]
    common = {"trace": trace, "iterations": int(iterations), "optimizer": method_text}
    if cand is None or interrupted:
        verdict = ("interrupted before the certificate (nothing certified)" if interrupted
                   else "no violation found")
        return Bound(mechanism=mech.name, value=0.0, confidence=confidence,
                     method="attack (black box)", claimed_epsilon=mech.epsilon, seed=seed,
                     claim=mech.describe_claim(), seconds=time.perf_counter() - t0,
                     details={**common, "interrupted": interrupted, "verdict": verdict})
    # the plans read independent counts (of the same frequencies, when coupled)
    counts = tuple(float(v) for v in decoupled(*cand.counts, cand.n, 0.0)) \
        if couple and not paired else cand.counts
    method, share = plan_method(counts, cand.n, plan, confidence, paired=paired)
    rate = cand.extra.get("certify_pairs_per_second", 0.0)
    afford = affordable(budget.seconds, t0, rate)
    size = confirm_size(mech, n_confirm, counts, cand.n, confidence, method, share,
                        afford, shortest(mech, rate))
    if afford is not None and n_confirm is None and (
            size < confirm_size(mech, None, counts, cand.n, confidence, method, share)
            or size >= _sizes(mech)["n_confirm"] or afford < _sizes(mech)["n_confirm_min"]):
        # the time bounds the fresh sample (or the plan reaches the largest size, and the
        # time left may allow more; or the least size may not fit in it): size it from a
        # timed probe of the certificate itself (the race's rate is measured on small
        # samples, and comes out low)
        # a slow per-sample box skips the probe (a quarter of 2^17 pairs took a minute at a
        # millisecond a call): the race's pace sizes its fresh sample
        left = budget.seconds - (time.perf_counter() - t0)
        probed = False
        if not per_call(mech) or rate <= 0 \
                or _sizes(mech)["n_confirm_min"] / 4 <= PROBE_SHARE * left * rate:
            timed = probe_rate(mech, cand, args, root.spawn(1)[0], executor, hint=rate)
            rate, probed = (timed, True) if timed else (rate, False)
        afford = affordable(budget.seconds, t0, rate)
        size = confirm_size(mech, n_confirm, counts, cand.n, confidence, method, share,
                            afford, shortest(mech, rate, probed))
    cert = certify(mech, cand.x, cand.x2, cand.event, size, confidence=confidence,
                   method=method, args=args, seed=s_cert, executor=executor, progress=progress,
                   share=share, coupled=paired)
    certified = time.perf_counter() - t0
    value = max(cert.value, 0.0)
    k1, k2 = cert.counts
    conf = {"value": cert.value, "exact": False, "method": cert.describe(),
            "counts": (k1, k2), "n": cert.n, "unbounded": cert.unbounded,
            "p_value": certificate_pvalue(cert, mech.epsilon)}
    sel = cand.counts
    rec = {"x": cand.x, "x2": cand.x2, "event": cand.event,
           "estimate": _ratio(sel[0] + sel[1], sel[0] + sel[2])}
    witness = _witness(mech, rec, conf, args, confidence, seed, extra={
        "model": cand.model, "pattern": cand.pattern, "n_select": cand.n,
        "selection_counts": [sel[0] + sel[1], sel[0] + sel[2]], "projected": cand.value,
        "certificate": cert.method})
    compared = mech.epsilon if compared is None else compared
    verdict = _verdict(value, conf, compared, confidence, test=compared != mech.epsilon)
    if (compared is None or value > compared) and reads_float_bits(witness.event_spec):
        verdict += f"; {FLOAT_NOTE}"
    if cert.interrupted:
        verdict += f" (interrupted after {cert.n:,} of {size:,} fresh samples)"
    return Bound(mechanism=mech.name, value=value, confidence=confidence,
                 method="attack (black box)", witness=witness, claimed_epsilon=mech.epsilon,
                 seed=seed, claim=mech.describe_claim(), seconds=time.perf_counter() - t0,
                 details={**common, "search_estimate": rec["estimate"],
                          "unbounded": cert.unbounded, "confirmation": cert.describe(),
                          "n_confirm": cert.n, "coupled": couple,
                          "interrupted": cert.interrupted or interrupted,
                          "time_budget": budget.seconds,
                          "squeezed": next((r for r in trace if r.get("stage") == "squeeze"),
                                           None),
                          "pairs_per_second": cand.extra.get("pairs_per_second"),
                          "certify_pairs_per_second":
                              cand.extra.get("certify_pairs_per_second"),
                          "verdict": verdict, "projected": cand.value, "model": cand.model,
                          "stages": {**cand.extra.get("stages", {}),
                                     "certificate": round(certified, 3)}})


def shortest(mech: Mechanism, rate: float, probed: bool = False) -> int:
    """The least fresh sample at ``rate`` pairs per second: the least automatic size, unless
    a per-sample black box would take more than :data:`CERTIFY_SECONDS` for it (one taking
    a millisecond a call needs minutes for 2^17 pairs); then the pairs of that time, at
    least :data:`SMALLEST`. A vectorized box keeps its least size unless ``rate`` was
    ``probed`` (timed on the certificate itself, :func:`probe_rate`): the race's pace,
    which comes out low, would otherwise shrink the fresh samples of fast boxes, while a
    probed one is what the fresh sample will run at (a histogram of a thousand entries
    drew 2^22 pairs in minutes)."""
    lo = _sizes(mech)["n_confirm_min"]
    if rate <= 0 or lo <= rate * CERTIFY_SECONDS or not (per_call(mech) or probed):
        return lo
    return max(int(rate * CERTIFY_SECONDS), SMALLEST)


def wants_coupling(mech: Mechanism, opts: dict, args: dict) -> bool:
    """Train and select on runs of x and x' that share their seeds (common random numbers)?
    ``couple=True/False`` decides; 'auto' couples a mechanism without Replay whose outputs
    follow the generator privet gives it (:func:`privet.attacks.sampling.seeded`, run on
    an input of its domain). The fresh certifying sample is independent either way."""
    choice = opts.get("couple", "auto")
    if choice in (True, False):
        return bool(choice) and not mech.supports("replay")
    from ..attacks.inputs import default_length, domain_range
    from ..attacks.sampling import seeded

    lo, hi = domain_range(mech)
    x = np.full(default_length(mech, opts.get("length")), (lo + hi) / 2)
    x = mech.domain.check(np.round(x) if mech.domain.integer else x)
    return seeded(mech, x, args)


def probe_rate(mech: Mechanism, cand, args: dict, seed: np.random.SeedSequence,
               executor: Any, hint: float = 0.0) -> float:
    """Pairs per second of the certificate of ``cand``, timed on throwaway samples from a
    quarter of the least automatic fresh sample (or, when ``hint`` -- the race's pairs per
    second, which come out low -- says that takes more than :data:`PROBE_START` seconds,
    from the pairs of that time, at least a chunk), in whole rounds of chunks over the
    executor's workers (a last round of one chunk leaves the others idle, and the rate came
    out a fifth low), doubled until one has run long enough, up to the least fresh sample
    (:func:`privet.execution.timed_probe`; 0 when Ctrl-C stopped it). Their counts are
    dropped: only the fresh sample drawn after them certifies."""
    from ..execution import DEFAULT_CHUNK, chunk_for, timed_probe

    chunk = chunk_for(mech, DEFAULT_CHUNK, mech.domain.check(cand.x), mech.resolve_args(args))
    least = _sizes(mech)["n_confirm_min"]

    def run(k: int) -> bool:
        got = certify(mech, cand.x, cand.x2, cand.event, k, method="union", args=args,
                      seed=seed.spawn(1)[0], executor=executor)
        return not got.interrupted

    start = least // 4
    if hint > 0 and start > hint * PROBE_START:
        start = max(int(hint * PROBE_START), min(chunk, start))
    timed = timed_probe(run, start, least, chunk, executor)
    return 0.0 if timed is None else timed[0] / timed[1]


def certificate_pvalue(cert, claimed: float | None) -> float | None:
    """The p-value of H0: eps <= ``claimed`` from the fresh certificate's counts
    (:func:`privet.stats.intervals.pvalue_of_bound` over the same certificate at every
    level; None when nothing is claimed), so the suite's Holm correction can use it."""
    if claimed is None or cert.n <= 0:
        return None
    from ..attacks.sampling import bound_of
    from ..stats.intervals import pvalue_of_bound

    counts = (cert.n11, cert.n10, cert.n01, cert.n)
    return pvalue_of_bound(
        lambda a: bound_of(cert.method, *counts, 1.0 - a, cert.share), float(claimed))


def _ratio(k1: float, k2: float) -> float:
    if k2 <= 0:
        return math.inf if k1 > 0 else math.nan
    return math.log(k1 / k2) if k1 > 0 else -math.inf


# --------------------------------------------------------------------------------------------
# white boxes: the attack family beside DP-Finder's iterations
# --------------------------------------------------------------------------------------------

WHITE = Budget(n_train=1 << 14, n_fit=1 << 16, n_select=1 << 20, finalists=2)
SMALL_DISCRETE = 64  # at most this many distinct outputs: DP-Finder's singletons suffice


def wants_attack(mech: Mechanism, opts: dict, args: dict, best: dict | None,
                 rng: np.random.Generator) -> bool:
    """Run the attack family on a white box? ``attack=True/False`` decides; 'auto' runs it
    unless the outputs take few distinct values and DP-Finder found a triple (its singleton
    events are then the likelihood ratio already)."""
    choice = opts.get("attack", "auto")
    if choice in (True, False):
        return bool(choice)
    if best is None or opts.get("timed"):
        # a time budget given explicitly is spent: the attack's patterns (stretched to the
        # domain's ends) and local search find pairs DP-Finder's p_min keeps it from
        # (sparse vector: a True after nine FALSE answers, p < 0.01)
        return True
    from ..attacks.inputs import default_length, domain_range
    from ..attacks.train import distinct_rows
    from ..core.noise import Sampler

    lo, hi = domain_range(mech)
    x = rng.uniform(lo, hi, size=default_length(mech, opts.get("length")))
    x = mech.domain.check(np.round(x) if mech.domain.integer else x)
    out = mech.run(Sampler(rng, 2000), x, args, check_input=False)
    return distinct_rows(out, out[:1]) > SMALL_DISCRETE


def white_size(opts: dict) -> int:
    """The fresh paired sample the attack family plans for (``n_confirm``, or the largest
    automatic confirmation size)."""
    from . import CONFIRM_RANGE

    return int(opts["n_confirm"]) if opts.get("n_confirm") else int(CONFIRM_RANGE[1])


def attack_family(mech: Mechanism, args: dict, opts: dict, iterations: int,
                  seed: np.random.SeedSequence, executor: Any, progress: bool,
                  starting: tuple | None, t0: float) -> tuple[dict | None, bool]:
    """The classifier attack on a white box: paired samples (Replay) train and select, the
    objective is the paired certificate (sizes: ``n_cap``, default 2^14 per screened pair;
    ``n_select``, default 2^20); returns a DP-Finder-style record (or None) and whether
    Ctrl-C cut the attack short. With ``seconds`` given explicitly (``opts['timed']``),
    the witness search is the black box's (:func:`budget_for`: its sizes, eight finalists,
    the screening of few-valued outputs without the shrink) on paired samples, and the
    attack's stages aim at the time left of it counted from the search's start ``t0``,
    and its race judges and refines its finalists at the fresh paired sample that time
    affords (:func:`_timed_size` sizes that sample the same way), its stages ending at
    :data:`COUPLED_STAGES` of their shares (paired estimates need fewer pairs, as coupled
    ones do); its ``attack_score`` is its projected certificate at the planned size, as
    DP-Finder's triple is judged."""
    size = white_size(opts)
    confidence = float(opts["confidence"])
    seconds = opts.get("seconds", SECONDS)
    objective = certificate_objective(size, confidence, paired=True)
    if opts.get("timed") and seconds is not None and not opts.get("n_confirm"):
        from . import timed_pairs

        seconds = max(float(seconds) - (time.perf_counter() - t0), 1.0)
        objective.resized = lambda pairs: certificate_objective(
            timed_pairs(size, pairs), confidence, paired=True)
    if opts.get("timed"):
        # the black box's witness search (its sizes, finalists and screening), on paired
        # samples: with the same time, a white box's input search is never the weaker one
        # (two finalists of 2^14-sample screenings missed the sparse-vector pairs whose last
        # query moves against the others, svt3: 0.19 against the black box's 0.29)
        budget = dataclasses.replace(budget_for(mech, opts, iterations), seconds=seconds,
                                     stages=COUPLED_STAGES)
    else:
        n_select = int(opts.get("n_select") or WHITE.n_select)
        budget = Budget(n_train=int(opts.get("n_cap") or WHITE.n_train),
                        n_fit=min(WHITE.n_fit, n_select), n_select=n_select,
                        random_pairs=int(iterations), iterations=int(iterations),
                        finalists=WHITE.finalists,
                        models=tuple(opts.get("models") or WHITE.models),
                        float_features=opts.get("float_features", "auto"), seconds=seconds)
    cand, trace, interrupted = search_witness(
        mech, objective, budget=budget, args=args, seed=seed,
        executor="inprocess" if executor is None else executor, progress=progress,
        start=starting, length=opts.get("length"))
    if cand is None or interrupted:
        return None, interrupted
    n11, n10, n01 = cand.counts
    k1, k2 = n11 + n10, n11 + n01
    score = float(np.asarray(objective(n11, n10, n01, cand.n)))  # at the planned size
    return {"x": cand.x, "x2": cand.x2, "event": cand.event, "start_estimate": None,
            "n": cand.n, "estimate": _ratio(k1, k2), "p": (k1 / cand.n, k2 / cand.n),
            "optimizer": f"classifier attack ({cand.model})", "evaluations": len(trace),
            "surrogate": None, "status": "classifier attack", "attack_score": score,
            "seconds": trace[-1]["seconds"] if trace else 0.0, "size": size,
            "certificate": plan_method(cand.counts, cand.n, size, confidence, paired=True)
            }, False


def paired_projection(mech: Mechanism, rec: dict, args: dict, opts: dict,
                      seed: np.random.SeedSequence) -> float:
    """DP-Finder's best triple scored like the attack's candidates: its paired counts on a
    fresh tape, projected to the same certificate."""
    from ..attacks import draw_pair
    from ..attacks.threshold import counts_at

    n = int(opts.get("n_walk", 1 << 17))
    o1, o2 = draw_pair(mech, rec["x"], rec["x2"], n, args, seed, paired=True)
    e1 = rec["event"].indicator(o1).astype(float)
    e2 = rec["event"].indicator(o2).astype(float)
    counts = counts_at(e1, e2, np.array([1.0]))
    objective = certificate_objective(white_size(opts), float(opts["confidence"]), paired=True)
    return float(np.asarray(objective(*counts, n))[0])
