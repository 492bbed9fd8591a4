"""Where sampling runs: in-process vectorized, or a process pool for per-sample black boxes.

Sampling is sample-and-reduce: a task draws a chunk of outputs for one input and reduces
it where it runs (to counts per event, a histogram, ...), so raw samples never cross a
process boundary. Chunk ``i`` of a run always uses the generator spawned from the run's
``SeedSequence`` with key ``i``, so the executor never changes the numbers.

Long runs show a rich progress bar and stop cleanly on Ctrl-C: :func:`map_reduce` returns
what it has with ``interrupted=True``.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import pickle
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.mechanism import Mechanism
from ..core.noise import Sampler

DEFAULT_CHUNK = 200_000


def chunk_rng(seed: int | np.random.SeedSequence | None, index: int) -> np.random.Generator:
    """Generator of chunk ``index`` of a run seeded with ``seed``."""
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    child = np.random.SeedSequence(ss.entropy, spawn_key=(*ss.spawn_key, index))
    return np.random.default_rng(child)


def chunk_sizes(n: int, chunk: int) -> list[int]:
    n, chunk = int(n), max(1, int(chunk))
    sizes = [chunk] * (n // chunk)
    if n % chunk:
        sizes.append(n % chunk)
    return sizes


@dataclass
class Reduced:
    """The sum of a run's chunk reductions, and how many samples it covers."""

    value: Any
    n: int
    interrupted: bool = False


def _task(mech: Mechanism, x: Any, args: Mapping | None, seed: Any, index: int, size: int,
          reduce: Callable[[np.ndarray], Any]) -> Any:
    noise = Sampler(chunk_rng(seed, index), size)
    return reduce(mech.run(noise, x, args, check_input=False))


def _in_order(futures: list) -> Any:
    """Results of submitted futures in submission order; cancels the rest when stopped."""
    try:
        for f in futures:
            yield f.result()
    finally:
        for f in futures:
            f.cancel()


class InProcess:
    """Run chunks one after another in this process (vectorized mechanisms)."""

    def map(self, fn: Callable, jobs: list[tuple]):
        for job in jobs:
            yield fn(*job)

    def close(self):
        pass


class ProcessPool:
    """Run chunks in worker processes (per-sample black boxes); results come back in order."""

    def __init__(self, workers: int | None = None):
        self.workers = workers or os.cpu_count() or 1
        self.pool = cf.ProcessPoolExecutor(max_workers=self.workers)

    def map(self, fn: Callable, jobs: list[tuple]):
        return _in_order([self.pool.submit(fn, *job) for job in jobs])

    def close(self):
        self.pool.shutdown(wait=False, cancel_futures=True)


class DaskExecutor:
    """Run chunks on a Dask distributed cluster (``pip install privet[dist]``).

    ``DaskExecutor(client)`` with a ``distributed.Client``, or ``DaskExecutor("tcp://host:8786")``
    with a scheduler address; ``DaskExecutor()`` starts a local cluster. Chunk seeds are the
    same as in-process, so the numbers do not change with the executor.
    """

    def __init__(self, client: Any = None):
        try:
            from distributed import Client
        except ImportError:
            from ..core.errors import UnsupportedError

            raise UnsupportedError(
                "the Dask executor needs dask[distributed]; install privet[dist]."
            ) from None
        if isinstance(client, Client):
            self.client, self.own = client, False
        elif client is None:
            self.client, self.own = Client(processes=False), True
        else:
            self.client, self.own = Client(client), True

    def map(self, fn: Callable, jobs: list[tuple]):
        return _in_order([self.client.submit(fn, *job, pure=False) for job in jobs])

    def close(self):
        if self.own:
            self.client.close()


def _picklable(obj: Any) -> bool:
    try:
        pickle.dumps(obj)
    except Exception:
        return False
    return True


def get_executor(executor: str | Any | None, mech: Mechanism | None = None,
                 reduce: Callable | None = None):
    """``'inprocess'``, ``'processes'``, ``'dask'``, an executor object, or None (by mechanism)."""
    if executor is None:
        if mech is not None and mech.kind in ("statdp", "blackbox") and _picklable((mech, reduce)):
            return ProcessPool()
        return InProcess()
    if isinstance(executor, str):
        if executor in ("inprocess", "local"):
            return InProcess()
        if executor in ("processes", "pool"):
            return ProcessPool()
        if executor == "dask":
            return DaskExecutor()
        from ..core.errors import PrivetError

        raise PrivetError(
            f"unknown executor {executor!r}; use 'inprocess', 'processes' or 'dask'."
        )
    return executor


def map_reduce(
    mech: Mechanism,
    x: Any,
    n: int,
    reduce: Callable[[np.ndarray], Any],
    args: Mapping | None = None,
    seed: int | np.random.SeedSequence | None = None,
    chunk: int = DEFAULT_CHUNK,
    executor: Any = None,
    progress: Any = None,
    combine: Callable[[Any, Any], Any] | None = None,
) -> Reduced:
    """Draw ``n`` outputs of ``mech`` on ``x`` in chunks, reduce each, combine (default ``+``).

    ``progress`` is an optional callable ``progress(k)`` told after each chunk of ``k``
    samples. Ctrl-C stops the run and returns the combined chunks so far.
    """
    data = mech.domain.check(x)
    resolved = mech.resolve_args(args)
    if mech.kind in ("statdp", "blackbox"):
        chunk = min(chunk, 20_000)
    sizes = chunk_sizes(n, chunk)
    jobs = [(mech, data, resolved, seed, i, s, reduce) for i, s in enumerate(sizes)]
    ex = get_executor(executor, mech, reduce)
    owned = executor is None or isinstance(executor, str)
    combine = combine or (lambda a, b: a + b)
    total, done = None, 0
    interrupted = False
    try:
        for size, part in zip(sizes, ex.map(_task, jobs)):
            total = part if total is None else combine(total, part)
            done += size
            if progress is not None:
                progress(size)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if owned:
            ex.close()
    return Reduced(total, done, interrupted)


def _keep(out: np.ndarray) -> list:
    return [out]


def collect(mech: Mechanism, x: Any, n: int, args: Mapping | None = None,
            seed: int | None = None, chunk: int = DEFAULT_CHUNK, executor: Any = None
            ) -> np.ndarray:
    """All ``n`` outputs as one array (for inspection and small runs)."""
    red = map_reduce(mech, x, n, _keep, args=args, seed=seed, chunk=chunk, executor=executor,
                     combine=lambda a, b: a + b)
    parts = red.value or []
    if not parts:
        return np.empty((0,))
    return np.concatenate(parts, axis=0)
