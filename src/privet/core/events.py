"""Events: predicates over outputs with a readable description, evaluated on whole batches.

An event answers, for a batch of outputs of shape ``(n,)`` or ``(n, m)``, which rows fall
in it (a boolean array of length ``n``). Every event has ``describe()`` for people and
``spec()`` for JSON; :func:`from_spec` rebuilds it. Search spaces over events (StatDP Sec.
4.3) live with the engine that searches them and build on these classes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .errors import PrivetError
from .mechanism import ABORTED
from .text import fmt_num, fmt_value, fmt_vec

_REGISTRY: dict[str, type[Event]] = {}


def _rows(outputs: np.ndarray) -> np.ndarray:
    out = np.asarray(outputs)
    return out.reshape(out.shape[0], -1) if out.ndim > 1 else out.reshape(-1, 1)


def statistic(outputs: np.ndarray, stat: str, coord: int | None = None) -> np.ndarray:
    """A scalar per output row: ``coord`` (one entry), ``avg``, ``min``, ``max``, ``length``
    (entries before ABORTED) or ``sum``; sentinel entries are ignored by avg/min/max/sum."""
    rows = _rows(outputs).astype(float)
    if stat == "coord":
        return rows[:, coord if coord is not None else 0]
    finite = np.isfinite(rows)
    if stat == "length":
        return np.sum(rows != ABORTED, axis=1).astype(float)
    if stat == "sum":
        return np.where(finite, rows, 0.0).sum(axis=1)
    if stat == "avg":
        cnt = finite.sum(axis=1)
        return np.where(cnt > 0, np.where(finite, rows, 0.0).sum(axis=1) / np.maximum(cnt, 1),
                        np.nan)
    if stat == "min":
        return np.where(finite, rows, np.inf).min(axis=1)
    if stat == "max":
        return np.where(finite, rows, -np.inf).max(axis=1)
    raise PrivetError(f"unknown output statistic {stat!r}.")


def interval_text(name: str, low: float, high: float) -> str:
    """``low < name ≤ high`` with the infinite ends left out (``ω[0] ≤ 1.5``)."""
    lo, hi = float(low), float(high)
    if lo == -np.inf and hi == np.inf:
        return f"{name} is any value"
    if lo == -np.inf:
        return f"{name} ≤ {fmt_num(hi)}"
    if hi == np.inf:
        return f"{name} > {fmt_num(lo)}"
    return f"{fmt_num(lo)} < {name} ≤ {fmt_num(hi)}"


def stat_name(stat: str, coord: int | None) -> str:
    return f"ω[{coord}]" if stat == "coord" else f"{stat}(ω)"


class Event:
    """Base class: subclasses set ``kind`` and implement ``contains`` and ``describe``."""

    kind: ClassVar[str] = "event"

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        _REGISTRY[cls.kind] = cls

    def contains(self, outputs: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def describe(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def spec(self) -> dict:
        d = {"kind": self.kind}
        d.update({k: _jsonable(v) for k, v in self.__dict__.items()})
        return d

    def indicator(self, outputs: np.ndarray, rng: np.random.Generator | None = None
                  ) -> np.ndarray:
        """Whether each row is in the event; an event with a randomized boundary (a
        classifier's threshold event) draws its coins from ``rng``, which a count on a
        sample must give it: a generator of the sample's own, so that the rows at the
        boundary join independently of each other and of the rest of the sample."""
        return np.asarray(self.contains(outputs), dtype=bool)

    def weights(self, outputs: np.ndarray) -> np.ndarray:
        """The probability that each row is in the event (1 or 0, except on a randomized
        boundary): an exact distribution's probability of the event is the sum of its
        probabilities times these."""
        return self.indicator(outputs).astype(float)

    def occurrences(self, outputs: np.ndarray) -> int:
        """How many output rows fall in the event."""
        return int(np.count_nonzero(self.contains(outputs)))

    def __and__(self, other: Event) -> Event:
        return And((self, other))

    def __str__(self) -> str:
        return self.describe()


@dataclass(frozen=True, eq=True)
class Interval(Event):
    """``low < stat(ω) <= high`` (open below, closed above; infinities allowed)."""

    kind: ClassVar[str] = "interval"
    low: float
    high: float
    stat: str = "coord"
    coord: int | None = 0

    def contains(self, outputs):
        s = statistic(outputs, self.stat, self.coord)
        return (s > self.low) & (s <= self.high)

    def describe(self):
        return interval_text(stat_name(self.stat, self.coord), self.low, self.high)


@dataclass(frozen=True, eq=True)
class Equals(Event):
    """``stat(ω) == value`` (categorical outputs, integers, sentinels)."""

    kind: ClassVar[str] = "equals"
    value: float
    stat: str = "coord"
    coord: int | None = 0

    def contains(self, outputs):
        return statistic(outputs, self.stat, self.coord) == self.value

    def describe(self):
        return f"{stat_name(self.stat, self.coord)} = {fmt_value(self.value)}"


@dataclass(frozen=True, eq=True)
class Count(Event):
    """The number of entries equal to ``value`` is ``count``."""

    kind: ClassVar[str] = "count"
    value: float
    count: int

    def contains(self, outputs):
        return np.sum(_rows(outputs) == self.value, axis=1) == self.count

    def describe(self):
        return f"count({fmt_value(self.value)}) = {self.count}"


@dataclass(frozen=True, eq=True)
class Hamming(Event):
    """Hamming distance between the output row and ``reference`` equals ``distance``."""

    kind: ClassVar[str] = "hamming"
    reference: tuple
    distance: int

    def contains(self, outputs):
        rows = _rows(outputs)
        ref = np.asarray(self.reference, dtype=float)[: rows.shape[1]]
        return np.sum(rows != ref, axis=1) == self.distance

    def describe(self):
        return f"Hamming(ω, {fmt_vec(self.reference, short=True)}) = {self.distance}"


@dataclass(frozen=True, eq=True)
class Box(Event):
    """Every coordinate in ``(low_i, high_i]`` (DP-Finder's box-shaped Φ)."""

    kind: ClassVar[str] = "box"
    lows: tuple
    highs: tuple

    def contains(self, outputs):
        rows = _rows(outputs)
        lo = np.asarray(self.lows, dtype=float)
        hi = np.asarray(self.highs, dtype=float)
        return np.all((rows > lo) & (rows <= hi), axis=1)

    def describe(self):
        parts = [interval_text(f"ω[{i}]", a, b) for i, (a, b) in
                 enumerate(zip(self.lows, self.highs))]
        return " and ".join(parts)


@dataclass(frozen=True, eq=True)
class Singleton(Event):
    """The output row equals ``value`` exactly (DP-Finder's singleton Φ for discrete outputs)."""

    kind: ClassVar[str] = "singleton"
    value: tuple

    def contains(self, outputs):
        rows = _rows(outputs)
        return np.all(rows == np.asarray(self.value, dtype=float), axis=1)

    def describe(self):
        if len(self.value) == 1:
            return f"ω = {fmt_value(self.value[0])}"
        return f"ω = {fmt_vec(self.value, short=True)}"


@dataclass(frozen=True)
class Hits:
    """The number of rows of a sample in ``event``: a reducer for
    :func:`privet.execution.map_reduce` (picklable, so it runs on process and Dask workers),
    which gives it the chunk's own generator (``coins``) for a randomized boundary."""

    event: Event
    coins: ClassVar[bool] = True

    def __call__(self, outputs: np.ndarray, rng: np.random.Generator | None = None) -> int:
        return int(np.count_nonzero(self.event.indicator(outputs, rng)))


@dataclass(frozen=True, eq=True)
class And(Event):
    """All of ``parts`` hold (cross products of search spaces)."""

    kind: ClassVar[str] = "and"
    parts: tuple

    def contains(self, outputs):
        result = np.ones(np.asarray(outputs).shape[0], dtype=bool)
        for p in self.parts:
            result &= p.contains(outputs)
        return result

    def indicator(self, outputs, rng=None):
        result = np.ones(np.asarray(outputs).shape[0], dtype=bool)
        for p in self.parts:
            result &= p.indicator(outputs, rng)
        return result

    def weights(self, outputs):
        result = np.ones(np.asarray(outputs).shape[0], dtype=float)
        for p in self.parts:  # each part's boundary coins are its own
            result *= p.weights(outputs)
        return result

    def describe(self):
        return " and ".join(p.describe() for p in self.parts)

    def spec(self):
        return {"kind": "and", "parts": [p.spec() for p in self.parts]}


@dataclass(frozen=True, eq=False)
class Predicate(Event):
    """A user predicate ``fn(outputs) -> bool array`` with a description (not JSON-rebuildable)."""

    kind: ClassVar[str] = "predicate"
    fn: Callable[[np.ndarray], np.ndarray]
    text: str

    def contains(self, outputs):
        return np.asarray(self.fn(outputs), dtype=bool)

    def describe(self):
        return self.text

    def spec(self):
        return {"kind": "predicate", "text": self.text}


def from_spec(spec: dict) -> Event:
    """Rebuild an event from :meth:`Event.spec`."""
    kind = spec.get("kind")
    if kind == "and":
        return And(tuple(from_spec(p) for p in spec["parts"]))
    if kind == "predicate":
        raise PrivetError("a predicate event cannot be rebuilt from JSON; only its text is kept.")
    cls = _REGISTRY.get(kind)
    if cls is None:
        raise PrivetError(f"unknown event kind {kind!r}.")
    fields = {k: _from_jsonable(v) for k, v in spec.items() if k != "kind"}
    for key in ("reference", "lows", "highs", "value"):
        if isinstance(fields.get(key), list):
            fields[key] = tuple(fields[key])
    return cls(**fields)


def _jsonable(v: Any) -> Any:
    if isinstance(v, (tuple, list, np.ndarray)):
        return [_jsonable(x) for x in np.asarray(v, dtype=object).ravel().tolist()] \
            if not isinstance(v, tuple) else [_jsonable(x) for x in v]
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if f == np.inf:
            return "inf"
        if f == -np.inf:
            return "-inf"
        return f
    if isinstance(v, np.integer):
        return int(v)
    return v


def _from_jsonable(v: Any) -> Any:
    if v == "inf":
        return np.inf
    if v == "-inf":
        return -np.inf
    if isinstance(v, list):
        return [_from_jsonable(x) for x in v]
    return v


def count_all(events: Sequence[Event], outputs: np.ndarray) -> np.ndarray:
    """Counts of each event in one batch (a simple reference; engines batch smarter)."""
    return np.array([e.occurrences(outputs) for e in events], dtype=np.int64)
