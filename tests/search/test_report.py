"""``privet search`` CLI wiring and rendering (privet.report.search)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.console import Console

from privet.report.search import add_cli, render, run_cli
from privet.search import search

from . import mechs

TARGET = f"{Path(__file__).with_name('mechs.py')}:leaky"


def _parse(argv):
    parser = argparse.ArgumentParser(prog="privet")
    add_cli(parser.add_subparsers(dest="command"))
    return parser.parse_args(argv)


def test_cli_json(capsys):
    args = _parse(["search", TARGET, "--iterations", "1", "--n-confirm", "20000", "--json",
                   "--seed", "3"])
    assert run_cli(args) == 1  # exit 1: the certified bound exceeds the claimed epsilon
    data = json.loads(capsys.readouterr().out)
    assert data["__type__"] == "Bound" and data["mechanism"] == "leaky"
    assert data["value"] > 0.1 and data["seed"] == 3


def test_render_shows_bound_witness_and_trace():
    b = search(mechs.leaky, iterations=1, seed=0, n_cap=1 << 13, n_confirm=20_000,
               baseline=True)
    console = Console(record=True, width=140)
    console.print(render(b))
    text = console.export_text()
    assert "certified bound" in text and "ε ≥" in text
    assert "random-search baseline" in text
    assert "optimized" in text or "kept" in text
