"""The shared pieces behind the hostile-input fixes: atomic report files, the one
"interrupted" convention, specs that may run code only when told to, bounded readers."""

from __future__ import annotations

import os

import pytest

from privet.core.errors import InputError, PrivetError
from privet.core.results import (
    Bound,
    ExactBound,
    PufferfishVerdict,
    SuiteResult,
    from_json,
    interrupted,
    mark_interrupted,
    to_json,
)
from privet.core.safe import load_yaml, parse_epsilon, power_text
from privet.report import INTERRUPTED_NOTE, render_saved
from privet.report.html import to_html
from privet.report.output import write_atomic


def test_a_failing_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "r.html"
    target.write_text("old report")

    def half_then_fail(tmp: str) -> None:
        with open(tmp, "w") as fh:
            fh.write("half a rep")
        raise KeyboardInterrupt  # Ctrl-C in the middle of the write

    with pytest.raises(KeyboardInterrupt):
        write_atomic(target, half_then_fail)
    assert target.read_text() == "old report"
    assert os.listdir(tmp_path) == ["r.html"]
    write_atomic(target, "new report")
    assert target.read_text() == "new report" and os.listdir(tmp_path) == ["r.html"]


def test_a_write_error_is_one_sentence(tmp_path):
    def no_space(tmp: str) -> None:
        raise OSError(28, "No space left on device")

    with pytest.raises(InputError, match="No space left on device"):
        write_atomic(tmp_path / "r.html", no_space)
    assert os.listdir(tmp_path) == []


RESULTS = [
    Bound(mechanism="m", value=0.5, confidence=0.9, method="dpfinder"),
    ExactBound(mechanism="m", epsilon=0.7, e_epsilon=2.0, witness=([0], [1], 0),
               domain="2 inputs"),
    PufferfishVerdict(scenario="s", status="unknown", k=1, epsilon=0.7),
    SuiteResult(rows=(), lines=(), engines=("exact",)),
]


@pytest.mark.parametrize("result", RESULTS, ids=[type(r).__name__ for r in RESULTS])
def test_one_interrupted_convention_in_terminal_json_and_html(result):
    assert not interrupted(result)
    cut = mark_interrupted(result)
    assert interrupted(cut) and interrupted([result, cut])
    again = from_json(to_json(cut))
    assert interrupted(again)
    assert render_saved(again).startswith(INTERRUPTED_NOTE.split(" -- ")[0])
    assert "INTERRUPTED" not in render_saved(result)
    assert "INTERRUPTED" in to_html(again) and "INTERRUPTED" not in to_html(result)


def test_a_spec_runs_code_only_with_allow_code(tmp_path):
    from privet.pufferfish.scenario import load_spec

    marker = tmp_path / "ran"
    (tmp_path / "mine.py").write_text(
        f"open({str(marker)!r}, 'w').write('x')\n"
        "import privet\n"
        "@privet.mechanism(epsilon=1.0, neighbors=privet.neighbors.all_differ(1),\n"
        "                  domain=privet.Domain(length=1, low=0, high=1, integer=True),\n"
        "                  output=privet.Output.numeric(integer=True))\n"
        "def flip(noise, x, *, epsilon):\n"
        "    return (x[0] + noise.bernoulli(0.25)) % 2\n")
    spec = tmp_path / "s.yaml"
    spec.write_text(f"mechanism: {tmp_path}/mine.py:flip\nk: 2\n")
    with pytest.raises(InputError, match="--allow-code"):
        load_spec(spec)
    assert not marker.exists()
    sc = load_spec(spec, allow_code=True)
    assert marker.exists() and sc.kind == "dp"


def test_yaml_aliases_are_fine_until_they_explode():
    assert load_yaml("a: &x [1, 2]\nb: *x\n", "spec") == {"a": [1, 2], "b": [1, 2]}
    bomb = "a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n" + "".join(
        f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 7))
    with pytest.raises(InputError, match="expands to more than"):
        load_yaml(bomb, "spec")


@pytest.mark.parametrize("text, value, factor", [
    ("ln(2)", 0.6931471805599453, 2), ("4 ln 2", 2.772588722239781, 16),
    ("ln(288/73)", 1.3725010389875552, None), ("2*ln(3) - ln(2)", 1.5040773967762742, None),
    ("0.5", 0.5, None)])
def test_epsilon_text(text, value, factor):
    e = parse_epsilon(text)
    assert e.value == pytest.approx(value, rel=1e-15)
    if factor is not None:
        assert e.factor == factor


@pytest.mark.parametrize("text", ["99999999999 ln(2)", "ln(1/0)", "1.2.3 ln 2", "3**999999999",
                                  "__import__('os')", "nan", "-1", "ln(0)"])
def test_bad_epsilon_text_is_one_sentence(text):
    with pytest.raises(PrivetError) as info:
        parse_epsilon(text)
    assert "\n" not in str(info.value)


def test_huge_counts_are_printed_without_building_them():
    assert power_text(2, 10) == "1,024"
    assert power_text(2, 1_000_000) == "2^1000000 (about 10^301030)"


@pytest.mark.parametrize("argv", [["list", "--json", "--paper", "wmc"],
                                  ["sample", "wmc.randomized_response", "-x", "0,1",
                                   "--exact", "--json"]], ids=["list", "sample"])
def test_report_reads_what_list_and_sample_save(argv, tmp_path, capsys):
    # the report's help promises any command's --json; it also takes --json (issue 16 took
    # --seed away again: a report draws nothing, so the flag is one sentence, exit 2)
    from privet.cli import main

    assert main(argv) == 0
    saved = tmp_path / "saved.json"
    saved.write_text(capsys.readouterr().out)
    assert main(["report", str(saved), "--seed", "3"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert main(["report", str(saved)]) == 0
    table = capsys.readouterr().out
    assert "randomized_response" in table
    assert main(["report", str(saved), "--json"]) == 0
    # the same content, normalized (an infinite ε is written {"__float__": "inf"})
    assert from_json(capsys.readouterr().out) == from_json(saved.read_text())
