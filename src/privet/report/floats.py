"""Rendering and CLI of ``privet floats ...``: porosity (ε = ∞ witnesses), reachability of
given doubles, float-sum sensitivity, and detect on a float feature view."""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
from rich.console import Group
from rich.text import Text

from .. import cli_support as flags
from ..core.errors import PrivetError
from ..core.results import PorosityResult, SensitivityResult
from . import emit, fmt_num, fmt_p, fmt_vec, kv, show_progress, table, verdict_text
from .html import add_html_option
from .options import add_common_options

__all__ = ["add_cli", "html_porosity", "html_sensitivity", "render", "render_porosity",
           "render_sensitivity", "run_cli"]

REPLAY = "{target}.sample([{d2}], {n}, seed={seed})[{index}]"


def _short_vec(v: Any, limit: int = 8) -> str:
    items = list(v)
    if len(items) <= limit:
        return fmt_vec(items)
    head = ", ".join(fmt_num(x) for x in items[:limit])
    return f"[{head}, …] ({len(items):,} records)"


def render_porosity(r: PorosityResult) -> Group:
    """The verdict, the counts, the witness and its paragraph, the certification."""
    head = Text(f"{r.mechanism}: ", style="bold")
    head.append_text(verdict_text(r.verdict))
    rows = [["D1 / D2", f"{_short_vec(r.d1)} / {_short_vec(r.d2)}"],
            ["method", r.method],
            ["outputs checked", f"{r.checked:,} ({r.reachable:,} reachable, "
                                f"{r.unreachable:,} unreachable, {r.undecided:,} undecided)"]]
    for d in r.directions:
        if not d["checked"]:
            continue
        rows.append([f"  outputs of {d['outputs of']} vs {d['checked against']}",
                     f"{d['checked']:,} checked, {d['unreachable']:,} unreachable, "
                     f"{d['undecided']:,} undecided"])
    if r.delta_lower is not None and r.unreachable:
        rows.append(["δ lower bound", f"δ ≥ {r.delta_lower:.4g} for every ε (confidence "
                                      f"{r.confidence:.10g}): P[output unreachable from the "
                                      "other input]"])
    if r.assumptions:
        rows.append(["rests on", r.assumptions])
    if r.seconds is not None:
        rows.append(["time", f"{r.seconds:.2f} s"])
    parts: list[Any] = [head, kv(f"privet floats porosity: {r.mechanism}", rows)]
    w = r.witness
    if w is not None:
        wrows = [["output y", f"{w.value_hex}  ({w.value!r})"], ["why", w.reason],
                 ["input that cannot", _short_vec(w.d1)],
                 ["input that can", _short_vec(w.d2)],
                 ["replay (Python)", REPLAY.format(target=r.mechanism, d2=",".join(
                     repr(v) for v in w.d2), n=w.n, seed=w.seed, index=w.index)]]
        if w.words:
            wrows.append(["D2's generator words", f"{w.words} (uniform {w.uniform!r})"])
        if w.candidates:
            wrows.append(["D1's words checked", f"{w.candidates:,}"])
        parts += [kv("witness (ε = ∞)", wrows), Text(w.explanation)]
    if r.detect is not None:
        cx = r.detect
        parts.append(Text(f"detect.test_event: {cx.counts[0]:,} vs {cx.counts[1]:,} of "
                          f"{cx.n[0]:,} each, {fmt_p(cx.p_value)}"))
    if r.bound is not None:
        parts.append(Text(f"search.confirm: ε ≥ {fmt_num(r.bound.value)} with confidence "
                          f"{r.bound.confidence:.10g}" + (" (grows with the sample: the event "
                                                       "never occurs under D1)"
                                                       if r.bound.details.get("unbounded")
                                                       else "")))
    return Group(*parts)


def render_sensitivity(r: SensitivityResult) -> Group:
    """The pair, the two float aggregates, the excess, and the engines' certification."""
    head = Text(f"{r.mechanism or r.aggregate}: ", style="bold")
    head.append(r.verdict, style="bold red" if r.exceeds else "bold")
    rows = [["aggregate", r.aggregate], ["bounds", fmt_vec(r.bounds)],
            ["neighbors", r.neighbors.replace("_", " ")], ["records", f"at most {r.length:,}"],
            ["declared sensitivity", f"{r.declared:.17g}"],
            ["f(D1), f(D2)", f"{r.f1!r} ({float(r.f1).hex()}), {r.f2!r} "
                             f"({float(r.f2).hex()})"],
            ["|f(D1) - f(D2)|", f"{r.difference:.17g} (x{r.ratio:.6g} the declared; "
                                f"excess {r.excess:.3g})"],
            ["D1", _short_vec(r.d1)], ["D2", _short_vec(r.d2)],
            ["found by", f"{r.family} ({r.evaluated:,} datasets summed)"]]
    if r.seconds is not None:
        rows.append(["time", f"{r.seconds:.2f} s"])
    parts: list[Any] = [head, kv("privet floats sensitivity", rows)]
    if r.detect is not None:
        parts.append(Text(f"detect on this pair: {r.detect.verdict}" + (
            f", event {r.detect.counterexample.event}" if r.detect.counterexample else "")))
    if r.bound is not None:
        parts.append(Text(f"search.confirm: ε ≥ {fmt_num(r.bound.value)} with confidence "
                          f"{r.bound.confidence:.10g} (claimed {fmt_num(r.claimed_epsilon)})"))
    return Group(*parts)


def _html_vec(v: Any) -> str:
    from .html import esc

    return f"<code>{esc(_short_vec(v))}</code>"


def html_porosity(r: PorosityResult) -> str:
    """HTML: the verdict badge, the counts, the witness with its paragraph."""
    from .html import _details_block, badge, esc, kv_table

    rows = [("D1 / D2", f"{_html_vec(r.d1)} / {_html_vec(r.d2)}"), ("method", esc(r.method)),
            ("outputs checked", esc(f"{r.checked:,}: {r.reachable:,} reachable, "
                                    f"{r.unreachable:,} unreachable, {r.undecided:,} "
                                    "undecided"))]
    if r.delta_lower is not None and r.unreachable:
        rows.append(("δ lower bound", esc(f"δ ≥ {r.delta_lower:.4g} for every ε (confidence "
                                          f"{r.confidence:.10g})")))
    rows.append(("rests on", esc(r.assumptions)))
    out = [f"<h3>porosity: {esc(r.mechanism)}</h3>", f"<p>{badge(r.verdict)}</p>",
           kv_table(rows)]
    w = r.witness
    if w is not None:
        out.append("<h4>witness (ε = ∞)</h4>")
        out.append(kv_table([
            ("output y", f"<code>{esc(w.value_hex)}</code> ({esc(repr(w.value))})"),
            ("why", esc(w.reason)),
            ("replay (Python)", f"<code>{esc(REPLAY.format(target=r.mechanism, d2=','.join(repr(v) for v in w.d2), n=w.n, seed=w.seed, index=w.index))}</code>"),  # noqa: E501
            ("D2's generator words", esc(w.words or "—"))]))
        out.append(f"<p>{esc(w.explanation)}</p>")
    if r.detect is not None:
        from .html import render_counterexample

        out.append(render_counterexample(r.detect, "detect.test_event on the exact event"))
    if r.bound is not None:
        out.append(f"<p>search.confirm: ε ≥ {esc(fmt_num(r.bound.value))} with confidence "
                   f"{esc(r.bound.confidence)}</p>")
    out.append(_details_block(r.details))
    return "".join(out)


def html_sensitivity(r: SensitivityResult) -> str:
    """HTML: the pair, the float aggregates, the excess, the certification."""
    from .html import badge, esc, kv_table, render_detect

    out = [f"<h3>float-sum sensitivity: {esc(r.mechanism or r.aggregate)}</h3>",
           f"<p>{badge(r.verdict, 'bad' if r.exceeds else 'neutral')}</p>",
           kv_table([
               ("aggregate", esc(r.aggregate)), ("bounds", esc(fmt_vec(r.bounds))),
               ("neighbors", esc(r.neighbors)), ("declared", esc(f"{r.declared:.17g}")),
               ("f(D1), f(D2)", esc(f"{r.f1!r}, {r.f2!r}")),
               ("|f(D1) − f(D2)|", esc(f"{r.difference:.17g} (excess {r.excess:.3g})")),
               ("D1", _html_vec(r.d1)), ("D2", _html_vec(r.d2)),
               ("found by", esc(f"{r.family} ({r.evaluated:,} datasets)"))])]
    if r.detect is not None:
        out.append(render_detect(r.detect))
    if r.bound is not None:
        out.append(f"<p>search.confirm: ε ≥ {esc(fmt_num(r.bound.value))} with confidence "
                   f"{esc(r.bound.confidence)}</p>")
    return "".join(out)


def render(result: Any) -> Any:
    if isinstance(result, PorosityResult):
        return render_porosity(result)
    return render_sensitivity(result)


def add_cli(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``privet floats porosity|reach|sensitivity|features ...``."""
    p = subparsers.add_parser(
        "floats", help="floating-point attacks: porosity (ε = ∞), float-sum sensitivity",
        description="Implementation attacks on IEEE doubles: outputs one input produces and "
                    "its neighbour cannot (Mironov 2012), float sums that move more than "
                    "their declared sensitivity (Casacuberta et al. 2022), float features "
                    "for black boxes.")
    sub = p.add_subparsers(dest="floats_command", metavar="CHECK")
    q = sub.add_parser("porosity", help="certify ε = ∞ from an output one input cannot produce")
    q.add_argument("target", help="library name (floats.laplace, opendp.laplace, ...) or "
                                  "MODULE:NAME / file.py:NAME")
    q.add_argument("--d1", required=True, help="the first input, e.g. 0")
    q.add_argument("--d2", required=True, help="its neighbour, e.g. 1")
    q.add_argument("-n", type=flags.count("the number of outputs"), default=10_000,
                   help="outputs of each input to check (default 10000)")
    q.add_argument("--budget", type=flags.real("the budget", 0, 1e7, low_open=True),
                   default=None, help="stop after this many seconds")
    q.add_argument("--method", choices=("auto", "exact", "sighting"), default="auto",
                   help="exact inversion of the sampler, sighting in samples, or auto")
    q.add_argument("--first", action="store_true", help="stop at the first witness")
    q.add_argument("--certify", action="store_true",
                   help="also run detect.test_event and search.confirm on the exact event")
    q = sub.add_parser("reach", help="can the mechanism output exactly these doubles?")
    q.add_argument("target", help="library name or MODULE:NAME / file.py:NAME")
    q.add_argument("--input", "-x", required=True, help="the input, e.g. 0")
    q.add_argument("--outputs", required=True,
                   help="comma-separated doubles (decimal or hex, e.g. 0x1.8p-3)")
    q = sub.add_parser("sensitivity",
                       help="neighbouring datasets whose float sum moves too much")
    q.add_argument("target", help="floats.clamped_sum, floats.clamped_sum_f32, "
                                  "floats.int32_sum, or a library aggregate "
                                  "(diffprivlib.sum, opendp.sum_f32, ...)")
    q.add_argument("--length", type=flags.count("the number of records", 1, 10**7),
                   default=1024, help="largest number of records (default 1024)")
    q.add_argument("--no-certify", action="store_true",
                   help="do not hand the pair to detect and search")
    q = sub.add_parser("features", help="detect on a float feature of the outputs (black "
                                        "boxes)")
    q.add_argument("target", help="library name or MODULE:NAME / file.py:NAME")
    q.add_argument("--feature", default="granularity",
                   choices=("trailing_zeros", "granularity", "low_bits", "residue"),
                   help="the float feature of the outputs detect tests (default granularity)")
    q.add_argument("--d1", default="0", help="the first input (default 0)")
    q.add_argument("--d2", default="1", help="its neighbour (default 1)")
    for name in ("porosity", "reach", "sensitivity", "features"):
        s = sub.choices[name]
        add_html_option(s)
        add_common_options(s)
    p.set_defaults(run=run_cli)
    return p


def _mechanism(target: str) -> tuple[Any, Any]:
    """The mechanism named ``target`` and the reachability model privet knows for it."""
    from ..mechanisms import float_libs

    if ":" not in target and target.split(".")[0] in ("diffprivlib", "opendp"):
        samplers = float_libs.samplers()
        if target in samplers:
            return samplers[target], float_libs.models().get(target)
    from ..cli_support import load_mechanism

    return load_mechanism(target), None


def _doubles(text: str) -> list[float]:
    out = []
    for t in text.replace(" ", "").split(","):
        if not t:
            continue
        try:
            out.append(float.fromhex(t) if "x" in t.lower() else float(t))
        except ValueError:
            raise PrivetError(f"cannot read {t!r} as a double (decimal or hex like "
                              "0x1.8p-3).") from None
    return out


def run_cli(args: argparse.Namespace) -> int:
    from ..cli import parse_vector

    cmd = getattr(args, "floats_command", None)
    if cmd != "porosity" and getattr(args, "seed", None) is None:
        args.seed = 0  # results that record no seed: the same numbers on every run
    if cmd is None:
        raise PrivetError("say which check: privet floats porosity|reach|sensitivity|features.")
    if cmd == "porosity":
        from .. import floats
        from ..implementation import certify_porosity

        mech, model = _mechanism(args.target)
        res = floats.porosity(mech, parse_vector(args.d1), parse_vector(args.d2), n=args.n,
                              budget=args.budget, method=args.method, model=model,
                              first=args.first, seed=args.seed, progress=show_progress(args))
        if args.certify and res.witness is not None and mech.supports("replay"):
            res = certify_porosity(mech, res, seed=args.seed)
        emit(args, res, render)
        return 1 if res.witness is not None else (130 if res.interrupted else 0)
    if cmd == "reach":
        return _reach(args)
    if cmd == "sensitivity":
        return _sensitivity(args)
    return _features(args)


def _reach(args: argparse.Namespace) -> int:
    from .. import floats
    from ..cli import parse_vector
    from ..floats.reach import witness_text
    from . import console, results

    mech, _ = _mechanism(args.target)
    ys = _doubles(args.outputs)
    ver = floats.reachable(mech, parse_vector(args.input), ys, seed=args.seed)
    words = {1: "reachable", 0: "unreachable", -1: "undecided"}
    rows = [[y.hex(), repr(y), words[int(s)], why, witness_text(w) if w is not None else ""]
            for y, s, why, w in zip(ys, ver.status, ver.reason, ver.witness)]
    if args.json:
        import json

        print(json.dumps({"method": ver.method, "assumptions": ver.assumptions,
                          "outputs": [dict(zip(("hex", "value", "status", "why", "witness"),
                                               r)) for r in rows]}, indent=2),
              file=results())
    else:
        console().print(table(f"can {mech.name} on {args.input} output these doubles? "
                              f"({ver.method})", ["double", "value", "verdict", "why",
                                                  "witness"], rows))
    return 1 if np.any(ver.status == 0) else 0


def _sensitivity(args: argparse.Namespace) -> int:
    from .. import floats
    from ..implementation import sensitivity
    from ..mechanisms import float_libs

    if args.target.split(".")[0] in ("diffprivlib", "opendp"):
        aggs = float_libs.aggregates(length=args.length)
        if args.target not in aggs:
            raise PrivetError(f"no library aggregate {args.target!r}; privet audits "
                              f"{', '.join(aggs) or 'none (install privet[libs])'}.")
        a = aggs[args.target]
        res = floats.sum_sensitivity(a.function, bounds=a.bounds, length=a.length,
                                     neighbors=a.neighbors, declared=a.declared,
                                     dtype=a.dtype, seed=args.seed,
                                     name=f"{a.name} ({a.description}; {a.source})")
    else:
        from ..cli_support import load_mechanism

        res = sensitivity(load_mechanism(args.target), length=args.length,
                          certify=not args.no_certify, seed=args.seed,
                          progress=show_progress(args))
    emit(args, res, render)
    return 1 if res.exceeds else 0


def _features(args: argparse.Namespace) -> int:
    from .. import floats
    from ..cli import parse_vector
    from ..detect import detect
    from .detect import render as render_detect

    mech, _ = _mechanism(args.target)
    d1, d2 = parse_vector(args.d1), parse_vector(args.d2)
    res = detect(floats.view(mech, args.feature), inputs=[(d1, d2), (d2, d1)], seed=args.seed,
                 progress=show_progress(args))
    emit(args, res, render_detect)
    return 1 if res.violation else 0
