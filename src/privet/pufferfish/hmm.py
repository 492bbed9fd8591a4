"""Hidden Markov models with exact, float and symbolic entries, and the forward algorithm.

An HMM ``H = ((S, p), Omega, o)`` (Section 2 of FAIER, Liu, Wang and Zhang) has states S, a
transition distribution ``p(s, .)`` per state and an observation distribution ``o(s, .)``
per state. Entries are exact :class:`~fractions.Fraction` s, or :class:`~.expr.Expr` over
named parameters. Rows are stored sparsely (only non-zero entries).

The forward algorithm (Eqs. 2-3) comes in two arithmetics: exact (Fractions, one sequence)
and floating point (scaled, NumPy, batched over sequences). :func:`enumerate_sequences`
runs the forward pass over every observation sequence of a given length at once (prefixes
share work, prefixes impossible under every start are pruned), which is how fixed-parameter
models are checked exhaustively.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from ..core.errors import InputError, ParameterError
from .expr import Expr, Interval, entry, exact_value

Row = dict  # column index -> Fraction | Expr


@dataclass(frozen=True)
class Param:
    """An unknown parameter with its domain: ``low < p < high`` (or ``<=`` when closed)."""

    name: str
    low: Fraction = Fraction(0)
    high: Fraction = Fraction(1)
    closed: bool = False

    def contains(self, v: Fraction) -> bool:
        if self.closed:
            return self.low <= v <= self.high
        return self.low < v < self.high

    def describe(self) -> str:
        op = "<=" if self.closed else "<"
        return f"{self.low} {op} {self.name} {op} {self.high}"

    def sample_points(self, n: int, rng: random.Random) -> list[Fraction]:
        span = self.high - self.low
        return [self.low + span * Fraction(rng.randint(1, 997), 998) for _ in range(n)]


def make_params(spec: Mapping[str, Any] | Sequence[Param] | None) -> dict[str, Param]:
    """Parameters from ``{name: (low, high)}``, ``{name: {low, high, closed}}`` or Params."""
    if not spec:
        return {}
    if not isinstance(spec, Mapping):
        return {p.name: p for p in spec}
    out = {}
    for name, dom in spec.items():
        if isinstance(dom, Param):
            out[name] = dom
            continue
        closed = False
        if isinstance(dom, Mapping):
            low, high, closed = dom.get("low", 0), dom.get("high", 1), bool(dom.get("closed"))
        elif dom is None:
            low, high = 0, 1
        else:
            try:
                low, high = dom
            except (TypeError, ValueError):
                raise ParameterError(f"parameter {name!r} needs a domain [low, high], got "
                                     f"{dom!r}.") from None
        lo, hi = entry(low), entry(high)
        if not isinstance(lo, Fraction) or not isinstance(hi, Fraction) or not lo < hi:
            raise ParameterError(f"parameter {name!r} needs numbers low < high, got {dom!r}.")
        out[name] = Param(str(name), lo, hi, closed)
    return out


def _num(value: Any) -> Fraction | Expr:
    """An entry; floats are read as the simplest fraction they round from (1/3, not 0.33..)."""
    if isinstance(value, float) and math.isfinite(value):
        q = Fraction(value).limit_denominator(10**9)
        if float(q) == value:
            return q
    return entry(value)


@dataclass(frozen=True, eq=False)
class HMM:
    """A hidden Markov model; build it with :func:`hmm` (which validates)."""

    states: tuple
    observations: tuple
    transition: tuple  # tuple of sparse rows {col: entry}
    emission: tuple  # tuple of sparse rows {obs index: entry}
    parameters: Mapping[str, Param] = field(default_factory=dict)
    name: str = ""

    @property
    def n_states(self) -> int:
        return len(self.states)

    @functools.cached_property
    def symbolic(self) -> bool:
        return any(isinstance(v, Expr) for rows in (self.transition, self.emission)
                   for row in rows for v in row.values())

    def state_index(self, label: Any) -> int:
        try:
            return self._index()[0][label]
        except KeyError:
            raise InputError(f"{label!r} is not a state of the HMM {self.name!r}.") from None

    def obs_index(self, label: Any) -> int:
        idx = self._index()[1]
        if label in idx:
            return idx[label]
        if isinstance(label, (int, np.integer)) and str(label) in idx:
            return idx[str(label)]
        shown = ", ".join(map(str, self.observations[:20]))
        raise InputError(f"observation {label!r} is not in the observation set Omega = "
                         f"{{{shown}{', ...' if len(self.observations) > 20 else ''}}}.")

    def encode(self, sequence: Sequence) -> tuple[int, ...]:
        """Observation labels to indices; :class:`InputError` for one outside Omega."""
        return tuple(self.obs_index(o) for o in sequence)

    def decode(self, sequence: Sequence[int]) -> tuple:
        return tuple(self.observations[int(i)] for i in sequence)

    def _index(self) -> tuple[dict, dict]:
        cache = self.__dict__.get("_idx")
        if cache is None:
            cache = ({s: i for i, s in enumerate(self.states)},
                     {o: i for i, o in enumerate(self.observations)})
            object.__setattr__(self, "_idx", cache)
        return cache

    # -- numeric views -----------------------------------------------------------------------
    def substitute(self, values: Mapping[str, Fraction]) -> HMM:
        """The HMM with parameters replaced by exact values."""
        def sub(rows):
            return tuple({c: exact_value(v, values) for c, v in row.items()} for row in rows)
        return HMM(self.states, self.observations, sub(self.transition), sub(self.emission),
                   {}, self.name)

    def matrices(self) -> tuple[np.ndarray, np.ndarray]:
        """Dense float transition (S x S) and emission (S x |Omega|) matrices."""
        cache = self.__dict__.get("_mats")
        if cache is None:
            if self.symbolic:
                raise ParameterError(f"the HMM {self.name!r} has symbolic entries; substitute "
                                     "parameter values first.")
            n, m = self.n_states, len(self.observations)
            P = np.zeros((n, n))
            B = np.zeros((n, m))
            for i, row in enumerate(self.transition):
                for j, v in row.items():
                    P[i, j] = float(v)
            for i, row in enumerate(self.emission):
                for j, v in row.items():
                    B[i, j] = float(v)
            cache = (P, B)
            object.__setattr__(self, "_mats", cache)
        return cache


def _rows(matrix: Any, n_rows: int, col_index: Mapping, what: str, row_labels: tuple
          ) -> tuple[dict, ...]:
    """Sparse rows from a dense list of lists or a {row label: {col label: p}} mapping."""
    if isinstance(matrix, Mapping):
        rows: list[dict] = [{} for _ in range(n_rows)]
        row_index = {s: i for i, s in enumerate(row_labels)}
        for r, cols in matrix.items():
            if r not in row_index:
                raise InputError(f"{what} has a row for {r!r}, which is not a state.")
            for c, v in cols.items():
                if c not in col_index:
                    kind = "an observation in Omega" if what == "emission" else "a state"
                    raise InputError(f"{what} of state {r!r} names {c!r}, which is not {kind}.")
                val = _num(v)
                if not (isinstance(val, Fraction) and val == 0):
                    rows[row_index[r]][col_index[c]] = val
        return tuple(rows)
    arr = list(matrix)
    if len(arr) != n_rows:
        raise InputError(f"{what} matrix has {len(arr)} rows, but the HMM has {n_rows} states.")
    out = []
    for i, row in enumerate(arr):
        row = list(row)
        if len(row) != len(col_index):
            raise InputError(f"{what} row {i} has {len(row)} entries, expected "
                             f"{len(col_index)}.")
        d = {}
        for j, v in enumerate(row):
            val = _num(v)
            if not (isinstance(val, Fraction) and val == 0):
                d[j] = val
        out.append(d)
    return tuple(out)


def check_distribution(row: Mapping[Any, Fraction | Expr], what: str,
                       params: Mapping[str, Param]) -> None:
    """Raise :class:`InputError` unless ``row`` is a probability distribution.

    Numeric rows must be non-negative and sum to exactly 1. Symbolic rows must sum to 1
    identically (checked at random points of the parameter domain, a polynomial identity
    test) and be non-negative at those points; both are also asserted as side constraints
    by the SMT encoding.
    """
    if all(isinstance(v, Fraction) for v in row.values()):
        neg = [v for v in row.values() if v < 0]
        if neg:
            raise InputError(f"{what} has a negative probability {neg[0]}.")
        total = sum(row.values(), Fraction(0))
        if total != 1:
            raise InputError(f"{what} sums to {total} (= {float(total):.6g}), not 1: the matrix "
                             "is not stochastic.")
        return
    for point, vals in sample_values(row.values(), params, what, seed=12345):
        if sum(vals, Fraction(0)) != 1:
            where = ", ".join(f"{k}={float(v):.4g}" for k, v in point.items())
            raise InputError(f"{what} does not sum to 1 at {where}: the matrix is not stochastic.")
        if any(v < 0 for v in vals):
            where = ", ".join(f"{k}={float(v):.4g}" for k, v in point.items())
            raise InputError(f"{what} has a negative probability at {where}.")


def sample_values(values: Iterable[Any], params: Mapping[str, Param], what: str, seed: int,
                  tries: int = 5) -> Iterator[tuple[dict, list[Fraction]]]:
    """Exact values of symbolic ``values`` at ``tries`` random points of the parameter box.

    Raises ParameterError, naming ``what``, when a value uses an undeclared parameter."""
    values = list(values)
    names = set().union(*(v.names for v in values if isinstance(v, Expr)))
    unknown = names - set(params)
    if unknown:
        raise ParameterError(f"{what} uses undeclared parameter(s) "
                             f"{', '.join(sorted(unknown))}; declare them under 'parameters'.")
    rng = random.Random(seed)
    for _ in range(tries):
        point = {n: params[n].sample_points(1, rng)[0] for n in names}
        yield point, [exact_value(v, point) for v in values]


def hmm(states: Sequence, observations: Sequence, transition: Any, emission: Any, *,
        parameters: Mapping[str, Any] | None = None, name: str = "hmm") -> HMM:
    """Build and validate an HMM.

    ``transition`` is an S x S matrix (lists) or ``{state: {state: p}}``; ``emission`` an
    S x |Omega| matrix or ``{state: {observation: p}}``. Entries are numbers, Fractions or
    expression strings over ``parameters`` (``{name: (low, high)}``, open intervals unless
    ``closed``). Every row must be a distribution.
    """
    states = tuple(states)
    observations = tuple(observations)
    if not states:
        raise InputError("an HMM needs at least one state.")
    if len(set(states)) != len(states):
        raise InputError("HMM state labels must be distinct.")
    if len(set(observations)) != len(observations) or not observations:
        raise InputError("HMM observation labels must be distinct and non-empty.")
    params = make_params(parameters)
    s_index = {s: i for i, s in enumerate(states)}
    o_index = {o: i for i, o in enumerate(observations)}
    trans = _rows(transition, len(states), s_index, "transition", states)
    emis = _rows(emission, len(states), o_index, "emission", states)
    for i, row in enumerate(trans):
        check_distribution(row, f"transition row of state {states[i]!r}", params)
    for i, row in enumerate(emis):
        check_distribution(row, f"emission row of state {states[i]!r}", params)
    return HMM(states, observations, trans, emis, params, name)


# -- forward algorithm ---------------------------------------------------------------------

def _init_vector(h: HMM, init: Any) -> dict[int, Any]:
    if isinstance(init, Mapping):
        out = {}
        for k, v in init.items():
            i = k if isinstance(k, (int, np.integer)) and k not in h._index()[0] \
                else h.state_index(k)
            out[int(i)] = v
        return out
    vec = list(init)
    if len(vec) != h.n_states:
        raise InputError(f"an initial distribution needs {h.n_states} entries, got {len(vec)}.")
    return {i: v for i, v in enumerate(vec) if v != 0}


def forward_exact(h: HMM, init: Any, sequence: Sequence, params: Mapping | None = None,
                  encoded: bool = False) -> Fraction:
    """Pr(omega | init, H) exactly, by Eqs. (2)-(3) of FAIER with Fractions.

    ``init`` maps states to (possibly unnormalized) weights; the result is then the
    weighted sum. ``params`` gives exact values for symbolic entries.
    """
    seq = tuple(int(o) for o in sequence) if encoded else h.encode(sequence)
    if not seq:
        raise InputError("an observation sequence needs at least one observation.")
    alpha: dict[int, Fraction] = {}
    for s, w in _init_vector(h, init).items():  # Eq. (2)
        o = h.emission[s].get(seq[0])
        if o is not None:
            val = exact_value(entry(w), params) * exact_value(o, params)
            if val:
                alpha[s] = val
    for w_t in seq[1:]:  # Eq. (3)
        nxt: dict[int, Fraction] = {}
        for s, a in alpha.items():
            for s2, p in h.transition[s].items():
                nxt[s2] = nxt.get(s2, Fraction(0)) + a * exact_value(p, params)
        alpha = {}
        for s2, a in nxt.items():
            o = h.emission[s2].get(w_t)
            if o is not None:
                val = a * exact_value(o, params)
                if val:
                    alpha[s2] = val
        if not alpha:
            return Fraction(0)
    return sum(alpha.values(), Fraction(0))


def forward(h: HMM, init: Any, sequences: Any, encoded: bool = False) -> np.ndarray:
    """log Pr(omega | init, H) for a batch of sequences, by the scaled forward pass.

    ``init``: one distribution (S,) or several (m, S) as floats; ``sequences``: (n, k)
    labels or (with ``encoded``) indices. Returns shape (n,) or (m, n); -inf where the
    probability is 0. Each step renormalizes alpha and accumulates the log scale, so long
    sequences do not underflow.
    """
    P, B = h.matrices()
    pi = np.asarray(init, dtype=float)
    single = pi.ndim == 1
    pi = np.atleast_2d(pi)
    if pi.shape[1] != h.n_states:
        raise InputError(f"an initial distribution needs {h.n_states} entries, got "
                         f"{pi.shape[1]}.")
    if encoded:
        seqs = np.atleast_2d(np.asarray(sequences, dtype=np.int64))
    else:
        seqs = np.atleast_2d(np.array([h.encode(s) for s in sequences], dtype=np.int64))
    n, k = seqs.shape
    alpha = pi[:, None, :] * B[:, seqs[:, 0]].T[None]  # (m, n, S), Eq. (2)
    logscale = np.zeros(alpha.shape[:2])
    with np.errstate(divide="ignore", invalid="ignore"):
        for t in range(k):
            if t:
                alpha = (alpha @ P) * B[:, seqs[:, t]].T[None]  # Eq. (3)
            tot = alpha.sum(-1)
            logscale = logscale + np.log(tot)
            alpha = np.where(tot[..., None] > 0, alpha / tot[..., None], 0.0)
    return logscale[0] if single else logscale


def enumerate_sequences(h: HMM, inits: np.ndarray, k: int, cap: int = 4_000_000
                        ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Every length-k sequence with positive probability under some row of ``inits``.

    Yields blocks ``(seqs (N, k) int, probs (m, N) float)``. Prefixes are extended level by
    level with the forward recursion; a prefix impossible under every start is dropped, and
    a level larger than ``cap`` floats is split into blocks searched depth first.
    """
    P, B = h.matrices()
    inits = np.atleast_2d(np.asarray(inits, dtype=float))
    m, S = inits.shape
    yield from _expand(P, B, inits[:, None, :], np.zeros((1, 0), dtype=np.int64), k, True, cap)


def _expand(P, B, base, seqs, k, first, cap):
    m, N, S = base.shape
    t = seqs.shape[1]
    if t == k:
        yield seqs, base.sum(-1)
        return
    nxt = base if first else base @ P  # (m, N, S)
    mass = nxt @ B  # (m, N, O): probability of each one-step extension
    keep = np.argwhere((mass > 0).any(0))  # (N', 2): (prefix, observation)
    if len(keep) == 0:
        return
    block = max(1, cap // max(1, m * S))
    for start in range(0, len(keep), block):
        sel = keep[start:start + block]
        child = nxt[:, sel[:, 0], :] * B[:, sel[:, 1]].T[None]
        cseq = np.concatenate([seqs[sel[:, 0]], sel[:, 1:2]], axis=1)
        yield from _expand(P, B, child, cseq, k, False, cap)


def interval_rows(rows: tuple, box: Mapping[str, Interval]) -> tuple:
    """Rows with entries enclosed by intervals over a parameter box."""
    return tuple({c: (Interval.of(v) if isinstance(v, Fraction) else v.evaluate(box, Interval.of))
                  for c, v in row.items()} for row in rows)


def lump(h: HMM) -> tuple[HMM, list[int]]:
    """The coarsest strong lumping of ``h`` that keeps every observation probability.

    States with identical emission rows and identical transition probabilities into each
    block are merged (partition refinement to a fixpoint). For a block-aggregated initial
    distribution, Pr(w | pi) is unchanged for every sequence w, since the forward vector
    summed over a block evolves by the block's common rows. Returns the quotient HMM and
    the block of each state. Numeric HMMs only (symbolic ones are returned unchanged).
    """
    n = h.n_states
    if h.symbolic:
        return h, list(range(n))
    cached = h.__dict__.get("_lumped")  # HMMs are immutable: lump once per model
    if cached is not None:
        return cached[0], list(cached[1])
    block = [0] * n
    sig0: dict = {}
    for s in range(n):
        key = tuple(sorted(h.emission[s].items()))
        block[s] = sig0.setdefault(key, len(sig0))
    count = len(sig0)
    while True:
        sig: dict = {}
        new = [0] * n
        for s in range(n):
            into: dict[int, Fraction] = {}
            for s2, p in h.transition[s].items():
                into[block[s2]] = into.get(block[s2], Fraction(0)) + p
            key = (block[s], tuple(sorted(into.items())))
            new[s] = sig.setdefault(key, len(sig))
        block = new
        if len(sig) == count:
            break
        count = len(sig)
    reps: dict[int, int] = {}
    for s in range(n):
        reps.setdefault(block[s], s)
    order = sorted(reps)
    states = tuple(h.states[reps[b]] for b in order)
    trans = []
    for b in order:
        row: dict[int, Fraction] = {}
        for s2, p in h.transition[reps[b]].items():
            row[block[s2]] = row.get(block[s2], Fraction(0)) + p
        trans.append(row)
    emis = tuple(dict(h.emission[reps[b]]) for b in order)
    out = HMM(states, h.observations, tuple(trans), emis, dict(h.parameters),
              h.name + " (lumped)")
    object.__setattr__(h, "_lumped", (out, tuple(block)))
    return out, block
