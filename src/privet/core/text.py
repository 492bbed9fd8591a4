"""Numbers and vectors for people: one formatting used by results, events, reports and errors.

Pure functions, no I/O. The rules (STYLE.md, "Results read like scipy.stats results"):

* integers print as integers, also when they arrive as floats (``1.0`` -> ``1``);
* floats get a fixed number of significant digits, infinities print as ``∞``;
* p-values print with two significant digits, and ``p < 1e-300`` when they underflowed;
* Fractions print as ``p/q``; the sentinels FALSE and ABORTED by name;
* :func:`fmt_vec` with ``short=True`` writes runs of a repeated value once, ``[0×5, 2×5]``,
  so a counterexample fits one terminal line (the full vector stays in JSON and HTML).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from fractions import Fraction
from typing import Any

# the sentinels of core.mechanism (FALSE = -inf, ABORTED = +inf inside an output row)
_SENTINELS = {-math.inf: "FALSE", math.inf: "ABORTED"}

P_FLOOR = 1e-300  # p-values below this underflowed somewhere: say "p < 1e-300"


def fmt_num(v: Any, digits: int = 4) -> str:
    """A number for people: ``1`` not ``1.0``, Fractions as p/q, ∞, None as —."""
    if v is None:
        return "—"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, Fraction):
        return str(v.numerator) if v.denominator == 1 else f"{v.numerator}/{v.denominator}"
    if isinstance(v, int) or (hasattr(v, "dtype") and getattr(v.dtype, "kind", "") in "iu"):
        return str(int(v))
    try:
        f = float(v)
    except (TypeError, ValueError):
        return str(v)
    if math.isinf(f):
        return "∞" if f > 0 else "-∞"
    if math.isnan(f):
        return "nan"
    if f.is_integer() and abs(f) < 10 ** max(digits, 6):
        return str(int(f))
    return f"{f:.{digits}g}"


def fmt_apart(v: Any, ref: Any, digits: int = 4) -> tuple[str, str]:
    """``v`` and ``ref`` by :func:`fmt_num` with the fewest digits (at least ``digits``, at
    most 15) that tell them apart, so that "1.099 > claimed 1.099" reads "1.0986123 >
    claimed 1.0986122"; equal numbers print at ``digits``."""
    try:
        differ = float(v) != float(ref)
    except (TypeError, ValueError):
        differ = False
    for d in range(digits, 16 if differ else digits + 1):
        a, b = fmt_num(v, d), fmt_num(ref, d)
        if a != b:
            return a, b
    return fmt_num(v, digits), fmt_num(ref, digits)


def fmt_value(v: Any, digits: int = 4) -> str:
    """An output or input entry: like :func:`fmt_num`, with sentinels by name."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return str(v)
    if f in _SENTINELS and not isinstance(v, Fraction):
        return _SENTINELS[f]
    return fmt_num(v, digits)


def fmt_p(p: float | None) -> str:
    """``p = 3.0e-155``, ``p = 0.26``, or ``p < 1e-300`` when the p-value underflowed."""
    if p is None:
        return "p = —"
    p = float(p)
    if p < P_FLOOR:
        return "p < 1e-300"
    if p < 1e-3:
        return f"p = {p:.1e}"
    return f"p = {p:.2g}"


def fmt_pvalue(p: float | None) -> str:
    """The p-value alone, as in a table cell: ``3.0e-155``, ``0.26``, ``< 1e-300``."""
    text = fmt_p(p)
    return text[len("p = "):] if text.startswith("p = ") else text[len("p "):]


def runs(values: Iterable[Any]) -> list[tuple[Any, int]]:
    """Consecutive equal values as ``(value, count)`` pairs."""
    out: list[tuple[Any, int]] = []
    for v in values:
        if out and _same(out[-1][0], v):
            out[-1] = (out[-1][0], out[-1][1] + 1)
        else:
            out.append((v, 1))
    return out


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b) or (math.isnan(float(a)) and math.isnan(float(b)))
    except (TypeError, ValueError):
        return False


def fmt_vec(v: Any, digits: int = 4, short: bool = False) -> str:
    """``[1, 2, 3]``; with ``short``, 3 significant digits and runs of 3 or more written
    once with their count: ``[0×5, 2×5]``. Scalars print as :func:`fmt_value`."""
    if v is None:
        return "—"
    if hasattr(v, "tolist"):
        v = v.tolist()
    if not isinstance(v, (list, tuple)):
        return fmt_value(v, digits)
    if short:
        digits = min(digits, 3)
        parts = []
        for value, k in runs(v):
            text = fmt_vec(value, digits, short) if isinstance(value, (list, tuple)) \
                else fmt_value(value, digits)
            parts.extend([f"{text}×{k}"] if k >= 3 else [text] * k)
        return "[" + ", ".join(parts) + "]"
    return "[" + ", ".join(fmt_vec(x, digits) if isinstance(x, (list, tuple))
                           else fmt_value(x, digits) for x in v) + "]"


def plain(v: Any) -> Any:
    """Integral floats as ints, recursively (``(1.0, 2.5)`` -> ``(1, 2.5)``): inputs that
    are integers are shown and stored as integers. Sentinels and non-numbers are kept."""
    if isinstance(v, (list, tuple)):
        return type(v)(plain(x) for x in v)
    if hasattr(v, "tolist") and not isinstance(v, (int, float)):
        return plain(v.tolist())
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def pct(confidence: float) -> str:
    """A confidence as a percentage with the digits it has: ``90%``, ``99.99999%`` (never
    rounded up to 100%)."""
    return f"{float(confidence) * 100:.10g}%"


__all__ = ["P_FLOOR", "fmt_apart", "fmt_num", "fmt_p", "fmt_pvalue", "fmt_value", "fmt_vec",
           "pct", "plain", "runs"]
