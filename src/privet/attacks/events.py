"""The threshold event of a score: DP-Sniper's optimal threshold attack (Bichsel et al.,
S&P 2021: the approximately optimal attack built from a classifier) with a randomized
boundary.

``S = {b : s(b) > t}`` plus each output scoring exactly ``t`` with probability ``tie``. With
a randomized boundary every probability P[M(x') in S] between two attainable ones is hit
exactly (DP-Sniper fixes it at c); outputs of discrete mechanisms share a score, so a
deterministic boundary would jump over it. The coins at the boundary are drawn from a
generator passed in by the sampling task (chunk seeds, so every executor gives the same
counts) or, when none is given, from a generator seeded by the event's ``seed`` and a hash
of the tied rows (a display's choice only: every count that certifies passes a generator,
:meth:`Threshold.indicator`, and an exact probability takes the boundary's share,
:meth:`Threshold.weights`; hashed coins are the same in every sample whose tied rows are
alike).

The event serializes (``spec()``: the score's plain parameters) and rebuilds with
:func:`privet.core.events.from_spec` once this module is imported (the engines import it).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..core.events import Event
from .scores import FLIP, Bits, Linear, Negated, Score, Stat, Table, score_from_spec

__all__ = ["FLOAT_NOTE", "Threshold", "reads_float_bits"]


def _plain(v: float):
    v = float(v)
    return "inf" if v == np.inf else "-inf" if v == -np.inf else v


@dataclass(frozen=True, eq=False)
class Threshold(Event):
    """``score(ω) > threshold``, and ``= threshold`` with probability ``tie``."""

    kind: ClassVar[str] = "threshold"
    score: Any
    threshold: float
    tie: float = 1.0
    seed: int = 0

    def __post_init__(self):
        if isinstance(self.score, dict):
            object.__setattr__(self, "score", score_from_spec(self.score))
        if not isinstance(self.score, Score):
            raise TypeError(f"a threshold event needs a score, got {self.score!r}.")
        object.__setattr__(self, "threshold", float(self.threshold))
        object.__setattr__(self, "tie", float(min(max(self.tie, 0.0), 1.0)))

    def contains(self, outputs, rng: np.random.Generator | None = None) -> np.ndarray:
        s = self.score(outputs)
        inside = s > self.threshold
        if self.tie > 0:
            at = s == self.threshold
            if self.tie >= 1:
                inside |= at
            elif at.any():
                if rng is None:
                    rows = np.asarray(outputs)[at]
                    digest = hashlib.blake2b(np.ascontiguousarray(rows).tobytes(),
                                             digest_size=8).digest()
                    rng = np.random.default_rng([int(self.seed),
                                                 int.from_bytes(digest, "little")])
                inside[at] = rng.random(int(at.sum())) < self.tie
        return inside

    def indicator(self, outputs, rng: np.random.Generator | None = None) -> np.ndarray:
        return self.contains(outputs, rng)

    def weights(self, outputs) -> np.ndarray:
        """1 above the threshold, ``tie`` at it, 0 below: the randomized boundary's exact
        share of each row (no coins)."""
        s = self.score(outputs)
        return (s > self.threshold) + self.tie * (s == self.threshold)

    def describe(self) -> str:
        t, score = self.threshold, self.score
        if isinstance(score, Bits):  # the inner event's words, about the view of ω
            return score.view.rename(Threshold(score.inner, t, self.tie, self.seed).describe())
        boundary = "" if self.tie in (0.0, 1.0) else \
            f" (outputs scoring exactly {t:.4g} with probability {self.tie:.3g})"
        if isinstance(score, Table) and self.tie in (0.0, 1.0):
            return score.event_text(t, strict=self.tie == 0.0)
        if isinstance(score, Negated) and isinstance(score.inner, Table) \
                and self.tie in (0.0, 1.0):
            # -s >= t is s <= -t: the complement of the outputs scoring above -t
            text = score.inner.event_text(-t, strict=self.tie > 0.0)
            return text.replace("∈", "\0", 1).replace("∉", "∈", 1).replace("\0", "∉", 1)
        op = "≥" if self.tie > 0 else ">"
        lin = score if isinstance(score, Linear) else \
            score.inner if isinstance(score, Negated) and isinstance(score.inner, Linear) \
            else None
        if lin is not None:
            # one entry's threshold in its own units (a fitted score is centered, scaled)
            solved = lin.solved(t, op) if lin is score else lin.solved(-t, FLIP[op])
            if solved is not None:
                tie = "" if self.tie in (0.0, 1.0) else \
                    f" (outputs exactly at it with probability {self.tie:.3g})"
                return solved + tie
        if isinstance(score, Stat) and score.sign < 0:
            return f"{score.negated().describe()} {FLIP[op]} {-t:.4g}{boundary}"
        if isinstance(score, Negated):
            return f"{score.inner.describe()} {FLIP[op]} {-t:.4g}{boundary}"
        return f"{score.describe()} {op} {t:.4g}{boundary}"

    def spec(self) -> dict:
        return {"kind": self.kind, "score": self.score.spec(),
                "threshold": _plain(self.threshold), "tie": self.tie, "seed": int(self.seed)}


def reads_float_bits(spec: Any) -> bool:
    """Whether an event (its ``spec()``, or None) reads a float-exact view of the outputs
    (:class:`~privet.attacks.features.BitView`: granularity, trailing zeros, low bits,
    residue): a violation through it is one of the doubles, not of the real numbers."""
    if isinstance(spec, dict):
        return spec.get("kind") == "bits" or any(reads_float_bits(v) for v in spec.values())
    if isinstance(spec, (list, tuple)):
        return any(reads_float_bits(v) for v in spec)
    return False


FLOAT_NOTE = ("in floating point: the event reads the outputs' doubles (their granularity "
              "or low bits), which differ between the inputs; --float-features off "
              "(float_features='off' in Python) tests the mechanism over the real numbers")
