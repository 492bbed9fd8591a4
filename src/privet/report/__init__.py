"""Rendering only: rich tables for the terminal, JSON, and (per engine) plots.

Engines return result dataclasses; this package turns them into text. Each engine's
renderer and CLI subcommand lives in ``report/<engine>.py`` with ``add_cli(subparsers)`` and
``run_cli(args) -> int``.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import IO, Any

from rich.console import Console
from rich.text import Text

from ..core.results import interrupted, to_json, verdict_tone
from ..core.text import fmt_num, fmt_p, fmt_pvalue, fmt_vec
from .layout import Col, Fit, kv

INTERRUPTED_NOTE = ("INTERRUPTED (Ctrl-C): partial results -- only what finished before the "
                    "stop is shown; nothing below is complete.")

_CONSOLE: Console | None = None
_RESULTS: IO[str] | None = None  # where --json results go while stdout is guarded


def results() -> IO[str]:
    """The stream results are printed to: stdout, or under :func:`results_only` the real
    stdout while everything else written to stdout goes to stderr."""
    return _RESULTS if _RESULTS is not None else sys.stdout


@contextlib.contextmanager
def results_only(enabled: bool = True) -> Iterator[None]:
    """While a command runs, stdout carries its result alone: what the user's mechanism
    prints (``print`` in this process, and file descriptor 1 of its worker processes and of
    C code) goes to stderr, so ``--json`` output stays parseable (``privet ... --json | jq``).
    Results are printed to :func:`results`."""
    global _RESULTS
    if not enabled or _RESULTS is not None:
        yield
        return
    real, saved = sys.stdout, None
    try:
        same_fd = real.fileno() == 1
    except (AttributeError, OSError, ValueError):  # a captured or replaced stdout
        same_fd = False
    if same_fd:
        real.flush()
        saved = os.dup(1)
        stream = open(saved, "w", encoding=real.encoding, errors=real.errors, closefd=False)
        os.dup2(2, 1)  # worker processes and C code inherit descriptor 1: now stderr
    else:
        stream = real
    _RESULTS, sys.stdout = stream, sys.stderr
    try:
        yield
        stream.flush()
    finally:
        _RESULTS, sys.stdout = None, real
        if saved is not None:
            with contextlib.suppress(OSError, ValueError):
                stream.flush()  # a closed pipe already failed above; nothing more to say
            os.dup2(saved, 1)
            os.close(saved)


def console() -> Console:
    global _CONSOLE
    if _CONSOLE is None:
        _CONSOLE = Console()
        if not _CONSOLE.is_terminal and "COLUMNS" not in os.environ:
            _CONSOLE = Console(width=140)  # piped to a file or a log: no 80-column folding
    return _CONSOLE


def table(title: str | None, columns: Sequence[str | Col], rows: Iterable[Sequence[Any]],
          **kw: Any) -> Fit:
    """A terminal table that fits its width (:class:`privet.report.layout.Fit`); cells that
    are not strings or rich Text print with :func:`fmt_num`."""
    return Fit(title, columns, [[x if isinstance(x, (str, Text)) else fmt_num(x) for x in r]
                                for r in rows], **kw)


def fmt_claim(claim: str | None, claimed_epsilon: Any = None) -> str:
    """The claim as reports show it: its description when the result carries one (``(ε, δ) =
    (1, 1e-05)``, ``ρ = 0.1 (zCDP)``), else the claimed ε."""
    return claim if claim else fmt_num(claimed_epsilon)


TONE_STYLES = {"bad": "red", "good": "green", "warn": "yellow", "neutral": ""}


def verdict_text(verdict: str) -> Text:
    """A verdict colored by the tone of its words (the table in ``core.results``): red
    violation, green verified, amber unknown/interrupted, plain otherwise."""
    return Text(verdict, style=TONE_STYLES[verdict_tone(verdict)])


def show_progress(args: Any) -> bool:
    """Progress bars unless ``--no-progress`` or ``--json`` (bars go to stderr either way)."""
    return not getattr(args, "no_progress", False) and not getattr(args, "json", False)


def emit(args: Any, result: Any, render) -> None:
    """What every engine subcommand prints: ``result`` as JSON under ``--json``, else
    ``render(result)`` (a rich renderable); then the ``--html`` report when asked.

    A result Ctrl-C cut short (:func:`privet.core.results.interrupted`) is marked in all
    three, and ``args.interrupted`` is set so the command exits 130."""
    if interrupted(result):
        args.interrupted = True
    if getattr(args, "json", False):
        print(to_json(result), file=results())
    else:
        if interrupted(result):
            console().print(INTERRUPTED_NOTE, style="bold red", markup=False, highlight=False)
        console().print(render(result))
    from .html import save_from_cli

    save_from_cli(args, result)


# result type -> (module of privet.report, its terminal renderer)
_RENDERERS = {
    "DetectResult": ("detect", "render"), "PValueCurve": ("detect", "curve_table"),
    "Counterexample": ("detect", "counterexample_table"), "Bound": ("search", "render"),
    "ExactBound": ("exact", "render_bound"), "AccuracyBound": ("exact", "render_accuracy"),
    "PufferfishVerdict": ("pufferfish", "render"), "SynthResult": ("synth", "render"),
    "SuiteResult": ("library", "suite_table"),
    "CertifiedProfile": ("approx", "render_certified"),
    "ExactProfile": ("approx", "render_exact_profile"),
    "PorosityResult": ("floats", "render_porosity"),
    "SensitivityResult": ("floats", "render_sensitivity"),
}


def render_any(result: Any) -> Any:
    """The terminal rendering of any saved privet result (``privet report FILE.json``):
    result types, and the JSON of ``privet list`` and ``privet sample``."""
    import importlib

    if isinstance(result, (list, tuple)):
        from rich.console import Group

        return Group(*[render_any(x) for x in result])
    if isinstance(result, dict):
        from .library import render_listing

        return render_listing(result)
    name = type(result).__name__
    if name == "SuiteRow":
        from .library import suite_rows_table

        return suite_rows_table([result])
    if name not in _RENDERERS:
        return repr(result)
    module, function = _RENDERERS[name]
    return getattr(importlib.import_module(f"{__name__}.{module}"), function)(result)


def render_saved(result: Any) -> str:
    """:func:`render_any` as text, rendered completely before anything is printed (a value
    that cannot be rendered raises here, leaving no half-printed table); interrupted
    results start with :data:`INTERRUPTED_NOTE`."""
    c = console()
    with c.capture() as cap:
        if interrupted(result):
            c.print(INTERRUPTED_NOTE, style="bold red", markup=False, highlight=False)
        c.print(render_any(result))
    return cap.get()


__all__ = ["Col", "Fit", "console", "emit", "fmt_claim", "fmt_num", "fmt_p", "fmt_pvalue",
           "fmt_vec", "kv", "render_any", "render_saved", "show_progress", "table",
           "verdict_text"]
