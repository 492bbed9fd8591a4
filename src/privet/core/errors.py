"""Errors for people: one sentence that says what is wrong and what to do.

Every error privet raises on bad input is a :class:`PrivetError`; the CLI prints its
message without a traceback and exits with status 2.
"""

from __future__ import annotations


class PrivetError(Exception):
    """Base class of every error privet raises on bad input or unsupported requests.

    ``cli`` is the same sentence in the command line's words (it names the flag where the
    message names the argument); the CLI prints it when given."""

    def __init__(self, *args: object, cli: str | None = None):
        super().__init__(*args)
        self.cli = cli


class MechanismError(PrivetError):
    """The mechanism raised, returned NaN, or returned outputs of the wrong shape or type."""


class InputError(PrivetError):
    """An input lies outside the mechanism's domain, or an argument is malformed."""


class NeighborError(PrivetError):
    """Two inputs are not neighbors, or a neighbor relation is malformed."""


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


def check_epsilon(epsilon: float, name: str = "epsilon") -> float:
    """Return ``epsilon`` as a float, raising ParameterError unless it is finite and > 0."""
    try:
        value = float(epsilon)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a positive number, got {epsilon!r}.") from None
    if not value > 0 or value == float("inf"):
        raise ParameterError(f"{name} must be a positive finite number, got {epsilon!r}.")
    return value
