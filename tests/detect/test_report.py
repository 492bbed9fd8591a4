"""Rendering, plot and CLI of privet detect."""

import argparse
import json

from rich.console import Console

from privet.detect import detect
from privet.mechanisms import get
from privet.report.detect import add_cli, plot_curve, render, run_cli


def test_render_and_plot(tmp_path):
    r = detect(get("statdp.histogram_eps").replace(epsilon=0.7), seed=1, n_select=5000,
               n_final=10000, test_epsilons=[0.5, 1.0, 2.0])
    console = Console(record=True, width=120)
    console.print(render(r))
    text = console.export_text()
    assert "violation found" in text and "event E" in text and "p-value curve" in text
    path = plot_curve(r.curve, str(tmp_path / "curve.png"))
    with open(path, "rb") as fh:
        assert fh.read(8) == b"\x89PNG\r\n\x1a\n"


def test_cli_json_and_exit_code(capsys, tmp_path):
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    add_cli(sub)
    args = parser.parse_args(["detect", "statdp.noisy_max_v1b", "--n-select", "5000",
                              "--n-final", "10000", "--seed", "3", "--json",
                              "--test-epsilons", "0.5:1.5:3",
                              "--plot", str(tmp_path / "p.png")])
    code = run_cli(args)
    data = json.loads(capsys.readouterr().out)
    assert code == 1 and data["__type__"] == "DetectResult"
    assert data["p_value"] < 0.05 and len(data["curve"]["p_values"]) == 3
    assert (tmp_path / "p.png").exists()


def test_cli_fixed_size_draws_every_sample(capsys):
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    add_cli(sub)
    common = ["detect", "statdp.noisy_max_v1b", "--n-select", "5000", "--n-final", "10000",
              "--seed", "3", "--json"]
    assert run_cli(parser.parse_args(common)) == 1
    seq = json.loads(capsys.readouterr().out)
    assert run_cli(parser.parse_args(common + ["--fixed-size"])) == 1
    fixed = json.loads(capsys.readouterr().out)
    assert fixed["counterexample"]["n"] == [10000, 10000]
    assert seq["details"]["samples"] < fixed["details"]["samples"]
