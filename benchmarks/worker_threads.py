"""Native threads in the workers of a process pool (issue 13): one each against one per core.

privet's :class:`~privet.execution.ProcessPool` gives each worker its share of the cores
for BLAS and OpenMP (:func:`privet.execution.threads.worker_threads`: one thread each with
as many workers as cores). Without that, every worker's OpenBLAS starts a thread per core,
and on a machine whose cores all run workers those threads spin against each other after
each of privet's own matrix-vector products (row codes, linear scores). This script draws
the same pairs of DP-Sniper's mechanisms through two pools of as many workers as cores,
one with ``native_threads=1`` (privet's default here) and one with ``native_threads`` =
the number of cores (what a worker gets without the limit), interleaved, ``--repeat``
times each:

* **white paired** -- the white box's paired certificate chunks (``search._paired_chunk``:
  one recorded tape replayed on both inputs), 250,000 pairs each;
* **black runs** -- the vectorized black box's independent runs on both inputs, through
  :func:`privet.execution.map_reduce`;

each with a linear event on the outputs (the kind a logistic attack certifies). It prints
pairs per second for both pools and their ratio.

    .venv/bin/python benchmarks/worker_threads.py [--pairs N] [--repeat R] [--only NAMES]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from privet.core.events import Event, Hits
from privet.core.mechanism import as_mechanism
from privet.execution import DEFAULT_CHUNK, ProcessPool, map_reduce
from privet.mechanisms import dpsniper as d


class Linear(Event):
    """``ω · w > 0`` for fixed random weights: a logistic attack's kind of event."""

    def __init__(self, k: int):
        self.w = np.random.default_rng(1).normal(size=k)

    def contains(self, outputs):
        rows = np.asarray(outputs, float).reshape(len(outputs), -1)
        return np.where(np.isfinite(rows), rows, 0.0) @ self.w > 0.0  # sentinels: 0

    def describe(self):
        return "linear score > 0"

    def spec(self):
        return {"kind": "linear", "weights": self.w.tolist()}


def _pair(name: str) -> tuple[np.ndarray, np.ndarray]:
    mech = as_mechanism(d.get_local(name))
    n = mech.domain.length or 1
    x = np.full(n, 4.0) if n == 1 else np.ones(n)
    x2 = x + 1.0 if n == 1 else np.r_[np.ones(n - 1), 0.0]
    return x, x2


def measure(name: str, pool: ProcessPool, pairs: int, white_chunk: int | None = 250_000,
            black_chunk: int | None = DEFAULT_CHUNK) -> tuple[float, float]:
    """(white paired, black runs) pairs per second of ``pairs`` pairs through ``pool``, in
    chunks of ``white_chunk`` and ``black_chunk`` (None: sized by the output's width)."""
    from privet.search import _paired_chunk, confirm_chunk

    white = as_mechanism(d.get_local(name))
    black = as_mechanism(d.vectorized(name))
    wa, ba = white.resolve_args(None), black.resolve_args(None)
    x, x2 = _pair(name)
    k = int(np.asarray(white.sample(x, 4, args=wa, seed=0)).reshape(4, -1).shape[1])
    event = Linear(k)
    chunk = white_chunk or confirm_chunk(white, white.domain.check(x), wa)
    jobs = [(white, x, x2, event, wa, np.random.SeedSequence(i), chunk)
            for i in range(max(1, pairs // chunk))]
    tick = time.perf_counter()
    list(pool.map(_paired_chunk, jobs))
    t_white = time.perf_counter() - tick
    tick = time.perf_counter()
    for xx in (x, x2):
        map_reduce(black, xx, pairs, Hits(event), ba, seed=0,
                   executor=pool, chunk=black_chunk)
    t_black = time.perf_counter() - tick
    return len(jobs) * chunk / t_white, pairs / t_black


def arguments(doc: str, only: list[str], argv: list[str] | None) -> argparse.Namespace:
    """``--pairs``, ``--repeat`` and ``--only`` (default ``only``) of a script like this."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=4_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", nargs="*", default=only)
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    a = arguments(__doc__, ["one_time_rappor", "rappor", "prefix_sum", "report_noisy_max3",
                            "svt4"], argv)
    cores = os.cpu_count() or 1
    pools = {"one thread each": ProcessPool(cores, native_threads=1),
             f"{cores} threads each": ProcessPool(cores, native_threads=cores)}
    try:
        for pool in pools.values():  # start the workers before timing
            measure("dpsniper.laplace", pool, 500_000)
        print(f"{cores} workers on {cores} cores, {a.pairs:,} pairs per measurement, "
              f"{a.repeat} interleaved repeats; pairs per second (median)")
        for short in a.only:
            name = f"dpsniper.{short}"
            got: dict[str, list] = {k: [] for k in pools}
            for _ in range(a.repeat):
                for label, pool in pools.items():
                    got[label].append(measure(name, pool, a.pairs))
            med = {k: np.median(np.array(v), axis=0) for k, v in got.items()}
            one, many = med["one thread each"], med[f"{cores} threads each"]
            print(f"  {short:18s} white paired {one[0]:.3g} vs {many[0]:.3g} "
                  f"({one[0] / many[0]:.2f}x)   black runs {one[1]:.3g} vs {many[1]:.3g} "
                  f"({one[1] / many[1]:.2f}x)", flush=True)
    finally:
        for pool in pools.values():
            pool.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
