"""The installed console script: list, sample, suite, and clean errors (exit 2)."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).parent / "privet"


def run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    if not SCRIPT.exists():  # pragma: no cover - installed with pip install -e .
        pytest.skip("the privet console script is not installed next to this Python")
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=timeout)


def test_list_shows_the_library():
    res = run("list", "--json")
    assert res.returncode == 0, res.stderr
    lib = json.loads(res.stdout)
    assert "statdp.svt" in lib and "faier.truncated_geometric" in lib
    assert lib["dpfinder.at5"]["true_epsilon"] in ("inf", float("inf")) or \
        lib["dpfinder.at5"]["true_epsilon"] is not None
    text = run("list", "--paper", "wmc")
    assert text.returncode == 0 and "randomized_response" in text.stdout


def test_sample_summarizes_and_is_reproducible():
    a = run("sample", "statdp.noisy_max_v1a", "--input", "1,1,1,1,2", "-n", "20000",
            "--seed", "3", "--json")
    b = run("sample", "statdp.noisy_max_v1a", "--input", "1,1,1,1,2", "-n", "20000",
            "--seed", "3", "--json")
    assert a.returncode == 0, a.stderr
    assert a.stdout == b.stdout
    summary = json.loads(a.stdout)
    assert summary["n"] == 20000
    shares = {f["output"]: f["share"] for f in summary["frequencies"]}
    assert shares[4] == max(shares.values())  # the largest query wins most often


def test_sample_exact_prints_the_fig1a_row():
    res = run("sample", "faier.truncated_geometric", "--input", "0", "--exact", "--json")
    assert res.returncode == 0, res.stderr
    probs = {d["output"]: d["probability"] for d in json.loads(res.stdout)["distribution"]}
    assert probs == {0: "2/3", 1: "1/6", 2: "1/6"}


def test_user_mechanism_file_and_bad_input(tmp_path):
    src = tmp_path / "mine.py"
    src.write_text(textwrap.dedent("""
        import privet

        @privet.mechanism(epsilon=1.0)
        def noisy_sum(noise, x, *, epsilon):
            return x.sum() + noise.laplace(1 / epsilon)

        @privet.mechanism(epsilon=1.0)
        def broken(noise, x, *, epsilon):
            raise RuntimeError("oops")
    """))
    ok = run("sample", f"{src}:noisy_sum", "--input", "1,2", "-n", "1000")
    assert ok.returncode == 0, ok.stderr
    bad = run("sample", f"{src}:broken", "--input", "1,2", "-n", "10")
    assert bad.returncode == 2
    assert "raised RuntimeError: oops" in bad.stderr and "Traceback" not in bad.stderr
    missing = run("sample", "statdp.no_such_thing", "--input", "1")
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    neg = run("sample", f"{src}:noisy_sum", "--input", "1", "--claimed", "-1")
    assert neg.returncode == 2 and "positive" in neg.stderr


def test_suite_runs_from_the_console_script():
    res = run("suite", "--quick", "--only", "faier", "--engines", "sample", "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["__type__"] == "SuiteResult" and not out["interrupted"]
    rows, lines = out["rows"], out["lines"]
    assert {r["mechanism"] for r in rows} >= {"faier.truncated_geometric"}
    assert all(r["engine"] == "sample" and r["figure"] > 0 for r in rows)
    # sampling alone shows no violation: the joined verdict must not claim one
    assert {ln["mechanism"] for ln in lines} == {r["mechanism"] for r in rows}
    assert all(ln["verdict"] == "no violation found" for ln in lines)


USER_FILE = """
import privet
from privet import ops

@privet.mechanism(epsilon=1.0, neighbors=privet.neighbors.all_differ(1))
def my_max(noise, q, *, epsilon):
    return ops.argmax(q + noise.laplace(2 / epsilon, q.shape), axis=-1)

@privet.mechanism(epsilon=1.0, neighbors=privet.neighbors.all_differ(1))
def my_leaky_max(noise, q, *, epsilon):
    return ops.max(q + noise.laplace(2 / epsilon, q.shape), axis=-1)

def three_args(a, b, c):
    return a
"""


def _one_sentence_error(res: subprocess.CompletedProcess) -> str:
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert "Traceback" not in res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("privet: error: ")
    return lines[0]


def test_detect_audits_a_user_file_by_path_and_by_module(tmp_path):
    (tmp_path / "audit_me.py").write_text(USER_FILE)
    small = ["--n-select", "20000", "--n-final", "100000", "--seed", "1", "--json"]
    leaky = run("detect", f"{tmp_path / 'audit_me.py'}:my_leaky_max", *small)
    assert leaky.returncode == 1, leaky.stderr  # a violation: exit 1
    out = json.loads(leaky.stdout)
    assert out["counterexample"] is not None and out["p_value"] < 0.05
    ok = subprocess.run([str(SCRIPT), "detect", "audit_me:my_max", *small], cwd=tmp_path,
                        capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["verdict"] == "no violation found"


def test_user_file_mistakes_get_one_sentence(tmp_path):
    path = tmp_path / "audit_me.py"
    path.write_text(USER_FILE)
    typo = _one_sentence_error(run("detect", f"{path}:my_maxx"))
    assert "did you mean 'my_max'?" in typo
    sig = _one_sentence_error(run("detect", f"{path}:three_args", "--epsilon", "1"))
    assert "takes (a, b, c)" in sig and "three_args(x)" in sig
    (tmp_path / "syntax.py").write_text("def f(x:\n")
    syn = _one_sentence_error(run("detect", f"{tmp_path / 'syntax.py'}:f"))
    assert "SyntaxError" in syn
    (tmp_path / "needs.py").write_text("import a_module_that_is_not_there_42\n")
    imp = _one_sentence_error(run("detect", f"{tmp_path / 'needs.py'}:f"))
    assert "ModuleNotFoundError" in imp
    (tmp_path / "nodefault.py").write_text(
        "import privet\n@privet.mechanism(epsilon=1.0)\n"
        "def m(noise, x, k):\n    return x + noise.laplace(1.0, x.shape)\n")
    nd = _one_sentence_error(run("detect", f"{tmp_path / 'nodefault.py'}:m"))
    assert "'k' with no default" in nd
    missing = _one_sentence_error(run("detect", f"{tmp_path / 'nowhere.py'}:f"))
    assert "does not exist" in missing


def test_cli_approximate_dp(tmp_path):
    # an (ε, δ) violation exits 1 with the tested δ; the exact profile exits 0 when verified
    res = run("detect", "gaussian.wrong_neighbors", "--n-select", "20000", "--n-final",
              "100000", "--n-max", "2000000", "--seed", "0")
    assert res.returncode == 1, res.stderr
    out = " ".join(res.stdout.split())          # rich may wrap lines
    assert "violation (exact)" in out and "test δ = 0.001" in out   # the white box
    res = run("exact", "gaussian.discrete", "--no-progress")
    assert res.returncode == 0 and "verified: δ(1)" in " ".join(res.stdout.split())
    bad = tmp_path / "bad_claims.py"
    bad.write_text(
        "import privet\n"
        "@privet.mechanism(epsilon=1, delta=1.5)\n"
        "def m(noise, x, *, epsilon):\n"
        "    return x[0] + noise.gaussian(1.0)\n")
    res = run("detect", f"{bad}:m")
    assert res.returncode == 2
    assert "delta must lie in [0, 1)" in res.stderr and "Traceback" not in res.stderr
    res = run("detect", "gaussian.analytic", "--delta", "2")
    assert res.returncode == 2 and "--delta" in res.stderr and "< 1" in res.stderr


def test_exact_refuses_two_results_at_once():
    # --delta-for 0.5 --accuracy 1 ran accuracy and dropped --delta-for without a word
    r = run("exact", "wmc.randomized_response", "--length", "2", "--delta-for", "0.5",
            "--accuracy", "1")
    assert r.returncode == 2
    assert "--accuracy and --delta-for each ask for a different result" in r.stderr


def test_list_all_shows_every_target_family():
    # privet list left out the floats, DP-Sniper and DP-library targets every command takes
    r = run("list", "--all", "--json")
    assert r.returncode == 0
    families = {name.split(".", 1)[0] for name in json.loads(r.stdout)}
    assert {"floats", "dpsniper", "statdp"} <= families
    plain = " ".join(run("list").stdout.split())
    assert "more targets" in plain and "privet list --all" in plain
