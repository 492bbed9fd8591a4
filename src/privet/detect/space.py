"""Event search spaces of StatDP Sec. 4.3, counted from sufficient statistics.

Outputs are reduced, chunk by chunk where they are sampled, to one flat histogram per input
(:class:`Reducer`): per *feature* a histogram of integer codes. Features are

* categorical (values ``0..K-1``): Hamming distance to a noise-free reference output
  (case 1), the count of each value (case 1; FALSE for mixed outputs, case 5), the length
  of a variable-length output (case 2), and, for categorical outputs, each coordinate's
  value;
* numeric (case 3/4): each coordinate and avg/min/max over the finite entries, binned on a
  fine grid of "nice" edges (multiples of 1, 2 or 5 times a power of ten; integers for
  integer outputs) with one code below, one above and one for non-finite entries;
* cross products (case 5, mixed outputs): a categorical feature jointly with a numeric one.

Every candidate event is a contiguous range of codes of one feature, so its count is a
difference of the flat cumulative histogram: :func:`count_events` counts *all* candidates
of an input with one gather. Interval endpoints are a coarse subset of the fine edges,
placed at pooled pilot quantiles (denser in the tails, where violations live).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..core import events as ev
from ..core.errors import MechanismError, PrivetError
from ..core.events import Event
from ..core.mechanism import ABORTED, FALSE
from ..core.noise import value_codes
from ..core.text import fmt_num, fmt_value, fmt_vec
from ..stats.counts import most_separating

LEVELS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.035, 0.05, 0.075, 0.1, 0.15, 0.2, 0.25, 0.3,
          0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.925, 0.95,
          0.965, 0.98, 0.99, 0.995, 0.998, 0.999)
CROSS_LEVELS = (0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99)
MAX_CATEGORIES = 12
FINE_BINS = 800
MAX_CACHED_ROWS = 100_000  # distinct categorical output rows whose codes a plan keeps
WIDE_ENTRIES = 64          # wider outputs get coordinate events on ...
ENTRY_EVENTS = 64          # ... this many entries, those the pilot samples separate most
RANK_ELEMENTS = 1 << 22    # entries of each pilot read to rank them, at most (and >= 256 rows)


class NoEventError(PrivetError):
    """No event of the search space can be built for the mechanism's outputs."""


def rows_of(outputs: np.ndarray) -> np.ndarray:
    out = np.asarray(outputs)
    return out.reshape(out.shape[0], -1) if out.ndim > 1 else out.reshape(-1, 1)


@dataclass(frozen=True)
class Schema:
    """What the outputs look like (decided from a pilot sample and the output spec)."""

    width: int
    categorical: bool
    values: tuple            # distinct finite values of categorical outputs
    integer: bool            # finite values integral
    has_false: bool
    has_aborted: bool
    dtype_kind: str
    shape: tuple

    @property
    def mixed(self) -> bool:
        return self.has_false and not self.categorical

    def describe(self) -> str:
        kind = "categorical" if self.categorical else ("mixed" if self.mixed else "numeric")
        bits = [kind, f"width {self.width}"]
        if self.has_aborted:
            bits.append("variable length")
        return ", ".join(bits)


def _kind(arr: np.ndarray) -> str:
    return "int" if arr.dtype.kind in "iub" else "real"


def infer_schema(mech: Any, pilots: list[tuple[str, np.ndarray]]) -> Schema:
    """The output schema; :class:`MechanismError` when outputs change type between runs."""
    first_name, first = pilots[0]
    for name, arr in pilots[1:]:
        if arr.shape[1:] != first.shape[1:]:
            raise MechanismError(
                f"mechanism {mech.name!r} returns outputs that change type between runs: shape "
                f"{first.shape[1:] or 'scalar'} on {first_name} but {arr.shape[1:] or 'scalar'} "
                f"on {name}; pad variable-length outputs with privet.ABORTED."
            )
        if _kind(arr) != _kind(first):
            raise MechanismError(
                f"mechanism {mech.name!r} returns outputs that change type between runs: "
                f"{first.dtype} on {first_name} but {arr.dtype} on {name}."
            )
    width = rows_of(first).shape[1]
    if width == 0:
        raise NoEventError(
            f"mechanism {mech.name!r} returns empty outputs: no event can be built from them."
        )
    # one pilot at a time (small arrays; integer arrays need no finiteness or integrality
    # check and hold no sentinel)
    integer, has_false, has_aborted, parts = True, False, False, []
    for _, arr in pilots:
        rows = rows_of(arr)
        if rows.dtype.kind in "iub":
            finite = rows.ravel()
        else:
            rows = rows.astype(float, copy=False)
            has_false = has_false or bool(np.any(rows == FALSE))
            has_aborted = has_aborted or bool(np.any(rows == ABORTED))
            if not integer:  # decided by an earlier pilot: only the sentinels are left
                continue
            finite = rows[np.isfinite(rows)]
            integer = bool(np.array_equal(finite, np.round(finite)))
        if integer and finite.size:
            parts.append(_distinct(finite))
    # only integers can be categories
    distinct = np.unique(np.concatenate(parts)) if integer and parts else np.array([])
    spec_cat = getattr(mech.output, "kind", "numeric") == "categorical"
    categorical = spec_cat or (integer and distinct.size <= MAX_CATEGORIES)
    if spec_cat and not integer:
        raise MechanismError(
            f"mechanism {mech.name!r} declares categorical outputs but returned non-integer "
            "values; encode categories as integers."
        )
    if categorical and distinct.size > 4 * MAX_CATEGORIES:
        categorical = False
    return Schema(
        width=width, categorical=bool(categorical),
        values=tuple(float(v) for v in distinct) if categorical else (),
        integer=integer, has_false=has_false, has_aborted=has_aborted, dtype_kind=_kind(first),
        shape=tuple(first.shape[1:]),
    )


def _distinct(values: np.ndarray) -> np.ndarray:
    """The sorted distinct values of integral ``values``: a histogram when their range is
    small (linear time; sorting a pilot of every input is slower), else ``np.unique``."""
    if values.size == 0:
        return values.astype(float)
    lo, hi = float(values.min()), float(values.max())
    if hi - lo > 4 * values.size or hi - lo > 1e7:
        return np.unique(values)
    seen = np.bincount((values - lo).astype(np.int64), minlength=int(hi - lo) + 1)
    return np.flatnonzero(seen).astype(float) + lo


def _nice_step(span: float, bins: int) -> float:
    raw = max(span, 1e-12) / bins
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if m * mag >= raw:
            return m * mag
    return 10 * mag  # pragma: no cover


def _num_values(rows: np.ndarray, stat: str, coord: int | None,
                ctx: dict | None = None) -> np.ndarray:
    """The numeric statistic per row; NaN when it has no finite entry."""
    if stat == "coord":
        v = rows[:, coord].astype(float)
        return np.where(np.isfinite(v), v, np.nan)
    ctx = {} if ctx is None else ctx
    if "allfinite" not in ctx:
        ctx["allfinite"] = bool(np.isfinite(rows).all())
    if ctx["allfinite"]:
        if stat == "avg":
            return rows.mean(axis=1)
        return _extreme(rows, np.minimum if stat == "min" else np.maximum)
    if "finite" not in ctx:
        ctx["finite"] = np.isfinite(rows)
        ctx["nfinite"] = _row_count(ctx["finite"])
    finite, cnt = ctx["finite"], ctx["nfinite"]
    with np.errstate(invalid="ignore", divide="ignore"):
        if stat == "avg":
            v = np.where(finite, rows, 0.0).sum(axis=1) / cnt
        elif stat == "min":
            v = _extreme(np.where(finite, rows, np.inf), np.minimum)
        else:
            v = _extreme(np.where(finite, rows, -np.inf), np.maximum)
    return np.where(cnt > 0, v, np.nan)


def _row_count(mask: np.ndarray) -> np.ndarray:
    """The True entries of each row of a Boolean matrix with few columns (what
    ``np.count_nonzero(mask, axis=1)`` gives), one column at a time (see :func:`_extreme`)."""
    out = mask[:, 0].astype(np.int64)
    for j in range(1, mask.shape[1]):
        out += mask[:, j]
    return out


def _extreme(rows: np.ndarray, pick) -> np.ndarray:
    """The row-wise min or max (``pick``: np.minimum or np.maximum) of a matrix with few
    columns, one column at a time: NumPy reduces a short last axis row by row, about ten
    times slower than combining the columns (the same values)."""
    out = rows[:, 0].copy()
    for j in range(1, rows.shape[1]):
        pick(out, rows[:, j], out=out)
    return out


@dataclass
class Feature:
    """One statistic of the output with integer codes ``0..size-1``."""

    kind: str                 # "hamming" | "count" | "length" | "catcoord" | "num" | "cross"
    size: int
    offset: int = 0
    ref: int = -1             # index of the Hamming reference (pairs use their own)
    value: float = 0.0        # counted value ("count") or None
    coord: int | None = None  # coordinate ("catcoord", "num" with stat coord)
    stat: str = "coord"       # numeric statistic
    values: tuple = ()        # categorical values in code order ("catcoord")
    edges: np.ndarray | None = None  # fine edges (numeric)
    integer: bool = False
    cat: Feature | None = None       # categorical part of a cross feature
    num: Feature | None = None       # numeric part of a cross feature
    positions: np.ndarray | None = None  # coarse endpoint positions (numeric)

    def codes(self, ctx: dict) -> np.ndarray:
        """Codes of this feature for a chunk (``ctx`` from :func:`_context`)."""
        key = (self.kind, self.ref, self.value, self.coord, self.stat)
        if self.kind in ("hamming", "count", "length") and key in ctx:
            return ctx[key]
        out = self._codes(ctx)
        if self.kind in ("hamming", "count", "length"):
            ctx[key] = out
        return out

    def _codes(self, ctx: dict) -> np.ndarray:
        rows = ctx["rows"]
        if self.kind == "hamming":
            return _row_count(ctx["cat"] != ctx["refcodes"][self.ref])
        if self.kind == "count":
            if "cat" in ctx and self.value in ctx["valpos"]:
                return _row_count(ctx["cat"] == ctx["valpos"][self.value])
            return _row_count(rows == self.value)
        if self.kind == "length":
            return _row_count(rows != ABORTED)
        if self.kind == "catcoord":
            return ctx["cat"][:, self.coord]
        if self.kind == "num":
            key = ("num", self.stat, self.coord)
            if key not in ctx:
                v = _num_values(rows, self.stat, self.coord, ctx)
                nb = len(self.edges) - 1                    # fine bins between the edges
                lo, step = float(self.edges[0]), float(self.edges[1] - self.edges[0])
                with np.errstate(invalid="ignore"):
                    b = np.ceil((v - lo) / step - 1e-9)     # v in (e_{b-1}, e_b] -> b
                b = np.where(np.isnan(v), nb + 2, np.clip(b, 0, nb + 1))
                ctx[key] = b.astype(np.int64)
            return ctx[key]
        # cross
        assert self.cat is not None and self.num is not None
        return self.cat.codes(ctx) * self.num.size + self.num.codes(ctx)


def _context(rows: np.ndarray, plan: Plan) -> dict:
    """Per-chunk values shared by the features: category codes, finite mask."""
    ctx: dict = {"rows": rows, "allfinite": bool(np.isfinite(rows).all())}
    coords = [f for f in plan.features if f.kind == "num" and f.stat == "coord"]
    if coords:  # every coordinate binned in one pass
        cols = np.array([f.coord for f in coords])
        lo = np.array([float(f.edges[0]) for f in coords])
        step = np.array([float(f.edges[1] - f.edges[0]) for f in coords])
        nb = np.array([len(f.edges) - 1 for f in coords])
        sub = rows[:, cols]
        with np.errstate(invalid="ignore"):
            b = np.ceil((sub - lo) / step - 1e-9)
        b = np.clip(b, 0, nb + 1)
        if not ctx["allfinite"]:
            b = np.where(np.isfinite(sub), b, nb + 2)
        b = b.astype(np.int64)
        for j, f in enumerate(coords):
            ctx[("num", "coord", f.coord)] = b[:, j]
    vals = plan.cat_values
    if vals:
        cat = np.full(rows.shape, len(vals), dtype=np.int64)  # unknown value -> last code
        for i, v in enumerate(vals):
            cat[rows == v] = i
        ctx["cat"] = cat
        ctx["valpos"] = {v: i for i, v in enumerate(vals)}
        if len(plan.refs):
            refcodes = np.full(plan.refs.shape, len(vals), dtype=np.int64)
            for i, v in enumerate(vals):
                refcodes[plan.refs == v] = i
            ctx["refcodes"] = refcodes
    return ctx


@dataclass
class Plan:
    """Features, their flat layout and the candidate events."""

    schema: Schema
    features: list
    refs: np.ndarray            # Hamming references (rows)
    total: int
    cat_values: tuple = ()      # value order of the category codes (categorical outputs)
    # candidates: flat code range [start, stop) and metadata
    start: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    stop: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    feat: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    ref: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    a: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    b: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    k: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    # categorical outputs: flat codes of every distinct output row seen so far (sorted row
    # keys, one row of codes per key), filled by Reducer
    row_codes: tuple | None = field(default=None, repr=False, compare=False)

    def event(self, i: int) -> ev.Event:
        """The core :class:`~privet.core.events.Event` of candidate ``i``."""
        f = self.features[int(self.feat[i])]
        k, a, b = int(self.k[i]), int(self.a[i]), int(self.b[i])
        if f.kind == "cross":
            return ev.And((_cat_event(f.cat, k, self.refs), _num_event(f.num, a, b)))
        if f.kind == "num":
            return _num_event(f, a, b)
        if k < 0:  # a range of an ordinal statistic: codes a..b-1
            return _range_event(f, a, b - 1, self.refs)
        return _cat_event(f, k, self.refs)


@dataclass(frozen=True, eq=True)
class FiniteInterval(ev.Interval):
    """``low < stat(ω) <= high`` over finite values only: a sentinel (FALSE, ABORTED) entry
    is in no interval, also not in ``(a, inf]``."""

    kind: ClassVar[str] = "finite_interval"

    def contains(self, outputs):
        s = ev.statistic(outputs, self.stat, self.coord)
        return np.isfinite(s) & (s > self.low) & (s <= self.high)

    def describe(self):
        # "ω[0] > 2" would read as holding the +∞ (ABORTED) entries too: it does not
        name = ev.stat_name(self.stat, self.coord)
        if self.high == math.inf and self.low > -math.inf:
            return f"{fmt_num(self.low)} < {name} < ∞"
        return ev.interval_text(name, self.low, self.high)


@dataclass(frozen=True, eq=True)
class HammingRange(Event):
    """``low <= Hamming(ω, reference) <= high`` (a range of the distances of Sec. 4.3)."""

    kind: ClassVar[str] = "hamming_range"
    reference: tuple
    low: int
    high: int

    def contains(self, outputs):
        rows = rows_of(outputs).astype(float)
        d = _row_count(rows != np.asarray(self.reference, dtype=float))
        return (d >= self.low) & (d <= self.high)

    def describe(self):
        return f"Hamming(ω, {fmt_vec(self.reference, short=True)}) ∈ [{self.low}, {self.high}]"


@dataclass(frozen=True, eq=True)
class CountRange(Event):
    """``low <= count(value) <= high``."""

    kind: ClassVar[str] = "count_range"
    value: float
    low: int
    high: int

    def contains(self, outputs):
        c = _row_count(rows_of(outputs) == self.value)
        return (c >= self.low) & (c <= self.high)

    def describe(self):
        return f"count({fmt_value(self.value)}) ∈ [{self.low}, {self.high}]"


def _range_event(f: Feature, lo: int, hi: int, refs: np.ndarray) -> Event:
    if f.kind == "hamming":
        return HammingRange(tuple(float(v) for v in refs[f.ref]), lo, hi)
    if f.kind == "count":
        return CountRange(float(f.value), lo, hi)
    return ev.Interval(lo - 0.5, hi + 0.5, "length", None)


def _cat_event(f: Feature, k: int, refs: np.ndarray) -> ev.Event:
    if f.kind == "hamming":
        return ev.Hamming(tuple(float(v) for v in refs[f.ref]), k)
    if f.kind == "count":
        return ev.Count(float(f.value), k)
    if f.kind == "length":
        return ev.Equals(float(k), "length", None)
    return ev.Equals(float(f.values[k]), "coord", f.coord)


def _num_event(f: Feature, a: int, b: int) -> ev.Event:
    """Interval between extended positions a < b (0 = -inf, p = edges[p-1], last = +inf)."""
    edges = f.edges
    assert edges is not None
    last = len(edges) + 1
    lo = -math.inf if a == 0 else float(edges[a - 1])
    hi = math.inf if b == last else float(edges[b - 1])
    coord = f.coord if f.stat == "coord" else None
    if f.integer and math.isfinite(lo) and math.isfinite(hi) and hi - lo == 1:
        return ev.Equals(hi, f.stat, coord)
    if not math.isfinite(hi):
        return FiniteInterval(_round(lo), _round(hi), f.stat, coord)
    return ev.Interval(_round(lo), _round(hi), f.stat, coord)


def _round(x: float) -> float:
    return x if not math.isfinite(x) else float(round(x, 10))


def _edges(values: np.ndarray, integer: bool) -> np.ndarray:
    lo, hi = float(np.min(values)), float(np.max(values))
    span = hi - lo
    lo, hi = lo - 0.25 * span - 1e-9, hi + 0.25 * span + 1e-9
    if integer and hi - lo <= 4 * FINE_BINS:
        step = 1.0
    else:
        step = _nice_step(hi - lo, FINE_BINS)
        if integer:
            step = max(1.0, float(round(step)))
    start = math.floor(lo / step) * step
    stop = math.ceil(hi / step) * step
    n = int(round((stop - start) / step))
    return np.round(start + step * np.arange(n + 1), 10)


def _positions(values: np.ndarray, edges: np.ndarray, levels, integer: bool) -> np.ndarray:
    """Coarse endpoint positions: 0 (-inf), edge positions at pooled quantiles, last (+inf)."""
    last = len(edges) + 1
    if integer:
        distinct = np.unique(values)
        if distinct.size <= 40:
            # every integer value seen, and the one below the smallest: equality events
            pts = np.r_[distinct.min() - 1, distinct]
            pos = np.searchsorted(edges, pts) + 1
            return np.unique(np.r_[0, pos[(pos >= 1) & (pos <= len(edges))], last])
    q = np.quantile(values, levels)
    pos = np.searchsorted(edges, q, side="left") + 1          # smallest edge >= quantile
    pos = pos[(pos >= 1) & (pos <= len(edges))]
    return np.unique(np.r_[0, pos, last])


def separating_entries(schema: Schema, pilot_pairs: list[tuple[np.ndarray, np.ndarray]],
                       wide: int = WIDE_ENTRIES, keep: int = ENTRY_EVENTS
                       ) -> np.ndarray | None:
    """For outputs wider than ``wide`` entries, the ``keep`` entries (in order) whose values
    differ most between the pilot samples of some pair -- the largest two-sample
    Kolmogorov-Smirnov distance of the entry over the pairs (on at most
    :data:`RANK_ELEMENTS` entries of each pilot); None for narrower outputs (every entry
    gets coordinate events). StatDP's coordinate events on ten thousand entries took
    minutes and tens of gigabytes per look; the entries a change of input moves are the
    ones its pilots separate (the pilot only chooses events, which the final test's fresh
    samples judge), and the statistics over all entries (Hamming distance, counts, avg,
    min, max) still read every entry."""
    if schema.width <= wide or not pilot_pairs:
        return None
    return np.sort(most_separating([(rows_of(p1), rows_of(p2)) for p1, p2 in pilot_pairs],
                                   keep, max(256, RANK_ELEMENTS // schema.width)))


def build_plan(schema: Schema, pilot_rows: np.ndarray, refs: np.ndarray,
               entries: np.ndarray | None = None) -> Plan:
    """Features and candidates for outputs of this schema (pilot rows pooled over inputs);
    ``entries``: the coordinates that get coordinate events (all when None,
    :func:`separating_entries`)."""
    m = schema.width
    coords = range(m) if entries is None else [int(c) for c in entries]
    feats: list[Feature] = []
    cats: list[Feature] = []
    if schema.categorical:
        if m > 1:
            for j in range(len(refs)):
                cats.append(Feature("hamming", m + 1, ref=j))
            for v in schema.values + ((FALSE,) if schema.has_false else ()):
                cats.append(Feature("count", m + 1, value=float(v)))
        vals = tuple(sorted(schema.values + ((FALSE,) if schema.has_false else ()) +
                            ((ABORTED,) if schema.has_aborted else ())))
        for c in coords:
            cats.append(Feature("catcoord", len(vals) + 1, coord=c, values=vals))
    elif schema.has_false and m > 1:
        cats.append(Feature("count", m + 1, value=float(FALSE)))
    if schema.has_aborted and m > 1:
        cats.append(Feature("length", m + 1))
    nums: list[Feature] = []
    if not schema.categorical:
        stats = [("coord", c) for c in coords]
        if m > 1:
            stats += [("avg", None), ("min", None), ("max", None)]
        seen: dict[bytes, list[np.ndarray]] = {}
        ctx: dict = {}  # the finite mask and counts, computed once for avg, min and max
        head = min(64, pilot_rows.shape[0])
        for stat, coord in stats:
            raw = _num_values(pilot_rows, stat, coord, ctx)
            # equal statistics (e.g. avg = min = max when one entry is numeric) give the
            # same events; a short prefix's bytes pick the few statistics worth the full
            # comparison (comparing every pair took minutes on 10,000 entries)
            key = np.nan_to_num(raw[:head], nan=np.inf).tobytes()
            bucket = seen.setdefault(key, [])
            if any(np.array_equal(raw, other, equal_nan=True) for other in bucket):
                continue
            bucket.append(raw)
            vals = raw[np.isfinite(raw)]
            if vals.size == 0:
                continue
            vals.sort()  # the quantiles of both position sets are read off one sort
            integer = schema.integer and stat != "avg"
            edges = _edges(vals, integer)
            f = Feature("num", len(edges) + 2, stat=stat, coord=coord, edges=edges,
                        integer=integer)
            f.positions = _positions(vals, edges, LEVELS, integer)
            f._pilot = vals  # type: ignore[attr-defined]
            nums.append(f)
    feats = cats + nums
    if schema.mixed:
        # count(FALSE) x numeric (Table 2's iSVT4 event); length only without FALSE counts
        cross_cats = [c for c in cats if c.kind == "count"] or \
            [c for c in cats if c.kind == "length"]
        for c in cross_cats:
            for nf in nums:
                cross = Feature("cross", c.size * nf.size, cat=c, num=nf)
                cross.positions = _positions(nf._pilot, nf.edges, CROSS_LEVELS,  # type: ignore
                                             nf.integer)
                feats.append(cross)
    offset = 0
    for f in feats:
        f.offset = offset
        offset += f.size
    cat_values: tuple = ()
    if schema.categorical:
        cat_values = tuple(sorted(schema.values + ((FALSE,) if schema.has_false else ()) +
                                  ((ABORTED,) if schema.has_aborted else ())))
    plan = Plan(schema, feats, refs, offset, cat_values)
    _candidates(plan)
    if plan.start.size == 0:
        raise NoEventError("no event of StatDP's search space (Sec. 4.3) fits these outputs.")
    return plan


def _pairs(pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    i, j = np.triu_indices(len(pos), k=1)
    a, b = pos[i], pos[j]
    keep = ~((a == 0) & (b == pos[-1]))  # (-inf, inf) is every finite value: skip
    return a[keep], b[keep]


def _candidates(plan: Plan) -> None:
    cols: dict[str, list] = {k: [] for k in ("start", "stop", "feat", "ref", "a", "b", "k")}

    def add(start, stop, fi, ref, a, b, k):
        n = len(start)
        cols["start"].append(np.asarray(start, np.int64))
        cols["stop"].append(np.asarray(stop, np.int64))
        cols["feat"].append(np.full(n, fi, np.int64))
        cols["ref"].append(np.full(n, ref, np.int64))
        cols["a"].append(np.broadcast_to(np.asarray(a, np.int64), n))
        cols["b"].append(np.broadcast_to(np.asarray(b, np.int64), n))
        cols["k"].append(np.broadcast_to(np.asarray(k, np.int64), n))

    for fi, f in enumerate(plan.features):
        if f.kind in ("hamming", "count", "length", "catcoord"):
            kk = np.arange(f.size - (1 if f.kind == "catcoord" else 0))
            add(f.offset + kk, f.offset + kk + 1, fi, f.ref, 0, 0, kk)
            if f.kind != "catcoord" and f.size > 2:
                # ordinal statistics also get ranges (an extension of Sec. 4.3: a union of
                # neighbouring values keeps the ratio and gains samples)
                i, j = np.triu_indices(f.size + 1, k=2)
                keep = ~((i == 0) & (j == f.size))
                add(f.offset + i[keep], f.offset + j[keep], fi, f.ref, i[keep], j[keep], -1)
        elif f.kind == "num":
            a, b = _pairs(f.positions)
            add(f.offset + a, f.offset + b, fi, -1, a, b, 0)
        else:  # cross: category k and interval (a, b] of the numeric part, k-major
            a, b = _pairs(f.positions)
            kk = np.repeat(np.arange(f.cat.size), a.size)
            a, b = np.tile(a, f.cat.size), np.tile(b, f.cat.size)
            base = f.offset + kk * f.num.size
            add(base + a, base + b, fi, -1, a, b, kk)
    for key, parts in cols.items():
        setattr(plan, key, np.concatenate(parts) if parts else np.zeros(0, np.int64))


@dataclass
class Reducer:
    """Sample-and-reduce: a chunk of outputs -> the flat histogram of every feature."""

    plan: Plan
    name: str = "mechanism"

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        out = np.asarray(outputs)
        schema = self.plan.schema
        if out.shape[1:] != schema.shape:
            raise MechanismError(
                f"mechanism {self.name!r} returns outputs that change type between runs: "
                f"shape {out.shape[1:] or 'scalar'} after {schema.shape or 'scalar'}."
            )
        if _kind(out) != schema.dtype_kind:
            raise MechanismError(
                f"mechanism {self.name!r} returns outputs that change type between runs: "
                f"{out.dtype} after {'integers' if schema.dtype_kind == 'int' else 'reals'}."
            )
        rows = rows_of(out).astype(float, copy=False)  # read only: no copy of float rows
        vals = self.plan.cat_values
        base = len(vals) + 1
        if vals and not any(f.kind == "num" for f in self.plan.features) and \
                rows.shape[1] * math.log2(base) < 62:
            # categorical outputs repeat: reduce the distinct rows, weighted by their counts
            keys = value_codes(rows, vals)  # unknown value: digit 0
            if base ** rows.shape[1] <= max(1 << 16, 4 * rows.shape[0]):
                # few possible rows: count them by key, no sort
                tally = np.bincount(keys)
                uniq = np.flatnonzero(tally)
                counts = tally[uniq]
            else:
                uniq, counts = np.unique(keys, return_counts=True)
            codes = self._row_codes(uniq, keys, rows)
            w = np.repeat(counts, codes.shape[1]).astype(float)
            return np.rint(np.bincount(codes.ravel(), weights=w,
                                       minlength=self.plan.total)).astype(np.int64)
        ctx = _context(rows, self.plan)
        codes = np.concatenate([f.codes(ctx) + f.offset for f in self.plan.features])
        return np.bincount(codes, minlength=self.plan.total).astype(np.int64)

    def _row_codes(self, keys: np.ndarray, row_keys: np.ndarray, rows: np.ndarray
                   ) -> np.ndarray:
        """Flat codes (one column per feature) of the distinct categorical rows with the
        sorted ``keys`` (``row_keys``: the key of each row of ``rows``): a chunk's features
        are computed only for rows that no earlier chunk of the session produced (they
        repeat: a few hundred distinct rows at most for most mechanisms), on the first row
        of each such key; the others are looked up."""
        plan = self.plan
        known, table = plan.row_codes or (np.zeros(0, np.int64), None)
        pos = np.minimum(np.searchsorted(known, keys), max(known.size - 1, 0))
        new = ~(known[pos] == keys) if known.size else np.ones(keys.size, bool)
        if np.any(new):
            at = np.flatnonzero(np.isin(row_keys, keys[new]))
            first = at[np.unique(row_keys[at], return_index=True)[1]]  # in key order
            ctx = _context(rows[first], plan)
            fresh = np.stack([f.codes(ctx) + f.offset for f in plan.features], axis=1)
            if known.size + fresh.shape[0] > MAX_CACHED_ROWS:  # too varied to keep
                out = np.empty((keys.size, fresh.shape[1]), np.int64)
                out[new] = fresh
                if known.size:
                    out[~new] = table[pos[~new]]
                return out
            known = np.concatenate([known, keys[new]])
            table = fresh if table is None else np.concatenate([table, fresh])
            order = np.argsort(known, kind="stable")
            known, table = known[order], table[order]
            plan.row_codes = (known, table)
            pos = np.searchsorted(known, keys)
        return table[pos]


def count_events(plan: Plan, hist: np.ndarray, index: np.ndarray | None = None) -> np.ndarray:
    """Counts of all candidates (or of ``index``) from one input's flat histogram."""
    cum = np.concatenate([[0], np.cumsum(hist)])
    if index is None:
        return cum[plan.stop] - cum[plan.start]
    return cum[plan.stop[index]] - cum[plan.start[index]]


__all__ = ["NoEventError", "Plan", "Reducer", "Schema", "build_plan", "count_events",
           "infer_schema", "rows_of", "separating_entries"]
