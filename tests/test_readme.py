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
