"""Rendering for ``privet list``, ``privet sample`` and ``privet suite``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.mechanism import Mechanism
from ..core.text import pct
from . import Col, Fit, fmt_claim, fmt_num, fmt_p, fmt_vec, table, verdict_text


def library_table(mechs: dict[str, Mechanism | dict]) -> Fit:
    """The library listing, from mechanisms or from their ``privet list --json`` specs."""
    rows = []
    for name, m in mechs.items():
        spec = m.to_dict() if isinstance(m, Mechanism) else m
        rows.append([
            str(name), fmt_claim(spec.get("claim"), spec.get("epsilon")),
            fmt_num(spec.get("true_epsilon")), _short_neighbors(spec.get("neighbors") or {}),
            str(spec.get("source") or "").split(" (")[0],
        ])
    return table("privet mechanism library (privet list --json for the whole spec)",
                 ["name", "claim", "known ε", "neighbors", "source"], rows)


def _short_neighbors(spec: dict) -> str:
    kind = str(spec.get("kind", "?"))
    d = fmt_num(spec.get("delta"))
    return {"all_differ": f"all ±{d}", "one_differs": f"one ±{d}", "add_remove": "add/rm",
            "replace_one": "replace"}.get(kind, kind)


def exact_distribution_table(data: dict[str, Any]) -> Fit:
    """``privet sample --exact``: outputs and their exact probabilities (top 50)."""
    from fractions import Fraction

    from ..core.safe import parse_rational

    rows = []
    for d in list(data["distribution"])[:50]:
        p = d["probability"]
        q = parse_rational(p, "a probability") if isinstance(p, str) else Fraction(p)
        rows.append([str(d["output"]), fmt_num(q), f"{float(q):.6g}"])
    return table(f"exact output distribution of {data.get('mechanism', '?')} on "
                 f"{fmt_vec(data.get('input', '?'))} ({int(data['grid_size']):,} noise "
                 "outcomes)",
                 ["output", "probability", "≈"], rows)


def listing_kind(data: Any) -> str | None:
    """Which command printed this JSON: "exact", "sample" or "list" (None: neither)."""
    if not isinstance(data, dict):
        return None
    if "distribution" in data and "grid_size" in data:
        return "exact"
    if "n" in data and "distinct" in data and ("frequencies" in data or "columns" in data):
        return "sample"
    if data and all(isinstance(v, dict) and {"epsilon", "neighbors", "kind"} <= set(v)
                    for v in data.values()):
        return "list"
    return None


def render_listing(data: dict[str, Any]) -> Any:
    """The JSON of ``privet list``, ``privet sample`` or ``privet sample --exact`` again."""
    from ..core.errors import InputError

    kind = listing_kind(data)
    if kind == "exact":
        return exact_distribution_table(data)
    if kind == "sample":
        return sample_table(str(data.get("mechanism", "?")), data.get("input") or [], data)
    if kind == "list":
        return library_table(data)
    raise InputError("this JSON holds no privet result (nor the output of privet list or "
                     "privet sample); save one with --json.")


def sample_summary(outputs: np.ndarray) -> dict[str, Any]:
    """Counts of the most common outputs, or quantiles of numeric ones."""
    out = np.asarray(outputs)
    n = out.shape[0]
    if n == 0:
        return {"n": 0, "distinct": 0, "frequencies": []}
    rows = out.reshape(n, -1)
    uniq, counts = _unique_rows(rows)
    summary: dict[str, Any] = {"n": int(n), "distinct": int(len(uniq))}
    if len(uniq) <= 50:
        order = np.argsort(-counts)
        summary["frequencies"] = [
            {"output": _plain(uniq[i]), "count": int(counts[i]), "share": counts[i] / n}
            for i in order
        ]
    else:
        finite = np.where(np.isfinite(rows), rows, np.nan)
        summary["columns"] = [
            {"column": j, "mean": float(np.nanmean(finite[:, j])),
             "std": float(np.nanstd(finite[:, j])),
             "quantiles": {str(q): float(np.nanquantile(finite[:, j], q))
                           for q in (0.05, 0.25, 0.5, 0.75, 0.95)}}
            for j in range(rows.shape[1])
        ]
    return summary


def _unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows and their counts, by a 1-D sort (``np.unique(axis=0)`` is ~60x slower:
    20 s for 19 million outputs); rows are compared by their bytes (-0.0 counts as 0.0)."""
    if rows.dtype.kind not in "biuf":
        return np.unique(rows, axis=0, return_counts=True)
    if rows.shape[1] == 1:
        uniq, counts = np.unique(rows[:, 0], return_counts=True)
        return uniq.reshape(-1, 1), counts
    r = np.ascontiguousarray(rows + np.zeros((), dtype=rows.dtype))
    flat = r.view(np.dtype((np.void, r.dtype.itemsize * r.shape[1]))).ravel()
    _, first, counts = np.unique(flat, return_index=True, return_counts=True)
    return r[first], counts


def _plain(row: np.ndarray) -> Any:
    vals = [fmt_num(v) if not np.isfinite(v) else (int(v) if float(v).is_integer() else float(v))
            for v in row.tolist()]
    return vals[0] if len(vals) == 1 else vals


def sample_table(name: str, x: Sequence, summary: dict[str, Any]) -> Fit:
    title = (f"{int(summary['n']):,} outputs of {name} on {fmt_vec(x)} "
             f"({int(summary['distinct']):,} distinct)")
    if "frequencies" in summary:
        rows = [[str(f["output"]), f["count"], f"{f['share']:.4f}"] for f in
                summary["frequencies"][:20]]
        return table(title, ["output", "count", "share"], rows)
    rows = [[str(c["column"]), c["mean"], c["std"], *c["quantiles"].values()]
            for c in summary["columns"][:20]]
    return table(title, ["column", "mean", "std", "q05", "q25", "median", "q75", "q95"], rows)


FIGURE_NAMES = {"sample": "outputs/s", "detect": "p-value", "exact": "exact ε",
                "search": "certified ε ≥", "pufferfish": "worst log-ratio",
                "synth": "textbook rank"}


def figure_text(row: Any) -> str:
    """A suite row's figure with its name: ``31,840,000 outputs/s``, ``exact ε 1.386``."""
    fig = row.figure
    if fig is None:
        return "—"
    if row.engine == "sample":
        return f"{fig:,.0f} outputs/s"
    if row.engine == "detect":
        return fmt_p(fig)
    return f"{FIGURE_NAMES.get(row.engine, 'figure')} {fmt_num(fig, 4)}"


def suite_table(result: Any) -> Fit:
    """One line per mechanism, every engine joined (``result.lines``). Below the width the
    whole table needs, the counterexamples follow it, one line each, then one block per
    mechanism (:class:`privet.report.layout.Fit`)."""
    body = []
    for ln in result.lines:
        bound = "—" if ln.lower_bound is None else \
            f"{fmt_num(ln.lower_bound, 3)} ({pct(ln.confidence)})"
        body.append([ln.mechanism, fmt_claim(ln.claim, fmt_num(ln.claimed_epsilon, 3)),
                     fmt_num(ln.true_epsilon, 3),
                     verdict_text(ln.verdict), ln.counterexample or "—", bound,
                     fmt_num(ln.exact_epsilon, 4), f"{ln.seconds:.1f}"])
    mode = "quick" if result.quick else "full"
    state = ", interrupted: what finished is shown" if result.interrupted else ""
    tests = getattr(result, "tests", 0)
    control = (f"; family-wise error ≤ {result.alpha:g} over {tests} statistical tests "
               "(Holm)" if tests else "")
    title = (f"privet suite ({mode}, engines {', '.join(result.engines)}, "
             f"{result.seconds:.0f} s{state}{control}); --json or --html for every engine's "
             "result")
    return table(title, [Col("mechanism", style="bold"), Col("claim", "right"),
                         Col("known ε", "right"), Col("verdict", floor=24),
                         Col("counterexample", spill=True, floor=24),
                         Col("certified ε ≥", "right"), Col("exact ε", "right"),
                         Col("s", "right")], body)


def suite_rows_table(rows: Sequence[Any]) -> Fit:
    """One line per (mechanism, engine); the figure's meaning depends on the engine."""
    body = []
    for r in rows:
        body.append([r.mechanism, r.engine, fmt_num(r.claimed_epsilon, 3),
                     fmt_num(r.true_epsilon, 3), figure_text(r),
                     r.verdict, f"{r.seconds:.2f}" if r.seconds is not None else "—"])
    return table("privet suite, per engine", ["mechanism", "engine", "claimed", "known",
                                              "figure", "verdict", "s"], body)
