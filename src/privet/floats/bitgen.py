"""A NumPy bit generator that plays back chosen 64-bit words: NumPy's own compiled samplers
evaluated on uniforms of our choosing.

``numpy.random.Generator`` reads its randomness through a C struct of four function pointers
(``bitgen_t``: ``next_uint64``, ``next_uint32``, ``next_double``, ``next_raw``) that it
finds in the ``capsule`` attribute of its bit generator. :class:`TapeBitGenerator` fills
that struct with ctypes callbacks reading from a word array, so
``Generator(TapeBitGenerator()).laplace(0.0, b, size=n)`` runs NumPy's ``random_laplace``
-- the exact float operations of a real run, whatever compiler flags and libm NumPy was
built with -- on the uniforms we load. ``next_double`` maps a word ``w`` to
``(w >> 11) · 2^-53`` as PCG64, Philox and SFC64 do, so a 53-bit uniform ``k/2^53`` is the
word ``k << 11``; ``next_uint32`` returns the high half of a word.

The word counter :attr:`TapeBitGenerator.position` tells how many words a call consumed
(rejection loops consume more), so callers can check that a batch stayed aligned.
"""

from __future__ import annotations

import contextlib
import ctypes
import signal
import threading

import numpy as np

from ..core.errors import NoiseError

_U64 = ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.c_void_p)
_U32 = ctypes.CFUNCTYPE(ctypes.c_uint32, ctypes.c_void_p)
_DBL = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_void_p)

UNIFORM_SHIFT = 11
TWO53 = 9007199254740992.0


class _BitGen(ctypes.Structure):
    """NumPy's ``bitgen_t`` (numpy/random/bitgen.h)."""

    _fields_ = [("state", ctypes.c_void_p), ("next_uint64", _U64), ("next_uint32", _U32),
                ("next_double", _DBL), ("next_raw", _U64)]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_CAPSULE_NAME = b"BitGenerator"


# Past the end of the tape the generator cycles through these two words and sets
# ``overrun``: every rejection loop of NumPy's samplers then ends (a callback cannot raise
# into C). As a uniform the first is 2^-53 (> 0, which Laplace needs) and the second
# 1 - 2^-53; as a ziggurat word the first is a fast-path value and the second enters the
# tail, whose test then sees a tiny U1 and U2 = 1 - 2^-53 and accepts.
TERMINATOR = (0x800, 0xFFFFFFFFFFFFF800)


class TapeBitGenerator:
    """Plays back :attr:`words` (uint64) in order; past the end it sets :attr:`overrun` and
    plays :data:`TERMINATOR` so that the C sampler returns."""

    def __init__(self, words=()):
        self.load(words)

        def word(_state) -> int:
            i = self.position
            self.position = i + 1
            if i >= self._n:
                self.overrun = True
                return TERMINATOR[(i - self._n) % 2]
            return int(self._words[i])

        self._callbacks = (_U64(word), _U32(lambda s: word(s) >> 32),
                           _DBL(lambda s: (word(s) >> UNIFORM_SHIFT) * (1.0 / TWO53)),
                           _U64(word))
        self._struct = _BitGen(None, *self._callbacks)
        self.capsule = _capsule_new(ctypes.addressof(self._struct), _CAPSULE_NAME, None)
        self.lock = threading.Lock()

    def load(self, words) -> TapeBitGenerator:
        """Replace the tape and rewind."""
        self._words = np.ascontiguousarray(np.asarray(words, dtype=np.uint64).ravel())
        self._n = len(self._words)
        self.position = 0
        self.overrun = False
        return self

    def check(self, expected: int) -> None:
        """Raise unless exactly ``expected`` words were consumed since :meth:`load`."""
        if self.overrun or self.position != expected:
            raise NoiseError(
                f"the sampler consumed {self.position} words where {expected} were loaded "
                "(a rejection step ran): evaluate the candidates one at a time."
            )


def uniform_words(k) -> np.ndarray:
    """The words that make ``next_double`` return ``k / 2^53`` (k in [0, 2^53))."""
    return np.asarray(k, dtype=np.uint64) << np.uint64(UNIFORM_SHIFT)


_LOCAL = threading.local()


@contextlib.contextmanager
def interruptible():
    """Run NumPy's samplers on a tape so that Ctrl-C still stops the run: the tape's words
    come from Python callbacks, and a KeyboardInterrupt raised inside one is lost ("Exception
    ignored on calling ctypes callback function": porosity on gaussian_polar ran on for 12
    minutes). While inside, Ctrl-C only sets a flag; on the way out the flag raises
    KeyboardInterrupt in ordinary Python code. Outside the main thread, a plain pass."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    hit = []
    previous = signal.getsignal(signal.SIGINT)
    if previous is not signal.default_int_handler:  # privet's own or a user's: leave it
        yield
        return
    signal.signal(signal.SIGINT, lambda *_: hit.append(True))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if hit:
        raise KeyboardInterrupt


def tape_generator(words=()) -> tuple[np.random.Generator, TapeBitGenerator]:
    """A ``numpy.random.Generator`` over a tape loaded with ``words`` (and the tape). One
    pair per thread is reused: building the ctypes callbacks costs far more than a draw."""
    pair = getattr(_LOCAL, "pair", None)
    if pair is None:
        tape = TapeBitGenerator()
        pair = _LOCAL.pair = (np.random.Generator(tape), tape)
    pair[1].load(words)
    return pair


__all__ = ["TWO53", "TapeBitGenerator", "interruptible", "tape_generator",
           "uniform_words"]
