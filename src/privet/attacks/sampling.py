"""Samples of a pair of inputs, and the certifying sample streamed through the executors.

:func:`draw_pair` gives outputs of M(x) and M(x') for training and selection: *paired* under
Replay when the mechanism runs on privet's noise API (the i-th outputs share their noise,
DP-Finder's correlated sampling), *coupled* for a black box that follows the seed it is
given (:data:`COUPLED`: both inputs run with the same seeds, common random numbers),
independent otherwise (the i-th outputs are then just the i-th draws). :func:`certify`
draws the fresh certifying sample in chunks --
each chunk task samples both inputs, evaluates the event and returns only its counts
(n11, n10, n01), so memory stays flat for 10^7-10^8 samples -- on any executor (in-process,
process pool, Dask; chunk seeds come from the run's seed, so every executor gives the same
counts), with a progress bar; Ctrl-C keeps the chunks done and marks the result interrupted.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.events import Event
from ..core.mechanism import Mechanism
from ..core.noise import Replay, Sampler
from ..execution import DEFAULT_CHUNK, chunk_for, chunk_rng, chunk_sizes, collect, run_chunks
from ..execution.progress import progress_bar
from ..execution.threads import single_threaded
from ..stats.bounds import SHARE, conditional_bounds, either_bounds, paired_bounds, union_bounds
from .features import Batch
from .threshold import tails

__all__ = ["COUPLED", "Certificate", "certify", "draw_pair", "draw_pairs",
           "paired_sampling", "per_call", "seeded", "select_counts", "stream"]


def paired_sampling(mech: Mechanism) -> bool:
    """True when M(x) and M(x') can share their noise (Replay)."""
    return mech.supports("replay")


# the ``paired`` of a sample whose runs of M(x) and M(x') are given generators of the same
# seed (common random numbers for a black box whose outputs follow the generator privet
# gives it: :func:`seeded`); ``True`` is Replay, ``False`` independent runs
COUPLED = "seed"
PROBE = 64  # outputs per run of the seeding probe (16 for per-sample black boxes)


def per_call(mech: Mechanism) -> bool:
    """Whether every output of ``mech`` comes from a call with a random stream of its own
    (the runners of :func:`privet.core.mechanism.from_statdp` and
    :func:`~privet.core.mechanism.from_blackbox` say so): runs of two inputs sharing their
    seeds are then pairs independent of each other, as a paired certificate needs. Other
    black boxes -- a vectorized ``m(a, n)``, an adapter drawing a chunk's outputs from one
    generator -- draw from one stream, which an input may consume at its own pace: their
    coupled pairs may depend on each other, so they are certified on independent runs."""
    return bool(getattr(mech.fn, "streams", False))


def seeded(mech: Mechanism, x, args: Mapping[str, Any] | None = None) -> bool:
    """Whether a mechanism without Replay gives the same outputs for the same generator: a
    vectorized ``m(a, n)`` or a black box drawing from the generator privet passes it or
    from NumPy's or Python's global one, which privet seeds from it. Its runs on x and x'
    can then share their seed (:data:`COUPLED`), as correlated sampling shares the noise:
    the outputs of two neighbors then differ only where the change of input moves them,
    and an event's estimated ratio rests on those few discordant pairs, not on two
    independent counts. Checked by running it twice on ``x`` with the same seed."""
    if mech.supports("replay"):
        return False
    n = PROBE // 4 if mech.per_sample else PROBE
    ss = np.random.SeedSequence(0x5EED)
    runs = [np.asarray(mech.run(Sampler(np.random.default_rng(ss), n), x, args,
                                check_input=False), dtype=float) for _ in range(2)]
    return runs[0].shape == runs[1].shape and bool(
        np.array_equal(runs[0], runs[1], equal_nan=True))


def _seeds(seed: Any, k: int) -> list[np.random.SeedSequence]:
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    return [np.random.SeedSequence(ss.entropy, spawn_key=(*ss.spawn_key, i)) for i in range(k)]


def draw_pair(mech: Mechanism, x, x2, n: int, args: Mapping[str, Any] | None, seed: Any,
              paired: bool | None = None, executor: Any = "inprocess"
              ) -> tuple[np.ndarray, np.ndarray]:
    """``n`` outputs of M(x) and of M(x') (paired under Replay when ``paired``, default:
    whenever the mechanism can; with the same seed for both when ``paired`` is
    :data:`COUPLED`)."""
    paired = paired_sampling(mech) if paired is None else paired
    if paired == COUPLED:
        s1 = _seeds(seed, 1)[0]
        return (np.asarray(collect(mech, x, int(n), args, seed=s1, executor=executor)),
                np.asarray(collect(mech, x2, int(n), args, seed=s1, executor=executor)))
    if paired:
        rng = np.random.default_rng(_seeds(seed, 1)[0])
        rep = Replay(Sampler(rng, int(n)), fresh=True)  # a draw that changes is drawn afresh
        o1 = mech.run(rep, x, args, check_input=False)
        o2 = mech.run(rep.rewind(), x2, args, check_input=False)
        return np.asarray(o1), np.asarray(o2)
    s1, s2 = _seeds(seed, 2)
    return (np.asarray(collect(mech, x, int(n), args, seed=s1, executor=executor)),
            np.asarray(collect(mech, x2, int(n), args, seed=s2, executor=executor)))


AHEAD_BYTES = 1 << 28  # the outputs drawn ahead by draw_pairs, at most (256 MiB)


def _draw_job(mech: Mechanism, x, x2, n: int, args, seed: Any, paired: bool
              ) -> tuple[np.ndarray, np.ndarray]:
    return draw_pair(mech, x, x2, n, args, seed, paired, "inprocess")


def draw_pairs(mech: Mechanism, pairs: list[tuple], n: int, args: Mapping[str, Any] | None,
               seeds: list, paired: bool, executor: Any, pair_bytes: int = 0):
    """:func:`draw_pair` of each (x, x') in ``pairs`` with its seed in ``seeds``, yielded in
    order, each pair drawn whole by one task of the executor: a process pool or a cluster
    draws the next pairs while the caller fits models on the last (the screening of a
    witness search), an in-process executor draws each when it is asked for, as
    :func:`draw_pair` would. The tasks go to the executor in groups whose outputs
    (``pair_bytes`` each, when known) stay under :data:`AHEAD_BYTES`. The outputs are
    those :func:`draw_pair` gives for the same seed, whatever the executor."""
    group = max(1, AHEAD_BYTES // pair_bytes) if pair_bytes > 0 else 8
    for lo in range(0, len(pairs), group):
        jobs = [(mech, x, x2, int(n), args, ss, paired)
                for (x, x2), ss in zip(pairs[lo:lo + group], seeds[lo:lo + group])]
        yield from executor.map(_draw_job, jobs)


def _outputs(mech: Mechanism, xa, xb, args, seeds: tuple, index: int, size: int,
             paired: bool) -> tuple[np.ndarray, np.ndarray]:
    sa, sb = seeds[0], seeds[1]
    if paired == COUPLED:
        o1 = mech.run(Sampler(chunk_rng(sa, index), size), xa, args, check_input=False)
        o2 = mech.run(Sampler(chunk_rng(sa, index), size), xb, args, check_input=False)
    elif paired:
        rep = Replay(Sampler(chunk_rng(sa, index), size), fresh=True)
        o1 = mech.run(rep, xa, args, check_input=False)
        o2 = mech.run(rep.rewind(), xb, args, check_input=False)
    else:
        o1 = mech.run(Sampler(chunk_rng(sa, index), size), xa, args, check_input=False)
        o2 = mech.run(Sampler(chunk_rng(sb, index), size), xb, args, check_input=False)
    return o1, o2


def _chunk(mech: Mechanism, xa: np.ndarray, xb: np.ndarray, args, seeds: tuple, index: int,
           size: int, paired: bool, event: Event) -> np.ndarray:
    """One chunk of the certifying sample: (n11, n10, n01) of the event on M(x), M(x')."""
    o1, o2 = _outputs(mech, xa, xb, args, seeds, index, size, paired)
    coins = chunk_rng(seeds[2], index)
    with single_threaded():
        e1, e2 = event.indicator(o1, coins), event.indicator(o2, coins)
    n11 = int(np.count_nonzero(e1 & e2))
    return np.array([n11, int(np.count_nonzero(e1)) - n11, int(np.count_nonzero(e2)) - n11])


def _select_chunk(mech: Mechanism, xa: np.ndarray, xb: np.ndarray, args, seeds: tuple,
                  index: int, size: int, paired: bool, scores: list, grids: list) -> list:
    """One chunk of a selection sample: for each score, the counts (n11, n10, n01) of the
    events ``{s >= t}`` and ``{s <= t}`` over its threshold grid
    (:func:`privet.attacks.threshold.tails`); an array (2, 3, len(grid)) per score, then the
    chunk's seconds (:data:`TIMES`: drawing the outputs, scoring them all, the slowest
    score alone)."""
    start = time.perf_counter()
    o1, o2 = _outputs(mech, xa, xb, args, seeds, index, size, paired)
    drawn = time.perf_counter()
    b1, b2 = Batch(o1), Batch(o2)  # what several scores derive from the outputs, once
    out, slowest = [], 0.0
    with single_threaded():
        for sc, ts in zip(scores, grids):
            tick = time.perf_counter()
            out.append(tails(sc(b1), sc(b2), ts))
            slowest = max(slowest, time.perf_counter() - tick)
    return out + [np.array([drawn - start, time.perf_counter() - drawn, slowest])]


TIMES = ("draw", "score", "slowest")  # the seconds a selection chunk reports, in order


def _add(a, b):
    return [x + y for x, y in zip(a, b)] if isinstance(a, list) else a + b


def stream(mech: Mechanism, task, x, x2, n: int, extra: tuple, *, args, seed: Any,
           executor: Any, progress: bool, label: str, paired: bool,
           chunk: int = DEFAULT_CHUNK) -> tuple[Any, int, bool]:
    """Run ``task`` over the chunks of ``n`` pairs of (x, x'), summing its results in
    chunk order: ``(total, pairs done, interrupted)``. Chunk i draws from generators
    spawned from ``seed`` with key i, whatever the executor."""
    xa, xb = mech.domain.check(x), mech.domain.check(x2)
    resolved = mech.resolve_args(args)
    sizes = chunk_sizes(int(n), chunk_for(mech, chunk, xa, resolved, n))
    seeds = tuple(_seeds(seed, 3))
    jobs = [(mech, xa, xb, resolved, seeds, i, s, paired, *extra)
            for i, s in enumerate(sizes)]
    with progress_bar(int(n), label, enabled=progress) as advance:
        red = run_chunks(mech, task, jobs, sizes, executor, _add, advance, extra)
    return red.value, red.n, red.interrupted


def select_counts(mech: Mechanism, x, x2, scores: list, grids: list, n: int, *, args,
                  seed: Any, executor: Any = None, progress: bool = False,
                  paired: bool | None = None
                  ) -> tuple[list | None, int, bool, np.ndarray]:
    """The summed :func:`_select_chunk` counts of ``n`` fresh pairs, streamed, and the
    chunks' summed seconds (:data:`TIMES`; zeros when nothing was drawn)."""
    paired = paired_sampling(mech) if paired is None else paired
    total, done, interrupted = stream(
        mech, _select_chunk, x, x2, n, (list(scores), list(grids)), args=args, seed=seed,
        executor=executor, progress=progress, label=f"select {mech.name}", paired=paired)
    if total is None:
        return None, done, interrupted, np.zeros(len(TIMES))
    return total[:-1], done, interrupted, total[-1]


@dataclass(frozen=True)
class Certificate:
    """A certified lower bound from a fresh sample: ``value`` (eps >= value with
    ``confidence``), the certificate ``method`` ('paired', 'either', 'union' or
    'conditional'), the counts, ``n`` pairs drawn, ``unbounded`` (the event never occurred
    under x': the bound grows with n), ``interrupted`` (Ctrl-C: the bound covers the chunks
    done) and ``paired`` (the pairs shared their noise: Replay, or ``coupled`` seeds)."""

    value: float
    method: str
    confidence: float
    n11: int
    n10: int
    n01: int
    n: int
    interrupted: bool = False
    share: float = SHARE
    coupled: bool = False  # 'paired' on runs that shared their seeds (a per-sample black box)
    paired: bool = False  # the pairs shared their noise (Replay or coupled seeds)

    @property
    def counts(self) -> tuple[int, int]:
        return self.n11 + self.n10, self.n11 + self.n01

    @property
    def unbounded(self) -> bool:
        k1, k2 = self.counts
        return k2 == 0 and k1 > 0

    @property
    def estimate(self) -> float:
        k1, k2 = self.counts
        if k2 == 0:
            return math.inf if k1 > 0 else math.nan
        return math.log(k1 / k2) if k1 > 0 else -math.inf

    def describe(self) -> str:
        if self.method == "either":
            pairs = ("pairs of runs sharing their seeds, independent of each other"
                     if self.coupled else "paired samples" if self.paired else
                     "independent samples taken as pairs")
            return either_text(pairs, self.share)
        if self.method == "paired" and self.coupled:
            return ("Clopper-Pearson on pairs of runs sharing their seeds, independent of each "
                    "other (union bound over 3)")
        return {"paired": "Clopper-Pearson on paired samples (union bound over 3)",
                "union": "Clopper-Pearson on independent samples (union bound over 2)",
                "conditional": "exact conditional test on discordant pairs of independent "
                               f"samples (odds ratio at {self.share:g} of alpha, union bound "
                               "over 3)"}[self.method]


def either_text(pairs: str, share: float) -> str:
    """How the either-side certificate of these ``pairs`` is described."""
    return (f"Clopper-Pearson on the {pairs} with the event on either side (x' at "
            f"{share:g} of alpha, union bound over 2)")


def bound_of(method: str, n11, n10, n01, n, confidence: float, share: float = SHARE) -> float:
    """The certificate ``method`` on these counts."""
    if n <= 0:
        return -math.inf
    if method == "paired":
        return float(paired_bounds(n11, n10, n01, n, confidence))
    if method == "either":
        return float(either_bounds(n11, n10, n01, confidence, share))
    if method == "conditional":
        return float(conditional_bounds(n10, n01, n11 + n10, n11 + n01, n, confidence, share))
    return float(union_bounds(n11 + n10, n, n11 + n01, n, confidence))


def certify(mech: Mechanism, x, x2, event: Event, n: int, *, confidence: float = 0.9,
            method: str | None = None, args: Mapping[str, Any] | None = None,
            seed: Any = None, executor: Any = None, progress: bool = False,
            chunk: int = DEFAULT_CHUNK, share: float = SHARE, coupled: bool = False
            ) -> Certificate:
    """The certified lower bound of ``event`` for ``(x, x')`` from ``n`` fresh pairs.

    ``method``: 'paired' (Replay; the default when the mechanism supports it), 'either'
    (paired samples where the mechanism supports them, else independent runs taken as
    pairs; ``share`` of alpha goes to the bound on x'), 'union' or 'conditional'
    (independent samples; default 'union'; ``share`` of alpha goes to its odds-ratio bound,
    fixed before the sample is drawn). ``coupled`` with 'paired' or 'either' on a
    per-sample black box without Replay: the i-th calls on x and x' share their random
    stream (:data:`COUPLED`; each call has a stream of its own, so the pairs are
    independent of each other, as both certificates need). Chunk i of the run draws
    from generators spawned from ``seed`` with key i, whatever the executor.
    """
    paired: bool | str = paired_sampling(mech) if method is None else \
        method in ("paired", "either")
    method = method or ("paired" if paired else "union")
    coupled = bool(coupled and paired and not mech.supports("replay") and per_call(mech))
    if coupled:
        paired = COUPLED
    elif paired and not mech.supports("replay"):
        method, paired = ("union" if method == "paired" else method), False
    total, done, interrupted = stream(mech, _chunk, x, x2, n, (event,), args=args, seed=seed,
                                      executor=executor, progress=progress,
                                      label=f"certify {mech.name}", paired=paired, chunk=chunk)
    n11, n10, n01 = (int(v) for v in (total if total is not None else (0, 0, 0)))
    value = bound_of(method, n11, n10, n01, done, confidence, share)
    return Certificate(value, method, float(confidence), n11, n10, n01, done, interrupted,
                       share, coupled, bool(paired))
