"""Declared float samplers, run exactly and inverted: which uniforms can produce a double.

A noise draw of privet's API (``noise.laplace(b, sampler=...)``, ``noise.gaussian(s, ...)``)
is a deterministic float function of the 64-bit words its generator hands out. For each
declared sampler this module knows

* how to evaluate that function on chosen words *exactly*: the draw runs through
  :meth:`privet.core.noise.Dist.sample` on a :class:`~privet.floats.bitgen.TapeBitGenerator`,
  so NumPy's compiled sampler (or privet's own NumPy code) computes it with the float
  operations of a real run;
* how to invert it: for a target interval of noise values ``[v_lo, v_hi]``, the candidate
  words whose draw can land in it (:meth:`Inverse.candidates`). The windows come from the
  real inverse of the sampler widened by a stated bound on libm's error (``ulps``, default 4:
  glibc documents at most 1 ulp for ``log`` and ``log1p`` on x86-64, and its ``log`` since
  2.28 is within 0.52 ulp), plus a margin of whole grid steps; every candidate is then
  evaluated exactly, so a wide window costs time, never soundness.

``complete`` says whether the candidates cover every preimage (then "no candidate hits"
proves the target unreachable) or are only a search for a witness (Box-Muller and the polar
method draw two uniforms per value: 2^106 pairs cannot be enumerated, so privet looks for a
witness pair and otherwise says "undecided").

Samplers:

* ``laplace/numpy`` -- NumPy's ``random_laplace`` (numpy/random/src/distributions/
  distributions.c): ``U = next_double()``; ``U >= 0.5``: ``loc - scale·log(2.0 - U - U)``;
  ``0 < U < 0.5``: ``loc + scale·log(U + U)``; ``U == 0`` is rejected and redrawn. This is
  the textbook floating-point Laplace mechanism whose holes Mironov (CCS 2012, Sec. 3)
  describes: the 2^53 uniforms reach only some of the doubles near any output.
* ``laplace/inverse_cdf`` -- the textbook formula ``-b·sgn(u)·ln(1 - 2|u|)``,
  ``u = U - 1/2``.
* ``gaussian/numpy`` -- NumPy's ziggurat ``random_standard_normal``: one word ``r``, layer
  ``idx = r & 0xff``, sign bit 8, ``rabs = (r >> 9) & (2^52 - 1)``, value ``rabs·wi[idx]``
  when ``rabs < ki[idx]`` (99.3 % of draws), a rejection step for the layer's wedge
  (another uniform), and the tail ``r + xx``, ``xx = -log1p(-U1)/r``, for layer 0. The
  tables ``wi``, ``ki`` and the tail start ``r`` are read off NumPy itself through the tape
  (:func:`ziggurat_tables`), never copied.
* ``gaussian/box_muller``, ``gaussian/polar`` -- two uniforms per value; witness search only
  (Jin, McMurtry, Rubinstein, Ohrimenko, S&P 2022, Sec. 4, study their porosity).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..core.errors import NoiseError, UnsupportedError
from ..core.noise import Dist
from .bitgen import TWO53, interruptible, tape_generator, uniform_words

TWO52 = 4503599627370496.0
K_HALF = 1 << 52          # the uniform k/2^53 = 1/2
K_MAX = (1 << 53) - 1
DEFAULT_ULPS = 4
REL_STEP = 2.0 ** -50     # widening of every computed grid bound (exp, division: < 2 ulps)
GRID_MARGIN = 4           # whole grid steps added on each side of every window


@dataclass
class Candidates:
    """Candidate words for a batch of targets.

    ``words`` has one row per candidate (``width`` words each, in the order the sampler
    reads them); ``owner`` names the target of each row; ``complete[i]`` is True when the
    rows of target i cover every word that can produce a value in its interval.
    """

    words: np.ndarray
    owner: np.ndarray
    complete: np.ndarray
    width: int

    @staticmethod
    def empty(n: int, width: int, complete: bool = True) -> Candidates:
        return Candidates(np.zeros((0, width), dtype=np.uint64), np.zeros(0, dtype=np.int64),
                          np.full(n, complete), width)


def _ranges(lo: np.ndarray, hi: np.ndarray, cap: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every integer of ``[lo_i, hi_i]`` with its owner i (empty when lo > hi); targets whose
    range is longer than ``cap`` get ``cap`` evenly spaced points (ends included) and are
    reported in the third array as incomplete."""
    lo = np.asarray(lo, dtype=np.int64)
    hi = np.asarray(hi, dtype=np.int64)
    span = np.where(hi >= lo, hi - lo + 1, 0)
    full = span <= cap
    count = np.where(full, span, cap)
    owner = np.repeat(np.arange(len(lo)), count)
    start = np.cumsum(count) - count
    step = np.arange(int(count.sum()), dtype=np.int64) - np.repeat(start, count)
    ratio = np.where(full, 1.0, (span - 1) / max(cap - 1, 1))
    offs = np.where(np.repeat(full, count), step,
                    np.floor(step * np.repeat(ratio, count)).astype(np.int64))
    return np.repeat(lo, count) + offs, owner, full


class Inverse:
    """The inverse of one declared sampler (subclasses); see the module docstring."""

    kind = ""
    sampler = ""
    width = 1               # words per scalar draw on the fast path
    exact = True            # candidates can be complete
    neutral = (0,)          # words whose draw is exactly +0.0
    interleaved = True      # NumPy's C loops read a value's words together; privet's own
                            # vectorized samplers read one batch of uniforms per role

    def candidates(self, params: dict, v_lo: np.ndarray, v_hi: np.ndarray, cap: int,
                   ulps: float = DEFAULT_ULPS) -> list[Candidates]:  # pragma: no cover
        raise NotImplementedError

    def replica(self, params: dict, words: np.ndarray) -> np.ndarray | None:
        """The draw on candidate rows by a NumPy formula of IEEE operations only (no libm),
        or None. Used to set aside candidates cheaply; the replica is checked against the
        real sampler on a sample of every batch and on every candidate it keeps."""
        return None

    def random_words(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` rows of words that the sampler accepts without rejection, ``(n, width)``."""
        k = rng.integers(1, 1 << 53, size=(n, self.width), dtype=np.int64)
        return uniform_words(k)

    def describe(self) -> str:
        return f"{self.kind}/{self.sampler}"


class _LaplaceInverse(Inverse):
    """NumPy's ``random_laplace`` and the textbook inverse CDF share their structure:
    ``k < 2^52`` gives ``b·log(k/2^52) < 0``, ``k >= 2^52`` gives ``-b·log(t) >= 0`` with
    ``t`` = ``2 - k/2^52`` (exactly for the textbook formula; NumPy's ``2.0 - U - U`` rounds
    twice, within 2^-52 of it)."""

    kind = "laplace"
    neutral = (int(uniform_words(K_HALF)),)  # U = 1/2: -b·log(1) = 0.0 in both samplers

    def candidates(self, params, v_lo, v_hi, cap, ulps=DEFAULT_ULPS):
        b = float(params["scale"])
        v_lo = np.asarray(v_lo, dtype=float)
        v_hi = np.asarray(v_hi, dtype=float)
        r = (ulps + 4) * 2.0 ** -52  # relative error of w = v/b against log(t)
        ks, owners, fulls = [], [], []
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            # negative branch: v = b·log(t), t = k/2^52, k in [1, 2^52 - 1]
            neg = v_lo < 0
            w_lo = v_lo / b * (1 + r)
            w_hi = np.minimum(v_hi, 0.0) / b * (1 - r)
            k_lo = np.floor(np.exp(w_lo) * TWO52 * (1 - REL_STEP)) - GRID_MARGIN
            k_hi = np.ceil(np.exp(w_hi) * TWO52 * (1 + REL_STEP)) + GRID_MARGIN
            k_lo = np.where(neg, np.maximum(k_lo, 1), 1)
            k_hi = np.where(neg, np.minimum(k_hi, K_HALF - 1), 0)
            # positive branch: v = -b·log(t), t ~ 2 - k/2^52, k in [2^52, 2^53 - 1]
            pos = v_hi >= 0
            t_hi = np.exp(-np.maximum(v_lo, 0.0) / b * (1 - r)) * (1 + REL_STEP)
            t_lo = np.exp(-v_hi / b * (1 + r)) * (1 - REL_STEP)
            j_lo = np.floor((2.0 - t_hi) * TWO52) - GRID_MARGIN
            j_hi = np.ceil((2.0 - t_lo) * TWO52) + GRID_MARGIN
            j_lo = np.where(pos, np.maximum(j_lo, K_HALF), 1)
            j_hi = np.where(pos, np.minimum(j_hi, K_MAX), 0)
        n = len(v_lo)
        complete = np.ones(n, dtype=bool)
        for lo, hi in ((k_lo, k_hi), (j_lo, j_hi)):
            k, owner, full = _ranges(lo.astype(np.int64), hi.astype(np.int64), cap)
            ks.append(k)
            owners.append(owner)
            fulls.append(full)
            complete &= full
        k = np.concatenate(ks)
        return [Candidates(uniform_words(k)[:, None], np.concatenate(owners), complete, 1)]


class NumpyLaplace(_LaplaceInverse):
    sampler = "numpy"


class InverseCdfLaplace(_LaplaceInverse):
    sampler = "inverse_cdf"
    interleaved = False


# -- NumPy's ziggurat -------------------------------------------------------------------------

ZIG_IDX_BITS = 8
ZIG_RABS_SHIFT = 9
ZIG_RABS_MAX = (1 << 52) - 1


def _zig_word(rabs, sign, idx) -> np.ndarray:
    rabs = np.asarray(rabs, dtype=np.uint64)
    sign = np.asarray(sign, dtype=np.uint64)
    return (rabs << np.uint64(ZIG_RABS_SHIFT)) | (sign << np.uint64(8)) | \
        np.asarray(idx, dtype=np.uint64)


@dataclass(frozen=True)
class ZigguratTables:
    """The constants NumPy's ziggurat uses, read off NumPy through the tape."""

    wi: np.ndarray     # value = rabs · wi[idx]
    ki: np.ndarray     # fast path iff rabs < ki[idx]
    r: float           # start of the tail (layer 0)


def _normal_on(words) -> tuple[float, int]:
    gen, tape = tape_generator(words)
    value = float(gen.standard_normal())
    return value, tape.position


@functools.lru_cache(maxsize=1)
def ziggurat_tables() -> ZigguratTables:
    """Read ``wi``, ``ki`` and the tail start of NumPy's ziggurat by running it on chosen
    words: ``rabs = 1`` returns ``wi[idx]`` on the fast path; ``ki[idx]`` is the smallest
    ``rabs`` that leaves the fast path (bisection on the number of words consumed); the tail
    with ``U1 = 0`` returns its start ``r``. About 13,000 calls, once per process."""
    u0 = int(uniform_words(0))  # accepts every wedge value near 0 (the test is f < 1)
    wi = np.empty(256)
    ki = np.empty(256, dtype=np.int64)
    for idx in range(256):
        v, used = _normal_on([int(_zig_word(1, 0, idx)), u0])
        if used not in (1, 2):
            raise NoiseError("NumPy's ziggurat does not have the layout privet expects.")
        wi[idx] = v
        lo, hi = -1, 1 << 52  # fast at every rabs <= lo (none yet); slow at hi (past the end)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            _, used = _normal_on([int(_zig_word(mid, 0, idx)), u0])
            lo, hi = (mid, hi) if used == 1 else (lo, mid)
        ki[idx] = hi
    tail = [int(_zig_word(ZIG_RABS_MAX & ~(1 << 8), 0, 0)), int(uniform_words(0)),
            int(uniform_words(K_HALF))]
    r, used = _normal_on(tail)
    if used != 3:
        raise NoiseError("NumPy's ziggurat tail does not have the layout privet expects.")
    return ZigguratTables(wi=wi, ki=ki, r=r)


class NumpyNormal(Inverse):
    """NumPy's ziggurat. Fast-path values ``rabs·wi[idx]`` are one IEEE product, so the
    candidate ``rabs`` of each layer is ``|z| / wi[idx]`` give or take a step; the wedge
    (``rabs >= ki[idx]``, ``idx > 0``) returns the same product after an acceptance test on
    one more uniform (tried at both ends, ``U = 0`` and ``U = 1 - 2^-53``: the test is linear
    in U); the tail returns ``r + xx`` with ``xx = -log1p(-U1) / r``, accepted when some
    ``U2`` passes (tried at ``U2 = 1 - 2^-53``, the most accepting one)."""

    kind = "gaussian"
    sampler = "numpy"
    neutral = (int(_zig_word(0, 0, 2)),)  # rabs = 0: +0.0 on the fast path (ki[1] = 0)

    def replica(self, params, words):
        if words.shape[1] != 1:
            return None
        tab = ziggurat_tables()
        w = words[:, 0]
        idx = (w & np.uint64(0xFF)).astype(np.int64)
        rabs = ((w >> np.uint64(ZIG_RABS_SHIFT)) & np.uint64(ZIG_RABS_MAX)).astype(np.float64)
        x = rabs * tab.wi[idx]  # the fast path: one IEEE product
        x = np.where((w >> np.uint64(8)) & np.uint64(1), -x, x)
        return 0.0 + float(params["sigma"]) * x  # random_normal: loc + scale * x

    def random_words(self, rng, n):
        tab = ziggurat_tables()
        idx = rng.integers(2, 256, size=n)
        rabs = np.floor(rng.random(n) * tab.ki[idx]).astype(np.int64)
        return _zig_word(rabs, rng.integers(0, 2, size=n), idx)[:, None]

    def candidates(self, params, v_lo, v_hi, cap, ulps=DEFAULT_ULPS):
        tab = ziggurat_tables()
        s = float(params["sigma"])
        v_lo = np.asarray(v_lo, dtype=float)
        v_hi = np.asarray(v_hi, dtype=float)
        n = len(v_lo)
        out: list[Candidates] = []
        # z = v / sigma (v = 0.0 + sigma·z: one rounding); both signs where the interval allows
        with np.errstate(over="ignore", invalid="ignore"):
            z_lo = v_lo / s
            z_hi = v_hi / s
        z_lo = z_lo - np.abs(z_lo) * 2.0 ** -50 - 2.0 ** -1070
        z_hi = z_hi + np.abs(z_hi) * 2.0 ** -50 + 2.0 ** -1070
        for sign in (0, 1):
            # magnitudes |z| in [a, b] reachable with this sign
            if sign == 0:
                a, b = np.maximum(z_lo, 0.0), z_hi
            else:
                a, b = np.maximum(-z_hi, 0.0), -z_lo
            live = b >= a
            # layers: rabs in [a/wi, b/wi] for every idx (vectorized over targets x layers)
            lo = np.floor(a[:, None] / tab.wi[None, :] * (1 - REL_STEP)) - 1
            hi = np.ceil(b[:, None] / tab.wi[None, :] * (1 + REL_STEP)) + 1
            lo = np.maximum(lo, 0)  # (an empty window stays empty: lo > hi)
            hi = np.where(live[:, None], np.minimum(hi, ZIG_RABS_MAX), -1)
            # layer 0's rabs >= ki[0] go to the tail, not to rabs·wi[0]
            hi[:, 0] = np.minimum(hi[:, 0], tab.ki[0] - 1)
            for slow in (False, True):
                if slow:
                    l2 = np.maximum(lo, tab.ki[None, :])
                    h2 = hi.copy()
                    h2[:, 0] = -1
                else:
                    l2 = lo
                    h2 = np.minimum(hi, tab.ki[None, :] - 1)
                flat_lo, flat_hi = l2.ravel(), h2.ravel()
                rabs, cell, full = _ranges(flat_lo.astype(np.int64), flat_hi.astype(np.int64),
                                           cap)
                owner, idx = np.divmod(cell, 256)
                complete = np.ones(n, dtype=bool)
                np.logical_and.at(complete, np.arange(len(full)) // 256, full)
                word = _zig_word(rabs, sign, idx)
                if not slow:
                    out.append(Candidates(word[:, None], owner, complete, 1))
                else:
                    for u in (0, K_MAX):
                        w = np.stack([word, np.full_like(word, uniform_words(u))], axis=1)
                        out.append(Candidates(w, owner, complete, 2))
            # the tail: |z| = r + xx, xx = -log1p(-U1)/r; U1 from xx in [a - r, b - r]
            x_lo = np.maximum(a - tab.r, 0.0) * (1 - 2.0 ** -48) - 2.0 ** -1000
            x_hi = (b - tab.r) * (1 + 2.0 ** -48) + 2.0 ** -1000
            rr = tab.r * (1 + (ulps + 4) * 2.0 ** -52)
            rl = tab.r * (1 - (ulps + 4) * 2.0 ** -52)
            with np.errstate(over="ignore", invalid="ignore"):
                u_lo = -np.expm1(-np.maximum(x_lo, 0.0) * rl)
                u_hi = -np.expm1(-x_hi * rr)
            k_lo = np.floor(u_lo * TWO53 * (1 - REL_STEP)) - GRID_MARGIN
            k_hi = np.ceil(u_hi * TWO53 * (1 + REL_STEP)) + GRID_MARGIN
            ok = live & (x_hi >= 0)
            k_lo = np.maximum(np.nan_to_num(k_lo, nan=0.0, posinf=2.0 ** 60), 0)
            k_hi = np.where(ok, np.minimum(np.nan_to_num(k_hi, nan=-1.0), K_MAX), -1)
            k, owner, full = _ranges(k_lo.astype(np.int64), k_hi.astype(np.int64), cap)
            tail_word = _zig_word(np.uint64(tab.ki[0]) | np.uint64(sign << 8), 0, 0)
            w = np.stack([np.full(len(k), tail_word, dtype=np.uint64), uniform_words(k),
                          np.full(len(k), uniform_words(K_MAX), dtype=np.uint64)], axis=1)
            out.append(Candidates(w, owner, full, 3))
        return out


class _TwoUniform(Inverse):
    """Samplers with two uniforms per value: a witness search (never complete). For
    ``probes`` second uniforms spread over [0, 1), the first uniform is inverted in real
    arithmetic and its neighbouring grid points become candidates."""

    kind = "gaussian"
    width = 2
    exact = False
    interleaved = False
    probes = 64

    def first(self, z: np.ndarray, u2: np.ndarray) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def candidates(self, params, v_lo, v_hi, cap, ulps=DEFAULT_ULPS):
        s = float(params["sigma"])
        z = (np.asarray(v_lo, dtype=float) + np.asarray(v_hi, dtype=float)) / 2 / s
        n = len(z)
        k2 = (np.arange(self.probes, dtype=np.int64) * ((1 << 53) // self.probes)
              + 12345) % (1 << 53)
        u2 = k2 / TWO53
        with np.errstate(all="ignore"):
            u1 = self.first(z[:, None], u2[None, :])
        k1 = np.floor(u1 * TWO53)
        good = np.isfinite(k1) & (k1 >= 0) & (k1 <= K_MAX)
        rows, cols = np.nonzero(good)
        base = k1[rows, cols].astype(np.int64)
        offs = np.arange(-2, 3)
        k1s = np.clip((base[:, None] + offs[None, :]).ravel(), 0, K_MAX)
        k2s = np.repeat(k2[cols], len(offs))
        owner = np.repeat(rows, len(offs))
        words = np.stack([uniform_words(k1s), uniform_words(k2s)], axis=1)
        return [Candidates(words, owner, np.zeros(n, dtype=bool), 2)]


class BoxMuller(_TwoUniform):
    sampler = "box_muller"
    neutral = (int(uniform_words(0)), int(uniform_words(0)))  # sqrt(-2 log1p(-0)) = 0

    def first(self, z, u2):
        c = np.cos(2.0 * np.pi * u2)
        rad = z / c
        return np.where(rad >= 0, -np.expm1(-rad * rad / 2.0), np.nan)


class Polar(_TwoUniform):
    """The polar method's value is ``x2·sqrt(-2 ln(r2)/r2)`` with ``r2 = x1^2 + x2^2``: for a
    fixed second uniform (``x2``), solve for ``x1`` by bisection on the real formula."""

    sampler = "polar"
    neutral = (int(uniform_words(K_HALF + (1 << 50))), int(uniform_words(K_HALF)))  # x2 = 0

    def random_words(self, rng, n):  # u in [1/4, 3/4): r2 <= 1/2, never rejected
        return uniform_words(rng.integers(1 << 51, 3 << 51, size=(n, 2), dtype=np.int64))

    def first(self, z, u2):
        x2 = 2.0 * u2 - 1.0
        # g(r2) = x2 sqrt(-2 ln r2 / r2) is monotone in r2 on (x2^2, 1): bisection on r2
        lo = np.broadcast_to(x2 * x2, np.broadcast(z, x2).shape) + 0.0
        hi = np.ones_like(lo)
        target = np.abs(z)
        ax2 = np.abs(x2)
        for _ in range(80):
            mid = (lo + hi) / 2
            g = ax2 * np.sqrt(-2.0 * np.log(mid) / mid)
            lo, hi = np.where(g > target, mid, lo), np.where(g > target, hi, mid)
        r2 = (lo + hi) / 2
        x1 = np.sqrt(np.maximum(r2 - x2 * x2, 0.0))
        ok = (np.sign(z) == np.sign(x2)) | (z == 0)
        return np.where(ok, (x1 + 1.0) / 2.0, np.nan)


INVERSES: dict[tuple[str, str], Inverse] = {
    (inv.kind, inv.sampler): inv
    for inv in (NumpyLaplace(), InverseCdfLaplace(), NumpyNormal(), BoxMuller(), Polar())
}


def inverse_of(dist: Dist) -> Inverse:
    """The inverse of a draw's declared sampler (NumPy's own when none is declared)."""
    key = (dist.kind, dist.params.get("sampler", "numpy"))
    if key not in INVERSES:
        raise UnsupportedError(
            f"privet cannot invert {dist.describe()}: exact reachability covers laplace and "
            "gaussian draws (samplers " + ", ".join(f"{k}/{s}" for k, s in INVERSES) + ")."
        )
    return INVERSES[key]


def scalar_params(dist: Dist, coord: int, shape: tuple) -> dict:
    """The draw's parameters at one coordinate of its shape (scales may be arrays)."""
    out = {}
    for key, value in dist.params.items():
        arr = np.asarray(value)
        if key != "sampler" and arr.ndim > 0:
            value = float(np.broadcast_to(arr, shape).ravel()[coord])
        out[key] = value
    return out


def tape_order(inverse: Inverse, words: np.ndarray) -> np.ndarray:
    """Words of a batch ``(n, *coords, width)`` in the order the sampler reads them."""
    if inverse.interleaved or words.shape[-1] == 1:
        return words.ravel()
    return np.moveaxis(words, -1, 0).ravel()


def draw_values(dist: Dist, inverse: Inverse, words: np.ndarray) -> np.ndarray:
    """The draw on a batch of words ``(n, width)``, one value per row, computed by
    :meth:`Dist.sample` on the tape: the exact float operations of sampling. Raises
    :class:`NoiseError` when the batch consumed a different number of words (a rejection)."""
    words = np.asarray(words, dtype=np.uint64)
    gen, tape = tape_generator(tape_order(inverse, words))
    with interruptible():
        values = dist.sample(gen, (len(words),))
    tape.check(words.size)
    return values


def draw_one(dist: Dist, inverse: Inverse, row) -> float | None:
    """One draw on one row of words, or None when the sampler rejected it (it wanted more
    words than the row holds); callers looping over rows run the loop inside
    :func:`~privet.floats.bitgen.interruptible`."""
    words = np.asarray(row, dtype=np.uint64).reshape(1, -1)
    gen, tape = tape_generator(tape_order(inverse, words))
    value = float(np.asarray(dist.sample(gen, (1,))).ravel()[0])
    return None if tape.overrun or tape.position != words.size else value


def uniform_of(words) -> float:
    """The 53-bit uniform a word stands for (what ``next_double`` returns)."""
    return float(int(words) >> 11) / TWO53


def describe_words(row) -> str:
    """The words of a witness, as hex (``next_double`` sees ``(w >> 11) / 2^53``)."""
    return " ".join(f"0x{int(w):016x}" for w in np.asarray(row, dtype=np.uint64).ravel())


__all__ = ["Candidates", "DEFAULT_ULPS", "INVERSES", "Inverse", "ZigguratTables",
           "describe_words", "draw_one", "draw_values", "inverse_of", "scalar_params",
           "tape_order", "uniform_of", "ziggurat_tables"]
