"""ARCHITECTURE.md's one-way data flow, checked on the source: core <- stats <- execution <-
attacks/floats <- engines <- report/cli. Every import of a privet module (at the top or
inside a function) is read from the syntax tree."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "privet"

# package -> privet packages it must never import
FORBIDDEN = {
    "core": {"stats", "execution", "attacks", "floats", "detect", "search", "exact",
             "pufferfish", "synth", "suite", "report", "cli", "cli_support"},
    "stats": {"execution", "attacks", "floats", "detect", "search", "exact", "pufferfish",
              "synth", "suite", "report", "cli", "cli_support"},
    "execution": {"attacks", "floats", "detect", "search", "exact", "pufferfish", "synth",
                  "suite", "report", "cli", "cli_support"},
}
for engine in ("attacks", "floats", "detect", "search", "exact", "pufferfish", "synth"):
    FORBIDDEN[engine] = {"report", "cli", "cli_support", "suite"}
for lower in ("core", "stats", "execution"):
    FORBIDDEN[lower].add("mechanisms")  # the benchmark library sits above them


def _imports(path: Path) -> set[str]:
    """The privet top-level packages a module imports (absolute or relative)."""
    tree = ast.parse(path.read_text())
    depth = len(path.relative_to(SRC).parts) - 1  # package nesting below privet/
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[1] for a in node.names
                      if a.name.startswith("privet.") and a.name.count(".") >= 1}
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                parts = (node.module or "").split(".")
                if parts[0] != "privet":
                    continue
                rest = parts[1:]
            else:
                up = node.level - 1  # levels above this module's package
                if up > depth:
                    continue
                base = list(path.relative_to(SRC).parts[:-1])[: depth - up]
                rest = base + (node.module.split(".") if node.module else [])
            if rest:
                found.add(rest[0])
            else:  # from privet import x / from .. import x at the top
                found |= {a.name for a in node.names}
    return found


def _modules():
    for package in FORBIDDEN:
        root = SRC / package
        files = sorted(root.rglob("*.py")) if root.is_dir() else [SRC / f"{package}.py"]
        for f in files:
            yield package, f


@pytest.mark.parametrize("package,path", list(_modules()),
                         ids=lambda v: str(v.relative_to(SRC)) if isinstance(v, Path) else v)
def test_no_upward_import(package, path):
    rel = str(path.relative_to(SRC))
    bad = _imports(path) & FORBIDDEN[package]
    assert not bad, f"{rel} imports {sorted(bad)}, against the layering of ARCHITECTURE.md"


def test_the_checker_sees_relative_imports():
    """The reader itself: a relative import two levels up is attributed to its package."""
    f = SRC / "pufferfish" / "scenario.py"
    assert "core" in _imports(f) and "mechanisms" in _imports(f)
