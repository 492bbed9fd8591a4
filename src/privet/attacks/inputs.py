"""Input pairs for black boxes: the representative patterns, random pairs inside the domain,
every pair of a small finite domain, and the moves of a local search.

* :func:`pattern_pairs` -- the neighbor relation's representative pairs (StatDP Table 1 and
  DP-Sniper's patterns in both orientations, with "all below":
  :meth:`privet.core.neighbors.Neighbors.pairs`) and the step pairs 1^k 0^(n-k) against
  0^k 1^(n-k) at every split k (StatDP's "x shape" is k = n/2) at the input length, inside
  the domain, one per unordered pair (an attack tests both orientations of each event), and
  stretched to the domain's ends.
* :func:`random_pair` -- a random input of the domain and a neighbor at a vertex of the
  relation (every entry moved by -Delta, 0 or +Delta; one entry for 'one differs'...), half
  of the time with the entries at the domain's extremes, where the ratios of tail events
  (sparse vector, noisy max) are largest.
* :func:`all_pairs` -- every neighboring pair when the domain has few inputs (RAPPOR's 21
  values).
* :func:`move` -- a local move of a pair that keeps it inside the relation and the domain.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ..core.errors import PrivetError
from ..core.mechanism import Mechanism

__all__ = ["Pair", "all_pairs", "default_length", "domain_range", "move", "pair_key",
           "pattern_pairs", "random_pair", "sweep_pairs", "valid"]

Pair = tuple  # (x, x2, label)
SPAN = 10.0   # half-width of random inputs when the domain is unbounded
ALL_PAIRS_CAP = 64  # enumerate every pair of domains with at most this many inputs


def default_length(mech: Mechanism, length: int | None = None, fallback: int = 5) -> int:
    """The input length: the domain's when fixed, else ``length`` (default ``fallback``),
    kept inside a ranged domain length (one more than its least for add/remove)."""
    d = mech.domain.length
    if isinstance(d, int):
        return d
    want = fallback if length is None else int(length)
    if isinstance(d, tuple):
        low = d[0] + (1 if mech.neighbors.kind == "add_remove" else 0)
        return int(min(max(want, low), d[1]))
    return want


def domain_range(mech: Mechanism) -> tuple[float, float]:
    """The interval random inputs are drawn from (the domain's, or around 0 when open)."""
    lo, hi = mech.domain.low, mech.domain.high
    if math.isfinite(lo) and math.isfinite(hi):
        return float(lo), float(hi)
    if math.isfinite(lo):
        return float(lo), float(lo) + 2 * SPAN
    if math.isfinite(hi):
        return float(hi) - 2 * SPAN, float(hi)
    return -SPAN, SPAN


def valid(mech: Mechanism, x, x2) -> tuple[np.ndarray, np.ndarray] | None:
    """``(x, x2)`` as checked float arrays when both lie in the domain and are neighbors."""
    try:
        a = np.asarray(mech.domain.check(x), dtype=float)
        b = np.asarray(mech.domain.check(x2), dtype=float)
    except PrivetError:
        return None
    if np.array_equal(a, b) or not mech.neighbors.are_neighbors(a, b):
        return None
    return a, b


def pair_key(a: np.ndarray, b: np.ndarray) -> bytes:
    """The same key for (a, b) and (b, a)."""
    ka, kb = (v.tobytes() + len(v).to_bytes(8, "little") for v in (a, b))  # any length
    return min(ka, kb) + max(ka, kb)


def unique(pairs: list[Pair]) -> list[Pair]:
    seen, out = set(), []
    for a, b, label in pairs:
        k = pair_key(a, b)
        if k not in seen:
            seen.add(k)
            out.append((a, b, label))
    return out


STRETCH = (0.5, 1.0)


def pattern_pairs(mech: Mechanism, length: int) -> list[Pair]:
    """The relation's representative pairs at ``length`` inside the domain (unordered; the
    relation yields each pattern mirrored too, :meth:`privet.core.neighbors.Neighbors.
    pairs`) and the step pairs at every split (:func:`_steps`), each also stretched across
    the domain: the entries that move up (from the pattern's first input to its second)
    placed towards its top, those that move down towards its bottom (halfway and all the
    way), where the ratios of tail events are largest for some mechanisms; for relations
    that let a record take any value, the record moved across a bounded domain
    (:meth:`privet.core.neighbors.Neighbors.across`). A step pair's
    first k entries move down, so sparse vector's answers before the first True land at
    the bottom and the True one at the top: commoner answers of smaller ratio, so the plain
    step pairs certify more there (svt1's "nine FALSE, then True" at 4·10^7 fresh pairs,
    by its exact probabilities: 0.0946 plain, 0.0932 halfway, 0.0898 all the way)."""
    out = []
    patterns = [(p.pattern.replace(" (swapped)", ""), p.d1, p.d2)
                for p in mech.neighbors.pairs(lengths=(length,), domain=None)]
    # a record replaced (or added) at the bottom and at the top of a bounded domain: a
    # clipped sum over [0, 10] moves by 10, which the unit patterns never show
    patterns += [(p.pattern, p.d1, p.d2) for p in mech.neighbors.across(mech.domain, length)]
    for label, a, b in patterns + _steps(mech, length):
        a, b = np.asarray(a, float), np.asarray(b, float)
        ok = valid(mech, a, b)
        if ok is not None:
            out.append((*ok, label))
        if len(a) != len(b):
            continue
        for level in STRETCH:
            ok = valid(mech, *_stretch(mech, a, b, level))
            if ok is not None:
                out.append((*ok, f"{label}, stretched {level:g}"))
    return unique(out)


STEPS = 9  # step pairs at most this many split points (every one of inputs up to 10 long)


def splits(length: int, most: int = STEPS) -> list[int]:
    """The split points k (1 <= k < length) of the step pairs: every one when there are at
    most ``most``, else ``most`` of them spread geometrically from both ends (the ends are
    where the ratios of sparse vector's events differ most between neighboring splits)."""
    if length - 1 <= most:
        return list(range(1, length))
    half = np.unique(np.round(np.geomspace(1, length / 2, (most + 1) // 2)).astype(int))
    return sorted({int(k) for k in half} | {int(length - k) for k in half})


def _steps(mech: Mechanism, length: int) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """The step pairs x = 1^k 0^(n-k) against x' = x + Delta (0^k 1^(n-k) - x) at the
    :func:`splits` (StatDP's "x shape" is the one at n/2): the first k answers move down,
    the others up, so the event "the first k below the threshold, the next above" gains on
    every answer (sparse vector). Only for relations where every entry may change; the
    other orientation is the same unordered pair, tested by the events in both
    orientations."""
    if mech.neighbors.kind != "all_differ" or length < 2:
        return []
    out = []
    for k in splits(length):
        a = np.r_[np.ones(k), np.zeros(length - k)]
        b = a + mech.neighbors.delta * (1.0 - 2.0 * a)
        out.append((f"step at {k} (n={length})", a, b))
    return out


def _stretch(mech: Mechanism, a: np.ndarray, b: np.ndarray, level: float
             ) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = domain_range(mech)
    mid = (lo + hi) / 2
    diff = b - a
    up, down = diff > 0, diff < 0
    x = a.copy()
    x[up] = mid + level * (hi - mid) - diff[up]
    x[down] = mid - level * (mid - lo) - diff[down]
    if mech.domain.integer:
        x = np.round(x)
    return x, x + diff


def all_pairs(mech: Mechanism, length: int) -> list[Pair] | None:
    """Every unordered neighboring pair of a finite integer domain with at most
    ``ALL_PAIRS_CAP`` inputs of this length (None otherwise)."""
    d = mech.domain
    if not (d.integer and math.isfinite(d.low) and math.isfinite(d.high)):
        return None
    count = (int(d.high) - int(d.low) + 1) ** int(length)
    if count > ALL_PAIRS_CAP or mech.neighbors.kind == "add_remove":
        return None
    xs = d.inputs(length).astype(float)
    out = [(a, b, "every pair") for a, b in itertools.combinations(xs, 2)
           if mech.neighbors.are_neighbors(a, b)]
    return out or None


SWEEP_LEVELS = 16   # levels of the input a sweep moves one entry from, at most
SWEEP_ENTRIES = 64  # entries it moves (spread over longer inputs), at most


def sweep_pairs(mech: Mechanism, length: int) -> list[Pair]:
    """Pairs that move one entry of a constant input by Delta, for every entry (at most
    :data:`SWEEP_ENTRIES`, spread) at every level of the domain (at most
    :data:`SWEEP_LEVELS`, spread), in the order that covers the levels evenly first (the
    middle, the quarters, the eighths, ...; each level with every entry): a leak in one entry
    of fifty, or at one step of an input threshold ("0 below 3, else a noisy count"), sits
    on a pair that neither the patterns nor a few random pairs hit. For relations where one
    entry may change alone (one differs, replace one, every entry differs); none otherwise.
    The caller probes them cheaply and screens the most separating ones."""
    kind = mech.neighbors.kind
    if kind not in ("one_differs", "replace_one", "all_differ") or length < 1:
        return []
    lo, hi = domain_range(mech)
    delta = float(mech.neighbors.delta)
    if mech.domain.integer:
        delta = float(max(math.floor(delta), 1))
        top = math.floor(hi - delta)
        if top < math.ceil(lo):
            return []
        levels = np.arange(math.ceil(lo), top + 1, dtype=float)
        if len(levels) > SWEEP_LEVELS:
            levels = np.unique(np.round(np.linspace(levels[0], levels[-1], SWEEP_LEVELS)))
    else:
        if hi - delta < lo:
            return []
        levels = np.linspace(lo, hi - delta, SWEEP_LEVELS)
    order = spread_order(len(levels))
    entries = range(length) if length <= SWEEP_ENTRIES else \
        np.unique(np.round(np.linspace(0, length - 1, SWEEP_ENTRIES)).astype(int))
    out = []
    for i in order:
        c = float(levels[i])
        for j in entries:
            a = np.full(length, c)
            b = a.copy()
            b[int(j)] = c + delta
            ok = valid(mech, a, b)
            if ok is not None:
                out.append((*ok, f"sweep: entry {int(j)} from {c:g}"))
    return unique(out)


def spread_order(n: int) -> list[int]:
    """The indices 0..n-1 in the order that covers them evenly first: the nearest to the
    middle, the quarters, the eighths, ... (van der Corput's points, each taken by the
    nearest index not yet taken), the ends last."""
    out: list[int] = []
    taken: set[int] = set()
    depth = 1
    while len(out) < n and depth < 40:
        for k in range(1, 2 ** depth, 2):
            i = int(round(k / 2 ** depth * (n - 1)))
            if i not in taken:
                taken.add(i)
                out.append(i)
        depth += 1
    return out + [i for i in range(n) if i not in taken]


def _draw_input(mech: Mechanism, length: int, rng: np.random.Generator) -> np.ndarray:
    lo, hi = domain_range(mech)
    delta = mech.neighbors.delta
    if rng.random() < 0.5:  # extremes: the ends of the domain, a step inside, the middle
        levels = np.array([lo, min(lo + delta, hi), (lo + hi) / 2, max(hi - delta, lo), hi])
        x = rng.choice(levels, size=length)
    else:
        x = rng.uniform(lo, hi, size=length)
    return np.round(x) if mech.domain.integer else x


def _neighbor(mech: Mechanism, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    nb, d = mech.neighbors, mech.domain
    delta = nb.delta if not d.integer else max(math.floor(nb.delta), 1)
    x2 = x.copy()
    if nb.kind == "all_differ":
        x2 = x + delta * rng.integers(-1, 2, size=len(x))
    elif nb.kind == "one_differs":
        x2[rng.integers(len(x))] += delta * rng.choice([-1.0, 1.0])
    elif nb.kind == "replace_one":
        lo, hi = domain_range(mech)
        x2[rng.integers(len(x))] = rng.uniform(lo, hi)
    elif nb.kind == "add_remove":
        if rng.random() < 0.5 and len(x) > 1:
            return np.delete(x, rng.integers(len(x)))
        lo, hi = domain_range(mech)
        return np.insert(x, rng.integers(len(x) + 1), rng.uniform(lo, hi))
    else:  # custom: one of its suggested pairs
        pairs = list(nb.pairs(both_orders=True))
        return np.asarray(pairs[rng.integers(len(pairs))].d2, float) if pairs else x2
    x2 = np.clip(x2, d.low, d.high)
    return np.round(x2) if d.integer else x2


def random_pair(mech: Mechanism, length: int, rng: np.random.Generator, tries: int = 20
                ) -> Pair | None:
    """A random pair of the relation inside the domain (None if none was found)."""
    if mech.neighbors.kind == "custom":
        pairs = list(mech.neighbors.pairs(both_orders=False))
        if not pairs:
            return None
        p = pairs[rng.integers(len(pairs))]
        ok = valid(mech, p.d1, p.d2)
        return None if ok is None else (*ok, "custom")
    for _ in range(tries):
        x = _draw_input(mech, length, rng)
        ok = valid(mech, x, _neighbor(mech, x, rng))
        if ok is not None:
            return (*ok, "random")
    return None


def move(mech: Mechanism, x: np.ndarray, x2: np.ndarray, rng: np.random.Generator,
         tries: int = 20) -> Pair | None:
    """A local move: shift one entry of both inputs (their difference kept), or change the
    difference at one entry (to -Delta, 0 or +Delta), or send one entry of both to a domain
    extreme, or shift the boundary between two runs of equal entries by one place (the
    entry next to it takes its neighbor's pair of values: a step pair's split moves);
    None when no move stays in the relation and the domain."""
    if mech.neighbors.kind in ("custom", "add_remove") or len(x) != len(x2):
        return random_pair(mech, len(x), rng)
    lo, hi = domain_range(mech)
    delta = mech.neighbors.delta
    for _ in range(tries):
        a, b = x.copy(), x2.copy()
        j = int(rng.integers(len(a)))
        kind = rng.integers(4)
        if kind == 3:
            a, b = _shift_boundary(a, b, rng)
        elif kind == 0:
            step = rng.normal(0.0, (hi - lo) / 8)
            a[j] += step
            b[j] += step
        elif kind == 1:
            if mech.neighbors.kind == "one_differs":
                a, b = x.copy(), x.copy()
            b[j] = a[j] + delta * rng.choice([-1.0, 1.0]) if mech.neighbors.kind != \
                "replace_one" else rng.uniform(lo, hi)
        else:
            end = lo if rng.random() < 0.5 else hi
            diff = b[j] - a[j]
            a[j] = end - diff if (end == hi and diff > 0) or (end == lo and diff < 0) else end
            b[j] = a[j] + diff
        if mech.domain.integer:
            a, b = np.round(a), np.round(b)
        ok = valid(mech, a, b)
        if ok is not None:
            return (*ok, "local search")
    return None


def _shift_boundary(a: np.ndarray, b: np.ndarray, rng: np.random.Generator
                    ) -> tuple[np.ndarray, np.ndarray]:
    """``(a, b)`` with one boundary between runs of equal (a[j], b[j]) moved by one place
    (unchanged when every entry is alike)."""
    cut = np.flatnonzero((a[1:] != a[:-1]) | (b[1:] != b[:-1]))
    if len(cut) == 0:
        return a, b
    j = int(rng.choice(cut))
    src, dst = (j, j + 1) if rng.random() < 0.5 else (j + 1, j)
    a[dst], b[dst] = a[src], b[src]
    return a, b
