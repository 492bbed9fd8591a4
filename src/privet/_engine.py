"""Engine packages that are also their entry points.

``privet.detect`` is both a package (``privet.detect.pvalue_curve``, ...) and the function
``privet.detect(mechanism, ...)``. Python binds the package to the attribute as soon as any
of its submodules is imported, so the package module itself is made callable: calling it
calls the function of the same name inside it.
"""

from __future__ import annotations

import sys
import types
from typing import Any


class EngineModule(types.ModuleType):
    """A module whose call is its entry function (``privet.exact(...)`` -> ``exact.exact``)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return getattr(self, self.__name__.rsplit(".", 1)[-1])(*args, **kwargs)


def make_callable(module_name: str) -> None:
    """Make the package ``module_name`` callable as its entry function."""
    sys.modules[module_name].__class__ = EngineModule
