"""The terminal renderings fit 80, 100 and 140 columns without splitting a number or a
verdict word (issue 16, item 1), and the formatting helpers they share."""

from __future__ import annotations

import io
import re
from collections import Counter
from fractions import Fraction

import pytest
from rich.console import Console

import privet
from privet import mechanisms
from privet.core.results import Bound, Completion, Counterexample, SuiteResult, SynthResult
from privet.core.text import fmt_num, fmt_p, fmt_vec, plain
from privet.report import render_any
from privet.report.layout import allocate
from privet.suite import summarize

WIDTHS = (80, 100, 140)
BOX = re.compile(r"[\u2500-\u257f·]+")      # box drawing and the block layout's separator
VERDICT_WORDS = {"violation", "violated", "verified", "found", "no", "unknown", "inconclusive",
                 "interrupted"}


def render(renderable, width: int) -> str:
    console = Console(width=width, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def tokens(text: str) -> Counter:
    return Counter(t for t in BOX.sub(" ", text).split())


def atoms(text: str) -> set[str]:
    """The tokens that must never be split: anything with a digit, and the verdict words."""
    return {t for t in tokens(text) if re.search(r"\d", t) or t.strip("(),:;") in
            VERDICT_WORDS}


def assert_fits_unsplit(renderable, width: int) -> str:
    """Every line fits ``width``; every number and verdict word of the unconstrained
    rendering (1,000 columns: nothing wraps) appears whole at least as often at ``width``.
    A word folded across two lines ("violati" / "on", "7.6e-15" / "1") loses an occurrence
    and fails this."""
    narrow, wide = render(renderable, width), render(renderable, 1000)
    assert max(len(line) for line in narrow.splitlines()) <= width
    have, want = tokens(narrow), tokens(wide)
    split = sorted(a for a in atoms(wide) if have[a] < want[a])
    assert not split, f"split across lines at {width} columns: {split[:8]}"
    return narrow


# -- real results from small seeded runs; the float-heavy ones built like DP-Finder's ---------

@pytest.fixture(scope="module")
def det():
    """iSVT3: variable-length outputs padded with ABORTED, with a p-value curve."""
    return privet.detect(mechanisms.get("statdp.isvt3"), n_select=5_000, n_final=20_000,
                         seed=1, test_epsilons=[0.5, 1.0])


@pytest.fixture(scope="module")
def float_bound(det):
    """A certified bound whose witness has DP-Finder's 6-digit float inputs."""
    w = Counterexample("dpfinder.above_threshold", (-14.149412, -13.331607, 2.056331,
                                                    -9.843461),
                       (-15.149412, -14.331607, 3.056331, -8.843461), {},
                       "ω = [1, 1, 0, 0]", counts=(98_682, 84_816), n=(3_551_124, 3_551_124),
                       epsilon_witnessed=0.1611, confidence=0.9)
    return Bound("dpfinder.above_threshold", 0.16114, 0.9, "dpfinder", witness=w,
                 claimed_epsilon=0.1, seed=0, seconds=5.4,
                 details={"verdict": "ε ≥ 0.1611 with confidence 0.9; violation found",
                          "search_estimate": 0.17311, "iterations": 2,
                          "trace": [{"status": "optimum below p_min: kept the random triple",
                                     "start_estimate": 0.004778, "surrogate": 0.15513,
                                     "estimate": 0.147123, "n": 131_072, "evaluations": 231,
                                     "seconds": 3.35, "event": "ω = [0, 0, 1, 0]"}]})


@pytest.fixture(scope="module")
def puff():
    return privet.pufferfish("ex3", "ln(2)")


@pytest.fixture(scope="module")
def float_results():
    """A porosity witness (ε = ∞, 17-digit doubles) and a float-sum sensitivity finding."""
    import numpy as np

    from privet import floats

    poro = floats.porosity(mechanisms.get("floats.laplace"), [0.0], [1.0], n=200, seed=5,
                           first=True)
    agg = mechanisms.floats.aggregate(mechanisms.get("floats.int32_sum"))
    sens = floats.sum_sensitivity(agg, bounds=(0, 2 ** 30), length=8, dtype=np.int64,
                                  batched=True, iterations=20)
    return poro, sens


@pytest.fixture(scope="module")
def profiles(det):
    """An exact privacy profile (issue 15) and a certified one shaped like search's."""
    from privet.core.results import CertifiedProfile
    from privet.exact import profile

    exact_profile = profile(mechanisms.get("wmc.randomized_response"), length=2,
                            epsilons=[0.0, 0.5, 1.0, 1.5])
    deltas = (1e-6, 1e-5, 1e-4, 1e-3)
    certified = CertifiedProfile(
        "statdp.noisy_max_v1b", "(ε, δ) = (0.7, 1e-05)", 0.9, 0.7, 0.0123, 1e-5, 2.345678,
        curve_delta=deltas, curve_epsilon=(2.1, 2.3, 2.6, 3.0),
        claimed_curve=(float("inf"), 0.7, 0.7, 0.7), known_curve=None,
        verdict="violation certified: δ(0.7) ≥ 0.0123 (90% confidence; claimed 1e-05); "
                "ε(1e-05) ≥ 2.346", witness=det.counterexample, method="dpfinder (approx)")
    return exact_profile, certified


@pytest.fixture(scope="module")
def synth_result(det):
    ok = Completion(exprs=("1/ε",), rank=1, preliminary_rank=1, passed=True,
                    verdict="no violation found (p = 0.844)", method="detect", p_value=0.844,
                    tightness=1.04, magnitude=4.5)
    bad = Completion(exprs=("0.25",), rank=None, preliminary_rank=2, passed=False,
                     verdict="violation found at an example (p = 3.6e-90, corrected)",
                     p_value=3.6e-90, violations=3, counterexample=det.counterexample)
    return SynthResult(sketch="kolahal.histogram", holes=("η",), families=("laplace",),
                       epsilon=1.0, grammar="default", status="found",
                       completions=(ok, bad), times={"init": 4.7, "total": 19.3},
                       textbook=(("1/ε",),), textbook_rank=1, textbook_preliminary_rank=1,
                       region={"target_loss": 2.718, "evaluations": 501, "supports": [
                           {"support": ["η"], "best": [1.17], "max_loss": 2.72,
                            "objective": 1.0}]})


@pytest.fixture(scope="module")
def suites(det, float_bound, ex, puff):
    """The whole-library shape (many rows, long names, float witnesses) and the two-row
    ``suite --only`` shape, joined by the suite's own summarize."""
    from privet.core.results import SuiteRow

    def row(name, engine, result, claimed, known):
        return SuiteRow(name, engine, claimed, known, "", None, 1.0, result=result)

    rows = [row("statdp.isvt3", "detect", det, 0.7, 1.22),
            row("dpfinder.above_threshold", "search", float_bound, 0.1, 0.45),
            row("wmc.randomized_response", "exact", ex, ex.claimed_epsilon, ex.claimed_epsilon),
            row("wmc.randomized_response", "pufferfish", puff, ex.claimed_epsilon,
                ex.claimed_epsilon),
            row("faier.discrete_above_threshold", "detect", det, 0.7, float("inf"))]
    by: dict[str, list] = {}
    for r in rows:
        by.setdefault(r.mechanism, []).append(r)
    lines = tuple(summarize(k, v) for k, v in by.items())
    many = SuiteResult(rows=tuple(rows), lines=lines, engines=("detect", "exact", "search"),
                       quick=True, seconds=75)
    two = SuiteResult(rows=tuple(rows[:2]), lines=lines[:2], engines=("detect", "search"),
                      quick=True, seconds=7)
    return many, two


# -- the must-show test ------------------------------------------------------------------------

@pytest.mark.parametrize("width", WIDTHS)
def test_every_result_fits_without_splitting_numbers_or_verdicts(
        width, det, float_bound, ex, acc, puff, synth_result, suites, float_results,
        profiles):
    for obj in (*suites, det, det.curve, det.counterexample, float_bound, ex, acc, puff,
                synth_result, *float_results, *profiles):
        assert_fits_unsplit(render_any(obj), width)


def test_the_check_catches_a_folded_number():
    """The assertion above fails on rich's own folding (the layout privet replaced)."""
    from rich.table import Table

    t = Table()
    for h in ("mechanism", "verdict"):
        t.add_column(h, overflow="fold")
    t.add_row("statdp.noisy_max_v1b", "violation found (p = 7.6e-151)")
    with pytest.raises(AssertionError, match="split across lines"):
        assert_fits_unsplit(t, 24)


def test_suite_keeps_one_table_at_140_and_short_counterexamples(suites):
    many, _ = suites
    text = render(render_any(many), 140)
    header = next(line for line in text.splitlines() if "mechanism" in line)
    assert "counterexample" in header          # one table, the counterexample a column of it
    assert "-14.1494" not in text and "D1=[-14.1," in text and "-9.84]," in text
    witness = next(r.result.witness for r in many.rows if r.engine == "search")
    assert witness.d1 == (-14.149412, -13.331607, 2.056331, -9.843461)  # in full for --json


# -- helpers -----------------------------------------------------------------------------------

def test_allocate_gives_way_from_the_widest_and_never_below_a_word():
    assert allocate([5, 5], [10, 30], 100) == [10, 30]
    assert allocate([5, 5], [10, 30], 25) == [10, 15]
    assert allocate([5, 12], [10, 30], 20) == [8, 12]
    assert allocate([5, 12], [10, 30], 16) is None


def test_numbers_print_as_people_write_them():
    assert fmt_num(1.0) == "1" and fmt_num(0.70000001, 3) == "0.7"
    assert fmt_num(Fraction(12, 5)) == "12/5" and fmt_num(float("inf")) == "∞"
    assert fmt_p(0.0) == "p < 1e-300" and fmt_p(3e-155) == "p = 3.0e-155"
    assert fmt_p(0.2612) == "p = 0.26"
    assert fmt_vec([1.0, 1.0, 1.0, 1.0, 2.0]) == "[1, 1, 1, 1, 2]"
    assert fmt_vec([0, 0, 0, 0, 0, 2, 2, 2, 2, 2], short=True) == "[0×5, 2×5]"
    assert fmt_vec([1, float("inf"), float("inf"), float("inf")], short=True) == \
        "[1, ABORTED×3]"
    assert fmt_vec([-14.149412, 2.056331], short=True) == "[-14.1, 2.06]"
    assert plain((1.0, 2.5, 3)) == (1, 2.5, 3)
