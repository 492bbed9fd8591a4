"""Exact reachability: the addition gap, the sampler windows (checked against a brute force
many times wider), and every output a mechanism really produced being found reachable."""

from __future__ import annotations

import numpy as np
import pytest

import privet
import privet.mechanisms as lib
from privet import floats
from privet.core.errors import UnsupportedError
from privet.core.noise import Dist
from privet.floats import bits
from privet.floats.bitgen import tape_generator, uniform_words
from privet.floats.reach import (
    ADDITION_GAP,
    REACHABLE,
    SAMPLER_GAP,
    UNREACHABLE,
    additive,
    noise_interval,
)
from privet.floats.samplers import ziggurat_tables


def test_noise_interval_is_exactly_the_preimage_of_the_addition():
    rng = np.random.default_rng(0)
    c = np.r_[rng.normal(size=40) * 10.0 ** rng.integers(-3, 4, 40), 1.0, 1.0, 0.0]
    y = np.r_[c[:40] + rng.normal(size=40), 2.0 ** -60, 0.75, 1e-300]
    lo, hi, gap = noise_interval(c, y)
    for ci, yi, l, h, g in zip(c, y, lo, hi, gap):
        if g:  # no double v at all: check the doubles around y - c
            centre = bits.order_key(yi - ci)
            vs = bits.from_order_key(np.arange(centre - 2000, centre + 2000))
            assert not np.any(bits.as_float(ci + vs) == yi)
            continue
        kl, kh = int(bits.order_key(l)), int(bits.order_key(h))
        vs = bits.from_order_key(np.arange(kl - 50, kh + 51))
        inside = (np.arange(kl - 50, kh + 51) >= kl) & (np.arange(kl - 50, kh + 51) <= kh)
        assert np.array_equal(ci + vs == yi, inside)
    # 1 + v cannot land on 2^-60: the doubles just below 1 are 2^-53 apart (Mironov)
    assert gap[40] and not gap[41] and not gap[42]


@pytest.mark.parametrize("name", ["floats.laplace", "floats.laplace_inverse_cdf",
                                  "floats.gaussian"])
def test_every_output_a_mechanism_produced_is_reachable_with_a_witness(name):
    mech = lib.get(name)
    ys = mech.sample([0.5], 300, seed=1).ravel()
    ver = additive(mech, [0.5]).check(ys)
    assert np.all(ver.status == REACHABLE)
    inv = additive(mech, [0.5])
    for y, w in list(zip(ys, ver.witness))[:20]:  # the witness words reproduce the output
        assert inv.run_tape(inv.tape_of(w))[0] == y


def test_laplace_sampler_gaps_hold_over_a_window_512_times_wider():
    mech = lib.get("floats.laplace")
    ys = mech.sample([1.0], 400, seed=2).ravel()
    ver = additive(mech, [0.0]).check(ys)
    gaps = np.flatnonzero(ver.status == UNREACHABLE)
    assert gaps.size > 100  # Mironov: most outputs of x = 1 are holes for x = 0
    dist = Dist("laplace", {"scale": 1.0})
    for i in gaps[:25]:
        y = ys[i]
        assert ver.reason[i] in (SAMPLER_GAP, ADDITION_GAP)
        # the real inverse of NumPy's sampler, then 4096 uniforms on each side of it
        k = (np.exp(y) * 2.0 ** 52) if y < 0 else (2.0 - np.exp(-y)) * 2.0 ** 52
        ks = np.arange(int(k) - 4096, int(k) + 4097, dtype=np.int64)
        gen, _ = tape_generator(uniform_words(ks))
        assert not np.any(dist.sample(gen, (len(ks),)) == y)


def test_ziggurat_sampler_gaps_hold_over_wider_layer_windows():
    mech = lib.get("floats.gaussian").replace(epsilon=0.1)
    sigma = floats_sigma(mech)
    ys = mech.sample([1.0], 300, seed=3).ravel()
    ver = additive(mech, [0.0]).check(ys)
    gaps = np.flatnonzero(ver.status == UNREACHABLE)
    assert gaps.size > 0
    tab = ziggurat_tables()
    for i in gaps[:3]:
        z = abs(ys[i]) / sigma
        words = []
        for idx in range(1, 256):  # fast path and wedge of every layer, 32 rabs each side
            r = int(z / tab.wi[idx])
            rabs = np.arange(max(r - 32, 0), min(r + 33, 1 << 52), dtype=np.uint64)
            sign = np.uint64(1 if ys[i] < 0 else 0)
            words.append((rabs << np.uint64(9)) | (sign << np.uint64(8)) | np.uint64(idx))
        for w in np.concatenate(words):
            for accept in (0, int(uniform_words((1 << 53) - 1))):  # the wedge test's ends
                gen, tape = tape_generator([int(w), accept])
                v = Dist("gaussian", {"sigma": sigma}).sample(gen, (1,))[0]
                assert v != ys[i] or tape.overrun  # a rejected word never outputs it


def floats_sigma(mech):
    from privet.mechanisms.floats import gaussian_sigma

    return gaussian_sigma(mech.epsilon, mech.args["delta"])


def test_reachable_api_and_the_addition_gap():
    mech = lib.get("floats.laplace")
    ver = floats.reachable(mech, [1.0], [2.0 ** -60, 1.0, 0.5])
    assert ver.status.tolist() == [UNREACHABLE, REACHABLE, REACHABLE]
    assert ver.reason[0] == ADDITION_GAP


def test_structures_the_inverse_does_not_cover_say_so():
    @privet.mechanism(epsilon=1.0)
    def doubled(noise, x, *, epsilon):
        return 2 * (x + noise.laplace(1.0, x.shape))

    with pytest.raises(UnsupportedError, match="not of the form f\\(D\\) \\+ noise"):
        additive(doubled, [0.0])
    with pytest.raises(UnsupportedError, match="makes 3"):
        additive(lib.get("floats.snapping"), [0.0])
    box = privet.from_blackbox(lambda x, rng: float(x[0]) + rng.laplace(), epsilon=1.0)
    with pytest.raises(UnsupportedError, match="noise API"):
        additive(box, [0.0])
    # sighting still proves reachability for a black box: its own outputs are found
    ys = box.sample([0.0], 5, seed=4)
    ver = floats.reachable(box, [0.0], np.r_[ys, 1e300], sight=1000, seed=4)
    assert ver.status.tolist() == [REACHABLE] * 5 + [-1]
