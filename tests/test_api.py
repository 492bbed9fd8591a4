"""The public entry points are plain functions with real signatures (issue 16, item 3)."""

import inspect
import pydoc
import subprocess
import sys
from pathlib import Path

import privet

ENTRY_POINTS = ("detect", "search", "exact", "pufferfish", "synth", "suite")


def test_every_public_entry_point_lists_its_parameters():
    for name in privet.__all__:
        obj = getattr(privet, name)
        if not callable(obj) or isinstance(obj, type):
            continue
        params = inspect.signature(obj).parameters
        kinds = {p.kind for p in params.values()}
        assert params and kinds != {inspect.Parameter.VAR_POSITIONAL,
                                    inspect.Parameter.VAR_KEYWORD}, name
    for name in ENTRY_POINTS:
        f = getattr(privet, name)
        assert inspect.isfunction(f), name
        first = next(iter(inspect.signature(f).parameters))
        assert first in ("mechanism", "target", "sketch", "engines"), (name, first)
    assert "seed" in inspect.signature(privet.detect).parameters
    assert "iterations" in inspect.signature(privet.search).parameters


def test_help_shows_the_function_first():
    for name in ENTRY_POINTS:
        text = pydoc.plain(pydoc.render_doc(getattr(privet, name)))
        assert text.splitlines()[0] == f"Python Library Documentation: function {name} in " \
                                       f"module privet.{name}"
        assert text.splitlines()[2].startswith(f"{name}(")


def test_entry_points_stay_functions_after_any_import_order():
    """Importing an engine's submodules first (which binds packages as attributes) must not
    turn ``privet.detect`` back into a module; ``import privet`` loads no engine."""
    code = ("import sys, privet\n"
            "assert 'privet.detect' not in sys.modules and 'scipy.stats' not in sys.modules\n"
            "import privet.detect.engine, privet.exact.bdd, privet.search.relaxed\n"
            "from privet.synth import sketch\n"
            "import inspect\n"
            "for n in ('detect', 'exact', 'search', 'synth'):\n"
            "    assert inspect.isfunction(getattr(privet, n)), n\n"
            "from privet.detect import pvalue_curve\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr


def test_the_package_is_typed():
    assert (Path(privet.__file__).parent / "py.typed").exists()
