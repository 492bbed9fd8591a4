"""One thread for the native libraries (BLAS, OpenMP) while privet computes its own numbers.

NumPy's OpenBLAS and scikit-learn's OpenMP loops start a thread per core and spin while they
wait; on the small matrices of a classifier attack (a logistic regression on 2^15 rows of a
few dozen features, a matrix-vector product per chunk of scores) the spinning costs more CPU
than the work -- a logistic regression fit took 0.85 s of CPU with two threads and 0.05 s
with one on a 2-core machine. One thread also makes the fitted weights the same on every
machine: a matrix product split over k threads sums in another order for each k (the
weights of one fit differed in the 12th digit between one and two threads).

:func:`single_threaded` limits both for the duration of a ``with`` block, only in the main
thread (the limits are process-wide, so worker threads of an executor would restore each
other's settings out of order); elsewhere, or without threadpoolctl, it does nothing. The
mechanism's own calls are never wrapped in the main process.

A worker process of a pool is another matter: there are as many workers as cores, and a
BLAS that starts a thread per core in each of them runs more threads than there are cores,
spinning against each other. :func:`limit_native_threads` gives each worker its share
(:func:`worker_threads`) for the worker's lifetime. On this project's 2-core machine, two
workers with one thread each drew 1.2-1.5 times the pairs a second of two with two threads
each (white paired chunks; 1.4-1.6 times for black-box runs; 1.01 and 0.91 times on
report_noisy_max3: ``benchmarks/worker_threads.py``): even privet's own matrix-vector
products (:func:`privet.core.noise.value_codes`, linear scores) leave
OpenBLAS threads spinning between calls.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator

__all__ = ["limit_native_threads", "single_threaded", "worker_threads"]

# the threadpoolctl controller by whether scikit-learn was loaded when it was made: it sees
# the native libraries loaded at that time, and scikit-learn brings its own OpenMP runtime
_CONTROLLERS: dict = {}


def _controller():
    key = "sklearn" in sys.modules
    if key not in _CONTROLLERS:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:  # pragma: no cover - scikit-learn depends on it
            _CONTROLLERS[key] = None
        else:
            _CONTROLLERS[key] = ThreadpoolController()
    return _CONTROLLERS[key]


def worker_threads(workers: int, cores: int | None = None) -> int:
    """The native threads each of ``workers`` processes gets: its share of the ``cores``
    (default: this machine's), at least one."""
    cores = cores if cores is not None else (os.cpu_count() or 1)
    return max(1, int(cores) // max(1, int(workers)))


def limit_native_threads(threads: int) -> bool:
    """BLAS and OpenMP at ``threads`` threads for the rest of this process (a worker's
    initializer calls it): the libraries loaded now through threadpoolctl, those loaded
    later through their environment variables (unless already set); False without
    threadpoolctl."""
    threads = max(1, int(threads))
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, str(threads))  # native libraries loaded later
    ctl = _controller()
    if ctl is None:
        return False
    ctl.limit(limits=threads)
    return True


@contextlib.contextmanager
def single_threaded() -> Iterator[None]:
    """BLAS and OpenMP at one thread inside the block (main thread only; see module)."""
    ctl = _controller() if threading.current_thread() is threading.main_thread() else None
    if ctl is None:
        yield
        return
    with ctl.limit(limits=1):
        yield
