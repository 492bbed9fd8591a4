"""Porosity: outputs one input produces and its neighbour provably cannot (ε = ∞).

Mironov (CCS 2012, "On significance of the least significant bits for differential
privacy", Sec. 3) shows that the textbook floating-point Laplace mechanism ``x + Lap(b)``
leaves holes: a double that ``M(D2)`` outputs may be unreachable from ``M(D1)``, and then
one output identifies the input -- the privacy loss is infinite, whatever ε the mechanism
claims. :func:`porosity` samples outputs of each input of a pair and decides, for every
distinct one, whether the other input can produce it (:mod:`privet.floats.reach`):

* exactly, by inverting the declared sampler, for native mechanisms ``f(D) + noise``;
* by sighting in a seeded sample of the other input otherwise (a proof of reachability
  only: a black box is never declared porous by privet, only searched).

Every "ε = ∞" is backed by the exact check of one output, with a witness that replays:
``mechanism.sample(d2, n, seed=seed)[index]`` is that double, and ``words`` are the
generator words that make ``M(D2)`` output it.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any

import numpy as np

from ..core import bits
from ..core.errors import InputError, ParameterError, UnsupportedError
from ..core.mechanism import Mechanism, as_mechanism
from ..core.results import FloatWitness, PorosityResult
from ..core.seeds import SeedLike, as_seed
from ..execution.progress import progress_bar
from ..stats.intervals import clopper_pearson
from .reach import (
    ADDITION_GAP,
    REACHABLE,
    UNDECIDED,
    UNREACHABLE,
    Additive,
    Sighting,
    additive,
    as_bits,
    witness_text,
)
from .samplers import uniform_of

# verdicts in the words of the table in privet.core.results
NO_POROSITY = "no violation found: no porosity"
INFINITE = "violation (exact): ε = ∞"


def _round_seed(root: np.random.SeedSequence, direction: int, r: int) -> int:
    child = np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, direction, r))
    return int(child.generate_state(1, np.uint32)[0])


class _Checker:
    """Reachability from one input: exact inversion when it applies, a documented model
    when one is given, else sighting."""

    def __init__(self, mech: Mechanism, x: np.ndarray, args: dict | None, method: str,
                 sight: int, seed: int, ulps: float, model: Any = None):
        self.mech, self.x, self.args, self.ulps = mech, x, args, ulps
        self.exact: Additive | None = None
        self.model = model
        self.why = ""
        if method in ("auto", "exact") and model is None:
            try:
                self.exact = additive(mech, x, args)
            except UnsupportedError as err:
                if method == "exact":
                    raise
                self.why = str(err)
        self.sight, self.seed = sight, seed
        self._sighting: Sighting | None = None

        self.label, self.assumptions = "", ""

    @property
    def method(self) -> str:
        if self.exact is not None:
            return f"exact inversion of {self.exact.inverse.describe()}"
        if self.model is not None:
            return self.label or "a documented sampler model"
        return f"sighting in {self.sight:,} outputs"

    def check(self, ys: np.ndarray):
        if self.exact is not None:
            return self.exact.check(ys, ulps=self.ulps)
        if self.model is not None:
            ver = self.model(self.x, ys)
            self.label, self.assumptions = ver.method, ver.assumptions
            return ver
        if self._sighting is None:  # drawn once, looked up every round
            self._sighting = Sighting(self.mech, self.x, n=self.sight, seed=self.seed,
                                      args=self.args)
        return self._sighting.check(ys)


def _distinct(outputs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct output rows (by bits), their first index and their multiplicity."""
    rows = outputs.reshape(len(outputs), -1)
    keys = as_bits(rows)
    if keys.shape[1] == 1:
        _, first, counts = np.unique(keys[:, 0], return_index=True, return_counts=True)
    else:
        _, first, counts = np.unique(keys, axis=0, return_index=True, return_counts=True)
    return outputs[first], first, counts


def porosity(mechanism: Any, d1: Any, d2: Any, *, args: dict | None = None,
             n: int = 10_000, batch: int = 2_000, both: bool = True,
             budget: float | None = None, method: str = "auto", sight: int = 200_000,
             model: Any = None, first: bool = False, confidence: float = 0.95,
             ulps: float = 4, seed: SeedLike = None, progress: bool = False
             ) -> PorosityResult:
    """Sample ``n`` outputs of ``M(D2)`` (and of ``M(D1)`` when ``both``) and decide for each
    whether the other input can output exactly that double.

    ``method``: ``'exact'`` (invert the declared sampler; one sentence when the mechanism is
    not ``f(D) + noise``), ``'sighting'`` (look the output up among ``sight`` seeded
    outputs of the other input), or ``'auto'`` (exact when possible). ``model``: a
    documented sampler model for a black box (``model(x, ys) -> Verdicts``, e.g.
    :func:`privet.floats.reach.lattice_model`), used instead. ``first``: stop at the first
    certified witness. ``ulps``: the error bound on libm's ``log``/``exp`` the sampler
    windows are widened by. ``budget``: stop after this many seconds (the counts say how
    many outputs were checked). Outputs are
    drawn in rounds of ``batch`` from seeds derived from ``seed``, so every witness replays
    with ``mechanism.sample(d2, witness.n, seed=witness.seed)[witness.index]``.

    Returns a :class:`~privet.core.results.PorosityResult`: "violation (exact):
    ε = ∞" with a :class:`~privet.core.results.FloatWitness` when an output is provably
    unreachable from the other input, else "no violation found: no porosity …" with the
    counts. Ctrl-C stops it and keeps what was checked (``interrupted``).
    """
    t0 = time.perf_counter()
    seed = as_seed(seed)  # an int (recorded in the result), whatever seed= was given
    mech = as_mechanism(mechanism)
    if method not in ("auto", "exact", "sighting"):
        raise ParameterError(f"method must be 'auto', 'exact' or 'sighting', got {method!r}.")
    if int(n) < 1 or int(batch) < 1:
        raise ParameterError(f"n and batch must be positive, got n={n}, batch={batch}.")
    x1, x2 = check_pair(mech, d1, d2)
    resolved = mech.resolve_args(args)
    root = np.random.SeedSequence(seed)
    sight_seeds = [_round_seed(root, 9, i) for i in range(2)]
    checkers = [_Checker(mech, x, resolved, method, sight, s, ulps, model)
                for x, s in ((x1, sight_seeds[0]), (x2, sight_seeds[1]))]
    # direction 0: outputs of D2 checked against D1; direction 1: the reverse
    plan = [(0, x2, checkers[0]), (1, x1, checkers[1])][: 2 if both else 1]
    totals = [{"checked": 0, "distinct": 0, "reachable": 0, "unreachable": 0,
               "undecided": 0, "candidates": 0} for _ in plan]
    witness: FloatWitness | None = None
    interrupted = False
    r = 0
    with progress_bar(n * len(plan), "porosity", enabled=progress) as advance:
        try:
            while min(t["checked"] for t in totals) < n:
                for d, source, checker in plan:
                    tot = totals[d]
                    size = min(int(batch), n - tot["checked"])
                    if size <= 0:
                        continue
                    rseed = _round_seed(root, d, r)
                    outs = np.asarray(mech.sample(source, size, args=resolved, seed=rseed),
                                      dtype=np.float64)
                    ys, where, counts = _distinct(outs)
                    ver = checker.check(ys)
                    tot["checked"] += size
                    tot["distinct"] += len(ys)
                    tot["candidates"] += int(ver.candidates.sum())
                    for status, key in ((REACHABLE, "reachable"), (UNREACHABLE, "unreachable"),
                                        (UNDECIDED, "undecided")):
                        tot[key] += int(counts[ver.status == status].sum())
                    bad = np.flatnonzero(ver.status == UNREACHABLE)
                    if witness is None and bad.size:
                        i = int(bad[0])
                        witness = _witness(mech, checker, checkers[1 - d], d, x1, x2, resolved,
                                           ys[i], ver, i, rseed, size, int(where[i]))
                    advance(size)
                    if budget is not None and time.perf_counter() - t0 > budget or \
                            first and witness is not None:
                        raise TimeoutError
                r += 1
        except KeyboardInterrupt:
            interrupted = True
        except TimeoutError:
            pass
    res = _result(mech, x1, x2, plan, totals, witness, confidence, checkers, interrupted,
                  seed, time.perf_counter() - t0, budget)
    return dataclasses.replace(res, details={**res.details, "stopped_at_first": bool(first)})


def _witness(mech, checker: _Checker, producer: _Checker, d: int, x1, x2, args, y, ver,
             i: int, rseed: int, size: int, index: int) -> FloatWitness:
    """The certificate of one unreachable output: replay data, the producing words, and
    the explanation paragraph."""
    cannot, can = (x1, x2) if d == 0 else (x2, x1)
    yv = np.asarray(y, dtype=np.float64).ravel()
    words, uniform = "", None
    if producer.exact is not None:
        own = producer.exact.check(yv[None, :] if yv.size > 1 else yv)
        if own.status[0] == REACHABLE:
            words = witness_text(own.witness[0])
            uniform = uniform_of(own.witness[0][0][0])
    value = float(yv[0]) if yv.size == 1 else tuple(float(v) for v in yv)
    reason = ver.reason[i]
    explanation = _explain(mech, checker, cannot, can, yv, reason, int(ver.candidates[i]),
                           words, uniform, ver.details.get("offset"))
    return FloatWitness(
        d1=tuple(np.asarray(cannot).tolist()), d2=tuple(np.asarray(can).tolist()),
        value=value, value_hex=" ".join(bits.to_hex(v) for v in yv), reason=reason,
        explanation=explanation, args={k: v for k, v in (args or {}).items()
                                       if k != "epsilon"},
        seed=rseed, n=size, index=index, words=words, uniform=uniform,
        candidates=int(ver.candidates[i]))


def _explain(mech, checker: _Checker, cannot, can, y, reason: str, candidates: int,
             words: str, uniform: float | None, offset=None) -> str:
    ex = checker.exact
    hexes = ", ".join(bits.to_hex(v) for v in y)
    # named by value, not as D1 and D2: the output may be the one the user's D2 cannot
    # produce, and "D1 = [1]" beside a header "D1 / D2 = [0] / [1]" read as a swap
    head = (f"{mech.name} on the input {_short(cannot)} never outputs {hexes}"
            f" ({', '.join(repr(float(v)) for v in y)}), while on {_short(can)} it does")
    head += (f" (for the uniform {uniform!r}, generator words {words})." if words else ".")
    c = ex.c if ex is not None else offset
    fd = ", ".join(bits.to_hex(v) for v in np.asarray(c).ravel()) if c is not None else "?"
    if reason.startswith(ADDITION_GAP):
        body = (f" On {_short(cannot)} the mechanism computes f(x) + v in double precision "
                f"with f(x) = {fd}; no double v makes that sum round to the output (the "
                "doubles around it are finer than the grid of f(x) + v), so no noise value "
                "of any sampler can produce it.")
    else:
        body = (f" On {_short(cannot)} the output is f(x) + v with f(x) = {fd}; the noise "
                f"values v that round to it could only come from {candidates:,} generator "
                f"words (the exact inverse of {ex.inverse.describe()} widened by libm's "
                "error bound), and the sampler evaluated on each of them gives none.")
    tail = (f" So P[M({_short(cannot)}) = y] = 0 < P[M({_short(can)}) = y], and no finite ε "
            "bounds the privacy loss of this output (Mironov, CCS 2012).")
    return head + body + tail


def _short(x) -> str:
    arr = np.asarray(x).ravel()
    items = ", ".join(repr(v) for v in arr[:6].tolist())
    return f"[{items}{', …' if arr.size > 6 else ''}]"


def _result(mech, x1, x2, plan, totals, witness, confidence, checkers, interrupted, seed,
            seconds, budget) -> PorosityResult:
    checked = sum(t["checked"] for t in totals)
    unreach = sum(t["unreachable"] for t in totals)
    reach = sum(t["reachable"] for t in totals)
    undec = sum(t["undecided"] for t in totals)
    delta = None
    worst = max(totals, key=lambda t: t["unreachable"] / max(t["checked"], 1))
    if worst["checked"]:
        delta = clopper_pearson(worst["unreachable"], worst["checked"], 1 - confidence,
                                "lower")[0]
    if witness is not None:
        verdict = INFINITE
    elif checked and undec >= checked:  # nothing decided: nothing found, nothing shown
        verdict = (f"inconclusive: none of the {checked:,} outputs checked could be decided "
                   "(the exact reachability check does not apply to this sampler's code)")
    else:
        verdict = f"{NO_POROSITY} among {checked - undec:,} outputs decided" + (
            f" ({undec:,} of {checked:,} undecided)" if undec else "")
    if interrupted:
        verdict = "interrupted: " + verdict
    used = [checkers[0], checkers[1]][: len(plan)]
    methods = sorted({c.method for c in used})
    assumptions = "; ".join(sorted({c.exact.assumptions(c.ulps) if c.exact is not None else
                                    getattr(c, "assumptions", "") if c.model is not None else
                                    "sighting proves reachability only" for c in used}))
    directions = tuple(
        {"outputs of": "D2" if d == 0 else "D1", "checked against": "D1" if d == 0 else "D2",
         **t} for (d, _, _), t in zip(plan, totals))
    return PorosityResult(
        mechanism=mech.name, claimed_epsilon=mech.epsilon, verdict=verdict,
        d1=tuple(np.asarray(x1).tolist()), d2=tuple(np.asarray(x2).tolist()),
        method=", ".join(methods), checked=checked, reachable=reach, unreachable=unreach,
        undecided=undec, epsilon=math.inf if witness is not None else None, witness=witness,
        delta_lower=delta, confidence=confidence, assumptions=assumptions,
        directions=directions, seed=seed, seconds=seconds, interrupted=interrupted,
        details={"budget_seconds": budget, "why_not_exact": sorted({c.why for c in used if c.why})})


def check_pair(mech: Mechanism, d1: Any, d2: Any) -> tuple[np.ndarray, np.ndarray]:
    """Both inputs, checked against the mechanism's domain and neighbor relation."""
    x1, x2 = mech.domain.check(d1), mech.domain.check(d2)
    if np.array_equal(x1, x2):
        raise InputError("D1 and D2 are the same input; give two neighbors.")
    mech.neighbors.check(x1, x2)
    return x1, x2


__all__ = ["INFINITE", "NO_POROSITY", "check_pair", "porosity"]
