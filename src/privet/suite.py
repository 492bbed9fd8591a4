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
import re
import time
from collections.abc import Callable, Sequence
from typing import Any

from .core.errors import PrivetError
from .core.mechanism import Mechanism
from .core.results import (
    CertifiedProfile,
    ExactProfile,
    SuiteLine,
    SuiteResult,
    SuiteRow,
    inconclusive_text,
    say_certified,
    say_exact_violation,
    say_found,
)
from .core.seeds import SeedLike, as_seed
from .core.text import fmt_num, fmt_p, fmt_value, fmt_vec, pct
from .execution import get_executor
from .execution.progress import progress_bar
from .stats.multiplicity import holm, holm_threshold

ALPHA = 0.05  # the family-wise error rate of a run's statistical claims of a violation
STATISTICAL = ("detect", "search")  # engines whose claims are statistical (Holm-corrected)


def _row(mech: Mechanism, engine: str, verdict: str, figure: float | None, start: float,
         result: Any = None, **details: Any) -> SuiteRow:
    return SuiteRow(mechanism=mech.name, engine=engine, claimed_epsilon=mech.epsilon,
                    true_epsilon=mech.true_epsilon, verdict=verdict, figure=figure,
                    seconds=round(time.perf_counter() - start, 3), details=details,
                    result=result, claim=mech.describe_claim())


def _representative_input(mech: Mechanism) -> list[float]:
    from . import mechanisms

    if not _user(mech):
        try:
            return mechanisms.example_input(mech.name).tolist()
        except PrivetError:
            pass
    length = mech.domain.length
    # a fixed length as declared; otherwise short (3) when the inputs will be enumerated
    want = 3 if _user(mech) and mech.supports("enumerate") and mech.domain.integer else 5
    n = length if isinstance(length, int) else \
        (min(max(length[0], want), length[1]) if isinstance(length, tuple) else want)
    lo = mech.domain.low if math.isfinite(mech.domain.low) else 0.0
    hi = mech.domain.high if math.isfinite(mech.domain.high) else lo + 1.0
    return [min(max(1.0, lo), hi)] * n


@dataclasses.dataclass(frozen=True)
class Options:
    """What every engine runner of the suite receives. ``level``: the level each statistical
    test runs at, alpha / m for the m statistical claims of the run (Holm's first step), so
    a sequential test stops early only on evidence that survives the correction."""

    quick: bool = False
    seed: int | None = 0
    executor: Any = None
    level: float = ALPHA


def run_sample(mech: Mechanism, opt: Options) -> SuiteRow | None:
    start = time.perf_counter()
    n = 100_000 if opt.quick else 500_000
    mech.sample(_representative_input(mech), n, seed=opt.seed)
    rate = n / max(time.perf_counter() - start, 1e-9)
    return _row(mech, "sample", "ok", rate, start)


def run_detect(mech: Mechanism, opt: Options) -> SuiteRow | None:
    from .detect import detect

    start = time.perf_counter()
    sizes = dict(n_select=20_000, n_final=100_000) if opt.quick else {}
    # an (ε, δ) test sizes its fresh sample by the claim (about e^ε/δ runs): the suite caps it
    sizes["n_max"] = 2_000_000 if opt.quick else 20_000_000
    res = detect(mech, seed=opt.seed, executor=opt.executor, alpha=opt.level, **sizes)
    verdict = say_found(res.p_value) if res.counterexample is not None else \
        "no violation found"
    cx = res.counterexample or res.details.get("selected")
    return _row(mech, "detect", verdict, res.p_value, start, result=res, text=res.verdict,
                p_value=res.p_value, counterexample=cx.event if cx is not None else None)


USER_SOURCE = "user"  # the source given to mechanisms a user names as FILE.py:NAME / MODULE:NAME
USER_INPUT_CAP = 4096  # exact and pufferfish on a user mechanism: at most this many inputs


def _user(mech: Mechanism) -> bool:
    return mech.source == USER_SOURCE


def _small_finite_domain(mech: Mechanism) -> bool:
    d = mech.domain
    if not (mech.supports("enumerate") and d.integer and math.isfinite(d.low)
            and math.isfinite(d.high)):
        return False
    n, v = len(_representative_input(mech)), int(d.high) - int(d.low) + 1
    if mech.neighbors.kind != "add_remove":
        return v ** n <= USER_INPUT_CAP
    # add/remove neighbors: exact checks lengths n and n + 1, both in the domain's range
    longest = d.length[1] if isinstance(d.length, tuple) else d.length
    fits = longest is None or n + 1 <= longest
    return fits and v ** n + v ** (n + 1) <= USER_INPUT_CAP


def _discrete_library(mech: Mechanism) -> bool:
    if _user(mech):  # a user's mechanism: whenever its noise and domain can be enumerated
        return _small_finite_domain(mech)
    return mech.supports("enumerate") and mech.source.lower().startswith(("wmc", "faier"))


def run_exact(mech: Mechanism, opt: Options) -> SuiteRow | None:
    if not _discrete_library(mech):
        return None
    from .exact import exact

    start = time.perf_counter()
    length = len(_representative_input(mech))
    if mech.claim is not None and mech.claim.kind != "pure":   # check the whole claim
        from .exact import profile

        prof = profile(mech, length=length)
        return _row(mech, "exact", f"{prof.check.split(':')[0]} (n={length})",
                    prof.rho, start, result=prof, domain=prof.domain)
    # Enumerate or the compiled BDD, whichever the cost estimate says is cheaper
    res = exact(mech, length=length, backend="auto")
    verdict = (f"verified ε ≤ claimed (length {length})" if res.verified
               else f"violation (exact): exact ε > claimed (length {length})")
    return _row(mech, "exact", verdict, res.epsilon, start, result=res, domain=res.domain,
                witness=res.witness, length=length)


def _searchable(mech: Mechanism) -> bool:
    # the library: DP-Finder's mechanisms; a user's mechanism: when it runs on the noise API
    return mech.source.lower().startswith("dp-finder") or \
        (_user(mech) and mech.supports("replay"))


def run_search(mech: Mechanism, opt: Options) -> SuiteRow | None:
    if not _searchable(mech):
        return None
    from .search import search

    start = time.perf_counter()
    if mech.claim is not None and mech.claim.kind != "pure":   # the certified profile
        # certified at 1 - alpha/m, Holm's first step: a certificate at that level is a
        # rejection under Holm whatever the other p-values (no p-value needed)
        res = search(mech, seed=opt.seed, executor=opt.executor, confidence=1 - opt.level,
                     n_max=2_000_000 if opt.quick else 20_000_000)
        verdict = "violation certified" if res.violates else "no violation found"
        return _row(mech, "search", f"{verdict} ({res.confidence:.2%} confidence)",
                    res.delta_lower,
                    start, result=res, witness=res.witness.event if res.witness else None)
    res = search(mech, iterations=2 if opt.quick else 5, seed=opt.seed, executor=opt.executor)
    bound = getattr(res, "bound", res)
    violates = bool(mech.epsilon is not None and bound.value > mech.epsilon)
    verdict = say_certified(bound.value, bound.confidence) if violates else \
        f"no violation found ({pct(bound.confidence)} confidence)"
    # a bound confirmed by enumeration is exact (no p-value); a sampled one carries the
    # p-value of H0: epsilon <= claimed from its fresh confirmation sample
    p = None if bound.exact or bound.witness is None else bound.witness.p_value
    return _row(mech, "search", verdict, bound.value, start,
                result=bound, witness=bound.witness.event if bound.witness else None,
                p_value=p)


def run_pufferfish(mech: Mechanism, opt: Options) -> SuiteRow | None:
    if not _discrete_library(mech):
        return None
    from .pufferfish import pufferfish

    start = time.perf_counter()
    length = len(_representative_input(mech))
    inputs = [tuple(r) for r in mech.domain.inputs(length).tolist()]
    res = pufferfish(mech, inputs=inputs)
    ratio = float(res.ratio) if res.ratio else None
    status = {"verified": f"verified to length {res.k}",
              "violated": f"violation (exact) at length {res.k}"}.get(
                  res.status, f"{res.status} at length {res.k}")
    return _row(mech, "pufferfish", f"{status} (n={length})",
                math.log(ratio) if ratio and math.isfinite(ratio) else ratio, start,
                result=res, text=res.describe(), length=length)


def run_synth(mech: Mechanism, opt: Options) -> SuiteRow | None:
    if not mech.name.startswith("kolahal."):
        return None
    from .synth import synth

    start = time.perf_counter()
    res = synth(mech.name, seed=opt.seed)
    rank = res.textbook_rank
    verdict = f"textbook noise at rank {rank}" if rank else "textbook noise not recovered"
    return _row(mech, "synth", verdict, rank, start, result=res,
                best=res.best.describe() if res.best is not None else None)


def run_floats(mech: Mechanism, opt: Options) -> SuiteRow | None:
    """Porosity (privet.floats): for native mechanisms f(D) + noise, outputs of one input
    that its neighbour provably cannot produce (ε = ∞ with a replayable witness)."""
    if not mech.supports("replay") or mech.neighbors.kind == "add_remove":
        return None
    from .core.errors import UnsupportedError
    from .floats import porosity
    from .floats.reach import additive

    x = _representative_input(mech)
    x2 = list(x)
    x2[0] = x2[0] + mech.neighbors.delta if mech.neighbors.kind != "replace_one" else \
        x2[0] + 1.0
    try:
        additive(mech, x)
        additive(mech, x2)
    except (UnsupportedError, PrivetError):
        return None  # not f(D) + one invertible draw: the exact check does not apply
    start = time.perf_counter()
    res = porosity(mech, x, x2, n=2_000 if opt.quick else 10_000, method="exact",
                   first=True, seed=opt.seed)
    return _row(mech, "floats", res.verdict, res.epsilon, start, result=res)


ENGINES: dict[str, Callable[[Mechanism, Options], SuiteRow | None]] = {
    "sample": run_sample,
    "detect": run_detect,
    "exact": run_exact,
    "search": run_search,
    "pufferfish": run_pufferfish,
    "synth": run_synth,
    "floats": run_floats,
}
# synth takes minutes per sketch (benchmarks/synth_kolahal.py): only on request
DEFAULT_ENGINES = ("sample", "detect", "exact", "search", "pufferfish", "floats")


def _available(engine: str) -> bool:
    if engine in ("sample", "floats"):  # floats is a layer, not an engine function
        return True
    try:
        module = importlib.import_module(f"privet.{engine}")
    except ImportError:
        return False
    return hasattr(module, engine)


def _was_interrupted(result: Any) -> bool:
    details = getattr(result, "details", None) or {}
    return bool(details.get("interrupted")) or getattr(result, "message", "") == "interrupted"


def _short_domain(domain: str) -> str:
    """'27 inputs (integers in [0, 2], ..., checked at length 3); neighbors: ...' or
    '81 inputs (all 4-lists of integers in [0, 2]); ...' -> '27 inputs of length 3' (the
    whole text stays in ``SuiteLine.exact_domain``)."""
    head = domain.split(" (")[0].split(";")[0]
    m = re.search(r"checked at length (\d+)|all (\d+)-lists", domain)
    return f"{head} of length {m.group(1) or m.group(2)}" if m else head


def _short(v: Any) -> str:
    """A counterexample's input as one short token run: 3 digits, repeats counted."""
    return fmt_vec(v, short=True)


def _significant(row: SuiteRow) -> str:
    """'yes', 'inconclusive' or 'no': a statistical row's claim after the run's correction
    (rows made outside :func:`suite` fall back to their own level)."""
    d = row.details or {}
    if "significant" in d:
        return d["significant"]
    if row.verdict.startswith("error"):
        return "no"
    if row.engine == "detect":
        return "yes" if row.result is not None and row.result.counterexample is not None \
            else "no"
    # search: asked only when the bound exceeds the claim, which it certifies at its own
    # confidence
    return "yes"


def summarize(mechanism: str, rows: Sequence[SuiteRow], complete: bool = True) -> SuiteLine:
    """Join one mechanism's engine rows into one verdict that cannot contradict itself.

    ``complete=False`` (Ctrl-C stopped the run on this mechanism): violations already found
    stand, but nothing is called verified and the line says the run was cut short.

    The sentence leads with the strongest claim -- a violation (exact > certified >
    statistical > Pufferfish, for the witness shown), else an inconclusive statistical
    result (significant before, not after, the run's correction for multiple tests), else
    "verified" when exact inference or the SMT check proved the claim, else "no violation
    found" -- and then says what the other engines established and on what: a proof on a
    smaller domain (inputs of length 4) does not contradict a violation found on inputs of
    length 10, and the line says both with their domains. A statistical violation on inputs
    that a proof covers says so: the engines disagree (report it).
    """
    by = {r.engine: r for r in rows}
    first = rows[0]
    claimed = first.claimed_epsilon
    res = {e: r.result for e, r in by.items()}
    violations: list[tuple[str, str | None]] = []
    verified: list[tuple[str, str, str]] = []  # (who, what, on which domain)
    inconclusive: list[str] = []
    errors = [f"{r.engine}: {r.verdict[len('error: '):]}" for r in rows
              if r.verdict.startswith("error:")]
    exact_eps = exact_domain = None
    proof_length = None
    ex = res.get("exact")
    if isinstance(ex, ExactProfile):  # an (ε, δ) or zCDP claim, checked on the exact profile
        exact_domain = ex.domain
        if ex.verified:
            verified.append(("exact inference", ex.claim, _short_domain(ex.domain)))
        elif ex.verified is False:
            violations.append((ex.check, None))
    elif ex is not None:
        exact_eps, exact_domain = float(ex.epsilon), ex.domain
        if ex.verified:
            if not _was_interrupted(ex):  # an interrupted run is only a lower bound
                proof_length = by["exact"].details.get("length")
                verified.append(("exact inference", f"ε ≤ {fmt_num(claimed)}",
                                 _short_domain(ex.domain)))
        elif claimed is not None:  # a lower bound above the claim refutes it either way
            violations.append((say_exact_violation(ex.epsilon, claimed) +
                               f" ({_short_domain(ex.domain)})",
                               f"D1={_short(ex.witness[0])}, D2={_short(ex.witness[1])}, "
                               f"output {_short(ex.witness[2])}" if len(ex.witness) == 3 else None))
    lower = conf = None
    bd = res.get("search")
    if isinstance(bd, CertifiedProfile):
        # its verdict has its own word ("violation certified" or "violation (exact)"); the
        # certified figure is ε at the claim's δ
        if math.isfinite(bd.epsilon_lower):
            lower, conf = float(bd.epsilon_lower), float(bd.confidence)
        if bd.violates:
            w = bd.witness
            violations.append((bd.verdict,
                               f"D1={_short(w.d1)}, D2={_short(w.d2)}, {w.event}" if w else None))
    elif bd is not None:
        lower, conf = float(bd.value), float(bd.confidence)
        w = bd.witness
        seen = f"D1={_short(w.d1)}, D2={_short(w.d2)}, {w.event}" if w else None
        state = _significant(by["search"]) if claimed is not None and bd.value > claimed \
            else "no"
        p = (by["search"].details or {}).get("p_value")
        if state == "yes":
            how = "exact" if bd.exact else f"{pct(bd.confidence)} confidence" + \
                (f", {fmt_p(p)}" if p is not None else "")
            violations.append((f"violation certified: ε ≥ {fmt_num(bd.value)} ({how}) on "
                               f"inputs of length {len(w.d1) if w else '?'}", seen))
        elif state == "inconclusive":
            inconclusive.append(by["search"].verdict + f" (search: ε ≥ {fmt_num(bd.value)})")
    fl = res.get("floats")
    if fl is not None and fl.witness is not None:  # exact: before the statistical ones
        w = fl.witness
        violations.insert(0, ("violation (exact): ε = ∞ in floating point (porosity)",
                              f"D1={_short(w.d1)}, D2={_short(w.d2)}, output {w.value_hex} "
                              f"({w.reason})"))
    if "detect" in by:
        state = _significant(by["detect"])
        dt = res["detect"]
        cx = None if dt is None else (dt.counterexample or dt.details.get("selected"))
        if state == "yes" and cx is not None:
            found = "violation (exact)" if cx.exact else say_found(dt.p_value)
            text = f"{found} on inputs of length {len(cx.d1)}"
            if proof_length is not None and len(cx.d1) == proof_length:
                text = (f"{found} on inputs that exact inference verified: "
                        "the engines disagree, report this")
            violations.append((text, f"D1={_short(cx.d1)}, D2={_short(cx.d2)}, {cx.event}"))
        elif state == "inconclusive":
            inconclusive.append(by["detect"].verdict)
    pf = res.get("pufferfish")
    if pf is not None:
        n = by["pufferfish"].details.get("length")
        if pf.violated:
            on = f" on inputs of length {n}" if n else ""
            violations.append((f"violation (exact): Pufferfish/DP check{on}",
                               "observation sequence " + " ".join(
                                   fmt_value(o) for o in pf.counterexample or ())
                               + " under " + " vs ".join(map(str, pf.pair or ()))))
        elif pf.verified and not verified:
            verified.append(("the SMT/exact check",
                             f"ε ≤ {fmt_num(claimed)} for outputs of length ≤ {pf.k}",
                             f"inputs of length {n}" if n else "inputs it checked"))
    if not complete:
        verified = []
    if violations:
        verdict, witness = violations[0]
        for who, what, where in verified:  # not a contradiction: a smaller domain
            verdict += f"; {who} verified {what} only on the {where}"
    elif inconclusive:
        verdict, witness = inconclusive[0], None
        for who, what, where in verified:
            verdict += f"; {who} verified {what} on the {where}"
    elif not complete:
        verdict, witness = "interrupted before every engine ran", None
    elif verified:
        who, what, where = verified[0]
        verdict, witness = f"verified {what} ({where})", None
    elif errors and len(errors) == len(rows):
        verdict, witness = "error: " + "; ".join(errors), None
    else:
        verdict, witness = "no violation found", None
    return SuiteLine(mechanism=mechanism, claimed_epsilon=claimed, claim=first.claim,
                     true_epsilon=first.true_epsilon, verdict=verdict, counterexample=witness,
                     lower_bound=lower, confidence=conf, exact_epsilon=exact_eps,
                     exact_domain=exact_domain,
                     seconds=round(sum(r.seconds or 0.0 for r in rows), 3),
                     engines=tuple(r.engine for r in rows))


def planned_tests(library: dict[str, Mechanism], engines: Sequence[str]) -> int:
    """m: how many statistical claims of a violation the run may make (one detect test per
    mechanism, one certified bound per searched one), counted before it starts."""
    m = 0
    for mech in library.values():
        m += "detect" in engines
        m += "search" in engines and _searchable(mech)
    return m


def correct(rows: Sequence[SuiteRow], alpha: float, tests: int) -> list[SuiteRow]:
    """Holm's procedure over the statistical rows' p-values (family-wise error <= alpha).

    ``tests`` is the number of claims planned (at least the number of p-values: an
    interrupted run corrects for what it meant to test). Each statistical row's verdict
    becomes "violation found (p = ...)" / "violation certified ..." when Holm rejects,
    "inconclusive: p = ..., not significant after correction for m tests" when only the
    uncorrected test does, else "no violation found"; ``details['significant']`` keeps it.
    """
    idx = [i for i, r in enumerate(rows) if r.engine in STATISTICAL
           and (r.details or {}).get("p_value") is not None]
    ps = [float(rows[i].details["p_value"]) for i in idx]
    m = max(int(tests), len(ps))
    # Holm over m planned tests: pad with p = 1 for claims that never ran
    rejected, adjusted = holm(ps + [1.0] * (m - len(ps)), alpha)
    out = list(rows)
    for j, i in enumerate(idx):
        r, p = rows[i], ps[j]
        if rejected[j]:
            state = "yes"
        elif p <= alpha and r.engine == "detect" or \
                r.engine == "search" and r.verdict.startswith("violation certified"):
            state = "inconclusive"
        else:
            state = "no"
        if state == "yes":
            verdict = (say_found(p) if r.engine == "detect" else
                       f"violation certified: ε ≥ {fmt_num(r.figure)} ({fmt_p(p)})")
        elif state == "inconclusive":
            verdict = inconclusive_text(p, m)
        else:
            verdict = "no violation found"
        out[i] = dataclasses.replace(r, verdict=verdict, details={
            **r.details, "significant": state, "holm_adjusted_p": float(adjusted[j]),
            "tests": m, "alpha": alpha})
    return out


def library_selection(only: Sequence[str] | None = None) -> dict[str, Mechanism]:
    """The built-in library, or the names/papers in ``only`` (real-library adapters too).

    An entry of ``only`` may also be a user's mechanism, ``path/to/file.py:NAME`` or
    ``module:NAME`` (or a :class:`Mechanism` object): every engine whose method applies to
    it then runs (exact and pufferfish when its noise is discrete and its integer domain
    has at most ``USER_INPUT_CAP`` inputs, search when it uses the noise API).
    """
    from . import mechanisms

    library = dict(mechanisms.all())
    if not only:
        return library
    chosen: dict[str, Mechanism] = {}
    names = []
    for item in only:
        if isinstance(item, Mechanism) or ":" in str(item):
            mech = item if isinstance(item, Mechanism) else _load_user(str(item))
            chosen[mech.name if isinstance(item, Mechanism) else str(item)] = \
                mech.replace(source=USER_SOURCE)
        else:
            names.append(str(item))
    if names:
        library.update(mechanisms.opt_in())  # floating-point and DP-Sniper's, by name
        extra = getattr(mechanisms, "real_libraries", None)
        if extra is not None:
            library.update(extra())
        keep = set(names)
        found = {k: m for k, m in library.items() if k in keep or k.split(".")[0] in keep}
        if not found:
            raise PrivetError(f"no library mechanism matches {', '.join(names)}; "
                              "see privet list.")
        chosen = {**found, **chosen}
    return chosen


def _load_user(target: str) -> Mechanism:
    from .cli_support import load_mechanism

    mech = load_mechanism(target)
    if mech.claim is None:  # a zCDP claim (ρ, no ε) is a claim too: the library runs some
        raise PrivetError(f"{target} claims nothing: declare its claim with "
                          "@privet.mechanism(epsilon=...), (epsilon=..., delta=...) or "
                          "(rho=...) to run the suite on it.")
    return mech


def suite(engines: Sequence[str] | None = None, only: Sequence[str] | None = None,
          quick: bool = False, seed: SeedLike = 0, progress: bool = False,
          executor: Any = None, alpha: float = ALPHA) -> SuiteResult:
    """Run the chosen engines (default: all available but synth) over the library.

    Returns a :class:`~privet.core.results.SuiteResult`: ``rows`` (one per mechanism and
    engine that applies, each with the engine's full result) and ``lines`` (one per
    mechanism, the engines joined by :func:`summarize`). ``quick`` uses smaller samples
    (about 1 minute on 2 idle cores instead of about 2). ``executor`` is passed to the
    sampling engines (``'processes'``, ``'dask://HOST:PORT'``, ...). Ctrl-C stops the run
    and keeps what finished (``interrupted=True``).

    Error control: the run's statistical claims of a violation (detect's tests, search's
    sampled certificates; exact and SMT results are proofs and need none) are corrected
    together with Holm's procedure (:mod:`privet.stats.multiplicity`), so the probability
    that *any* line wrongly reads "violation" is at most ``alpha`` (family-wise error).
    Each sequential test runs at level alpha / m, Holm's first step, so that it stops only
    on evidence the correction keeps. A p-value significant before the correction but not
    after reads "inconclusive: p = ..., not significant after correction for m tests".
    """
    chosen = list(engines) if engines else [e for e in DEFAULT_ENGINES if _available(e)]
    unknown = [e for e in chosen if e not in ENGINES]
    if unknown:
        raise PrivetError(f"unknown engine(s) {', '.join(unknown)}; use {', '.join(ENGINES)}.")
    missing = [e for e in chosen if not _available(e)]
    if missing:
        raise PrivetError(f"engine(s) {', '.join(missing)} need an optional dependency; "
                          "install privet[suite].")
    if not 0 < float(alpha) < 1:
        raise PrivetError(f"alpha must lie in (0, 1), got {alpha!r}.")
    library = library_selection(only)
    tests = planned_tests(library, chosen)
    # one executor for the whole run (one Dask client or cluster, not one per mechanism)
    shared = get_executor(executor) if isinstance(executor, str) else executor
    seed = as_seed(seed)  # every engine gets (and the result records) one int
    opt = Options(quick=quick, seed=seed, executor=shared,
                  level=holm_threshold(float(alpha), tests))
    t0 = time.perf_counter()
    rows: list[SuiteRow] = []
    interrupted = False
    with progress_bar(len(library) * len(chosen), "suite", enabled=progress) as advance:
        current = None
        try:
            for key, mech in library.items():
                current = key
                for engine in chosen:
                    advance(0, description=f"suite: {key} · {engine}")
                    start = time.perf_counter()
                    try:
                        row = ENGINES[engine](mech, opt)
                    except PrivetError as err:
                        row = _row(mech, engine, f"error: {err}", None, start)
                    if row is not None:
                        rows.append(dataclasses.replace(row, mechanism=key))
                    advance(1)
                    if row is not None and _was_interrupted(row.result):
                        # the engine caught Ctrl-C and kept its partial result: stop here too
                        raise KeyboardInterrupt
        except KeyboardInterrupt:
            interrupted = True
        finally:
            if shared is not executor:
                shared.close()
    rows = correct(rows, float(alpha), tests)
    grouped: dict[str, list[SuiteRow]] = {}
    for r in rows:
        grouped.setdefault(r.mechanism, []).append(r)
    lines = tuple(summarize(k, v, complete=not (interrupted and k == current))
                  for k, v in grouped.items())
    return SuiteResult(rows=tuple(rows), lines=lines, engines=tuple(chosen), quick=quick,
                       interrupted=interrupted, seconds=round(time.perf_counter() - t0, 2),
                       seed=seed, alpha=float(alpha), tests=tests)
