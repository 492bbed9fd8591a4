"""The benchmark library: the mechanisms of the five papers, written once against privet's
noise API, so each runs under Sampler and Replay (and, when its noise is finite, Enumerate).

>>> import privet.mechanisms as lib
>>> svt = lib.get("statdp.svt")
>>> svt.sample([1, 1, 1, 1, 1], 1000, seed=0).shape
(1000, 5)

Names are ``<paper>.<mechanism>``; papers: ``statdp``, ``dpfinder``, ``kolahal``, ``wmc``,
``faier``, ``gaussian`` (the approximate-DP and zCDP family) and the opt-in ``floats``
(floating-point mechanisms) and ``dpsniper`` (DP-Sniper's evaluation mechanisms;
:func:`opt_in`, see :data:`PAPERS`). Each mechanism carries its claimed epsilon (or its
(ε, δ) or zCDP claim), neighbor relation, input domain, non-private arguments with defaults,
``arg_ranges`` (a 2-tuple ``(low, high)`` is a real interval, a list is a set of choices),
``noise_args`` (arguments that set a noise scale and that detection may put at their low-
noise end, e.g. SVT's N), its output schema, its source, and ``true_epsilon``: the known
epsilon over its whole domain at the default epsilon and arguments (``math.inf`` for
unbounded violations, None when unknown). :func:`known_epsilon` recomputes it for another
epsilon, input length or arguments. :func:`example_input` gives a representative input of
each mechanism.

``Output.length`` is None both for scalar outputs and for outputs with one entry per input
entry; :func:`per_query` tells them apart.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..core.errors import PrivetError
from ..core.loading import load_object
from ..core.mechanism import Mechanism, as_mechanism
from . import dpfinder, dpsniper, faier, floats, gaussian, kolahal, libs, statdp, wmc

PAPERS: dict[str, str] = {
    "statdp": "Ding et al., Detecting Violations of Differential Privacy (CCS 2018)",
    "dpfinder": "Bichsel et al., DP-Finder (CCS 2018)",
    "kolahal": "Roy, Hsu, Albarghouthi, Learning Differentially Private Mechanisms (S&P 2021)",
    "wmc": "Oakley, Holtzen, Oprea, Tight Privacy and Accuracy Bounds via WMC",
    "faier": "Liu, Wang, Zhang, Verifying Pufferfish Privacy in HMMs (VMCAI 2022)",
    "gaussian": "the Gaussian family: Balle & Wang (ICML 2018), Canonne, Kamath, Steinke "
                "(NeurIPS 2020), Abadi et al. (CCS 2016); (ε, δ) and zCDP claims",
    "floats": "Mironov (CCS 2012), Jin et al. (S&P 2022), Casacuberta et al. (CCS 2022): "
              "floating-point mechanisms",
    "dpsniper": "Bichsel, Steffen, Bogunovic, Vechev, DP-Sniper (S&P 2021)",
}

_MODULES = {"statdp": statdp, "dpfinder": dpfinder, "kolahal": kolahal, "wmc": wmc,
            "faier": faier, "gaussian": gaussian, "floats": floats, "dpsniper": dpsniper}

# papers whose mechanisms are not part of all() (so not of the default suite): they are
# reached by name, by paper, and by ``privet suite --only floats`` (or ``dpsniper``)
OPT_IN = ("floats", "dpsniper")

_REGISTRY: dict[str, Mechanism] = {
    m.name: m for paper, module in _MODULES.items() if paper not in OPT_IN
    for m in module.MECHANISMS
}
_OPT_IN: dict[str, Mechanism] = {
    m.name: m for paper in OPT_IN for m in _MODULES[paper].MECHANISMS
}


def names() -> list[str]:
    """Every library name, in a stable order (paper by paper, as in the papers); the
    opt-in papers (:data:`OPT_IN`) are listed by :func:`opt_in`."""
    return list(_REGISTRY)


def all() -> dict[str, Mechanism]:  # noqa: A001 - the registry's public name
    """Every library mechanism, name -> Mechanism, in a stable order."""
    return dict(_REGISTRY)


def by_paper(paper: str) -> dict[str, Mechanism]:
    """The mechanisms of one paper (``statdp``, ``dpfinder``, ``kolahal``, ``wmc``,
    ``faier``, ``floats``, ``dpsniper``), name -> Mechanism."""
    key = str(paper).lower().replace("-", "").replace("_", "")
    if key not in _MODULES:
        raise PrivetError(
            f"unknown paper {paper!r}; the library has {', '.join(_MODULES)}."
        )
    return {m.name: m for m in _MODULES[key].MECHANISMS}


def get(name: str) -> Mechanism:
    """The library mechanism called ``name`` (e.g. ``statdp.svt``).

    A bare mechanism name (``svt``) is accepted when only one paper has it. Unknown names
    raise a :class:`PrivetError` naming the closest matches.
    """
    if isinstance(name, Mechanism):
        return name
    key = str(name).strip().lower().replace("-", "_")
    if key in _REGISTRY:
        return _REGISTRY[key]
    if key in _OPT_IN:
        return _OPT_IN[key]
    if key in libs.NAMES:  # real-library adapters (optional libraries, not in all())
        return libs.get(key)
    if "." not in key:
        hits = [n for n in _REGISTRY if n.split(".", 1)[1] in (key, key + "_")]
        if len(hits) == 1:
            return _REGISTRY[hits[0]]
        if hits:
            raise PrivetError(
                f"{name!r} is ambiguous: say which paper's, one of {', '.join(hits)}."
            )
    close = difflib.get_close_matches(key, list(_REGISTRY), n=3, cutoff=0.5)
    if not close and "." not in key:
        bare = {n.split(".", 1)[1]: n for n in _REGISTRY}
        close = [bare[b] for b in difflib.get_close_matches(key, list(bare), n=3, cutoff=0.5)]
    hint = f"did you mean {' or '.join(close)}?" if close else "see 'privet list --all'."
    raise PrivetError(f"no library mechanism named {name!r}; {hint}")


def load(target: str, epsilon: float | None = None) -> Mechanism:
    """A library mechanism by name (``statdp.svt``) or a user's mechanism by
    ``module:name`` / ``path/to/file.py:name`` (a plain function is wrapped as
    :func:`privet.as_mechanism` does), with its claimed epsilon replaced when given."""
    if ":" not in target:
        return get(target) if epsilon is None else get(target).replace(epsilon=epsilon)
    return as_mechanism(load_object(target), epsilon=epsilon)


def opt_in() -> dict[str, Mechanism]:
    """The mechanisms of the opt-in papers (:data:`OPT_IN`: the floating-point ones and
    DP-Sniper's), name -> Mechanism; like :func:`real_libraries`, they are not part of
    :func:`all`."""
    return dict(_OPT_IN)


def real_libraries() -> dict[str, Mechanism]:
    """Adapters of real DP libraries (IBM diffprivlib, OpenDP) whose library is installed,
    name -> Mechanism; see :mod:`privet.mechanisms.libs`. They are not part of :func:`all`."""
    return libs.real_libraries()


def _module(mech: Mechanism):
    paper = mech.name.split(".", 1)[0]
    if paper not in _MODULES or (mech.name not in _REGISTRY and mech.name not in _OPT_IN):
        raise PrivetError(f"{mech.name!r} is not a library mechanism.")
    return _MODULES[paper]


def per_query(mech: Mechanism | str) -> bool:
    """True when the mechanism outputs one entry per input entry (else one scalar)."""
    m = get(mech)
    return m.name in _module(m).PER_QUERY


def example_input(mech: Mechanism | str) -> np.ndarray:
    """A representative input of the mechanism (inside its domain)."""
    m = get(mech)
    return np.asarray(_module(m).EXAMPLES[m.name], dtype=float)


def known_epsilon(mech: Mechanism | str, epsilon: float | None = None,
                  length: int | None = None, args: Mapping[str, Any] | None = None
                  ) -> float | None:
    """The epsilon the literature gives for the mechanism at claimed ``epsilon`` (default:
    the mechanism's), on inputs of ``length`` entries (None: the whole domain), with
    ``args`` (default: its defaults). ``math.inf`` for unbounded violations, None when
    unknown. For DP-Finder's benchmarks these are the upper bounds the paper lists."""
    m = get(mech)
    eps = epsilon if epsilon is not None else m.epsilon
    eps = None if eps is None else float(eps)   # a zCDP claim has no ε
    merged = dict(m.args)
    merged.update(args or {})
    value = _module(m).KNOWN[m.name](eps, length, merged)
    return None if value is None else float(value)


__all__ = ["OPT_IN", "PAPERS", "all", "by_paper", "example_input", "get", "known_epsilon",
           "names", "opt_in", "per_query", "real_libraries"]
