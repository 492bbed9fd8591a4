"""Resolve a CLI target (a library name, ``module:name`` or ``path/file.py:name``) to an object."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

from .core.errors import PrivetError
from .core.mechanism import Mechanism, as_mechanism


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
        name = f"_privet_user_{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise PrivetError(f"cannot import {where!r} as a Python file.")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as err:
            raise PrivetError(f"importing {where!r} failed: {type(err).__name__}: {err}.") from err
    else:
        try:
            module = importlib.import_module(where)
        except Exception as err:
            raise PrivetError(f"cannot import module {where!r}: {err}.") from err
    try:
        return getattr(module, attr)
    except AttributeError:
        raise PrivetError(f"module {where!r} has no attribute {attr!r}.") from None


def load_mechanism(target: str, epsilon: float | None = None) -> Mechanism:
    """A library mechanism by name (``statdp.svt``) or a user mechanism by ``module:name``."""
    if ":" not in target:
        from . import mechanisms

        return mechanisms.get(target) if epsilon is None else \
            mechanisms.get(target).replace(epsilon=epsilon)
    return as_mechanism(load_object(target), epsilon=epsilon)
