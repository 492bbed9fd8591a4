"""Which inference backend answers a mechanism's queries: Enumerate or a compiled BDD, by cost.

Enumerate runs the mechanism once per input on every joint noise outcome (its *grid*), so
its cost is grid x inputs mechanism evaluations (vectorized). The BDD backend compiles the
mechanism once (:mod:`privet.exact.compile`) and then answers every (input, output) query
with one pass over the diagram, so its cost is the compile time plus diagram size x
queries. :func:`choose_backend` measures the grid with a probe run (no enumeration) and,
unless enumeration is trivially cheap, the diagram with a trial compile; it picks the
cheaper and says why in one sentence. Callers that want to decide before running anything
(a memory estimate, an input cap) call it directly.
"""

from __future__ import annotations

import contextlib
import math
import signal
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.errors import (
    GridTooLargeError,
    NotEnumerableError,
    ParameterError,
    PrivetError,
    advice,
)
from ..core.mechanism import Mechanism
from ..core.noise import DEFAULT_ENUMERATION_CAP, _Probe
from .bdd import Compiled, Program
from .compile import CompileError, as_program

# Seconds per unit of work, measured on a 2-core machine (CPU time; the order of magnitude
# is what counts): Enumerate on RR n = 10/12 and discrete noisy max (5 queries), the BDD on
# RR n = 10 (one block) and n = 12 (twelve independent blocks).
ENUM_SECONDS_PER_OUTCOME = 3e-7      # one joint noise outcome x output entry, one input
BDD_SECONDS_PER_NODE_ROW = 1.4e-8    # one diagram node for one (input, output) query row
BDD_SECONDS_PER_BLOCK_ROW = 1.5e-8   # one independent block for one query row
BDD_SECONDS_PER_NODE = 2e-5          # per node and batch of queries (Python overhead)
BDD_BATCH = 1 << 18
TRIVIAL_SECONDS = 0.02               # below this, enumeration needs no trial compile
TRIAL_SECONDS = 15.0                 # "auto" gives the BDD's trial compile this long


class TrialTimeout(BaseException):
    """The trial compile of the "auto" backend ran out of its time (a BaseException, as
    KeyboardInterrupt is: the compile's handlers of every Exception must not catch it)."""


@contextlib.contextmanager
def time_limit(seconds: float):
    """Raise :class:`TrialTimeout` in this (main) thread once ``seconds`` have passed, between
    two Python steps of the compile (a CUDD operation is short; the compile is a Python loop
    over them). Elsewhere than the main thread, no limit."""
    if threading.current_thread() is not threading.main_thread() or \
            not hasattr(signal, "setitimer"):
        yield
        return

    def stop(signum, frame):
        raise TrialTimeout

    old = signal.signal(signal.SIGALRM, stop)
    # again every half second after the first, should some handler swallow one
    signal.setitimer(signal.ITIMER_REAL, seconds, 0.5)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@dataclass
class Choice:
    """The backend chosen for a mechanism, the reason, and the diagram when one was built."""

    backend: str                    # enumerate | counting | bdd | bdd-fixed
    reason: str
    program: Program | None = None
    compiled: Compiled | None = None
    compile_seconds: float = 0.0
    estimates: dict | None = None
    counted: Any = None


def grid_size(mech: Mechanism, length: int, args: Mapping[str, Any] | None = None
              ) -> tuple[int, int]:
    """Joint noise outcomes Enumerate visits per input (a probe run lists the draws), and
    the number of entries of one output."""
    probe = _Probe()
    dom = mech.domain
    low = int(dom.low) if math.isfinite(dom.low) else 0
    out = mech.run(probe, np.full(length, low), mech.resolve_args(args), check_input=False)
    width = max(1, int(np.prod(np.shape(out)[1:], dtype=np.int64)))
    total = 1
    for i, (dist, shape) in enumerate(probe.draws):
        if not dist.is_finite:
            why = "continuous" if not dist.is_discrete else "unbounded (give low and high)"
            raise NotEnumerableError(f"draw #{i + 1}: noise {dist.describe()} is {why}, so it "
                                     "cannot be enumerated exactly.")
        total *= dist.support_size() ** int(np.prod(shape, dtype=np.int64))
    return total, width


def _seconds(x: float) -> str:
    return f"{x:.2g} s" if x < 10 else f"{x:.0f} s"


def _bdd_seconds(c: Compiled, rows: int, compile_seconds: float) -> float:
    blocks = c.blocks()
    if len(blocks) > 1:
        return compile_seconds + rows * len(blocks) * BDD_SECONDS_PER_BLOCK_ROW
    batches = max(1, math.ceil(rows / BDD_BATCH))
    return compile_seconds + c.size * (rows * BDD_SECONDS_PER_NODE_ROW +
                                       batches * BDD_SECONDS_PER_NODE)


def choose_backend(mech: Mechanism, *, backend: str = "auto", fractions: bool = False,
                   args: Mapping[str, Any] | None = None, length: int,
                   n_inputs: int, n_outputs: int | None = None,
                   cap: int = DEFAULT_ENUMERATION_CAP) -> Choice:
    """Enumerate or BDD for ``mech`` at input ``length`` over ``n_inputs`` inputs.

    ``backend`` "auto" compares the estimated costs; "bdd" (or "bdd-fixed") compiles or
    raises :class:`~privet.exact.compile.CompileError` with the reason. ``n_outputs`` is the
    number of outputs queried per input (default: the diagram's whole output space).
    "auto" gives the trial compile :data:`TRIAL_SECONDS`: a diagram that does not finish
    by then falls back to Enumerate, or, when enumeration is above ``cap`` too, is refused
    in one sentence (it used to grow for many minutes and gigabytes)."""
    if backend != "auto":
        return _choose(mech, backend, fractions, args, length, n_inputs, n_outputs, cap)
    try:
        with time_limit(TRIAL_SECONDS):
            return _choose(mech, backend, fractions, args, length, n_inputs, n_outputs, cap)
    except TrialTimeout:
        pass
    try:
        grid, _ = grid_size(mech, length, args)
    except PrivetError:
        grid = None
    if grid is not None and grid <= cap:
        return Choice("enumerate", f"enumerate ({grid:,} joint noise outcomes x {n_inputs:,} "
                      f"inputs; the BDD's trial compile did not finish in "
                      f"{TRIAL_SECONDS:g} s)")
    many = "" if grid is None else f": enumeration needs {grid:,} joint noise outcomes " \
        f"(above the cap of {cap:,})"
    raise GridTooLargeError(
        f"exact inference of {mech.name!r} is beyond both backends{many}, and the BDD's "
        f"trial compile did not finish in {TRIAL_SECONDS:g} s; check a shorter input or "
        "fewer noise draws, or compile without this limit ("
        + advice("backend='bdd'", "--backend bdd") + ").")


def _choose(mech: Mechanism, backend: str, fractions: bool, args: Mapping[str, Any] | None,
            length: int, n_inputs: int, n_outputs: int | None, cap: int) -> Choice:
    if backend not in ("auto", "bdd", "bdd-fixed"):
        raise ParameterError(f"unknown backend {backend!r}; use auto, enumerate, bdd or "
                             "bdd-fixed.")
    est: dict[str, float] = {}
    grid = None
    probe_error: PrivetError | None = None  # the probe run's sentence, if it failed
    if backend == "auto":
        try:
            grid, width = grid_size(mech, length, args)
        except NotEnumerableError:
            raise
        except PrivetError as err:
            grid, probe_error = None, err
        if grid is not None and grid > cap:
            grid = None           # above the enumeration cap: Enumerate would refuse
        if grid is not None:
            est["enumerate"] = grid * width * n_inputs * ENUM_SECONDS_PER_OUTCOME
            if est["enumerate"] < TRIVIAL_SECONDS:
                return Choice("enumerate", f"enumerate ({grid:,} joint noise outcomes x "
                              f"{n_inputs:,} inputs, est. {_seconds(est['enumerate'])}: no "
                              "trial compile needed)", estimates=est)
    try:
        prog = as_program(mech, args, length)
    except CompileError as err:
        if probe_error is not None and backend == "auto":
            raise probe_error from None  # both failed: the run's own sentence says why
        if backend != "auto" or grid is None:
            raise
        return Choice("enumerate", f"enumerate (cannot compile: {str(err).rstrip('.')})",
                      estimates=est)
    why = ""
    if backend == "auto":
        from .counting import try_counted

        counted, _ = try_counted(prog, args, fractions)
        if counted is not None:
            kinds = f"{counted.size} kind" + ("s" if counted.size > 1 else "")
            return Choice("counting", f"counting (the output is a sum of {counted.n_parts:,} "
                          f"independent parts of {kinds}: exact convolution, polynomial in "
                          "the input length)", prog, counted=counted,
                          estimates=est)
    if backend in ("auto", "bdd"):
        try:
            start = time.perf_counter()
            c = prog.compile(exact=fractions)
            secs = time.perf_counter() - start
            rows = n_inputs * (n_outputs or c.output_count)
            est["bdd"] = _bdd_seconds(c, rows, secs)
            reason = (f"bdd ({c.size:,}-node diagram after a {_seconds(secs)} trial compile, "
                      f"est. {_seconds(est['bdd'])}")
            if backend == "bdd" or grid is None or est["bdd"] <= est["enumerate"]:
                if grid is not None:
                    reason += (f"; enumerate: {grid:,} joint noise outcomes x {n_inputs:,} "
                               f"inputs, est. {_seconds(est['enumerate'])}")
                return Choice("bdd", reason + ")", prog, c, secs, est)
            return Choice("enumerate", f"enumerate ({grid:,} joint noise outcomes x "
                          f"{n_inputs:,} inputs, est. {_seconds(est['enumerate'])}; "
                          + reason + "))", estimates=est)
        except CompileError as err:
            why = str(err).rstrip(".")
    # a symbolic input failed: one compilation per input (Python control flow on x is fine)
    dom = mech.domain
    x0 = [int(dom.low)] * length
    try:
        start = time.perf_counter()
        c = prog.compile(exact=fractions, x=x0)
        secs = time.perf_counter() - start
    except CompileError as err:
        if backend != "auto":
            raise CompileError(f"mechanism {mech.name!r} cannot be compiled to a BDD: "
                               f"{err}") from None
        if probe_error is not None:
            raise probe_error from None  # both failed: the run's own sentence says why
        if grid is None:
            raise CompileError(f"mechanism {mech.name!r} cannot be compiled to a BDD: "
                               f"{err}") from None
        return Choice("enumerate", f"enumerate (cannot compile: {err})", estimates=est)
    rows = n_outputs or c.output_count
    est["bdd-fixed"] = n_inputs * _bdd_seconds(c, rows, secs)
    reason = (f"bdd-fixed (one compilation per input, {_seconds(secs)} each"
              + (f"; symbolic input: {why}" if why else "") + ")")
    if backend != "auto" or grid is None or est["bdd-fixed"] <= est["enumerate"]:
        return Choice("bdd-fixed", reason, prog, None, 0.0, est)
    return Choice("enumerate", f"enumerate ({grid:,} joint noise outcomes x {n_inputs:,} "
                  f"inputs, est. {_seconds(est['enumerate'])}; {reason})", estimates=est)


__all__ = ["Choice", "choose_backend", "grid_size"]
