"""The rough edges of issue 16 item 7 stay gone: what a report shows (outside its raw JSON
details) has no "seed None", no integer printed as a float, no Python repr, no value
"approximately" equal to itself, no raw ABORTED run, and a closed form only when exact."""

import re

import pytest

import privet
from privet import mechanisms
from privet.report import html as H


def visible(fragment: str) -> str:
    """The text a reader sees, without the collapsible raw-JSON details."""
    shown = re.sub(r"<details.*?</details>", " ", fragment, flags=re.S)
    shown = re.sub(r"<(style|svg)\b.*?</\1>", " ", shown, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", shown)).replace("&#x27;", "'")


@pytest.fixture(scope="module")
def pages():
    from privet.pufferfish import pufferfish

    det = privet.detect(mechanisms.get("statdp.isvt3"), n_select=3_000, n_final=6_000,
                        seed=1, test_epsilons=[0.5, 1.0])
    ex = privet.exact(mechanisms.get("wmc.randomized_response"), length=2)
    exf = privet.exact(mechanisms.get("wmc.randomized_response"), length=2, fractions=True)
    puff = pufferfish("ex3", "ln(2)")
    return {name: visible(H.to_html(r)) for name, r in
            (("detect", det), ("exact", ex), ("exact fractions", exf), ("pufferfish", puff))}


def test_reports_show_plain_values(pages):
    for name, text in pages.items():
        assert "None" not in text, name
        assert not re.search(r"(?<![\d.])\d+\.0(?![\d.e])", text), (name, text)
        assert not re.search(r"\['|\('|\{'", text), (name, text)
        assert not re.search(r"(?<![\w.])([\d./]+) ≈ \1(?![\d./])", text), (name, text)
        assert "ABORTED, ABORTED, ABORTED" not in text, name


def test_a_closed_form_only_when_exact(pages):
    assert "closed form ln(4)" in pages["exact fractions"]
    assert "ln(" not in pages["exact"] and "--fractions" in pages["exact"]


def test_an_interrupted_search_shows_no_certified_bound():
    # Ctrl-C before the certificate: the table said "ε ≥ 0 with confidence 0.9" above the
    # verdict "nothing certified"
    import io

    from rich.console import Console

    from privet.core.results import Bound
    from privet.report.search import summary_table

    def text(b):
        out = io.StringIO()
        Console(file=out, width=150).print(summary_table(b))
        return out.getvalue()

    cut = Bound(mechanism="m", value=0.0, confidence=0.9, method="attack (black box)",
                details={"interrupted": True, "verdict": "interrupted before the certificate "
                                                         "(nothing certified)"})
    assert "ε ≥ 0" not in text(cut) and "interrupted before anything was certified" in text(cut)
    done = Bound(mechanism="m", value=0.0, confidence=0.9, method="attack (black box)",
                 details={"verdict": "no violation found"})
    assert "ε ≥ 0 with confidence 0.9" in text(done)
