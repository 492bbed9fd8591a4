"""Rendering and CLI for ``privet pufferfish`` (FAIER: Pufferfish privacy of HMMs)."""

from __future__ import annotations

import argparse
from fractions import Fraction
from typing import Any

from .. import cli_support as flags
from ..core.results import Bound, PufferfishVerdict
from ..core.text import fmt_value
from . import Fit, emit, fmt_num, kv, show_progress, verdict_text
from .html import add_html_option
from .options import add_common_options


def _fmt(v: Any) -> str:
    """An exact probability or ratio: ``2/3 (≈ 0.6667)``; integers and floats as numbers."""
    if isinstance(v, Fraction) and v.denominator != 1:
        return f"{fmt_num(v)} (≈ {fmt_num(float(v))})"
    return fmt_num(v, 6)


def render(v: PufferfishVerdict) -> Fit:
    """A field/value table for a verdict."""
    rows: list[list[Any]] = [["verdict", verdict_text(v.describe())],
                             ["ε", v.epsilon_text if v.epsilon_text == fmt_num(v.epsilon, 6)
                              else f"{v.epsilon_text} (= {fmt_num(v.epsilon, 6)})"],
                             ["lengths checked", f"1 to {v.k}" if v.status != "unknown" else
                              f"verified up to {v.details.get('verified_up_to', 0)}, "
                              f"unknown at {v.k}"]]
    if v.status == "violated":
        rows.append(["observation sequence",
                     " ".join(fmt_value(o) for o in v.counterexample or ())])
        rows.append(["secret pair", " vs ".join(str(s) for s in v.pair or ())])
        if v.parameters:
            rows.append(["parameters", ", ".join(f"{k} = {_fmt(x)}" for k, x in
                                                 v.parameters.items())])
        if v.probabilities:
            rows.append(["probabilities", f"{_fmt(v.probabilities[0])} vs "
                                          f"{_fmt(v.probabilities[1])}"])
        rows.append(["ratio", _fmt(v.ratio)])
    if v.details.get("max_ratio") is not None:
        rows.append(["largest ratio at this length", _fmt(v.details["max_ratio"])])
    sym = v.details.get("symmetry")
    if sym:
        rows.append(["symmetry", f"{sym['pairs']:,} pairs checked as {sym['orbits']:,} orbit "
                                 f"representatives ({sym['generators']} verified "
                                 "generator(s))"])
    rows.append(["solver", v.solver])
    rows.append(["time", f"{v.seconds:.2f} s" if v.seconds is not None else "—"])
    return kv(f"pufferfish: {v.scenario}", rows)


def _bracket(d: dict) -> str:
    """Where the bisection started: [low, high] and who gave it (— when nobody did)."""
    low, high = (tuple(d.get("bracket") or ()) + (None, None))[:2]
    source = d.get("bracket_source")
    if low is None and high is None:
        return str(source) if source else "—"
    return f"[{fmt_num(low)}, {fmt_num(high)}]" + (f" from {source}" if source else "")


def render_bound(b: Bound) -> Fit:
    d = b.details
    fixed = d.get("bracket_corrected") or []
    note = (f"; the verifier moved its {' and '.join(fixed)} end" +
            ("s" if len(fixed) > 1 else "") if fixed else "; both ends confirmed by the verifier"
            if d.get("bracket_source", "").startswith("privet.detect") else "")
    return kv(f"pufferfish bound: {b.mechanism}", [
        ["lower bound", f"ε ≥ {fmt_num(b.value)} (violated, exact); "
                        f"ε = {fmt_num(d.get('upper'))} verified at length {d.get('k')}"],
        ["bracket", _bracket(d) + note],
        ["checks", str(len(d.get("checks", [])))],
        ["time", f"{b.seconds:.2f} s"]])


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
                   help="test ε: the privacy budget checked, e.g. 0.7 or 'ln(2)' (default: "
                        "the scenario's, or the mechanism's claimed ε)")
    p.add_argument("--k-max", type=flags.count("the sequence length", 1, 10**6), default=None,
                   help="longest observation sequence to check (default: the scenario's)")
    p.add_argument("--timeout", type=flags.real("the timeout", 0, 1e6, low_open=True),
                   default=60.0, help="solver seconds per sequence length (default 60)")
    p.add_argument("--method", choices=("auto", "exact", "smt"), default="auto",
                   help="exact forward evaluation (fixed numeric parameters) or the SMT "
                        "solver (symbolic priors); auto picks (default)")
    p.add_argument("--no-symmetry", action="store_true",
                   help="SMT path: check every pair, not one per orbit of the model's "
                        "verified symmetries")
    p.add_argument("--bound", action="store_true",
                   help="Algorithm 4: lower bound on epsilon by bracket + binary search")
    p.add_argument("--precision", type=flags.real("the precision", 0, 1e3, low_open=True),
                   default=0.001,
                   help="with --bound: stop the binary search when the bracket on ε is "
                        "this narrow (default 0.001)")
    p.add_argument("--allow-code", action="store_true",
                   help="let a spec's 'mechanism: FILE.py:NAME' (or MODULE:NAME) import and run "
                        "that code; without it a spec is data and never runs code")
    add_html_option(p)
    add_common_options(p)
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
                   method=args.method, progress=show_progress(args),
                   symmetry="none" if getattr(args, "no_symmetry", False) else "auto",
                   allow_code=allow_code)
    emit(args, v, render)
    return {"verified": 0, "violated": 1}.get(v.status, 3)
