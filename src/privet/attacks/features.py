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

:class:`BitView` is the float-exact feature map: every entry replaced by an integer code read
off its IEEE-754 bits, on which the same models (table, logistic regression, statistics) are
then fitted. Mechanisms compute in doubles, and rounding leaves traces a real-number feature
cannot see (Mironov, CCS 2012, Sec. 3: ``x + Lap(b)`` near 0 lies on the 2^-53 grid for
``x = 1``, on far finer grids for ``x = 0``; Jin, McMurtry, Rubinstein, Ohrimenko, S&P 2022,
Sec. 4, for Gaussian samplers):

* ``granularity`` -- the exponent of the lowest set bit: the coarsest power-of-two lattice the
  double lies on (its exponent and its position on the ulp grid together);
* ``trailing_zeros`` -- the position on its own ulp grid (how many low significand bits are 0);
* ``low_bits`` -- the ``k`` least significant stored mantissa bits;
* ``residue`` -- the residue against the inputs' lattice (the coarsest power of two every
  entry of both inputs is a multiple of): 0 on the lattice, else one of ``bins`` bins.

:func:`bit_views` says which views a pair gets: ``"auto"`` gives granularity, low bits and
residue when the outputs are doubles with a fractional part (integer and categorical outputs
get none: their table model sees every value already); ``trailing_zeros`` is used when named.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

import numpy as np

from ..core import bits
from ..core.errors import MechanismError, ParameterError
from ..stats.counts import most_separating

__all__ = ["BIT_FEATURES", "DEFAULT_BIT_FEATURES", "VIEW_ENTRIES", "Batch", "BitView",
           "FeatureMap", "bit_views", "check_bit_features", "columns_of", "fit_features",
           "fractional_doubles", "informative_entries", "input_lattice", "raw", "rows_of",
           "shape_error"]

MAX_CATEGORIES = 12   # a column with at most this many distinct values is categorical
POINT_MASS = 0.01     # a numeric value holding this share of a column is a flag


def rows_of(outputs) -> np.ndarray:
    """Outputs as a float matrix, one row per sample."""
    if isinstance(outputs, Batch):
        return outputs.rows
    return _matrix(outputs).astype(float, copy=False)


def _matrix(outputs) -> np.ndarray:
    """Outputs as a matrix of their own dtype, one row per sample."""
    out = np.asarray(outputs)
    if out.dtype == object:
        out = out.astype(float)
    if out.ndim > 1:
        return out.reshape(out.shape[0], int(np.prod(out.shape[1:])))
    return out.reshape(-1, 1)


TRANSPOSE_BLOCK = 2048  # rows per block of the transposition (a block stays in cache)


def columns_of(outputs) -> np.ndarray:
    """The outputs' entries as contiguous columns, shape ``(width, n)``: transposed block by
    block (a whole-matrix transposition strides through memory and ran 3x slower)."""
    if isinstance(outputs, Batch):
        return outputs.memo("columns", lambda: columns_of(outputs.rows))
    # integer and boolean outputs are converted to floats as they are transposed (a float
    # copy first took as long again: a third of a white box's paired chunk of
    # one_time_rappor with a logistic event)
    rows = _matrix(outputs)
    n, w = rows.shape
    if w == 1:
        return np.ascontiguousarray(rows.T, dtype=float)
    cols = np.empty((w, n))
    for b in range(0, n, TRANSPOSE_BLOCK):
        cols[:, b:b + TRANSPOSE_BLOCK] = rows[b:b + TRANSPOSE_BLOCK].T
    return cols


class Batch:
    """A batch of outputs that several scores read: what they derive from it (its columns,
    a feature map's matrix, a float-exact view's codes) is computed once and kept while the
    batch lives. The scores take a batch wherever they take outputs."""

    __slots__ = ("outputs", "rows", "_memo")

    def __init__(self, outputs):
        self.outputs = outputs
        self.rows = rows_of(outputs)
        self._memo: dict = {}

    def __len__(self) -> int:
        return self.rows.shape[0]

    def memo(self, key, compute):
        """``compute()`` the first time ``key`` is asked, the kept value after."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]


def raw(outputs):
    """The outputs as given (a :class:`Batch`'s own)."""
    return outputs.outputs if isinstance(outputs, Batch) else outputs


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
        """The feature matrix of a batch of outputs, shape ``(n, size)`` (a view of a
        ``(size, n)`` array: one contiguous row per feature)."""
        if isinstance(outputs, Batch):
            return outputs.memo(self, lambda: self._transform(outputs))
        return self._transform(outputs)

    def _transform(self, outputs) -> np.ndarray:
        cols = columns_of(outputs)  # one entry per row: contiguous column work
        if cols.shape[0] != self.width:
            raise shape_error("the mechanism", self.width, cols.shape[0])
        n = cols.shape[1]
        out = np.empty((self.size, n))
        masses: dict[int, list[float]] = {}
        for j, v in self.indicators:
            masses.setdefault(int(j), []).append(float(v))
        special, hit = np.empty(n, dtype=bool), np.empty(n, dtype=bool)
        for i, (j, center, scale) in enumerate(self.numeric):
            col = cols[int(j)]
            np.isfinite(col, out=special)
            np.logical_not(special, out=special)
            for v in masses.get(int(j), ()):
                np.equal(col, v, out=hit)
                special |= hit
            with np.errstate(invalid="ignore"):
                np.subtract(col, center, out=out[i])
                out[i] /= scale
            np.copyto(out[i], 0.0, where=special)
        for k, (j, v) in enumerate(self.indicators, start=len(self.numeric)):
            np.equal(cols[int(j)], float(v), out=out[k], casting="unsafe")
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


def fit_features(outputs, max_categories: int = MAX_CATEGORIES, mass: float = POINT_MASS,
                 entries=None) -> FeatureMap:
    """The feature map of a pooled pilot sample (see the module docstring); ``entries``:
    only these entries get features (:func:`informative_entries`), all when None."""
    rows = rows_of(outputs)
    numeric, indicators = [], []
    for j in (range(rows.shape[1]) if entries is None else entries):
        j = int(j)
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


WIDE_ENTRIES = 64     # outputs wider than this get features on their most separating entries
TOP_ENTRIES = 32      # ... this many of them
VIEW_ENTRIES = 8      # ... and their float-exact codes on this many (a dozen indicators each)
RANK_ROWS = 1024      # rows of each sample that rank the entries, at most
RANK_ELEMENTS = 1 << 21  # ... and at most this many entries of each sample in all
RANK_LEAST = 256      # ... but at least this many rows


def informative_entries(r1, r0, wide: int = WIDE_ENTRIES, keep: int = TOP_ENTRIES
                        ) -> np.ndarray | None:
    """For outputs wider than ``wide`` entries, the ``keep`` entries whose values differ
    most between the two samples (``r1``: outputs of x, ``r0``: of x'), by the two-sample
    Kolmogorov-Smirnov distance of each entry on up to :data:`RANK_ROWS` rows of each
    (sentinels, the infinities, sort to the ends and count like any value; fewer rows when
    the outputs are very wide: :data:`RANK_ELEMENTS`), the most separating first;
    None for narrower outputs (every entry gets features). A classifier on a thousand
    entries -- each a numeric feature, or a dozen one-hot indicators on a float-exact view
    -- cost minutes and gigabytes per fit; the entries a change of input moves are the ones
    it separates, and the statistics (sum, entries above their medians) still read them
    all."""
    a, b = rows_of(r1), rows_of(r0)
    width = a.shape[1]
    if width <= wide:
        return None
    return most_separating([(a, b)], keep, max(min(RANK_ROWS, RANK_ELEMENTS // width),
                                               RANK_LEAST))


# ---------------------------------------------------------------------------------------------
# float-exact views (module docstring)
# ---------------------------------------------------------------------------------------------

BIT_FEATURES = ("granularity", "trailing_zeros", "low_bits", "residue")
# what "auto" and "all" use: trailing_zeros only on request (with the exponent, which the
# magnitude of the output mostly fixes, it is the granularity: one more score per pair
# costs selection time and rarely separates what the granularity does not)
DEFAULT_BIT_FEATURES = ("granularity", "low_bits", "residue")
LOW_BITS = 4          # low_bits: this many least significant mantissa bits (16 codes)
RESIDUE_BINS = 8      # residue: bins of (0, 1) besides the lattice points themselves
GRANULARITY_CAP = 1100  # granularity codes in [-cap, cap]; 0.0 (on every lattice) reads cap
PROBE_ROWS = 4096     # rows of each sample read to tell whether outputs are doubles


@dataclass(frozen=True)
class BitView:
    """One float-exact view: each finite entry replaced by its integer code; sentinels and
    NaN (privet's FALSE/ABORTED, infinities) keep their value, so flags stay flags.
    ``entries``: only these entries are coded, and the codes are theirs alone, in that
    order (wide outputs, :func:`informative_entries`; descriptions name the outputs'
    entries); every entry when empty."""

    feature: str
    k: int = LOW_BITS
    lattice: float = 1.0
    bins: int = RESIDUE_BINS
    entries: tuple = ()

    def __post_init__(self):
        if self.feature not in BIT_FEATURES:
            raise ParameterError(f"unknown float feature {self.feature!r}; use one of "
                                 f"{', '.join(BIT_FEATURES)}.")

    def codes(self, outputs):
        """The coded outputs, a float matrix of the outputs' shape ``(n, width)`` (of a
        :class:`Batch`: a batch of them, coded once)."""
        if isinstance(outputs, Batch):
            return outputs.memo(self, lambda: Batch(self.codes(outputs.rows)))
        rows = rows_of(outputs)
        if self.entries:
            idx = np.asarray(self.entries, dtype=np.intp)
            if rows.shape[1] <= idx.max():
                raise shape_error("the mechanism", int(idx.max()) + 1, rows.shape[1])
            return dataclasses.replace(self, entries=()).codes(rows[:, idx])
        finite = np.isfinite(rows)
        safe = np.where(finite, rows, 0.0)
        if self.feature == "granularity":
            c = np.clip(bits.granularity(safe), -GRANULARITY_CAP, GRANULARITY_CAP)
        elif self.feature == "trailing_zeros":
            c = bits.trailing_zeros(safe)
        elif self.feature == "low_bits":
            c = bits.low_bits(safe, self.k)
        else:
            c = bits.lattice_residue(safe, self.lattice, self.bins)
        return np.where(finite, c.astype(float), rows)

    def label(self) -> str:
        if self.feature == "low_bits":
            return f"low{int(self.k)}"
        if self.feature == "residue":
            return f"residue[{value_name(self.lattice)}]"
        return self.feature

    def rename(self, text: str) -> str:
        """``text`` about ω read about this view: ``ω[0] > 3`` -> ``granularity(ω[0]) > 3``."""
        def coded(m: re.Match) -> str:
            entry = m.group(0)
            if self.entries:  # the codes' k-th entry is the outputs' entries[k]
                entry = f"ω[{self.entries[int(m.group(1)[1:-1]) if m.group(1) else 0]}]"
            return f"{self.label()}({entry})"

        out, hits = re.subn(r"ω(\[\d+\])?", coded, text)
        out = out.replace(" outputs", " values")
        if hits:
            return out
        head, sep, tail = out.partition(" values")  # "table of 6 distinct values ≤ -1"
        return f"{head}{sep} of {self.label()}(ω){tail}" if sep else f"{out} of {self.label()}(ω)"

    def spec(self) -> dict:
        return {"feature": self.feature, "k": int(self.k), "lattice": float(self.lattice),
                "bins": int(self.bins), **({"entries": [int(j) for j in self.entries]}
                                           if self.entries else {})}

    @staticmethod
    def from_spec(d: dict) -> BitView:
        return BitView(str(d["feature"]), int(d.get("k", LOW_BITS)),
                       float(d.get("lattice", 1.0)), int(d.get("bins", RESIDUE_BINS)),
                       tuple(int(j) for j in d.get("entries", ())))


def fractional_doubles(*samples) -> bool:
    """The outputs are doubles and some finite entry has a fractional part (read on the
    first ``PROBE_ROWS`` rows of each sample)."""
    for o in samples:
        a = np.asarray(o)
        if a.dtype.kind != "f":
            continue
        head = a[:PROBE_ROWS].astype(np.float64, copy=False)
        fin = head[np.isfinite(head)]
        if fin.size and bool(np.any(fin != np.round(fin))):
            return True
    return False


def input_lattice(x, x2) -> float:
    """The coarsest power of two every entry of both inputs is a multiple of (1.0 for all
    zeros; exponents kept within [-1022, 1023])."""
    v = np.r_[np.ravel(np.asarray(x, float)), np.ravel(np.asarray(x2, float))]
    v = v[np.isfinite(v) & (v != 0)]
    g = int(np.min(bits.granularity(v))) if v.size else 0
    return float(np.ldexp(1.0, min(max(g, -1022), 1023)))


def check_bit_features(choice) -> object:
    """``choice`` as given (``"auto"``, ``"all"``, ``"off"``, True/False/None, or feature
    names, a sequence or a comma-separated string), checked: one sentence if unknown."""
    if choice is None or isinstance(choice, bool) or choice in ("auto", "all", "off", "none"):
        return choice
    names = choice.split(",") if isinstance(choice, str) else list(choice)
    names = [str(n).strip() for n in names if str(n).strip()]
    bad = [n for n in names if n not in BIT_FEATURES]
    if bad or not names:
        raise ParameterError(
            f"unknown float feature(s) {', '.join(map(repr, bad)) or repr(choice)}; use "
            f"'auto', 'all', 'off' or names among {', '.join(BIT_FEATURES)}.")
    return tuple(names)


def bit_views(choice, o1, o2, x, x2) -> tuple[BitView, ...]:
    """The float-exact views a pair (x, x2) with samples (o1, o2) gets: none for ``"off"``,
    False or None; :data:`DEFAULT_BIT_FEATURES` for ``"all"`` or True, and for ``"auto"``
    when the outputs are :func:`fractional_doubles`; else the named ones."""
    choice = check_bit_features(choice)
    if choice in (None, False, "off", "none"):
        return ()
    if choice == "auto" and not fractional_doubles(o1, o2):
        return ()
    names = DEFAULT_BIT_FEATURES if choice in ("auto", "all", True) else choice
    lattice = input_lattice(x, x2)
    return tuple(BitView(f, lattice=lattice) if f == "residue" else BitView(f)
                 for f in names)
