"""privet.synth: synthesize the noise of a mechanism sketch (KOLAHAL, Roy-Hsu-Albarghouthi).

``privet.synth(sketch)`` runs the algorithm of Fig. 4 of the paper::

    γ  <- fixParams(M•)                       (examples.fix_params)
    Ex <- selectExamples(γ(M•))               (examples.select_examples, Sec. IV.B)
    R  <- getNoiseRegion(γ(M•), Ex)           (region.noise_region, Sec. IV.C)
    η1..ηn <- findExpr(M•, G, R, Ex)          (findexpr, Sec. IV.D)

and returns a :class:`~privet.core.results.SynthResult`: the ranked completions as
runnable mechanisms (``result.mechanisms()``) with their evidence. Note that attribute
access ``privet.synth`` gives this function; import the rest from the package::

    from privet.synth import sketch, Grammar, Importance
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..core.errors import PrivetError, check_count, check_epsilon
from ..core.mechanism import Mechanism
from ..core.results import (
    Completion,
    Counterexample,
    SynthResult,
    say_exact_violation,
    say_found,
    say_verified,
)
from ..core.seeds import SeedLike, as_seed
from ..core.text import fmt_num, fmt_p
from ..execution import Borrowed, get_executor
from .examples import (
    Example,
    detect_tester,
    directions,
    fix_params,
    internal_tester,
    select_examples,
)
from .findexpr import (
    Evaluator,
    ExampleTest,
    Scored,
    Verification,
    final_check,
    neighborhood,
    rank,
    verify,
    verify_band,
)
from .grammar import BOTTOM, Expr, Factor, Grammar, parse_expr
from .importance import Importance
from .region import Region, noise_region
from .sketch import HoleNoise, Sketch, sketch

__all__ = [
    "BOTTOM", "Expr", "Factor", "Grammar", "HoleNoise", "Importance", "Sketch", "directions",
    "fix_params", "load_sketch", "noise_region", "parse_expr", "select_examples", "sketch",
    "synth",
]


def load_sketch(target: str) -> Sketch:
    """A library sketch by name (``kolahal.svt``) or a user sketch by ``module:name``."""
    if ":" not in target:
        from ..mechanisms.kolahal_sketches import get

        return get(target)
    from ..core.loading import load_object

    obj = load_object(target)
    if not isinstance(obj, Sketch):
        raise PrivetError(f"{target!r} is not a sketch; decorate it with @sketch(...) "
                          "(from privet.synth import sketch).")
    return obj


def _detect_available() -> bool:
    try:
        from ..detect import detect  # noqa: F401
    except Exception:
        return False
    return True


def _example_cx(sk: Sketch, ex: Example, settings: Sequence[Mapping[str, Any]],
                name: str | None = None) -> Counterexample:
    setting = settings[ex.setting]
    return Counterexample(
        mechanism=name or sk.name, d1=ex.d1, d2=ex.d2,
        args={k: v for k, v in setting.items()}, event=ex.event.describe(),
        event_spec=_spec(ex.event), p_value=ex.p_value, test_epsilon=float(setting["epsilon"]),
        epsilon_witnessed=None, details={"log_loss": ex.loss, "found_at": list(ex.found_at),
                                         "source": ex.source},
    )


def _spec(event) -> dict | None:
    try:
        return event.spec()
    except Exception:
        return None


def _verdict(v: Verification, eps: float) -> str:
    """The verdict in the words of the table in :mod:`privet.core.results`."""
    if v.method == "exact":
        e = v.exact_epsilon
        if v.passed:
            return say_verified(eps, f"on the checked pairs (exact ε = {fmt_num(e)})")
        return (say_exact_violation(e, eps) if e is not None else
                "violation (exact): exact ε exceeds the target on the checked pairs")
    if v.passed:
        return f"no violation found ({fmt_p(v.p_value)})"
    if v.method == "examples":
        return f"violation found at an example ({fmt_p(min(1.0, v.p_value))}, corrected)"
    return say_found(v.p_value)


def synth(
    sketch: Sketch | str,
    epsilon: float | None = None,
    *,
    grammar: Grammar | None = None,
    top: int | None = None,
    seed: SeedLike = 0,
    n_select: int = 10_000,
    n_final: int = 20_000,
    m_region: int = 20_000,
    m_rank: int = 20_000,
    verify_n: tuple[int, int] = (20_000, 100_000),
    tester: str = "auto",
    radius: float = 3.0,
    lam: float = 1.0,
    baseline: bool = False,
    baseline_budget: float | None = 600.0,
    progress: bool = False,
    executor: Any = None,
    ranks: int = 3,
    max_verify: int = 60,
) -> SynthResult:
    """Synthesize noise expressions for ``sketch`` (KOLAHAL Fig. 4) and rank the completions.

    ``epsilon`` overrides γ(ε); ``grammar`` the sketch's grammar; ``top`` the number of
    candidates verified (default 5 x #holes). ``tester``: "internal" uses privet's small
    StatDP-style tester everywhere, "detect" uses ``privet.detect`` everywhere, "auto"
    (default) uses the internal tester for the many example searches and ``privet.detect``
    for the final verification when it is installed. With ``baseline=True`` the paper's
    "noopt" baseline (rank every grammar vector, no region) runs in the same call, stopping
    after ``baseline_budget`` seconds of ranking. Ctrl-C during example selection, ranking
    or verification stops that phase and returns what was found (``details["interrupted"]``).
    ``executor`` (``'dask://HOST:PORT'``, a ``distributed.Client``, ...; see
    :func:`privet.execution.get_executor`) runs the sample-and-reduce chunks of the final
    ``privet.detect`` verification; the example search, region and ranking use correlated,
    importance-weighted samples in this process. Results do not depend on it.

    Verification walks the ranking in order over the *top band*: at least ``top``
    candidates and every candidate with no violated example whose loss is tight (so a tight
    answer cannot be lost by ranking), at most ``max_verify``, and stops once ``ranks``
    completions are accepted and the next candidate does not tie the last one (same
    violations, tightness class and noise magnitude). Each candidate's examples are re-tested
    group-sequentially on fresh samples (looks at ``verify_n[1]``, 4x and 16x that per input,
    :class:`~privet.synth.findexpr.ExampleTest`). When the verifier is ``privet.detect``
    (tester "auto" with detect installed, or "detect"), a completion that passes is accepted
    only after the final check, ``privet.detect`` at its own full sample sizes at every
    setting (:func:`~privet.synth.findexpr.final_check`), whatever ``verify_n`` was;
    otherwise the internal tester runs at ``verify_n``. Each of the two checks rejects a
    completion whose privacy loss is at most ε with probability at most α = 0.05 (per
    completion; one strictly below ε far less often, see :mod:`privet.synth.findexpr`).
    """
    if executor is not None and not isinstance(executor, Borrowed):
        ex = get_executor(executor)
        try:
            return synth(sketch, epsilon, grammar=grammar, top=top, seed=seed,
                         n_select=n_select, n_final=n_final, m_region=m_region, m_rank=m_rank,
                         verify_n=verify_n, tester=tester, radius=radius, lam=lam,
                         baseline=baseline, baseline_budget=baseline_budget,
                         progress=progress, executor=Borrowed(ex), ranks=ranks,
                         max_verify=max_verify)
        finally:
            if ex is not executor:
                ex.close()
    t_start = time.perf_counter()
    seed = as_seed(seed)  # an int (recorded in the result), whatever seed= was given
    if isinstance(sketch, str):
        sketch = load_sketch(sketch)
    if isinstance(sketch, Mechanism):
        raise PrivetError(
            f"{sketch.name!r} is a complete mechanism, not a sketch: mark the noise locations "
            "with noise.hole(...) and decorate it with @sketch(...) (from privet.synth "
            "import sketch)."
        )
    if not isinstance(sketch, Sketch):
        raise PrivetError(f"privet.synth needs a sketch, got {type(sketch).__name__}.")
    changes: dict[str, Any] = {}
    if epsilon is not None:
        changes["epsilon"] = check_epsilon(epsilon)
    if grammar is not None:
        changes["grammar"] = grammar
    if changes:
        import dataclasses

        sketch = dataclasses.replace(sketch, **changes)
    used = sketch.probe()
    if not used:
        raise PrivetError(
            f"sketch {sketch.name!r} never draws noise at a hole: it has no holes to fill; "
            "call noise.hole(name) where noise may go."
        )
    if tester not in ("auto", "internal", "detect"):
        raise PrivetError(f"tester must be 'auto', 'internal' or 'detect', got {tester!r}.")
    if top is not None:
        check_count(top, "top", "completions")
    for what, v in (("n_select", n_select), ("n_final", n_final)) + tuple(
            (f"verify_n[{i}]", x) for i, x in enumerate(verify_n)):
        check_count(v, what)
    has_detect = _detect_available()
    if tester == "detect" and not has_detect:
        raise PrivetError("tester='detect' needs privet.detect, which is not available.")
    ex_tester = detect_tester(n_select, n_final) if tester == "detect" else \
        internal_tester(n_select, n_final)
    use_detect_verify = tester == "detect" or (tester == "auto" and has_detect)
    ver_tester = detect_tester(*verify_n) if use_detect_verify else internal_tester(*verify_n)
    k_top = int(top) if top else 5 * sketch.n_holes
    bar = _Bar(progress)
    times: dict[str, float] = {}

    # -- init: fixParams + selectExamples (Ex at γ, Ex_test at the varied settings) ----------
    t0 = time.perf_counter()
    settings = fix_params(sketch)
    examples: list[Example] = []
    interrupted = False
    try:
        for i in range(len(settings)):
            bar.update(f"selectExamples at setting {i + 1}/{len(settings)}")
            examples.extend(select_examples(sketch, settings, i, tester=ex_tester, seed=seed))
    except KeyboardInterrupt:      # Ctrl-C: go on with the examples found so far
        interrupted = True
    times["init"] = time.perf_counter() - t0

    # After Ctrl-C the remaining phases are skipped (each would take seconds): the result
    # keeps what finished and is marked interrupted.
    # -- opti: getNoiseRegion at γ ----------------------------------------------------------
    t0 = time.perf_counter()
    region = Region(float(settings[0]["epsilon"]), [], np.zeros((0, sketch.n_holes)),
                    notes=["not computed: interrupted"])
    if not interrupted:
        bar.update("getNoiseRegion (differential evolution)")
        gamma_ex = [e for e in examples if e.setting == 0]
        try:
            region = noise_region(sketch, settings[0], gamma_ex, m=m_region, seed=seed,
                                  lam=lam)
        except KeyboardInterrupt:
            interrupted = True
    times["opti"] = time.perf_counter() - t0

    # -- enum: candidates in Nbhd(R), ranked --------------------------------------------------
    t0 = time.perf_counter()
    evaluator = Evaluator(sketch, settings, examples, m=m_rank, seed=seed)
    cands, ranked = [], []
    if not interrupted:
        bar.update("findExpr: enumerate and rank")
        try:
            cands = neighborhood(sketch, region, settings[0], radius)
            ranked, _ = rank(evaluator, cands)
        except KeyboardInterrupt:
            interrupted = True
            ranked = []
    times["enum"] = time.perf_counter() - t0

    # -- verify: every candidate of the top band, in rank order ----------------------------------
    t0 = time.perf_counter()
    checked: list[tuple[Scored, Verification]] = []
    retest = ExampleTest(sketch, settings, examples, verify_n[1], seed=seed + 99_991)
    band = ranked[:verify_band(ranked, k_top, max_verify)]
    accepted = 0
    try:
        for i, sc in enumerate(band):
            bar.update(f"verify {i + 1}/{len(band)}: {sc.describe()}")
            v = verify(sketch, sc.exprs, settings, tester=ver_tester, seed=seed + 17 * i,
                       use_detect=use_detect_verify, n=verify_n, examples=retest,
                       test=not use_detect_verify, executor=executor)
            if v.passed and v.method != "exact" and use_detect_verify:
                bar.update(f"final check {accepted + 1}: {sc.describe()} (privet.detect)")
                full = final_check(sketch, sc.exprs, settings, seed=seed + 31 * i + 5,
                                   executor=executor)
                full.seconds += v.seconds
                v = full
            checked.append((sc, v))
            accepted += v.passed
            # enough ranked completions, and no candidate left that ties the last one
            if accepted >= ranks and (i + 1 == len(band) or band[i + 1].key() != sc.key()):
                break
    except KeyboardInterrupt:      # Ctrl-C: report the candidates checked so far
        interrupted = True
    times["verify"] = time.perf_counter() - t0
    times["total"] = time.perf_counter() - t_start

    completions, status = _completions(sketch, settings, ranked, checked, use_detect_verify)
    textbook = tuple(tuple(t) for t in sketch.textbook)
    tb_rank, tb_pre = _textbook_rank(sketch, completions, ranked)

    base = None
    if baseline and not interrupted:
        bar.update("noopt baseline: rank the whole grammar")
        base = _noopt(sketch, settings, examples, times["init"], m_rank, seed, k_top,
                      ver_tester, baseline_budget, use_detect_verify, verify_n, executor)
    bar.close()
    result = SynthResult(
        sketch=sketch.name, holes=sketch.holes, families=sketch.families,
        epsilon=float(sketch.epsilon), grammar=sketch.grammar.describe(), status=status,
        completions=tuple(completions),
        examples=tuple(_example_cx(sketch, e, settings) for e in examples),
        region=_region_summary(region, sketch), times=times, n_candidates=len(cands),
        grammar_size=sketch.grammar.size(sketch.n_holes), textbook=textbook,
        textbook_rank=tb_rank, textbook_preliminary_rank=tb_pre, baseline=base, seed=seed,
        details={"settings": [dict(s) for s in settings], "tester": tester,
                 "interrupted": interrupted,
                 "verifier": "privet.detect" if use_detect_verify else "internal",
                 "top": k_top, "radius": radius, "lambda": lam, "verified": len(checked),
                 "band": len(band),
                 "mechanism_runs": evaluator.runs,
                 "examples_per_setting": [sum(1 for e in examples if e.setting == i)
                                          for i in range(len(settings))]},
    )
    object.__setattr__(result, "_sketch", sketch)
    return result


def _completions(sketch: Sketch, settings, ranked: list[Scored],
                 checked: list[tuple[Scored, Verification]], detect_used: bool):
    eps = float(settings[0]["epsilon"])
    pre = {id(sc): i + 1 for i, sc in enumerate(ranked)}
    passing = [(sc, v) for sc, v in checked if v.passed]
    failing = [(sc, v) for sc, v in checked if not v.passed]
    out = []
    for r, (sc, v) in enumerate(passing + failing):
        cx = _example_cx(sketch, v.witness, settings, sketch.complete(sc.exprs).name) \
            if v.witness is not None else None
        method = v.method
        out.append(Completion(
            exprs=tuple(e.describe() for e in sc.exprs),
            rank=r + 1 if v.passed else None, preliminary_rank=pre[id(sc)], passed=v.passed,
            verdict=_verdict(v, eps), method=method, p_value=v.p_value,
            exact_epsilon=v.exact_epsilon, violations=sc.violations,
            tightness=sc.tightness, magnitude=sc.magnitude,
            scales=tuple(e.value(int(settings[0]["length"]),
                                 {k: x for k, x in settings[0].items() if k != "length"})
                         for e in sc.exprs),
            losses={f"setting {s}": v2 for s, v2 in sc.losses.items()},
            counterexample=cx,
            details={"violated_examples": [
                {"example": ex.describe(), "setting": ex.setting, "p_value": p}
                for ex, p in sc.violated[:5]], "verify_seconds": v.seconds,
                "verify_detail": v.detail},
        ))
    status = "found" if passing else "no completion found"
    return out, status


def _keys(sketch: Sketch, texts) -> tuple | None:
    try:
        return tuple(parse_expr(t, sketch.grammar).key() for t in texts)
    except PrivetError:        # an expected answer outside the (user's) grammar
        return None


def _textbook_rank(sketch: Sketch, completions, ranked) -> tuple[int | None, int | None]:
    if not sketch.textbook:
        return None, None
    wanted = {_keys(sketch, t) for t in sketch.textbook} - {None}
    final = None
    for c in completions:
        if c.passed and _keys(sketch, c.exprs) in wanted:
            final = c.rank
            break
    pre = None
    for i, sc in enumerate(ranked):
        if tuple(e.key() for e in sc.exprs) in wanted:
            pre = i + 1
            break
    return final, pre


def _noopt(sketch: Sketch, settings, examples, init_seconds: float, m_rank: int, seed: int,
           k_top: int, ver_tester, budget: float | None, use_detect: bool,
           verify_n: tuple[int, int], executor: Any = None) -> dict:
    """The paper's noopt baseline: rank all grammar vectors (no region), verify the top k."""
    t0 = time.perf_counter()
    evaluator = Evaluator(sketch, settings, examples, m=m_rank, seed=seed)
    cands = list(sketch.grammar.vectors(sketch.n_holes))
    ranked, timed_out = rank(evaluator, cands, budget)
    t_enum = time.perf_counter() - t0
    t1 = time.perf_counter()
    retest = ExampleTest(sketch, settings, examples, verify_n[1], seed=seed + 99_991)
    checked = [] if timed_out else [
        (sc, verify(sketch, sc.exprs, settings, tester=ver_tester, seed=seed + 17 * i,
                    use_detect=use_detect, n=verify_n, examples=retest, executor=executor))
        for i, sc in enumerate(ranked[:k_top])]
    t_verify = time.perf_counter() - t1
    comps, _ = _completions(sketch, settings, ranked, checked, use_detect) if checked \
        else ([], "")
    tb, pre = _textbook_rank(sketch, comps, ranked) if not timed_out else (None, None)
    return {"enum": t_enum, "verify": t_verify, "total": init_seconds + t_enum + t_verify,
            "timed_out": timed_out, "ranked": len(ranked), "grammar_size": len(cands),
            "textbook_rank": tb, "textbook_preliminary_rank": pre,
            "top": [c.describe() for c in comps[:3]]}


def _region_summary(region: Region, sketch: Sketch) -> dict:
    rows = []
    for r in region.supports:
        rows.append({"support": ["·" if not b else h for b, h in zip(r.mask, sketch.holes)],
                     "best": [round(v, 3) for v in r.best], "objective": r.objective,
                     "max_loss": r.max_loss, "evaluations": r.evaluations})
    return {"epsilon": region.epsilon, "target_loss": math.exp(region.epsilon),
            "supports": rows, "points": int(len(region.points)),
            "boundary": [[round(float(v), 3) for v in p] for p in region.boundary],
            "evaluations": region.evaluations, "seconds": region.seconds,
            "notes": list(region.notes)}


class _Bar:
    """A rich status line when ``progress`` (no-op otherwise)."""

    def __init__(self, enabled: bool):
        self.status = None
        if enabled:
            from rich.console import Console

            self.status = Console(stderr=True).status("synth")
            self.status.start()

    def update(self, text: str) -> None:
        if self.status is not None:
            self.status.update(f"synth: {text}")

    def close(self) -> None:
        if self.status is not None:
            self.status.stop()
