"""StatDP's counterexample detection (Algorithm 1 of Ding et al., CCS 2018), sequential.

A :class:`Session` does the expensive work once per mechanism and input list:

1. input generation (Algorithm 4): neighbor patterns (Table 1, both orientations) and
   arguments (least noise for ``noise_args``, MaxSMT over a
   :class:`~privet.detect.trace.Trace` for the others, all pairs solved together by
   :func:`~privet.detect.trace.maxsmt_pairs`, a small grid when the mechanism cannot be
   traced);
2. a pilot sample per input fixes the output schema and the event search space
   (:mod:`privet.detect.space`);
3. selection samples are reduced to histograms, cumulatively at fixed sizes (the levels of
   :attr:`Session.grid`): in the sequential design (default) the pilot itself is level 0,
   and level k, for look k, is ``n_select`` times the look's share of the budget. At each
   look the ``LEADERS`` best pairs of the previous selection select at the look's level and
   every other pair ``LAG`` levels behind (a quarter of the samples: a violation the pilot
   cannot see still surfaces), all of them at the last look, which so selects as the
   fixed-size test does. When a look's event does not reject and shows no excess (p > 1/2)
   or is clearly inside the null, the futility stop is decided on the event that every
   pair, at the look's full level, selects (a lagging pair must not hide a violation). In
   the fixed design, ``n_select`` fresh samples per input;
4. for each test epsilon, EventSelector (Algorithm 3) scores every candidate of every pair
   from those histograms, and the chosen (D1, D2, args, E) gets the final HypothesisTest
   (line 4 of Algorithm 1) on *fresh* samples of D1 and D2, drawn from their own seed
   stream (shared across test epsilons): every final test uses samples that played no
   part in selecting its event.

The final test is group-sequential (:mod:`privet.stats.sequential`): fresh samples come in
batches at looks 2,000, 4,000, ... up to ``n_final`` per side, the event is re-selected on
the grown selection samples before each look, and the test stops as soon as a look rejects
at the level the alpha-spending function gives it (a violation), or the event is clearly
inside the null (futility: no violation found). The union bound over looks keeps the type-I
error at most alpha under this optional stopping, whichever event each look tests, because
each look's event is chosen on selection samples only -- which pairs lead, and so how many
selection samples each input has, depends on selection samples alone, never on a final
sample or on where an earlier test epsilon of a curve stopped -- and its sample size is
fixed in advance. ``sequential=False`` runs the fixed-size test of the paper instead.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..core.errors import InputError, MechanismError, PrivetError, advice, check_epsilon
from ..core.mechanism import Mechanism, as_mechanism
from ..core.results import Counterexample, say_found
from ..core.seeds import as_seed
from ..execution import get_executor, map_reduce
from ..execution.progress import progress_bar
from ..stats.hypothesis import approx_z, count_filter, thinned_fisher_pvalue
from ..stats.sequential import (
    ACCEPT,
    CONTINUE,
    REJECT,
    Design,
    Step,
    clearly_below,
    schedule,
    sequential_step,
)
from . import trace as tr
from .histograms import event_histograms
from .space import (
    NoEventError,
    Plan,
    Reducer,
    build_plan,
    count_events,
    infer_schema,
    rows_of,
    separating_entries,
)

PILOT = 2_000
SHORTLIST = 3          # events per pair given the exact p-value during selection
LEADERS = 3            # pairs whose selection grows with every look (the best so far)
LAG = 2                # levels the other pairs' selection lags behind (a quarter of it)
CANDIDATE_LAG = 3      # informational candidates: tested on a look this much earlier at least
PHASE_PILOT, PHASE_SELECT, PHASE_FINAL = 0, 1, 2


@dataclass
class Source:
    """One input with its arguments, and what has been drawn of it so far."""

    x: np.ndarray
    args: dict
    index: int
    group: int = 0
    pilot: np.ndarray | None = None
    selection: list = field(default_factory=list)  # cumulative selection histograms, one per
    #                                                 level of Session.grid
    sel_counts: dict = field(default_factory=dict)  # level -> candidate counts at that level
    final: list = field(default_factory=list)  # cumulative final histograms, one per look


@dataclass
class Pair:
    """A candidate (D1, D2, args) of Algorithm 4."""

    s1: int
    s2: int
    pattern: str
    args: dict
    ref: int = -1
    group: int = 0


def _keep(out: np.ndarray) -> list:
    return [out]


def _concat(a: list, b: list) -> list:
    return a + b


class _Shared:
    """An executor shared across calls (map_reduce closes only executors it creates)."""

    def __init__(self, inner: Any, owned: bool):
        self.inner, self.owned = inner, owned

    def map(self, fn, jobs):
        return self.inner.map(fn, jobs)

    def close(self):
        pass

    def shutdown(self):
        if self.owned:
            self.inner.close()


@dataclass
class Selection:
    """The selected event of one pair at one test epsilon (on the selection samples)."""

    pair: int
    cand: int
    direction: int  # 0: P(M(D1) in E) too large, 1: P(M(D2) in E) too large
    p_value: float
    counts: tuple
    n: tuple = (0, 0)


@dataclass
class Outcome:
    """The sequential final test of one test epsilon: the step where it stopped, the look,
    the selection it tested there, and whether Ctrl-C cut it short."""

    step: Step
    look: int
    selection: Selection
    interrupted: bool = False
    ranking: list = field(default_factory=list)  # every pair's selection at that look


@dataclass
class Session:
    """Everything shared by the test epsilons of one detect/pvalue_curve run."""

    mech: Mechanism
    pairs: list
    sources: list
    plans: list
    arg_path: str
    seed: int
    n_select: int
    n_final: int
    executor: Any
    progress: bool
    alpha: float
    sequential: bool = True
    notes: list = field(default_factory=list)
    samples: int = 0                     # outputs drawn so far (pilot, selection, final)
    _advance: Any = None                 # the progress bar of the running sequential test

    @property
    def plan(self) -> Plan:
        """The search space of the first output shape (most mechanisms have one)."""
        return self.plans[0]

    @property
    def n_candidates(self) -> int:
        return int(sum(p.start.size for p in self.plans))

    @functools.cached_property
    def design(self) -> Design:
        looks = schedule(self.n_final) if self.sequential else (self.n_final,)
        return Design(looks, self.alpha)

    # -- sampling ---------------------------------------------------------------------------
    def _seed(self, *key: int) -> np.random.SeedSequence:
        return np.random.SeedSequence(self.seed, spawn_key=key)  # entropy of an int is itself

    def _draw(self, s: Source, n: int, key: tuple, label: str) -> np.ndarray:
        """``n`` outputs of ``s`` reduced to its plan's flat histogram (seed stream ``key``);
        progress goes to the running test's bar when there is one."""
        with progress_bar(n, label, enabled=self.progress and self._advance is None) as bar:
            red = map_reduce(self.mech, s.x, n, Reducer(self.plans[s.group], self.mech.name),
                             args=s.args, seed=self._seed(*key), executor=self.executor,
                             progress=self._advance or bar)
        if red.value is None or red.interrupted:
            raise KeyboardInterrupt
        self.samples += int(red.n)
        return red.value

    @functools.cached_property
    def grid(self) -> tuple:
        """The selection sizes per input, one per level: level 0 is the pilot (sequential) or
        the ``n_select`` fresh samples (fixed design); level k of the sequential design is
        the size that goes with look k, ``n_select`` times the look's share of the budget
        (at least the pilot), so the last look selects on ``n_select`` samples as the
        fixed-size test does. Fixed in advance: it depends on no sample."""
        if not self.sequential:
            return (self.n_select,)
        first = min(PILOT, self.n_select)
        looks, budget = self.design.looks, self.design.budget
        return (first,) + tuple(int(min(self.n_select, max(first, self.n_select * n / budget)))
                                for n in looks[1:])

    def prepare_selection(self) -> None:
        """Sequential: the pilot is level 0 of the selection. Fixed: ``n_select`` fresh."""
        for s in self.sources:
            if self.sequential:
                s.selection = [Reducer(self.plans[s.group], self.mech.name)(s.pilot)]
            else:
                s.selection = [self._draw(s, self.n_select, (PHASE_SELECT, s.index),
                                          "detect: selection samples")]

    def selection_counts(self, s: Source, level: int) -> np.ndarray:
        """The candidate counts of ``s`` in its first ``grid[level]`` selection samples
        (drawing the batches still missing: batch j has its own seed key, so the samples
        of a level are the same whenever, and for whatever reason, they are drawn)."""
        while len(s.selection) <= level:
            j = len(s.selection)
            more = self.grid[j] - self.grid[j - 1]
            hist = s.selection[-1]
            if more > 0:
                hist = hist + self._draw(s, more, (PHASE_SELECT, s.index, j),
                                         "detect: selection samples")
            s.selection.append(hist)
        if level not in s.sel_counts:
            s.sel_counts[level] = count_events(self.plans[s.group], s.selection[level])
        return s.sel_counts[level]

    def final_counts(self, s: Source, cand: int, look: int) -> int:
        """The count of candidate ``cand`` in the first ``design.looks[look]`` fresh samples
        of ``s`` (drawing the batches still missing)."""
        looks = self.design.looks
        while len(s.final) <= look:
            b = len(s.final)
            size = looks[b] - (looks[b - 1] if b else 0)
            key = (PHASE_FINAL, s.index) if b == 0 else (PHASE_FINAL, s.index, b)
            hist = self._draw(s, size, key, "detect: final samples")
            s.final.append(hist if b == 0 else s.final[-1] + hist)
        plan = self.plans[s.group]
        return int(count_events(plan, s.final[look], np.array([cand]))[0])

    @functools.cached_property
    def _layout(self) -> tuple:
        """Every (pair, candidate) of the search in one flat layout (fixed for the session):
        pair ids, candidate ids, the inputs D1 and D2, and the positions of their counts in
        the concatenated selection counts of all inputs."""
        sizes = np.array([self.plans[s.group].start.size for s in self.sources])
        offset = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        pids, cands = [], []
        shared: dict = {}  # (group, reference) -> the candidates of the pairs that have them
        for pi, pair in enumerate(self.pairs):
            key = (pair.group, pair.ref)
            if key not in shared:
                plan = self.plans[pair.group]
                shared[key] = np.flatnonzero((plan.ref == -1) | (plan.ref == pair.ref))
            idx = shared[key]
            pids.append(np.full(idx.size, pi))
            cands.append(idx)
        pid, cand = np.concatenate(pids), np.concatenate(cands)
        s1 = np.array([p.s1 for p in self.pairs])[pid]
        s2 = np.array([p.s2 for p in self.pairs])[pid]
        return pid, cand, s1, s2, offset[s1] + cand, offset[s2] + cand

    # -- Algorithm 3 ------------------------------------------------------------------------
    def select(self, epsilon: float, levels: Sequence[int] | None = None) -> list[Selection]:
        """EventSelector: the best event of every pair (exact p-value on selection counts).

        ``levels``: the selection level of each input (default 0, the pilot or the fixed
        design's sample). Every candidate of every pair is filtered and scored in one
        vectorized pass; each pair's ``SHORTLIST`` best (by the normal approximation) get
        the exact p-value. A pair's selection depends only on its two inputs' selection
        samples, which are the same at the same size whenever they are drawn: a pair whose
        two sizes have not changed since it was last selected at this epsilon keeps that
        selection (the same result, without scoring its candidates again)."""
        if levels is None:
            levels = [0] * len(self.sources)
        sel_n = np.array([self.grid[lv] for lv in levels], dtype=np.int64)
        p1, p2 = self._pair_sources
        sizes = np.stack([sel_n[p1], sel_n[p2]], axis=1)
        eps = float(epsilon)
        cache = self._selected.setdefault(eps, {})
        todo = [pi for pi in range(len(self.pairs))
                if pi not in cache or cache[pi][0] != tuple(sizes[pi])]
        if todo:
            for pi, sel in self._select_pairs(eps, np.array(todo), levels, sel_n).items():
                cache[pi] = (tuple(sizes[pi]), sel)
            for pi in todo:
                if pi not in cache or cache[pi][0] != tuple(sizes[pi]):
                    cache[pi] = (tuple(sizes[pi]), None)  # no candidate passes the filter
        best = [cache[pi][1] for pi in range(len(self.pairs)) if cache[pi][1] is not None]
        if not best:
            raise NoEventError(
                f"no event over the outputs of {self.mech.name!r} has enough samples to be "
                f"tested (c_E >= 0.001 n e^eps with n = {int(sel_n.min()):,}, "
                f"eps = {epsilon:g}; StatDP footnote 3): raise n_select or lower the test "
                "epsilon."
            )
        return sorted(best, key=lambda s: (s.p_value, s.pair))

    @functools.cached_property
    def _selected(self) -> dict:
        """epsilon -> pair -> ((n1, n2), Selection or None): the last selection of each pair
        at the selection sizes it was made on."""
        return {}

    def _select_pairs(self, epsilon: float, todo: np.ndarray, levels: Sequence[int],
                      sel_n: np.ndarray) -> dict[int, Selection]:
        """Algorithm 3 on the pairs ``todo`` (sorted pair ids): {pair: its best event}."""
        pid, cand, s1, s2, at1, at2 = self._layout
        if todo.size < len(self.pairs):
            bounds = self._pair_bounds
            rows = np.concatenate([np.arange(bounds[pi], bounds[pi + 1]) for pi in todo])
            pid, cand, s1, s2, at1, at2 = (a[rows] for a in (pid, cand, s1, s2, at1, at2))
        counts = np.concatenate([self.selection_counts(s, int(lv))
                                 for s, lv in zip(self.sources, levels)])
        c1, c2 = counts[at1], counts[at2]
        if sel_n.min() == sel_n.max():  # every input grows alike: one sample size
            n1 = n2 = sel_n[0]
        else:
            n1, n2 = sel_n[s1], sel_n[s2]
        keep = np.flatnonzero(count_filter(c1, c2, np.minimum(n1, n2), epsilon))
        pid, cand, c1, c2 = pid[keep], cand[keep], c1[keep], c2[keep]
        if np.ndim(n1):
            n1, n2 = n1[keep], n2[keep]
        z_top = approx_z(c1, c2, n1, n2, epsilon)
        z_bot = approx_z(c2, c1, n2, n1, epsilon)
        # Phi(-z) is decreasing: min(Phi(-z_top), Phi(-z_bot)) = Phi(-max(z_top, z_bot)), so
        # candidates rank by -max(z) (no normal tail but for the shortlist, and no ties where
        # the tails underflow)
        score = -np.maximum(z_top, z_bot)
        # the kept entries of each pair are contiguous, in candidate order
        bounds = np.searchsorted(pid, todo)
        ends = np.append(bounds[1:], pid.size)
        picks = []
        for lo, hi in zip(bounds, ends):
            if hi - lo > SHORTLIST:
                picks.append(lo + np.argpartition(score[lo:hi], SHORTLIST - 1)[:SHORTLIST])
            elif hi > lo:
                picks.append(np.arange(lo, hi))
        if not picks:
            return {}
        j = np.concatenate(picks)
        pis, cands, approx = pid[j], cand[j], score[j]
        dirs = np.where(z_top[j] >= z_bot[j], 0, 1)
        a1, a2 = c1[j], c2[j]
        n1, n2 = (n1[j], n2[j]) if np.ndim(n1) else (np.full(j.size, n1), np.full(j.size, n2))
        first = np.where(dirs == 0, a1, a2)
        second = np.where(dirs == 0, a2, a1)
        nf, ns = np.where(dirs == 0, n1, n2), np.where(dirs == 0, n2, n1)
        exact = thinned_fisher_pvalue(first, second, nf, ns, epsilon)
        best: dict[int, Selection] = {}
        for i in np.lexsort((approx, exact)):
            p = int(pis[i])
            if p not in best:
                best[p] = Selection(p, int(cands[i]), int(dirs[i]), float(exact[i]),
                                    (int(a1[i]), int(a2[i])), (int(n1[i]), int(n2[i])))
        return best

    @functools.cached_property
    def _pair_bounds(self) -> np.ndarray:
        """Where each pair's rows start in :attr:`_layout` (pairs are contiguous, in order)."""
        return np.searchsorted(self._layout[0], np.arange(len(self.pairs) + 1))

    # -- line 4 of Algorithm 1, sequential ----------------------------------------------------
    def _oriented(self, sel: Selection, look: int) -> tuple[int, int, int]:
        """(c_top, c_bottom, n): final counts at ``look``, the too-likely side first."""
        pair = self.pairs[sel.pair]
        c1 = self.final_counts(self.sources[pair.s1], sel.cand, look)
        c2 = self.final_counts(self.sources[pair.s2], sel.cand, look)
        n = int(self.design.looks[look])
        return (c1, c2, n) if sel.direction == 0 else (c2, c1, n)

    def sequential_test(self, epsilon: float) -> Outcome:
        """Looks at growing sizes until one is decisive (see the module docstring)."""
        with progress_bar(None, "detect", enabled=self.progress) as advance:
            self._advance = advance
            try:
                return self._looks(epsilon)
            finally:
                self._advance = None

    def _levels(self, sels: Sequence[Selection], look: int, levels: np.ndarray) -> np.ndarray:
        """The selection level of every input at ``look`` (never lower than ``levels``):
        the ``LEADERS`` best pairs of the previous selection at ``look``, the others
        ``LAG`` levels behind, every pair at the last look. Decided on selection samples
        only, so each look's event stays independent of the final samples."""
        last = len(self.design.looks) - 1
        want = np.full(len(self.pairs), last if look >= last else max(0, look - LAG))
        for sel in sels[:LEADERS]:
            want[sel.pair] = look
        out = np.array(levels, copy=True)
        np.maximum.at(out, self._pair_sources[0], want)
        np.maximum.at(out, self._pair_sources[1], want)
        return out

    @functools.cached_property
    def _pair_sources(self) -> tuple:
        return (np.array([p.s1 for p in self.pairs], dtype=np.int64),
                np.array([p.s2 for p in self.pairs], dtype=np.int64))

    def _full_futile(self, epsilon: float, look: int) -> bool:
        """Whether the event selected with *every* pair at ``look``'s full selection level
        is clearly inside the null (the futility stop's test when some pairs lag behind: a
        lagging pair must not hide a violation, and a leader's event that shows no excess
        but too few counts to be clearly below must not keep a clear pass going). Called
        only when the look does not reject; it decides between stopping without a
        rejection and going on, so it cannot raise the type-I error. Its samples are those
        the later levels use."""
        alt = self.select(epsilon, [look] * len(self.sources))[0]
        ca, cb, n = self._oriented(alt, look)
        return clearly_below(ca, cb, n, n, epsilon)

    def _looks(self, epsilon: float) -> Outcome:
        design = self.design
        previous = 1.0
        levels = np.zeros(len(self.sources), dtype=np.int64)
        sels = self.select(epsilon, levels)
        outcome = None
        for look, n in enumerate(design.looks):
            self._advance(0, description=f"detect at test eps {epsilon:g}: look {look + 1} "
                                         f"of {len(design.looks)}, {n:,} fresh samples per "
                                         "input")
            try:
                if look and self.sequential:
                    # the selection grows with the final test: the leading pairs to the
                    # look's level, every other pair a few levels behind (a violation the
                    # pilot cannot see still surfaces), all of them at the last look
                    grown = self._levels(sels, look, levels)
                    if (grown != levels).any():
                        levels = grown
                        sels = self.select(epsilon, levels)
                sel = sels[0]
                ca, cb, n = self._oriented(sel, look)
                step = sequential_step(ca, cb, n, n, epsilon, design=design, look=look,
                                       previous=previous)
                if step.decision != REJECT and look < len(design.looks) - 1 and \
                        (step.futile or step.p_look > 0.5) and (levels < look).any():
                    # no excess on this look's event: the futility stop is decided on the
                    # event every pair selects at the look's full level
                    futile = self._full_futile(epsilon, look)
                    step = replace(step, decision=ACCEPT if futile else CONTINUE,
                                   futile=futile)
            except KeyboardInterrupt:
                if outcome is None:
                    raise
                outcome.interrupted = True
                return outcome
            previous = step.bonferroni
            outcome = Outcome(step, look, sel, ranking=sels)
            if step.decision != CONTINUE:
                break
        assert outcome is not None
        return outcome

    def counterexample(self, sel: Selection, epsilon: float, look: int,
                       step: Step | None = None) -> Counterexample:
        """The witness of ``sel`` on the final samples of ``look``; ``step`` the sequential
        test's (None: a candidate, given its fixed-size p-value at that look)."""
        pair = self.pairs[sel.pair]
        srcs = [self.sources[pair.s1], self.sources[pair.s2]]
        c1 = self.final_counts(srcs[0], sel.cand, look)
        c2 = self.final_counts(srcs[1], sel.cand, look)
        n1 = n2 = int(self.design.looks[look])
        p_top, p_bot = (float(v) for v in thinned_fisher_pvalue([c1, c2], [c2, c1], [n1, n2],
                                                                  [n2, n1], epsilon))
        p_look = p_top if sel.direction == 0 else p_bot
        p = step.p_value if step is not None else p_look
        rejected = step.decision == REJECT if step is not None else p_look <= self.alpha
        plan = self.plans[pair.group]
        event = plan.event(sel.cand)
        # orient the witness: P(M(d1) in E) > e^eps P(M(d2) in E)
        a, b = (srcs[0], srcs[1]) if sel.direction == 0 else (srcs[1], srcs[0])
        ca, cb = (c1, c2) if sel.direction == 0 else (c2, c1)
        shown_args = {k: _plain(v) for k, v in pair.args.items()}
        details = {
            "pattern": pair.pattern + (" [D1 and D2 exchanged]" if sel.direction else ""),
            "p_top": p_top, "p_bottom": p_bot, "p_look": p_look, "look": look + 1,
            "selection_p": sel.p_value,
            "selection_counts": list(sel.counts) if sel.direction == 0
            else list(sel.counts[::-1]),
            "n_select": int(min(sel.n)), "arg_path": self.arg_path,
            # the event's statistic under D1 and D2 (same final-test samples, oriented)
            "histograms": event_histograms(plan, sel.cand, a.final[look], b.final[look]),
        }
        if step is not None:
            details["level"] = step.level
        return Counterexample(
            mechanism=self.mech.name, d1=tuple(_plain(a.x)), d2=tuple(_plain(b.x)),
            args=shown_args, event=event.describe(), event_spec=_spec(event),
            counts=(ca, cb), n=(n1, n2), p_value=p, test_epsilon=float(epsilon),
            epsilon_witnessed=float(epsilon) if rejected else None,
            confidence=1.0 - self.alpha, exact=False, seed=self.seed, details=details,
        )


def _spec(event) -> dict | None:
    try:
        return event.spec()
    except Exception:  # pragma: no cover - predicates
        return None


def _plain(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return [_plain(x) for x in v.tolist()]
    if isinstance(v, np.generic):
        return v.item()
    return v


# -- input generation (Algorithm 4) -----------------------------------------------------------

def _lengths(mech: Mechanism) -> tuple[int, ...]:
    dl = mech.domain.length
    if isinstance(dl, int):
        return (dl,)
    if isinstance(dl, tuple):
        lo, hi = dl
        picks = [n for n in (5, 10) if lo <= n <= hi]
        return tuple(picks) if picks else (max(lo, min(hi, 5)),)
    return (5, 10)


def _input_pairs(mech: Mechanism, inputs: Iterable | None) -> list[tuple[np.ndarray, np.ndarray,
                                                                          str]]:
    out = []
    if inputs is not None:
        for i, item in enumerate(inputs):
            try:
                d1, d2 = item
            except (TypeError, ValueError):
                raise InputError(
                    f"inputs must be a list of (d1, d2) pairs; item {i} is {item!r}."
                ) from None
            a, b = mech.domain.check(d1), mech.domain.check(d2)
            mech.neighbors.check(a, b)
            out.append((a, b, f"given #{i}"))
        if not out:
            raise InputError("inputs is empty: give at least one (d1, d2) pair.")
        return out
    for pair in mech.neighbors.pairs(lengths=_lengths(mech), domain=mech.domain):
        try:
            a, b = mech.domain.check(pair.d1), mech.domain.check(pair.d2)
        except PrivetError:
            continue
        out.append((a, b, pair.pattern))
    if not out:
        raise InputError(
            f"no neighbor pattern of '{mech.neighbors.describe()}' fits the domain of "
            f"{mech.name!r} ({mech.domain.describe()}); "
            + advice("pass inputs=[(d1, d2), ...]",
                     "widen --domain or change --neighbors") + "."
        )
    return out


def _arg_key(args: Mapping[str, Any]) -> tuple:
    return tuple(sorted((k, repr(_plain(v))) for k, v in args.items()))


def generate_inputs(mech: Mechanism, inputs: Iterable | None = None,
                    args: Mapping[str, Any] | None = None) -> tuple[list, str, list]:
    """InputGenerator (Algorithm 4): ``([(d1, d2, pattern, args), ...], arg_path, notes)``."""
    raw = _input_pairs(mech, inputs)
    notes: list[str] = []
    if args is not None:
        mech.resolve_args(args)  # validates names
        return [(a, b, p, dict(args)) for a, b, p in raw], "given", notes
    names = tr.symbolic_arg_names(mech)
    if not names and not mech.noise_args:
        return [(a, b, p, {}) for a, b, p in raw], "defaults", notes
    fixed: dict = {}
    if mech.noise_args and mech.supports("ops"):
        fixed = tr.least_noise_args(mech, raw[0][0])
    elif mech.noise_args:
        for name in mech.noise_args:  # black box: the smallest value of the range
            spec = mech.arg_ranges.get(name)
            vals = tr._range_values(spec, mech.args.get(name)) if spec is not None else []
            if vals:
                fixed[name] = min(vals)
    if not names:
        return [(a, b, p, dict(fixed)) for a, b, p in raw], "defaults", notes
    if mech.supports("ops"):
        try:
            plans = tr.maxsmt_pairs(mech, [(a, b) for a, b, _ in raw], fixed)
            return [(a, b, p, plan.args) for (a, b, p), plan in zip(raw, plans)], "maxsmt", \
                notes
        except PrivetError as err:
            notes.append(f"argument tracing failed, using a grid: {err}")
    grid = tr.grid_args(mech, fixed)
    if len(grid) == 1 and not any(n in mech.arg_ranges for n in names):
        return [(a, b, p, dict(fixed)) for a, b, p in raw], "defaults", notes
    return [(a, b, p, g) for a, b, p in raw for g in grid], "grid", notes


# -- building a session -----------------------------------------------------------------------

def open_session(mechanism: Any, *, inputs=None, args=None, n_select: int = 100_000,
                 n_final: int = 500_000, alpha: float = 0.05, seed: int | None = None,
                 progress: bool = False, executor: Any = None,
                 sequential: bool = True) -> Session:
    """Input generation, pilot, search space and selection samples (shared by every test eps)."""
    mech = as_mechanism(mechanism)
    if int(n_select) < 10 or int(n_final) < 10:
        raise InputError("the sample sizes must be at least 10: give "
                         + advice("n_select=… and n_final=…", "--n-select N and --n-final N")
                         + " of 10 or more.")
    if not 0 < float(alpha) < 1:
        raise InputError(f"the significance level must lie in (0, 1), got {alpha!r}: give "
                         + advice("alpha=0.05", "--alpha 0.05") + " or another level.")
    seed = as_seed(seed)  # an int, recorded in the result: seed=None runs replay too
    mech.neighbors.require_pairs(given=inputs is not None)
    planned, path, notes = generate_inputs(mech, inputs, args)
    sources: list[Source] = []
    lookup: dict = {}
    pairs: list[Pair] = []

    def source(x: np.ndarray, a: dict) -> int:
        key = (x.tobytes(), x.shape, _arg_key(a))
        if key not in lookup:
            lookup[key] = len(sources)
            sources.append(Source(x, a, len(sources)))
        return lookup[key]

    seen: set = set()
    for d1, d2, pattern, a in planned:
        s1, s2 = source(d1, a), source(d2, a)
        if (s2, s1) in seen or (s1, s2) in seen:
            continue  # Algorithm 2 tests both directions: the swapped pair adds nothing
        seen.add((s1, s2))
        pairs.append(Pair(s1, s2, pattern, a))
    ex = get_executor(executor, mech, Reducer)  # a spec, a Dask Client or an executor
    shared = _Shared(ex, owned=ex is not executor)
    # pilot: schema and the search space
    pilots = []
    drawn = 0
    for s in sources:
        red = map_reduce(mech, s.x, min(PILOT, int(n_select)), _keep, args=s.args,
                         seed=np.random.SeedSequence(
                             np.random.SeedSequence(seed).entropy,
                             spawn_key=(PHASE_PILOT, s.index)),
                         executor=shared, combine=_concat)
        if red.value is None or red.interrupted:
            shared.shutdown()
            raise KeyboardInterrupt
        s.pilot = np.concatenate(red.value, axis=0)
        drawn += int(red.n)
        pilots.append((_Label(s.x), s.pilot))
    try:
        plans = _build_plans(mech, sources, pairs, pilots, notes)
    except BaseException:
        shared.shutdown()
        raise
    session = Session(mech, pairs, sources, plans, path, int(seed), int(n_select), int(n_final),
                      shared, progress, float(alpha), bool(sequential), notes, samples=drawn)
    try:
        session.prepare_selection()
    except BaseException:
        shared.shutdown()
        raise
    return session


def _build_plans(mech: Mechanism, sources: list, pairs: list, pilots: list,
                 notes: list | None = None) -> list[Plan]:
    """One search space per output shape (inputs of length 5 and 10 give different widths);
    ``notes`` gets a line per wide output whose coordinate events were narrowed."""
    shapes: dict = {}
    for s in sources:
        s.group = shapes.setdefault(tuple(s.pilot.shape[1:]), len(shapes))
    for pair in pairs:
        a, b = sources[pair.s1], sources[pair.s2]
        if a.group != b.group:
            raise MechanismError(
                f"mechanism {mech.name!r} returns outputs that change type between runs: shape "
                f"{a.pilot.shape[1:] or 'scalar'} on input {_show(a.x)} but "
                f"{b.pilot.shape[1:] or 'scalar'} on its neighbor {_show(b.x)}."
            )
        pair.group = a.group
    # dtype kinds must agree across every run
    infer_schema(mech, [(lab, p.reshape(p.shape[0], -1)[:, :1]) for lab, p in pilots])
    plans = []
    for g in range(len(shapes)):
        members = [i for i, s in enumerate(sources) if s.group == g]
        schema = infer_schema(mech, [pilots[i] for i in members])
        refs: list[np.ndarray] = []
        ref_index: dict = {}
        for pair in pairs:
            if pair.group != g:
                continue
            s1 = sources[pair.s1]
            ref = tr.zero_noise_output(mech, s1.x, pair.args)
            if ref is None or ref.size != schema.width:
                ref = _mode(s1.pilot)
            ref = np.asarray(ref, dtype=float).ravel()
            key = ref.tobytes()
            if key not in ref_index:
                ref_index[key] = len(refs)
                refs.append(ref)
            pair.ref = ref_index[key]
        # the pooled pilot places the numeric features' interval endpoints (categorical
        # outputs have none)
        pooled = np.empty((0, schema.width)) if schema.categorical else \
            np.concatenate([rows_of(pilots[i][1]).astype(float) for i in members], axis=0)
        entries = separating_entries(schema, [(sources[p.s1].pilot, sources[p.s2].pilot)
                                              for p in pairs if p.group == g])
        if entries is not None and notes is not None:
            notes.append(f"coordinate events on the {len(entries)} of {schema.width:,} output "
                         "entries the pilot samples separate most (the statistics over all "
                         "entries read every one)")
        plans.append(build_plan(schema, pooled, np.array(refs), entries))
    return plans


def _mode(rows: np.ndarray) -> np.ndarray:
    r = rows_of(rows).astype(float)
    uniq, counts = np.unique(r, axis=0, return_counts=True)
    return uniq[int(np.argmax(counts))]


def _show(x: np.ndarray) -> str:
    return np.array2string(np.asarray(x), separator=", ", threshold=12)


class _Label:
    """"input [..]" for error messages, formatted only if one is raised (array2string is
    slow next to a fast detect run)."""

    def __init__(self, x: np.ndarray):
        self.x = x

    def __str__(self) -> str:
        return f"input {_show(self.x)}"

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


def verdict_text(p: float, alpha: float, rejected: bool | None = None) -> str:
    """The verdict in the words of the table in :mod:`privet.core.results`: "violation
    found (p = ...)" when the test rejected (default: p <= alpha), else "no violation
    found"."""
    rejected = p <= alpha if rejected is None else rejected
    return say_found(p) if rejected else "no violation found"


def test_point(session: Session, epsilon: float, max_candidates: int
               ) -> tuple[Counterexample, list, Outcome]:
    """Selection and the (sequential) final test at one test epsilon:
    (selected, candidates, outcome). Candidates are the best events of the next-best pairs,
    each tested on fresh samples (fixed-size p-values, shown for information, not verdicts):
    those the pair already has up to the look where the sequential test stopped, and at
    least those of the look ``CANDIDATE_LAG`` before it (an eighth of the test's samples or
    fewer: shown for information, they should not cost more than the test itself)."""
    eps = check_epsilon(epsilon, "the test epsilon")
    outcome = session.sequential_test(eps)
    chosen = session.counterexample(outcome.selection, eps, outcome.look, outcome.step)
    cands = [chosen]
    if not outcome.interrupted:
        try:
            # the selection samples have not grown since the look that stopped the test
            for sel in outcome.ranking[:max(1, int(max_candidates))]:
                if sel.pair == outcome.selection.pair:
                    continue
                pair = session.pairs[sel.pair]
                have = min(len(session.sources[pair.s1].final),
                           len(session.sources[pair.s2].final)) - 1
                look = min(outcome.look, max(have, outcome.look - CANDIDATE_LAG, 0))
                cx = session.counterexample(sel, eps, look)
                if not any((c.d1, c.d2, c.event) == (cx.d1, cx.d2, cx.event) for c in cands):
                    cands.append(cx)
                if len(cands) >= max_candidates:
                    break
        except KeyboardInterrupt:
            outcome.interrupted = True
    return chosen, cands, outcome


test_point.__test__ = False  # type: ignore[attr-defined]


def run_curve(session: Session, test_epsilons: Sequence[float], max_candidates: int = 1
              ) -> tuple[list[float], list[Counterexample], list[float], list[Outcome]]:
    """Test every epsilon in turn; Ctrl-C keeps the points done so far."""
    eps_list, chosen, secs, outcomes = [], [], [], []
    for e in test_epsilons:
        t0 = time.perf_counter()
        try:
            c, _, out = test_point(session, float(e), max_candidates)
        except KeyboardInterrupt:
            if not chosen:
                raise
            session.notes.append(f"interrupted after {len(chosen)} test epsilons")
            break
        eps_list.append(float(e))
        chosen.append(c)
        outcomes.append(out)
        secs.append(time.perf_counter() - t0)
        if out.interrupted:
            session.notes.append(f"interrupted during test epsilon {float(e):g}")
            break
    return eps_list, chosen, secs, outcomes


__all__ = ["Outcome", "Pair", "Selection", "Session", "Source", "generate_inputs", "open_session",
           "run_curve", "test_point", "verdict_text"]
