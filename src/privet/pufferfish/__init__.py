"""privet.pufferfish: verify Pufferfish and differential privacy of HMMs (FAIER).

Liu, Wang and Zhang, *Verifying Pufferfish Privacy in Hidden Markov Models*. A discrete
mechanism is an HMM (:mod:`.hmm`, :mod:`.models`), what an attacker knows is a scenario
(:mod:`.scenario`: secrets, discriminative pairs, a prior with unknown parameters), and
:func:`pufferfish` answers "verified up to output length k", "violated" with an observation
sequence and parameter values, or "unknown" -- never a guess.

Paths: fixed parameters are checked by exhaustive exact evaluation (:mod:`.check`); unknown
parameters in the prior by per-sequence polynomial queries to z3's nlsat, backed by
Bernstein branch-and-bound (:mod:`.smt`); symbolic HMMs (or ``method="smt"``) by Algorithm
1 with symbolic observation variables (one pair per orbit of a model's verified symmetry,
:mod:`.symmetry`). :func:`lower_bound` is Algorithm 4 (bracket with
``privet.detect``, then binary search with the exact or SMT check).

``privet.pufferfish`` is this function; reach the modules with
``from privet.pufferfish import scenario, models`` or ``import privet.pufferfish.smt``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any

from ..core.errors import (
    InputError,
    NothingToCheckError,
    ParameterError,
    advice,
    check_seconds,
)
from ..core.mechanism import Mechanism
from ..core.results import PufferfishVerdict
from .scenario import (
    EXAMPLES,
    MAX_K,
    Budget,
    Scenario,
    budget,
    load_spec,
    mechanism_scenario,
)

METHODS = ("auto", "exact", "smt")


def as_scenario(target: Any, inputs: Any = None, args: Mapping | None = None, *,
                allow_code: bool = False) -> Scenario:
    """A Scenario from a Scenario, an example name, a spec path/mapping or a Mechanism.

    A spec never runs code unless ``allow_code`` (see :func:`.scenario.load_spec`)."""
    if isinstance(target, Scenario):
        return target
    if isinstance(target, Mechanism):
        return mechanism_scenario(target, inputs=inputs, args=args)
    if isinstance(target, Mapping):
        return load_spec(target, allow_code=allow_code)
    if isinstance(target, (str, Path)):
        if str(target) in EXAMPLES:
            return EXAMPLES[str(target)]()
        return load_spec(target, allow_code=allow_code)
    raise InputError(f"cannot check {target!r}: give a Scenario, a spec file, an example name "
                     f"({', '.join(EXAMPLES)}) or a discrete privet mechanism.")


def _ratio(probs: tuple | None) -> Any:
    if not probs:
        return None
    p1, p2 = probs
    return Fraction(p1) / Fraction(p2) if p2 else float("inf")


def check_pairs(sc: Scenario) -> None:
    """Raise :class:`NothingToCheckError` when the scenario compares no two distinct secrets
    (one secret, ``pairs: []``, only pairs of a secret with itself, a one-input domain):
    every observation sequence would pass without a single probability being compared, and
    "verified" would claim a check that never happened."""
    if not any(a != b for a, b in sc.pairs):
        what = "data sets" if sc.kind == "dp" else "secrets"
        n = len(sc.initial)
        fix = (f"give at least two {what}" if n < 2 else
               "list the pairs to compare, or leave 'pairs' out to compare every two")
        raise NothingToCheckError(
            f"nothing to check: {sc.name or 'the scenario'} has {n} "
            f"{what[:-1] if n == 1 else what} and no pair of distinct {what} to compare, so "
            f"no probability would be compared; {fix}."
        )


def check_length(sc: Scenario, eps: Budget, k: int, *, method: str = "auto",
                 timeout: float = 60.0, query_timeout: float = 2.0,
                 symmetry: str = "auto") -> dict:
    """One length: {'status', 'sequence', 'pair', 'values', 'probabilities', 'solver', ...}."""
    from . import check, smt

    if not sc.symbolic and method in ("auto", "exact"):
        o = check.check_fixed(sc, eps, k)
        if o.status != "unknown" or method == "exact":
            return {"status": o.status, "sequence": o.sequence, "pair": o.pair, "values": {},
                    "probabilities": o.probabilities, "solver": "exact enumeration",
                    "message": o.message, "max_ratio": o.max_ratio,
                    "max_witness": o.max_witness, "sequences": o.n_sequences}
    if sc.symbolic and not sc.hmm.symbolic and method in ("auto", "exact"):
        o = smt.parametric_check(sc, eps, k, timeout=timeout, query_timeout=query_timeout)
    else:
        o = smt.algorithm1(sc, eps, k, timeout=timeout, symmetry=symmetry)
    return {"status": o.status, "sequence": o.sequence, "pair": o.pair, "values": o.values,
            "probabilities": o.probabilities, "solver": o.solver, "message": o.message,
            "queries": o.queries, "smt": o.details}


def pufferfish(target: Any, epsilon: Any = None, *, k_max: int | None = None,
               k_min: int = 1, timeout: float = 60.0, method: str = "auto",
               query_timeout: float = 2.0, inputs: Any = None, args: Mapping | None = None,
               progress: bool = False, symmetry: str = "auto",
               allow_code: bool = False) -> PufferfishVerdict:
    """Check epsilon-Pufferfish privacy of a scenario for observation lengths k_min..k_max.

    ``target``: a :class:`~.scenario.Scenario`, a spec file (YAML/JSON) or mapping, an
    example name (``ex2``..``ex6``, ``noisy_max``, ``above_threshold``) or a discrete
    Mechanism (checked for DP on its finite domain or ``inputs``). ``epsilon``: a number or
    ``"ln(2)"``-style text (exact e^epsilon); default the scenario's. ``k_max``: default
    the scenario's length. ``method``: ``auto`` (exact enumeration for fixed parameters,
    nlsat + branch-and-bound for unknown prior parameters, Algorithm 1 otherwise),
    ``exact`` or ``smt`` (always Algorithm 1). ``timeout`` bounds each length's solving.
    ``symmetry``: ``auto`` lets Algorithm 1 check one pair per orbit of the scenario's
    declared symmetries after verifying them exactly (:mod:`.symmetry`; recorded in
    ``details['symmetry']``), ``none`` checks every pair. ``allow_code``: let a spec's
    ``mechanism: FILE.py:NAME`` import and run that file (refused by default: a spec is data).

    The verdict stops at the first violating length; "unknown" when a solver gave up, and
    "unknown" with ``details['interrupted']`` when Ctrl-C stopped it (the lengths finished
    are kept). A scenario with no pair of distinct secrets to compare raises
    :class:`~privet.core.errors.NothingToCheckError` (the CLI exits 2): there is nothing
    to verify.
    """
    if method not in METHODS:
        raise ParameterError(f"method must be one of {', '.join(METHODS)}, got {method!r}.")
    if symmetry not in ("auto", "none"):
        raise ParameterError(f"symmetry must be 'auto' or 'none', got {symmetry!r}.")
    for value, what in ((timeout, "timeout"), (query_timeout, "query_timeout")):
        check_seconds(value, what)
    t0 = time.perf_counter()
    sc = as_scenario(target, inputs=inputs, args=args, allow_code=allow_code)
    check_pairs(sc)
    eps_in = epsilon if epsilon is not None else sc.epsilon
    if eps_in is None:
        raise ParameterError("give epsilon (for example 0.7 or ln(2)); the scenario has none.")
    eps = budget(eps_in)
    kmax = int(k_max if k_max is not None else sc.k)
    if kmax < 1 or k_min < 1 or k_min > kmax or kmax > MAX_K:
        raise ParameterError(f"observation lengths must satisfy 1 <= k_min <= k_max <= "
                             f"{MAX_K}, got {k_min}..{kmax}; give "
                             + advice(f"k_max=... up to {MAX_K}", f"--k-max up to {MAX_K}")
                             + ".")
    per_k = []
    solvers = []
    last: dict = {}
    status = "verified"
    k_done = kmax
    bar = _progress(progress, kmax - k_min + 1)
    try:
        for k in range(k_min, kmax + 1):
            tk = time.perf_counter()
            last = check_length(sc, eps, k, method=method, timeout=timeout,
                                query_timeout=query_timeout, symmetry=symmetry)
            per_k.append({"k": k, "status": last["status"],
                          "seconds": time.perf_counter() - tk,
                          "sequences": last.get("sequences")})
            if last["solver"] not in solvers:
                solvers.append(last["solver"])
            if bar is not None:
                bar[0].advance(bar[1])
            if last["status"] != "verified":
                status = last["status"]
                k_done = k
                break
    except KeyboardInterrupt:
        status = "unknown"
        last = {"message": "interrupted"}
        k_done = k_min + len(per_k)
    finally:
        if bar is not None:
            bar[0].stop()
    details: dict = {"lengths": per_k, "kind": sc.kind, "pairs": len(sc.pairs),
                     "states": sc.hmm.n_states, "observations": len(sc.hmm.observations)}
    if last.get("message") == "interrupted":
        details["interrupted"] = True
    if status == "unknown":
        details["verified_up_to"] = k_done - 1
    if last.get("smt"):  # Algorithm 1 details of the last length (symmetry reduction, ...)
        details["smt"] = last["smt"]
        if "symmetry" in last["smt"]:
            details["symmetry"] = last["smt"]["symmetry"]
    if last.get("max_ratio") is not None:
        details["max_ratio"] = last["max_ratio"]
        details["max_witness"] = last.get("max_witness")
    probs = last.get("probabilities") if status == "violated" else None
    return PufferfishVerdict(
        scenario=sc.name, status=status, k=k_done, epsilon=eps.epsilon,
        epsilon_text=eps.text,
        counterexample=tuple(last["sequence"]) if status == "violated" else None,
        pair=tuple(last["pair"]) if status == "violated" else None,
        parameters={k: v for k, v in (last.get("values") or {}).items()}
        if status == "violated" else {},
        probabilities=probs, ratio=_ratio(probs), solver=" / ".join(solvers),
        seconds=time.perf_counter() - t0, message=last.get("message", "") or "",
        details=details,
    )


def _progress(enabled: bool, total: int) -> Any:
    if not enabled:
        return None
    from rich.progress import Progress

    p = Progress(transient=True)
    p.start()
    return p, p.add_task("pufferfish lengths", total=total)


def __getattr__(name: str) -> Any:  # lazy: privet.pufferfish.lower_bound etc.
    if name == "lower_bound":
        from .bound import lower_bound

        return lower_bound
    raise AttributeError(name)


__all__ = ["Budget", "Scenario", "as_scenario", "budget", "check_length", "check_pairs",
           "load_spec", "pufferfish"]
