"""Reachability of observed doubles: can ``M(D)`` output exactly this double?

Two methods, the strongest that applies:

* **exact inversion** (:class:`Additive`) for a mechanism written against privet's noise API
  whose output is ``f(D) + V`` coordinate by coordinate, ``V`` one draw of a declared sampler
  (:mod:`privet.floats.samplers`). For a target ``y``:

  1. the *addition gap*: IEEE addition is monotone, so the doubles ``v`` with
     ``fl(f(D) + v) = y`` form an interval, found by bisection over the doubles in their
     order (no assumption at all). When it is empty, no noise value of any sampler gives
     ``y`` -- Mironov's observation (CCS 2012, Sec. 3) that ``x + noise`` skips the doubles
     finer than ``x``'s grid.
  2. the *sampler gap*: the candidate words whose draw can land in that interval (the real
     inverse of the sampler, widened by libm's stated error) are evaluated exactly, by
     NumPy's compiled sampler on a tape; a hit is a witness, and when the candidates are
     complete and none hits, ``y`` is unreachable.

  The structure ``f(D) + V`` is checked on a calibration batch of random words and on every
  witness; ``f(D)`` is the output when the draw is exactly +0.0.

* **sighting** for everything else (black boxes, several draws, non-additive code): ``y`` is
  reachable when it occurs in a seeded sample of ``M(D)`` -- a constructive proof that says
  nothing when it fails (undecided).

Outputs are compared as bit patterns (``-0.0`` and ``0.0`` are different outputs).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core import bits
from ..core.errors import NoiseError, UnsupportedError
from ..core.mechanism import Mechanism
from ..core.noise import Dist, Sampler, _Probe
from .bitgen import interruptible, tape_generator
from .samplers import (
    DEFAULT_ULPS,
    Inverse,
    describe_words,
    draw_one,
    draw_values,
    inverse_of,
    scalar_params,
    tape_order,
)

REACHABLE, UNREACHABLE, UNDECIDED = 1, 0, -1
ADDITION_GAP = "addition gap"
SAMPLER_GAP = "sampler gap"
WITNESS = "witness uniform"
SEEN = "seen in a sample"
MODEL = "the documented sampler reaches it"

PROBE_CAP = 64          # candidates per target in the first pass (evenly spaced)
FULL_CAP = 1 << 16      # candidates per target in the complete pass
CALIBRATION = 64        # random words on which f(D) + V is checked

_KEY_LO = int(bits.order_key(-np.inf))
_KEY_HI = int(bits.order_key(np.inf))


def as_bits(values) -> np.ndarray:
    """Output doubles as int64 bit patterns (exact identity, -0.0 != 0.0)."""
    return np.ascontiguousarray(np.asarray(values, dtype=np.float64)).view(np.int64)


def noise_interval(c, y) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(v_lo, v_hi, gap)``: the doubles ``v`` with ``fl(c + v) = y`` (as reals) are those
    of ``[v_lo, v_hi]``; ``gap`` marks the targets for which there is none. Bisection over
    the order keys of the doubles: 64 vectorized steps, IEEE addition only."""
    c = np.asarray(c, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    c, y = np.broadcast_arrays(c, y)
    ky = bits.order_key(y)

    def first(pred_ge: bool) -> np.ndarray:
        lo = np.full(y.shape, _KEY_LO - 1, dtype=np.int64)
        hi = np.full(y.shape, _KEY_HI + 1, dtype=np.int64)
        with np.errstate(invalid="ignore", over="ignore"):
            while np.any(hi > lo + 1):
                mid = (lo >> 1) + (hi >> 1) + (lo & hi & 1)  # no overflow of hi - lo
                s = bits.order_key(c + bits.from_order_key(mid))
                pred = (s >= ky) if pred_ge else (s > ky)
                hi = np.where(pred, mid, hi)
                lo = np.where(pred, lo, mid)
        return hi

    lo_key = first(True)            # smallest v with fl(c + v) >= y
    hi_key = first(False) - 1       # largest v with fl(c + v) <= y
    gap = (lo_key > hi_key) | (lo_key > _KEY_HI) | (hi_key < _KEY_LO)
    lo_key = np.clip(lo_key, _KEY_LO, _KEY_HI)
    hi_key = np.clip(hi_key, _KEY_LO, _KEY_HI)
    return bits.from_order_key(lo_key), bits.from_order_key(hi_key), gap


@dataclass
class Verdicts:
    """Per-target reachability: ``status`` (1 reachable, 0 unreachable, -1 undecided),
    ``reason`` (how it was decided), ``witness`` (the words or sample position that produce
    the target), ``candidates`` (words evaluated exactly)."""

    status: np.ndarray
    reason: list
    witness: list
    candidates: np.ndarray
    method: str
    assumptions: str = ""
    details: dict = field(default_factory=dict)


class Additive:
    """The structure ``M(D) = f(D) + V`` of a native mechanism on one input (see module)."""

    def __init__(self, mech: Mechanism, x: Any, args: dict | None, dist: Dist, shape: tuple,
                 inverse: Inverse, seed: int = 0):
        self.mech, self.x, self.args = mech, np.asarray(x), dict(args or {})
        self.dist, self.shape, self.inverse = dist, tuple(shape), inverse
        self.m = int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1
        neutral = np.broadcast_to(np.asarray(inverse.neutral, dtype=np.uint64),
                                  (1, self.m, inverse.width))
        self.c = self.outputs(neutral)[0]
        self._calibrate(np.random.default_rng(seed))

    # -- running the mechanism on chosen words -------------------------------------------
    def outputs(self, rows: np.ndarray) -> np.ndarray:
        """Mechanism outputs ``(n, m)`` on word rows ``(n, m, width)`` (exact: the real
        sampling code on a tape). Raises NoiseError when a rejection misaligned the tape."""
        rows = np.asarray(rows, dtype=np.uint64)
        gen, tape = tape_generator(tape_order(self.inverse, rows))
        with interruptible():
            out = self.mech.run(Sampler(gen, len(rows)), self.x, self.args, check_input=False)
        tape.check(rows.size)
        return np.asarray(out, dtype=np.float64).reshape(len(rows), self.m)

    def coordinate_dist(self, j: int) -> Dist:
        return Dist(self.dist.kind, scalar_params(self.dist, j, self.shape or (1,)))

    def _calibrate(self, rng: np.random.Generator) -> None:
        words = self.inverse.random_words(rng, CALIBRATION * self.m)
        rows = words.reshape(CALIBRATION, self.m, self.inverse.width)
        try:
            out = self.outputs(rows)
        except NoiseError:
            raise UnsupportedError("the calibration words were rejected by the sampler.") \
                from None
        for j in range(self.m):
            v = draw_values(self.coordinate_dist(j), self.inverse, rows[:, j, :])
            if not np.array_equal(as_bits(self.c[j] + v), as_bits(out[:, j])):
                raise UnsupportedError(
                    f"mechanism {self.mech.name!r} is not of the form f(D) + noise (output "
                    f"coordinate {j}), so its noise cannot be inverted exactly."
                )

    # -- deciding targets -----------------------------------------------------------------
    def check(self, ys: np.ndarray, ulps: float = DEFAULT_ULPS, cap: int = FULL_CAP
              ) -> Verdicts:
        """Reachability of output rows ``ys`` (``(T,)`` or ``(T, m)``)."""
        ys = np.asarray(ys, dtype=np.float64).reshape(-1, self.m)
        t = len(ys)
        status = np.full((t, self.m), UNDECIDED, dtype=np.int8)
        reason = np.full((t, self.m), "", dtype=object)
        found = np.empty((t, self.m), dtype=object)
        tried = np.zeros(t, dtype=np.int64)
        for j in range(self.m):
            s, r, w, n = self._coordinate(j, ys[:, j], ulps, cap)
            status[:, j], reason[:, j], found[:, j] = s, r, w
            tried += n
        row_status = np.where((status == UNREACHABLE).any(axis=1), UNREACHABLE,
                              np.where((status == REACHABLE).all(axis=1), REACHABLE,
                                       UNDECIDED)).astype(np.int8)
        first = np.argmax(status == UNREACHABLE, axis=1)  # the coordinate that decides it
        why = reason[np.arange(t), first]
        if self.m > 1:
            why = np.array([f"{w} (coordinate {j})" for w, j in zip(why, first)], dtype=object)
        reasons = np.where(row_status == UNREACHABLE, why,
                           np.where(row_status == REACHABLE, WITNESS, "")).tolist()
        witness: list = [tuple(found[i]) if row_status[i] == REACHABLE else None
                         for i in range(t)]  # the words of each coordinate's draw
        self._confirm(ys, row_status, witness)
        return Verdicts(row_status, reasons, witness, tried,
                        method=f"exact inversion of {self.inverse.describe()}",
                        assumptions=self.assumptions(ulps))

    def assumptions(self, ulps: float) -> str:
        gap = (f"libm's log/exp within {ulps:g} ulps" if self.inverse.exact else
               "none (this sampler is only searched for witnesses)")
        return (f"output = f(D) + noise (checked on {CALIBRATION} random words and every "
                f"witness); sampler gaps assume {gap}; 53-bit uniforms are uniform")

    def _coordinate(self, j: int, y: np.ndarray, ulps: float, cap: int):
        t = len(y)
        status = np.full(t, UNDECIDED, dtype=np.int8)
        reason = np.full(t, "", dtype=object)
        words = np.empty(t, dtype=object)
        tried = np.zeros(t, dtype=np.int64)
        c = self.c[j]
        v_lo, v_hi, gap = noise_interval(c, y)
        status[gap] = UNREACHABLE
        reason[gap] = ADDITION_GAP
        dist = self.coordinate_dist(j)
        params = dist.params
        todo = np.flatnonzero(~gap)
        for limit in (PROBE_CAP, cap):
            if not todo.size:
                break
            hit = np.zeros(todo.size, dtype=bool)
            complete = np.ones(todo.size, dtype=bool)
            for cand in self.inverse.candidates(params, v_lo[todo], v_hi[todo], limit, ulps):
                complete &= cand.complete
                if not len(cand.owner):
                    continue
                target = as_bits(y[todo][cand.owner])
                keep = self._prescreen(params, cand.words, c, target)
                words_k = cand.words[keep]
                v, ok = self._values(dist, words_k)
                good = np.zeros(len(cand.owner), dtype=bool)
                good[keep] = ok & (as_bits(c + v) == target[keep])
                np.add.at(tried, todo[cand.owner], 1)
                for k in np.flatnonzero(good):  # first hit of each owner
                    o = cand.owner[k]
                    if not hit[o]:
                        hit[o] = True
                        words[todo[o]] = tuple(int(w) for w in cand.words[k])
            idx_hit = todo[hit]
            status[idx_hit] = REACHABLE
            reason[idx_hit] = WITNESS
            settled = hit | (complete & self.inverse.exact)
            closed = todo[~hit & complete & self.inverse.exact]
            status[closed] = UNREACHABLE
            reason[closed] = SAMPLER_GAP
            todo = todo[~settled]
        return status, reason, words, tried

    def _prescreen(self, params: dict, words: np.ndarray, c: float, target: np.ndarray
                   ) -> np.ndarray:
        """Indices of the candidates worth evaluating exactly: all of them, or those whose
        IEEE-only replica hits the target, after checking the replica against the real
        sampler on up to 64 candidates (any disagreement: all of them)."""
        every = np.arange(len(words))
        rep = self.inverse.replica(params, words)
        if rep is None or not len(words):
            return every
        probe = every[:: max(1, len(words) // 64)]
        dist = Dist(self.dist.kind, params)
        real, ok = self._values(dist, words[probe])
        if not np.array_equal(as_bits(real[ok]), as_bits(rep[probe][ok])):
            return every
        return np.flatnonzero(as_bits(c + rep) == target)

    def _values(self, dist: Dist, words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Draw values of candidate rows, with a mask of rows the sampler accepted."""
        try:
            return draw_values(dist, self.inverse, words), np.ones(len(words), dtype=bool)
        except NoiseError:
            vals = np.zeros(len(words))
            ok = np.zeros(len(words), dtype=bool)
            with interruptible():  # once for the loop, not a signal handler per row
                for i, row in enumerate(words):  # rejections: one row at a time
                    v = draw_one(dist, self.inverse, row)
                    if v is not None:
                        vals[i], ok[i] = v, True
            return vals, ok

    def tape_of(self, witness: tuple) -> np.ndarray:
        """The tape of one sample whose coordinates draw the given words."""
        if self.inverse.interleaved:
            return np.array([w for coord in witness for w in coord], dtype=np.uint64)
        return tape_order(self.inverse, np.array([witness], dtype=np.uint64))

    def run_tape(self, tape: np.ndarray) -> np.ndarray:
        """The mechanism's output on one sample drawing exactly the words of ``tape`` (run
        it inside :func:`~privet.floats.bitgen.interruptible` for Ctrl-C to stop it)."""
        gen, bitgen = tape_generator(tape)
        out = self.mech.run(Sampler(gen, 1), self.x, self.args, check_input=False)
        bitgen.check(len(tape))
        return np.asarray(out, dtype=np.float64).reshape(self.m)

    def _confirm(self, ys: np.ndarray, status: np.ndarray, witness: list) -> None:
        """Run the mechanism itself on every witness: it must output the target (one batch
        when every witness uses the fast path's words, else one run each)."""
        idx = np.flatnonzero(status == REACHABLE)
        if not idx.size:
            return
        width = self.inverse.width
        try:
            rows = np.array([witness[i] for i in idx], dtype=np.uint64)
            if rows.shape != (idx.size, self.m, width):
                raise ValueError
            out = self.outputs(rows)
        except (ValueError, NoiseError):  # wedge or tail words, or a rejection
            with interruptible():
                out = np.stack([self.run_tape(self.tape_of(witness[i])) for i in idx])
        if not np.array_equal(as_bits(out), as_bits(ys[idx])):
            raise UnsupportedError(
                f"mechanism {self.mech.name!r} is not of the form f(D) + noise: a witness "
                "word of its sampler does not reproduce the output."
            )


def additive(mech: Mechanism, x: Any, args: dict | None = None) -> Additive:
    """The exact inverse of a native mechanism on input ``x``; :class:`UnsupportedError`
    (one sentence) when it is a black box, draws more than once, or is not ``f(D) + V``."""
    if not mech.supports("replay"):
        raise UnsupportedError(
            f"exact reachability needs the noise API, which the {mech.kind} mechanism "
            f"{mech.name!r} does not use; privet can only look for its outputs in samples."
        )
    data = mech.domain.check(x)
    resolved = mech.resolve_args(args)
    rec = _Probe()  # lists the run's draws (size 1)
    mech.run(rec, data, resolved, check_input=False)
    if len(rec.draws) != 1:
        raise UnsupportedError(
            f"exact reachability inverts one noise draw, and mechanism {mech.name!r} makes "
            f"{len(rec.draws)}."
        )
    dist, shape = rec.draws[0]
    inverse = inverse_of(dist)
    out = mech.run(rec, data, resolved, check_input=False)
    m = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if np.asarray(out).size != m or len(shape) > 1:
        raise UnsupportedError(
            f"exact reachability needs one output coordinate per noise coordinate; "
            f"mechanism {mech.name!r} draws shape {shape} and outputs {np.asarray(out).shape[1:]}."
        )
    return Additive(mech, data, resolved, dist, shape, inverse)


class Sighting:
    """A seeded sample of ``M(x)`` to look outputs up in (drawn once): ``y`` is reachable
    when it occurs among the ``n`` outputs; the witness is its position in
    ``mech.sample(x, n, seed=seed)``. Undecided otherwise."""

    def __init__(self, mech: Mechanism, x: Any, *, n: int, seed: int, args: dict | None = None):
        self.n, self.seed = int(n), int(seed)
        sample = np.asarray(mech.sample(x, self.n, args=args, seed=self.seed), dtype=np.float64)
        rows = as_bits(sample.reshape(len(sample), -1))
        self.width = rows.shape[1]
        if self.width == 1:
            self.order = np.argsort(rows[:, 0], kind="stable")
            self.keys = rows[self.order, 0]
        else:  # one entry per distinct row (its bytes), first occurrence kept
            self.index: dict[bytes, int] = {}
            for i, r in enumerate(rows):
                self.index.setdefault(r.tobytes(), i)

    def check(self, ys: np.ndarray) -> Verdicts:
        targets = as_bits(np.asarray(ys, dtype=np.float64).reshape(len(ys), -1))
        t = len(targets)
        if self.width == 1:
            pos = np.minimum(np.searchsorted(self.keys, targets[:, 0]), len(self.keys) - 1)
            hit = self.keys[pos] == targets[:, 0]
            where = self.order[pos]
        else:
            found = [self.index.get(r.tobytes()) for r in targets]
            hit = np.array([f is not None for f in found], dtype=bool)
            where = np.array([f or 0 for f in found], dtype=np.int64)
        status = np.where(hit, REACHABLE, UNDECIDED).astype(np.int8)
        witness = [{"seed": self.seed, "n": self.n, "index": int(w)} if h else None
                   for w, h in zip(where, hit)]
        return Verdicts(status, [SEEN if h else "" for h in hit], witness,
                        np.zeros(t, dtype=np.int64),
                        method=f"sighting in {self.n:,} outputs of M(D)",
                        assumptions="none (a sighting is a proof; a miss proves nothing)")


def sighting(mech: Mechanism, x: Any, ys: np.ndarray, *, n: int, seed: int,
             args: dict | None = None) -> Verdicts:
    """:class:`Sighting` of ``n`` seeded outputs of ``M(x)``, then a look-up of ``ys``."""
    return Sighting(mech, x, n=n, seed=seed, args=args).check(ys)


def lattice_model(k: int = -1074, label: str = "a lattice sampler") -> Callable:
    """Reachability under a *documented* sampler model for black boxes: the output is a
    real on the lattice ``2^k·Z`` drawn with full support (an exact discrete Laplace or
    Gaussian, as OpenDP documents for its float mechanisms) and rounded to the nearest
    double. Every finite double that is the rounding of a lattice point is then reachable
    from every input: a double ``y`` is, when ``2^k`` divides it or ``2^k`` is finer than
    half its ulp. Returns ``model(x, ys) -> Verdicts`` for :func:`privet.floats.porosity`.
    The verdicts rest on the documentation, not on the library's code."""

    def model(x, ys) -> Verdicts:
        y = np.asarray(ys, dtype=np.float64).reshape(len(ys), -1)
        finite = np.isfinite(y)
        on = np.mod(np.where(finite, y, 0.0), 2.0 ** k) == 0
        fine = bits.ulp(np.where(finite, y, 0.0)) / 2 > 2.0 ** k
        ok = np.all(finite & (on | fine), axis=1)
        status = np.where(ok, REACHABLE, UNDECIDED).astype(np.int8)
        return Verdicts(status, [MODEL if o else "" for o in ok], [None] * len(y),
                        np.zeros(len(y), dtype=np.int64),
                        method=f"the documented model of {label} (lattice 2^{k})",
                        assumptions=f"{label} draws on the lattice 2^{k} with full support "
                                    "and rounds to the nearest double, as documented")

    return model


def addition_model(offset: Callable[[np.ndarray], Any] | None = None,
                   label: str = "the library") -> Callable:
    """Reachability for a black box whose code returns ``f(D) + v`` in double precision for
    some double noise value ``v`` -- whatever its sampler (``offset(x)`` gives ``f(D)``,
    default the first entry of the input). The addition gap of :func:`noise_interval` then
    decides unreachability exactly (no double ``v`` rounds to the output); every other
    output stays undecided. Returns ``model(x, ys) -> Verdicts`` for
    :func:`privet.floats.porosity`. The verdicts rest on that reading of the code."""

    def model(x, ys) -> Verdicts:
        c = np.asarray(offset(x) if offset is not None else np.asarray(x).ravel()[:1],
                       dtype=np.float64).ravel()
        y = np.asarray(ys, dtype=np.float64).reshape(len(ys), -1)
        gap = np.zeros(len(y), dtype=bool)
        for j in range(y.shape[1]):
            gap |= noise_interval(c[j % len(c)], y[:, j])[2]
        status = np.where(gap, UNREACHABLE, UNDECIDED).astype(np.int8)
        return Verdicts(status, [ADDITION_GAP if g else "" for g in gap], [None] * len(y),
                        np.zeros(len(y), dtype=np.int64),
                        method=f"the addition gap of {label} (output = f(D) + v in doubles)",
                        assumptions=f"{label} returns f(D) + v rounded to a double, for some "
                                    "double v (its code)", details={"offset": c})

    return model


def witness_text(row) -> str:
    """Words of an exact witness (hex), or the sample position of a sighting."""
    if isinstance(row, dict):
        return f"output #{row['index']} of {row['n']:,} with seed {row['seed']}"
    return " | ".join(describe_words(coord) for coord in row)


__all__ = ["ADDITION_GAP", "Additive", "MODEL", "REACHABLE", "SAMPLER_GAP", "SEEN", "UNDECIDED",
           "UNREACHABLE", "Verdicts", "WITNESS", "addition_model", "additive", "as_bits",
           "Sighting", "lattice_model",
           "noise_interval", "sighting", "witness_text"]
