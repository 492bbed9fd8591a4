"""privet: test, bound, verify and synthesize differentially private mechanisms.

Public API: :func:`mechanism` and the spec types, the noise interpreters, and one entry
point per engine -- :func:`detect`, :func:`search`, :func:`exact`, :func:`pufferfish`,
:func:`synth` -- plus :func:`suite` over the built-in benchmark library.

Each entry point is the engine's plain function, with its real signature and docstring
(``help(privet.detect)``, ``inspect.signature(privet.search)``); the engine's other
functions are imported from its package (``from privet.exact import accuracy``). Engines
are imported on first use, so ``import privet`` stays fast and optional dependencies stay
optional.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from .core import (
    ABORTED,
    FALSE,
    Domain,
    Enumerate,
    Mechanism,
    Output,
    PrivetError,
    Replay,
    Sampler,
    events,
    from_blackbox,
    from_statdp,
    from_vectorized,
    mechanism,
    neighbors,
    ops,
    results,
)

# ``from privet.neighbors import all_differ`` as well as ``privet.neighbors.all_differ``: the
# vocabulary modules live in privet.core, and are importable under their short names too
for _short in ("events", "neighbors", "ops", "results"):
    sys.modules.setdefault(f"{__name__}.{_short}", globals()[_short])
del _short

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time they load on first use
    from . import mechanisms
    from .detect import detect
    from .exact import exact
    from .pufferfish import pufferfish
    from .search import search
    from .suite import suite
    from .synth import synth

__version__ = "0.1.0"

# entry point -> the module that defines it
_ENTRY_POINTS = {"detect": "privet.detect", "search": "privet.search", "exact": "privet.exact",
                 "pufferfish": "privet.pufferfish", "synth": "privet.synth",
                 "suite": "privet.suite"}


def __getattr__(name: str) -> Any:
    if name in _ENTRY_POINTS:
        function = getattr(importlib.import_module(_ENTRY_POINTS[name]), name)
        globals()[name] = function  # later lookups find the function directly
        return function
    if name == "mechanisms":
        return importlib.import_module("privet.mechanisms")
    raise AttributeError(f"module 'privet' has no attribute {name!r}")


def __dir__() -> list[str]:
    """What ``dir(privet)`` and a notebook's completion show: the public names (the entry
    points load on first use, so they are not globals yet; helpers such as ``importlib``
    are not for users)."""
    return sorted(set(__all__) | {"__version__"})


class _Package(types.ModuleType):
    """``privet`` itself. Importing ``privet.detect`` (the package) binds it as an attribute
    of ``privet`` -- Python does that for every submodule -- which would hide the function
    ``privet.detect``. The engine packages stay in ``sys.modules`` (``from privet.detect
    import pvalue_curve`` works); the attribute stays the function."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _ENTRY_POINTS and isinstance(value, types.ModuleType):
            if name in self.__dict__:  # the function is already bound: keep it
                return
            value = getattr(value, name, None)
            if value is None:  # the package is still importing: bind the function later
                return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


# The layers above core plug into it here (core never imports them): results render through
# privet.report, Mechanism.sample draws through privet.execution. Each is imported on first
# use, so ``import privet`` stays fast.
def _render_html(obj: Any) -> str:
    from .report.html import repr_html

    return repr_html(obj)


def _render_rich(obj: Any) -> Any:
    from .report import render_any

    return render_any(obj)


def _collect(*args: Any, **kwargs: Any) -> Any:
    from .execution import collect

    return collect(*args, **kwargs)


results.RENDERERS.update(html=_render_html, rich=_render_rich)
# (the module itself: privet.core.mechanism the name is the decorator)
importlib.import_module("privet.core.mechanism").SAMPLERS["collect"] = _collect


__all__ = [
    "ABORTED", "FALSE", "Domain", "Enumerate", "Mechanism", "Output", "PrivetError", "Replay",
    "Sampler", "detect", "events", "exact", "from_blackbox", "from_statdp", "from_vectorized",
    "mechanism", "mechanisms", "neighbors", "ops", "pufferfish", "results", "search", "suite",
    "synth",
]
