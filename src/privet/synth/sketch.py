"""Mechanism sketches: a mechanism with holes for noise scales (KOLAHAL Sec. III.B).

A sketch is ordinary privet mechanism code ``fn(noise, x, **args)`` that asks for noise at
its holes through ``noise.hole(name, shape)``. The sketch also names the private input (the
``x`` argument), the adjacency relation, and the non-private arguments. A hole's noise
family (Laplace, exponential, Gaussian or two-sided geometric) is fixed by the sketch; its
scale is what synthesis fills in, possibly with ⊥, no noise at all::

    from privet.synth import sketch

    @sketch(holes=("threshold", "queries"), neighbors=privet.neighbors.all_differ(1),
            args={"T": 0.0})
    def above_t(noise, q, *, T, epsilon):
        t = T + noise.hole("threshold")
        a = q + noise.hole("queries", shape=q.shape)
        ...

``sketch.complete(exprs)`` fills the holes with grammar expressions and returns a native,
runnable :class:`privet.Mechanism`; ``sketch.concrete(scales)`` fills them with numbers
(the concretized sketch γ(M^c) of Sec. IV.B).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.errors import PrivetError
from ..core.mechanism import Domain, Mechanism, Output
from ..core.neighbors import Neighbors, all_differ
from ..core.noise import Dist, Noise, Shape, _shape
from .grammar import Expr, Grammar

FAMILIES = ("laplace", "exponential", "gaussian", "geometric")


class HoleNoise(Noise):
    """The noise a sketch sees: ``hole(name, shape)`` draws the hole's family at its scale.

    A hole whose scale is 0 (⊥) returns zeros and makes no draw. Other draws pass through to
    the wrapped interpreter, so a sketch may also use fixed noise of its own.
    """

    def __init__(self, inner: Noise, sketch: Sketch, scales: Sequence[float]):
        self.inner = inner
        self.size = inner.size
        self.semantics = getattr(inner, "semantics", "hard")
        self.sketch = sketch
        self.scales = [float(s) for s in scales]
        self.used: list[int] = []

    def _draw(self, dist: Dist, shape: Shape) -> np.ndarray:
        return self.inner._draw(dist, shape)

    def hole(self, hole: str | int, shape: int | Sequence[int] = ()) -> np.ndarray:
        """Noise of hole ``hole`` (its name or index), shape ``(size, *shape)``."""
        i = self.sketch.hole_index(hole)
        self.used.append(i)
        shp = _shape(shape)
        scale = self.scales[i]
        if scale <= 0:
            return np.zeros((self.size, *shp))
        family = self.sketch.families[i]
        target = self.inner
        if getattr(target, "recording", None) is not None:  # Replay: tag its source
            target = target.source if target.recording else None
        tag = getattr(target, "tag_hole", None)
        if tag is not None:
            tag(i)
        if family == "laplace":
            return self.inner.laplace(scale, shp)
        if family == "exponential":
            return self.inner.exponential(scale, shp)
        if family == "gaussian":
            return self.inner.gaussian(scale, shp)
        bound = self.sketch.geometric_bound
        alpha = math.exp(-1.0 / scale)
        return self.inner.geometric(alpha, shp, low=None if bound is None else -bound,
                                    high=bound)


@dataclass(frozen=True, eq=False)
class Sketch:
    """A mechanism with holes for noise scales, plus its private input and arguments.

    ``epsilon`` and ``length`` are γ, the setting at which examples are chosen and the noise
    region is found (Sec. IV.B); ``settings`` are the varied settings of Ex_test (Sec. IV.D),
    each a dict that may set ``epsilon``, ``length`` and arguments. ``textbook`` lists the
    expected answers (expression strings per hole) for benchmarks.
    """

    fn: Callable
    name: str
    holes: tuple[str, ...]
    families: tuple[str, ...]
    neighbors: Neighbors = field(default_factory=all_differ)
    domain: Domain = field(default_factory=Domain)
    args: Mapping[str, Any] = field(default_factory=dict)
    epsilon: float = 1.0
    length: int = 5
    settings: tuple[Mapping[str, Any], ...] = ()
    output: Output = field(default_factory=Output)
    grammar: Grammar = field(default_factory=Grammar.default)
    textbook: tuple[tuple[str, ...], ...] = ()
    geometric_bound: int | None = None
    description: str = ""

    def __post_init__(self):
        if not self.holes:
            raise PrivetError(
                f"sketch {self.name!r} has no holes: mark where noise may go with "
                "noise.hole(name) and list the holes in @sketch(holes=...)."
            )
        if len(set(self.holes)) != len(self.holes):
            raise PrivetError(f"sketch {self.name!r} repeats a hole name: {self.holes}.")
        if len(self.families) != len(self.holes):
            raise PrivetError(
                f"sketch {self.name!r} has {len(self.holes)} holes but "
                f"{len(self.families)} noise families."
            )
        for f in self.families:
            if f not in FAMILIES:
                raise PrivetError(
                    f"unknown noise family {f!r} in sketch {self.name!r}; use one of "
                    f"{', '.join(FAMILIES)}."
                )

    # -- holes -------------------------------------------------------------------------------
    @property
    def n_holes(self) -> int:
        return len(self.holes)

    @property
    def discrete(self) -> bool:
        """True when every hole draws discrete (geometric) noise."""
        return all(f == "geometric" for f in self.families)

    def hole_index(self, hole: str | int) -> int:
        if isinstance(hole, (int, np.integer)):
            if not 0 <= int(hole) < self.n_holes:
                raise PrivetError(
                    f"sketch {self.name!r} has holes 0..{self.n_holes - 1}, not {hole}."
                )
            return int(hole)
        try:
            return self.holes.index(hole)
        except ValueError:
            raise PrivetError(
                f"sketch {self.name!r} has no hole {hole!r}; its holes are "
                f"{', '.join(self.holes)}."
            ) from None

    # -- settings ------------------------------------------------------------------------------
    def gamma(self) -> dict[str, Any]:
        """γ: the arguments (with ``epsilon``) and input ``length`` of Sec. IV.B."""
        return {**dict(self.args), "epsilon": float(self.epsilon), "length": int(self.length)}

    def test_settings(self) -> list[dict[str, Any]]:
        """γ followed by the varied settings of Ex_test (Sec. IV.D), duplicates removed."""
        base = self.gamma()
        out = [base]
        varied = self.settings or (
            {"epsilon": self.epsilon / 2}, {"epsilon": self.epsilon * 2},
            *([{"length": 2 * self.length}] if _allows(self.domain, 2 * self.length) else []),
        )
        for s in varied:
            merged = {**base, **dict(s)}
            if merged not in out:
                out.append(merged)
        return out

    # -- running -------------------------------------------------------------------------------
    def run(self, noise: Noise, x: Any, setting: Mapping[str, Any], scales: Sequence[float]
            ) -> np.ndarray:
        """Outputs of the sketch on ``x`` with concrete ``scales`` (0 = ⊥) under ``noise``."""
        mech = self.concrete(scales)
        return mech.run(noise, x, _args(setting), check_input=False)

    def concrete(self, scales: Sequence[float], epsilon: float | None = None) -> Mechanism:
        """γ(M^c): the sketch with concrete numbers as hole scales (0 or None = ⊥)."""
        vals = [0.0 if s is None else float(s) for s in scales]
        if len(vals) != self.n_holes:
            raise PrivetError(f"sketch {self.name!r} needs {self.n_holes} scales, got {vals}.")
        sk = self

        def fn(noise: Noise, x: np.ndarray, **kw: Any) -> np.ndarray:
            return sk.fn(HoleNoise(noise, sk, vals), x, **_fn_args(sk.fn, kw))

        label = ", ".join("⊥" if v <= 0 else f"{v:.3g}" for v in vals)
        return self._mechanism(fn, f"{self.name}[{label}]", epsilon)

    def complete(self, exprs: Sequence[Expr], epsilon: float | None = None) -> Mechanism:
        """M^η: the sketch completed with one grammar expression per hole, as a mechanism.

        The scales are evaluated at run time from the input length and the arguments, so the
        mechanism is correct for every setting, not only γ.
        """
        exprs = tuple(exprs)
        if len(exprs) != self.n_holes:
            raise PrivetError(
                f"sketch {self.name!r} needs {self.n_holes} expressions, got {len(exprs)}."
            )
        sk = self

        def fn(noise: Noise, x: np.ndarray, **kw: Any) -> np.ndarray:
            n = int(np.asarray(x).shape[0]) if np.ndim(x) else 1
            scales = [e.value(n, kw) for e in exprs]
            return sk.fn(HoleNoise(noise, sk, scales), x, **_fn_args(sk.fn, kw))

        label = ", ".join(e.describe() for e in exprs)
        return self._mechanism(fn, f"{self.name}[{label}]", epsilon)

    def complete_from(self, texts: Sequence[str], epsilon: float | None = None) -> Mechanism:
        """:meth:`complete` from expression strings such as ``("2/ε", "⊥")``."""
        from .grammar import parse_expr

        return self.complete([parse_expr(t, self.grammar) for t in texts], epsilon)

    def _mechanism(self, fn: Callable, name: str, epsilon: float | None) -> Mechanism:
        return Mechanism(
            fn=fn, name=name, epsilon=float(epsilon if epsilon is not None else self.epsilon),
            neighbors=self.neighbors, domain=self.domain, args=dict(self.args),
            output=self.output, source=f"privet.synth completion of sketch {self.name}",
            description=self.description, passes_epsilon=True,
        )

    def probe(self) -> list[int]:
        """Run once at γ with unit scales and return the holes the code actually used."""
        from ..core.noise import Sampler

        setting = self.gamma()
        x = np.ones(setting["length"])
        hn = HoleNoise(Sampler(0, 2), self, [1.0] * self.n_holes)
        try:
            self.fn(hn, x, **_fn_args(self.fn, _args(setting)))
        except PrivetError:
            raise
        except Exception as err:
            raise PrivetError(
                f"sketch {self.name!r} raised {type(err).__name__}: {err} on input {x.tolist()}."
            ) from err
        return sorted(set(hn.used))

    def to_dict(self) -> dict:
        return {"name": self.name, "holes": list(self.holes), "families": list(self.families),
                "neighbors": self.neighbors.to_dict(), "args": dict(self.args),
                "epsilon": self.epsilon, "length": self.length,
                "grammar": self.grammar.describe()}


def _args(setting: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in setting.items() if k != "length"}


def _fn_args(fn: Callable, kw: Mapping[str, Any]) -> dict[str, Any]:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # pragma: no cover
        return dict(kw)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return dict(kw)
    return {k: v for k, v in kw.items() if k in params}


def _allows(dom: Domain, n: int) -> bool:
    dl = dom.length
    return dl is None or (n == dl if isinstance(dl, int) else dl[0] <= n <= dl[1])


def _sketch_length(name: str, dom: Domain, length: int | None,
                   settings: Sequence[Mapping[str, Any]]) -> int:
    """γ's input length: ``length``, else the domain's fixed length, else 5; one sentence
    when it or a setting's length lies outside what the domain allows (found mid-run
    before, as "input has length 8, but the domain needs length 4")."""
    n = int(length) if length is not None else (
        dom.length if isinstance(dom.length, int) else 5)
    if isinstance(dom.length, tuple) and length is None and not _allows(dom, n):
        n = dom.length[0] if n < dom.length[0] else dom.length[1]
    for where, v in [("length", n)] + [("settings", st["length"]) for st in settings
                                        if "length" in st]:
        if not _allows(dom, int(v)):
            raise PrivetError(
                f"sketch {name!r} asks for inputs of length {v} ({where}=), which its domain "
                f"({dom.describe()}) does not allow; change {where}= or the domain's length.")
    return n


def sketch(
    fn: Callable | None = None,
    *,
    holes: Sequence[str] | int,
    family: str | Sequence[str] = "laplace",
    neighbors: Neighbors | None = None,
    domain: Domain | None = None,
    args: Mapping[str, Any] | None = None,
    epsilon: float = 1.0,
    length: int | None = None,
    settings: Sequence[Mapping[str, Any]] = (),
    output: Output | None = None,
    grammar: Grammar | None = None,
    textbook: Sequence[Sequence[str]] = (),
    geometric_bound: int | None = None,
    name: str | None = None,
) -> Any:
    """Decorate ``fn(noise, x, **args)`` as a :class:`Sketch` with holes ``holes``.

    ``holes`` names the holes (or gives their number); ``family`` is one noise family for all
    holes or one per hole. ``epsilon``/``length`` fix γ (the paper's fixParams; ``length``
    defaults to the domain's fixed length, else 5); ``settings`` vary it for the test
    examples (a length the domain does not allow is refused here). ``geometric_bound``
    censors geometric noise to [-bound, bound] so that completions can be enumerated
    exactly.
    """

    def wrap(f: Callable) -> Sketch:
        if not callable(f):
            raise PrivetError("@sketch decorates a function fn(noise, x, **args).")
        names = tuple(f"η{i + 1}" for i in range(holes)) if isinstance(holes, int) \
            else tuple(holes)
        fams = (family,) * len(names) if isinstance(family, str) else tuple(family)
        sig = inspect.signature(f)
        defaults = {p.name: p.default for p in list(sig.parameters.values())[2:]
                    if p.default is not inspect.Parameter.empty and p.name != "epsilon"}
        defaults.update(args or {})
        dom = domain or Domain()
        nm = name or f.__name__
        n = _sketch_length(nm, dom, length, settings)
        return Sketch(
            fn=f, name=nm, holes=names, families=fams,
            neighbors=neighbors or all_differ(), domain=dom, args=defaults,
            epsilon=float(epsilon), length=n, settings=tuple(settings),
            output=output or Output(), grammar=grammar or Grammar.default(),
            textbook=tuple(tuple(t) for t in textbook), geometric_bound=geometric_bound,
            description=(inspect.getdoc(f) or "").split("\n")[0],
        )

    if fn is not None:
        return wrap(fn)
    return wrap
