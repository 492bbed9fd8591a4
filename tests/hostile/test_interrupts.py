"""Ctrl-C is honest in every command: exit 130, a visible "interrupted" marker on what is
printed and saved, what finished kept.

Here Ctrl-C is a KeyboardInterrupt raised by a mechanism after a fixed number of calls, so
where it lands is deterministic; the slow catalogue (``test_catalogue.py``) sends a real
SIGINT to a real process group.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import textwrap

import pytest

from privet.cli import main

FLAKY = textwrap.dedent("""
    import numpy as np
    import privet

    LIMIT = {limit}
    CALLS = [0]

    def _tick():
        CALLS[0] += 1
        if CALLS[0] > LIMIT:
            raise KeyboardInterrupt

    @privet.mechanism(epsilon=1.0, neighbors=privet.neighbors.all_differ(1))
    def noisy_sum(noise, x, *, epsilon):
        _tick()
        return x.sum() + noise.laplace(1 / epsilon)

    @privet.mechanism(epsilon=1.0, neighbors=privet.neighbors.one_differs(1),
                      domain=privet.Domain(length=3, low=0, high=1, integer=True),
                      output=privet.Output.numeric(integer=True))
    def rr_count(noise, x, *, epsilon):
        _tick()
        flips = noise.bernoulli(0.25, x.shape)
        return np.abs(x - flips).sum(axis=-1)
""")


def run(tmp_path, limit: int, *argv: str) -> tuple[int, str, str]:
    (tmp_path / "flaky.py").write_text(FLAKY.format(limit=limit))
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(argv))
    finally:
        os.chdir(cwd)
    return code, out.getvalue(), err.getvalue()


def test_sample_keeps_the_chunks_drawn_and_says_so(tmp_path):
    # 200,000 outputs per chunk; the pilot that sizes memory is call 1, chunks are 2, 3, ...
    code, out, err = run(tmp_path, 3, "sample", "flaky.py:noisy_sum", "-x", "1", "-n", "1e6",
                         "--json")
    assert code == 130
    data = json.loads(out)
    assert data["interrupted"] is True and data["n"] == 400_000
    assert "interrupted" in err and "Traceback" not in err


def test_sample_interrupted_before_the_first_chunk(tmp_path):
    code, out, err = run(tmp_path, 1, "sample", "flaky.py:noisy_sum", "-x", "1", "-n", "1e6")
    assert code == 130
    assert "INTERRUPTED" in out and "0 outputs" in out and "Traceback" not in err


def test_exact_marks_its_partial_bound_in_terminal_json_and_html(tmp_path):
    # calls 1 to 3 check that the mechanism draws only from noise, and fresh noise;
    # enumeration: the probe that checks the noise is discrete is call 4, the probe that
    # sizes memory call 5; inputs are enumerated from call 6
    code, out, err = run(tmp_path, 8, "exact", "flaky.py:rr_count", "--backend", "enumerate",
                         "--html", "r.html")
    assert code == 130
    assert "INTERRUPTED" in out and "interrupted" in err
    assert "verified" not in out.split("verdict")[-1].splitlines()[0]
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "INTERRUPTED" in html
    code, out, _ = run(tmp_path, 8, "exact", "flaky.py:rr_count", "--backend", "enumerate",
                       "--json")
    assert code == 130 and json.loads(out)["details"]["interrupted"] is True
    # interrupted before two neighbouring inputs were both inferred: nothing to report
    code, out, err = run(tmp_path, 6, "exact", "flaky.py:rr_count", "--backend", "enumerate")
    assert code == 130 and err.strip() == "privet: interrupted."


def test_search_keeps_its_iterations_but_certifies_nothing(tmp_path):
    code, out, err = run(tmp_path, 60, "search", "flaky.py:noisy_sum", "--iterations", "50",
                         "--json", "--seed", "1")
    assert code == 130
    data = json.loads(out)
    assert data["details"]["interrupted"] is True and data["value"] == 0.0
    assert "nothing is certified" in data["details"]["verdict"]


def test_detect_interrupted_before_a_result_exits_130(tmp_path):
    code, out, err = run(tmp_path, 6, "detect", "flaky.py:noisy_sum", "--n-select", "1000",
                         "--n-final", "1000")
    assert code == 130 and err.strip() == "privet: interrupted."


@pytest.mark.parametrize("kind", ["json", "text"])
def test_report_of_an_interrupted_result_is_marked(tmp_path, kind):
    # the report itself ran to the end (exit 0); what it shows says it is partial
    code, out, _ = run(tmp_path, 8, "exact", "flaky.py:rr_count", "--backend", "enumerate",
                       "--json")
    (tmp_path / "saved.json").write_text(out)
    code, out, err = run(tmp_path, 4, "report", "saved.json", *(["--json"] if kind == "json"
                                                                 else []))
    assert code == 0
    assert ("INTERRUPTED" in out) if kind == "text" else json.loads(out)["details"][
        "interrupted"]
