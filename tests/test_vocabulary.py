"""One vocabulary: every verdict begins with the words of one table (core.results.VERDICTS),
the report's legend lists them all, and each flag means one thing (issue 16, item 2)."""

import argparse
from fractions import Fraction

import privet
from privet import mechanisms
from privet.cli import build_parser
from privet.core.results import (
    VERDICTS,
    Bound,
    ExactBound,
    PufferfishVerdict,
    SuiteRow,
    verdict_tone,
    verdict_words,
)
from privet.report import TONE_STYLES, verdict_text
from privet.report.html import legend, verdict_class
from privet.suite import summarize


def test_every_engine_speaks_the_words_of_the_table():
    det = privet.detect(mechanisms.get("statdp.noisy_max_v1b"), n_select=2_000,
                        n_final=4_000, seed=1)
    ex = ExactBound("m", 1.232, Fraction(24, 7), ((0,), (1,), 0), "2 inputs",
                    claimed_epsilon=0.693)
    ok = ExactBound("m", 0.5, 1.65, ((0,), (1,), 0), "2 inputs", claimed_epsilon=0.693)
    cert = Bound("m", 0.148, 0.9, "dpfinder", claimed_epsilon=0.1)
    low = Bound("m", 0.098, 0.9, "dpfinder", claimed_epsilon=0.1)
    tested = Bound("m", 0.148, 0.9, "dpfinder", claimed_epsilon=0.1, test_epsilon=0.2)
    puff = PufferfishVerdict("ex3", "violated", 1, 0.693, "ln(2)", counterexample=("~0",),
                             pair=("nc", "c"))
    line = summarize("m", [SuiteRow("m", "exact", 0.693, None, "", result=ex)])
    expect = {det.verdict: "violation found", ex.describe(): "violation (exact)",
              ok.describe(): "verified", cert.describe(): "violation certified",
              low.describe(): "no violation found", tested.describe(): "no violation found",
              puff.describe(): "violation (exact)", line.verdict: "violation (exact)"}
    for text, words in expect.items():
        assert verdict_words(text).words == words, text
    assert "the test ε = 0.2" in tested.describe() and not tested.violates


def test_the_legend_lists_every_verdict_and_every_renderer_colors_alike():
    page = legend()
    for v in VERDICTS:
        assert f'<span class="verdict {v.tone}">{v.words}</span>' in page
        sample = v.words + ": something"
        assert verdict_class(sample) == verdict_tone(sample) == v.tone
        assert verdict_text(sample).style == TONE_STYLES[v.tone]
    assert "violation certified" in page and "violation (exact)" in page


def test_epsilon_is_the_test_epsilon_and_claimed_overrides_the_claim_everywhere():
    parser, _ = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, p in sub.choices.items():
        flags = {o: a for a in p._actions for o in a.option_strings}
        if "--epsilon" in flags:
            assert flags["--epsilon"].help.startswith("test ε"), name
        if "--claimed" in flags:
            assert "claimed ε instead of its own" in flags["--claimed"].help, name
    for name in ("detect", "search", "sample"):
        assert "--claimed" in {o for a in sub.choices[name]._actions for o in a.option_strings}


def test_a_confidence_is_never_rounded_up_to_certainty():
    """--confidence 0.9999999 was shown as "confidence 1" and "(100% confidence)"."""
    from privet.core.results import say_certified
    from privet.core.text import pct

    assert pct(0.9) == "90%" and pct(0.95) == "95%" and pct(0.9999999) == "99.99999%"
    assert say_certified(1.0, 0.9999999).endswith("(99.99999% confidence)")
