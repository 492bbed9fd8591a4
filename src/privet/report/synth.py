"""Rendering of ``privet.synth`` results and the ``privet synth`` subcommand.

``render(result)`` returns a rich renderable: the ranked completions with their evidence,
the phase times, the noise region and (when run) the noopt baseline; on "no completion
found" it lists the best candidates with the counterexamples that rejected them.
``add_cli(subparsers)`` / ``run_cli(args)`` wire ``privet synth MODULE:SKETCH``.
"""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from .. import cli_support as flags
from ..core.results import SynthResult
from . import emit
from .html import add_html_option


def _t(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return f"{seconds:.1f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def completions_table(result: SynthResult, limit: int | None = None) -> Table:
    """Rank, expressions, verdict and the ranking evidence of each checked completion."""
    t = Table(title=f"completions of {result.sketch} (target ε = {result.epsilon:g})",
              title_justify="left")
    t.add_column("rank", justify="right")
    t.add_column("prelim.", justify="right")
    for h in result.holes:
        t.add_column(str(h))
    t.add_column("verdict")
    t.add_column("violated ex.", justify="right")
    t.add_column("loss/ε", justify="right")
    t.add_column("noise Σ", justify="right")
    textbook = {tuple(x) for x in result.textbook}
    rows = result.completions[:limit] if limit else result.completions
    for c in rows:
        mark = " ★" if tuple(c.exprs) in textbook else ""
        style = None if c.passed else "dim"
        t.add_row(str(c.rank) if c.rank else "✗", str(c.preliminary_rank),
                  *[str(e) for e in c.exprs[:-1]], f"{c.exprs[-1]}{mark}", c.verdict,
                  str(c.violations), f"{c.tightness:.2f}", f"{c.magnitude:.3g}", style=style)
    return t


def times_table(result: SynthResult) -> Table:
    t = Table(title="phases", title_justify="left")
    for col in ("init", "opti", "enum", "verify", "total"):
        t.add_column(col, justify="right")
    t.add_row(*[_t(result.times.get(k)) for k in ("init", "opti", "enum", "verify", "total")])
    return t


def region_table(result: SynthResult) -> Table:
    r = result.region
    t = Table(title=f"noise region at γ (target loss e^ε = {r.get('target_loss', 0):.3g}, "
              f"{r.get('evaluations', 0)} evaluations)", title_justify="left")
    t.add_column("support")
    t.add_column("best c")
    t.add_column("max L", justify="right")
    t.add_column("objective", justify="right")
    for s in r.get("supports", []):
        t.add_row("(" + ", ".join(s["support"]) + ")",
                  "(" + ", ".join("⊥" if v == 0 else f"{v:.3g}" for v in s["best"]) + ")",
                  f"{s['max_loss']:.3g}", f"{s['objective']:.3g}")
    boundary = r.get("boundary") or []
    if boundary:
        t.caption = (f"{len(boundary)} boundary points (max L = e^ε): " + ", ".join(
            "(" + ", ".join("⊥" if v == 0 else f"{v:.3g}" for v in p) + ")"
            for p in boundary))
    return t


def rejected_table(result: SynthResult) -> Table:
    t = Table(title="best candidates and the counterexamples that rejected them",
              title_justify="left")
    t.add_column("candidate")
    t.add_column("verdict")
    t.add_column("counterexample")
    for c in result.completions:
        if c.passed:
            continue
        cx = c.counterexample
        where = (f"d1={list(cx.d1)}, d2={list(cx.d2)}, E: {cx.event}" if cx else "-")
        t.add_row(c.describe(), c.verdict, where)
    return t


def render(result: SynthResult) -> Any:
    """A rich renderable for a :class:`SynthResult`."""
    parts: list[Any] = []
    best = result.best
    if best is not None:
        head = Text(f"{result.sketch}: best completion {best.describe()} — {best.verdict}",
                    style="bold green")
    else:
        cut = " before Ctrl-C stopped it" if result.details.get("interrupted") else ""
        head = Text(f"{result.sketch}: no completion found in {result.grammar}{cut}",
                    style="bold red")
    parts.append(head)
    if result.textbook:
        tb = ", ".join("(" + ", ".join(t) + ")" for t in result.textbook)
        rk = result.textbook_rank if result.textbook_rank is not None else "not found"
        parts.append(Text(f"textbook {tb}: rank {rk} (preliminary "
                          f"{result.textbook_preliminary_rank})"))
    verified = result.details.get("verified")
    parts.append(Text(f"{result.n_candidates} of {result.grammar_size} grammar vectors in the "
                      f"region's neighborhood; {len(result.examples)} examples"
                      + (f"; {verified} candidates verified (top band: "
                         f"{result.details.get('band')})" if verified is not None else "")))
    parts.append(completions_table(result))
    if best is None:
        parts.append(rejected_table(result))
    parts.append(times_table(result))
    parts.append(region_table(result))
    if result.baseline:
        b = result.baseline
        status = "timed out" if b.get("timed_out") else f"textbook rank {b.get('textbook_rank')}"
        parts.append(Text(f"noopt baseline: {_t(b.get('total'))} total, ranked "
                          f"{b.get('ranked')} of {b.get('grammar_size')} vectors, {status}"))
    return Group(*parts)


def add_cli(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``privet synth MODULE:SKETCH`` to an argparse subparsers object."""
    p = subparsers.add_parser(
        "synth", help="synthesize the noise of a mechanism sketch (KOLAHAL)",
        description="Fill the holes of a sketch with noise expressions and rank the "
                    "completions. TARGET is a library sketch (e.g. kolahal.svt) or "
                    "MODULE:NAME / path/to/file.py:NAME of a @privet.synth.sketch.")
    p.add_argument("target", help="kolahal.<name>, textbook.<name>, MODULE:SKETCH or "
                                  "path/file.py:SKETCH")
    p.add_argument("--epsilon", type=flags.epsilon, default=None,
                   help="target ε (default: γ(ε))")
    p.add_argument("--top", type=flags.count("the number of candidates", 1, 10_000),
                   default=None,
                   help="verify at least this many candidates (default 5 x #holes; the "
                        "top tightness/magnitude band may add more)")
    p.add_argument("--tester", choices=("auto", "internal", "detect"), default="auto")
    p.add_argument("--baseline", action="store_true",
                   help="also run the noopt baseline (rank the whole grammar)")
    if not _has(p, "--json"):
        p.add_argument("--json", action="store_true", help="print the result as JSON")
    if not _has(p, "--seed"):
        p.add_argument("--seed", type=flags.seed, default=0)
    p.add_argument("--no-progress", action="store_true")
    add_html_option(p)
    p.set_defaults(run=run_cli)
    return p


def _has(parser: argparse.ArgumentParser, flag: str) -> bool:
    return any(flag in a.option_strings for a in parser._actions)


def run_cli(args: argparse.Namespace) -> int:
    """Run ``privet synth``; exit 0 when a completion was found, 1 otherwise."""
    from ..synth import load_sketch, synth

    sk = load_sketch(args.target)
    seed = getattr(args, "seed", None)
    result = synth(sk, args.epsilon, top=args.top, tester=args.tester,
                   seed=0 if seed is None else seed, baseline=args.baseline,
                   progress=not getattr(args, "no_progress", False) and not args.json,
                   executor=getattr(args, "executor", None))
    emit(args, result, render)
    return 0 if result.status == "found" else 1
