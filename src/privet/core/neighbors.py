"""Adjacency relations and representative input pairs.

Relations: every answer differs by at most Delta (StatDP's ALL_DIFFER, DP-Finder's
Neigh<=1), exactly one answer differs by at most Delta (histograms), add or remove one
entry, replace one record. Each relation checks membership and yields the representative
pairs of Table 1 of the StatDP paper at lengths 5 and 10 (each pattern also mirrored, plus
"all below"), in both orders, scaled by Delta.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import NeighborError
from .text import fmt_vec

TOL = 1e-9

# Table 1 of StatDP, generalized to length n (D1, D2 before scaling by Delta), in both
# orientations. StatDP's generator (its published code) and its Table 1 put "half half" in
# opposite orders ([2..2, 0..0] and [0..0, 2..2]), and order-dependent mechanisms (SVT,
# AboveThreshold) leak through one orientation only, so every pattern whose entries are not
# all alike also comes mirrored (the odd entries at the other end). "all below" ([0]*n
# against [1]*n) is in StatDP's generator but not in Table 1; it is here too.
SINGLE_ENTRY = ("one above", "one below")  # the patterns that change one entry only


def _table1(n: int) -> list[tuple[str, np.ndarray, np.ndarray]]:
    ones = np.ones(n)
    lo, hi = n // 2, n - n // 2
    x1 = np.r_[np.ones(lo), np.zeros(hi)]
    x2 = np.r_[np.zeros(lo), np.ones(hi)]
    base = [
        ("one above", ones, np.r_[2.0, np.ones(n - 1)]),
        ("one below", ones, np.r_[0.0, np.ones(n - 1)]),
        ("one above rest below", ones, np.r_[2.0, np.zeros(n - 1)]),
        ("one below rest above", ones, np.r_[0.0, np.full(n - 1, 2.0)]),
        ("half half", ones, np.r_[np.full(lo, 2.0), np.zeros(hi)]),
        ("all above", ones, np.full(n, 2.0)),
        ("all below", ones, np.zeros(n)),
        ("x shape", x1, x2),
    ]
    mirrored = [(name + ", mirrored", d1[::-1].copy(), d2[::-1].copy())
                for name, d1, d2 in base]
    out, seen = [], set()
    for name, d1, d2 in base + mirrored:  # short inputs repeat patterns: keep the first name
        key = (d1.tobytes(), d2.tobytes())
        if key not in seen:  # (pairs() adds the swapped order itself)
            seen.update((key, key[::-1]))
            out.append((name, d1, d2))
    return out


@dataclass(frozen=True)
class InputPair:
    """Two neighboring inputs with the name of the pattern that made them."""

    d1: np.ndarray
    d2: np.ndarray
    pattern: str

    def swapped(self) -> InputPair:
        return InputPair(self.d2, self.d1, self.pattern + " (swapped)")


@dataclass(frozen=True)
class Neighbors:
    """A neighbor relation.

    ``kind`` is one of ``all_differ``, ``one_differs``, ``add_remove``, ``replace_one`` or
    ``custom``; ``delta`` is the sensitivity bound Delta. ``custom`` relations carry a
    predicate and the pairs they suggest.
    """

    kind: str
    delta: float = 1.0
    predicate: Callable[[np.ndarray, np.ndarray], bool] | None = field(
        default=None, compare=False, repr=False
    )
    custom_pairs: tuple = field(default=(), compare=False, repr=False)

    def __post_init__(self):
        if self.kind not in ("all_differ", "one_differs", "add_remove", "replace_one", "custom"):
            raise NeighborError(f"unknown neighbor relation {self.kind!r}.")
        if not (np.isfinite(self.delta) and self.delta > 0):
            raise NeighborError(f"the neighbor relation needs Delta > 0, got {self.delta}.")
        if self.kind == "custom" and self.predicate is None:
            raise NeighborError("a custom neighbor relation needs a predicate(x, x2) -> bool.")
        for a, b in self.custom_pairs if self.kind == "custom" else ():
            # every engine tests the suggested pairs as neighbors: one outside the relation
            # would "find" violations of a private mechanism (the privacy of non-neighbors
            # is not claimed)
            try:
                d1, d2 = (np.asarray(v, dtype=float).ravel() for v in (a, b))
            except (TypeError, ValueError):
                raise NeighborError(
                    f"the custom relation's pair ({a!r}, {b!r}) is not two lists of numbers; "
                    "give pairs=[(x, x2), ...] of numeric inputs.") from None
            if d1.shape == d2.shape and np.array_equal(d1, d2):
                raise NeighborError(
                    f"the custom relation's pair ({_fmt(a)}, {_fmt(b)}) has the same input "
                    "twice; give pairs of inputs that differ.")
            if not self.are_neighbors(d1, d2):
                raise NeighborError(
                    f"the custom relation's pair ({_fmt(a)}, {_fmt(b)}) is not neighbors "
                    "under its own predicate; give pairs the predicate accepts, or fix the "
                    "predicate.")

    def describe(self) -> str:
        d = f"{self.delta:g}"
        return {
            "all_differ": f"every answer differs by at most {d}",
            "one_differs": f"exactly one answer differs, by at most {d}",
            "add_remove": "add or remove one entry",
            "replace_one": "replace one record",
            "custom": "custom relation",
        }[self.kind]

    def to_dict(self) -> dict:
        return {"kind": self.kind, "delta": self.delta}

    # -- membership ----------------------------------------------------------------------
    def are_neighbors(self, x, x2) -> bool:
        """True when ``x`` and ``x2`` are neighbors under this relation."""
        a = np.asarray(x, dtype=float).ravel()
        b = np.asarray(x2, dtype=float).ravel()
        if self.kind == "custom":
            return _ask(self.predicate, a, b)
        if self.kind == "add_remove":
            if abs(len(a) - len(b)) != 1:
                return False
            long, short = (a, b) if len(a) > len(b) else (b, a)
            return any(
                np.allclose(np.delete(long, i), short, atol=TOL, rtol=0)
                for i in range(len(long))
            )
        if a.shape != b.shape:
            return False
        diff = np.abs(a - b)
        if self.kind == "all_differ":
            return bool(np.all(diff <= self.delta + TOL))
        changed = int(np.sum(diff > TOL))
        if self.kind == "one_differs":
            return changed <= 1 and bool(np.all(diff <= self.delta + TOL))
        return changed <= 1  # replace_one

    def check(self, x, x2) -> None:
        """Raise :class:`NeighborError` with the reason when ``x`` and ``x2`` are not neighbors.

        Two equal inputs are refused even when the relation counts them as neighbors: a pair
        of D1 = D2 compares a distribution with itself, and a check of it checks nothing."""
        a = np.asarray(x, dtype=float).ravel()
        b = np.asarray(x2, dtype=float).ravel()
        if a.shape == b.shape and np.array_equal(a, b):
            raise NeighborError(
                f"D1 and D2 are the same input {_fmt(x)}; neighboring inputs must differ, so "
                f"give a D2 that differs from D1 as '{self.describe()}' allows."
            )
        if not self.are_neighbors(x, x2):
            raise NeighborError(
                f"inputs {_fmt(x)} and {_fmt(x2)} are not neighbors under "
                f"'{self.describe()}'."
            )

    def require_pairs(self, given: bool = False) -> None:
        """For a custom relation that suggests no pairs (and no pairs ``given`` by the
        caller): one sentence, as a predicate alone names no input to test."""
        if self.kind == "custom" and not self.custom_pairs and not given:
            raise NeighborError(
                "the custom neighbor relation suggests no pairs, and its predicate alone "
                "names no input to test; give privet.neighbors.custom(predicate, "
                "pairs=[(x, x2), ...]).")

    # -- representative pairs ----------------------------------------------------------------
    def pairs(self, lengths: tuple[int, ...] = (5, 10), both_orders: bool = True,
              domain: Any = None) -> Iterator[InputPair]:
        """Representative pairs (StatDP Table 1 at ``lengths``, scaled by Delta).

        With a ``domain`` (a :class:`privet.Domain`), lengths follow the domain's length and
        pairs with a value outside its bounds are left out; when that leaves none (a
        distance as wide as the domain: 'one:3' on the integers 0..3), each pattern is
        shifted into the bounds instead (both inputs by the same amount, so they stay
        neighbors), or clipped to them where it is wider than the domain.
        """
        if domain is not None:
            lengths = _domain_lengths(domain, lengths)
        out: list[InputPair] = []
        if self.kind == "custom":
            out = [InputPair(np.asarray(a, float), np.asarray(b, float), "custom")
                   for a, b in self.custom_pairs]
        for n in lengths if self.kind != "custom" else ():
            if self.kind == "add_remove":
                base = np.ones(n)
                out.append(InputPair(base, base[:-1], f"remove one (n={n})"))
                out.append(InputPair(base, np.r_[base, 2.0 * self.delta], f"add one (n={n})"))
                continue
            for name, d1, d2 in _table1(n):
                if self.kind in ("one_differs", "replace_one") and \
                        name.split(",")[0] not in SINGLE_ENTRY:
                    continue
                scaled = d1 + self.delta * (d2 - d1)
                out.append(InputPair(d1.copy(), scaled, f"{name} (n={n})"))
        if domain is not None:
            out += _across(self.kind, domain, out)
            inside = [p for p in out if _inside(domain, p.d1) and _inside(domain, p.d2)]
            out = inside or [q for q in (_shifted(domain, p) for p in out)
                             if q is not None and self.are_neighbors(q.d1, q.d2)]
        for pair in out:
            yield pair
            if both_orders:
                yield pair.swapped()

    def across(self, domain: Any, length: int) -> list[InputPair]:
        """The pairs at ``length`` whose changed record moves across a bounded ``domain``,
        from its bottom to its top (replace one, add or remove one; none for other
        relations or unbounded domains): what :meth:`pairs` adds given a domain."""
        return _across(self.kind, domain, list(self.pairs(lengths=(length,),
                                                          both_orders=False)))


def _ask(predicate: Callable, a: np.ndarray, b: np.ndarray) -> bool:
    """A custom relation's answer for ``(a, b)``, or one sentence when the predicate raises
    or answers something that is not one truth value."""
    try:
        got = predicate(a, b)
    except Exception as e:  # the user's code: any error is reported, not propagated
        raise NeighborError(
            f"the custom neighbor relation's predicate raised {type(e).__name__} on "
            f"{fmt_vec(a)} and {fmt_vec(b)}: {e}; fix the predicate(x, x2) so that it returns "
            "True or False for any two inputs.") from None
    if isinstance(got, (bool, np.bool_)) or (isinstance(got, (int, np.integer))
                                             and got in (0, 1)):
        return bool(got)
    raise NeighborError(
        f"the custom neighbor relation's predicate returned {type(got).__name__} "
        f"{_short(got)} on {fmt_vec(a)} and {fmt_vec(b)}; it must return True or False.")


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def _domain_lengths(domain: Any, lengths: tuple[int, ...]) -> tuple[int, ...]:
    length = getattr(domain, "length", None)
    if isinstance(length, int):
        return (length,)
    if isinstance(length, tuple):
        lo, hi = length
        kept = tuple(n for n in lengths if lo <= n <= hi)
        return kept or (max(lo, min(hi, max(lengths))),)
    return lengths


def _across(kind: str, domain: Any, pairs: list[InputPair]) -> list[InputPair]:
    """For relations that let one record take any value (replace one, add or remove one),
    the patterns' changed entry moved across a bounded domain: from its bottom to its top
    (a sum over [0, 3] moves by 3, which the patterns' unit steps never show)."""
    lo, hi = getattr(domain, "low", -np.inf), getattr(domain, "high", np.inf)
    if kind not in ("replace_one", "add_remove") or not (np.isfinite(lo) and np.isfinite(hi)):
        return []
    out, seen = [], set()
    for p in pairs:
        if kind == "add_remove":
            base = p.d1 if len(p.d1) < len(p.d2) else p.d2
            for v in (lo, hi):
                d2 = np.r_[base, v]
                key = (base.tobytes(), d2.tobytes())
                if key not in seen:
                    seen.add(key)
                    out.append(InputPair(base.copy(), d2, f"add one at {v:g}"))
            continue
        if p.d1.shape != p.d2.shape:
            continue
        changed = np.nonzero(p.d1 != p.d2)[0]
        if len(changed) != 1:
            continue
        d1, d2 = p.d1.copy(), p.d1.copy()
        d1[changed[0]], d2[changed[0]] = lo, hi
        key = (d1.tobytes(), d2.tobytes())
        if key not in seen:
            seen.add(key)
            out.append(InputPair(d1, d2, f"{p.pattern}, changed entry across the domain"))
    return out


def _shifted(domain: Any, pair: InputPair) -> InputPair | None:
    """``pair`` with both inputs moved by one amount (a whole number on an integer domain)
    into the domain's bounds, or, spanning more than the domain, clipped to it; None when
    that makes the two inputs equal."""
    lo, hi = getattr(domain, "low", -np.inf), getattr(domain, "high", np.inf)
    both = np.r_[pair.d1, pair.d2]
    if both.size == 0:
        return None
    low, high = float(both.min()), float(both.max())
    move = lo - low if low < lo else (hi - high if high > hi else 0.0)
    if getattr(domain, "integer", False):
        move = float(np.ceil(move)) if low < lo else float(np.floor(move))
    d1, d2 = pair.d1 + move, pair.d2 + move
    if _inside(domain, d1) and _inside(domain, d2):
        return InputPair(d1, d2, f"{pair.pattern}, shifted into the domain")
    # wider than the domain: clipped into it, entry by entry (no entry moves further apart
    # than before, so a relation bounding how far entries move still holds)
    d1, d2 = np.clip(pair.d1, lo, hi), np.clip(pair.d2, lo, hi)
    if d1.shape == d2.shape and np.array_equal(d1, d2):
        return None
    return InputPair(d1, d2, f"{pair.pattern}, clipped to the domain")


def _inside(domain: Any, x: np.ndarray) -> bool:
    lo, hi = getattr(domain, "low", -np.inf), getattr(domain, "high", np.inf)
    return bool(np.all(x >= lo) and np.all(x <= hi))


def all_differ(delta: float = 1.0) -> Neighbors:
    """Every answer may change by at most ``delta`` (StatDP ALL_DIFFER, DP-Finder Neigh<=1)."""
    return Neighbors("all_differ", float(delta))


each_differs_by = all_differ


def one_differs(delta: float = 1.0) -> Neighbors:
    """Exactly one answer may change, by at most ``delta`` (histogram queries)."""
    return Neighbors("one_differs", float(delta))


def add_remove() -> Neighbors:
    """Neighbors differ by adding or removing one entry."""
    return Neighbors("add_remove", 1.0)


def replace_one() -> Neighbors:
    """Neighbors differ in one record, replaced by any value of the domain."""
    return Neighbors("replace_one", 1.0)


def custom(predicate: Callable[[np.ndarray, np.ndarray], bool], pairs=()) -> Neighbors:
    """A user relation from a predicate and the representative pairs to test."""
    if not callable(predicate):
        raise NeighborError("a custom neighbor relation needs a callable predicate(x, x2).")
    return Neighbors("custom", 1.0, predicate=predicate, custom_pairs=tuple(pairs))


def from_dict(d: dict) -> Neighbors:
    """Inverse of :meth:`Neighbors.to_dict` (custom relations cannot round-trip)."""
    try:
        kind = d["kind"]
    except (KeyError, TypeError):
        raise NeighborError(f"malformed neighbor relation {d!r}: it needs a 'kind'.") from None
    if kind == "custom":
        raise NeighborError("a custom neighbor relation cannot be rebuilt from JSON.")
    return Neighbors(kind, float(d.get("delta", 1.0)))


def _fmt(x) -> str:
    arr = np.asarray(x)
    return np.array2string(arr, separator=", ", max_line_width=200, threshold=12)
