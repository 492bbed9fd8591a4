"""Score functions: a number per output row, larger where the output is more likely under
D1 than under D2 (an estimate of the log-likelihood ratio, or any monotone stand-in).

DP-Sniper's attack (Bichsel et al., S&P 2021) thresholds a classifier's posterior
p(D1 | b); thresholding its log-odds is the same family of events, and the Neyman-Pearson
lemma says the most powerful event at any size is a threshold of the true likelihood ratio.
Each score is plain NumPy data (evaluated in chunks wherever the sampling runs, serialized
in results) -- scikit-learn only fits them (:mod:`privet.attacks.train`):

* :class:`Linear` -- logistic regression on a :class:`~privet.attacks.features.FeatureMap`:
  weighted sums, sums of entries, counts of flags, bit patterns of randomized response;
* :class:`MLP` -- a small ReLU network on the same features (DP-Sniper's neural variant);
* :class:`Table` -- the smoothed empirical log-ratio of each distinct output row, for
  discrete outputs (the exact likelihood ratio, up to sampling error);
* :class:`Bins` -- the same over quantile bins of a one- or two-entry continuous output
  (a histogram model);
* :class:`Stat` -- one statistic of the row (an entry, the sum of entries, the number of
  entries equal to a flag), with a sign: the half-lines of StatDP and DP-Finder;
* :class:`Bits` -- any of these on a float-exact view of the outputs
  (:class:`~privet.attacks.features.BitView`: granularity, ulp-grid position, low mantissa
  bits, lattice residue).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..core.noise import FEW_VALUES, value_codes
from .features import Batch, BitView, FeatureMap, columns_of, rows_of, value_name

__all__ = ["MLP", "Bins", "Bits", "Linear", "Score", "Stat", "Table", "score_from_spec"]

_KINDS: dict[str, type] = {}


def _fmt(v: float) -> str:
    return f"{v:.3g}"


FLIP = {"≥": "≤", ">": "<", "≤": "≥", "<": ">"}  # a comparison seen from the other side


class Score:
    """Base class: ``score(outputs) -> (n,) floats``; ``describe()``; ``spec()``."""

    kind: ClassVar[str] = "score"

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        _KINDS[cls.kind] = cls

    def __call__(self, outputs) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def describe(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def spec(self) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError

    def negated(self) -> Score:
        return Negated(self)


@dataclass(frozen=True, eq=False)
class Negated(Score):
    """``-inner``: the event ``-s >= t`` is ``s <= -t``."""

    kind: ClassVar[str] = "negated"
    inner: Score

    def __call__(self, outputs):
        return -self.inner(outputs)

    def negated(self) -> Score:
        return self.inner

    def describe(self):
        return f"-({self.inner.describe()})"

    def spec(self):
        return {"kind": self.kind, "inner": self.inner.spec()}


def _linear_text(names: list[str], w: np.ndarray, b: float, top: int = 4) -> str:
    order = np.argsort(-np.abs(w))
    big = [i for i in order[:top] if w[i] != 0]
    if not big:
        return _fmt(b)
    if len(w) > 1 and np.allclose(w, w[0], rtol=0.02):
        return f"{_fmt(w[0])}·sum({', '.join(names)})" if len(names) <= 3 else \
            f"{_fmt(w[0])}·(sum of the {len(names)} features)"
    terms = " + ".join(f"{_fmt(w[i])}·{names[i]}" for i in big).replace("+ -", "- ")
    rest = len([i for i in order if w[i] != 0]) - len(big)
    return terms + (f" + {rest} smaller terms" if rest > 0 else "")


@dataclass(frozen=True, eq=False)
class Linear(Score):
    """``features(ω) · weights + bias``: the log-odds of a logistic regression."""

    kind: ClassVar[str] = "linear"
    features: FeatureMap
    weights: tuple
    bias: float = 0.0
    label: str = "logistic regression"

    def __call__(self, outputs):
        return self.features.transform(outputs) @ np.asarray(self.weights, float) + self.bias

    def raw(self) -> tuple[list[str], np.ndarray, float]:
        """The score in the outputs' own units: feature names, weights and a constant (a
        numeric feature is ``(ω[j] - center) / scale``, 0 on the entry's flags and
        non-finite values; the fitted weights are per scaled feature)."""
        w = np.asarray(self.weights, float).copy()
        const = float(self.bias)
        for i, (_, center, scale) in enumerate(self.features.numeric):
            w[i] /= scale
            const -= w[i] * center
        return self.features.names(), w, const

    def describe(self):
        names, w, const = self.raw()
        text = _linear_text(names, w, const)
        if np.any(w != 0) and const != 0:
            text += f" {'-' if const < 0 else '+'} {_fmt(abs(const))}"
        return f"{self.label} score {text}"

    def solved(self, threshold: float, op: str) -> str | None:
        """The event ``score op threshold`` as a condition on one entry, ``ω[j] op' v``,
        when the score has one nonzero term and it is numeric (None otherwise); the entry's
        flags and non-finite values score the constant, so their side is said when the
        feature map knows flags of that entry."""
        names, w, const = self.raw()
        nz = np.flatnonzero(w)
        if len(nz) != 1 or nz[0] >= len(self.features.numeric):
            return None
        i = int(nz[0])
        text = f"{names[i]} {op if w[i] > 0 else FLIP[op]} {(threshold - const) / w[i]:.4g}"
        j = self.features.numeric[i][0]
        if any(int(k) == int(j) for k, _ in self.features.indicators):
            inside = {"≥": const >= threshold, ">": const > threshold,
                      "≤": const <= threshold, "<": const < threshold}[op]
            text += f" ({'with' if inside else 'without'} its flags)"
        return text

    def spec(self):
        return {"kind": self.kind, "features": self.features.spec(),
                "weights": [float(v) for v in self.weights], "bias": float(self.bias),
                "label": self.label}


@dataclass(frozen=True, eq=False)
class MLP(Score):
    """A ReLU network ``layers = ((W, b), ...)`` on the features; the last layer's output
    (one unit, no activation) is the log-odds."""

    kind: ClassVar[str] = "mlp"
    features: FeatureMap
    layers: tuple

    def __call__(self, outputs):
        h = self.features.transform(outputs)
        for i, (w, b) in enumerate(self.layers):
            h = h @ np.asarray(w, float) + np.asarray(b, float)
            if i < len(self.layers) - 1:
                np.maximum(h, 0.0, out=h)
        return h[:, 0]

    def describe(self):
        sizes = "-".join(str(np.asarray(w).shape[1]) for w, _ in self.layers[:-1])
        return f"neural network ({sizes} ReLU units) score on {self.features.size} features"

    def spec(self):
        return {"kind": self.kind, "features": self.features.spec(),
                "layers": [[np.asarray(w, float).tolist(), np.asarray(b, float).tolist()]
                           for w, b in self.layers]}


def _void(rows: np.ndarray) -> np.ndarray:
    rows = np.ascontiguousarray(np.asarray(rows, dtype=float) + 0.0)  # -0.0 reads as 0.0
    return rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()


def _encode(rows: np.ndarray, columns: list) -> np.ndarray:
    codes = np.zeros(rows.shape[0], dtype=np.int64)
    for j, vals in enumerate(columns):
        col = rows[:, j]
        pos = np.minimum(np.searchsorted(vals, col), len(vals) - 1)
        idx = np.where(vals[pos] == col, pos + 1, 0)
        codes = codes * (len(vals) + 1) + idx
    return codes


@dataclass(frozen=True, eq=False)
class Table(Score):
    """A score per distinct output row (``rows``, ``values``); rows not listed score
    ``default``."""

    kind: ClassVar[str] = "table"
    rows: tuple
    values: tuple
    default: float = 0.0
    _index: Any = field(default=None, repr=False, compare=False)

    def _lookup(self):
        """How the rows are coded (:func:`~privet.core.noise.value_codes` over the values of
        all entries when they are few, else per-entry sorted values, else None: raw rows),
        the listed rows' integer codes (mixed radix over each entry's index among its values;
        0 marks a value not listed) sorted, and their scores in that order."""
        if self._index is None:
            rows = np.asarray(self.rows, float).reshape(len(self.rows), -1) + 0.0
            values = np.unique(rows)
            columns = [np.unique(rows[:, j]) for j in range(rows.shape[1])]
            radix = [len(c) + 1 for c in columns]
            if len(values) <= FEW_VALUES and \
                    (len(values) + 1.0) ** rows.shape[1] < 2.0**62:
                coding, keys = values, value_codes(rows, values)
            elif float(np.prod(np.asarray(radix, dtype=float))) >= 2.0**62:
                coding, keys = None, _void(rows)  # too many combinations for int64 codes
            else:
                coding, keys = columns, _encode(rows, columns)
            order = np.argsort(keys)
            object.__setattr__(self, "_index", (coding, keys[order],
                                                np.asarray(self.values, float)[order]))
        return self._index

    def __call__(self, outputs):
        coding, keys, vals = self._lookup()
        rows = rows_of(outputs)
        q = _void(rows) if coding is None else \
            value_codes(rows, coding) if isinstance(coding, np.ndarray) else \
            _encode(rows, coding)
        if len(keys) == 0:
            return np.full(len(q), self.default)
        pos = np.minimum(np.searchsorted(keys, q), len(keys) - 1)
        return np.where(keys[pos] == q, vals[pos], self.default)

    def describe(self):
        return f"empirical log-ratio of {len(self.rows)} distinct outputs"

    def event_text(self, threshold: float, strict: bool = False, shown: int = 6) -> str:
        """``ω ∈ {...}`` for the outputs scoring at least (above, when ``strict``)
        ``threshold``; ``ω ∉ {...}`` when unlisted outputs are in the event too."""
        def keep(v: float) -> bool:
            return v > threshold if strict else v >= threshold

        outside = keep(self.default)
        out = []
        for r, v in zip(self.rows, self.values):
            if keep(v) != outside:
                vals = [value_name(float(t)) for t in np.ravel(r)]
                out.append(vals[0] if len(vals) == 1 else "[" + ", ".join(vals) + "]")
        text = ", ".join(out[:shown]) + (f", … ({len(out)} outputs)" if len(out) > shown else "")
        return f"ω {'∉' if outside else '∈'} {{{text}}}"

    def spec(self):
        return {"kind": self.kind, "rows": [[_plain(v) for v in np.ravel(r)] for r in self.rows],
                "values": [float(v) for v in self.values], "default": float(self.default)}


def _plain(v):
    v = float(v)
    return "inf" if v == np.inf else "-inf" if v == -np.inf else v


def _unplain(v):
    return {"inf": np.inf, "-inf": -np.inf}.get(v, v) if isinstance(v, str) else float(v)


@dataclass(frozen=True, eq=False)
class Bins(Score):
    """A score per cell of a grid over one or two entries (``coords``): ``edges`` per entry
    (inner edges; values outside fall in the end cells), ``values`` the flattened grid."""

    kind: ClassVar[str] = "bins"
    coords: tuple
    edges: tuple
    values: tuple

    def cells(self, outputs) -> np.ndarray:
        """The cell of each output (of a :class:`~privet.attacks.features.Batch`: found once
        for every histogram on the same entries and edges)."""
        if isinstance(outputs, Batch):
            return outputs.memo(("cells", self.coords, self.edges),
                                lambda: self.cells(outputs.rows))
        rows = rows_of(outputs)
        idx = np.zeros(rows.shape[0], dtype=np.int64)
        for j, e in zip(self.coords, self.edges):
            e = np.asarray(e, float)
            idx = idx * (len(e) + 1) + np.searchsorted(e, rows[:, int(j)], side="right")
        return idx

    def __call__(self, outputs):
        return np.asarray(self.values, float)[self.cells(outputs)]

    def describe(self):
        names = ", ".join(f"ω[{int(j)}]" for j in self.coords)
        cells = len(self.values)
        return f"histogram log-ratio over {cells} cells of {names}"

    def spec(self):
        return {"kind": self.kind, "coords": [int(j) for j in self.coords],
                "edges": [[float(v) for v in e] for e in self.edges],
                "values": [float(v) for v in self.values]}


STATS = ("entry", "sum", "count")


@dataclass(frozen=True, eq=False)
class Stat(Score):
    """``sign * statistic``: ``entry`` (ω[coord]; sentinels read as their own infinities),
    ``sum`` (of the finite entries that are not flags), ``count`` (entries equal to
    ``value``), ``above`` (entries above their pooled medians ``centers``, a tuple of
    (column, median): the sign test's statistic -- for Laplace noise whose scale is large
    next to the shift of every entry, each entry's log-likelihood ratio is a clipped linear
    term that is nearly a sign, so this count orders outputs as the likelihood ratio does,
    where the sum does only far in its tails), ``steps`` (the same count on the steps
    ω[j] - ω[j-1], ω[-1] = 0: outputs that are running totals, such as prefix sums or a
    counter released over time, whose steps are the noisy answers). ``sides`` (one per
    center, +1 or -1; empty: all +1) counts an entry when it lies on that side of its
    median: the side where the outputs of x lay in training, so that entries which the
    change of input moves in opposite directions all count towards x."""

    kind: ClassVar[str] = "stat"
    stat: str
    coord: int = 0
    value: float = 0.0
    sign: float = 1.0
    flags: tuple = ()
    centers: tuple = ()
    sides: tuple = ()
    at: str = "pooled"  # whose medians the centers are: 'pooled', 'x' or "x'" (for the text)

    def __call__(self, outputs):
        rows = rows_of(outputs)
        if self.stat == "entry":
            s = rows[:, int(self.coord)]
        elif self.stat in ("count", "above", "steps"):
            s = self._count(columns_of(outputs))
        else:
            ok = np.isfinite(rows)
            for v in self.flags:
                ok &= rows != v
            s = np.where(ok, rows, 0.0).sum(axis=1)
        return self.sign * s

    def _count(self, cols: np.ndarray) -> np.ndarray:
        """``count``: entries equal to ``value``; ``above``: finite entries on their side
        (``sides``) of their centers that are not flags; ``steps``: finite steps on their
        side of their centers -- summed column by column (contiguous, exact counts)."""
        n = cols.shape[1]
        total, hit, other = np.zeros(n), np.empty(n, dtype=bool), np.empty(n, dtype=bool)
        pairs = [(j, None) for j in range(cols.shape[0])] if self.stat == "count" else \
            [(int(j), float(c)) for j, c in self.centers]
        sides = self.sides or (1.0,) * len(pairs)
        step = np.empty(n) if self.stat == "steps" else None
        for (j, center), side in zip(pairs, sides):
            col = cols[j]
            if center is None:
                np.equal(col, self.value, out=hit)
                total += hit
                continue
            if step is not None and j > 0:
                col = np.subtract(col, cols[j - 1], out=step)
            (np.greater if side > 0 else np.less)(col, center, out=hit)
            np.isfinite(col, out=other)
            hit &= other
            if step is None:  # steps are of outputs without flags
                for v in self.flags:
                    np.not_equal(col, v, out=other)
                    hit &= other
            total += hit
        return total

    def negated(self) -> Score:
        return Stat(self.stat, self.coord, self.value, -self.sign, self.flags, self.centers,
                    self.sides, self.at)

    def describe(self):
        k = len(self.centers)
        where = {"pooled": "its median", "x": "its median under x",
                 "x'": "its median under x'"}[self.at]
        plain = self.at == "pooled" and not any(v < 0 for v in self.sides)
        side = "> median" if plain else f"on x's side of {where}"
        text = {"entry": f"ω[{int(self.coord)}]", "sum": "sum(ω)",
                "count": f"count(ω = {value_name(self.value)})",
                "above": (f"count(ω[j] > median of ω[j], {k} entries)" if plain
                          else f"count(ω[j] {side}, {k} entries)"),
                "steps": f"count(ω[j] - ω[j-1] {side}, {k} steps)"
                }[self.stat]
        return text if self.sign > 0 else f"-{text}"

    def spec(self):
        return {"kind": self.kind, "stat": self.stat, "coord": int(self.coord),
                "value": _plain(self.value), "sign": float(self.sign),
                "flags": [_plain(v) for v in self.flags],
                "centers": [[int(j), float(c)] for j, c in self.centers],
                "sides": [float(v) for v in self.sides], "at": self.at}


@dataclass(frozen=True, eq=False)
class Bits(Score):
    """``inner`` evaluated on ``view.codes(outputs)``: a score fitted on a float-exact view
    (post-processing of the output, so its threshold events are events of the output)."""

    kind: ClassVar[str] = "bits"
    view: BitView
    inner: Score

    def __call__(self, outputs):
        return self.inner(self.view.codes(outputs))

    def negated(self) -> Score:
        return Bits(self.view, self.inner.negated())

    def describe(self):
        return self.view.rename(self.inner.describe())

    def spec(self):
        return {"kind": self.kind, "view": self.view.spec(), "inner": self.inner.spec()}


def score_from_spec(d: dict) -> Score:
    """Inverse of ``Score.spec()``."""
    kind = d.get("kind")
    if kind == "negated":
        return Negated(score_from_spec(d["inner"]))
    if kind == "bits":
        return Bits(BitView.from_spec(d["view"]), score_from_spec(d["inner"]))
    if kind == "linear":
        return Linear(FeatureMap.from_spec(d["features"]), tuple(d["weights"]),
                      float(d["bias"]), d.get("label", "logistic regression"))
    if kind == "mlp":
        return MLP(FeatureMap.from_spec(d["features"]),
                   tuple((np.asarray(w, float), np.asarray(b, float)) for w, b in d["layers"]))
    if kind == "table":
        return Table(tuple(tuple(_unplain(v) for v in r) for r in d["rows"]),
                     tuple(float(v) for v in d["values"]), float(d.get("default", 0.0)))
    if kind == "bins":
        return Bins(tuple(int(j) for j in d["coords"]),
                    tuple(tuple(float(v) for v in e) for e in d["edges"]),
                    tuple(float(v) for v in d["values"]))
    if kind == "stat":
        return Stat(d["stat"], int(d.get("coord", 0)), _unplain(d.get("value", 0.0)),
                    float(d.get("sign", 1.0)), tuple(_unplain(v) for v in d.get("flags", ())),
                    tuple((int(j), float(c)) for j, c in d.get("centers", ())),
                    tuple(float(v) for v in d.get("sides", ())), str(d.get("at", "pooled")))
    raise ValueError(f"unknown score kind {kind!r}.")
