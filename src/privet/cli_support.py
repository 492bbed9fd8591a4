"""Resolve a CLI target (a library name, ``module:name`` or ``path/file.py:name``) to an object."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

from .core.errors import InputError, PrivetError
from .core.mechanism import Mechanism, as_mechanism


def load_object(target: str) -> Any:
    """The object named by ``target``: ``package.module:attr`` or ``path/to/file.py:attr``."""
    if ":" not in target:
        raise PrivetError(
            f"cannot find {target!r}: give a library name (see 'privet list'), "
            "MODULE:NAME or path/to/file.py:NAME."
        )
    where, attr = target.rsplit(":", 1)
    if where.endswith(".py") or "/" in where:
        path = Path(where)
        if not path.exists():
            raise PrivetError(f"file {where!r} does not exist.")
        name = f"_privet_user_{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise PrivetError(f"cannot import {where!r} as a Python file.")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except PrivetError as err:
            raise err.with_prefix(f"in {where!r}: ") from err
        except SystemExit as err:
            raise PrivetError(f"importing {where!r} called sys.exit({err.code!r}); a "
                              "mechanism file must not exit the program.") from None
        except Exception as err:
            raise PrivetError(f"importing {where!r} failed: {_oneline(err)}") from err
    else:
        if "" not in sys.path and str(Path.cwd()) not in sys.path:
            sys.path.insert(0, str(Path.cwd()))  # like `python -m`: modules beside you import
        try:
            module = importlib.import_module(where)
        except PrivetError as err:
            raise err.with_prefix(f"in module {where!r}: ") from err
        except SystemExit as err:
            raise PrivetError(f"importing module {where!r} called sys.exit({err.code!r}); a "
                              "mechanism module must not exit the program.") from None
        except Exception as err:
            raise PrivetError(f"cannot import module {where!r}: {_oneline(err)}") from err
    if not hasattr(module, attr):
        raise PrivetError(f"{where!r} has no {attr!r}{_suggest(module, attr)}")
    return getattr(module, attr)


def _oneline(err: BaseException) -> str:
    text = f"{type(err).__name__}: {err}".strip().splitlines()[0]
    return text if text.endswith(".") else text + "."


def _suggest(module: Any, attr: str) -> str:
    """'; did you mean ...? Mechanisms in it: ...' for a typo in a target's name."""
    import difflib

    names = [n for n in dir(module) if not n.startswith("_")]
    mechs = [n for n in names if isinstance(getattr(module, n), Mechanism)]
    close = difflib.get_close_matches(attr, mechs or names, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else "."
    if mechs:
        hint += f" Its mechanisms: {', '.join(mechs[:10])}."
    return hint


def load_mechanism(target: str, epsilon: float | None = None) -> Mechanism:
    """A library mechanism by name (``statdp.svt``) or a user mechanism by ``module:name``."""
    if ":" not in target:
        from . import mechanisms

        return mechanisms.get(target) if epsilon is None else \
            mechanisms.get(target).replace(epsilon=epsilon)
    return as_mechanism(load_object(target), epsilon=epsilon)


# -- flag values: argparse ``type=`` functions shared by every command -----------------------
#
# Each returns the parsed value or raises argparse.ArgumentTypeError with one sentence, which
# the parser prints as "privet: error: argument FLAG: sentence" and exits 2.

MAX_SEED = 2**128 - 1
MAX_SAMPLES = 10**10          # outputs per input a flag may ask for (-n, --n-final, ...)
MAX_CURVE_POINTS = 1_000      # k of --test-epsilons a:b:k


def _flag_error(err: Exception) -> argparse.ArgumentTypeError:
    return argparse.ArgumentTypeError(str(err).rstrip("."))


def integer(text: str, what: str = "value", low: int | None = None,
            high: int | None = None) -> int:
    """``text`` as an integer in [low, high]; ``1e6`` is read as 1000000 (integral only)."""
    from .core.safe import parse_rational

    try:
        q = parse_rational(text, what)
    except PrivetError:
        raise argparse.ArgumentTypeError(f"{what} must be a whole number, got {text!r}") \
            from None
    if q.denominator != 1:
        raise argparse.ArgumentTypeError(f"{what} must be a whole number, got {text!r}")
    value = int(q)
    if low is not None and value < low:
        raise argparse.ArgumentTypeError(f"{what} must be at least {low:,}, got {text!r}")
    if high is not None and value > high:
        raise argparse.ArgumentTypeError(f"{what} must be at most {high:,}, got {text!r}")
    return value


def count(what: str, low: int = 1, high: int = MAX_SAMPLES):
    """A ``type=`` for a bounded count (samples, iterations, lengths...)."""
    def parse(text: str) -> int:
        return integer(text, what, low, high)

    return parse


def seed(text: str) -> int:
    """``--seed``: a whole number from 0 to 2^128 - 1."""
    return integer(text, "the seed", 0, MAX_SEED)


def real(what: str, low: float | None = None, high: float | None = None,
         low_open: bool = False, high_open: bool = False):
    """A ``type=`` for a finite number in a range (``low_open``: excluded endpoint)."""
    def parse(text: str) -> float:
        from .core.safe import parse_rational

        try:
            value = float(parse_rational(text, what))
        except PrivetError:
            raise argparse.ArgumentTypeError(f"{what} must be a number, got {text!r}") \
                from None
        except OverflowError:
            value = float("inf")
        ok_low = low is None or (value > low if low_open else value >= low)
        ok_high = high is None or (value < high if high_open else value <= high)
        if not (ok_low and ok_high and value == value and abs(value) != float("inf")):
            lo = "" if low is None else f"{'>' if low_open else '>='} {low:g}"
            hi = "" if high is None else f"{'<' if high_open else '<='} {high:g}"
            rng = " and ".join(x for x in (lo, hi) if x)
            raise argparse.ArgumentTypeError(f"{what} must be a finite number {rng}, "
                                             f"got {text!r}")
        return value

    return parse


def probability(what: str):
    """A ``type=`` for a level strictly between 0 and 1 (alpha, confidence)."""
    return real(what, 0.0, 1.0, low_open=True, high_open=True)


def epsilon(text: str) -> float:
    """``--epsilon``/``--claimed``: ``0.5``, ``ln(3)``, ``2 ln 2`` ... (see
    :func:`privet.core.safe.parse_epsilon`) as a float."""
    from .core.safe import parse_epsilon

    try:
        return parse_epsilon(text).value
    except PrivetError as err:
        raise _flag_error(err) from None


def epsilon_text(text: str) -> str:
    """Like :func:`epsilon`, but keeps the text (engines that use e^ε exactly)."""
    epsilon(text)
    return text


def epsilon_range(text: str, zero: bool = False) -> list[float]:
    """``a:b:k``: k test epsilons evenly spaced from a to b (a < b unless k = 1); each end
    positive, or also 0 with ``zero`` (see :func:`epsilon_grid`)."""
    parts = str(text).split(":")
    if len(parts) != 3:
        raise argparse.ArgumentTypeError(
            f"give the epsilons as a:b:k (k values from a to b), got {text!r}")

    def end(t: str) -> float:
        return 0.0 if zero and t.strip() in ("0", "0.0", "0.") else epsilon(t)

    lo, hi = end(parts[0]), end(parts[1])
    k = integer(parts[2], "k of a:b:k", 1, MAX_CURVE_POINTS)
    if k == 1:
        return [lo]
    if not lo < hi:
        raise argparse.ArgumentTypeError(f"a:b:k needs a < b, got {text!r}; write "
                                         f"{parts[1]}:{parts[0]}:{parts[2]}")
    return [lo + (hi - lo) * i / (k - 1) for i in range(k)]


def epsilon_grid(text: str) -> list[float]:
    """``a:b:k`` like :func:`epsilon_range`, where a may be 0 (a privacy profile δ(ε))."""
    return epsilon_range(text, zero=True)


def output_file(flag: str):
    """A ``type=`` for a report file: its directory must exist (see
    :func:`privet.report.output.check_output_path`)."""
    def parse(text: str) -> str:
        from .report.output import check_output_path

        try:
            check_output_path(text, "the file")
        except PrivetError as err:
            raise _flag_error(err) from None
        return text

    return parse


def memory_size(text: str) -> int:
    """``--max-memory``: bytes from ``512M``, ``4G``, ``2.5GB`` or a plain number."""
    import re

    m = re.fullmatch(r"\s*([0-9.eE+]+)\s*([kKmMgGtT]?)[bB]?\s*", str(text))
    if not m:
        raise argparse.ArgumentTypeError(f"give a size such as 512M or 4G, got {text!r}")
    value = real("the size", 0, 1e15, low_open=True)(m.group(1))
    scale = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}[m.group(2).lower()]
    return int(value * scale)


def input_list(text: str) -> list[tuple]:
    """``--inputs``: ``0,1,1;1,1,1`` or JSON ``[[0,1,1],[1,1,1]]`` -> a list of tuples."""
    from .core.safe import load_json

    body = str(text).strip()
    if len(body) > 1_000_000:
        raise argparse.ArgumentTypeError("the list of inputs is longer than 1,000,000 "
                                         "characters; give fewer inputs")
    try:
        if body.startswith("["):
            rows = load_json(body, "--inputs")
            if not isinstance(rows, list) or not all(isinstance(r, list) for r in rows):
                raise InputError("--inputs must be a list of lists of numbers")
        else:
            rows = [r.replace(" ", ",").split(",") for r in body.split(";") if r.strip()]
        out = [tuple(_number(v) for v in r if not (isinstance(v, str) and not v.strip()))
               for r in rows]
    except PrivetError as err:
        raise _flag_error(err) from None
    if not out:
        raise argparse.ArgumentTypeError("the list of inputs is empty")
    return out


def _number(v: Any) -> int | float:
    from .core.safe import parse_rational

    if isinstance(v, bool):
        raise InputError(f"{v!r} is not a number")
    if isinstance(v, (int, float)):
        return v
    q = parse_rational(str(v), "an input value")
    return int(q) if q.denominator == 1 else float(q)


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one sentence on stderr (exit 2), not the usage
    text: ``privet: error: argument -n: ... (see privet sample --help).``"""

    def error(self, message: str):  # type: ignore[override]
        message = message.strip().rstrip(".")
        self.exit(2, f"privet: error: {message} (see '{self.prog} --help').\n")
