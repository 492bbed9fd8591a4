"""Output feature maps: any output (a scalar or a row of any length, with sentinels, flags,
categories or bits) as a fixed-width numeric matrix a classifier can learn from.

:func:`fit_features` reads a pooled pilot sample (outputs of both inputs) column by column:

* a column with few distinct values (categories, bits, small counts, True/False/ABORTED) is
  one-hot encoded, one indicator per value seen (a 0/1 column gets one indicator);
* any other column is numeric: its value, standardized by the median and the spread of its
  ordinary values, plus one indicator per *point mass* -- a sentinel (privet's FALSE/ABORTED,
  any infinity) or a value that holds at least ``mass`` of the column (DP-Sniper's -1,
  -1000.0, -2000.0 flags, NumericalSVT's 0 below the threshold); where a point mass sits,
  the numeric feature reads 0 (the median), so flags never masquerade as huge numbers.

A linear model on these features expresses sums and weighted sums of the entries,
per-entry flag patterns and per-category weights (for independent bits, the
log-likelihood ratio itself); the features are plain data (:meth:`FeatureMap.spec`), so the
events built on them serialize.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.errors import MechanismError

__all__ = ["FeatureMap", "fit_features", "rows_of", "shape_error"]

MAX_CATEGORIES = 12   # a column with at most this many distinct values is categorical
POINT_MASS = 0.01     # a numeric value holding this share of a column is a flag


def rows_of(outputs) -> np.ndarray:
    """Outputs as a float matrix, one row per sample."""
    out = np.asarray(outputs, dtype=float)
    if out.ndim > 1:
        return out.reshape(out.shape[0], int(np.prod(out.shape[1:])))
    return out.reshape(-1, 1)


def shape_error(name: str, w1: int, w2: int) -> MechanismError:
    """One sentence for outputs whose number of entries changes between calls."""
    who = name if name == "the mechanism" else f"mechanism {name!r}"
    return MechanismError(
        f"{who} returned outputs of {w1} entries in one call and {w2} in another; return "
        "the same number of entries every call (pad variable-length outputs with "
        "privet.ABORTED or a flag value)."
    )


def value_name(v: float) -> str:
    if v == -np.inf:
        return "FALSE"
    if v == np.inf:
        return "ABORTED"
    return str(int(v)) if float(v).is_integer() else f"{v:.4g}"


@dataclass(frozen=True)
class FeatureMap:
    """Columns of a feature matrix: ``numeric`` (column, center, scale) and ``indicators``
    (column, value); ``width`` is the number of entries per output row."""

    width: int
    numeric: tuple = ()
    indicators: tuple = ()

    @property
    def size(self) -> int:
        return len(self.numeric) + len(self.indicators)

    def transform(self, outputs) -> np.ndarray:
        """The feature matrix of a batch of outputs, shape ``(n, size)``."""
        rows = rows_of(outputs)
        if rows.shape[1] != self.width:
            raise shape_error("the mechanism", self.width, rows.shape[1])
        cols = np.ascontiguousarray(rows.T)  # one entry per row: contiguous column work
        out = np.empty((self.size, rows.shape[0]))
        masses: dict[int, list[float]] = {}
        for j, v in self.indicators:
            masses.setdefault(int(j), []).append(float(v))
        for i, (j, center, scale) in enumerate(self.numeric):
            col = cols[int(j)]
            special = ~np.isfinite(col)
            for v in masses.get(int(j), ()):
                special |= col == v
            with np.errstate(invalid="ignore"):
                np.subtract(col, center, out=out[i])
                out[i] /= scale
            if special.any():
                out[i][special] = 0.0
        if self.indicators:
            js = np.array([int(j) for j, _ in self.indicators])
            vs = np.array([float(v) for _, v in self.indicators])
            np.equal(cols[js], vs[:, None], out=out[len(self.numeric):], casting="unsafe")
        return out.T

    def names(self) -> list[str]:
        """A readable name per feature: ``ω[3]``, ``[ω[3] = ABORTED]``."""
        one = self.width == 1
        def entry(j) -> str:
            return "ω" if one else f"ω[{int(j)}]"
        return ([entry(j) for j, _, _ in self.numeric]
                + [f"[{entry(j)} = {value_name(v)}]" for j, v in self.indicators])

    def spec(self) -> dict:
        return {"width": self.width, "numeric": [list(map(float, t)) for t in self.numeric],
                "indicators": [[float(j), _plain(v)] for j, v in self.indicators]}

    @staticmethod
    def from_spec(d: dict) -> FeatureMap:
        return FeatureMap(int(d["width"]),
                          tuple((int(j), float(c), float(s)) for j, c, s in d["numeric"]),
                          tuple((int(j), _unplain(v)) for j, v in d["indicators"]))


def _plain(v: float):
    return "inf" if v == np.inf else "-inf" if v == -np.inf else float(v)


def _unplain(v) -> float:
    return {"inf": np.inf, "-inf": -np.inf}.get(v, v) if isinstance(v, str) else float(v)


def fit_features(outputs, max_categories: int = MAX_CATEGORIES, mass: float = POINT_MASS
                 ) -> FeatureMap:
    """The feature map of a pooled pilot sample (see the module docstring)."""
    rows = rows_of(outputs)
    numeric, indicators = [], []
    for j in range(rows.shape[1]):
        col = rows[:, j]
        values, counts = np.unique(col, return_counts=True)
        if len(values) <= max_categories:
            if len(values) == 2 and set(values.tolist()) == {0.0, 1.0}:
                indicators.append((j, 1.0))
            elif len(values) > 1:
                indicators.extend((j, float(v)) for v in values)
            continue
        heavy = values[(counts >= mass * len(col)) | ~np.isfinite(values)]
        ordinary = col[np.isfinite(col) & ~np.isin(col, heavy)]
        if ordinary.size == 0:
            indicators.extend((j, float(v)) for v in heavy)
            continue
        center = float(np.median(ordinary))
        q1, q3 = np.percentile(ordinary, [25, 75])
        scale = float(q3 - q1) or float(np.std(ordinary)) or 1.0
        numeric.append((j, center, scale))
        indicators.extend((j, float(v)) for v in heavy)
    return FeatureMap(rows.shape[1], tuple(numeric), tuple(indicators))
