"""``privet ...``: parses, calls the public API, renders. Nothing else happens here.

Exit codes, so privet can gate a CI job: 0 no violation found / verified / done, 1 a
violation was found (a counterexample, an exact ε above the claim, a certified bound above
it), 2 bad input (one sentence on stderr, no traceback), 3 unknown (a solver gave up),
130 interrupted.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence
from typing import Any

from .core.errors import PrivetError

ENGINE_COMMANDS = ("detect", "search", "exact", "pufferfish", "synth", "floats")
SAMPLING_COMMANDS = ("detect", "search", "synth", "sample", "suite")  # these take --executor


def parse_value(text: str) -> Any:
    """``3`` -> 3, ``0.5`` -> 0.5, ``[1,2]`` -> [1, 2], anything else stays a string."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def parse_vector(text: str) -> list[float]:
    """``1,2,3`` or ``[1, 2, 3]`` -> [1.0, 2.0, 3.0]; a clear error otherwise."""
    body = text.strip().strip("[]")
    try:
        return [float(t) for t in body.replace(" ", ",").split(",") if t]
    except ValueError:
        raise PrivetError(f"cannot read {text!r} as a list of numbers like 1,2,3.") from None


def parse_args_kv(pairs: Sequence[str] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for p in pairs or ():
        if "=" not in p:
            raise PrivetError(f"--arg needs NAME=VALUE, got {p!r}.")
        k, v = p.split("=", 1)
        out[k.strip()] = parse_value(v.strip())
    return out


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--seed", type=int, default=None, help="seed of the run (reproducible)")


def _executor_option(p: argparse.ArgumentParser) -> None:
    """``--executor SPEC``: where sample-and-reduce chunks run (same numbers on every one)."""
    if any(a.dest == "executor" for a in p._actions):
        return
    p.add_argument("--executor", default=None, metavar="SPEC",
                   help="where sampling runs: inprocess | processes | dask (a local cluster) "
                        "| dask://HOST:PORT (a running scheduler); results do not depend "
                        "on it (default: in-process, a process pool for black boxes)")


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, Any]]:
    parser = argparse.ArgumentParser(
        prog="privet",
        description="Test, bound, verify and synthesize differentially private mechanisms.",
    )
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("list", help="list the built-in mechanisms with claimed and known ε")
    p.add_argument("--paper", default=None, help="only this paper's mechanisms (e.g. statdp)")
    _common(p)

    p = sub.add_parser("sample", help="draw outputs of a mechanism and summarize them")
    p.add_argument("target", help="library name (privet list) or MODULE:NAME / FILE.py:NAME")
    p.add_argument("--input", "-x", required=True, help="the input, e.g. 1,1,1,1,1")
    p.add_argument("-n", type=int, default=100_000, help="number of outputs (default 100000)")
    p.add_argument("--epsilon", type=float, default=None, help="override the claimed ε")
    p.add_argument("--arg", action="append", metavar="NAME=VALUE",
                   help="non-private argument (repeatable)")
    p.add_argument("--exact", action="store_true",
                   help="print the exact output distribution (discrete noise) instead")
    _common(p)
    _executor_option(p)

    p = sub.add_parser("suite", help="run every engine over the built-in library")
    p.add_argument("--engines", default=None,
                   help="comma-separated engines to run (default: all available)")
    p.add_argument("--only", default=None,
                   help="comma-separated library names, papers, or your own mechanisms "
                        "(FILE.py:NAME or MODULE:NAME)")
    p.add_argument("--quick", action="store_true",
                   help="smaller samples: about 1 minute on 2 cores (full: about 2)")
    p.add_argument("--html", default=None, metavar="FILE",
                   help="also write a self-contained HTML report (opens with no network)")
    p.add_argument("--per-engine", action="store_true",
                   help="also print one line per mechanism and engine")
    _common(p)
    _executor_option(p)

    p = sub.add_parser("report", help="render results saved with --json (a table, or HTML)")
    p.add_argument("file", help="a JSON file written by any privet command's --json, or -")
    p.add_argument("--html", default=None, metavar="FILE",
                   help="write a self-contained HTML report instead of printing a table")

    runners: dict[str, Any] = {}
    for engine in ENGINE_COMMANDS:
        try:
            module = importlib.import_module(f"privet.report.{engine}")
        except ImportError:
            continue
        if hasattr(module, "add_cli") and hasattr(module, "run_cli"):
            before = set(sub.choices)
            module.add_cli(sub)
            for name in set(sub.choices) - before:
                _ensure_common(sub.choices[name])
                if name in SAMPLING_COMMANDS:
                    _executor_option(sub.choices[name])
                runners[name] = module.run_cli
    return parser, runners


def _ensure_common(p: argparse.ArgumentParser) -> None:
    have = {a.dest for a in p._actions}
    if "json" not in have:
        p.add_argument("--json", action="store_true", help="print the result as JSON")
    if "seed" not in have:
        p.add_argument("--seed", type=int, default=None, help="seed of the run")


def _version() -> str:
    from . import __version__

    return f"privet {__version__}"


def cmd_list(args: argparse.Namespace) -> int:
    from . import mechanisms
    from .report import console
    from .report.library import library_table

    mechs = mechanisms.by_paper(args.paper) if args.paper else mechanisms.all()
    if args.json:
        print(json.dumps({k: m.to_dict() for k, m in mechs.items()}, indent=2, default=str))
    else:
        console().print(library_table(mechs))
    return 0


def cmd_sample(args: argparse.Namespace) -> int:
    from .cli_support import load_mechanism
    from .core.results import to_jsonable
    from .report import console, fmt_num, table
    from .report.library import sample_summary, sample_table

    mech = load_mechanism(args.target, epsilon=args.epsilon)
    x = parse_vector(args.input)
    extra = parse_args_kv(args.arg)
    if args.exact:
        dist = mech.distribution(x, args=extra, exact=True)
        rows = sorted(((k[0] if isinstance(k, tuple) and len(k) == 1 else k, v)
                       for k, v in dist.as_dict().items()), key=lambda kv: -float(kv[1]))
        if args.json:
            print(json.dumps({"grid_size": dist.grid_size, "distribution": [
                {"output": to_jsonable(k), "probability": str(v)} for k, v in rows]}, indent=2))
        else:
            console().print(table(
                f"exact output distribution of {mech.name} on {x} ({dist.grid_size:,} noise "
                "outcomes)", ["output", "probability", "≈"],
                [[str(k), fmt_num(v), f"{float(v):.6g}"] for k, v in rows[:50]]))
        return 0
    if args.n <= 0:
        raise PrivetError(f"-n must be a positive number of outputs, got {args.n}.")
    from .execution import collect

    outputs = collect(mech, x, args.n, args=extra, seed=args.seed,
                      executor=getattr(args, "executor", None))  # = mech.sample(...)
    summary = sample_summary(outputs)
    if args.json:
        print(json.dumps(to_jsonable(summary), indent=2))
    else:
        console().print(sample_table(mech.name, x, summary))
    return 0


def cmd_suite(args: argparse.Namespace) -> int:
    from .report import console
    from .report.library import suite_rows_table, suite_table
    from .suite import suite

    engines = args.engines.split(",") if args.engines else None
    only = args.only.split(",") if args.only else None
    result = suite(engines=engines, only=only, quick=args.quick,
                   seed=0 if args.seed is None else args.seed, progress=not args.json,
                   executor=getattr(args, "executor", None))
    if args.json:
        from .core.results import to_json

        print(to_json(result))
    else:
        console().print(suite_table(result))
        if args.per_engine:
            console().print(suite_rows_table(result.rows))
    from .report.html import save_from_cli

    save_from_cli(args, result, title=f"privet suite ({'quick' if args.quick else 'full'})")
    # the library holds deliberately broken mechanisms: finding their violations is success
    return 130 if result.interrupted else 0


def cmd_report(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .core.results import from_jsonable
    from .report import console, render_any

    try:
        text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text()
    except OSError as err:
        raise PrivetError(f"cannot read {args.file!r}: {err.strerror or err}.") from None
    try:
        data = json.loads(text)
        result = from_jsonable(data)
    except (json.JSONDecodeError, KeyError, TypeError) as err:
        raise PrivetError(f"{args.file!r} is not a privet result saved with --json "
                          f"({type(err).__name__}).") from None
    items = result if isinstance(result, list) else [result]
    if not items or not all(type(x).__module__ == "privet.core.results" for x in items):
        raise PrivetError(f"{args.file!r} holds no privet result; save one with --json.")
    if args.html:
        from .report.html import write_html

        path = write_html(args.html, items, title=f"privet report: {Path(args.file).name}")
        print(f"report saved to {path}")
    else:
        console().print(render_any(items if len(items) > 1 else items[0]))
    return 0


COMMANDS = {"list": cmd_list, "sample": cmd_sample, "suite": cmd_suite, "report": cmd_report}


def main(argv: Sequence[str] | None = None) -> int:
    parser, runners = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    try:
        if args.command in COMMANDS:
            return COMMANDS[args.command](args)
        return int(runners[args.command](args) or 0)
    except PrivetError as err:
        print(f"privet: error: {getattr(err, 'cli', None) or err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("privet: interrupted.", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
