"""Rendering and CLI for ``privet exact`` (tight epsilon, delta and accuracy by exact inference).

``privet exact TARGET [--backend auto|enumerate|bdd|bdd-fixed] [--fractions]
[--delta-for EPS] [--accuracy ALPHA] [--top-k K] [--length N] [--set exhaustive|rr]
[--json]``. TARGET is a library name (``wmc.randomized_response``), ``module:name`` or
``path/file.py:name`` naming a privet mechanism or a BDD-language program. Exit status 0,
or 1 when the exact epsilon exceeds the mechanism's claimed epsilon.
"""

from __future__ import annotations

import argparse
import math
from fractions import Fraction
from typing import Any

from rich.table import Table

from .. import cli_support as flags
from ..core.results import AccuracyBound, ExactBound
from . import emit
from .html import add_html_option


def _num(v: Any, digits: int = 10) -> str:
    if v is None:
        return "-"
    if isinstance(v, Fraction):
        if v.denominator == 1:
            return str(v.numerator)
        return f"{v.numerator}/{v.denominator} (= {float(v):.{digits}g})"
    if isinstance(v, float) and math.isinf(v):
        return "inf"
    try:
        return f"{float(v):.{digits}g}"
    except (TypeError, ValueError):
        return str(v)


def _vec(x: Any) -> str:
    if isinstance(x, (list, tuple)):
        return "[" + ", ".join(_vec(v) for v in x) + "]"
    return str(x)


MAX_LENGTH = 100_000  # --length: the restricted sets of Sec. V scale to long inputs


def render_bound(b: ExactBound) -> Table:
    """A rich table for an :class:`ExactBound` (tight epsilon, or delta for a given epsilon)."""
    is_delta = b.delta is not None
    title = f"privet exact: {'delta for epsilon' if is_delta else 'tight epsilon'} of {b.mechanism}"
    t = Table(title=title, show_header=False, title_justify="left")
    t.add_column("what", style="bold")
    t.add_column("value")
    if is_delta:
        t.add_row("epsilon", _num(b.epsilon))
        t.add_row("smallest delta", _num(b.delta))
        t.add_row("witness pair", f"x = {_vec(b.witness[0])}, x' = {_vec(b.witness[1])}")
    else:
        t.add_row("e^epsilon", _num(b.e_epsilon))
        t.add_row("epsilon", f"{_num(b.epsilon, 6)}   [{b.details.get('closed_form', '')}]")
        x, x2, y = b.witness
        t.add_row("worst case", f"x = {_vec(x)}, x' = {_vec(x2)}, y = {_vec(y)}")
        probs = b.details.get("probabilities")
        if probs:
            t.add_row("probabilities", f"P[M(x)=y] = {_num(probs[0])}, "
                                       f"P[M(x')=y] = {_num(probs[1])}")
    if b.details.get("interrupted") and not is_delta:
        t.add_row("verdict", "interrupted: the value is a lower bound from the triples checked")
    elif b.claimed_epsilon is not None and not is_delta and b.claim and "δ" in b.claim:
        t.add_row("verdict", f"claim {b.claim}: its δ is checked by privet exact --profile")
    elif b.claimed_epsilon is not None and not is_delta:
        if b.epsilon <= b.claimed_epsilon + 1e-12:
            verdict = f"verified: epsilon <= claimed {b.claimed_epsilon:g} on the checked domain"
        else:
            verdict = (f"violation: exact epsilon {b.epsilon:.6g} > claimed "
                       f"{b.claimed_epsilon:g}")
        t.add_row("verdict", verdict)
    t.add_row("checked", b.domain)
    d = b.details
    if "triples" in d:
        t.add_row("privacy set", f"{d.get('set', '')}: {d['triples']:,} triples, "
                                 f"{d.get('pairs', 0):,} input pairs")
    t.add_row("backend", d.get("backend_choice") or (
        b.backend + (f", BDD size {d['bdd_size']} nodes" if "bdd_size" in d else "")))
    if b.seconds is not None:
        t.add_row("time", f"{b.seconds:.3f} s")
    return t


def render_accuracy(a: AccuracyBound) -> Table:
    """A rich table for an :class:`AccuracyBound` with its top-k worst inputs (Table IV)."""
    t = Table(title=f"privet exact: ({a.alpha:g}, beta)-accuracy of {a.mechanism}",
              title_justify="left")
    t.add_column("rank", justify="right")
    t.add_column("input")
    t.add_column("1 - beta")
    for r, (x, v) in enumerate(a.top_k, 1):
        t.add_row(str(r), _vec(list(x)), _num(v))
    t.caption = (f"tight 1 - beta = {_num(a.one_minus_beta)} at {_vec(list(a.worst_input))}; "
                 f"checked {a.domain}; backend "
                 f"{a.details.get('backend_choice') or a.backend}"
                 + (f", BDD size {a.details['bdd_size']}" if "bdd_size" in a.details else "")
                 + (f"; {a.seconds:.3f} s" if a.seconds is not None else ""))
    return t


def add_cli(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``privet exact`` to an argparse subparsers object."""
    p = subparsers.add_parser(
        "exact", help="exact epsilon, delta and (alpha, beta)-accuracy of a discrete mechanism",
        description="Tight privacy and accuracy bounds by exact inference (enumeration or "
                    "weighted model counting on BDDs; Oakley, Holtzen, Oprea).")
    p.add_argument("target", help="library name, module:name or path/file.py:name")
    p.add_argument("--backend", default="auto",
                   choices=["auto", "enumerate", "bdd", "bdd-fixed"])
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
                   default=5, metavar="K", help="worst inputs to list")
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
    p.add_argument("--no-progress", action="store_true")
    for flag, kw in (("--json", {"action": "store_true"}),
                     ("--seed", {"type": flags.seed, "default": None})):
        try:
            p.add_argument(flag, **kw)
        except argparse.ArgumentError:  # the lead's parser already gives it
            pass
    add_html_option(p)
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
    progress = not getattr(args, "no_progress", False) and not getattr(args, "json", False)
    common = dict(backend=args.backend, fractions=args.fractions, length=args.length,
                  progress=progress, max_memory=args.max_memory)
    if args.input_cap is not None:
        common["input_cap"] = args.input_cap
    if args.inputs is not None and args.set == "rr":
        from ..core.errors import InputError

        raise InputError("--inputs and --set rr each choose the inputs; give one of them.")
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
    violated = res.claimed_epsilon is not None and res.epsilon > res.claimed_epsilon + 1e-12
    return 1 if violated else 0


__all__ = ["add_cli", "render_accuracy", "render_bound", "run_cli"]
