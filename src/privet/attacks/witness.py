"""The witness search of a classifier attack: which pair of inputs, which event.

Three disjoint samples, so that picking the best of many candidates never inflates the
certified bound (the winner's curse of scoring hundreds of candidates on one draw):

1. **train / choose events** -- per candidate pair, a screening sample: half of it fits the
   cheap models (empirical table, histogram, logistic regression, statistics) and chooses
   their best threshold event (on outputs of few values, for ``privet.search``, by its
   projection without the shrink: :func:`_screen_objective`), the other half scores that
   one event (an honest estimate).
   The candidates are the relation's patterns (mirrored, and stretched across the domain;
   every event is tried in both orientations), random pairs inside the domain (every pair
   of a small domain), and a local search that moves the best pair while its estimate
   improves: the attack's own estimate on its own sample drives the input search. The
   ``finalists`` pairs with the best optimistic estimates (estimate plus one standard
   error, so rare events with large ratios are not dropped for their noise) get a fresh
   sample to fit the final models (with the neural network when asked). The screened
   pairs' outputs are drawn ahead by the executor's workers while this process fits the
   models of the pair before (:func:`~privet.attacks.sampling.draw_pairs`): the same
   outputs as drawn one by one, in less time on a process pool or a cluster.
2. **choose the pair and the threshold** -- fresh selection samples, streamed in chunks
   through the executor and reduced to the counts of every final model's events over a grid
   of thresholds; the finalists race (:func:`_race`): their samples double while they are
   still in contention and their estimates too coarse, up to ``n_select``, so a rare event
   with a large ratio gets the samples it needs and a clear loser stops early. Each
   finalist's selection sample comes in two halves, and its value is cross-fitted
   (:func:`_evaluate`): each half chooses an event, the other half judges it, so no
   event is judged on the counts that chose it. The best (pair, model, threshold) wins;
   with a time budget, its threshold is then chosen again on a larger sample of its own
   (:func:`_refine`: the race ends as soon as the winner is clear, often before its
   threshold is precise).
3. **certify** -- done by the caller on a third, fresh sample
   (:func:`privet.attacks.sampling.certify`), the only one that enters the bound.

Outputs that are doubles get the float-exact feature maps too
(:class:`~privet.attacks.features.BitView`; ``Budget.float_features``): each model is also
fitted on each view of the outputs, and its events compete with the others on the same
samples -- the certificate still comes from the third sample alone, so it stays a finite,
honest bound with its confidence (ε = ∞ is for the exact reachability check of
:mod:`privet.floats`).

The score of a candidate is an ``objective`` of its counts: for ``privet.search`` the
certificate a fresh sample of the certifying size would give (shrunk by a standard error),
for ``privet.detect`` the p-value its final test would give. More budget means larger
samples and more candidates; only the fresh sample certifies, so it never biases the bound.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..core.errors import InputError, advice
from ..core.events import Event
from ..core.mechanism import Mechanism
from ..execution import get_executor, output_width
from ..execution.progress import progress_bar
from ..execution.threads import single_threaded
from ..stats.counts import column_ks
from .events import Threshold
from .features import (
    VIEW_ENTRIES,
    WIDE_ENTRIES,
    Batch,
    BitView,
    bit_views,
    fit_features,
    informative_entries,
    raw,
    rows_of,
    shape_error,
)
from .inputs import (
    all_pairs,
    default_length,
    move,
    pair_key,
    pattern_pairs,
    random_pair,
    sweep_pairs,
    unique,
)
from .sampling import (
    COUPLED,
    TIMES,
    draw_pair,
    draw_pairs,
    paired_sampling,
    per_call,
    select_counts,
)
from .scores import Bits, Score, Table
from .threshold import (
    ORIENTATIONS,
    Choice,
    best_agreed,
    best_of_many,
    candidates,
    choice_counts,
    counts_at,
    oriented,
    tails,
)
from .train import fit, models_for, smoothed_log_ratio

__all__ = ["Budget", "Candidate", "affordable", "search_witness"]

# objective(n11, n10, n01, n, shrink=...): the selection counts of events -> their scores;
# ``shrink`` moves the counts towards no violation (0 for a held-out sample's counts)
Objective = Callable[..., np.ndarray]


@dataclass(frozen=True)
class Budget:
    """Sample sizes and counts of the witness search.

    ``n_train``: samples per input of each screened pair; ``n_fit``: per input and
    finalist, to fit the final models (and the first selection round); ``n_select``: the
    largest selection sample per input and finalist (the race doubles up to it);
    ``random_pairs``: random pairs screened besides the patterns; ``iterations``: steps of
    the local search; ``finalists``: pairs that reach the selection; ``models``: the final
    models ('table', 'bins', 'logistic', 'mlp', 'stats'; the ones that do not apply to the
    outputs are skipped), the neural network for the first ``mlp_finalists`` only;
    ``float_features``: the float-exact views the models are also fitted on
    (:func:`~privet.attacks.features.bit_views`: ``"auto"`` -- granularity, low bits and
    residue when the outputs are fractional doubles and the mechanism has no Replay;
    ``"all"``, ``"off"`` or feature names); ``seconds``: the wall time the whole search
    and its certificate aim at (None: no limit, the sizes above) -- every stage is sized
    from the pace it measures (:class:`_Pace`) to end within its share of it: the
    screening (``n_train``, shrunk after a timed probe, at least :data:`LEAST`) by
    :data:`SCREEN_SHARE`, the successive halving by :data:`HALVING_SHARE`, the finalists'
    fits (``n_fit``, shrunk) by :data:`FIT_SHARE`, the race's first round by
    :data:`FIRST_SHARE` and its doubling by :data:`RACE_SHARE`; the caller sizes the
    fresh sample from what is left (:attr:`Candidate.extra`'s
    ``certify_pairs_per_second``, measured on the race's chunks); ``crossfit``: judge each
    finalist's event on the half of its selection sample that did not choose it
    (:func:`_evaluate`; False: on the counts that chose it, as ``privet.detect`` does, whose
    final test draws its own fresh sample); ``raw_tables``: on outputs of few values (the
    screening's model is a small empirical table), the screening chooses each pair's event
    by its projection without the shrink (:func:`_screen_objective`); ``stages``: the
    factor on every stage's share of ``seconds`` (below 1: the selection ends sooner and
    the fresh sample gets the time, as for common random numbers, whose estimates need
    fewer pairs)."""

    n_train: int = 1 << 15
    n_fit: int = 1 << 18
    n_select: int = 1 << 23
    random_pairs: int = 10
    iterations: int = 10
    finalists: int = 4
    models: tuple = ("table", "bins", "logistic", "stats", "mlp")
    mlp_finalists: int = 2
    float_features: Any = "auto"
    seconds: float | None = None
    crossfit: bool = True
    raw_tables: bool = False
    stages: float = 1.0


SCREEN_SHARE = 0.2   # of Budget.seconds: the screening and the local search end by then
HALVING_SHARE = 0.3  # ... the successive halving's rounds
FIT_SHARE = 0.4      # ... the finalists' fits
FIRST_SHARE = 0.5    # ... the selection race's first round
RACE_SHARE = 0.65    # ... and its other rounds; the rest is the fresh sample's
LATE_SHARE = 0.8     # ... and the rounds of a leader whose lead may be luck, at the latest
LEAST = 1 << 11      # the least screening sample a time budget may shrink n_train to


SQUEEZE_PROBE = 16   # pairs drawn to time a per-sample black box before its search is sized
SQUEEZE_KEEP = 2     # local-search steps and finalists of a squeezed search
SQUEEZE_LEAST = {"n_train": 1 << 9, "n_fit": 1 << 9}  # a squeezed search's least samples


def _squeeze(mech: Mechanism, cands: list, budget: Budget, args, seed, paired,
             trace: list) -> tuple[list, Budget]:
    """The candidates and budget of a per-sample black box's search whose least work would
    not fit its time: every candidate screened on :data:`LEAST` pairs, the local search, and
    the finalists' fits and first race round as large, timed at the pace of
    :data:`SQUEEZE_PROBE` pairs drawn first (their outputs are dropped), would take more
    than :data:`FIT_SHARE` of ``budget.seconds`` (a box taking a millisecond a call ran
    a 20-second search for a quarter of an hour). Then the local search and the finalists
    are cut to :data:`SQUEEZE_KEEP` each, the samples are sized from the pace to the
    stages' shares of the time (at least :data:`SQUEEZE_LEAST`: a sample too small to fit
    a model on finds nothing), and only the candidates the screening's share then affords
    are kept (at least two: a start and given pairs first, then the relation's plain
    patterns, their stretched forms, the random pairs): the search ends near its time,
    with a bound as strong as its samples allow. Otherwise both are returned unchanged.
    What was measured and chosen is appended to ``trace``."""
    x, x2 = cands[0][0], cands[0][1]
    tick = time.perf_counter()
    draw_pair(mech, x, x2, SQUEEZE_PROBE, args, seed, paired, "inprocess")
    per_pair = (time.perf_counter() - tick) / SQUEEZE_PROBE
    least = (len(cands) + budget.iterations) * min(budget.n_train, LEAST) \
        + 2 * budget.finalists * min(budget.n_fit, LEAST)
    seconds = budget.stages * float(budget.seconds)
    if per_pair <= 0 or least * per_pair <= FIT_SHARE * seconds:
        return cands, budget
    pairs = seconds / per_pair  # the pairs this process draws in the search's time
    keep = min(budget.finalists, SQUEEZE_KEEP)
    iterations = min(budget.iterations, SQUEEZE_KEEP)

    def sized(share: float, count: int, least: int, largest: int) -> int:
        n = 1 << int(math.log2(max(pairs * share / max(count, 1), 1.0)))  # a power of two
        return int(min(max(n, least), largest))

    n_train = sized(SCREEN_SHARE, len(cands) + iterations, SQUEEZE_LEAST["n_train"],
                    budget.n_train)
    room = max(int(SCREEN_SHARE * pairs / n_train) - iterations, 2)

    def rank(c: tuple) -> int:
        return {"start": 0, "given": 0, "random": 3}.get(c[2], 2 if "stretched" in c[2] else 1)

    kept = sorted(cands, key=rank)[:room]  # a stable sort: each group in its order
    n_fit = sized(FIT_SHARE - HALVING_SHARE, keep, SQUEEZE_LEAST["n_fit"], budget.n_fit)
    n_select = max(n_fit, sized(RACE_SHARE - FIT_SHARE, keep, n_fit, budget.n_select))
    squeezed = replace(
        budget, n_train=n_train, n_fit=n_fit, n_select=n_select, iterations=iterations,
        finalists=keep, mlp_finalists=min(budget.mlp_finalists, 1))
    trace.append({"stage": "squeeze", "pattern": "", "d1": list(map(float, x)),
                  "d2": list(map(float, x2)), "value": None, "model": "",
                  "n": SQUEEZE_PROBE, "seconds": round(per_pair * SQUEEZE_PROBE, 3),
                  "seconds_per_pair": per_pair, "pairs": len(kept), "of": len(cands),
                  "n_train": n_train, "n_fit": n_fit, "n_select": n_select})
    return kept, squeezed


SAMPLE_BYTES = 256 << 20  # one input's outputs in a screening or fitting sample, at most
LEAST_ROWS = 1 << 9       # ... but never fewer rows than this


def _within_memory(budget: Budget, width: int | None) -> Budget:
    """``budget`` with its screening and fitting samples (drawn whole, then copied into
    features and float-exact codes) cut to :data:`SAMPLE_BYTES` of float64 outputs per
    input: a histogram of 10,000 entries filled 24 GiB with 2^15 rows of each input and
    their copies. (The selection and the fresh sample are counted chunk by chunk. Outputs
    wider than :data:`~privet.attacks.features.WIDE_ENTRIES` may also screen on fewer rows
    than :data:`LEAST` when the time budget asks: as many entries as LEAST rows of that
    width, at least :data:`LEAST_ROWS` rows.)"""
    if not width:
        return budget
    rows = max(SAMPLE_BYTES // (8 * int(width)), LEAST_ROWS)
    if rows >= budget.n_train and rows >= budget.n_fit:
        return budget
    return dataclasses.replace(budget, n_train=min(budget.n_train, rows),
                               n_fit=min(budget.n_fit, rows))


def _fits(t0: float, seconds: float | None, share: float, projected: float) -> bool:
    """Whether a round projected to take ``projected`` seconds ends within ``share`` of the
    time budget counted from ``t0`` (always, without a budget)."""
    if seconds is None:
        return True
    return time.perf_counter() - t0 + projected <= share * float(seconds)


def affordable(seconds: float | None, t0: float, rate: float) -> float | None:
    """The pairs the time left of ``seconds`` (counted from ``t0``) allows at ``rate``
    pairs per second (a certifying sample's, estimated on the selection race's chunks:
    :func:`_race`); None without a budget or a measured rate."""
    if seconds is None or rate <= 0:
        return None
    return rate * max(float(seconds) - (time.perf_counter() - t0), 0.0)


@dataclass
class _Pace:
    """The measured seconds per pair of one stage of the search (``prior`` until the stage
    has measured its own), which sizes the stage's next samples so that the stage ends
    within ``share`` of ``seconds`` counted from ``t0``: the first samples of a slow
    mechanism are the timed probe that sizes the rest."""

    t0: float
    seconds: float | None
    share: float
    prior: float = 0.0
    spent: float = 0.0
    pairs: float = 0.0

    def add(self, seconds: float, pairs: int) -> None:
        self.spent += seconds
        self.pairs += pairs

    @property
    def per_pair(self) -> float:
        return self.spent / self.pairs if self.pairs else self.prior

    def size(self, largest: int, least: int, count: int, others: float = 0.0) -> int:
        """The largest of ``largest``, ``largest``/2, ... (at least ``least``) whose
        ``count`` samples (and ``others`` more seconds per pair, other items sharing the
        stage's time) are projected to end within the stage's share (``largest`` without a
        budget or a measured rate). Projected linearly from the pace measured at
        ``largest``, which overstates the time of a smaller sample (its fixed costs are
        counted again), never understates it."""
        if self.seconds is None or self.per_pair <= 0:
            return largest
        left = self.share * float(self.seconds) - (time.perf_counter() - self.t0)
        n = largest
        while n > least and (count * self.per_pair + others) * n > left:
            n //= 2
        return max(n, least)


@dataclass
class Candidate:
    """A (pair, event) and its objective on the sample that scored it."""

    x: np.ndarray
    x2: np.ndarray
    event: Event
    value: float
    counts: tuple = ()
    n: int = 0
    model: str = ""
    pattern: str = ""
    extra: dict = field(default_factory=dict)


def _widths(mech: Mechanism, o1: np.ndarray, o2: np.ndarray, x, x2) -> None:
    w1, w2 = rows_of(o1).shape[1], rows_of(o2).shape[1]
    if w1 != w2:
        raise shape_error(mech.name, w1, w2)
    if w1 == 0:  # as detect says it: an event "ω ∉ {}" read "no violation found"
        raise InputError(f"mechanism {mech.name!r} returns empty outputs: no event can be "
                         "built from them.")


def _screen_objective(objective: Objective, scores: list[tuple[str, Score]],
                      budget: Budget) -> Objective:
    """The objective the screening chooses a pair's event by: without the shrink when the
    outputs take few values (``budget.raw_tables``, and the screening's only model is a
    table of at most :data:`REORDER_CELLS` outputs), else the objective with its own.

    The shrink guards the choice against the winner's curse of a continuous score (the
    luckiest of thousands of thresholds in its far tail) or of a table of many rare
    outputs. A small table's events are the unions of its outputs in the order of their
    fitted ratios, each output seen 256 times on average among 2^14 pairs, and the event
    is judged on the other half of the sample either way, so the choice cannot inflate the
    pair's value; the shrink there only hides rare outputs: on 2^14 pairs, two standard
    errors of sparse vector's best answers (probability 0.006, log-ratio 0.095) exceed
    their log-ratio, the choice fell on nearly every output (fresh value about 0.016), and
    its pairs were ranked by chance."""
    if budget.raw_tables and scores and all(
            _small_table(sc) for _, sc in scores):
        return functools.partial(objective, shrink=0.0)
    return objective


def _score_events(scores: list[tuple[str, Score]], o1, o2, objective: Objective
                  ) -> list[tuple[float, int, str, Score, Choice]]:
    """Every score's best threshold on (o1, o2) in the four :data:`ORIENTATIONS` (upper or
    lower tail, for D1 or for D2): (value, orientation, model, score, choice)."""
    items, meta = [], []
    o1, o2 = (o if isinstance(o, Batch) else Batch(o) for o in (o1, o2))
    for model, sc in scores:
        s1, s2 = sc(o1), sc(o2)
        ts, every = candidates(np.r_[s1, s2])
        if len(ts) == 0:
            continue
        arr = tails(s1, s2, ts)
        for orient in range(len(ORIENTATIONS)):
            grid, counts = oriented(arr, ts, orient)
            items.append((grid, every, *counts))
            meta.append((orient, model, sc))
    choices = best_of_many(items, len(o1), objective)
    return [(ch.value, orient, model, sc, ch)
            for (orient, model, sc), ch in zip(meta, choices) if ch is not None]


def _fit_scores(o1, o2, models: tuple | None, seed: int,
                views: tuple[BitView, ...] = ()) -> list[tuple[str, Score]]:
    """The models fitted on (o1, o2): ``models`` among those that apply, or (None) the
    cheap screening set of :func:`privet.attacks.train.models_for`; then, on each
    float-exact view in ``views`` whose codes are not all equal, the cheap set among
    ``models`` (the codes of one entry are categories: their table is their likelihood
    ratio, which logistic regression on their indicators would only approximate). Outputs
    of many entries get features on the entries that separate the raw outputs most
    (:func:`~privet.attacks.features.informative_entries`), and their views code the
    :data:`~privet.attacks.features.VIEW_ENTRIES` most separating ones."""
    entries = informative_entries(rows_of(o1), rows_of(o2))
    out = _fit_on(o1, o2, models, seed, cheap=models is None, entries=entries)
    if entries is not None:  # the views code the most separating of them alone
        coded = tuple(sorted(int(j) for j in entries[:VIEW_ENTRIES]))
        views = tuple(dataclasses.replace(v, entries=coded) for v in views)
    for view in views:
        b1, b2 = view.codes(o1), view.codes(o2)  # batches of codes when o1, o2 are batches
        c1, c2 = rows_of(b1), rows_of(b2)
        first = c1[:1]
        if np.array_equal(c1, np.broadcast_to(first, c1.shape)) and \
                np.array_equal(c2, np.broadcast_to(first, c2.shape)):
            continue  # one code for every output: no event of the view separates anything
        out.extend((f"{m} on {view.label()}", Bits(view, s))
                   for m, s in _fit_on(b1, b2, models, seed, cheap=True))
    return out


def _fit_on(o1, o2, models: tuple | None, seed: int, cheap: bool, entries=None
            ) -> list[tuple[str, Score]]:
    fmap = fit_features(np.vstack([rows_of(o1), rows_of(o2)]), entries=entries)
    out = []
    for m in models_for(o1, o2, fmap, cheap=cheap):
        if models is None or m in models:
            out.extend((m, s) for s in fit(m, o1, o2, fmap, seed=seed))
    return out


def _event(score: Score, orient: int, choice: Choice, seed: int) -> Threshold:
    lower, _ = ORIENTATIONS[orient]
    return Threshold(score.negated() if lower else score, choice.threshold, choice.tie, seed)


def _pair(x, x2, orient: int) -> tuple:
    """The witness's (D1, D2): the event's favored input first."""
    return (x2, x) if ORIENTATIONS[orient][1] else (x, x2)


def _fixed_event(event: Event, o1, o2, objective: Objective, **kw) -> tuple[float, tuple] | None:
    e1 = event.indicator(o1).astype(float)
    e2 = event.indicator(o2).astype(float)
    n11, n10, n01 = counts_at(e1, e2, np.array([1.0]))
    value = float(np.asarray(objective(n11, n10, n01, len(o1), **kw))[0])
    if not math.isfinite(value):
        return None
    return value, (float(n11[0]), float(n10[0]), float(n01[0]))


@dataclass
class _Screened:
    value: float
    spread: float
    x: np.ndarray
    x2: np.ndarray
    label: str
    n: int = 0


SWEEP_SHARE = 0.04   # of Budget.seconds: the sweep's probes end by then
SWEEP_PAIRS = 64     # ... or after this many without a time budget
SWEEP_ROWS = 512     # outputs per input of one probe (fewer for wide outputs)
SWEEP_KEEP = 3       # the most separating swept pairs join the screened candidates
SWEEP_SEED = 1 << 20  # spawn key of the probes' seeds (apart from the search's own streams)


def _sweep(mech: Mechanism, known: list, n_len: int, budget: Budget, args, root, paired,
           executor, trace: list) -> list[tuple]:
    """The :data:`SWEEP_KEEP` pairs of :func:`~privet.attacks.inputs.sweep_pairs` (one entry
    moved, at each level) whose outputs separate most on a small probe -- the largest
    two-sample Kolmogorov-Smirnov distance over the output entries, on
    :data:`SWEEP_ROWS` outputs per input -- probed in order until :data:`SWEEP_SHARE` of
    the time budget is used (:data:`SWEEP_PAIRS` without one). A leak confined to one
    entry of fifty, or to one step of an input threshold, then reaches the screening,
    where it is judged as every candidate is; the probes choose candidates only, so they
    never enter a bound. Recorded in ``trace`` (stage "sweep")."""
    seen = {pair_key(a, b) for a, b, _ in known}
    pairs = [p for p in sweep_pairs(mech, n_len) if pair_key(p[0], p[1]) not in seen]
    if not pairs:
        return []
    t0 = time.perf_counter()
    limit = None if budget.seconds is None else \
        SWEEP_SHARE * budget.stages * float(budget.seconds)
    if limit is None:
        pairs = pairs[:SWEEP_PAIRS]
    width = output_width(mech, pairs[0][0], args)
    # a call per output for per-sample boxes: their probes are short (the clock stops them)
    rows = 64 if per_call(mech) else max(64, min(SWEEP_ROWS,
                                                 (1 << 20) // max(int(width or 1), 1)))
    base = np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, SWEEP_SEED))
    seeds = [np.random.SeedSequence(base.entropy, spawn_key=(*base.spawn_key, i))
             for i in range(len(pairs))]
    scored: list[tuple[float, int]] = []
    drawn = draw_pairs(mech, [(a, b) for a, b, _ in pairs], rows, args, seeds, paired,
                       executor, 0)
    try:
        for i, (o1, o2) in enumerate(drawn):
            _widths(mech, o1, o2, pairs[i][0], pairs[i][1])
            ks = column_ks(rows_of(o1), rows_of(o2))
            scored.append((float(np.max(ks)), i))
            if limit is not None and time.perf_counter() - t0 > limit:
                break
    finally:
        drawn.close()
    scored.sort(key=lambda r: -r[0])
    kept = [pairs[i] for _, i in scored[:SWEEP_KEEP]]
    for (ks, _i), (a, b, label) in zip(scored, kept):
        trace.append({"stage": "sweep", "pattern": label, "d1": a.tolist(), "d2": b.tolist(),
                      "value": ks, "model": "two-sample KS", "n": rows,
                      "probed": len(scored), "seconds": round(time.perf_counter() - t0, 3)})
    return kept


def search_witness(mech: Mechanism, objective: Objective, *, budget: Budget = Budget(),
                   args: Mapping[str, Any] | None = None, seed: Any = None,
                   executor: Any = "inprocess", progress: bool = False,
                   start: tuple | None = None, length: int | None = None,
                   pairs: list | None = None, couple: bool = False
                   ) -> tuple[Candidate | None, list[dict], bool]:
    """The best (pair, event) by ``objective`` on a fresh selection sample, the trace of the
    search, and whether Ctrl-C cut it short. ``start=(x, x2, event or None)`` is screened
    first, always reaches the selection, and its event competes as given; ``pairs`` replaces
    the generated candidates (a list of (x, x2)). ``couple``: a mechanism without Replay
    runs x and x' with the same seeds (:data:`~privet.attacks.sampling.COUPLED`; the caller
    checked :func:`~privet.attacks.sampling.seeded`, and its objective reads coupled
    counts). An executor given by name (``'processes'``, ``'dask'``) is made once for the
    whole search (not a pool per sample) and closed at the end."""
    shared = get_executor(executor, mech) if isinstance(executor, str) else executor
    try:
        return _search_witness(mech, objective, budget, args, seed, shared, progress, start,
                               length, pairs, couple)
    finally:
        if shared is not executor:
            shared.close()


def _search_witness(mech: Mechanism, objective: Objective, budget: Budget, args, seed: Any,
                    executor: Any, progress: bool, start: tuple | None, length: int | None,
                    pairs: list | None, couple: bool = False
                    ) -> tuple[Candidate | None, list[dict], bool]:
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    s_screen, s_local, s_final, s_rng = root.spawn(4)
    rng = np.random.default_rng(s_rng)
    replay = paired_sampling(mech)
    # Replay's correlated samples, or a seeded black box's common random numbers
    paired: bool | str = COUPLED if couple and not replay else replay
    # float-exact views: automatic for black boxes only (a mechanism with Replay has the
    # exact reachability check of privet.floats)
    floats = "off" if replay and budget.float_features == "auto" else budget.float_features
    n_len = default_length(mech, length)
    cands: list[tuple] = []
    trace0: list[dict] = []  # what the squeeze of a slow black box's budget measured
    if start is not None:
        cands.append((np.asarray(start[0], float), np.asarray(start[1], float), "start"))
    if pairs is not None:
        cands += [(np.asarray(a, float), np.asarray(b, float), "given") for a, b in pairs]
    else:
        every = all_pairs(mech, n_len)
        if every is not None:
            cands += every
        else:
            cands += pattern_pairs(mech, n_len)
            for _ in range(budget.random_pairs):
                p = random_pair(mech, n_len, rng)
                if p is not None:
                    cands.append(p)
            cands += _sweep(mech, unique(cands), n_len, budget, args, root, paired, executor,
                            trace0)
    cands = unique(cands)
    if cands and budget.seconds is not None and per_call(mech):
        cands, budget = _squeeze(mech, cands, budget, args, root.spawn(1)[0], paired, trace0)
    width = output_width(mech, cands[0][0], args) if cands else None
    budget = _within_memory(budget, width)
    if not cands and mech.neighbors.kind == "add_remove" and \
            isinstance(mech.domain.length, int):
        raise InputError(
            f"add-remove neighbors differ in length by one, but the domain of {mech.name!r} "
            f"fixes the length at {mech.domain.length}, so no pair lies in it; "
            + advice(f"give a range of lengths, domain=privet.Domain(length=(1, "
                     f"{mech.domain.length}), ...)", "drop --length") + ".")
    if not cands:
        raise InputError(
            f"no pair of neighboring inputs of {mech.name!r} lies in its domain "
            f"({mech.domain.describe()}) under '{mech.neighbors.describe()}'; widen the domain "
            f"({advice('domain=...', '--domain')}) or change the neighbor relation "
            f"({advice('neighbors=...', '--neighbors')}).")
    trace: list[dict] = list(trace0)
    screened: list[_Screened] = []
    interrupted = False
    total = len(cands) + budget.iterations + budget.finalists
    t0 = time.perf_counter()

    pace = _Pace(t0, budget.seconds, budget.stages * SCREEN_SHARE)
    least = min(budget.n_train, LEAST if not width or width <= WIDE_ENTRIES
                else max(LEAST_ROWS, LEAST * WIDE_ENTRIES // int(width)))
    sized = 0       # the screening's sample, once the probe has timed it
    warming = True  # the first screened pair warms up (a process pool, imports)
    pair_bytes = 0  # the outputs of one screened pair, per pair drawn (measured)

    def screen(x, x2, label, ss, n=None, stage="screen", left=1, drawn=None) -> _Screened:
        nonlocal sized, warming, pair_bytes
        # fit and choose the event on one half, score that one event on the other half:
        # an honest estimate, so the pairs compete without the winner's curse of the
        # thresholds; without a size: n_train for the first two pairs (the first warms up
        # -- a process pool, imports --, the second is the timed probe), then the one size
        # the probe's pace projects for the ``left`` pairs still to screen (one size for
        # all: a smaller sample's larger spread would favor it in the halving); ``drawn``:
        # its outputs, drawn ahead (:func:`ahead`)
        if n is None:
            n = size_of(left)
        warm, warming = warming, False
        tick = time.perf_counter()
        o1, o2 = draw_pair(mech, x, x2, n, args, ss, paired, executor) if drawn is None \
            else next(drawn)
        _widths(mech, o1, o2, x, x2)
        pair_bytes = max(pair_bytes, (o1.nbytes + o2.nbytes) // max(len(o1), 1))
        h = len(o1) // 2
        with single_threaded():
            views = bit_views(floats, o1[:h], o2[:h], x, x2)
            h1, h2 = Batch(o1[:h]), Batch(o2[:h])  # fitted, then scored: derived once
            scores = _fit_scores(h1, h2, None, int(ss.generate_state(1)[0]), views)
            found = _score_events(scores, h1, h2, _screen_objective(objective, scores, budget))
            best = max(found, key=lambda r: r[0]) if found else None
            got = None
            if best is not None:
                event = _event(best[3], best[1], best[4], 0)
                a, b = _pair(o1[h:], o2[h:], best[1])
                got = _fixed_event(event, a, b, objective, shrink=0.0)
        if got is None:
            item = _Screened(-math.inf, 0.0, x, x2, label)
        else:
            item = _Screened(got[0], spread(got[1], len(o1) - h, bool(paired)), x, x2, label)
        if not warm:
            pace.add(time.perf_counter() - tick, n)
        item.n = n
        trace.append({"stage": stage, "pattern": label, "d1": x.tolist(), "d2": x2.tolist(),
                      "value": item.value, "model": best[2] if best else "", "n": n,
                      "seconds": round(time.perf_counter() - t0, 3)})
        return item

    def size_of(left: int) -> int:  # the screening's sample, for ``left`` pairs to screen
        nonlocal sized
        if pace.pairs and not sized:
            sized = pace.size(budget.n_train, least, left)
        return sized or budget.n_train

    def ahead(pairs: list, seeds: list, n: int):  # their outputs, drawn ahead in order
        return draw_pairs(mech, pairs, n, args, seeds, paired, executor, pair_bytes * n)

    def screen_all(items: list, seeds: list, n: int | None, stage: str, left: int,
                   advance) -> list[_Screened]:
        # without a size, the first two pairs one by one (the warm-up and the timed probe
        # that sizes the rest); the others with their outputs drawn ahead, so a process
        # pool's workers draw the next pairs while this process fits models on the last
        out, drawn, size = [], None, n
        serial = 0 if sized or n is not None else min(2, len(items))
        try:
            for k, ((x, x2, label), ss) in enumerate(zip(items, seeds)):
                if k == serial:  # the probe done: the rest drawn ahead, at one size
                    size = n if n is not None else size_of(left - k)
                    drawn = ahead([(a, b) for a, b, _ in items[k:]], seeds[k:], size)
                out.append(screen(x, x2, label, ss, size, stage, left - k, drawn))
                advance(1)
        finally:
            if drawn is not None:
                drawn.close()  # Ctrl-C or an error: the pairs drawn ahead are cancelled
        return out

    finals: list[_Finalist] = []
    rate = certify_rate = fitted = raced = 0.0
    with progress_bar(total, f"attack {mech.name}", enabled=progress) as advance:
        try:
            left = len(cands) + budget.iterations
            screened += screen_all(cands, s_screen.spawn(len(cands)), None, "screen", left,
                                   advance)
            left -= len(cands)
            if screened and budget.iterations:
                top = max(screened, key=lambda r: r.value)
                for ss in s_local.spawn(budget.iterations):
                    nxt = move(mech, top.x, top.x2, rng)
                    if nxt is not None:
                        item = screen(nxt[0], nxt[1], "local search", ss, stage="local search",
                                      left=left)
                        left -= 1
                        screened.append(item)
                        if item.value > top.value:
                            top = item
                    advance(1)
            screened = _halve(screened, budget, start, s_screen,
                              lambda its, seeds, n: screen_all(
                                  [(it.x, it.x2, it.label) for it in its], seeds, n,
                                  "rescreen", len(its), lambda k: None),
                              t0, pace.per_pair, sized or budget.n_train)
            chosen = _finalists(screened, budget.finalists, start)
            # the fits are sized from their measured pace, the neural network's apart (a
            # fit uses the whole sample, not half: the screening's pace twice over until
            # one is measured; the network's four times)
            cheap = _Pace(t0, budget.seconds, budget.stages * FIT_SHARE,
                          prior=2 * pace.per_pair)
            nets = _Pace(t0, budget.seconds, budget.stages * FIT_SHARE,
                         prior=4 * pace.per_pair)
            n_nets = min(budget.mlp_finalists, len(chosen)) if "mlp" in budget.models else 0
            for i, (item, ss) in enumerate(zip(chosen, s_final.spawn(len(chosen)))):
                net = i < n_nets
                models = budget.models if net else tuple(m for m in budget.models
                                                         if m != "mlp")
                rest = len(chosen) - max(i, n_nets)  # cheap fits still to come
                fits = nets if net else cheap
                size = fits.size(budget.n_fit, min(budget.n_fit, least),
                                 n_nets - i if net else rest,
                                 rest * cheap.per_pair if net else 0.0)
                tick = time.perf_counter()
                finals.append(_prepare(mech, item, budget, args, ss, paired, executor, start,
                                       models, floats, size))
                fits.add(time.perf_counter() - tick, size)
                advance(1)
            fitted = time.perf_counter() - t0
            race = _race(mech, finals, budget, objective, args, paired, executor,
                         progress, t0, cheap.per_pair)
            rate, certify_rate = race[0], _certify_rate(*race)
            _rejudge(finals, objective, budget.seconds, t0, certify_rate)
            raced = time.perf_counter() - t0
            _refine_leaders(mech, finals, objective, budget, args, paired, executor,
                            progress, t0, certify_rate, race)
        except KeyboardInterrupt:
            interrupted = True
        lead = _leader(finals)
        best: Candidate | None = None if lead is None else lead.best
        for fin in finals:
            got = fin.best
            trace.append({"stage": "select", "pattern": fin.item.label,
                          "d1": fin.item.x.tolist(), "d2": fin.item.x2.tolist(),
                          "value": got.value if got else None,
                          "model": got.model if got else "", "n": fin.n,
                          "seconds": round(time.perf_counter() - t0, 3),
                          "refined": fin.refined})
    if best is not None:
        best.extra["pairs_per_second"] = rate
        best.extra["certify_pairs_per_second"] = certify_rate
        # seconds from the start at which the fits, the race and the refining ended
        best.extra["stages"] = {"fits": round(fitted, 3), "race": round(raced, 3),
                                "refine": round(time.perf_counter() - t0, 3)}
    return best, trace, interrupted


def _rejudge(finals: list[_Finalist], objective: Objective, seconds: float | None,
             t0: float, rate: float) -> None:
    """With a time budget, judge the finalists again by the certificate of the fresh sample
    the time left affords at ``rate`` pairs per second, when the objective can be resized
    (``objective.resized(pairs)``: :func:`privet.search.blackbox.certificate_objective`):
    the planned sample may be larger than the time allows, and a rare event projected to
    certify on 2^27 pairs may certify nothing on the 2^22 the time gives."""
    resized = getattr(objective, "resized", None)
    pairs = affordable(seconds, t0, rate)
    if resized is None or pairs is None:
        return
    sized = resized(pairs)
    for fin in finals:
        if fin.counts is not None:
            _evaluate(fin, sized)


REFINE = 0.25       # of the pairs the time left affords: the winner's refining sample ...
REFINE_GAIN = 4     # ... drawn when it is at least this many times the winner's selection


def _refine(mech: Mechanism, finals: list[_Finalist], objective: Objective, budget: Budget,
            args, paired: bool | str, executor: Any, progress: bool, t0: float, rate: float,
            share: float = REFINE, race: tuple | None = None) -> int:
    """With a time budget, choose the race winner's threshold again on a larger sample.

    The race ends once the winner is clear, often while its threshold is still chosen on
    a sample much smaller than the fresh one: the objective's shrink (``SHRINK`` standard
    errors of the selection sample) then favors a common event over a rarer one of a
    larger ratio that the fresh sample could certify (report noisy max: ω ≤ 1.42 chosen
    over ω ≤ 1, 0.2469 instead of 0.25). The winner's best score -- its pair stays -- and
    the scores that may still beat it (:func:`_contenders`) get a fresh sample of ``share``
    (:data:`REFINE`) of the pairs the time left affords at ``rate`` (a power of two, when
    at least :data:`REFINE_GAIN` times its selection sample; not for an event never seen
    under x' in the race), their counts add to the race's, and the score, its threshold
    and orientation are chosen again, judged at the fresh sample the time then left
    affords. The fresh certifying sample is still drawn
    after it and alone certifies. Returns the pairs of the refining sample (0: none, also
    when the winner was refined already; the winner in ``finals`` is then a finalist of
    those scores). ``race``: the race's pairs per second and its chunks' seconds
    (:func:`_race`), to pace the refining sample by the time its scores take (without
    it, at ``rate``, the pace of one score)."""
    resized = getattr(objective, "resized", None)
    pairs = affordable(budget.seconds, t0, rate)
    ranked = [f for f in finals if f.best is not None]  # evaluated: index and counts set
    if resized is None or pairs is None or not ranked:
        return 0
    win = max(ranked, key=lambda f: f.best.value)
    if win.refined:  # refined already: its threshold was chosen on the larger sample
        return 0
    n11, _, n01 = win.best.counts
    if win.fitted[win.index][0] == "given" or n11 + n01 <= 0:
        # a given event has no threshold to choose; an event never seen under x' has a
        # bound that grows with the fresh sample (ln 4/3 lower for a quarter less), more
        # than a finer threshold would give
        return 0
    ks = _contenders(win, resized(pairs))
    if race is not None and len(ks) > 1:
        pairs = affordable(budget.seconds, t0, _certify_rate(*race, scores=len(ks)))
    size = 1 << int(math.floor(math.log2(max(share * pairs, 1.0))))
    if size < REFINE_GAIN * max(win.n, 1):
        return 0
    got, n, stopped, _ = _draw_halves(mech, win, [win.fitted[k][1] for k in ks],
                                      [win.grids[k][0] for k in ks], size, args, executor,
                                      progress, paired)
    if stopped:
        raise KeyboardInterrupt
    if got is None:
        return 0
    one = _Finalist(win.item, [win.fitted[k] for k in ks], [win.grids[k] for k in ks],
                    win.seeds, counts=[win.counts[k] for k in ks], n=win.n, first=win.first,
                    refined=int(n), independent=win.independent,
                    halves=None if win.halves is None else [([c[k] for k in ks], m)
                                                            for c, m in win.halves],
                    crossfit=win.crossfit)
    one.absorb(got)
    finals[finals.index(win)] = one
    return int(n)


CONTENDERS = 4  # scores of the winner refined together, at most (its best one among them)


def _contenders(win: _Finalist, objective: Objective) -> list[int]:
    """The winner's fitted scores that go to its refining sample (:func:`_refine`): its best
    one, and up to ``CONTENDERS - 1`` others whose best event on the counts so far projects,
    without the shrink, at least the winner's value -- the largest first. The shrink of two
    standard errors on the race's sample puts a rarer event of a larger ratio below a
    commoner one; the refining sample, many times larger, can tell them apart, and the
    event both its halves support (:func:`_agreed_picks`) is then chosen among these
    scores. Refined alone, the best score kept the race's choice: on prefix sums the count
    of steps beyond their pooled medians (ratio e^0.976 at probability 1.6e-3) won over the
    count beyond x's medians (e^1 at 9.8e-4), which projects 0.995 against 0.972 on 1.4e8
    fresh pairs."""
    items, meta, _ = _items(win, win.counts, win.n)
    plain = functools.partial(objective, shrink=0.0)
    best: dict[int, float] = {}
    for (model, _sc, _orient, k), ch in zip(meta, best_of_many(items, win.n, plain)):
        if ch is not None and model != "given" and not math.isnan(ch.value):
            best[k] = max(best.get(k, -math.inf), ch.value)
    others = sorted((k for k, v in best.items()
                     if k != win.index and v >= win.best.value), key=lambda k: -best[k])
    return [win.index, *others[: CONTENDERS - 1]]


REFINES = 3  # leaders refined in turn, at most (the i-th takes REFINE / 2^i of the pairs
             # the time then left affords: together at most 0.39 of it, where a quarter
             # each took 0.58 and shrank svt1's fresh sample to 3.3e7; 4.2e7 halved)


def _refine_leaders(mech: Mechanism, finals: list[_Finalist], objective: Objective,
                    budget: Budget, args, paired: bool | str, executor: Any, progress: bool,
                    t0: float, rate: float, race: tuple | None = None) -> int:
    """Refine the race's leader (:func:`_refine`) and judge the finalists again, until the
    leader is one already refined (at most :data:`REFINES` times, while the time left
    affords a refining sample). The refined leader's value is judged on many more pairs
    and often drops (its selection value was the best of a few finalists'); another
    finalist then leads on its small selection sample, with a threshold chosen where the
    shrink favors a common event (report noisy max: a leader refined to 0.246 lost to an
    unrefined 0.2576 on 2^19 pairs, whose threshold ω ≤ 1.367 past the plateau certified
    0.2470 where ω ≤ 1 gives 0.249). Each refining sample is half the share of the one
    before (:data:`REFINES`): the fresh sample alone certifies, and sparse vector's rare
    events lose most when it shrinks. The leader that then goes to the fresh sample is
    :func:`_leader`'s. Returns the pairs of all refining samples."""
    total = 0
    for i in range(REFINES):
        got = _refine(mech, finals, objective, budget, args, paired, executor, progress, t0,
                      rate, REFINE / 2 ** i, race)
        if not got:
            break
        total += got
        _rejudge(finals, objective, budget.seconds, t0, rate)
    return total


def _leader(finals: list[_Finalist]) -> _Finalist | None:
    """The finalist that goes to the fresh sample: the one of the largest value; once some finalist
    was refined (:func:`_refine`), the refined one of the largest shrunk value
    (:attr:`_Finalist.lower`), unless a finalist judged on its selection sample alone leads
    it clearly (its value less ``RACE_Z`` spreads above the refined one's value). Refined
    finalists have samples of different sizes (each refining sample half the one before),
    and the largest of their unshrunk values favors the noisiest: on report noisy max
    releasing its value (every pair an equally strong plateau; 30 simulated runs of three
    refined finalists, ``benchmarks/refined_leader.py``) the finalist so chosen projected a
    median of 0.24899 and a tenth percentile of 0.24871 on the fresh sample, against 0.24912
    and 0.24887 chosen by the shrunk value. The refining loop itself follows the largest
    value (:func:`_refine_leaders`): keeping the first refined leader there stopped it
    early, and sparse vector's close cells lost (svt3 0.2154 to 0.1708). Several pairs of
    report noisy max are equally strong (all above, all below, stretched); at seed 2 three
    leaders were refined in turn to about 0.251, and a fourth won on 2^19 pairs with 0.2565
    (spread about 0.01), its threshold ω ≤ 1.882 past the plateau: it certified 0.2398 where
    the refined plateau event certifies 0.2486. None when no finalist has an event."""
    ranked = [f for f in finals if f.best is not None]
    refined = [f for f in ranked if f.refined]
    if not refined:
        return max(ranked, key=lambda f: f.best.value, default=None)
    top = max(refined, key=lambda f: f.lower)
    clear = [f for f in ranked if not f.refined
             and f.best.value - RACE_Z * f.spread > top.best.value]
    return max([top, *clear], key=lambda f: f.best.value)


def _optimistic(item: _Screened) -> float:
    return item.value + item.spread


def _halve(screened: list[_Screened], budget: Budget, start: tuple | None,
           seeds: np.random.SeedSequence, rescreen, t0: float | None = None,
           per_pair: float = 0.0, n: int | None = None) -> list[_Screened]:
    """Successive halving of the screened pairs: while more than twice ``finalists`` are
    left and the samples stay within ``n_fit``, keep the better half by the optimistic
    estimate (value plus one spread: a rare event with a large ratio survives until its
    estimate is precise enough to judge) and screen it again on twice the samples
    (``rescreen(items, seeds, n)``, the whole round at once, its outputs drawn ahead) --
    while the round is projected (at the seconds per pair of a sample of the round before,
    the first at the screening's ``per_pair``) to end within :data:`HALVING_SHARE` of
    ``budget.seconds``. ``n``: the screening's sample (default ``n_train``); each round
    doubles it."""
    pool = [it for it in screened if math.isfinite(it.value)]
    n = budget.n_train if n is None else int(n)
    t0 = time.perf_counter() if t0 is None else t0
    while len(pool) > 2 * budget.finalists and 2 * n <= budget.n_fit:
        pool.sort(key=lambda it: -_optimistic(it))
        keep = pool[: (len(pool) + 1) // 2]
        if start is not None:
            keep += [it for it in pool[len(keep):] if it.label == "start"]
        if not _fits(t0, budget.seconds, budget.stages * HALVING_SHARE,
                     len(keep) * per_pair * 2 * n):
            break
        n *= 2
        tick = time.perf_counter()
        pool = rescreen(keep, seeds.spawn(len(keep)), n)
        per_pair = (time.perf_counter() - tick) / (len(keep) * n)  # this round's pace
        pool = [it for it in pool if math.isfinite(it.value)]
    return pool


def _finalists(screened: list[_Screened], k: int, start: tuple | None) -> list[_Screened]:
    """The start pair and the ``k`` best screened pairs by estimate plus one spread."""
    out, seen = [], set()
    if start is not None:
        for item in screened:
            if item.label == "start":
                out.append(item)
                seen.add(item.x.tobytes() + item.x2.tobytes())
                break
    for item in sorted(screened, key=lambda r: -_optimistic(r)):
        key = item.x.tobytes() + item.x2.tobytes()
        if len(out) >= k + (start is not None):
            break
        if key not in seen and math.isfinite(item.value):
            seen.add(key)
            out.append(item)
    return out


@dataclass(eq=False)  # compared by identity (the race asks whether the leader is in a list)
class _Finalist:
    """A finalist's fitted scores, their threshold grids and its selection counts so far."""

    item: _Screened
    fitted: list
    grids: list
    seeds: Any
    counts: list | None = None
    n: int = 0
    best: Candidate | None = None
    spread: float = math.inf
    upper: float = -math.inf  # its best event's value without the shrink
    first: int = 0  # the pairs its models were fitted on: the least first round
    index: int = -1  # the fitted score of its best event
    refined: int = 0  # the pairs of its refining sample (:func:`_refine`)
    # a refined finalist's event valued with its counts shrunk, the lesser of its halves'
    # (:func:`_agreed_picks`): what refined finalists are ranked by (:func:`_leader`)
    lower: float = -math.inf
    # independent samples: its tables' cells can be reordered; otherwise its pairs share
    # their noise (Replay's correlated samples, or a seeded black box's common random
    # numbers, sampling.COUPLED) and its spreads are the paired ones
    independent: bool = False
    # its selection sample as two disjoint halves [(counts, n), (counts, n)] (``counts``
    # and ``n`` are their sums): each chooses an event, the other judges it (:func:`_evaluate`)
    halves: list | None = None
    crossfit: bool = True  # judge its events cross-fitted on the halves (Budget.crossfit)

    def absorb(self, got: list[tuple[list, int]]) -> None:
        """Add the counts of two fresh halves (:func:`_draw_halves`)."""
        if self.halves is None:
            self.halves = [([np.zeros_like(a) for a in c], 0) for c, _ in got] \
                if self.counts is None else [(list(self.counts), self.n), (
                    [np.zeros_like(a) for a in self.counts], 0)]
        self.halves = [([a + b for a, b in zip(h, c)], m + k)
                       for (h, m), (c, k) in zip(self.halves, got)]
        self.counts = [a + b for a, b in zip(self.halves[0][0], self.halves[1][0])]
        self.n = self.halves[0][1] + self.halves[1][1]


def _prepare(mech: Mechanism, item: _Screened, budget: Budget, args,
             ss: np.random.SeedSequence, paired: bool | str, executor: Any,
             start: tuple | None, models: tuple, floats: Any = "off",
             size: int | None = None) -> _Finalist:
    """Fit the final ``models`` of one finalist on a fresh sample of ``size`` pairs (default
    ``n_fit``; and on the float-exact views ``floats`` gives it); their threshold grids."""
    s_fit, s_sel = ss.spawn(2)
    size = budget.n_fit if size is None else int(size)
    f1, f2 = draw_pair(mech, item.x, item.x2, size, args, s_fit, paired, executor)
    _widths(mech, f1, f2, item.x, item.x2)
    with single_threaded():
        views = bit_views(floats, f1, f2, item.x, item.x2)
        b1, b2 = Batch(f1), Batch(f2)  # fitted, then scored: derived once
        fitted = _fit_scores(b1, b2, models, int(s_fit.generate_state(1)[0]), views)
        grids = [candidates(np.r_[sc(b1), sc(b2)]) for _, sc in fitted]
    if start is not None and item.label == "start" and start[2] is not None:
        fitted.append(("given", _Indicator(start[2])))  # the given event competes as is
        grids.append((np.array([1.0]), False))
    return _Finalist(item, fitted, grids, s_sel, first=size, independent=not paired,
                     crossfit=budget.crossfit)


def _items(fin: _Finalist, counts: list, n: int, other: tuple | None = None
           ) -> tuple[list, list, list]:
    """Every event family of the finalist on ``counts`` among ``n`` pairs: the items of
    :func:`~privet.attacks.threshold.best_of_many` (grid, every, n11, n10, n01), their
    (model, score, orientation, fitted index), and with ``other`` = (counts, n) of another
    sample, the same families' items on it (a table's cells reordered on ``counts`` keep
    that order there)."""
    items, meta, others = [], [], []
    for k, ((model, sc), (g, every), arr) in enumerate(zip(fin.fitted, fin.grids, counts)):
        arr_o = None if other is None else other[0][k]
        for orient in range(1 if model == "given" else len(ORIENTATIONS)):
            grid, cs = oriented(arr, g, orient)
            items.append((grid, every, *cs))
            meta.append((model, sc, orient, k))
            if arr_o is not None:
                others.append((grid, every, *oriented(arr_o, g, orient)[1]))
        got = _reordered(sc, g, arr, n, None if other is None else (arr_o, other[1])) \
            if fin.independent else None
        if got is not None:
            table, grid2, arr2, arr2_o = got
            for orient in (0, 1):  # the new order's upper tail for D1, lower tail for D2
                grid, cs = oriented(arr2, grid2, orient)
                items.append((grid, True, *cs))
                meta.append((f"{model} (cells reordered)", table, orient, k))
                if arr2_o is not None:
                    others.append((grid, True, *oriented(arr2_o, grid2, orient)[1]))
    return items, meta, others


SHRINK_HELD = 2.0  # standard errors: the held-out counts that choose between the halves'
                  # events (a rare event's lucky held-out counts must not win it the choice)


def _evaluate(fin: _Finalist, objective: Objective) -> None:
    """The finalist's best (model, orientation, threshold) and its value.

    With its selection sample in two halves (:attr:`_Finalist.halves`), cross-fitted:
    each half chooses its best event by ``objective`` (with its shrink; and the best of its
    small tables' events without it, :func:`_half_picks`), the other half judges that
    event; the event whose held-out counts, shrunk by :data:`SHRINK_HELD` standard errors
    (:data:`SHRINK_TABLE` for a small table's raw pick), project the larger value is the
    finalist's, and its value is the one its held-out counts project without the shrink
    (honest: they did not choose it). The best of a hundred thousand thresholds over a few
    models and orientations is otherwise judged on the counts that chose it, and a rare
    event in a score's far tail wins by luck (sparse vector releasing its noisy answers: 22
    against 5 outputs among 4·10^6 pairs, ratio 1.5 for a mechanism whose true epsilon is
    0.5, and the fresh sample certified 0); the shrink on the held-out counts keeps a rare
    event whose held-out counts are lucky too from winning over a common one (report noisy
    max's plateau ω ≤ t, t ≤ min(a), against its far tail). The event's counts are its
    counts on both halves. A refined finalist's (:func:`_refine`) is the event both halves
    support (:func:`_agreed_picks`). Without halves (or with an empty one), or with
    ``fin.crossfit`` off (detect), the best event on the counts that chose it."""
    fin.best, fin.spread, fin.index, fin.lower = None, math.inf, -1, -math.inf
    seed = int(fin.seeds.generate_state(1)[0])
    x, x2 = fin.item.x, fin.item.x2
    items, meta, _ = _items(fin, fin.counts, fin.n)
    # the finalist's upper value: its best event without the shrink (a rare event with a
    # large ratio, which the shrink puts below a frequent one on a small sample, keeps
    # the finalist in the race until its samples can judge it)
    fin.upper = max((ch.value for ch in best_of_many(
        items, fin.n, functools.partial(objective, shrink=0.0)) if ch is not None),
        default=-math.inf)
    picks = []  # (value, meta, choice, counts on the whole selection sample)
    if not fin.crossfit or fin.halves is None or min(m for _, m in fin.halves) <= 0:
        picks = [(ch.value, mt, ch, ch.counts)
                 for mt, ch in zip(meta, best_of_many(items, fin.n, objective))
                 if ch is not None]
    elif fin.refined:
        picks = _agreed_picks(fin, objective)
    else:
        judged = []  # per half: its held-out value, shrunk and not, its event and counts
        for (ca, na), (cb, nb) in (fin.halves, fin.halves[::-1]):
            its, mts, held = _items(fin, ca, na, (cb, nb))
            for m, ch, z in _half_picks(fin, its, mts, na, objective):
                out = tuple(np.array([c]) for c in choice_counts(*held[m], ch))
                value, honest = (float(np.asarray(objective(*out, nb, shrink=v))[0])
                                 for v in (z, 0.0))
                judged.append((-math.inf if math.isnan(value) else value,
                               -math.inf if math.isnan(honest) else honest, mts[m], ch,
                               tuple(a + float(b[0]) for a, b in zip(ch.counts, out))))
        if judged:
            # the chosen half's own family: a table reordered on that half's counts
            _, honest, mt, ch, counts = max(judged, key=lambda r: r[0])
            picks = [(honest, mt, ch, counts)]
    for value, (model, sc, orient, k), ch, counts in picks:
        if fin.best is not None and value <= fin.best.value:
            continue
        a, b = _pair(x, x2, orient)
        event = sc.event if model == "given" else _event(sc, orient, ch, seed)
        fin.best = Candidate(a, b, event, value, counts, fin.n, model, fin.item.label)
        fin.spread, fin.index = spread(counts, fin.n, not fin.independent), k
        if fin.refined:
            fin.lower = ch.value


SHRINK_AGREED = 3.0  # standard errors of each half's counts: a refined finalist's agreed
                    # choice (the objective's own shrink is 2; see _agreed_picks)


def _agreed_picks(fin: _Finalist, objective: Objective) -> list:
    """A refined finalist's event (:func:`_refine`: its scores, on a large sample): the
    threshold and orientation both halves of its selection sample support
    (:func:`~privet.attacks.threshold.best_agreed`: the lesser of the two halves' shrunk
    values), valued at the lesser of the two halves' values without the shrink. Its
    threshold was chosen by one half and judged by the other before; on report noisy max
    releasing its value (ratio e^0.25 for every ω ≤ t below min(a)) that choice fell deep
    in the flat range, where the event has a sixth of the probability at min(a) and the
    fresh sample certified 0.2467-0.2474 (seed 3, twice) instead of about 0.249. Over 90
    simulated refined finalists (``benchmarks/refined_leader.py``) the agreed thresholds
    projected a median of 0.24911 and a tenth percentile of 0.24877 on the fresh sample,
    the cross-fitted ones 0.24906 and 0.24863 (0.24921 at best).

    A continuous score's threshold (a quantile grid, not every distinct score) is chosen
    with each half's counts shrunk by :data:`SHRINK_AGREED` (3) standard errors, not the
    objective's 2; a discrete score's few events keep 2. The scores' events are compared
    (and the finalist's :attr:`_Finalist.lower` set) by their agreed values at the shrink
    that chose each: compared at 2, a continuous choice of a leader refined on half the
    pairs won on lucky halves (the black box's seed 2: a threshold of probability 0.0135,
    deep in the plateau, over the first leader's 0.0248; ``benchmarks/refined_leader.py``).
    A refined finalist is judged at the certificate's pace, the size of the
    fresh sample (``_refine_leaders``), where a rarer event's fresh certificate loses least
    to a commoner one's, so the selection's own noise decides more. Simulated at 2.4·10^8
    fresh pairs (``benchmarks/refined_leader.py``'s model; the figures above judged at
    7.9·10^7) for one finalist refined on 2^24 pairs, 30 runs: a shrink of 2 put 7
    thresholds more than three units below min(a) (mean projection 0.24894), 3 put 2 there
    (0.24912), 4 one (0.24914). As :func:`_evaluate`'s picks: [(value, meta, choice,
    counts)], empty without a choice."""
    (ca, na), (cb, nb) = fin.halves
    its, mts, held = _items(fin, ca, na, (cb, nb))
    best = None
    choices: list = [None] * len(its)
    for discrete, judge in ((False, functools.partial(objective, shrink=SHRINK_AGREED)),
                            (True, objective)):  # every distinct score: a discrete one's
        group = [m for m, it in enumerate(its) if bool(it[1]) == discrete]
        for m, ch in zip(group, best_agreed([its[m] for m in group],
                                            [held[m] for m in group], na, nb, judge)):
            choices[m] = ch
    for m, ch in enumerate(choices):
        if ch is None:
            continue
        one, two = (tuple(np.array([c]) for c in choice_counts(*side[m], ch))
                    for side in (its, held))
        lower, honest = (min(float(np.asarray(objective(*c, k, **z))[0])
                             for c, k in ((one, na), (two, nb)))
                         # valued at the shrink that chose it, and without one
                         for z in ({} if its[m][1] else {"shrink": SHRINK_AGREED},
                                   {"shrink": 0.0}))
        lower = -math.inf if math.isnan(lower) else lower
        if best is None or lower > best[0]:
            best = (lower, (-math.inf if math.isnan(honest) else honest), mts[m],
                    replace(ch, value=lower))
    if best is None:
        return []
    _, honest, mt, ch = best
    return [(honest, mt, ch, ch.counts)]


SHRINK_TABLE = 1.0  # standard errors: the held-out counts of a small table's raw pick


def _small_table(score: Score) -> bool:
    """Whether ``score`` is a table of at most :data:`REORDER_CELLS` outputs: its events are
    the unions of its cells in one order, a few dozen candidates (the screening and the
    race choose among them without the shrink)."""
    return isinstance(score, Table) and len(score.rows) <= REORDER_CELLS


def _half_picks(fin: _Finalist, its: list, mts: list, n: int, objective: Objective
                ) -> list[tuple[int, Choice, float]]:
    """The events one half of a finalist's selection sample chooses (:func:`_evaluate`),
    each with the shrink its held-out counts are judged with: the best of every family by
    ``objective`` (with its shrink; judged with :data:`SHRINK_HELD`), and the best of its
    small tables (:func:`_small_table`; on independent samples) by the objective without the
    shrink (judged with :data:`SHRINK_TABLE`).

    The shrink guards a choice among the thousands of thresholds of a continuous score;
    on a small table it only hides a rare output of a large ratio behind a commoner union
    of a smaller one (sparse vector's answer "9 FALSE, then True", probability 0.006, lost
    to unions of several answers at the race's sample sizes: chosen again on the race's own
    counts with both rules, svt2's and svt4's leaders projected 0.0937 and 0.1714 at the
    fresh sample instead of 0.0889 and 0.1689, by the answers' exact probabilities). As in
    the screening (:func:`_screen_objective`), the table's raw choice is judged on the
    other half, so it cannot inflate the finalist's value."""
    small = [m for m, mt in enumerate(mts) if fin.independent and _small_table(mt[1])]
    picks = []
    for group, choose, z in ((range(len(its)), objective, SHRINK_HELD),
                             (small, functools.partial(objective, shrink=0.0), SHRINK_TABLE)):
        got = [(ch.value, m, ch) for m, ch in
               zip(group, best_of_many([its[m] for m in group], n, choose)) if ch is not None]
        if got:
            _, m, ch = max(got, key=lambda r: r[0])
            picks.append((m, ch, z))
    return picks


REORDER_CELLS = 64  # a table of at most this many cells is reordered on selection counts


def _reordered(score: Score, grid: np.ndarray, arr: np.ndarray, n: int,
               other: tuple | None = None
               ) -> tuple[Table, np.ndarray, np.ndarray, np.ndarray | None] | None:
    """A table (:class:`~privet.attacks.scores.Table`) of at most :data:`REORDER_CELLS`
    cells with its cells' values re-estimated on the selection counts ``arr`` (from
    :func:`~privet.attacks.threshold.tails` over its values ``grid``, among ``n`` pairs of
    independent samples): the new table, its grid and its counts -- and, with ``other`` =
    (arr, n) of another sample over the same grid, that sample's counts in the new order.

    The table's order comes from its fit sample; two rare cells of close ratios (sparse
    vector's answers "8 FALSE, then True" and "9 FALSE, then True") are often misordered
    there, and its threshold events are then only unions of them, of a lower ratio than the
    better cell alone. The selection sample is many times larger: the count of each cell
    (the difference of consecutive upper tails) orders them again. With independent samples
    an event's counts are its two marginal counts (n11 is their pairing by draw index, any
    pairing is valid; here the expected k1 k2 / n). The new order is chosen on the counts
    that judge it, the objective's shrink stands against that, and the fresh sample alone
    certifies."""
    if not isinstance(score, Table) or len(grid) > REORDER_CELLS or len(grid) < 2:
        return None

    def cells_of(arr_, n_):  # each cell's counts (below grid[0], then [grid[i], grid[i+1]))
        up = arr_[0]
        return (-np.diff(np.r_[n_, up[0] + up[1], 0.0]), -np.diff(np.r_[n_, up[0] + up[2], 0.0]))

    c1, c2 = cells_of(arr, n)
    value = smoothed_log_ratio(c1, c2, n, n)  # the table's own estimate, on these counts
    cells = np.searchsorted(grid, np.asarray(score.values, float), side="right")
    rest = int(np.searchsorted(grid, score.default, side="right"))  # 0: below the grid
    table = Table(score.rows, tuple(value[cells].tolist()), float(value[rest]))
    used = np.union1d(cells, [rest])
    new = np.unique(value[used])  # ascending, distinct
    at = np.searchsorted(new, value[used])

    def tails_of(d1, d2, n_):  # the tails of the new order, as tails() gives them
        g1 = np.bincount(at, weights=d1[used], minlength=len(new))
        g2 = np.bincount(at, weights=d2[used], minlength=len(new))
        ge1, ge2 = np.cumsum(g1[::-1])[::-1], np.cumsum(g2[::-1])[::-1]  # {s >= new[j]}
        le1, le2 = np.cumsum(g1), np.cumsum(g2)                          # {s <= new[j]}

        def three(a, b):
            a11 = a * b / max(n_, 1)
            return a11, a - a11, b - a11

        return np.array([three(ge1, ge2), [v[::-1] for v in three(le1, le2)]], dtype=float)

    held = None if other is None else tails_of(*cells_of(*other), other[1])
    return table, new, tails_of(c1, c2, n), held


RACE_Z = 2.0        # a finalist stays while its value plus RACE_Z spreads reaches the best
RACE_SPREAD = 2e-3   # ... and stops drawing once its spread is this small, or RACE_REL of
RACE_REL = 0.05      # the leader's value (finer choices than that change little)
CURSE = 0.1          # out of time, the leader goes on while its spread is above this share
                     # of its value (its lead may be luck)


def spread(counts: tuple, n: int, coupled: bool = False) -> float:
    """The standard error of the event's estimated log-ratio ln(k1/k2) (binomial counts).
    ``coupled``: of pairs that share their noise (Replay, or common random numbers), by the
    delta method on the pairs' multinomial counts, sqrt((n10 + n01) / (k1 k2)) (at least
    one discordant pair): the two counts move together, and only the discordant pairs
    carry noise (for independent pairs the same formula gives the binomial one on
    average)."""
    n11, n10, n01 = counts
    k1, k2 = max(n11 + n10, 1.0), max(n11 + n01, 1.0)
    if coupled:
        return math.sqrt(max(n10 + n01, 1.0) / (k1 * k2))
    return math.sqrt(max(1 - k1 / n, 0.0) / k1 + max(1 - k2 / n, 0.0) / k2)


def _race(mech: Mechanism, finals: list[_Finalist], budget: Budget, objective: Objective,
          args, paired: bool | str, executor: Any, progress: bool, t0: float | None = None,
          prior: float = 0.0) -> tuple[float, np.ndarray]:
    """Successive doubling of the selection samples: every finalist starts with a first
    round of ``n_fit`` pairs -- with ``budget.seconds``, of the largest power-of-two share of
    it (at least the finalist's fit sample) that the first round's pace projects to end
    within :data:`FIRST_SHARE` (``prior`` seconds per pair, the fits', until the race has
    measured its own); after each round
    the leader is the finalist of the best value, and a challenger -- any other finalist,
    also one left behind in an earlier round -- whose value plus ``RACE_Z`` spreads (the
    log-ratio's standard error) reaches the leader's doubles its own sample while its spread
    is not yet below ``RACE_SPREAD`` or ``RACE_REL`` of the leader's value, or while it has
    fewer samples than the leader (the objective shrinks a value by its own spread, so a
    challenger judged on fewer samples than the leader would lose for want of samples, not
    of power); the leader doubles while its spread is not fine -- except, with
    ``budget.seconds``, a clear leader (:func:`_clear`: its value less ``RACE_Z`` spreads
    beats every other finalist's upper value) whose spread is within :data:`CURSE` of its
    value: the race then ends and its time goes to the fresh sample, which alone
    certifies; all up to ``n_select``.
    Counts add up over rounds (each round draws fresh chunks, in two halves: a finalist's
    value is cross-fitted, :func:`_evaluate`), so the racing costs little more than the
    largest sample it needs. With ``budget.seconds``, a round is drawn whole
    only while it is projected (at the pairs per second of the rounds so far) to end within
    :data:`RACE_SHARE` of it; after that only the leader (while its spread is above
    :data:`CURSE` of its value: a rare event whose lucky counts lead on a small sample must
    not win for want of time, the winner's curse the race exists to undo) and the strongest
    challenger behind it in samples go on, while their round is projected to end within
    :data:`LATE_SHARE`.
    Returns the pairs per second of the race's streamed chunks (0 when nothing was
    drawn) and the chunks' seconds (:data:`TIMES`), from which :func:`_certify_rate`
    derives a certifying sample's pace."""
    t0 = time.perf_counter() if t0 is None else t0
    pace = _Pace(t0, budget.seconds, budget.stages * FIRST_SHARE, prior=prior)
    top = min(budget.n_fit, budget.n_select)
    goal: dict[int, int] = {}
    live = list(finals)
    drawn, spent = 0, 0.0
    seconds = np.zeros(3)  # drawing, scoring, slowest score (sampling.TIMES)
    while True:
        for i, fin in enumerate(live):
            tick = time.perf_counter()
            if fin.n == 0:  # its first round, sized by the first round's pace
                goal[id(fin)] = pace.size(top, min(fin.first or top, top), len(live) - i)
            add = goal[id(fin)] - fin.n
            if add <= 0:
                continue
            got, n, stopped, took = _draw_halves(
                mech, fin, [sc for _, sc in fin.fitted], [g for g, _ in fin.grids], add,
                args, executor, progress, paired)
            seconds += took
            if got is not None:
                fin.absorb(got)
                drawn += n
                _evaluate(fin, objective)
            spent += time.perf_counter() - tick
            pace.add(time.perf_counter() - tick, add)
            if stopped:
                raise KeyboardInterrupt
        rate = drawn / spent if spent > 0 else 0.0
        live = _next_round(finals, budget, t0, rate)
        for fin in live:
            goal[id(fin)] = min(2 * fin.n, budget.n_select)
        if not live:
            return rate, seconds


def _draw_halves(mech: Mechanism, fin: _Finalist, scores: list, grids: list, n: int, args,
                 executor: Any, progress: bool, paired: bool | str
                 ) -> tuple[list | None, int, bool, np.ndarray]:
    """``n`` fresh selection pairs of the finalist for ``scores`` over ``grids``
    (:func:`~privet.attacks.sampling.select_counts`) as two halves drawn one after the
    other: their [(counts, pairs), (counts, pairs)] (None when either drew nothing), the
    pairs of both, whether Ctrl-C stopped the drawing, and the chunks' seconds."""
    got, done, took = [], 0, np.zeros(len(TIMES))
    for size, ss in zip((n // 2, n - n // 2), fin.seeds.spawn(2)):
        counts, m, stopped, t = select_counts(
            mech, fin.item.x, fin.item.x2, scores, grids, size, args=args, seed=ss,
            executor=executor, progress=progress, paired=paired)
        took = took + t
        done += m
        if stopped or counts is None:
            return None, done, stopped, took
        got.append((counts, m))
    return got, done, False, took


def _certify_rate(rate: float, seconds: np.ndarray, scores: int = 1) -> float:
    """A certifying sample's pairs per second from the race's ``rate`` and its chunks'
    seconds (:data:`TIMES`): scaled by the seconds to draw and score every model over the
    seconds to draw and score the slowest model alone (a certificate scores one event; the
    pace comes out too low, never too high, by the thresholds' counting and the race's
    bookkeeping, both left in; ``scores`` of them: at most that
    many times the slowest, at most every model -- a refining sample's scores,
    :func:`_refine`)."""
    one = seconds[0] + min(seconds[1], scores * seconds[2])
    return rate * (seconds[0] + seconds[1]) / one if one > 0 else rate


def _next_round(finals: list[_Finalist], budget: Budget, t0: float, rate: float
                ) -> list[_Finalist]:
    """The finalists that double their samples in the race's next round (:func:`_race`)."""
    ranked = sorted((f for f in finals if f.best is not None), key=lambda f: -f.best.value)
    if not ranked:
        return []
    leader, lead = ranked[0], ranked[0].best.value
    fine = max(RACE_SPREAD, RACE_REL * abs(lead) if math.isfinite(lead) else 0.0)
    challengers = [f for f in ranked[1:] if f.n < budget.n_select
                   and _upper(f) >= lead and (f.spread > fine or f.n < leader.n)]
    go = [leader] if leader.spread > fine and leader.n < budget.n_select else []
    if go and budget.seconds is not None and _clear(leader, ranked[1:]) \
            and leader.spread <= CURSE * abs(lead):
        return []  # a clear leader: the race's time goes to the fresh sample

    def seconds_of(round_: list[_Finalist]) -> float:  # doubling their samples, at ``rate``
        more = sum(min(2 * f.n, budget.n_select) - f.n for f in round_)
        return more / rate if rate else 0.0

    if not _fits(t0, budget.seconds, budget.stages * RACE_SHARE, seconds_of(go + challengers)):
        # out of time: only a leader whose estimate is still too coarse to trust goes on
        # (a rare event whose lucky counts lead on a small sample must not win for want
        # of time), with its strongest challenger behind it in samples
        go = go if leader.spread > CURSE * abs(lead) else []
        behind = [f for f in challengers if f.n < leader.n]
        challengers = sorted(behind, key=lambda f: -_upper(f))[: len(go)]
        if not _fits(t0, budget.seconds, budget.stages * LATE_SHARE,
                     seconds_of(go + challengers)):
            return []  # and not past LATE_SHARE: the fresh sample needs its time
    return go + challengers


def _clear(leader: _Finalist, others: list[_Finalist]) -> bool:
    """Whether the leader's lower value (its value less ``RACE_Z`` spreads) is above every
    other finalist's upper value (:func:`_upper`): more selection samples would not change
    the winner, only refine its threshold."""
    lower = leader.best.value - RACE_Z * leader.spread
    return all(_upper(f) < lower for f in others)


def _upper(fin: _Finalist) -> float:
    """A finalist's optimistic value: its value plus ``RACE_Z`` spreads, or its best event's
    value without the shrink, whichever is larger."""
    return max(fin.best.value + RACE_Z * fin.spread, fin.upper)


@dataclass(frozen=True, eq=False)
class _Indicator(Score):
    """A given event as a 0/1 score (its threshold event at 1 is the event itself)."""

    event: Any = None
    kind = "indicator"

    def __call__(self, outputs):
        return self.event.indicator(raw(outputs)).astype(float)

    def describe(self):
        return self.event.describe()

    def spec(self):
        return {"kind": self.kind, "event": self.event.spec()}
