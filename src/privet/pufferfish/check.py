"""Exhaustive exact check for scenarios with fixed (numeric) parameters.

With every probability known, the Pufferfish condition for length-k observations is a
finite check: compute Pr(w | s_i) for every sequence w with positive probability (the
forward algorithm over all prefixes at once, :func:`~.hmm.enumerate_sequences`) and compare
every pair. Floats screen, Fractions decide: a (pair, sequence) whose float ratio is within
a relative 1e-7 of e^epsilon, or above it, is recomputed exactly (Eqs. 2-3 with Fractions)
before any verdict. Float forward passes over non-negative numbers have a relative error
below (k + 1)(|S| + 2) * 2^-53, far inside that margin for the models here, so a pair the
screen lets through is below the bound in exact arithmetic too. This is the "exact
evaluation" path of the architecture notes; the SMT encoding (Algorithm 1) is
:mod:`privet.pufferfish.smt`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from .hmm import enumerate_sequences
from .scenario import Budget, Scenario

SCREEN = 1e-7
MAX_SUSPECTS = 200_000


@dataclass
class Table:
    """Float probabilities of every possible length-k sequence under each initial state."""

    names: list
    seqs: np.ndarray  # (N, k) observation indices
    probs: np.ndarray  # (m, N)


@dataclass
class CheckOutcome:
    status: str  # verified | violated | unknown
    k: int
    sequence: tuple | None = None
    pair: tuple | None = None
    probabilities: tuple | None = None
    max_ratio: Any = None  # exact max ratio found at this k (Fraction or inf), if computed
    max_witness: tuple | None = None  # (pair, sequence) of the max ratio
    n_sequences: int = 0
    message: str = ""
    details: dict = field(default_factory=dict)


def initial_matrix(sc: Scenario, names: list) -> np.ndarray:
    """Normalized float initial distributions (m, S) for ``names``."""
    S = sc.hmm.n_states
    out = np.zeros((len(names), S))
    for r, n in enumerate(names):
        for s, v in sc.distribution(n).items():
            out[r, s] = float(v)
    return out


def table(sc: Scenario, k: int, cap: int = 4_000_000, keep_limit: int = 30_000_000) -> Table:
    """All sequences of length k with their float probabilities (memoized per scenario)."""
    cache = sc.__dict__.setdefault("_tables", {})
    if k in cache:
        return cache[k]
    names = sorted({n for p in sc.pairs for n in p}, key=list(sc.initial).index)
    inits = initial_matrix(sc, names)
    seq_blocks, prob_blocks = [], []
    size = 0
    for seqs, probs in enumerate_sequences(sc.hmm, inits, k, cap=cap):
        seq_blocks.append(seqs)
        prob_blocks.append(probs)
        size += probs.size
        if size > keep_limit:
            raise MemoryError
    seqs = np.concatenate(seq_blocks) if seq_blocks else np.zeros((0, k), dtype=np.int64)
    probs = np.concatenate(prob_blocks, axis=1) if prob_blocks else np.zeros((len(names), 0))
    t = Table(names, seqs, probs)
    cache[k] = t
    return t


def check_fixed(sc: Scenario, eps: Budget, k: int, want_max: bool = True) -> CheckOutcome:
    """Decide Pr(w | s_i) <= e^eps Pr(w | s_j) for all pairs and all length-k sequences."""
    if sc.symbolic:
        raise ValueError("check_fixed needs a scenario without unknown parameters")
    try:
        tab = table(sc, k)
    except MemoryError:
        return CheckOutcome("unknown", k, message=f"too many sequences of length {k} to "
                            "enumerate; use the SMT path")
    pos = {n: i for i, n in enumerate(tab.names)}
    I = np.array([pos[a] for a, _ in sc.pairs], dtype=np.int64)
    J = np.array([pos[b] for _, b in sc.pairs], dtype=np.int64)
    c_lo = float(eps.bounds()[0])
    P1 = tab.probs[I]
    P2 = tab.probs[J]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(P1 > 0, P1 / P2, 0.0)  # inf where P2 == 0 < P1
    suspects = np.argwhere(ratio >= c_lo * (1 - SCREEN))
    out = CheckOutcome("verified", k, n_sequences=len(tab.seqs))
    exact_cache: dict = {}

    def exact(pi: int, si: int) -> tuple[Fraction, Fraction]:
        a, b = sc.pairs[pi]
        seq = tuple(int(o) for o in tab.seqs[si])
        key = (a, b, seq)
        if key not in exact_cache:
            exact_cache[key] = (sc.probability(a, seq, encoded=True),
                                sc.probability(b, seq, encoded=True))
        return exact_cache[key]

    if len(suspects) > MAX_SUSPECTS:
        return CheckOutcome("unknown", k, n_sequences=len(tab.seqs),
                            message=f"{len(suspects):,} (pair, sequence) combinations lie "
                                    "within float precision of the bound")
    if len(suspects):
        order = np.argsort(-ratio[suspects[:, 0], suspects[:, 1]], kind="stable")
        for pi, si in suspects[order]:
            p1, p2 = exact(int(pi), int(si))
            if eps.exceeded(p1, p2):
                out.status = "violated"
                out.pair = sc.pairs[int(pi)]
                out.sequence = sc.hmm.decode(tab.seqs[int(si)])
                out.probabilities = (p1, p2)
                break
    if want_max and ratio.size:
        top = np.nanmax(ratio)
        if np.isinf(top):
            pi, si = np.argwhere(np.isinf(ratio))[0]
            out.max_ratio = float("inf")
            out.max_witness = (sc.pairs[int(pi)], sc.hmm.decode(tab.seqs[int(si)]))
        elif top > 0:
            best: Any = None
            for pi, si in np.argwhere(ratio >= top * (1 - 1e-9)):
                p1, p2 = exact(int(pi), int(si))
                r = p1 / p2
                if best is None or r > best[0]:
                    best = (r, sc.pairs[int(pi)], sc.hmm.decode(tab.seqs[int(si)]))
            out.max_ratio = best[0]
            out.max_witness = (best[1], best[2])
    return out
