"""Resolve a target (``module:name`` or ``path/to/file.py:name``) to the object it names:
the loader behind every entry point that takes a user's mechanism by name (the CLI, the
suite, Pufferfish specs, synthesis sketches)."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .errors import PrivetError
from .mechanism import Mechanism

USER_MODULE_PREFIX = "_privet_user_"  # the module name of a file loaded as path/to/file.py:NAME


def load_object(target: str) -> Any:
    """The object named by ``target``: ``package.module:attr`` or ``path/to/file.py:attr``."""
    if ":" not in target:
        raise PrivetError(
            f"cannot find {target!r}: give a library name (see 'privet list'), "
            "MODULE:NAME or path/to/file.py:NAME."
        )
    where, attr = target.rsplit(":", 1)
    if where.endswith(".py") or "/" in where:
        path = Path(where)
        if not path.exists():
            raise PrivetError(f"file {where!r} does not exist.")
        name = f"{USER_MODULE_PREFIX}{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise PrivetError(f"cannot import {where!r} as a Python file.")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        _import(lambda: spec.loader.exec_module(module), repr(where), "file",
                f"importing {where!r} failed")
    else:
        if "" not in sys.path and str(Path.cwd()) not in sys.path:
            sys.path.insert(0, str(Path.cwd()))  # like `python -m`: modules beside you import
        module = _import(lambda: importlib.import_module(where), f"module {where!r}", "module",
                         f"cannot import module {where!r}")
    if not hasattr(module, attr):
        raise PrivetError(f"{where!r} has no {attr!r}{suggest_name(module, attr)}")
    return getattr(module, attr)


def _import(run: Callable[[], Any], what: str, kind: str, failed: str) -> Any:
    """``run()``, with what the user's code raised while importing turned into one sentence
    (a PrivetError keeps its own, prefixed with where it came from)."""
    try:
        return run()
    except PrivetError as err:
        raise err.with_prefix(f"in {what}: ") from err
    except SystemExit as err:
        raise PrivetError(f"importing {what} called sys.exit({err.code!r}); a mechanism "
                          f"{kind} must not exit the program.") from None
    except Exception as err:
        raise PrivetError(f"{failed}: {one_line(err)}") from err


def one_line(err: BaseException) -> str:
    text = f"{type(err).__name__}: {err}".strip().splitlines()[0]
    return text if text.endswith(".") else text + "."


def suggest_name(module: Any, attr: str) -> str:
    """'; did you mean ...? Mechanisms in it: ...' for a typo in a target's name."""
    import difflib
    import inspect

    names = [n for n in dir(module) if not n.startswith("_")]
    mechs = [n for n in names if isinstance(getattr(module, n), Mechanism)]
    # a file of implementations has no Mechanism: its own functions, not what it imported
    # (a typo must not suggest 'np')
    own = [n for n in names if inspect.isfunction(getattr(module, n))
           and getattr(getattr(module, n), "__module__", None) == module.__name__]
    kind, pool = ("mechanisms", mechs) if mechs else ("functions", own)
    close = difflib.get_close_matches(attr, pool, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else "."
    if pool:
        more = f" ({len(pool)} in all)" if len(pool) > 10 else ""
        hint += f" Its {kind}: {', '.join(pool[:10])}{more}."
    return hint
