"""Self-contained HTML reports (issue 8): no network, escaping, every result type, plots,
detect's histograms, exact's witness distributions, ``_repr_html_`` and ``--html``."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from fractions import Fraction
from html.parser import HTMLParser

import pytest

import privet
from privet import mechanisms
from privet.core.errors import PrivetError
from privet.core.results import (
    Bound,
    Completion,
    Counterexample,
    PufferfishVerdict,
    SuiteLine,
    SuiteResult,
    SuiteRow,
    SynthResult,
    from_json,
    to_json,
)
from privet.report import html as H

FORBIDDEN = ("http://", "https://", "//cdn", "<script src", "<link", "@import")


def external(text: str) -> list[str]:
    """External references in a page (``url(#id)`` inside the inline SVG is local)."""
    low = text.lower()
    found = [b for b in FORBIDDEN if b in low]
    return found + re.findall(r"url\((?!#)[^)]*\)", low) + re.findall(r"\ssrc=", low)


# -- fixtures: real results from small, seeded engine runs ------------------------------------

@pytest.fixture(scope="module")
def det():
    """A numeric counterexample (histogram_eps claims 0.7, is 1/0.7) with a p-value curve."""
    return privet.detect(mechanisms.get("statdp.histogram_eps"), n_select=5_000,
                         n_final=20_000, seed=1, test_epsilons=[0.5, 1.0, 2.0])


@pytest.fixture(scope="module")
def det_discrete():
    """A categorical event (iSVT1's Hamming distance)."""
    return privet.detect(mechanisms.get("statdp.isvt1"), n_select=5_000, n_final=20_000,
                         seed=1)


@pytest.fixture(scope="module")
def puff():
    from privet.pufferfish import pufferfish

    m = mechanisms.get("wmc.randomized_response")
    return pufferfish(m, inputs=[tuple(r) for r in m.domain.inputs(2).tolist()])


@pytest.fixture(scope="module")
def bound(det):
    return Bound("dpfinder.noisy_max", 0.098, 0.9, "dpfinder", witness=det.counterexample,
                 claimed_epsilon=0.1, seed=0, seconds=1.0,
                 details={"verdict": "ε ≥ 0.098 with confidence 0.9; no violation found"})


@pytest.fixture(scope="module")
def synth_result(det):
    ok = Completion(exprs=("2/eps",), rank=1, preliminary_rank=1, passed=True,
                    verdict="no violation found", method="detect", p_value=0.4)
    bad = Completion(exprs=("1/(2*eps)",), rank=None, preliminary_rank=2, passed=False,
                     verdict="violation found (p = 0.001)", p_value=0.001,
                     counterexample=det.counterexample)
    return SynthResult(sketch="kolahal.sum", holes=("h0",), families=("laplace",), epsilon=1.0,
                       grammar="default", status="found", completions=(ok, bad),
                       times={"examples": 0.1}, textbook=("2/eps",), textbook_rank=1)


@pytest.fixture(scope="module")
def suite_result(det, ex, puff):
    rows = (
        SuiteRow("statdp.histogram_eps", "detect", 0.7, 1 / 0.7, det.verdict, det.p_value,
                 1.0, result=det),
        SuiteRow("statdp.histogram_eps", "sample", 0.7, 1 / 0.7, "ok", 1e6, 0.1),
        SuiteRow("wmc.randomized_response", "exact", ex.claimed_epsilon, ex.claimed_epsilon,
                 "verified ≤ claimed (n=2)", ex.epsilon, 0.1, result=ex),
        SuiteRow("wmc.randomized_response", "pufferfish", ex.claimed_epsilon,
                 ex.claimed_epsilon, "verified to length 2 (n=2)", None, 0.1, result=puff),
    )
    lines = (
        SuiteLine("statdp.histogram_eps", 0.7, 1 / 0.7, "violation found (p = 0)",
                  counterexample="D1=[1, 1], D2=[2, 1], ω[0] ∈ (-inf, 1.2]", seconds=1.1),
        SuiteLine("wmc.randomized_response", ex.claimed_epsilon, ex.claimed_epsilon,
                  "verified ε ≤ 1.386 (4 inputs)", exact_epsilon=ex.epsilon, seconds=0.2),
        SuiteLine("dpfinder.noisy_max", 0.1, 0.1, "no violation found", lower_bound=0.098,
                  confidence=0.9, seconds=3.0),
    )
    return SuiteResult(rows=rows, lines=lines, engines=("sample", "detect", "exact"),
                       quick=True, seconds=4.3)


@pytest.fixture(scope="module")
def everything(det, det_discrete, ex, acc, puff, bound, synth_result, suite_result):
    return [det, det_discrete, det.curve, det.counterexample, ex, acc, puff, bound,
            synth_result, synth_result.completions[0], suite_result.rows[0],
            suite_result.lines[0], suite_result]


# -- a tiny well-formedness checker ----------------------------------------------------------

VOID = {"meta", "br", "wbr", "img", "hr", "input", "link", "path", "use", "rect", "circle", "line",
        "polyline", "polygon", "ellipse", "stop"}


class _Balance(HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:]} at {self.getpos()}")
        else:
            self.stack.pop()


def balanced(text: str) -> bool:
    p = _Balance()
    p.feed(text)
    p.close()
    return not p.errors and not p.stack


# -- tests ------------------------------------------------------------------------------------

def test_page_has_no_external_url_and_is_well_formed(everything):
    doc = H.page("all results", H.to_html(everything))
    assert doc.startswith("<!DOCTYPE html>")
    low = doc.lower()
    assert external(doc) == []
    assert "<?xml" not in doc and "xmlns" not in doc
    assert low.count("<svg") >= 5          # curves, histograms, ε charts are inline
    assert "how to read this report" in low and privet.__version__ in doc
    assert balanced(doc)


def test_user_strings_are_escaped(det):
    evil = "<script>alert(1)</script>"
    cx = dataclasses.replace(det.counterexample, mechanism=evil, event="&<>\"' E",
                             args={"<b>k": "<i>v"},
                             details={**det.counterexample.details, "pattern": evil})
    res = dataclasses.replace(det, mechanism=evil, counterexample=cx,
                              verdict="violation found <script>", curve=dataclasses.replace(
                                  det.curve, mechanism=evil))
    b = Bound(evil, 1.0, 0.9, evil, claimed_epsilon=0.5, details={evil: evil})
    doc = H.page(evil, H.to_html([res, b, cx]))
    assert "<script" not in doc.lower()
    assert "<b>k" not in doc and "<i>v" not in doc
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in doc
    assert "&amp;&lt;&gt;&quot;&#x27; E" in doc
    assert balanced(doc)


@pytest.mark.parametrize("index", range(13))
def test_every_result_type_renders(everything, index):
    obj = everything[index]
    frag = H.to_html(obj)
    text = frag.replace("<wbr>", "")  # names may wrap after their dots
    assert frag.strip() and balanced(frag)
    name = getattr(obj, "mechanism", None) or getattr(obj, "scenario", None) or \
        getattr(obj, "sketch", None)
    if name is not None:
        assert H.esc(name) in text
    if hasattr(obj, "verdict") and isinstance(obj.verdict, str) and obj.verdict:
        assert H.esc(obj.verdict) in frag


def test_verdict_colors():
    assert H.verdict_class("violation found (p = 0.001)") == "bad"
    assert H.verdict_class("violation (exact): exact ε = 2 > claimed 1") == "bad"
    assert H.verdict_class("verified ε ≤ 1 (4 inputs)") == "good"
    assert H.verdict_class("no violation found") == "neutral"
    assert H.verdict_class("unknown at length 3") == "warn"
    assert H.verdict_class("ε ≥ 0.098 with confidence 0.9; no violation found") == "neutral"
    assert H.verdict_class("violation certified: ε ≥ 0.2 (90% confidence)") == "bad"


def test_bound_without_violation_is_not_red(bound):
    frag = H.to_html(bound)
    assert 'class="verdict neutral">ε ≥ 0.098' in frag and 'verdict bad">ε' not in frag


def test_suite_report_sections(suite_result):
    frag = H.to_html(suite_result)
    assert frag.count("<details><summary>") >= len(suite_result.lines)
    assert 'class="verdict bad">violation found (p = 0)' in frag
    assert 'class="verdict good">verified' in frag
    assert 'class="verdict neutral">no violation found' in frag
    # the full engine results are inside the sections (the exact distribution table)
    assert "exact output distributions" in frag and "p-value curve" in frag


def _total(h: dict, side: int) -> int:
    extra = sum(h.get(k, [0, 0])[side] for k in ("below", "above", "nonfinite", "outside"))
    return sum(h[f"d{side + 1}"]) + extra


@pytest.mark.parametrize("which", ["det", "det_discrete"])
def test_detect_histograms_sum_to_the_sample_sizes(request, which):
    res = request.getfixturevalue(which)
    cxs = [c for c in [res.counterexample, *res.candidates, *res.curve.counterexamples]
           if c is not None] if res.curve else [c for c in [res.counterexample,
                                                            *res.candidates] if c]
    assert cxs
    for cx in cxs:
        h = cx.details["histograms"]
        assert h["n"] == list(cx.n)
        assert _total(h, 0) == cx.n[0] and _total(h, 1) == cx.n[1]
        assert h["event_counts"] == list(cx.counts)
        assert h["event"] == cx.event
        assert 0 < len(h["d1"]) == len(h["d2"]) == len(h["in_event"]) <= 62
        inside = [sum(c for c, e in zip(h[f"d{s + 1}"], h["in_event"]) if e) for s in (0, 1)]
        for s in (0, 1):  # the event's bins hold its count, up to the mass off the plot
            off = sum(h.get(k, [0, 0])[s] for k in ("below", "above"))
            assert inside[s] <= cx.counts[s] <= inside[s] + off
        if h["kind"] == "numeric":
            assert len(h["edges"]) == len(h["d1"]) + 1
            assert all(a < b for a, b in zip(h["edges"], h["edges"][1:]))
        else:
            assert len(h["labels"]) == len(h["d1"])
    assert res.counterexample is not None  # both mechanisms violate their claim


def test_histograms_survive_json(det):
    cx = det.counterexample
    back = from_json(to_json(cx))
    assert back.details["histograms"] == cx.details["histograms"]


def test_exact_records_witness_distributions(ex):
    d = ex.details["distributions"]
    assert d["exact"] and d["support"] == [4, 4]
    p1 = sum(Fraction(r[1]) for r in d["rows"])
    p2 = sum(Fraction(r[2]) for r in d["rows"])
    assert p1 == 1 and p2 == 1                      # whole support shown (4 outputs < 50)
    x, x2, y = ex.witness
    row = next(r for r in d["rows"] if r[0] == y)
    assert Fraction(row[1]) / Fraction(row[2]) == ex.e_epsilon
    frag = H.to_html(ex)
    assert 'class="hl"' in frag and "16/25" in frag


def test_repr_html_on_every_result(everything):
    for obj in everything:
        out = obj._repr_html_()
        assert out.startswith('<div class="privet"><style>') and balanced(out)


def test_core_does_not_import_report_at_import_time():
    code = ("import sys, privet.core.results as r; "
            "assert 'privet.report.html' not in sys.modules; "
            "r.Bound('m', 0.1, 0.9, 'x')._repr_html_(); "
            "assert 'privet.report.html' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_without_matplotlib_a_note_replaces_the_plot(monkeypatch, det):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    frag = H.to_html(det)
    assert "<svg" not in frag and "matplotlib is not installed" in frag


def test_unknown_objects_and_lists():
    assert H.to_html({"a": "<x>"}) == "<pre>{&#x27;a&#x27;: &#x27;&lt;x&gt;&#x27;}</pre>"
    cx = Counterexample("m", (1,), (2,), {}, "ω = 1")
    assert H.to_html([cx, cx]).count("<h4>counterexample</h4>") == 2


def test_pufferfish_violation_renders():
    v = PufferfishVerdict("scen <1>", "violated", 2, 0.5, "0.5", counterexample=(0, 1),
                          pair=("s", "t"), probabilities=(Fraction(1, 2), Fraction(1, 8)),
                          ratio=Fraction(4), solver="exact")
    frag = H.to_html(v)
    assert 'class="verdict bad"' in frag and "scen &lt;1&gt;" in frag and "1/8" in frag


def test_write_html_and_cli(tmp_path, det):
    with pytest.raises(PrivetError, match="does not exist"):  # never created silently
        H.write_html(tmp_path / "sub" / "r.html", det)
    assert not (tmp_path / "sub").exists()
    p = H.write_html(tmp_path / "r.html", det)
    text = p.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and "statdp.histogram_eps" in text
    from privet.cli import main

    out = tmp_path / "detect.html"
    code = main(["detect", "statdp.histogram_eps", "--n-select", "3000", "--n-final", "10000",
                 "--seed", "2", "--html", str(out)])
    assert code == 1 and "<svg" in out.read_text(encoding="utf-8")
    out2 = tmp_path / "exact.html"
    code = main(["exact", "wmc.randomized_response", "--length", "2", "--fractions",
                 "--html", str(out2)])
    text = out2.read_text(encoding="utf-8")
    assert code == 0 and "exact output distributions" in text
    assert external(text) == []


@pytest.mark.parametrize("which", ["det", "det_discrete"])
def test_the_candidates_table_says_how_many_runs_each_count_is_of(request, which):
    res = request.getfixturevalue(which)
    if len(res.candidates) < 2:
        pytest.skip("one candidate: no table")
    frag = H.to_html(res)
    assert "<th>runs each</th>" in frag
    for c in res.candidates:
        assert f'<td class="num">{c.n[0]:,}</td>' in frag


def test_the_suite_table_shows_the_whole_claim():
    # its claimed-ε column showed 0.5 for (ε, δ) = (0.5, 0.001) and — for ρ claims
    from privet.report import html as H
    from privet.suite import suite

    s = suite(engines=["detect"], only=["gaussian.wrong_neighbors", "gaussian.zcdp"],
              quick=True)
    page = H.to_html(s)
    assert "(0.5, 0.001)" in page and "ρ = " in page
