"""Every flag of every command, as the parser builds them -- so flags added later are checked
too: none reads a number with a bare ``int``/``float`` (unbounded: ``-n 1e30`` would be
accepted or become a traceback), and random text given to any flag either becomes a bounded,
finite value or one sentence from argparse (exit 2), never another exception.
"""

from __future__ import annotations

import argparse
import math

import pytest
from hypothesis import given, settings

from privet.cli import build_parser
from privet.core.safe import MAX_DECIMAL_EXPONENT

from .test_properties import flag_text

BARE = (int, float, complex)
MAX_ITEMS = 1_000_000         # a flag value that is a list: at most this many items


def _parsers(parser: argparse.ArgumentParser, path: tuple = ()):
    """(command path, parser) for every (sub)command, floats' subcommands included."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, (*path, name))


def _flags() -> list[tuple[str, argparse.ArgumentParser, argparse.Action]]:
    parser, _ = build_parser()
    out = []
    for path, p in _parsers(parser):
        for action in p._actions:
            if action.option_strings and action.nargs != 0 and \
                    not isinstance(action, argparse._SubParsersAction):
                out.append((" ".join(path) + " " + action.option_strings[-1], p, action))
    return out


FLAGS = _flags()


def _kind(parse) -> tuple:
    """Flags read by the same parser with the same settings (``--seed`` everywhere, ``count``
    with the same bounds) are tried once."""
    cells = tuple(repr(c.cell_contents) for c in getattr(parse, "__closure__", None) or ())
    return getattr(parse, "__qualname__", repr(parse)), cells


TYPED = list({_kind(a.type): (name, p, a) for name, p, a in reversed(FLAGS)
              if a.type is not None}.values())


def test_the_parser_has_the_commands_and_flags_this_file_checks():
    names = {name for name, _, _ in FLAGS}
    assert {"sample -n", "detect --n-final", "exact --length", "sample --executor",
            "pufferfish --timeout", "floats porosity --budget"} <= names, sorted(names)


def test_no_flag_reads_a_number_without_bounds():
    bare = [name for name, _, a in FLAGS if a.type in BARE]
    untyped_numbers = [name for name, _, a in FLAGS
                       if a.type is None and not a.choices and not isinstance(a.default, bool)
                       and isinstance(a.default, (int, float))]
    assert not bare, f"flags with a bare int/float type (use privet.cli_support's): {bare}"
    assert not untyped_numbers, f"numeric flags read as text: {untyped_numbers}"


def _bounded(value, depth: int = 0) -> bool:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return True
    if isinstance(value, int):  # digits bounded (a seed up to 2^128, an input like 1e39)
        return abs(value) <= 10 ** MAX_DECIMAL_EXPONENT
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, (list, tuple)):
        return depth < 3 and len(value) <= MAX_ITEMS and all(_bounded(v, depth + 1)
                                                                for v in value)
    return True  # an object a flag builds on purpose (not a number)


@pytest.mark.parametrize("name, parser, action", TYPED, ids=[f[0] for f in TYPED])
@settings(max_examples=25, deadline=None, derandomize=True)
@given(text=flag_text)
def test_random_text_to_every_flag(name, parser, action, text):
    # argparse turns ArgumentTypeError, TypeError and ValueError of a type= function into
    # "privet: error: argument FLAG: ..." and exit 2; anything else would be a traceback
    try:
        value = parser._get_value(action, text)
    except argparse.ArgumentError as err:
        message = str(err)
        assert message and "\n" not in message, (name, text, message)
        return
    assert _bounded(value), (name, text, value)
