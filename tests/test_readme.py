"""The README's ten-line Python example runs and says what it promises."""

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_example_runs():
    text = README.read_text(encoding="utf-8")
    code = re.search(r"## Ten lines of Python\s+```python\n(.*?)```", text, re.S).group(1)
    assert len(code.strip().splitlines()) <= 12
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(README), "exec"), {})
    lines = out.getvalue().strip().splitlines()
    assert lines[-1] == "no violation found"  # the example is the correct noisy max


def test_readme_five_minute_audit_works_as_written(tmp_path):
    """The audit section's file, command and test file, exactly as the README shows them."""
    import subprocess
    import sys

    text = README.read_text(encoding="utf-8")
    section = text.split("## Audit your own mechanism in five minutes")[1].split("\n## ")[0]
    blocks = re.findall(r"```(python|bash)\n(.*?)```", section, re.S)
    mech_file, command, test_file = (textwrap_dedent(b) for _, b in blocks[:3])
    (tmp_path / "my_mechanisms.py").write_text(mech_file)
    (tmp_path / "test_my_mechanisms.py").write_text(test_file)
    args = command.split()
    assert args[0].endswith("privet") and args[1] == "detect"
    exe = Path(sys.executable).parent / "privet"
    run = subprocess.run([str(exe), *args[1:]], cwd=tmp_path, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 1, run.stderr  # the leaky variant: a violation, exit code 1
    report = (tmp_path / "report.html").read_text()
    assert "violation found" in report and "https://" not in report
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-o", "addopts=", "-p",
                            "no:cacheprovider", "test_my_mechanisms.py"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=600)
    assert tests.returncode == 0 and "2 passed" in tests.stdout, tests.stdout[-1500:]


def textwrap_dedent(block: str) -> str:
    import textwrap

    return textwrap.dedent(block)
