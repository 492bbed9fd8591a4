"""``privet suite``: every engine that applies, over the built-in mechanism library.

Each engine contributes one :class:`~privet.core.results.SuiteRow` per mechanism it
applies to: ``sample`` (throughput, every mechanism), ``detect`` (StatDP test at the
claimed ε, every sampleable mechanism), ``exact`` (tight ε of the discrete ones),
``search`` (certified lower bound, DP-Finder's mechanisms), ``pufferfish`` (DP of the
discrete ones through their HMM) and, on request (``--engines synth``, minutes per sketch),
``synth`` (KOLAHAL's sketches: the rank of the textbook noise). An engine whose package
cannot be imported (an optional dependency missing) is left out.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import time
from collections.abc import Callable, Sequence
from typing import Any

from .core.errors import PrivetError
from .core.mechanism import Mechanism
from .core.results import SuiteRow
from .execution.progress import progress_bar


def _row(mech: Mechanism, engine: str, verdict: str, figure: float | None, start: float,
         **details: Any) -> SuiteRow:
    return SuiteRow(mechanism=mech.name, engine=engine, claimed_epsilon=mech.epsilon,
                    true_epsilon=mech.true_epsilon, verdict=verdict, figure=figure,
                    seconds=round(time.perf_counter() - start, 3), details=details)


def _representative_input(mech: Mechanism) -> list[float]:
    from . import mechanisms

    try:
        return mechanisms.example_input(mech.name).tolist()
    except PrivetError:
        pass
    length = mech.domain.length
    n = length if isinstance(length, int) else (length[0] if isinstance(length, tuple) else 5)
    lo = mech.domain.low if math.isfinite(mech.domain.low) else 0.0
    hi = mech.domain.high if math.isfinite(mech.domain.high) else lo + 1.0
    return [min(max(1.0, lo), hi)] * n


def run_sample(mech: Mechanism, quick: bool, seed: int | None) -> SuiteRow | None:
    start = time.perf_counter()
    n = 100_000 if quick else 500_000
    mech.sample(_representative_input(mech), n, seed=seed)
    rate = n / max(time.perf_counter() - start, 1e-9)
    return _row(mech, "sample", "ok", rate, start)


def run_detect(mech: Mechanism, quick: bool, seed: int | None) -> SuiteRow | None:
    from .detect import detect

    start = time.perf_counter()
    sizes = dict(n_select=20_000, n_final=100_000) if quick else {}
    res = detect(mech, seed=seed, **sizes)
    verdict = "violation found" if res.counterexample is not None else "no violation found"
    return _row(mech, "detect", verdict, res.p_value, start, text=res.verdict,
                counterexample=res.counterexample.event if res.counterexample else None)


def run_exact(mech: Mechanism, quick: bool, seed: int | None) -> SuiteRow | None:
    if not mech.supports("enumerate") or not mech.source.lower().startswith(("wmc", "faier")):
        return None
    from .exact import exact
    from .exact.programs import for_mechanism

    start = time.perf_counter()
    length = len(_representative_input(mech))
    # the BDD twin of a library mechanism when there is one (one compilation for all inputs)
    backend = "bdd" if for_mechanism(mech, length) is not None else "enumerate"
    res = exact(mech, length=length, backend=backend)
    verdict = (f"verified ≤ claimed (n={length})" if res.verified
               else f"exact ε > claimed (n={length})")
    return _row(mech, "exact", verdict, res.epsilon, start, domain=res.domain,
                witness=res.witness)


def run_search(mech: Mechanism, quick: bool, seed: int | None) -> SuiteRow | None:
    if not mech.source.lower().startswith("dp-finder"):
        return None
    from .search import search

    start = time.perf_counter()
    res = search(mech, iterations=2 if quick else 5, seed=seed)
    bound = getattr(res, "bound", res)
    violates = bool(mech.epsilon is not None and bound.value > mech.epsilon)
    verdict = "certified violation" if violates else "no violation found"
    return _row(mech, "search", f"{verdict} ({bound.confidence:.0%})", bound.value, start,
                witness=bound.witness.event if bound.witness else None)


def run_pufferfish(mech: Mechanism, quick: bool, seed: int | None) -> SuiteRow | None:
    if not mech.supports("enumerate") or not mech.source.lower().startswith(("wmc", "faier")):
        return None
    from .pufferfish import pufferfish

    start = time.perf_counter()
    length = len(_representative_input(mech))
    inputs = [tuple(r) for r in mech.domain.inputs(length).tolist()]
    res = pufferfish(mech, inputs=inputs)
    ratio = float(res.ratio) if res.ratio else None
    status = (f"verified to length {res.k}" if res.status == "verified" else
              f"{res.status} at length {res.k}")
    return _row(mech, "pufferfish", f"{status} (n={length})",
                math.log(ratio) if ratio and math.isfinite(ratio) else ratio, start,
                text=res.describe())


def run_synth(mech: Mechanism, quick: bool, seed: int | None) -> SuiteRow | None:
    if not mech.name.startswith("kolahal."):
        return None
    from .synth import synth

    start = time.perf_counter()
    res = synth(mech.name, seed=seed)
    rank = res.textbook_rank
    verdict = f"textbook noise at rank {rank}" if rank else "textbook noise not recovered"
    return _row(mech, "synth", verdict, rank, start,
                best=res.best.describe() if res.best is not None else None)


ENGINES: dict[str, Callable[[Mechanism, bool, int | None], SuiteRow | None]] = {
    "sample": run_sample,
    "detect": run_detect,
    "exact": run_exact,
    "search": run_search,
    "pufferfish": run_pufferfish,
    "synth": run_synth,
}
# synth takes minutes per sketch (benchmarks/synth_kolahal.py): only on request
DEFAULT_ENGINES = ("sample", "detect", "exact", "search", "pufferfish")


def _available(engine: str) -> bool:
    if engine == "sample":
        return True
    try:
        module = importlib.import_module(f"privet.{engine}")
    except ImportError:
        return False
    return hasattr(module, engine)


def suite(engines: Sequence[str] | None = None, only: Sequence[str] | None = None,
          quick: bool = False, seed: int | None = 0, progress: bool = False) -> list[SuiteRow]:
    """Run the chosen engines (default: all available) over the library (or ``only``)."""
    from . import mechanisms

    chosen = list(engines) if engines else [e for e in DEFAULT_ENGINES if _available(e)]
    unknown = [e for e in chosen if e not in ENGINES]
    if unknown:
        raise PrivetError(f"unknown engine(s) {', '.join(unknown)}; use {', '.join(ENGINES)}.")
    library = mechanisms.all()
    if only:
        keep = set(only)
        library = {k: m for k, m in library.items()
                   if k in keep or k.split(".")[0] in keep}
        if not library:
            raise PrivetError(f"no library mechanism matches {', '.join(only)}; see privet list.")
    rows: list[SuiteRow] = []
    with progress_bar(len(library) * len(chosen), "suite", enabled=progress) as advance:
        try:
            for key, mech in library.items():
                for engine in chosen:
                    start = time.perf_counter()
                    try:
                        row = ENGINES[engine](mech, quick, seed)
                    except PrivetError as err:
                        row = _row(mech, engine, f"error: {err}", None, start)
                    if row is not None:
                        rows.append(dataclasses.replace(row, mechanism=key))
                    advance(1)
        except KeyboardInterrupt:
            rows.append(SuiteRow("(interrupted)", "-", None, None, "stopped by Ctrl-C"))
    return rows
