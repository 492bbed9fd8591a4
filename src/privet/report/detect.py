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
from rich.table import Table
from rich.text import Text

from .. import cli_support as flags
from ..core.results import Counterexample, DetectResult, PValueCurve
from . import console as shared_console
from . import emit
from .html import add_html_option


def _vec(x: Sequence) -> str:
    vals = [f"{float(v):g}" for v in x]
    return "[" + ", ".join(vals) + "]"


def _p(p: float | None) -> str:
    if p is None:
        return "-"
    return "0" if p == 0 else f"{p:.3g}"


def counterexample_table(cx: Counterexample, title: str = "counterexample") -> Table:
    """D1, D2, arguments, event, counts on both sides, p-value, seed."""
    t = Table(title=title, show_header=False, title_justify="left")
    t.add_column("field", style="bold")
    t.add_column("value")
    t.add_row("D1", _vec(cx.d1))
    t.add_row("D2", _vec(cx.d2))
    if cx.args:
        t.add_row("args", ", ".join(f"{k}={v}" for k, v in cx.args.items() if k != "epsilon"))
    t.add_row("event E", cx.event)
    if cx.counts and cx.n:
        t.add_row("M(D1) in E", f"{cx.counts[0]:,} / {cx.n[0]:,}")
        t.add_row("M(D2) in E", f"{cx.counts[1]:,} / {cx.n[1]:,}")
    d = (cx.details or {}).get("test_delta")
    if cx.test_epsilon is not None:
        t.add_row("claim tested", f"P(M(D1) in E) <= e^{cx.test_epsilon:g} P(M(D2) in E)"
                  + (f" + {d:.3g}" if d else ""))
    if (cx.details or {}).get("null"):
        t.add_row("null", f"{cx.details['null']}; {cx.details.get('test', '')}")
    t.add_row("p-value", _p(cx.p_value))
    pattern = cx.details.get("pattern") if cx.details else None
    if pattern:
        t.add_row("input pattern", str(pattern))
    if cx.seed is not None:
        t.add_row("seed", str(cx.seed))
    return t


def curve_table(curve: PValueCurve) -> Table:
    t = Table(title=f"p-value curve of {curve.mechanism} (claimed eps = "
              f"{_g(curve.claimed_epsilon)})", title_justify="left")
    t.add_column("test eps", justify="right")
    t.add_column("p-value", justify="right")
    t.add_column("event")
    t.add_column("D1 / D2")
    cxs = list(curve.counterexamples) or [None] * len(curve.test_epsilons)
    for e, p, cx in zip(curve.test_epsilons, curve.p_values, cxs):
        style = "red" if p < curve.alpha else ""
        ev = cx.event if cx is not None else ""
        dd = f"{_vec(cx.d1)} / {_vec(cx.d2)}" if cx is not None else ""
        t.add_row(f"{e:.3g}", Text(_p(p), style=style), ev, dd)
    return t


def _g(x: float | None) -> str:
    return "-" if x is None else f"{x:g}"


def render(result: DetectResult) -> Group:
    """A rich renderable of a detect result."""
    parts: list[Any] = []
    color = "red" if result.violation else "green"
    head = Text()
    head.append(f"{result.mechanism}: ", style="bold")
    head.append(result.verdict, style=f"bold {color}")
    tested = f"test eps = {result.test_epsilon:g}" + (
        f", test delta = {result.test_delta:.3g}" if result.test_delta else "")
    claimed = result.claim or f"eps = {_g(result.claimed_epsilon)}"
    head.append(f"  ({tested}, claimed {claimed}, arguments: {result.arg_path}, "
                f"{result.seconds:.2f} s, seed {result.seed})")
    parts.append(head)
    selected = result.counterexample or result.details.get("selected")
    if selected is not None:
        parts.append(counterexample_table(
            selected, "counterexample" if result.counterexample else
            "most suspicious event (not significant)"))
    if len(result.candidates) > 1:
        t = Table(title="candidates (best event of the best input pairs, fresh samples)",
                  title_justify="left")
        for col in ("D1", "D2", "event", "counts", "p-value"):
            t.add_column(col)
        for c in result.candidates:
            counts = f"{c.counts[0]:,} vs {c.counts[1]:,}" if c.counts else ""
            t.add_row(_vec(c.d1), _vec(c.d2), c.event, counts, _p(c.p_value))
        parts.append(t)
    if result.curve is not None:
        parts.append(curve_table(result.curve))
        lb = result.curve.lower_bound
        parts.append(Text(
            f"statistical lower bound: epsilon > {lb:g} (largest test eps rejected at "
            f"alpha = {result.curve.alpha:g})" if lb is not None else
            "no test epsilon rejected: no lower bound on epsilon"))
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
        label = labels[i] if labels else f"ε0 = {_g(c.claimed_epsilon)}"
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
                   help="test epsilon (default: the mechanism's claimed epsilon)")
    p.add_argument("--delta", type=flags.real("delta", 0.0, 1.0, high_open=True), default=None,
                   help="test delta: test the (ε, δ) null P[M(D1)∈E] <= e^ε P[M(D2)∈E] + δ "
                        "(default: the claim's δ; pure claims use StatDP's test)")
    p.add_argument("--n-max", type=flags.count("the number of runs"), default=400_000_000,
                   help="cap on the fresh runs per input of an (ε, δ) test (default 4e8)")
    p.add_argument("--claimed", type=flags.epsilon, default=None,
                   help="run the mechanism with this claimed epsilon instead of its own")
    p.add_argument("--test-epsilons", type=flags.epsilon_range, default=None, metavar="A:B:K",
                   help="also compute the p-value curve at K test epsilons from A to B "
                        f"(A < B, K <= {flags.MAX_CURVE_POINTS})")
    p.add_argument("--plot", default=None, metavar="FILE", type=flags.output_file("--plot"),
                   help="save the p-value curve (PNG) to FILE (needs --test-epsilons; "
                        "default 0.5..1.5 times the claimed epsilon)")
    p.add_argument("--n-select", type=flags.count("the number of samples"), default=100_000,
                   help="samples per input for event selection (default 100000)")
    p.add_argument("--n-final", type=flags.count("the number of samples"), default=500_000,
                   help="fresh samples per input for the final test (default 500000)")
    p.add_argument("--alpha", type=flags.probability("alpha"), default=0.05,
                   help="significance level")
    flags.add_target_options(p)
    if not any(a.dest == "json" for a in p._actions):
        p.add_argument("--json", action="store_true", help="print the result as JSON")
    if not any(a.dest == "seed" for a in p._actions):
        p.add_argument("--seed", type=flags.seed, default=None, help="seed (replays a run)")
    add_html_option(p)
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
    if getattr(args, "plot", None) and test_eps is None and getattr(args, "delta", None) \
            is None and (mech.claim is None or mech.claim.kind == "pure"):
        base = args.epsilon or mech.epsilon or 1.0
        test_eps = [base * (0.5 + 0.1 * i) for i in range(11)]
    as_json = bool(getattr(args, "json", False))
    result = detect(mech, args.epsilon, test_epsilons=test_eps, n_select=args.n_select,
                    n_final=args.n_final, alpha=args.alpha, seed=getattr(args, "seed", None),
                    progress=not as_json, executor=getattr(args, "executor", None),
                    delta=getattr(args, "delta", None),
                    n_max=getattr(args, "n_max", 400_000_000))
    if getattr(args, "plot", None) and result.curve is not None:
        plot_curve(result.curve, args.plot)
    emit(args, result, render)
    if getattr(args, "plot", None) and not as_json:
        shared_console().print(f"plot saved to {args.plot}")
    return 1 if result.violation else 0


__all__ = ["add_cli", "counterexample_table", "curve_table", "plot_curve", "render",
           "run_cli"]

