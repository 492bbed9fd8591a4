"""The docs stay true: every Python block of docs/tour.md runs, and the example test file
passes under pytest."""

import re
import subprocess
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_tour_python_blocks_run_in_order(monkeypatch, capsys):
    text = (DOCS / "tour.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 6  # a mechanism, five engines' examples, the testing block
    monkeypatch.chdir(DOCS / "examples")
    namespace: dict = {"__name__": "tour"}
    for i, block in enumerate(blocks):
        exec(compile(block, f"tour.md block {i + 1}", "exec"), namespace)
    printed = capsys.readouterr().out
    assert "violation found (p = " in printed and "no violation found" in printed


def test_example_test_file_passes():
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-o", "addopts=",
                          "-p", "no:cacheprovider",
                          str(DOCS / "examples" / "test_my_mechanisms.py")],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert "3 passed" in res.stdout


def test_the_tour_names_only_real_commands():
    from privet.cli import build_parser

    parser, _ = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    text = (DOCS / "tour.md").read_text()
    shell = "\n".join(re.findall(r"```bash\n(.*?)```", text, flags=re.S))
    commands = re.findall(r"^privet (\w+)", shell, flags=re.M)
    assert len(commands) >= 3
    for cmd in commands:
        assert cmd in sub.choices, cmd
