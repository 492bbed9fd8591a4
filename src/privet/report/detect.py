"""Rendering of ``privet.detect`` results and the ``privet detect`` subcommand.

``render(result)`` returns a rich renderable (verdict, counterexample, candidates, curve);
``plot_curve(curve, path)`` saves the p-value curve with the claimed epsilon marked (the
figures of StatDP Sec. 5); ``add_cli(subparsers)`` / ``run_cli(args)`` wire the CLI.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from rich.console import Group
from rich.text import Text

from .. import cli_support as flags
from ..core.results import Counterexample, DetectResult, PValueCurve
from ..core.text import fmt_value
from . import (
    Col,
    Fit,
    emit,
    fmt_num,
    fmt_pvalue,
    fmt_vec,
    kv,
    show_progress,
    table,
    verdict_text,
)
from . import console as shared_console
from .html import add_html_option
from .options import add_common_options


def _p(p: float | None) -> str:
    return "—" if p is None else fmt_pvalue(p)


def counterexample_table(cx: Counterexample, title: str = "counterexample") -> Fit:
    """D1, D2, arguments, event, counts on both sides, p-value, seed."""
    rows = [["D1", fmt_vec(cx.d1)], ["D2", fmt_vec(cx.d2)]]
    if cx.args:
        rows.append(["args", ", ".join(f"{k}={fmt_value(v)}" for k, v in cx.args.items()
                                       if k != "epsilon")])
    rows.append(["event E", cx.event])
    if cx.counts and cx.n:
        rows.append(["M(D1) ∈ E", f"{cx.counts[0]:,} of {cx.n[0]:,}"])
        rows.append(["M(D2) ∈ E", f"{cx.counts[1]:,} of {cx.n[1]:,}"])
    elif cx.probabilities:   # a white-box (exact) counterexample
        rows.append(["P[M(D1) ∈ E]", f"{fmt_num(cx.probabilities[0], 6)} (exact)"])
        rows.append(["P[M(D2) ∈ E]", f"{fmt_num(cx.probabilities[1], 6)} (exact)"])
    d = (cx.details or {}).get("test_delta")
    if cx.test_epsilon is not None:
        rows.append(["claim tested", f"P[M(D1) ∈ E] ≤ e^{fmt_num(cx.test_epsilon)} · "
                                     "P[M(D2) ∈ E]" + (f" + {fmt_num(d, 3)}" if d else "")])
    if (cx.details or {}).get("null"):
        rows.append(["null", f"{cx.details['null']}; {cx.details.get('test', '')}"])
    if not cx.exact:
        rows.append(["p-value", _p(cx.p_value)])
    pattern = cx.details.get("pattern") if cx.details else None
    if pattern:
        rows.append(["input pattern", str(pattern)])
    if cx.seed is not None:
        rows.append(["seed", str(cx.seed)])
    return kv(title, rows)


def curve_table(curve: PValueCurve) -> Fit:
    cxs = list(curve.counterexamples) or [None] * len(curve.test_epsilons)
    rows = []
    for e, p, cx in zip(curve.test_epsilons, curve.p_values, cxs):
        rows.append([fmt_num(e, 3), Text(_p(p), style="red" if p < curve.alpha else ""),
                     cx.event if cx is not None else "",
                     fmt_vec(cx.d1, short=True) if cx is not None else "",
                     fmt_vec(cx.d2, short=True) if cx is not None else ""])
    lb = curve.lower_bound
    note = (f"statistical lower bound: ε > {fmt_num(lb)} (the largest test ε rejected at "
            f"α = {fmt_num(curve.alpha)})" if lb is not None else
            "no test ε rejected: no lower bound on ε")
    return table(f"p-value curve of {curve.mechanism} (claimed ε = "
                 f"{fmt_num(curve.claimed_epsilon)})",
                 [Col("test ε", "right"), Col("p-value", "right"), Col("event", floor=16),
                  Col("D1", spill=True), Col("D2", spill=True)], rows, notes=[note])


def render(result: DetectResult) -> Group:
    """A rich renderable of a detect result."""
    parts: list[Any] = []
    head = Text()
    head.append(f"{result.mechanism}: ", style="bold")
    head.append_text(verdict_text(result.verdict))
    head.stylize("bold", len(result.mechanism) + 2)
    parts.append(head)
    tested = f"test ε = {fmt_num(result.test_epsilon, 6)}" + (  # the claim's digits
        f", test δ = {fmt_num(result.test_delta, 3)}" if result.test_delta else "")
    claimed = result.claim or f"ε = {fmt_num(result.claimed_epsilon)}"
    d = result.details or {}
    drawn = f"{d['samples']:,} samples ({d.get('stopped', '')}), " if "samples" in d else ""
    parts.append(Text(f"{tested}, claimed {claimed}, arguments: {result.arg_path}, {drawn}"
                      f"{result.seconds:.2f} s, seed {result.seed}", style="dim"))
    for note in d.get("notes") or ():  # how the run went: sizes cut, events narrowed
        parts.append(Text(f"note: {note}", style="dim"))
    selected = result.counterexample or result.details.get("selected")
    if selected is not None:
        parts.append(counterexample_table(
            selected, "counterexample" if result.counterexample else
            "most suspicious event (not significant)"))
    if len(result.candidates) > 1:
        rows = [[fmt_vec(c.d1, short=True), fmt_vec(c.d2, short=True), c.event,
                 f"{c.counts[0]:,} vs {c.counts[1]:,}" if c.counts else "",
                 f"{c.n[0]:,}" if c.n else "", _p(c.p_value)]
                for c in result.candidates]
        parts.append(table("candidates (best event of the best input pairs, fresh samples)",
                           ["D1", "D2", Col("event", floor=16), Col("counts", "right"),
                            Col("runs each", "right"), Col("p-value", "right")], rows))
    if result.curve is not None:
        parts.append(curve_table(result.curve))
    return Group(*parts)


def plot_curve(curves: PValueCurve | Sequence[PValueCurve], path: str, title: str | None = None,
               labels: Sequence[str] | None = None) -> str:
    """Save p-value curve(s) to ``path`` (PNG/PDF/SVG); claimed epsilons dashed (StatDP Fig. 1)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    items = [curves] if isinstance(curves, PValueCurve) else list(curves)
    fig, ax = plt.subplots(figsize=(6, 4))
    for i, c in enumerate(items):
        label = labels[i] if labels else f"claimed ε = {fmt_num(c.claimed_epsilon)}"
        line, = ax.plot(c.test_epsilons, c.p_values, marker="o", ms=3, label=label)
        if c.claimed_epsilon is not None:
            ax.axvline(c.claimed_epsilon, color=line.get_color(), ls="--", lw=1)
    ax.axhline(items[0].alpha if items else 0.05, color="grey", ls=":", lw=1)
    ax.set_xlabel("Test ε")
    ax.set_ylabel("P value")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(title or items[0].mechanism)
    ax.legend()
    fig.tight_layout()
    from .output import save_figure

    try:
        save_figure(fig, path)
    finally:
        plt.close(fig)
    return path


# -- CLI -------------------------------------------------------------------------------------

def add_cli(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``privet detect TARGET ...`` to an argparse subparsers object."""
    p = subparsers.add_parser(
        "detect", help="look for a counterexample to the claimed epsilon (StatDP)",
        description="Statistical counterexample detection (StatDP, Ding et al. CCS 2018): "
                    "generates neighboring inputs and arguments, selects the most "
                    "suspicious output event and tests it on fresh samples.")
    if not any(a.dest == "target" for a in p._actions):
        p.add_argument("target", help="library name (statdp.svt) or MODULE:NAME / file.py:NAME")
    p.add_argument("--epsilon", type=flags.epsilon, default=None,
                   help="test ε: the ε the test checks (default: the mechanism's claimed ε)")
    p.add_argument("--delta", type=flags.real("delta", 0.0, 1.0, high_open=True), default=None,
                   help="test δ: test the (ε, δ) null P[M(D1) ∈ E] ≤ e^ε P[M(D2) ∈ E] + δ "
                        "(default: the claim's δ; pure claims use StatDP's test)")
    p.add_argument("--n-max", type=flags.count("the number of runs"), default=400_000_000,
                   help="cap on the fresh runs per input of an (ε, δ) test (default 4e8)")
    p.add_argument("--claimed", type=flags.claim, default=None, metavar="E[,D]",
                   help="run the mechanism with this claimed ε instead of its own, or "
                        "with an (ε, δ) claim E,D (1,1e-5)")
    p.add_argument("--test-epsilons", type=flags.epsilon_range, default=None, metavar="A:B:K",
                   help="also compute the p-value curve at K test epsilons from A to B "
                        f"(A < B, K <= {flags.MAX_CURVE_POINTS})")
    p.add_argument("--plot", default=None, metavar="FILE", type=flags.output_file("--plot"),
                   help="save the p-value curve (PNG) to FILE (without --test-epsilons: 11 "
                        "test ε from 0.5 to 1.5 times the test ε; --html draws the same)")
    p.add_argument("--n-select", type=flags.count("the number of samples"), default=100_000,
                   help="samples per input for event selection (default 100000)")
    p.add_argument("--n-final", type=flags.count("the number of samples"), default=500_000,
                   help="fresh samples per input for the final test: a budget, drawn in "
                        "batches of 2000, 4000, ... until one decides (default 500000); "
                        "the classifier attack's test on a vectorized black box looks at "
                        "1, 2, 4 and 16 times it until one decides")
    p.add_argument("--fixed-size", action="store_true",
                   help="StatDP's fixed sizes: n-select samples per input to select the "
                        "event, n-final fresh ones to test it (the classifier attack's "
                        "test too), no early stop")
    p.add_argument("--alpha", type=flags.probability("alpha"), default=0.05,
                   help="significance level of the test (default 0.05)")
    p.add_argument("--seconds", type=flags.seconds, default=None, metavar="S",
                   help="black boxes: a time budget for the classifier attack's witness "
                        "search (default: its fixed sizes); the tests keep their sizes "
                        "(--n-select, --n-final)")
    flags.add_target_options(p)
    flags.add_float_features_option(p)
    add_html_option(p)
    add_common_options(p)
    p.set_defaults(run=run_cli)
    return p


def run_cli(args: argparse.Namespace) -> int:
    """Run ``privet detect``; exit 1 when a violation is found, 0 otherwise."""
    from ..cli_support import load_target
    from ..detect import detect

    mech = load_target(args.target, epsilon=getattr(args, "claimed", None),
                       calling=getattr(args, "calling", None),
                       neighbors=getattr(args, "neighbors", None),
                       domain=getattr(args, "domain", None), length=getattr(args, "length", None))
    test_eps = getattr(args, "test_epsilons", None)
    if (getattr(args, "plot", None) or getattr(args, "html", None)) and test_eps is None \
            and getattr(args, "delta", None) is None and \
            (mech.claim is None or mech.claim.kind == "pure"):
        # a plot and a report show the p-value curve (StatDP Fig. 1): 11 test ε around it
        base = args.epsilon or mech.epsilon or 1.0
        test_eps = [base * (0.5 + 0.1 * i) for i in range(11)]
    as_json = bool(getattr(args, "json", False))
    result = detect(mech, args.epsilon, test_epsilons=test_eps, n_select=args.n_select,
                    n_final=args.n_final, alpha=args.alpha, seed=getattr(args, "seed", None),
                    progress=show_progress(args), executor=getattr(args, "executor", None),
                    sequential=not getattr(args, "fixed_size", False),
                    delta=getattr(args, "delta", None),
                    n_max=getattr(args, "n_max", 400_000_000),
                    float_features=getattr(args, "float_features", "auto"),
                    seconds=getattr(args, "seconds", None) or None)
    if getattr(args, "plot", None) and result.curve is not None:
        plot_curve(result.curve, args.plot)
    emit(args, result, render)
    if getattr(args, "plot", None) and not as_json:
        shared_console().print(f"plot saved to {args.plot}")
    return 1 if result.violation else 0


__all__ = ["add_cli", "counterexample_table", "curve_table", "plot_curve", "render",
           "run_cli"]

