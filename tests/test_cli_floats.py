"""``privet floats ...``: exit codes, JSON, and one-sentence errors (three processes)."""

from __future__ import annotations

import json

from privet.core.results import from_jsonable

from .test_cli import run


def test_porosity_certifies_infinity_and_exits_1():
    res = run("floats", "porosity", "floats.laplace", "--d1", "0", "--d2", "1", "-n", "300",
              "--first", "--json")
    assert res.returncode == 1, res.stderr
    out = from_jsonable(json.loads(res.stdout))
    assert out.witness is not None and out.epsilon == float("inf")


def test_reach_reads_hex_doubles():
    res = run("floats", "reach", "floats.laplace", "--input", "1",
              "--outputs", "0x1p-60,1.0", "--json")
    assert res.returncode == 1, res.stderr
    rows = json.loads(res.stdout)["outputs"]
    assert [r["status"] for r in rows] == ["unreachable", "reachable"]


def test_bad_input_is_one_sentence():
    res = run("floats", "reach", "floats.laplace", "--input", "1", "--outputs", "0xzz")
    assert res.returncode == 2 and "cannot read" in res.stderr
    assert "Traceback" not in res.stderr
