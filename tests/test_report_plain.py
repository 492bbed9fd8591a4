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
