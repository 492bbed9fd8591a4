"""Errors for people: one sentence that says what is wrong and what to do.

Every error privet raises on bad input is a :class:`PrivetError`; the CLI prints its
message without a traceback and exits with status 2.

Advice that names a parameter is written with :func:`advice`, which keeps both spellings
in the message: the Python API's (``length=5``) and the command line's (``--length 5``).
``str(err)`` speaks the API's language, :meth:`PrivetError.for_cli` the CLI's; the CLI
prints the latter.
"""

from __future__ import annotations

import math
import re
from typing import Any

_ADVICE = re.compile("\x02(.*?)\x03(.*?)\x04", re.S)


def advice(api: str, cli: str) -> str:
    """A piece of an error message in two languages: ``api`` for Python callers
    (``"length=n"``), ``cli`` for the command line (``"--length N"``; ``""`` when the CLI
    has no equivalent and the sentence reads well without it)."""
    return f"\x02{api}\x03{cli}\x04"


def speak(message: str, cli: bool = False) -> str:
    """``message`` with every :func:`advice` in the API's words, or the CLI's."""
    return _ADVICE.sub(lambda m: m.group(2 if cli else 1), message)


class PrivetError(Exception):
    """Base class of every error privet raises on bad input or unsupported requests."""

    def __str__(self) -> str:
        return speak(super().__str__())

    def for_cli(self) -> str:
        """The message with parameters named as command-line flags (``--length 5``)."""
        return speak(super().__str__(), cli=True)

    def with_prefix(self, prefix: str) -> PrivetError:
        """The same error (same class, both languages kept) with ``prefix`` in front."""
        return type(self)(prefix + super().__str__())


class MechanismError(PrivetError):
    """The mechanism raised, returned NaN, or returned outputs of the wrong shape or type."""


class InputError(PrivetError):
    """An input lies outside the mechanism's domain, or an argument is malformed."""


class NeighborError(PrivetError):
    """Two inputs are not neighbors, or a neighbor relation is malformed."""


class NothingToCheckError(InputError):
    """The request is vacuous (a Pufferfish scenario with no pair of secrets to compare):
    answering "verified" would claim a check that never happened."""


class ParameterError(PrivetError):
    """A numeric parameter is out of range (for example epsilon <= 0)."""


class NoiseError(PrivetError):
    """A noise draw is malformed, or an interpreter cannot handle it."""


class NotEnumerableError(NoiseError):
    """Exact enumeration met continuous or unbounded noise."""


class GridTooLargeError(NoiseError):
    """Exact enumeration would need more joint outcomes than the configured cap."""


class ReplayError(NoiseError):
    """Under Replay, the mechanism asked for different draws than the recorded tape holds."""


class UnsupportedError(PrivetError):
    """An engine needs a capability the mechanism does not have (for example a black box)."""


class SolverError(PrivetError):
    """An external solver failed in a way that is not a verdict."""


def check_count(value: Any, name: str, unit: str = "samples") -> int:
    """Return ``value`` as an int, raising ParameterError unless it is a whole number >= 1
    (``True`` is not one)."""
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ParameterError(f"{name} must be a whole number of {unit} >= 1, got {value!r}.")
    return int(value)


def check_seconds(value: Any, name: str = "seconds", none: str | None = None,
                  finite: bool = True) -> float | None:
    """Return ``value`` as a float, raising ParameterError unless it is a positive number
    of seconds (finite unless ``finite`` is off); with ``none`` (what None means, e.g. "no
    limit"), None passes."""
    if value is None and none is not None:
        return None
    try:
        out = float(value)
    except (TypeError, ValueError):
        out = math.nan
    if isinstance(value, bool) or not 0 < out or (finite and out == math.inf):
        also = f" or None ({none})" if none is not None else ""
        raise ParameterError(f"{name} must be a positive number of seconds{also}, got "
                             f"{value!r}.")
    return out


def check_epsilon(epsilon: float, name: str = "epsilon") -> float:
    """Return ``epsilon`` as a float, raising ParameterError unless it is finite and > 0."""
    try:
        value = float(epsilon)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a positive number, got {epsilon!r}.") from None
    if not value > 0 or value == float("inf"):
        raise ParameterError(f"{name} must be a positive finite number, got {epsilon!r}.")
    return value
