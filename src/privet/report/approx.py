"""Rendering of the approximate-DP results: ``search``'s certified profile and ``exact``'s
privacy profile, as rich tables, HTML sections and a plot of ε(δ) against the claim."""

from __future__ import annotations

import math
from typing import Any

from rich.console import Group

from ..core.results import CertifiedProfile, ExactProfile
from . import Col, fmt_num, fmt_vec, kv, table, verdict_text


def _eps(v: float) -> str:
    return "∞ (nothing promised)" if math.isinf(v) else fmt_num(v, 4)


def render_certified(r: CertifiedProfile) -> Group:
    """Summary (δ at ε, ε at δ, verdict, witness) and the certified curve against the claim."""
    how = "exactly" if r.confidence == 1.0 else f"confidence {r.confidence:.10g}"
    rows = [["mechanism", r.mechanism], ["claim", r.claim or "—"],
            ["certified δ", f"δ({fmt_num(r.epsilon)}) ≥ {fmt_num(r.delta_lower, 3)} ({how}); "
                            f"claimed {fmt_num(r.details.get('claimed_delta'), 3)}"],
            ["certified ε", f"ε({fmt_num(r.delta, 3)}) ≥ {fmt_num(r.epsilon_lower)} ({how})"],
            ["verdict", verdict_text(r.verdict)], ["method", r.method]]
    w = r.witness
    if w is not None:
        rows += [["D1", fmt_vec(w.d1)], ["D2", fmt_vec(w.d2)], ["event E", w.event]]
        if w.counts is not None:
            rows.append(["counts in E (fresh)", f"{w.counts[0]:,} of {w.n[0]:,} / "
                                                f"{w.counts[1]:,} of {w.n[1]:,}"])
        if w.probabilities is not None:
            rows.append(["P[M(D1)∈E], P[M(D2)∈E]",
                         ", ".join(fmt_num(p, 6) for p in w.probabilities)])
    if r.seconds is not None:
        rows.append(["time", f"{r.seconds:.1f} s"])
    head = kv(f"privet search (approximate DP): {r.mechanism}", rows)
    known = r.known_curve or (None,) * len(r.curve_delta)
    curve = table("certified lower curve ε_L(δ) against the claim's ε(δ)",
                  [Col("δ", "right"), Col("certified ε ≥", "right"), Col("claimed ε", "right"),
                   Col("known ε", "right")],
                  [[f"{d:.1e}", fmt_num(e, 4), _eps(c), fmt_num(k, 4)]
                   for d, e, c, k in zip(r.curve_delta, r.curve_epsilon, r.claimed_curve,
                                         known)])
    return Group(head, curve)


def render_exact_profile(p: ExactProfile) -> Group:
    """The exact δ(ε) table with its worst pairs, the Rényi/zCDP values and the claim check."""
    t = table(f"privet exact: privacy profile of {p.mechanism}",
              [Col("ε", "right"), Col("δ(ε)", "right"), "worst pair (D1, D2)"],
              [[fmt_num(e, 4), f"{d:.12g}", f"{fmt_vec(w[0])}, {fmt_vec(w[1])}"]
               for e, d, w in zip(p.epsilons, p.deltas, p.witnesses)])
    rows = [["claim", p.claim or "—"], ["check", verdict_text(p.check)],
            ["zCDP ρ (tight)", "∞ (supports differ)" if p.rho is None else f"{p.rho:.6g}"],
            ["Rényi D_α", ", ".join(f"α={a}: {fmt_num(v, 4)}" for a, v in p.renyi.items())],
            ["checked", p.domain]]
    if p.details.get("tail_note"):
        rows.append(["note", p.details["tail_note"]])
    if p.seconds is not None:
        rows.append(["time", f"{p.seconds:.2f} s"])
    return Group(t, kv(None, rows))


def plot_profile(r: CertifiedProfile, path: str | None = None) -> Any:
    """ε(δ) on a log δ axis: certified lower curve, claimed curve, known curve (PNG/SVG
    saved to ``path``; returns the figure when ``path`` is None)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.6))
    d = list(r.curve_delta)
    ax.plot(d, r.curve_epsilon, marker="o", ms=3, label=f"certified ε_L(δ) ({r.confidence:.10g})")
    claimed = [c if math.isfinite(c) else float("nan") for c in r.claimed_curve]
    ax.plot(d, claimed, ls="--", color="black", label=f"claimed ({r.claim})")
    if r.known_curve:
        ax.plot(d, r.known_curve, ls=":", color="grey", label="known ε(δ)")
    ax.set_xscale("log")
    ax.set_xlabel("δ")
    ax.set_ylabel("ε")
    ax.set_title(r.mechanism)
    ax.legend(fontsize=8)
    fig.tight_layout()
    if path is None:
        return fig
    from .output import save_figure

    try:
        save_figure(fig, path)
    finally:
        plt.close(fig)
    return path


def html_certified(r: CertifiedProfile) -> str:
    from .html import _plot, _section, badge, esc, grid_table, kv_table

    rows = [("claim", esc(r.claim or "—")), ("verdict", badge(r.verdict)),
            ("certified δ", esc(f"δ({fmt_num(r.epsilon)}) ≥ {fmt_num(r.delta_lower, 3)}")),
            ("certified ε", esc(f"ε({fmt_num(r.delta, 3)}) ≥ {fmt_num(r.epsilon_lower)}")),
            ("confidence", esc(f"{r.confidence:.10g}")), ("method", esc(r.method))]
    if r.witness is not None:
        rows += [("D1", esc(fmt_vec(r.witness.d1))), ("D2", esc(fmt_vec(r.witness.d2))),
                 ("event E", esc(r.witness.event))]
    svg = _plot(lambda fig: _draw(fig.add_subplot(), r))
    curve = grid_table(["δ", "certified ε ≥", "claimed ε"],
                       [[f"{d:.1e}", fmt_num(e, 4), esc(_eps(c))] for d, e, c in
                        zip(r.curve_delta, r.curve_epsilon, r.claimed_curve)])
    return _section(f"<h3>search (approximate DP): {esc(r.mechanism)}</h3>" + kv_table(rows)
                    + svg + curve)


def _draw(ax: Any, r: CertifiedProfile) -> None:
    d = list(r.curve_delta)
    ax.plot(d, r.curve_epsilon, marker="o", ms=3, label="certified ε_L(δ)")
    ax.plot(d, [c if math.isfinite(c) else float("nan") for c in r.claimed_curve], ls="--",
            color="black", label="claimed")
    ax.set_xscale("log")
    ax.set_xlabel("δ")
    ax.set_ylabel("ε")
    ax.legend(fontsize=8)


def html_exact_profile(p: ExactProfile) -> str:
    from .html import _section, badge, esc, grid_table, kv_table

    rows = [("claim", esc(p.claim or "—")), ("check", badge(p.check)),
            ("zCDP ρ", esc("∞" if p.rho is None else f"{p.rho:.6g}")),
            ("checked", esc(p.domain))]
    body = grid_table(["ε", "δ(ε)"], [[fmt_num(e, 4), f"{d:.12g}"]
                                      for e, d in zip(p.epsilons, p.deltas)])
    return _section(f"<h3>exact privacy profile: {esc(p.mechanism)}</h3>" + kv_table(rows)
                    + body)


__all__ = ["html_certified", "html_exact_profile", "plot_profile", "render_certified",
           "render_exact_profile"]
