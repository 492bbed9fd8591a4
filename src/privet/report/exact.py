"""Rendering and CLI for ``privet exact`` (tight epsilon, delta and accuracy by exact inference).

``privet exact TARGET [--backend auto|enumerate|bdd|bdd-fixed] [--fractions]
[--delta-for EPS] [--accuracy ALPHA] [--top-k K] [--length N] [--set exhaustive|rr]
[--json]``. TARGET is a library name (``wmc.randomized_response``), ``module:name`` or
``path/file.py:name`` naming a privet mechanism or a BDD-language program. Exit status 0,
or 1 when the exact epsilon exceeds the mechanism's claimed epsilon.
"""

from __future__ import annotations

import argparse
from fractions import Fraction
from typing import Any

from .. import cli_support as flags
from ..core.results import AccuracyBound, ExactBound
from . import Col, Fit, emit, fmt_num, fmt_vec, kv, show_progress, table, verdict_text
from .html import add_html_option
from .options import add_common_options


def _num(v: Any, digits: int = 6) -> str:
    """A probability or e^ε: ``p/q (≈ 0.125)`` when exact, else ``digits`` digits."""
    if isinstance(v, Fraction) and v.denominator != 1:
        return f"{fmt_num(v)} (≈ {fmt_num(float(v), digits)})"
    return fmt_num(v, digits)


MAX_LENGTH = 100_000  # --length: the restricted sets of Sec. V scale to long inputs


def render_bound(b: ExactBound) -> Fit:
    """A field/value table for an :class:`ExactBound` (tight ε, or δ for a given ε)."""
    is_delta = b.delta is not None
    title = f"privet exact: {'δ for ε' if is_delta else 'tight ε'} of {b.mechanism}"
    rows: list[list[Any]] = []
    if is_delta:
        rows.append(["ε", fmt_num(b.epsilon, 6)])
        rows.append(["smallest δ", _num(b.delta)])
        rows.append(["witness", f"D1 = {fmt_vec(b.witness[0])}, D2 = {fmt_vec(b.witness[1])}"])
    else:
        rows.append(["verdict", verdict_text(b.describe())])
        rows.append(["exact ε", fmt_num(b.epsilon, 6)])
        rows.append(["e^ε", _num(b.e_epsilon)])
        if isinstance(b.e_epsilon, Fraction):
            rows.append(["closed form", str(b.details.get("closed_form", ""))])
        x, x2, y = b.witness
        rows.append(["worst case", f"D1 = {fmt_vec(x)}, D2 = {fmt_vec(x2)}, "
                                   f"output {fmt_vec(y)}"])
        probs = b.details.get("probabilities")
        if probs:
            rows.append(["probabilities", f"P[M(D1) = output] = {_num(probs[0])}, "
                                          f"P[M(D2) = output] = {_num(probs[1])}"])
    rows.append(["checked domain", b.domain])
    d = b.details
    if "triples" in d:
        rows.append(["privacy set", f"{d.get('set', '')}: {d['triples']:,} triples, "
                                    f"{d.get('pairs', 0):,} input pairs"])
    rows.append(["backend", d.get("backend_choice") or (
        b.backend + (f", BDD size {d['bdd_size']:,} nodes" if "bdd_size" in d else ""))])
    if b.seconds is not None:
        rows.append(["time", f"{b.seconds:.3f} s"])
    return kv(title, rows)


def render_accuracy(a: AccuracyBound) -> Fit:
    """The tight (α, β)-accuracy with its top-k worst inputs (WMC Table IV)."""
    rows = [[str(r), fmt_vec(list(x)), _num(v)] for r, (x, v) in enumerate(a.top_k, 1)]
    note = (f"tight 1 − β = {_num(a.one_minus_beta)} at {fmt_vec(list(a.worst_input))}; "
            + (f"f(x) = {a.details['truth']}; " if a.details.get("truth") else "")
            + f"checked {a.domain}; backend {a.details.get('backend_choice') or a.backend}"
            + (f", BDD size {a.details['bdd_size']:,}" if "bdd_size" in a.details else "")
            + (f"; {a.seconds:.3f} s" if a.seconds is not None else ""))
    return table(f"privet exact: ({fmt_num(a.alpha)}, β)-accuracy of {a.mechanism}: "
                 "P[|M(x) − f(x)| ≤ α] ≥ 1 − β",
                 [Col("rank", "right"), "input x", Col("1 − β", "right")], rows, notes=[note])


def add_cli(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``privet exact`` to an argparse subparsers object."""
    p = subparsers.add_parser(
        "exact", help="exact epsilon, delta and (alpha, beta)-accuracy of a discrete mechanism",
        description="Tight privacy and accuracy bounds by exact inference (enumeration or "
                    "weighted model counting on BDDs; Oakley, Holtzen, Oprea).")
    p.add_argument("target", help="library name, module:name or path/file.py:name")
    p.add_argument("--backend", default="auto",
                   choices=["auto", "enumerate", "bdd", "bdd-fixed"],
                   help="enumerate every noise outcome, or compile to a BDD and count "
                        "(bdd: the inputs symbolic too; bdd-fixed: one BDD per input); "
                        "auto picks (default)")
    p.add_argument("--fractions", action="store_true", help="exact rational probabilities")
    p.add_argument("--delta-for", type=flags.epsilon, metavar="EPS",
                   help="smallest delta for this epsilon (hockey-stick divergence)")
    p.add_argument("--profile", action="store_true",
                   help="the whole privacy profile δ(ε), tight Rényi/zCDP values and an exact "
                        "check of the claim (the default for (ε, δ) and zCDP claims)")
    p.add_argument("--epsilons", type=flags.epsilon_grid, default=None, metavar="A:B:K",
                   help="where the profile evaluates δ(ε): K values from A to B (default 0:3:31)")
    p.add_argument("--accuracy", type=flags.real("alpha", 0.0, 1e300), metavar="ALPHA",
                   help="tight (alpha, beta)-accuracy instead of epsilon")
    p.add_argument("--top-k", type=flags.count("the number of inputs", 1, 1_000_000),
                   default=5, metavar="K",
                   help="with --accuracy: how many worst inputs to list (default 5)")
    p.add_argument("--length", type=flags.count("the input length", 1, MAX_LENGTH),
                   metavar="N", help="input length, when open")
    p.add_argument("--set", default="exhaustive", choices=["exhaustive", "rr"],
                   help="privacy/accuracy set: exhaustive or randomized response (Sec. V)")
    p.add_argument("--inputs", type=flags.input_list, default=None, metavar="X;X;...",
                   help="check only these inputs, e.g. '0,0,1;0,1,1' or '[[0,0,1],[0,1,1]]' "
                        "(default: the whole input domain)")
    p.add_argument("--input-cap", type=flags.count("the input cap", 1, 2**40),
                   default=None, metavar="N",
                   help="refuse input domains with more than N inputs (default 65,536)")
    p.add_argument("--max-memory", type=flags.memory_size, default=None, metavar="SIZE",
                   help="refuse runs estimated to need more memory than SIZE (e.g. 8G; "
                        "default half of the machine's memory)")
    add_html_option(p)
    add_common_options(p)
    p.set_defaults(run=run_cli)
    return p


def _load(target: str) -> Any:
    from ..cli_support import load_mechanism, load_object
    from ..exact.bdd import Program

    if ":" in target:
        obj = load_object(target)
        if isinstance(obj, Program):
            return obj
    return load_mechanism(target)


def run_cli(args: argparse.Namespace) -> int:
    """Run ``privet exact`` from parsed arguments; returns the exit code."""
    from ..exact import accuracy, delta_for, exact

    target = _load(args.target)
    progress = show_progress(args)
    common = dict(backend=args.backend, fractions=args.fractions, length=args.length,
                  progress=progress, max_memory=args.max_memory)
    if args.input_cap is not None:
        common["input_cap"] = args.input_cap
    from ..core.errors import InputError

    if args.inputs is not None and args.set == "rr":
        raise InputError("--inputs and --set rr each choose the inputs; give one of them.")
    modes = [flag for flag, on in (("--accuracy", args.accuracy is not None),
                                   ("--delta-for", args.delta_for is not None),
                                   ("--profile", getattr(args, "profile", False))) if on]
    if len(modes) > 1:  # one ran and the others were dropped without a word
        raise InputError(f"{' and '.join(modes)} each ask for a different result; give one "
                         "of them per run.")
    if args.accuracy is not None:
        res = accuracy(target, args.accuracy, top_k=args.top_k,
                       inputs="rr" if args.set == "rr" else args.inputs, **common)
        emit(args, res, render_accuracy)
        return 0
    if args.delta_for is not None:
        res = delta_for(target, args.delta_for, inputs=args.inputs, **common)
        emit(args, res, render_bound)
        return 0
    claim = getattr(target, "claim", None)
    if getattr(args, "profile", False) or (claim is not None and claim.kind != "pure"):
        from ..exact import profile
        from .approx import render_exact_profile

        res = profile(target, epsilons=getattr(args, "epsilons", None), inputs=args.inputs,
                      **common)
        emit(args, res, render_exact_profile)
        return 1 if res.verified is False else 0
    res = exact(target, pairs="rr" if args.set == "rr" else None, inputs=args.inputs, **common)
    emit(args, res, render_bound)
    # the verdict's own comparison (exact against the claim when e^ε is a Fraction)
    return 1 if res.claimed_epsilon is not None and not res.verified else 0


__all__ = ["add_cli", "render_accuracy", "render_bound", "run_cli"]
