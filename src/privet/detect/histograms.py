"""Compact histograms of an event's statistic under D1 and D2, for reports.

The final test of Algorithm 1 (line 4) already reduces its fresh samples to one flat
histogram per feature (:class:`~privet.detect.space.Reducer`): the feature a candidate event
is built on is exactly "the statistic the event is about" of StatDP Sec. 4.3. This module
slices that feature out of both inputs' histograms and coarsens it to at most ``max_bins``
bins, keeping the event's endpoints as bin boundaries so the shaded region of a plot is the
event itself. No extra samples are drawn and nothing loops over samples.

The result is plain JSON data (``Counterexample.details["histograms"]``)::

    {"kind": "numeric" | "discrete", "statistic": "ω[0]", "source": "final-test samples",
     "n": [n1, n2], "d1": [...], "d2": [...], "in_event": [bool, ...],
     "event": "<event description>", "event_counts": [c1, c2],
     # numeric: bin edges (len(d1) + 1) and the mass outside them
     "edges": [...], "below": [b1, b2], "above": [a1, a2], "nonfinite": [f1, f2],
     "event_low": float | None, "event_high": float | None,    # None = infinite
     # discrete: one label per bin
     "labels": [...],
     # cross features (a category jointly with a number): the category condition and the
     # samples that do not meet it
     "condition": "count(FALSE) = 2", "outside": [o1, o2]}

For every input ``sum(d) + below + above + nonfinite + outside == n`` (absent keys are 0).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core import events as ev
from ..core.text import fmt_value, fmt_vec
from .space import Feature, Plan, _cat_event

MAX_BINS = 60


def _label(f: Feature, refs: np.ndarray) -> str:
    """The statistic a feature bins, in the notation of the event descriptions."""
    if f.kind == "hamming":
        return f"Hamming(ω, {fmt_vec(refs[f.ref], short=True)})"
    if f.kind == "count":
        return f"count({fmt_value(f.value)})"
    if f.kind == "length":
        return "length(ω)"
    if f.kind == "catcoord":
        return f"ω[{f.coord}]"
    return ev.stat_name(f.stat, f.coord if f.stat == "coord" else None)


def _ints(v: np.ndarray) -> list[int]:
    return [int(x) for x in np.asarray(v).tolist()]


def _group(lo: int, hi: int, cuts: list[int], max_bins: int) -> np.ndarray:
    """Boundaries (code positions) of coarse bins over codes ``[lo, hi)``.

    Regular groups of ``g`` codes plus the event's ``cuts`` (so the event is a union of bins).
    """
    span = hi - lo
    g = max(1, math.ceil(span / max(1, max_bins - 2)))
    b = set(range(lo, hi, g)) | {hi}
    b |= {c for c in cuts if lo < c < hi}
    return np.array(sorted(b), dtype=np.int64)


def _numeric(f: Feature, s1: np.ndarray, s2: np.ndarray, a: int, b: int,
             max_bins: int) -> dict[str, Any]:
    """Fine codes: 0 below edges[0], c in 1..nb is (e_{c-1}, e_c], nb+1 above, nb+2 NaN."""
    edges = np.asarray(f.edges, dtype=float)
    nb = len(edges) - 1
    inner = (s1[1:nb + 1] + s2[1:nb + 1]) > 0
    out: dict[str, Any] = {"kind": "numeric"}
    last = nb + 2                              # extended position of +inf (space._num_event)
    out["event_low"] = None if a == 0 else float(edges[a - 1])
    out["event_high"] = None if b == last else float(edges[b - 1])
    if np.any(inner):
        nz = np.flatnonzero(inner) + 1
        lo, hi = int(nz[0]), int(nz[-1]) + 1   # codes [lo, hi)
        bounds = _group(lo, hi, [a, b], max_bins)
        cum1 = np.concatenate([[0], np.cumsum(s1)])
        cum2 = np.concatenate([[0], np.cumsum(s2)])
        d1 = cum1[bounds[1:]] - cum1[bounds[:-1]]
        d2 = cum2[bounds[1:]] - cum2[bounds[:-1]]
        # codes [c0, c1) cover (edges[c0 - 1], edges[c1 - 1]]
        out["edges"] = [float(x) for x in edges[bounds - 1]]
        out["d1"], out["d2"] = _ints(d1), _ints(d2)
        out["in_event"] = [bool(a <= c0 and c1 <= b) for c0, c1 in
                           zip(bounds[:-1].tolist(), bounds[1:].tolist())]
        below = (int(s1[:lo].sum()), int(s2[:lo].sum()))
        above = (int(s1[hi:nb + 2].sum()), int(s2[hi:nb + 2].sum()))
    else:
        out["edges"], out["d1"], out["d2"], out["in_event"] = [], [], [], []
        below = (int(s1[0]), int(s2[0]))
        above = (int(s1[nb + 1]), int(s2[nb + 1]))
    out["below"], out["above"] = list(below), list(above)
    out["nonfinite"] = [int(s1[nb + 2]), int(s2[nb + 2])]
    return out


def _discrete(f: Feature, s1: np.ndarray, s2: np.ndarray, codes: tuple[int, int],
              max_bins: int) -> dict[str, Any]:
    """Codes 0..size-1: values 0..m (hamming/count/length) or ``f.values`` (+ "other")."""
    a, b = codes                                # event: codes [a, b)
    nz = np.flatnonzero((s1 + s2) > 0)
    lo, hi = (int(nz[0]), int(nz[-1]) + 1) if nz.size else (a, b)
    lo, hi = min(lo, a), max(hi, b)

    def name(c: int) -> str:
        if f.kind == "catcoord":
            return fmt_value(f.values[c]) if c < len(f.values) else "other"
        return str(c)

    bounds = _group(lo, hi, [a, b], max_bins)
    cum1 = np.concatenate([[0], np.cumsum(s1)])
    cum2 = np.concatenate([[0], np.cumsum(s2)])
    labels = [name(c0) if c1 - c0 == 1 else f"{name(c0)}–{name(c1 - 1)}"
              for c0, c1 in zip(bounds[:-1].tolist(), bounds[1:].tolist())]
    out: dict[str, Any] = {
        "kind": "discrete", "labels": labels,
        "d1": _ints(cum1[bounds[1:]] - cum1[bounds[:-1]]),
        "d2": _ints(cum2[bounds[1:]] - cum2[bounds[:-1]]),
        "in_event": [bool(a <= c0 and c1 <= b) for c0, c1 in
                     zip(bounds[:-1].tolist(), bounds[1:].tolist())],
    }  # codes outside [lo, hi) are empty by construction
    return out


def event_histograms(plan: Plan, cand: int, hist1: np.ndarray, hist2: np.ndarray,
                     max_bins: int = MAX_BINS) -> dict[str, Any]:
    """Histograms of candidate ``cand``'s statistic from two inputs' flat histograms.

    ``hist1``/``hist2`` are :class:`~privet.detect.space.Reducer` outputs (the final-test
    samples of D1 and D2 of Algorithm 1, line 4), already oriented like the witness.
    """
    cand = int(cand)
    f: Feature = plan.features[int(plan.feat[cand])]
    k, a, b = int(plan.k[cand]), int(plan.a[cand]), int(plan.b[cand])
    s1 = np.asarray(hist1[f.offset:f.offset + f.size], dtype=np.int64)
    s2 = np.asarray(hist2[f.offset:f.offset + f.size], dtype=np.int64)
    n = [int(s1.sum()), int(s2.sum())]
    if f.kind == "cross":
        assert f.cat is not None and f.num is not None
        nsz = f.num.size
        p1, p2 = s1[k * nsz:(k + 1) * nsz], s2[k * nsz:(k + 1) * nsz]
        out = _numeric(f.num, p1, p2, a, b, max_bins)
        out["statistic"] = _label(f.num, plan.refs)
        out["condition"] = _cat_event(f.cat, k, plan.refs).describe()
        out["outside"] = [n[0] - int(p1.sum()), n[1] - int(p2.sum())]
        lo, hi = k * nsz + a, k * nsz + b
    elif f.kind == "num":
        out = _numeric(f, s1, s2, a, b, max_bins)
        out["statistic"] = _label(f, plan.refs)
        lo, hi = a, b
    else:
        lo, hi = (k, k + 1) if k >= 0 else (a, b)
        out = _discrete(f, s1, s2, (lo, hi), max_bins)
        out["statistic"] = _label(f, plan.refs)
    out["n"] = n
    out["event"] = plan.event(cand).describe()
    out["event_counts"] = [int(s1[lo:hi].sum()), int(s2[lo:hi].sum())]
    out["source"] = "final-test samples"
    return out


__all__ = ["MAX_BINS", "event_histograms"]
