"""Bit views of doubles and the tape bit generator that runs NumPy's samplers on our words."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privet.core.noise import Dist
from privet.floats import bits
from privet.floats.bitgen import TWO53, tape_generator, uniform_words

finite = st.floats(allow_nan=False, allow_infinity=False)


@settings(max_examples=300, deadline=None)
@given(finite, finite)
def test_order_key_follows_the_order_of_the_reals(a, b):
    ka, kb = bits.order_key(a), bits.order_key(b)
    assert (ka < kb) == (a < b) and (ka == kb) == (a == b)
    assert bits.from_order_key(ka) == a


def test_trailing_zeros_and_granularity_on_known_doubles():
    v = np.array([1.0, 1.5, 1 + 2.0 ** -52, 2.0 ** -1074, 3 * 2.0 ** -60, 0.0])
    assert bits.trailing_zeros(v).tolist() == [52, 51, 0, 0, 51, 53]
    g = bits.granularity(v)
    assert g[:5].tolist() == [0, -1, -52, -1074, -60]
    # granularity g means: a multiple of 2^g, and an odd one
    for x, k in zip(v[:5], g[:5]):
        assert np.ldexp(x, -int(k)) % 2 == 1


def test_lattice_residue_marks_lattice_points_zero():
    r = bits.lattice_residue(np.array([0.0, 0.5, 0.25, 1.75]), 0.5, 4)
    assert r.tolist() == [0, 0, 3, 3]


def test_next_double_of_a_word_is_what_pcg64_gives():
    raw = np.random.PCG64(7).random_raw(1000).astype(np.uint64)
    expected = np.random.Generator(np.random.PCG64(7)).random(1000)
    assert np.array_equal((raw >> np.uint64(11)).astype(np.float64) / TWO53, expected)
    gen, tape = tape_generator(uniform_words(raw >> np.uint64(11)))
    assert np.array_equal(gen.random(1000), expected) and tape.position == 1000


def test_the_tape_runs_numpys_own_laplace():
    # NumPy's random_laplace: U >= 1/2 -> -b log(2 - U - U), U < 1/2 -> b log(U + U)
    k = np.array([1, 2 ** 51, 2 ** 52, 2 ** 52 + 12345, 2 ** 53 - 1], dtype=np.int64)
    gen, tape = tape_generator(uniform_words(k))
    out = gen.laplace(0.0, 2.0, size=len(k))
    u = k / TWO53
    ref = np.where(u >= 0.5, 0.0 - 2.0 * np.log(2.0 - u - u), 0.0 + 2.0 * np.log(u + u))
    assert tape.position == len(k) and np.array_equal(out, ref)
    # and privet's Dist.sample is the same call
    gen, _ = tape_generator(uniform_words(k))
    assert np.array_equal(Dist("laplace", {"scale": 2.0}).sample(gen, (len(k),)), out)


TAIL = (((1 << 52) - 1) << 9)  # ziggurat word: layer 0, largest rabs -> the tail


@pytest.mark.parametrize("method, words", [("laplace", [0, 0]),
                                           ("standard_normal", [TAIL, 0, 0])])
def test_an_exhausted_tape_ends_every_rejection_loop(method, words):
    # U = 0 makes Laplace redraw; the ziggurat tail with U1 = U2 = 0 rejects (0 > 0 fails)
    # and draws again: past the end of the tape the generator plays words that end both
    gen, tape = tape_generator(words)
    value = getattr(gen, method)()
    assert np.isfinite(value) and tape.overrun


def test_ctrl_c_during_a_tape_draw_surfaces_once_the_draw_is_done():
    # a KeyboardInterrupt raised inside the tape's ctypes callbacks was lost ("Exception
    # ignored on calling ctypes callback"): porosity on gaussian_polar ran on for minutes
    import os
    import signal
    import time

    from privet.floats.bitgen import interruptible

    reached = []
    with pytest.raises(KeyboardInterrupt):
        with interruptible():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)         # the signal arrives here: it only sets a flag
            reached.append(True)     # so the draw in progress ends normally
    assert reached
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
