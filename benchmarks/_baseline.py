"""Run today's privet (another git ref, by default ``main``) beside this checkout.

``baseline_src(ref)`` extracts ``src/`` of ``ref`` with ``git archive`` into
``benchmarks/out/baseline-<commit>/`` (once) and returns that ``src`` directory; a
subprocess with it first on ``PYTHONPATH`` imports that privet instead of this one.
``run_python(code, src)`` runs a snippet in a fresh interpreter (with ``src`` or this
checkout) and returns what it printed as JSON on its last line. Used by the benchmarks that
print "today's" figure next to ours, measured in the same run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "out"


def baseline_src(ref: str = "main") -> Path | None:
    """``src`` of ``ref`` extracted under benchmarks/out (None when git cannot give it)."""
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", ref], cwd=ROOT, check=True,
                                capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    dest = OUT / f"baseline-{commit}"
    if not (dest / "src" / "privet").exists():
        dest.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as tmp:
            tar = Path(tmp) / "src.tar"
            subprocess.run(["git", "archive", "--format=tar", "-o", str(tar), commit, "src"],
                           cwd=ROOT, check=True)
            with tarfile.open(tar) as t:
                t.extractall(dest, filter="data")
    return dest / "src"


def run_python(code: str, src: Path | str | None = None, timeout: float = 3600,
               argv: tuple = ()) -> dict:
    """Run ``code`` in a fresh interpreter (``argv`` as its ``sys.argv[1:]``); its last
    printed line is parsed as JSON."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(src) + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", code, *map(str, argv)], env=env,
                         capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    if out.returncode != 0:
        raise RuntimeError(f"subprocess failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])
