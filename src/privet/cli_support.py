"""Shared pieces of the CLI: flag parsers and the loading of a CLI target (a library name,
``module:name`` or ``path/file.py:name``; the loaders themselves live in
:mod:`privet.core.loading` and :func:`privet.mechanisms.load`)."""

from __future__ import annotations

import argparse
import math
from typing import Any

from .core.errors import InputError, PrivetError
from .core.loading import load_object
from .core.mechanism import Mechanism

__all__ = ["load_mechanism", "load_object", "load_target"]


def load_mechanism(target: str, epsilon: float | None = None) -> Mechanism:
    """:func:`privet.mechanisms.load` (the library is imported on first use, so the CLI
    starts without it)."""
    from .mechanisms import load

    return load(target, epsilon)


# -- flag values: argparse ``type=`` functions shared by every command -----------------------
#
# Each returns the parsed value or raises argparse.ArgumentTypeError with one sentence, which
# the parser prints as "privet: error: argument FLAG: sentence" and exits 2.

MAX_SEED = 2**128 - 1
MAX_SAMPLES = 10**10          # outputs per input a flag may ask for (-n, --n-final, ...)
MAX_CURVE_POINTS = 1_000      # k of --test-epsilons a:b:k


def _flag_error(err: Exception) -> argparse.ArgumentTypeError:
    text = err.for_cli() if isinstance(err, PrivetError) else str(err)  # flags' spelling
    return argparse.ArgumentTypeError(text.rstrip("."))


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


def claim(text: str) -> float | tuple[float, float]:
    """``--claimed``: an ε (``0.5``, ``ln(3)``) or an (ε, δ) claim ``E,D`` (``1,1e-5``)."""
    if "," not in str(text):
        return epsilon(text)
    parts = str(text).split(",")
    if len(parts) != 2:
        raise argparse.ArgumentTypeError(
            f"give the claim as E or E,D (an (ε, δ) claim, e.g. 1,1e-5), got {text!r}")
    return epsilon(parts[0]), real("the claimed δ", 0.0, 1.0, low_open=True,
                                   high_open=True)(parts[1])


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


def executor(text: str) -> str:
    """``--executor``: a spec of :func:`privet.execution.get_executor`, checked when the
    flag is read (a malformed ``dask://`` address fails before Dask is imported)."""
    from .execution import EXECUTOR_SPECS, LOCAL_SPECS, scheduler_address

    spec = str(text).strip()
    if spec in LOCAL_SPECS:
        return spec
    if not spec.startswith(("dask://", "tcp://")):
        raise argparse.ArgumentTypeError(f"unknown executor {text!r}; use {EXECUTOR_SPECS}")
    try:
        scheduler_address(spec)
    except PrivetError as err:
        raise _flag_error(err) from None
    return spec


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


MAX_MESSAGE = 1_000  # characters of an error sentence (a 100 KB flag value is not echoed)


def clip(message: str, limit: int = MAX_MESSAGE) -> str:
    """``message`` with its middle cut when it is longer than ``limit`` (keeps how it ends)."""
    if len(message) <= limit:
        return message
    cut = len(message) - limit + 30
    return f"{message[:limit * 2 // 3]} ... [{cut:,} characters cut] ... " \
           f"{message[limit * 2 // 3 + cut:]}"


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one sentence on stderr (exit 2), not the usage
    text: ``privet: error: argument -n: ... (see privet sample --help).``"""

    def error(self, message: str):  # type: ignore[override]
        message = clip(" ".join(message.split()).rstrip("."))
        self.exit(2, f"privet: error: {message} (see '{self.prog} --help').\n")


# -- implementations that do not use the noise API: --calling, --neighbors, --domain, --length

CALLINGS = ("vectorized", "statdp", "blackbox")
NEIGHBOR_FORMS = "all:D, one:D, add-remove or replace-one"


def parse_neighbors(text: str):
    """``--neighbors``: ``all:1`` (every entry changes by at most 1), ``one:1`` (one entry
    changes by at most 1), ``add-remove``, ``replace-one``."""
    from .core import neighbors

    spec = text.strip().lower().replace("_", "-")
    kind, sep, delta = spec.partition(":")
    simple = {"add-remove": neighbors.add_remove, "replace-one": neighbors.replace_one}
    if sep and not delta:  # 'all:' ran as all:1 unnoticed
        raise PrivetError(f"--neighbors {text!r} names no distance; use {NEIGHBOR_FORMS} "
                          "(D a positive number, e.g. all:1).")
    if kind in simple and not delta:
        return simple[kind]()
    make = {"all": neighbors.all_differ, "one": neighbors.one_differs}.get(kind)
    try:
        value = float(delta) if delta else 1.0
    except ValueError:
        value = None
    if make is None or value is None or not (value > 0 and value < float("inf")):
        raise PrivetError(f"--neighbors {text!r} is not a neighbor relation; use "
                          f"{NEIGHBOR_FORMS} (D a positive number, e.g. all:1).")
    return make(value)


def parse_domain(text: str) -> dict:
    """``--domain``: ``int:LOW:HIGH`` or ``float:LOW:HIGH`` (an end may be ``inf``)."""
    parts = text.strip().lower().split(":")
    kinds = {"int": True, "integer": True, "float": False, "real": False}
    try:
        kind, lo, hi = parts
        integer, low, high = kinds[kind], float(lo), float(hi)
    except (ValueError, KeyError):
        raise PrivetError(f"--domain {text!r} is not a domain; use int:LOW:HIGH or "
                          "float:LOW:HIGH (e.g. int:0:10, float:-10:10).") from None
    if low != low or high != high:
        raise PrivetError(f"--domain {text!r} has an end that is not a number; give "
                          "numbers (or inf).")
    if not low <= high:
        raise PrivetError(f"--domain {text!r} needs LOW <= HIGH.")
    first, last = _whole(low, math.ceil), _whole(high, math.floor)
    if integer and (first, last) != (low, high) and first <= last:  # else: no integer
        inner = f"int:{first:g}:{last:g}"
        raise PrivetError(f"--domain {text!r} is a domain of integers with an end that is "
                          f"not one; give whole ends ({inner}) or float:{lo}:{hi}.")
    return {"integer": integer, "low": low, "high": high}


def _whole(v: float, rounding) -> float:
    """``v`` rounded to an integer (``math.ceil`` or ``math.floor``); infinities stay."""
    return float(rounding(v)) if math.isfinite(v) else v


def parse_length(text: str) -> int:
    """``--length``: the number of entries of an input (a positive integer)."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not (value >= 1 and value == int(value) and value <= MAX_LENGTH):
        raise PrivetError(f"--length {text!r} must be a whole number of entries from 1 to "
                          f"{MAX_LENGTH:,} (longer inputs outgrow the samples' memory).")
    return int(value)


MAX_LENGTH = 100_000  # entries of an input on the command line (10^8 filled 24 GiB)


def add_calling_option(p: argparse.ArgumentParser) -> None:
    """``--calling``: how to call a plain function (sample, detect, search)."""
    p.add_argument("--calling", choices=CALLINGS, default=None,
                   help="how to call a plain function: vectorized m(a, n_samples), statdp "
                        "f(prng, queries, epsilon) or blackbox f(a); default: read off its "
                        "signature")


def add_target_options(p: argparse.ArgumentParser) -> None:
    """The flags that say how to run a target that is not a privet mechanism."""
    add_calling_option(p)
    p.add_argument("--neighbors", default=None, metavar="REL",
                   help="the neighbor relation: all:D (every entry changes by at most D), "
                        "one:D, add-remove or replace-one (default all:1)")
    p.add_argument("--domain", default=None, metavar="KIND:LOW:HIGH",
                   help="the input domain, e.g. int:0:10 or float:-10:10")
    p.add_argument("--length", default=None, metavar="N",
                   help="the number of entries of an input")


def seconds(text: str) -> float | None:
    """``--seconds``: a positive wall-time budget, or 0 (also ``none``) for no limit."""
    if text.strip().lower() in ("0", "none"):
        return None
    return real("the time budget", 0.0, None, low_open=True)(text)


def float_features(text: str) -> Any:
    """``--float-features``: auto, all, off, or feature names separated by commas."""
    from .attacks.features import check_bit_features

    try:
        return check_bit_features(text)
    except PrivetError as err:
        raise _flag_error(err) from None


def add_float_features_option(p: argparse.ArgumentParser) -> None:
    """``--float-features`` of detect and search (the classifier attacks on black boxes)."""
    p.add_argument("--float-features", type=float_features, default="auto", metavar="WHICH",
                   help="float-exact features of the classifier attacks on black boxes: auto "
                        "(default: when the outputs are doubles with a fractional part), all, "
                        "off, or names among granularity,trailing_zeros,low_bits,residue")


def _positional(params: list) -> list:
    """The positional parameters privet fills by position: a later one named ``rng`` is
    given the generator by keyword (``privet.from_blackbox`` / ``from_vectorized``)."""
    return [p for i, p in enumerate(params)
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            and not (i > 0 and p.name == "rng" and p.kind is not p.POSITIONAL_ONLY)]


def _calling_of(f: Any, name: str) -> str:
    """How to call a plain function, read off its parameters."""
    import inspect

    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        return "blackbox"
    positional = _positional(params)
    names = [p.name.lower() for p in positional]
    if names and names[0] in ("noise",):
        raise PrivetError(f"{name!r} takes a noise object: decorate it with "
                          "@privet.mechanism(epsilon=...) to use privet's noise API.")
    if len(names) >= 3 and names[0] in ("prng", "rng", "random_state", "generator"):
        return "statdp"
    if len(names) >= 2 and names[1] in ("n", "n_samples", "size", "samples", "num_samples",
                                        "count"):
        return "vectorized"
    required = [p for p in positional if p.default is p.empty]
    if len(required) <= 1:
        return "blackbox"
    raise PrivetError(f"{name!r} takes {inspect.signature(f)}, none of the ways privet calls "
                      f"a function: {name}(x) with one input (--calling blackbox), "
                      f"{name}(a, n_samples) (--calling vectorized) or {name}(prng, queries, "
                      "epsilon) (--calling statdp); write it in one of these forms, or as "
                      "@privet.mechanism over the noise API.")


def _check_calling(f: Any, name: str, calling: str) -> None:
    import inspect

    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        return
    positional = _positional(params)
    varargs = any(p.kind is p.VAR_POSITIONAL for p in params)
    need = {"vectorized": 2, "statdp": 3, "blackbox": 1}[calling]
    shape = {"vectorized": f"{name}(a, n_samples)", "statdp": f"{name}(prng, queries, epsilon)",
             "blackbox": f"{name}(a)"}[calling]
    required = [p for p in positional if p.default is p.empty]
    if (len(positional) < need and not varargs) or len(required) > need:
        guess = "blackbox" if len(positional) == 1 else None
        hint = f"; use --calling {guess}" if guess and guess != calling else ""
        raise PrivetError(f"--calling {calling} calls {shape}, but {name!r} takes "
                          f"{inspect.signature(f)}{hint}.")


def load_target(target: str, *, epsilon: float | None = None, calling: str | None = None,
                neighbors: str | None = None, domain: str | None = None,
                length: str | None = None) -> Mechanism:
    """The mechanism a CLI target names, with the implementation flags applied: a library
    name or privet mechanism (the flags change its neighbor relation, domain and length),
    or a plain function wrapped as ``--calling`` says (or its signature shows);
    ``epsilon`` is the claim (``--claimed``): an epsilon, or (epsilon, delta)."""
    from .core.mechanism import Domain, from_blackbox, from_statdp, from_vectorized

    spec: dict[str, Any] = {}
    if isinstance(epsilon, tuple):
        epsilon, spec["delta"] = epsilon
    if neighbors is not None:
        spec["neighbors"] = parse_neighbors(neighbors)
    dom = parse_domain(domain) if domain is not None else None
    n = parse_length(length) if length is not None else None
    if ":" not in target:
        if target.endswith(".py"):
            raise PrivetError(f"{target!r} is a file; name the function in it as "
                              f"{target}:NAME.")
        if calling is not None:
            raise PrivetError(f"{target!r} is a library mechanism; --calling is for plain "
                              "functions (FILE.py:NAME or MODULE:NAME).")
        mech = load_mechanism(target, epsilon)
    else:
        obj = load_object(target)
        name = target.rsplit(":", 1)[1]
        if isinstance(obj, Mechanism):
            if calling is not None:
                raise PrivetError(f"{name!r} is already a privet mechanism; drop --calling.")
            mech = obj if epsilon is None else obj.replace(epsilon=epsilon)
        elif callable(obj):
            how = calling or _calling_of(obj, name)
            _check_calling(obj, name, how)
            if how == "statdp" and epsilon is None:
                raise PrivetError(f"a StatDP-style function takes its epsilon: give the "
                                  f"claimed epsilon of {name!r} with --claimed.")
            wrap = {"vectorized": from_vectorized, "statdp": from_statdp,
                    "blackbox": from_blackbox}[how]
            mech = wrap(obj, epsilon=epsilon, name=name)
        else:
            raise PrivetError(f"{target!r} is {type(obj).__name__}, not a mechanism or a "
                              "function.")
    if dom is not None or n is not None:
        old = mech.domain
        spec["domain"] = Domain(length=n if n is not None else old.length,
                                integer=dom["integer"] if dom else old.integer,
                                low=dom["low"] if dom else old.low,
                                high=dom["high"] if dom else old.high)
    if not spec:
        return mech
    mech = mech.replace(**spec)
    _check_relation(mech, neighbors, domain, length)
    return mech


def _check_relation(mech: Mechanism, neighbors: str | None, domain: str | None,
                    length: str | None) -> None:
    """One sentence when no representative pair of the relation lies in the domain."""
    from .core.errors import NeighborError

    n = mech.domain.length if isinstance(mech.domain.length, int) else None
    lengths = (n,) if n is not None else (5, 10)
    for pair in mech.neighbors.pairs(lengths=lengths, domain=mech.domain):
        try:
            mech.domain.check(pair.d1)
            mech.domain.check(pair.d2)
            return
        except PrivetError:
            continue
    flags = " ".join(f"--{k} {v}" for k, v in (("neighbors", neighbors), ("domain", domain),
                                              ("length", length)) if v is not None)
    if mech.neighbors.kind == "add_remove" and n is not None:
        raise NeighborError(f"{flags}: add-remove neighbors differ in length by one, so a "
                            "fixed --length leaves none; drop --length.")
    raise NeighborError(
        f"{flags} leaves no pair of neighboring inputs inside the domain "
        f"({mech.domain.describe()}; '{mech.neighbors.describe()}'); give a smaller "
        "neighbor distance in --neighbors or a wider --domain.")
