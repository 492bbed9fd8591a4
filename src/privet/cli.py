"""``privet ...``: parses, calls the public API, renders. Nothing else happens here.

Exit codes, so privet can gate a CI job: 0 no violation found / verified / done, 1 a
violation was found (a counterexample, an exact ε above the claim, a certified bound above
it), 2 bad input (one sentence on stderr, no traceback), 3 unknown (a solver gave up),
130 interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import sys
from collections.abc import Sequence
from concurrent.futures import BrokenExecutor
from typing import Any

from . import cli_support as flags
from .core.errors import PrivetError
from .report.options import add_common_options

ENGINE_COMMANDS = ("detect", "search", "exact", "pufferfish", "synth", "floats")
SAMPLING_COMMANDS = ("detect", "search", "synth", "sample", "suite")  # these take --executor


def parse_value(text: str) -> Any:
    """``3`` -> 3, ``0.5`` -> 0.5, ``[1,2]`` -> [1, 2], anything else stays a string
    (bounded: nesting and digits as in :func:`privet.core.safe.load_json`)."""
    from .core.safe import check_depth

    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, too many digits, or nested too deep
        return text
    return check_depth(value, "--arg")


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


def _executor_option(p: argparse.ArgumentParser) -> None:
    """``--executor SPEC``: where sample-and-reduce chunks run (same numbers on every one)."""
    if any(a.dest == "executor" for a in p._actions):
        return
    p.add_argument("--executor", default=None, metavar="SPEC", type=flags.executor,
                   help="where sampling runs: inprocess | processes | dask (a local cluster) "
                        "| dask://HOST:PORT (a running scheduler); results do not depend "
                        "on it (default: in-process, a process pool for black boxes)")


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, Any]]:
    parser = flags.OneLineParser(
        prog="privet",
        description="Test, bound, verify and synthesize differentially private mechanisms.",
    )
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("list", help="list the built-in mechanisms with claimed and known ε",
                       description="The built-in benchmark mechanisms: name, claimed ε, the ε "
                                   "the literature knows, neighbor relation and source. "
                                   "Every name works as a TARGET of the other commands.")
    p.add_argument("--paper", default=None,
                   help="only this paper's mechanisms: statdp, dpfinder, wmc, faier, kolahal, "
                        "floats, dpsniper")
    p.add_argument("--all", action="store_true",
                   help="also the opt-in families (floats.*, dpsniper.*) and the adapters of "
                        "the installed DP libraries (diffprivlib.*, opendp.*, pydp.*)")
    add_common_options(p, seed=False, progress=False)

    p = sub.add_parser("sample", help="draw outputs of a mechanism and summarize them",
                       description="Draw outputs of a mechanism on one input and print their "
                                   "frequencies (or quantiles), or with --exact the exact "
                                   "output distribution of a discrete mechanism.")
    p.add_argument("target", help="library name (privet list) or MODULE:NAME / FILE.py:NAME")
    p.add_argument("--input", "-x", required=True, help="the input, e.g. 1,1,1,1,1")
    p.add_argument("-n", type=flags.count("the number of outputs"), default=100_000,
                   help="number of outputs (default 100000)")
    p.add_argument("--max-memory", type=flags.memory_size, default=None, metavar="SIZE",
                   help="refuse -n when keeping the outputs would need more memory than "
                        "SIZE (e.g. 8G; default half of the machine's memory)")
    p.add_argument("--claimed", type=flags.claim, default=None, metavar="E[,D]",
                   help="run the mechanism with this claimed ε instead of its own (0.5, "
                        "ln(3), ...), or with an (ε, δ) claim E,D (1,1e-5)")
    flags.add_calling_option(p)
    p.add_argument("--arg", action="append", metavar="NAME=VALUE",
                   help="non-private argument (repeatable)")
    p.add_argument("--exact", action="store_true",
                   help="print the exact output distribution (discrete noise) instead")
    add_common_options(p)
    _executor_option(p)

    p = sub.add_parser("suite", help="run every engine over the built-in library",
                       description="privet's main job: every engine whose method applies "
                                   "(sample, detect, exact, search, pufferfish; synth on "
                                   "request) over the built-in mechanisms or your own, one "
                                   "line per mechanism with the engines' verdicts joined. "
                                   "Exits 0 although the library holds deliberately broken "
                                   "mechanisms: finding their violations is its job.")
    p.add_argument("--engines", default=None,
                   help="comma-separated engines to run (default: all available)")
    p.add_argument("--only", default=None,
                   help="comma-separated library names, papers, or your own mechanisms "
                        "(FILE.py:NAME or MODULE:NAME)")
    p.add_argument("--quick", action="store_true",
                   help="smaller samples: about 1 minute on 2 cores (full: about 2)")
    p.add_argument("--html", default=None, metavar="FILE", type=flags.output_file("--html"),
                   help="also write a self-contained HTML report (opens with no network)")
    p.add_argument("--per-engine", action="store_true",
                   help="also print one line per mechanism and engine")
    p.add_argument("--alpha", type=flags.probability("alpha"), default=0.05,
                   help="family-wise error rate of the run's statistical claims of a "
                        "violation, Holm-corrected over all of them (default 0.05)")
    add_common_options(p)
    _executor_option(p)

    p = sub.add_parser("report", help="render results saved with --json (a table, or HTML)",
                       description="Render results saved with any command's --json again: "
                                   "as the terminal table, or with --html as a self-contained "
                                   "HTML report.")
    p.add_argument("file", help="a JSON file written by any privet command's --json, or -")
    p.add_argument("--html", default=None, metavar="FILE", type=flags.output_file("--html"),
                   help="write a self-contained HTML report instead of printing a table")
    p.add_argument("--json", action="store_true",
                   help="print the results as JSON again (checked and normalized)")

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
                add_common_options(sub.choices[name])
                if name in SAMPLING_COMMANDS:
                    _executor_option(sub.choices[name])
                runners[name] = module.run_cli
    return parser, runners


def _version() -> str:
    from . import __version__

    return f"privet {__version__}"


def cmd_list(args: argparse.Namespace) -> int:
    from . import mechanisms
    from .report import console, results
    from .report.library import library_table

    mechs = mechanisms.by_paper(args.paper) if args.paper else mechanisms.all()
    more = {} if args.paper else {**mechanisms.opt_in(), **mechanisms.real_libraries()}
    if getattr(args, "all", False):
        mechs, more = {**mechs, **more}, {}
    if args.json:
        print(json.dumps({k: m.to_dict() for k, m in mechs.items()}, indent=2, default=str),
              file=results())
    else:
        console().print(library_table(mechs))
        if more:  # every name works as a target: say where the others are
            families = sorted({n.split(".", 1)[0] + ".*" for n in more})
            console().print(f"{len(more)} more targets ({', '.join(families)}): "
                            "privet list --all", markup=False, highlight=False,
                            soft_wrap=True)
    return 0


def cmd_sample(args: argparse.Namespace) -> int:
    from .cli_support import load_target
    from .core.results import to_jsonable
    from .report import console, emit, results
    from .report.library import exact_distribution_table, sample_summary, sample_table

    mech = load_target(args.target, epsilon=args.claimed, calling=args.calling)
    x = parse_vector(args.input)
    extra = parse_args_kv(args.arg)
    head = {"mechanism": mech.name, "input": x}
    if args.exact:
        dist = mech.distribution(x, args=extra, exact=True)
        rows = sorted(((k[0] if isinstance(k, tuple) and len(k) == 1 else k, v)
                       for k, v in dist.as_dict().items()), key=lambda kv: -float(kv[1]))
        data = {**head, "grid_size": dist.grid_size, "distribution": [
            {"output": to_jsonable(k), "probability": str(v)} for k, v in rows]}
        if args.json:
            print(json.dumps(data, indent=2), file=results())
        else:
            console().print(exact_distribution_table(data))
        return 0
    from .execution import collect_reduced, estimate_sample_memory

    estimate_sample_memory(mech, x, args.n, args=extra, limit=args.max_memory,
                           flag="--max-memory")
    red = collect_reduced(mech, x, args.n, args=extra, seed=args.seed,
                          executor=getattr(args, "executor", None))  # = mech.sample(...)
    summary = {**head, **sample_summary(red.value)}
    if red.interrupted:
        summary["interrupted"] = True
    emit(args, to_jsonable(summary), lambda s: sample_table(mech.name, x, s))
    return 0


def cmd_suite(args: argparse.Namespace) -> int:
    from .report import console, results, show_progress
    from .report.library import suite_rows_table, suite_table
    from .suite import suite

    engines = args.engines.split(",") if args.engines else None
    only = args.only.split(",") if args.only else None
    result = suite(engines=engines, only=only, quick=args.quick,
                   seed=0 if args.seed is None else args.seed, progress=show_progress(args),
                   executor=getattr(args, "executor", None), alpha=args.alpha)
    if args.json:
        from .core.results import to_json

        print(to_json(result), file=results())
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

    from .core.errors import InputError
    from .core.results import from_jsonable, is_result, to_json, to_jsonable
    from .core.safe import MAX_RESULT_BYTES, decode_text, load_json, read_text
    from .report import console, render_saved, results

    shown = "standard input" if args.file == "-" else repr(args.file)
    if args.file == "-":
        text = decode_text(sys.stdin.buffer.read(MAX_RESULT_BYTES + 1), "standard input",
                           MAX_RESULT_BYTES)
    else:
        text = read_text(args.file, "the saved result", MAX_RESULT_BYTES)
    data = load_json(text, shown)
    try:
        result = from_jsonable(data)
    except InputError as err:
        raise InputError(f"{shown} is not a privet result saved with --json: {err}") from None
    from .report.library import listing_kind

    items = result if isinstance(result, list) else [result]
    if not items or not all(is_result(x) or listing_kind(x) for x in items):
        raise PrivetError(f"{shown} holds no privet result (nor the output of privet list or "
                          "privet sample); save one with --json.")
    if args.json:
        print(to_json(result) if not isinstance(result, dict) else
              json.dumps(to_jsonable(result), indent=2, ensure_ascii=False), file=results())
    elif args.html:
        from .report.html import write_html

        path = _rendered(shown, lambda: write_html(
            args.html, items, title=f"privet report: {Path(args.file).name}"))
        print(f"report saved to {path}")
    else:
        console().file.write(_rendered(
            shown, lambda: render_saved(items if len(items) > 1 else items[0])))
    return 0


def _rendered(shown: str, render: Any) -> Any:
    """``render()``; a malformed value deep in a saved file (the loader checks only each
    field's top level) is one sentence, and nothing was printed or written yet."""
    try:
        return render()
    except PrivetError:
        raise
    except Exception as err:  # noqa: BLE001 - any renderer failing on the file's values
        from .core.loading import one_line as _oneline

        raise PrivetError(f"{shown} holds a privet result with a malformed value that "
                          f"cannot be rendered ({_oneline(err).rstrip('.')}); save it again "
                          "with --json.") from None


COMMANDS = {"list": cmd_list, "sample": cmd_sample, "suite": cmd_suite, "report": cmd_report}


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``privet ...``; returns the exit code (see the module docstring). Every failure
    ends as one sentence on stderr: bad input, a user file that calls ``sys.exit``, memory
    exhausted, a closed output pipe."""
    parser, runners = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:  # --help, --version, or a flag error already printed
        return stop.code if isinstance(stop.code, int) else 2
    if not args.command:
        parser.print_help()
        return 2
    from .report import results_only

    try:
        # under --json stdout carries the result alone (a mechanism's prints go to stderr)
        with results_only(bool(getattr(args, "json", False))):
            if args.command in COMMANDS:
                code = COMMANDS[args.command](args)
            else:
                code = int(runners[args.command](args) or 0)
        sys.stdout.flush()  # a full disk or a closed pipe fails here, not at exit
    except PrivetError as err:
        return _fail(err.for_cli())
    except KeyboardInterrupt:
        print("privet: interrupted.", file=sys.stderr)
        return 130
    except SystemExit as stop:  # raised by a user's mechanism file, not by privet
        return _fail(f"the code privet was asked to run called sys.exit({stop.code!r}); a "
                     "mechanism file must not exit the program.")
    except MemoryError:
        return _fail("out of memory; ask for less work (fewer samples, inputs or a shorter "
                     "length).")
    except BrokenExecutor:
        return _fail("a worker process died while it ran the mechanism (the mechanism ended "
                     "its process, or the system killed it); run it in this process with "
                     "--executor inprocess to see why.")
    except BrokenPipeError:  # `privet ... | head`: the reader left, nothing more to say
        _drop_stdout()
        return 2
    except OSError as err:  # `> /dev/full`, a disk that fills up, a file that vanished
        _drop_stdout()
        where = f" on {err.filename!r}" if err.filename else ""
        return _fail(f"the system refused to read or write{where}: "
                     f"{(err.strerror or str(err)).rstrip('.')}; free space or choose "
                     "another output.")
    if getattr(args, "interrupted", False):
        print("privet: interrupted; the results above are partial (marked interrupted).",
              file=sys.stderr)
        return 130
    return code


def _drop_stdout() -> None:
    """Flush what stdout holds; when it cannot take it, send it to /dev/null so Python's
    exit-time flush does not fail again with a traceback."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        with contextlib.suppress(AttributeError, OSError, ValueError):  # no real stdout
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _fail(message: str) -> int:
    print(f"privet: error: {flags.clip(' '.join(message.split()))}", file=sys.stderr)
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
