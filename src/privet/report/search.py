"""Rendering and CLI of ``privet search`` (DP-Finder): the certified bound, its witness and
the per-iteration trace as rich tables; ``--json`` prints ``core.results.to_json``."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Group

from .. import cli_support as flags
from ..core.results import Bound
from . import Col, Fit, emit, fmt_claim, fmt_num, fmt_vec, kv, show_progress, table, verdict_text
from .html import add_html_option
from .options import add_common_options

__all__ = ["add_cli", "render", "run_cli", "summary_table", "trace_table"]


def _estimate(v) -> str:
    """The search's own (uncertified) estimate; an event unseen under D2 in the selection
    sample reads as such, not as ε = ∞ (only the exact checks certify ∞)."""
    if v is not None and v == float("inf"):
        return "unbounded on the selection sample (an estimate, not certified)"
    return fmt_num(v)


def _iterations(details: dict) -> str:
    done, planned = details.get("iterations", "?"), details.get("iterations_planned")
    if planned is None:
        return f"{done} iteration(s)"
    return (f"{done} of {planned} iterations (their share of the time budget; the attack "
            f"had the rest)")


def summary_table(b: Bound) -> Fit:
    """The bound, the verdict and the witness (D1, D2, event E, counts or probabilities)."""
    rows: list[list[Any]] = [
        ["mechanism", b.mechanism],
        ["claimed", fmt_claim(b.claim, b.claimed_epsilon)],
        *([["test ε", fmt_num(b.test_epsilon)]] if b.test_epsilon is not None else []),
        ["certified bound", "— (interrupted before anything was certified)"
         if b.details.get("interrupted") and b.witness is None else
         f"ε ≥ {fmt_num(b.value)}" + (" (exact)" if b.exact else
                                      f" with confidence {b.confidence:.10g}")],
        ["verdict", verdict_text(b.describe())],
        ["search", f"{b.details.get('optimizer', b.method)}, {_iterations(b.details)}"],
    ]
    w = b.witness
    if w is not None:
        rows += [["D1", fmt_vec(w.d1)], ["D2", fmt_vec(w.d2)], ["event E", w.event],
                 ["search estimate of ε", _estimate(b.details.get("search_estimate"))],
                 ["confirmation", str(w.details.get("method", ""))]]
        if w.probabilities is not None:
            rows.append(["P[M(D1) ∈ E], P[M(D2) ∈ E]",
                         ", ".join(fmt_num(p) for p in w.probabilities)])
        if w.counts is not None:
            rows.append(["counts in E (fresh samples)",
                         f"{w.counts[0]:,} vs {w.counts[1]:,} of {w.n[0]:,} each"])
    base = b.details.get("baseline")
    if isinstance(base, Bound):
        rows.append(["random-search baseline", f"ε ≥ {fmt_num(base.value)} (same iterations)"])
    if b.seconds is not None:
        rows.append(["time", f"{b.seconds:.1f} s"])
    sq = b.details.get("squeezed")
    if sq:
        rows.append(["slow black box", squeeze_text(sq, b.details.get("time_budget"))])
    rows += [["note", note] for note in b.details.get("notes") or ()]
    return kv(f"privet search: {b.mechanism}", rows)


def squeeze_text(sq: dict, budget: float | None) -> str:
    """What a squeezed search (:func:`privet.attacks.witness._squeeze`) measured and did."""
    per_call = 1e3 * float(sq["seconds_per_pair"]) / 2
    limit = f"the {budget:g} s budget" if budget else "the time budget"
    return (f"about {per_call:.2g} ms a call: {limit} kept {sq['pairs']} of {sq['of']} "
            f"pairs, screened on {sq['n_train']:,} samples each, and sized the fresh "
            "sample to the time left; give more seconds for a stronger bound")


ATTACK_SHOWN = 5  # screened pairs shown besides the finalists


def attack_table(trace: list[dict]) -> Fit:
    """The classifier attack's search: the best screened pairs (held-out estimate of the
    projected bound) and the finalists (value on their selection sample)."""
    screened = sorted((r for r in trace if r.get("stage") not in ("select", "squeeze",
                                                                   "sweep")),
                      key=lambda r: -(r.get("value") if r.get("value") is not None
                                      else float("-inf")))
    shown = screened[:ATTACK_SHOWN] + [r for r in trace if r.get("stage") == "select"]
    rows = [[str(r.get("stage", "")), str(r.get("pattern", "")), fmt_vec(r.get("d1", ())),
             fmt_vec(r.get("d2", ())), fmt_num(r.get("value")), str(r.get("model", "")),
             f"{r['n']:,}" if r.get("n") else "", f"{r.get('seconds', 0):.1f}"]
            for r in shown]
    best = min(ATTACK_SHOWN, len(screened))
    swept = next((r for r in trace if r.get("stage") == "sweep"), None)
    sweep = "" if swept is None else (f"; {swept.get('probed', 0)} one-entry pairs probed, "
                                      "the most separating screened")
    title = (f"attack search ({len(screened)} pairs screened, best {best} shown{sweep}; "
             "finalists on fresh samples)")
    return table(title, ["stage", "pattern", "x", "x′", "projected ε", "model", "n", "s"],
                 rows)


def trace_table(b: Bound) -> Fit:
    """One row per DP-Finder iteration: start estimate, surrogate, estimate after search."""
    if any("stage" in r for r in b.details.get("trace", [])):
        return attack_table(b.details["trace"])
    rows = []
    for i, r in enumerate(b.details.get("trace", []), 1):
        rows.append([str(i), str(r.get("status", "")), fmt_num(r.get("start_estimate")),
                     fmt_num(r.get("surrogate")), fmt_num(r.get("estimate")),
                     f"{r.get('n', 0):,}", str(r.get("evaluations", "")),
                     f"{r.get('seconds', 0):.2f}", str(r.get("event", ""))])
    return table("iterations (ε estimated at the start, on the smooth surrogate, after the "
                 "search)", [Col("#", "right"), Col("status", floor=10),
                             Col("ε start", "right"), Col("ε smooth", "right"),
                             Col("ε after", "right"), Col("n", "right"),
                             Col("evals", "right"), Col("s", "right"),
                             Col("event E", spill=True)], rows)


def render(b: Bound) -> Group:
    return Group(summary_table(b), trace_table(b))


def add_cli(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``privet search TARGET [--iterations N] [--confidence C] [--json] [--seed S]``."""
    p = subparsers.add_parser(
        "search", help="search for the largest violation and certify it (DP-Finder)",
        description="Certified lower bounds on epsilon (DP-Finder, Bichsel et al. CCS 2018): "
                    "correlated sampling, a smooth surrogate optimized with SLSQP, and a "
                    "fresh-sample (or exact) confirmation of the best witness.")
    p.add_argument("target", help="library name (dpfinder.at1) or MODULE:NAME / file.py:NAME")
    p.add_argument("--iterations", "-N", type=flags.count("the number of iterations", 1,
                                                          100_000), default=10,
                   help="DP-Finder iterations (random starts), default 10")
    p.add_argument("--confidence", type=flags.probability("the confidence"), default=0.9,
                   help="confidence of the certified bound, default 0.9")
    p.add_argument("--method", choices=("auto", "slsqp", "local"), default="auto",
                   help="optimizer: SLSQP on the Relaxed surrogate, derivative-free, or auto")
    p.add_argument("--n-confirm", type=flags.count("the number of samples"), default=None,
                   help="fresh samples for the confirmation (default: chosen from p)")
    p.add_argument("--epsilon", type=flags.epsilon, default=None,
                   help="test ε: the certified bound is compared with it for the verdict and "
                        "the exit code (default: the claimed ε; an (ε, δ) or zCDP claim: the "
                        "ε at which δ is certified)")
    p.add_argument("--claimed", type=flags.claim, default=None, metavar="E[,D]",
                   help="run the mechanism with this claimed ε instead of its own, or "
                        "with an (ε, δ) claim E,D (1,1e-5)")
    p.add_argument("--delta", type=flags.real("delta", 0.0, 1.0, low_open=True,
                                              high_open=True), default=None,
                   help="certify ε at this δ, and the whole lower curve ε(δ) (default: the "
                        "claim's δ; zCDP claims: 1e-5)")
    p.add_argument("--n-max", type=flags.count("the number of runs"), default=400_000_000,
                   help="cap on the fresh runs per input of an (ε, δ) search (default 4e8)")
    p.add_argument("--plot", default=None, metavar="FILE", type=flags.output_file("--plot"),
                   help="save the certified curve ε(δ) against the claim (PNG)")
    p.add_argument("--baseline", action="store_true",
                   help="also run the random-search baseline with the same budget")
    p.add_argument("--n-cap", type=flags.count("the number of samples"), default=None,
                   help="samples per input of each candidate pair (black boxes: the "
                        "attack's screening sample; white boxes: the estimate's cap)")
    p.add_argument("--seconds", type=flags.seconds, default=argparse.SUPPRESS, metavar="S",
                   help="black boxes: the wall time the search and its certificate aim at "
                        "(default 55; 0: no limit, the full sample sizes, so that --seed "
                        "replays the same figures on any machine); white boxes: given, it is "
                        "spent as a black box's (the attack runs on few outputs too, and "
                        "the fresh paired sample takes the time left)")
    p.add_argument("--couple", choices=("auto", "on", "off"), default="auto",
                   help="black boxes: train and select on runs of both inputs that share their "
                        "seeds (common random numbers; auto, the default: when the outputs "
                        "follow the seed privet gives, checked on a probe; a per-sample black "
                        "box is then certified on such pairs too, a vectorized one on "
                        "independent runs)")
    flags.add_target_options(p)
    flags.add_float_features_option(p)
    add_html_option(p)
    add_common_options(p)
    p.set_defaults(run=run_cli)
    return p


def run_cli(args: argparse.Namespace) -> int:
    """Run ``privet search``; exit 1 when the certified bound exceeds the test ε (default:
    the claimed ε)."""
    from ..cli_support import load_target
    from ..search import search

    mech = load_target(args.target, epsilon=getattr(args, "claimed", None),
                       calling=getattr(args, "calling", None),
                       neighbors=getattr(args, "neighbors", None),
                       domain=getattr(args, "domain", None), length=getattr(args, "length", None))
    extra = {"n_cap": args.n_cap} if getattr(args, "n_cap", None) else {}
    extra["float_features"] = getattr(args, "float_features", "auto")
    if hasattr(args, "seconds"):  # absent unless given: search's own default applies
        extra["seconds"] = args.seconds
    extra["couple"] = {"on": True, "off": False}.get(getattr(args, "couple", "auto"), "auto")
    claim = mech.claim
    if getattr(args, "delta", None) is not None or (claim is not None and claim.kind != "pure"):
        from .approx import plot_profile, render_certified

        result = search(mech, getattr(args, "epsilon", None),
                        confidence=getattr(args, "confidence", 0.9),
                        seed=getattr(args, "seed", None), progress=show_progress(args),
                        executor=getattr(args, "executor", None),
                        delta=getattr(args, "delta", None),
                        n_max=getattr(args, "n_max", 400_000_000),
                        **({"seconds": args.seconds} if hasattr(args, "seconds") else {}),
                        float_features=extra["float_features"])
        if getattr(args, "plot", None):
            plot_profile(result, args.plot)
        emit(args, result, render_certified)
        return 1 if result.violates else 0
    result = search(mech, getattr(args, "epsilon", None),
                    iterations=getattr(args, "iterations", 10),
                    confidence=getattr(args, "confidence", 0.9),
                    method=getattr(args, "method", "auto"),
                    n_confirm=getattr(args, "n_confirm", None),
                    seed=getattr(args, "seed", None), progress=show_progress(args),
                    baseline=bool(getattr(args, "baseline", False)),
                    executor=getattr(args, "executor", None), **extra)
    emit(args, result, render)
    return 1 if result.violates else 0
