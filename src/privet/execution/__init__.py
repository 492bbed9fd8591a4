"""Where sampling runs: in-process vectorized, a process pool, or a Dask cluster.

Sampling is sample-and-reduce: a task draws a chunk of outputs for one input and reduces
it where it runs (to counts per event, a histogram, ...), so raw samples never cross a
process boundary. Chunk ``i`` of a run always uses the generator spawned from the run's
``SeedSequence`` with key ``i``, so the executor never changes the numbers.

Long runs show a rich progress bar and stop cleanly on Ctrl-C: :func:`map_reduce` returns
what it has with ``interrupted=True``.
"""

from __future__ import annotations

import collections
import concurrent.futures as cf
import dataclasses
import logging
import os
import pickle
import socket
import sys
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


def _cancel_each(futures: list) -> None:
    for f in futures:
        f.cancel()


def _in_order(futures: list, cancel: Callable[[list], Any] = _cancel_each) -> Any:
    """Results of submitted futures in submission order.

    Each future is dropped once its result is read (a cluster frees its memory); when the
    consumer stops early (Ctrl-C, an error, ``close()``) the outstanding futures are
    cancelled with ``cancel(futures)``.
    """
    pending = collections.deque(futures)
    del futures  # only the deque holds them: a read future is released at once
    try:
        while pending:
            result = pending[0].result()
            pending.popleft()
            yield result
    finally:
        if pending:
            cancel(list(pending))


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


# -- Dask ------------------------------------------------------------------------------------

DASK_TIMEOUT = 10.0
DASK_PORT = 8786
USER_MODULE_PREFIX = "_privet_user_"  # modules privet.cli_support.load_object makes from files


def _local_module(name: str | None) -> bool:
    """True for modules that workers cannot import: ``__main__`` and user files."""
    return name == "__main__" or bool(name and name.startswith(USER_MODULE_PREFIX))


def _from_blob(blob: bytes) -> Mechanism:
    import cloudpickle

    return Mechanism(**cloudpickle.loads(blob))


class _ByValue(Mechanism):
    """A mechanism that pickles by value (cloudpickle), for workers that cannot import it.

    ``Mechanism.__reduce__`` pickles by reference (module and name), which fails on a worker
    for a mechanism defined in ``__main__`` or in a user file loaded by
    :func:`privet.cli_support.load_object`; this copy ships its function's code instead and
    arrives as a plain :class:`Mechanism`.
    """

    def __reduce__(self):
        import cloudpickle

        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(Mechanism)}
        return (_from_blob, (cloudpickle.dumps(fields),))


def _call_blob(blob: bytes) -> Any:
    import cloudpickle

    fn, job = cloudpickle.loads(blob)
    return fn(*job)


def _portable(obj: Any) -> Any:
    if isinstance(obj, Mechanism) and not isinstance(obj, _ByValue) and \
            _local_module(getattr(obj.fn, "__module__", None)):
        return _ByValue(**{f.name: getattr(obj, f.name) for f in dataclasses.fields(Mechanism)})
    return obj


def _module_of(obj: Any) -> str | None:
    """The module a task argument pickles by reference from (None: data or by value)."""
    if isinstance(obj, _ByValue) or isinstance(obj, (np.ndarray, np.random.SeedSequence,
                                                     str, bytes, int, float, dict, list,
                                                     tuple, type(None))):
        return None
    if isinstance(obj, Mechanism):
        return getattr(obj.fn, "__module__", None)
    if callable(obj) and hasattr(obj, "__qualname__") and "<locals>" not in obj.__qualname__:
        return getattr(obj, "__module__", None)
    return type(obj).__module__


def _by_reference(name: str) -> bool:
    """Modules whose objects pickle by reference: not ``__main__``, user files or builtins."""
    return not _local_module(name) and name.split(".")[0] not in ("builtins", "numpy")


def _missing_modules_probe() -> Callable[[list[str]], list[str]]:
    # a nested function: cloudpickle ships it by value, so the probe works even on workers
    # that cannot import privet
    def missing(names: list[str]) -> list[str]:
        import importlib.util

        out = []
        for name in names:
            try:
                if importlib.util.find_spec(name) is None:
                    out.append(name)
            except Exception:  # noqa: BLE001 - a parent package that fails to import
                out.append(name)
        return out

    return missing


def register_user_modules() -> list[str]:
    """Make cloudpickle ship user-file modules (``_privet_user_*``) by value; their names."""
    import cloudpickle

    done = set(cloudpickle.list_registry_pickle_by_value())
    names = []
    for name, module in list(sys.modules.items()):
        if name.startswith(USER_MODULE_PREFIX) and module is not None:
            if name not in done:
                cloudpickle.register_pickle_by_value(module)
            names.append(name)
    return names


def scheduler_address(spec: str) -> tuple[str, int]:
    """``dask://HOST:PORT`` or ``tcp://HOST:PORT`` (port default 8786) -> ``(HOST, PORT)``."""
    from urllib.parse import urlsplit

    from ..core.errors import PrivetError

    parts = urlsplit(spec)
    try:
        host, port = parts.hostname, parts.port or DASK_PORT
    except ValueError:
        host, port = None, None
    if parts.scheme not in ("dask", "tcp") or not host or port is None:
        raise PrivetError(
            f"cannot read {spec!r} as a Dask scheduler address; use dask://HOST:PORT."
        )
    return host, int(port)


def _unreachable(where: str, why: str) -> Exception:
    from ..core.errors import PrivetError

    return PrivetError(
        f"cannot reach the Dask scheduler at {where} ({why}); start one with `dask scheduler` "
        "or check the address."
    )


def _reason(err: BaseException, timeout: float) -> str:
    if isinstance(err, ConnectionRefusedError):
        return "connection refused"
    if isinstance(err, socket.gaierror):
        return "unknown host"
    if isinstance(err, (TimeoutError, socket.timeout)) or "timed out" in str(err).lower():
        return f"no answer within {timeout:g} s"
    text = str(err).strip().rstrip(".").splitlines()
    return text[0] if text else type(err).__name__


def connect(spec: str, timeout: float = DASK_TIMEOUT) -> Any:
    """A ``distributed.Client`` connected to the scheduler at ``spec`` (``dask://HOST:PORT``).

    A closed port fails at once; a host that does not answer fails after ``timeout`` s.
    Either way the error is one sentence (:class:`~privet.core.errors.PrivetError`).
    """
    from distributed import Client

    host, port = scheduler_address(spec)
    where = f"{host}:{port}"
    try:  # a plain TCP probe first: refused connections fail now, not after Dask's retries
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as err:
        raise _unreachable(where, _reason(err, timeout)) from None
    try:
        return Client(f"tcp://{where}", timeout=timeout, set_as_default=False)
    except Exception as err:  # noqa: BLE001 - any failure to connect is the same sentence
        raise _unreachable(where, _reason(err, timeout)) from None


class DaskExecutor:
    """Run chunks on a Dask distributed cluster (``pip install privet[dist]``).

    ``DaskExecutor(client)`` uses a ``distributed.Client`` as is (privet never closes it);
    ``DaskExecutor("dask://host:8786")`` (or ``tcp://``) connects to a running scheduler;
    ``DaskExecutor()`` starts a local cluster on loopback (``workers`` processes, one thread
    each; default one per core). Executors privet creates are closed by :meth:`close`.
    Chunk seeds are the same as in-process and results are combined in chunk order, so
    the numbers do not change with the executor. Mechanisms defined in ``__main__`` or in a
    user file travel to the workers by value (cloudpickle).
    """

    def __init__(self, client: Any = None, *, workers: int | None = None,
                 timeout: float = DASK_TIMEOUT):
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            from ..core.errors import UnsupportedError

            raise UnsupportedError(
                "the Dask executor needs dask[distributed]; install privet[dist]."
            ) from None
        self.cluster = None
        self.timeout = float(timeout)
        self.where = str(client) if isinstance(client, str) else "the local cluster"
        self._workers_seen = False
        self._importable: set[str] = set()
        if isinstance(client, Client):
            self.client, self.own = client, False
        elif client is None:
            self.cluster = LocalCluster(
                n_workers=workers or os.cpu_count() or 1, threads_per_worker=1,
                processes=True, host="127.0.0.1", dashboard_address=None,
                silence_logs=logging.ERROR)
            self.client, self.own = Client(self.cluster, set_as_default=False), True
        elif isinstance(client, str):
            self.client, self.own = connect(client, timeout), True
            self.where = "{}:{}".format(*scheduler_address(client))
        else:
            from ..core.errors import PrivetError

            raise PrivetError(
                f"cannot use {type(client).__name__} as a Dask client; pass a "
                "distributed.Client or an address like dask://HOST:PORT."
            )

    def map(self, fn: Callable, jobs: list[tuple]):
        user = register_user_modules()
        portable: dict[int, Any] = {}

        def ship(job: tuple) -> tuple:
            return tuple(portable.setdefault(id(a), _portable(a))
                         if isinstance(a, Mechanism) else a for a in job)

        shipped = [ship(job) for job in jobs]
        self._check_workers(fn, shipped)
        if user:
            # objects of user files (a black box's function, a custom neighbor relation...)
            # inside the task pickle by reference under plain pickle, and the workers cannot
            # import those modules: cloudpickle the whole call, which ships them by value
            import cloudpickle

            futures = [self.client.submit(_call_blob, cloudpickle.dumps((fn, job)),
                                          pure=False) for job in shipped]
        else:
            futures = [self.client.submit(fn, *job, pure=False) for job in shipped]
        return _in_order(futures, cancel=self._cancel)

    def _check_workers(self, fn: Callable, jobs: list[tuple]) -> None:
        """Fail in one sentence, not hang, when there are no workers or they cannot import
        the modules a task is pickled by reference from (a worker that cannot unpickle a
        task stalls instead of reporting an error)."""
        from ..core.errors import PrivetError

        if not self._workers_seen:
            try:
                self.client.wait_for_workers(1, timeout=self.timeout)
            except Exception:  # noqa: BLE001 - a timeout, whatever its type
                raise PrivetError(
                    f"the Dask scheduler at {self.where} has no workers after "
                    f"{self.timeout:g} s; start some with `dask worker {self.where}`."
                ) from None
            self._workers_seen = True
        names = {"privet", _module_of(fn)}
        for job in jobs:
            names.update(_module_of(a) for a in job)
        names = {n for n in names if n and n not in self._importable and _by_reference(n)}
        if not names:
            return
        answers = self.client.run(_missing_modules_probe(), sorted(names))
        missing = sorted({m for ms in answers.values() for m in ms})
        if missing:
            raise PrivetError(
                f"the Dask workers cannot import {', '.join(map(repr, missing))}; install it "
                "on the workers, or load the mechanism from a file (FILE.py:NAME) so it "
                "travels by value."
            )
        self._importable.update(names)

    def _cancel(self, futures: list) -> None:
        try:
            self.client.cancel(futures)
        except Exception:  # noqa: BLE001 - a closing client has nothing left to cancel
            pass

    def close(self):
        if self.own:
            self.client.close()
            if self.cluster is not None:
                self.cluster.close()
            self.own = False


class Borrowed:
    """An executor lent to the steps of one run: their ``close()`` leaves it open (the
    lender closes it once, at the end)."""

    def __init__(self, inner: Any):
        self.inner = inner

    def map(self, fn: Callable, jobs: list[tuple]):
        return self.inner.map(fn, jobs)

    def close(self):
        pass


def _picklable(obj: Any) -> bool:
    try:
        pickle.dumps(obj)
    except Exception:
        return False
    return True


def _is_client(obj: Any) -> bool:
    dist = sys.modules.get("distributed")
    return dist is not None and isinstance(obj, dist.Client)


EXECUTOR_SPECS = "inprocess, processes, dask or dask://HOST:PORT"


def get_executor(executor: str | Any | None, mech: Mechanism | None = None,
                 reduce: Callable | None = None):
    """An executor from a spec: ``'inprocess'``, ``'processes'``, ``'dask'`` (a local
    cluster), ``'dask://HOST:PORT'`` / ``'tcp://HOST:PORT'`` (a running scheduler), a
    ``distributed.Client``, an executor object (anything with ``map(fn, jobs)`` and
    ``close()``), or None (in-process, or a process pool for picklable black boxes).

    The caller owns (and must ``close()``) the result when it is not ``executor`` itself.
    """
    if executor is None:
        if mech is not None and mech.kind in ("statdp", "blackbox") and _picklable((mech, reduce)):
            return ProcessPool()
        return InProcess()
    if isinstance(executor, str):
        spec = executor.strip()
        if spec in ("inprocess", "local"):
            return InProcess()
        if spec in ("processes", "pool"):
            return ProcessPool()
        if spec == "dask":
            return DaskExecutor()
        if spec.startswith(("dask://", "tcp://")):
            return DaskExecutor(spec)
        from ..core.errors import PrivetError

        raise PrivetError(f"unknown executor {executor!r}; use {EXECUTOR_SPECS}.")
    if _is_client(executor):
        return DaskExecutor(executor)
    if not callable(getattr(executor, "map", None)) or \
            not callable(getattr(executor, "close", None)):
        from ..core.errors import PrivetError

        raise PrivetError(
            f"cannot use {type(executor).__name__} as an executor; use {EXECUTOR_SPECS}, "
            "a distributed.Client or an object with map(fn, jobs) and close()."
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

    Chunk ``i`` always draws from :func:`chunk_rng` ``(seed, i)`` and chunk results are
    combined in chunk order, so every executor (see :func:`get_executor`: ``'inprocess'``,
    ``'processes'``, ``'dask'``, ``'dask://HOST:PORT'``, a ``distributed.Client``) gives
    the same result for the same seed. Executors made here from a spec are closed at the
    end; an executor object or Client passed in is left open.

    ``progress`` is an optional callable ``progress(k)`` told after each chunk of ``k``
    samples. Ctrl-C stops the run and returns the combined chunks so far (a prefix of the
    chunks, in order) with ``interrupted=True``; chunks still running are cancelled.
    """
    data = mech.domain.check(x)
    resolved = mech.resolve_args(args)
    sizes = chunk_sizes(n, chunk_for(mech, chunk))
    jobs = [(mech, data, resolved, seed, i, s, reduce) for i, s in enumerate(sizes)]
    return run_chunks(mech, _task, jobs, sizes, executor, combine, progress, reduce)


PER_SAMPLE_CHUNK = 20_000  # chunks of mechanisms that make one Python call per sample


def chunk_for(mech: Mechanism, chunk: int) -> int:
    """The chunk size for ``mech``: ``chunk``, at most ``PER_SAMPLE_CHUNK`` for per-sample
    black boxes (so a process pool spreads their calls)."""
    return min(chunk, PER_SAMPLE_CHUNK) if mech.kind in ("statdp", "blackbox") else chunk


def run_chunks(mech: Mechanism, task: Callable, jobs: list[tuple], sizes: list[int],
               executor: Any = None, combine: Callable[[Any, Any], Any] | None = None,
               progress: Any = None, reduce: Any = None) -> Reduced:
    """``task(*job)`` for each chunk on the executor (a spec or an object; one made here is
    closed at the end), the results combined in chunk order (default ``+``). ``progress(k)``
    hears of each chunk of ``k`` samples. Ctrl-C keeps the prefix of chunks done
    (``interrupted=True``) and cancels the rest."""
    ex = get_executor(executor, mech, reduce)
    owned = ex is not executor
    combine = combine or (lambda a, b: a + b)
    total, done = None, 0
    interrupted = False
    results = None
    try:
        results = ex.map(task, jobs)
        for size, part in zip(sizes, results):
            total = part if total is None else combine(total, part)
            done += size
            if progress is not None:
                progress(size)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        close = getattr(results, "close", None)
        if close is not None:
            close()  # cancels the chunks not yet collected
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
    shapes = {p.shape[1:] for p in parts}
    if len(shapes) > 1:
        from ..core.errors import MechanismError

        a, b = sorted(shapes)[:2]
        raise MechanismError(
            f"mechanism {mech.name!r} returned outputs of shape {a or 'scalar'} in one call "
            f"and {b or 'scalar'} in another; return the same shape every call (pad "
            "variable-length outputs with privet.ABORTED or a flag value)."
        )
    return np.concatenate(parts, axis=0)
