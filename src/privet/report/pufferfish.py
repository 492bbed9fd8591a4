"""Rendering and CLI for ``privet pufferfish`` (FAIER: Pufferfish privacy of HMMs)."""

from __future__ import annotations

import argparse
from fractions import Fraction
from typing import Any

from .. import cli_support as flags
from ..core.results import Bound, PufferfishVerdict
from . import emit
from .html import add_html_option


def _fmt(v: Any) -> str:
    if isinstance(v, Fraction):
        return f"{v} (~{float(v):.6g})"
    return str(v)


def render(v: PufferfishVerdict) -> Any:
    """A rich table for a verdict."""
    from rich.table import Table

    colour = {"verified": "green", "violated": "red"}.get(v.status, "yellow")
    t = Table(title=f"pufferfish: {v.scenario}", show_header=False)
    t.add_column("field", style="bold")
    t.add_column("value")
    t.add_row("verdict", f"[{colour}]{v.describe()}[/{colour}]")
    t.add_row("epsilon", f"{v.epsilon_text} (= {v.epsilon:.6g})")
    t.add_row("lengths checked", f"1..{v.k}" if v.status != "unknown"
              else f"verified up to {v.details.get('verified_up_to', 0)}, unknown at {v.k}")
    if v.status == "violated":
        t.add_row("counterexample", " ".join(map(str, v.counterexample or ())))
        t.add_row("secret pair", f"{v.pair[0]}  vs  {v.pair[1]}")
        if v.parameters:
            t.add_row("parameters", ", ".join(f"{k} = {_fmt(x)}" for k, x in
                                              v.parameters.items()))
        if v.probabilities:
            t.add_row("probabilities", f"{_fmt(v.probabilities[0])}  vs  "
                                       f"{_fmt(v.probabilities[1])}")
        t.add_row("ratio", _fmt(v.ratio))
    if "max_ratio" in v.details and v.details["max_ratio"] is not None:
        t.add_row("largest ratio at this length", _fmt(v.details["max_ratio"]))
    sym = v.details.get("symmetry")
    if sym:
        t.add_row("symmetry", f"{sym['pairs']:,} pairs checked as {sym['orbits']:,} orbit "
                              f"representatives ({sym['generators']} verified generator(s))")
    t.add_row("solver", v.solver)
    t.add_row("time", f"{v.seconds:.2f} s" if v.seconds is not None else "-")
    return t


def render_bound(b: Bound) -> Any:
    from rich.table import Table

    t = Table(title=f"pufferfish bound: {b.mechanism}", show_header=False)
    t.add_column("field", style="bold")
    t.add_column("value")
    d = b.details
    t.add_row("lower bound", f"epsilon >= {b.value:g} (violated, exact); "
                             f"{d.get('upper'):g}-DP verified at length {d.get('k')}")
    t.add_row("bracket", f"{d.get('bracket')} from {d.get('bracket_source')}")
    t.add_row("checks", str(len(d.get("checks", []))))
    t.add_row("time", f"{b.seconds:.2f} s")
    return t


def add_cli(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``privet pufferfish SPEC [--epsilon] [--k-max] [--timeout] [--json]``."""
    p = subparsers.add_parser(
        "pufferfish", help="verify Pufferfish/DP of an HMM scenario (FAIER)",
        description="Check epsilon-Pufferfish privacy of a scenario: a YAML/JSON spec, an "
                    "example (ex2..ex6, noisy_max, above_threshold) or, with --bound, a "
                    "library mechanism. Verdicts: verified up to length k, violated (with "
                    "a sequence and parameter values), or unknown.")
    p.add_argument("spec", help="spec file, example name, or a discrete mechanism (library "
                   "name or MODULE:NAME), checked for DP through its HMM")
    p.add_argument("--length", type=flags.count("the input length", 1, 10_000), default=None,
                   help="input length of a mechanism whose domain leaves it open")
    p.add_argument("--epsilon", type=flags.epsilon_text, default=None,
                   help="budget, e.g. 0.7 or 'ln(2)'")
    p.add_argument("--k-max", type=flags.count("the sequence length", 1, 10**6), default=None,
                   help="longest observation sequence (at most 200)")
    p.add_argument("--timeout", type=flags.real("the timeout", 0, 1e6, low_open=True),
                   default=60.0, help="solver seconds per length")
    p.add_argument("--method", choices=("auto", "exact", "smt"), default="auto")
    p.add_argument("--no-symmetry", action="store_true",
                   help="SMT path: check every pair, not one per orbit of the model's "
                        "verified symmetries")
    p.add_argument("--bound", action="store_true",
                   help="Algorithm 4: lower bound on epsilon by bracket + binary search")
    p.add_argument("--precision", type=flags.real("the precision", 0, 1e3, low_open=True),
                   default=0.001)
    p.add_argument("--allow-code", action="store_true",
                   help="let a spec's 'mechanism: FILE.py:NAME' (or MODULE:NAME) import and run "
                        "that code; without it a spec is data and never runs code")
    if "--json" not in p._option_string_actions:
        p.add_argument("--json", action="store_true", help="print JSON")
    add_html_option(p)
    p.set_defaults(run=run_cli)
    return p


def _resolve(spec: str) -> Any:
    """An example name or a spec file stays a string; anything else names a mechanism
    (library name, MODULE:NAME or FILE.py:NAME), checked for DP through its HMM."""
    import os

    from ..pufferfish.scenario import EXAMPLES

    if spec in EXAMPLES or os.path.lexists(spec) or spec.endswith((".yaml", ".yml", ".json")):
        return spec
    from ..cli_support import load_mechanism

    return load_mechanism(spec)


def run_cli(args: argparse.Namespace) -> int:
    """Run the subcommand; exit 0 verified/bound, 1 violated, 3 unknown."""

    from .. import pufferfish as _pf  # noqa: F401  (registers the callable module)
    from ..pufferfish import as_scenario, pufferfish

    spec = getattr(args, "spec", None) or getattr(args, "target", None)
    target: Any = _resolve(spec)
    inputs = None
    if not isinstance(target, str) and getattr(args, "length", None):
        inputs = [tuple(r) for r in target.domain.inputs(args.length, cap=20_000).tolist()]
    allow_code = bool(getattr(args, "allow_code", False))
    if args.bound:
        from ..pufferfish.bound import lower_bound

        b = lower_bound(target if not isinstance(target, str) else
                        as_scenario(target, allow_code=allow_code),
                        args.precision, k=args.k_max, inputs=inputs,
                        method="smt" if args.method == "smt" else "exact")
        emit(args, b, render_bound)
        return 0
    v = pufferfish(target, args.epsilon, inputs=inputs, k_max=args.k_max, timeout=args.timeout,
                   method=args.method, progress=not getattr(args, "json", False),
                   symmetry="none" if getattr(args, "no_symmetry", False) else "auto",
                   allow_code=allow_code)
    emit(args, v, render)
    return {"verified": 0, "violated": 1}.get(v.status, 3)
