"""StatDP's counterexample detection (Algorithm 1 of Ding et al., CCS 2018), sample-once.

A :class:`Session` does the expensive work once per mechanism and input list:

1. input generation (Algorithm 4): neighbor patterns (Table 1) and arguments (least noise
   for ``noise_args``, MaxSMT over a :class:`~privet.detect.trace.Trace` for the others,
   a small grid when the mechanism cannot be traced);
2. a pilot sample per input fixes the output schema and the event search space
   (:mod:`privet.detect.space`);
3. ``n_select`` samples per input are reduced to histograms (the selection samples);
4. for each test epsilon, EventSelector (Algorithm 3) scores every candidate of every pair
   from those histograms, and the chosen (D1, D2, args, E) gets the final HypothesisTest
   (line 4 of Algorithm 1) on ``n_final`` *fresh* samples of D1 and D2, drawn from their
   own seed stream and reused across test epsilons: every point's final test uses samples
   that played no part in selecting its event.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.errors import InputError, MechanismError, PrivetError, advice, check_epsilon
from ..core.mechanism import Mechanism, as_mechanism
from ..core.results import Counterexample, say_found
from ..core.seeds import as_seed
from ..execution import Reduced, get_executor, map_reduce
from ..execution.progress import progress_bar
from ..stats.hypothesis import approx_pvalue, count_filter, thinned_fisher_pvalue
from . import trace as tr
from .histograms import event_histograms
from .space import NoEventError, Plan, Reducer, build_plan, count_events, infer_schema, rows_of

PILOT = 2_000
SHORTLIST = 3          # events per pair given the exact p-value during selection
PHASE_PILOT, PHASE_SELECT, PHASE_FINAL = 0, 1, 2


@dataclass
class Source:
    """One input with its arguments: sampled once per phase."""

    x: np.ndarray
    args: dict
    index: int
    group: int = 0
    select: Reduced | None = None
    final: Reduced | None = None
    pilot: np.ndarray | None = None


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
    notes: list = field(default_factory=list)
    sel_counts: list | None = None
    sel_n: np.ndarray | None = None

    @property
    def plan(self) -> Plan:
        """The search space of the first output shape (most mechanisms have one)."""
        return self.plans[0]

    @property
    def n_candidates(self) -> int:
        return int(sum(p.start.size for p in self.plans))

    # -- sampling ---------------------------------------------------------------------------
    def _stream(self, phase: int, index: int) -> np.random.SeedSequence:
        root = np.random.SeedSequence(self.seed)
        return np.random.SeedSequence(root.entropy, spawn_key=(phase, index))

    def _sample(self, srcs: Sequence[Source], phase: int, n: int) -> None:
        todo = [s for s in srcs if (s.select if phase == PHASE_SELECT else s.final) is None]
        if not todo:
            return
        label = "detect: selection samples" if phase == PHASE_SELECT else "detect: final samples"
        with progress_bar(n * len(todo), label, enabled=self.progress) as advance:
            for s in todo:
                reducer = Reducer(self.plans[s.group], self.mech.name)
                red = map_reduce(self.mech, s.x, n, reducer, args=s.args,
                                 seed=self._stream(phase, s.index), executor=self.executor,
                                 progress=advance)
                if red.value is None:
                    raise KeyboardInterrupt
                if phase == PHASE_SELECT:
                    s.select = red
                else:
                    s.final = red
                if red.interrupted:
                    raise KeyboardInterrupt

    def prepare_selection(self) -> None:
        self._sample(self.sources, PHASE_SELECT, self.n_select)
        self.sel_counts = [count_events(self.plans[s.group], s.select.value)
                           for s in self.sources]
        self.sel_n = np.array([s.select.n for s in self.sources], dtype=np.int64)

    def _pair_index(self, pi: int) -> np.ndarray:
        cache = self.__dict__.setdefault("_idx_cache", {})
        if pi not in cache:
            pair = self.pairs[pi]
            plan = self.plans[pair.group]
            cache[pi] = np.flatnonzero((plan.ref == -1) | (plan.ref == pair.ref))
        return cache[pi]

    # -- Algorithm 3 ------------------------------------------------------------------------
    def select(self, epsilon: float) -> list[Selection]:
        """EventSelector: the best event of every pair (exact p-value on selection counts)."""
        assert self.sel_counts is not None and self.sel_n is not None
        shortlist: list[tuple[int, int, int, float]] = []
        for pi, pair in enumerate(self.pairs):
            idx = self._pair_index(pi)
            c1 = self.sel_counts[pair.s1][idx]
            c2 = self.sel_counts[pair.s2][idx]
            n1, n2 = self.sel_n[pair.s1], self.sel_n[pair.s2]
            keep = count_filter(c1, c2, min(n1, n2), epsilon)
            if not np.any(keep):
                continue
            idx, c1, c2 = idx[keep], c1[keep], c2[keep]
            top = approx_pvalue(c1, c2, n1, n2, epsilon)
            bot = approx_pvalue(c2, c1, n2, n1, epsilon)
            score = np.minimum(top, bot)
            k = min(SHORTLIST, score.size)
            best = np.argpartition(score, k - 1)[:k] if score.size > k else np.arange(score.size)
            for j in best:
                shortlist.append((pi, int(idx[j]), 0 if top[j] <= bot[j] else 1, float(score[j])))
        if not shortlist:
            raise NoEventError(
                f"no event over the outputs of {self.mech.name!r} has enough samples to be "
                f"tested (c_E >= 0.001 n e^eps with n = {self.n_select:,}, eps = {epsilon:g}; "
                "StatDP footnote 3): raise n_select or lower the test epsilon."
            )
        pis = np.array([s[0] for s in shortlist])
        cands = np.array([s[1] for s in shortlist])
        dirs = np.array([s[2] for s in shortlist])
        s1 = np.array([self.pairs[p].s1 for p in pis])
        s2 = np.array([self.pairs[p].s2 for p in pis])
        a1 = np.array([self.sel_counts[i][c] for i, c in zip(s1, cands)], dtype=np.int64)
        a2 = np.array([self.sel_counts[i][c] for i, c in zip(s2, cands)], dtype=np.int64)
        n1, n2 = self.sel_n[s1], self.sel_n[s2]
        first = np.where(dirs == 0, a1, a2)
        second = np.where(dirs == 0, a2, a1)
        nf, ns = np.where(dirs == 0, n1, n2), np.where(dirs == 0, n2, n1)
        exact = thinned_fisher_pvalue(first, second, nf, ns, epsilon)
        approx = np.array([s[3] for s in shortlist])
        best: dict[int, Selection] = {}
        for i in np.lexsort((approx, exact)):
            p = int(pis[i])
            if p not in best:
                best[p] = Selection(p, int(cands[i]), int(dirs[i]), float(exact[i]),
                                    (int(a1[i]), int(a2[i])))
        return sorted(best.values(), key=lambda s: (s.p_value, s.pair))

    # -- line 4 of Algorithm 1 ----------------------------------------------------------------
    def final_test(self, sel: Selection, epsilon: float) -> Counterexample:
        pair = self.pairs[sel.pair]
        srcs = [self.sources[pair.s1], self.sources[pair.s2]]
        self._sample(srcs, PHASE_FINAL, self.n_final)
        plan = self.plans[pair.group]
        idx = np.array([sel.cand])
        c1 = int(count_events(plan, srcs[0].final.value, idx)[0])
        c2 = int(count_events(plan, srcs[1].final.value, idx)[0])
        n1, n2 = srcs[0].final.n, srcs[1].final.n
        p_top = float(thinned_fisher_pvalue(c1, c2, n1, n2, epsilon))
        p_bot = float(thinned_fisher_pvalue(c2, c1, n2, n1, epsilon))
        p = p_top if sel.direction == 0 else p_bot
        event = plan.event(sel.cand)
        # orient the witness: P(M(d1) in E) > e^eps P(M(d2) in E)
        a, b = (srcs[0], srcs[1]) if sel.direction == 0 else (srcs[1], srcs[0])
        ca, cb = (c1, c2) if sel.direction == 0 else (c2, c1)
        na, nb = (n1, n2) if sel.direction == 0 else (n2, n1)
        rejected = p < self.alpha
        shown_args = {k: _plain(v) for k, v in pair.args.items()}
        return Counterexample(
            mechanism=self.mech.name, d1=tuple(_plain(a.x)), d2=tuple(_plain(b.x)),
            args=shown_args, event=event.describe(), event_spec=_spec(event),
            counts=(ca, cb), n=(na, nb), p_value=p, test_epsilon=float(epsilon),
            epsilon_witnessed=float(epsilon) if rejected else None,
            confidence=1.0 - self.alpha, exact=False, seed=self.seed,
            details={
                "pattern": pair.pattern + (" [D1 and D2 exchanged]" if sel.direction else ""),
                "p_top": p_top, "p_bottom": p_bot, "selection_p": sel.p_value,
                "selection_counts": list(sel.counts) if sel.direction == 0
                else list(sel.counts[::-1]),
                "n_select": int(self.sel_n[pair.s1]), "arg_path": self.arg_path,
                # the event's statistic under D1 and D2 (same final-test samples, oriented)
                "histograms": event_histograms(plan, sel.cand, a.final.value, b.final.value),
            },
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
    for pair in mech.neighbors.pairs(lengths=_lengths(mech)):
        try:
            a, b = mech.domain.check(pair.d1), mech.domain.check(pair.d2)
        except PrivetError:
            continue
        out.append((a, b, pair.pattern))
    if not out:
        raise InputError(
            f"no neighbor pattern of '{mech.neighbors.describe()}' fits the domain of "
            f"{mech.name!r} ({mech.domain.describe()}); pass inputs=[(d1, d2), ...]."
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
            planned = []
            cache: dict = {}
            for a, b, p in raw:
                key = (a.tobytes(), b.tobytes())
                rkey = (b.tobytes(), a.tobytes())
                if rkey in cache:  # the swapped pair diverges on the same branches
                    plan = cache[rkey]
                else:
                    plan = tr.maxsmt_args(mech, a, b, fixed)
                    cache[key] = plan
                planned.append((a, b, p, plan.args))
            return planned, "maxsmt", notes
        except PrivetError as err:
            notes.append(f"argument tracing failed, using a grid: {err}")
    grid = tr.grid_args(mech, fixed)
    if len(grid) == 1 and not any(n in mech.arg_ranges for n in names):
        return [(a, b, p, dict(fixed)) for a, b, p in raw], "defaults", notes
    return [(a, b, p, g) for a, b, p in raw for g in grid], "grid", notes


# -- building a session -----------------------------------------------------------------------

def open_session(mechanism: Any, *, inputs=None, args=None, n_select: int = 100_000,
                 n_final: int = 500_000, alpha: float = 0.05, seed: int | None = None,
                 progress: bool = False, executor: Any = None) -> Session:
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
        pilots.append((f"input {_show(s.x)}", s.pilot))
    try:
        plans = _build_plans(mech, sources, pairs, pilots)
    except BaseException:
        shared.shutdown()
        raise
    session = Session(mech, pairs, sources, plans, path, int(seed), int(n_select), int(n_final),
                      shared, progress, float(alpha), notes)
    try:
        session.prepare_selection()
    except BaseException:
        shared.shutdown()
        raise
    return session


def _build_plans(mech: Mechanism, sources: list, pairs: list, pilots: list) -> list[Plan]:
    """One search space per output shape (inputs of length 5 and 10 give different widths)."""
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
        pooled = np.concatenate([rows_of(pilots[i][1]).astype(float) for i in members], axis=0)
        plans.append(build_plan(schema, pooled, np.array(refs)))
    return plans


def _mode(rows: np.ndarray) -> np.ndarray:
    r = rows_of(rows).astype(float)
    uniq, counts = np.unique(r, axis=0, return_counts=True)
    return uniq[int(np.argmax(counts))]


def _show(x: np.ndarray) -> str:
    return np.array2string(np.asarray(x), separator=", ", threshold=12)


def verdict_text(p: float, alpha: float) -> str:
    """The verdict in the words of the table in :mod:`privet.core.results`."""
    return say_found(p) if p < alpha else "no violation found"


def test_point(session: Session, epsilon: float, max_candidates: int) -> tuple[Counterexample,
                                                                                 list]:
    """Selection and final test at one test epsilon: (selected, candidates)."""
    eps = check_epsilon(epsilon, "the test epsilon")
    sels = session.select(eps)
    chosen = session.final_test(sels[0], eps)
    cands = [chosen]
    for sel in sels[1:max(1, int(max_candidates))]:
        cx = session.final_test(sel, eps)
        if not any((c.d1, c.d2, c.event) == (cx.d1, cx.d2, cx.event) for c in cands):
            cands.append(cx)
    return chosen, cands


test_point.__test__ = False  # type: ignore[attr-defined]


def run_curve(session: Session, test_epsilons: Sequence[float], max_candidates: int = 1
              ) -> tuple[list[float], list[Counterexample], list[float]]:
    """Test every epsilon in turn; Ctrl-C keeps the points done so far."""
    eps_list, chosen, secs = [], [], []
    for e in test_epsilons:
        t0 = time.perf_counter()
        try:
            c, _ = test_point(session, float(e), max_candidates)
        except KeyboardInterrupt:
            if not chosen:
                raise
            session.notes.append(f"interrupted after {len(chosen)} test epsilons")
            break
        eps_list.append(float(e))
        chosen.append(c)
        secs.append(time.perf_counter() - t0)
    return eps_list, chosen, secs


__all__ = ["Pair", "Selection", "Session", "Source", "generate_inputs", "open_session",
           "run_curve", "test_point", "verdict_text"]
