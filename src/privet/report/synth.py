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
from rich.text import Text

from .. import cli_support as flags
from ..core.results import SynthResult
from . import Col, Fit, emit, fmt_num, fmt_vec, show_progress, table, verdict_text
from .html import add_html_option
from .options import add_common_options


def _t(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return f"{seconds:.1f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def completions_table(result: SynthResult, limit: int | None = None) -> Fit:
    """Rank, expressions, verdict and the ranking evidence of each checked completion."""
    textbook = {tuple(x) for x in result.textbook}
    shown = result.completions[:limit] if limit else result.completions
    rows, styles = [], []
    for c in shown:
        mark = " ★" if tuple(c.exprs) in textbook else ""
        rows.append([str(c.rank) if c.rank else "✗", str(c.preliminary_rank),
                     *[str(e) for e in c.exprs[:-1]], f"{c.exprs[-1]}{mark}",
                     verdict_text(c.verdict), str(c.violations), f"{c.tightness:.2f}",
                     fmt_num(c.magnitude, 3)])
        styles.append(None if c.passed else "dim")
    cols = [Col("rank", "right"), Col("prelim.", "right"), *[Col(str(h)) for h in result.holes],
            Col("verdict", floor=20), Col("est. violations", "right"),
            Col("loss/ε", "right"), Col("noise Σ", "right")]
    starred = any(tuple(c.exprs) in textbook for c in shown)  # a legend for marks shown
    notes = [("★ the textbook answer. " if starred else "")
             + "est. violations: examples whose estimated privacy loss exceeded e^ε while "
             "ranking; the verdict is the final check on fresh samples."]
    return table(f"completions of {result.sketch} (target ε = {fmt_num(result.epsilon)})",
                 cols, rows, row_styles=styles, notes=notes)


def times_table(result: SynthResult) -> Fit:
    keys = ("init", "opti", "enum", "verify", "total")
    return table("phases", [Col(k, "right") for k in keys],
                 [[_t(result.times.get(k)) for k in keys]])


def region_table(result: SynthResult) -> Fit:
    r = result.region
    rows = [["(" + ", ".join(s["support"]) + ")",
             "(" + ", ".join("⊥" if v == 0 else fmt_num(v, 3) for v in s["best"]) + ")",
             fmt_num(s["max_loss"], 3), fmt_num(s["objective"], 3)]
            for s in r.get("supports", [])]
    boundary = r.get("boundary") or []
    notes = [f"{len(boundary)} boundary points (max L = e^ε): " + ", ".join(
        "(" + ", ".join("⊥" if v == 0 else fmt_num(v, 3) for v in p) + ")"
        for p in boundary)] if boundary else []
    return table(f"noise region at γ (target loss e^ε = {fmt_num(r.get('target_loss', 0), 3)}, "
                 f"{r.get('evaluations', 0)} evaluations)",
                 ["support", "best c", Col("max L", "right"), Col("objective", "right")], rows,
                 notes=notes)


def rejected_table(result: SynthResult) -> Fit:
    rows = []
    for c in result.completions:
        if c.passed:
            continue
        cx = c.counterexample
        where = (f"D1 = {fmt_vec(cx.d1, short=True)}, D2 = {fmt_vec(cx.d2, short=True)}, "
                 f"E: {cx.event}" if cx else "—")
        rows.append([c.describe(), verdict_text(c.verdict), where])
    return table("best candidates and the counterexamples that rejected them",
                 ["candidate", Col("verdict", floor=20), Col("counterexample", floor=20)], rows)


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
    if result.checked_at():
        parts.append(Text(f"tested {result.checked_at()} (the verdicts hold there)",
                          style="dim"))
    if result.textbook:
        tb = ", ".join("(" + ", ".join(t) + ")" for t in result.textbook)
        if result.textbook_rank is not None:
            where = f"rank {result.textbook_rank} (preliminary " \
                    f"{result.textbook_preliminary_rank})"
        else:
            where = "not among the passing completions"
        parts.append(Text(f"textbook {tb}: {where}"))
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
                    "MODULE:NAME / path/to/file.py:NAME of a sketch (from privet.synth "
                    "import sketch).")
    p.add_argument("target", help="kolahal.<name>, textbook.<name>, MODULE:SKETCH or "
                                  "path/file.py:SKETCH")
    p.add_argument("--epsilon", type=flags.epsilon, default=None,
                   help="test ε: the ε the completed mechanism must satisfy (default: the "
                        "ε the sketch declares)")
    p.add_argument("--top", type=flags.count("the number of candidates", 1, 10_000),
                   default=None,
                   help="verify at least this many candidates (default 5 x #holes; the "
                        "top tightness/magnitude band may add more)")
    p.add_argument("--tester", choices=("auto", "internal", "detect"), default="auto",
                   help="how candidates are tested: privet's small internal tester, "
                        "privet.detect, or auto (internal while searching, detect for the "
                        "final check; default)")
    p.add_argument("--baseline", action="store_true",
                   help="also run the noopt baseline (rank the whole grammar)")
    add_html_option(p)
    add_common_options(p)
    p.set_defaults(run=run_cli)
    return p


def run_cli(args: argparse.Namespace) -> int:
    """Run ``privet synth``; exit 0 when a completion was found, 1 otherwise."""
    from ..synth import load_sketch, synth

    sk = load_sketch(args.target)
    seed = getattr(args, "seed", None)
    result = synth(sk, args.epsilon, top=args.top, tester=args.tester,
                   seed=0 if seed is None else seed, baseline=args.baseline,
                   progress=show_progress(args),
                   executor=getattr(args, "executor", None))
    emit(args, result, render)
    return 0 if result.status == "found" else 1
