"""privet: test, bound, verify and synthesize differentially private mechanisms.

Public API: :func:`mechanism` and the spec types, the noise interpreters, and one entry
point per engine -- :func:`detect`, :func:`search`, :func:`exact`, :func:`pufferfish`,
:func:`synth` -- plus :func:`suite` over the built-in benchmark library. Engines are
imported lazily, so ``import privet`` stays fast and optional dependencies stay optional.
"""

from __future__ import annotations

import importlib
from typing import Any

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

__version__ = "0.1.0"

_ENGINES = {
    "detect": ("privet.detect", "detect"),
    "search": ("privet.search", "search"),
    "exact": ("privet.exact", "exact"),
    "pufferfish": ("privet.pufferfish", "pufferfish"),
    "synth": ("privet.synth", "synth"),
    "suite": ("privet.suite", "suite"),
}


def __getattr__(name: str) -> Any:
    if name in _ENGINES:
        module, attr = _ENGINES[name]
        loaded = importlib.import_module(module)
        # engine packages are callable modules (privet._engine): privet.detect(...) and
        # privet.detect.pvalue_curve(...) both work; suite is a plain function
        return loaded if callable(loaded) else getattr(loaded, attr)
    if name == "mechanisms":
        return importlib.import_module("privet.mechanisms")
    raise AttributeError(f"module 'privet' has no attribute {name!r}")


__all__ = [
    "ABORTED", "FALSE", "Domain", "Enumerate", "Mechanism", "Output", "PrivetError", "Replay",
    "Sampler", "detect", "events", "exact", "from_blackbox", "from_statdp", "from_vectorized",
    "mechanism", "neighbors", "ops", "pufferfish", "results", "search", "suite", "synth",
]
