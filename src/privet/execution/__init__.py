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
import contextlib
import dataclasses
import itertools
import logging
import os
import pickle
import socket
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.loading import USER_MODULE_PREFIX
from ..core.mechanism import Mechanism
from ..core.noise import Sampler
from ..core.seeds import SeedLike, as_seed, seed_sequence
from .memory import keep_freed_memory
from .threads import limit_native_threads, worker_threads

DEFAULT_CHUNK = 200_000


def chunk_rng(seed: SeedLike, index: int) -> np.random.Generator:
    """Generator of chunk ``index`` of a run seeded with ``seed``."""
    ss = seed_sequence(seed)
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
    out = mech.run(noise, x, args, check_input=False)
    # a reducer that draws coins (an event's randomized boundary) takes them from the
    # chunk's generator, past every draw of the mechanism: fresh, and the same on every
    # executor
    return reduce(out, noise.rng) if getattr(reduce, "coins", False) else reduce(out)


def _cancel_each(futures: list) -> None:
    for f in futures:
        f.cancel()


def _in_order(submit: Callable[[tuple], Any], jobs: list, window: int | None = None,
              cancel: Callable[[list], Any] = _cancel_each) -> Any:
    """Results of ``submit(job)`` futures in job order, at most ``window`` in flight (all
    at once when None); the next job is submitted as each result is read.

    Each future is dropped once its result is read (a cluster frees its memory); when the
    consumer stops early (Ctrl-C, an error, ``close()``) the outstanding futures are
    cancelled with ``cancel(futures)``. A bounded window keeps a scheduler from digesting
    thousands of tasks at once (after Ctrl-C it would keep at it for many seconds).
    """
    todo = iter(jobs)
    pending = collections.deque(submit(job) for job in
                                itertools.islice(todo, window if window else len(jobs)))
    try:
        while pending:
            result = pending[0].result()
            pending.popleft()
            for job in itertools.islice(todo, 1):
                pending.append(submit(job))
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


def reseed_inherited_generators() -> int:
    """Give every random generator this process holds a fresh state from the operating
    system's entropy: NumPy's bit generators (under any ``Generator``), ``RandomState``
    objects and Python's ``random.Random`` objects, the global ones included; returns how
    many.

    A forked worker inherits its parent's generators state for state: a black box that
    draws from a generator of its own (``rng = np.random.default_rng()`` at the top of its
    module) would draw the same numbers in every worker, and the "independent" chunks would
    be copies of each other (seen: every draw of one worker repeated in the other). privet's
    own chunks draw from generators seeded per chunk inside the job, which this does not
    touch."""
    import gc
    import random

    held = [obj for obj in gc.get_objects()
            if isinstance(obj, (np.random.BitGenerator, np.random.RandomState)) or (
                isinstance(obj, random.Random) and not isinstance(obj, random.SystemRandom))]
    return reseed(held, np.random.SeedSequence().entropy)


def _init_worker(native_threads: int | None = None) -> None:
    """Worker initializer: Ctrl-C is the parent's to handle (it stops the workers); freed
    memory stays for the next chunk (:mod:`privet.execution.memory`); with
    ``native_threads``, BLAS and OpenMP keep to that many threads in the worker
    (:func:`~privet.execution.threads.limit_native_threads`); the generators inherited from
    the parent start afresh (:func:`reseed_inherited_generators`)."""
    import gc
    import signal

    reseed_inherited_generators()  # before the freeze, which hides objects from gc

    # a forked worker inherits every object of its parent: frozen, the worker's garbage
    # collections stop traversing them (and touching their pages)
    gc.freeze()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    keep_freed_memory()
    if native_threads is not None:
        limit_native_threads(native_threads)


class ProcessPool:
    """Run chunks in worker processes (per-sample black boxes); results come back in order.

    Workers ignore Ctrl-C; :meth:`close` stops them at once, so an interrupted run does not
    wait for the chunks still running. Each worker's BLAS and OpenMP get its share of the
    cores (:func:`~privet.execution.threads.worker_threads`: one each when there are as many
    workers as cores), so the workers do not oversubscribe the machine; ``native_threads``
    sets another number."""

    def __init__(self, workers: int | None = None, native_threads: int | None = None):
        self.workers = workers or os.cpu_count() or 1
        threads = worker_threads(self.workers) if native_threads is None else native_threads
        self.pool = cf.ProcessPoolExecutor(max_workers=self.workers, initializer=_init_worker,
                                           initargs=(int(threads),))

    def map(self, fn: Callable, jobs: list[tuple]):
        return _in_order(lambda job: self.pool.submit(fn, *job), jobs)

    def close(self):
        terminate = getattr(self.pool, "terminate_workers", None)  # Python >= 3.14
        if terminate is not None:
            terminate()
            return
        # before shutdown(), which forgets them; a running chunk is not waited for
        procs = list((getattr(self.pool, "_processes", None) or {}).values())
        manager = getattr(self.pool, "_executor_manager_thread", None)
        self.pool.shutdown(wait=False, cancel_futures=True)
        # Python < 3.14: once a worker is terminated, the pool's manager thread marks every
        # pending future as failed, and raises (a thread traceback on stderr) on one that is
        # already cancelled: forget those, stop the workers, and let the manager finish
        # before anyone else cancels a future of this pool
        items = getattr(self.pool, "_pending_work_items", None)
        if isinstance(items, dict):
            for key, item in list(items.items()):
                if item.future.cancelled():
                    items.pop(key, None)
        for proc in procs:
            if proc.is_alive():
                proc.terminate()
        if manager is not None and manager.is_alive():
            manager.join(timeout=2.0)


# -- Dask ------------------------------------------------------------------------------------

DASK_TIMEOUT = 10.0
HANDSHAKE_TIMEOUT = 2.0   # a scheduler that accepted the connection answers in milliseconds
DASK_PORT = 8786


def _local_module(name: str | None) -> bool:
    """True for modules that workers cannot import: ``__main__`` and user files."""
    return name == "__main__" or bool(name and name.startswith(USER_MODULE_PREFIX))


def _from_blob(blob: bytes) -> Mechanism:
    return Mechanism(**_load_recording(blob))


class _ByValue(Mechanism):
    """A mechanism that pickles by value (cloudpickle), for workers that cannot import it.

    ``Mechanism.__reduce__`` pickles by reference (module and name), which fails on a worker
    for a mechanism defined in ``__main__`` or in a user file loaded by
    :func:`privet.core.loading.load_object`; this copy ships its function's code instead and
    arrives as a plain :class:`Mechanism`.
    """

    def __reduce__(self):
        import cloudpickle

        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(Mechanism)}
        return (_from_blob, (cloudpickle.dumps(fields),))


# the constructors by which pickle rebuilds a random generator: NumPy's Generator,
# RandomState and bare bit generators, and Python's random.Random (also the hidden instance
# behind ``from random import random``, which pickles as a bound method of a copy of it)
GENERATOR_CTORS = {("numpy.random._pickle", "__generator_ctor"),
                   ("numpy.random._pickle", "__randomstate_ctor"),
                   ("numpy.random._pickle", "__bit_generator_ctor"),
                   ("random", "Random")}
# per thread (a Dask worker runs tasks in several): the generators rebuilt by the load
# under way, when recording (a mechanism shipped by value inside a call is loaded by a load
# nested in the call's, and its generators join the call's)
_recording = threading.local()


class _Recording:
    """A generator constructor that notes what it builds in :data:`_recording`. Used as a
    base class (a user's subclass of ``random.Random`` shipped by value), it stands for the
    constructor itself (``__mro_entries__``)."""

    def __init__(self, ctor: Callable):
        self.ctor = ctor

    def __call__(self, *args, **kw):
        out = self.ctor(*args, **kw)
        found = getattr(_recording, "found", None)
        if found is not None:
            found.append(out)
        return out

    def __mro_entries__(self, bases: tuple) -> tuple:
        return (self.ctor,)


def _load_recording(blob: bytes) -> Any:
    """``pickle.loads(blob)``, noting in :data:`_recording` (when a recording is under way)
    every random generator the blob rebuilds, however deep (a class attribute, a closure,
    a module-level dict of a user's file)."""
    import io

    class Recording(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> Any:
            found = super().find_class(module, name)
            return _Recording(found) if (module, name) in GENERATOR_CTORS else found

    return Recording(io.BytesIO(blob)).load()


def _call_blob(blob: bytes) -> Any:
    """Run a task shipped by value. The blob carries every random generator a user's
    function reaches (``rng = np.random.default_rng()`` at the top of its file, a class
    attribute, the hidden instance of ``from random import random``), in the state it had
    when the task was pickled: the same state in every task, so every chunk would draw the
    same numbers. The generators the blob rebuilds start afresh, from the task's own seed
    material (:func:`_task_entropy`): independent chunks, the same numbers on every run."""
    outer, found = getattr(_recording, "found", None), []
    _recording.found = found
    try:
        fn, job = _load_recording(blob)
    finally:
        _recording.found = outer
    reseed(found, _task_entropy(fn, job))
    return fn(*job)


def _task_entropy(fn: Callable, job: tuple) -> int:
    """A seed for a task's generators: its function's name and the seeds, indices and sizes
    among its arguments (the chunk's seed and index identify it; a digest of the whole blob
    would not repeat: cloudpickle names the classes it ships with random ids)."""
    import hashlib

    def plain(a: Any) -> Any:
        if isinstance(a, np.random.SeedSequence):
            return ("ss", str(a.entropy), tuple(a.spawn_key))
        if isinstance(a, (bool, int, float, str, bytes)) or a is None:
            return a
        if isinstance(a, (tuple, list)):
            return tuple(plain(v) for v in a if not isinstance(v, np.ndarray))
        return None

    key = repr((getattr(fn, "__qualname__", repr(type(fn))), tuple(plain(a) for a in job)))
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=16).digest(), "little")


def reseed(generators: list, entropy: int) -> int:
    """Give each generator (NumPy ``Generator``, ``RandomState``, bit generator, Python
    ``random.Random``) a state of its own drawn from ``entropy``; returns how many."""
    import random

    done = 0
    for gen, ss in zip(generators, np.random.SeedSequence(entropy).spawn(len(generators))):
        try:
            if isinstance(gen, np.random.RandomState):  # set_state: its cached normal too
                gen.set_state(type(gen._bit_generator)(ss).state)
            elif isinstance(gen, (np.random.Generator, np.random.BitGenerator)):
                bits = gen.bit_generator if isinstance(gen, np.random.Generator) else gen
                bits.state = type(bits)(ss).state
            elif isinstance(gen, random.Random):
                gen.seed(int.from_bytes(ss.generate_state(4, np.uint32).tobytes(), "little"))
            else:
                continue
        except (TypeError, ValueError, AttributeError):  # a generator of another make: left
            continue
        done += 1
    return done


def _global_generators(mech: Mechanism) -> bool:
    """Whether ``mech`` is a black box that draws from NumPy's (and Python's) global
    generator, which privet seeds before each call or chunk: one per process, shared by the
    threads of a worker."""
    from ..core.mechanism import _BlackBoxRunner, _VectorizedRunner

    return isinstance(mech.fn, (_BlackBoxRunner, _VectorizedRunner)) and \
        not getattr(mech.fn, "takes_rng", False)


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

    try:
        parts = urlsplit(spec)
        host, port = parts.hostname, parts.port
    except ValueError:  # "dask://[::1" (unclosed IPv6), a port beyond 65535 or not a number
        parts, host, port = None, None, None
    if parts is None or parts.scheme not in ("dask", "tcp") or not host or port == 0 or \
            parts.path not in ("", "/"):
        raise PrivetError(
            f"cannot read {spec!r} as a Dask scheduler address; use dask://HOST:PORT "
            f"(port 1 to 65535, default {DASK_PORT})."
        )
    return host, int(DASK_PORT if port is None else port)


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
    wait = min(timeout, HANDSHAKE_TIMEOUT)
    try:  # then the Dask handshake: a port that accepts TCP but is not a scheduler hangs
        # Client() forever (its timeout does not cover the handshake)
        kind = _run_async(_identity(f"tcp://{where}", wait)).get("type")
    except Exception as err:  # noqa: BLE001 - any failure to connect is the same sentence
        why = _reason(err, wait)
        if why.startswith("no answer"):
            why = f"it accepts connections but sent no Dask handshake within {wait:g} s"
        raise _unreachable(where, why) from None
    if kind != "Scheduler":
        raise _unreachable(where, f"it answers as a Dask {kind}, not a scheduler" if kind else
                           "it does not answer like a Dask scheduler")
    try:
        return Client(f"tcp://{where}", timeout=timeout, set_as_default=False)
    except Exception as err:  # noqa: BLE001 - any failure to connect is the same sentence
        raise _unreachable(where, _reason(err, timeout)) from None


async def _identity(address: str, timeout: float) -> dict:
    """The ``identity`` reply of the Dask server at ``address``, each step under
    ``timeout`` seconds."""
    import asyncio

    from distributed.comm import connect as dask_connect

    comm = await asyncio.wait_for(dask_connect(address, timeout=timeout), timeout)
    try:
        await asyncio.wait_for(comm.write({"op": "identity", "reply": True}), timeout)
        reply = await asyncio.wait_for(comm.read(), timeout)
    finally:
        comm.abort()
    return reply if isinstance(reply, dict) else {}


def _run_async(coro: Any) -> Any:
    """Run a coroutine to completion, also from inside a running event loop (a notebook)."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with cf.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


@contextlib.contextmanager
def _children_ignore_sigint():
    """Start child processes (a local cluster's workers) that ignore Ctrl-C: the terminal
    sends it to the whole process group, and the workers are this process's to stop (they
    would die printing tracebacks). A spawned Python inherits an ignored SIGINT (it resets
    a blocked mask, and native threads such as BLAS's would take a signal blocked in this
    one), so SIGINT is ignored here for the seconds the cluster takes to start: a Ctrl-C
    pressed meanwhile is lost, the next one works."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    handler = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, handler)


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
            # the dashboard on a free loopback port: None still serves it on 8787 and warns
            # on stderr when another cluster holds that port
            with _children_ignore_sigint():
                self.cluster = LocalCluster(
                    n_workers=workers or os.cpu_count() or 1, threads_per_worker=1,
                    processes=True, host="127.0.0.1", dashboard_address="127.0.0.1:0",
                    silence_logs=logging.CRITICAL)
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
        register_user_modules()  # cloudpickle ships the modules of user files by value
        portable: dict[int, Any] = {}

        def ship(job: tuple) -> tuple:
            return tuple(portable.setdefault(id(a), _portable(a))
                         if isinstance(a, Mechanism) else a for a in job)

        shipped = [ship(job) for job in jobs]
        self._check_workers(fn, shipped)
        import cloudpickle

        # the whole call is cloudpickled: objects of user files (a black box's function, a
        # custom neighbor relation...) pickle by reference under plain pickle, and the
        # workers cannot import those modules, so cloudpickle ships them by value, as it
        # ships functions of __main__; and the worker unpickles the call itself, so that
        # every random generator the call carries starts afresh (_call_blob)
        def submit(job: tuple) -> Any:
            return self.client.submit(_call_blob, cloudpickle.dumps((fn, job)), pure=False)

        threads = sum(self.client.nthreads().values()) or 1
        return _in_order(submit, shipped, window=max(8, 4 * threads), cancel=self._cancel)

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
        shared = sorted({a.name for job in jobs for a in job
                         if isinstance(a, Mechanism) and _global_generators(a)})
        if shared and max(self.client.nthreads().values(), default=1) > 1:
            raise PrivetError(
                f"mechanism {shared[0]!r} draws from NumPy's global generator, which the "
                "threads of one Dask worker share (their draws would interleave); start the "
                "workers with one thread each (dask worker ADDRESS --nthreads 1), or give "
                "the function an rng argument to draw from."
            )
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
            if self.cluster is None:
                self.client.close()
            else:
                # The local scheduler runs in this process: after Ctrl-C it still answers
                # the cancelled chunks to the closing client and logs each failure (at level
                # CRITICAL, with a traceback); the cluster is going away, so keep it quiet.
                # Its workers hold nothing privet still needs: stopping them first takes
                # 0.2 s instead of the 4 s of a graceful shutdown (measured under load).
                quiet = logging.getLogger("distributed")
                level = quiet.level
                quiet.setLevel(logging.CRITICAL + 1)
                try:
                    self.client.close()
                    _kill_workers(self.cluster)
                    self.cluster.close()
                finally:
                    quiet.setLevel(level)
            self.own = False


def _kill_workers(cluster: Any) -> None:
    """SIGKILL the worker processes of a LocalCluster privet started (its nannies' children)."""
    import signal

    for nanny in list(getattr(cluster, "workers", {}).values()):
        pid = getattr(getattr(getattr(nanny, "process", None), "process", None), "pid", None)
        if pid:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


class Borrowed:
    """An executor lent to the steps of one run: their ``close()`` leaves it open (the
    lender closes it once, at the end)."""

    def __init__(self, inner: Any):
        self.inner = inner

    @property
    def workers(self) -> int:
        """The lender's workers (1 when it does not say)."""
        return int(getattr(self.inner, "workers", 1) or 1)

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
LOCAL_SPECS = ("inprocess", "local", "processes", "pool", "dask")


def get_executor(executor: str | Any | None, mech: Mechanism | None = None,
                 reduce: Callable | None = None):
    """An executor from a spec: ``'inprocess'``, ``'processes'``, ``'dask'`` (a local
    cluster), ``'dask://HOST:PORT'`` / ``'tcp://HOST:PORT'`` (a running scheduler), a
    ``distributed.Client``, an executor object (anything with ``map(fn, jobs)`` and
    ``close()``), or None (in-process, or a process pool for picklable black boxes).

    The caller owns (and must ``close()``) the result when it is not ``executor`` itself.
    """
    if executor is None:
        if mech is not None and mech.per_sample and _picklable((mech, reduce)):
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
    seed: SeedLike = None,
    chunk: int | None = DEFAULT_CHUNK,
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

    ``chunk``: samples per chunk; None: :data:`DEFAULT_CHUNK`, fewer for outputs wider
    than :data:`CHUNK_BYTES` allows (:func:`chunk_for`, which may run the mechanism once on
    two samples to measure an undeclared width).

    ``progress`` is an optional callable ``progress(k)`` told after each chunk of ``k``
    samples. Ctrl-C stops the run and returns the combined chunks so far (a prefix of the
    chunks, in order) with ``interrupted=True``; chunks still running are cancelled.
    """
    data = mech.domain.check(x)
    resolved = mech.resolve_args(args)
    # chunk None: DEFAULT_CHUNK, fewer rows for wide outputs (measured when not declared)
    rows = chunk_for(mech, DEFAULT_CHUNK, data, resolved, n) if chunk is None \
        else chunk_for(mech, chunk)
    sizes = chunk_sizes(n, rows)
    # one SeedSequence for every chunk (a Generator or None is resolved once, not per chunk)
    if not isinstance(seed, np.random.SeedSequence):
        seed = as_seed(seed)
    jobs = [(mech, data, resolved, seed, i, s, reduce) for i, s in enumerate(sizes)]
    return run_chunks(mech, _task, jobs, sizes, executor, combine, progress, reduce)


PER_SAMPLE_CHUNK = 20_000  # chunks of mechanisms that make one Python call per sample


def whole_rounds(n: int, chunk: int, executor: Any, up: bool = True) -> int:
    """``n`` samples rounded to whole rounds of ``chunk``-sized chunks over the executor's
    workers (one round per worker count; 1 when it does not say), up or (``up=False``)
    down: a last round of one chunk leaves the other workers idle, so a timing probe of
    whole rounds runs at the pace of the sample it sizes."""
    round_ = int(chunk) * max(int(getattr(executor, "workers", 1) or 1), 1)
    return (-(-int(n) // round_) if up else int(n) // round_) * round_


# a throwaway sample that times a certificate runs at least this long, unless the next one
# would pass its largest size (a few tenths of a second on a fast mechanism misjudge its
# pace: the first round pays the workers' start, and the black box's fresh samples of
# report noisy max ended up to 13 s before their budget after probes of 0.2 s)
PROBE_SECONDS = 0.5


def timed_probe(run: Callable[[int], bool], n: int, largest: int, chunk: int, executor: Any,
                clock: Callable[[], float] = time.perf_counter
                ) -> tuple[int, float, float] | None:
    """Time throwaway runs ``run(k)`` of a certificate on ``k`` pairs, from ``n`` pairs in
    whole rounds (:func:`whole_rounds`), doubled until one has run :data:`PROBE_SECONDS` or
    the next would pass ``largest``: (its pairs, its seconds, the clock when it ended), whose
    pace sizes the fresh sample; None when ``run`` returns False (an exact answer, or
    Ctrl-C) or the clock did not move. Their counts are dropped: only a sample drawn after
    them certifies."""
    k = whole_rounds(n, chunk, executor)
    while True:
        tick = clock()
        ok = run(k)
        now = clock()
        took = now - tick
        if not ok or took <= 0:
            return None
        if took >= PROBE_SECONDS or 2 * k > largest:
            return k, took, now
        k *= 2  # still whole rounds


# a chunk's output matrix stays within this many bytes (half of glibc's largest mmap
# threshold, :mod:`privet.execution.memory`): the mechanism's temporaries of the same shape
# are then reused from the heap, where larger ones are mapped and zeroed afresh every chunk
# (RAPPOR's 20 bits in chunks of 250,000 paired samples drew 1.4e6 pairs a second through
# two workers, 2.2e6 in chunks of 125,000)
CHUNK_BYTES = 16 << 20
MIN_CHUNK = 4096  # rows: wide outputs get smaller chunks, never smaller than this


def chunk_for(mech: Mechanism, chunk: int, x: Any = None, args: Mapping | None = None,
              n: int | None = None) -> int:
    """The chunk size for ``mech``: ``chunk``, at most ``PER_SAMPLE_CHUNK`` for per-sample
    black boxes (so a process pool spreads their calls), and at most the rows whose float64
    outputs fill :data:`CHUNK_BYTES`. The width of a row is the declared output length;
    without one, given the input ``x`` (and its resolved ``args``), it is measured by one
    run of two samples (a run that fails keeps ``chunk``: the sampling itself then reports
    the failure); otherwise the chunk stays. ``n``: the samples to come; at most
    :data:`MIN_CHUNK` of them are one chunk whatever the width, so nothing is measured."""
    if mech.per_sample:
        return min(chunk, PER_SAMPLE_CHUNK)
    width = output_width(mech, x, args) if x is not None and (n is None or int(n) > MIN_CHUNK) \
        else mech.output.length
    if not width:
        return int(chunk)
    rows = CHUNK_BYTES // (8 * int(width))
    return int(min(chunk, max(MIN_CHUNK, rows - rows % 1024)))


def output_width(mech: Mechanism, x: Any, args: Mapping | None = None) -> int | None:
    """Entries per output row of ``mech`` on ``x``: the declared output length, else
    measured by one run of two samples (None when that run fails)."""
    return mech.output.length or _output_width(mech, x, args)


def _output_width(mech: Mechanism, x: Any, args: Mapping | None) -> int | None:
    """Entries per output row of ``mech`` on ``x`` (None when a run of two samples fails)."""
    try:
        out = np.asarray(mech.run(Sampler(np.random.default_rng(0), 2), x, args,
                                  check_input=False))
    except Exception:  # noqa: BLE001 - the sampling run reports it in its own words
        return None
    return max(int(np.prod(out.shape[1:])), 1) if out.ndim else 1


def run_chunks(mech: Mechanism, task: Callable, jobs: list[tuple], sizes: list[int],
               executor: Any = None, combine: Callable[[Any, Any], Any] | None = None,
               progress: Any = None, reduce: Any = None) -> Reduced:
    """``task(*job)`` for each chunk on the executor (a spec or an object; one made here is
    closed at the end), the results combined in chunk order (default ``+``). ``progress(k)``
    hears of each chunk of ``k`` samples. Ctrl-C keeps the prefix of chunks done
    (``interrupted=True``) and cancels the rest."""
    keep_freed_memory()
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


def collect_reduced(mech: Mechanism, x: Any, n: int, args: Mapping | None = None,
                    seed: SeedLike = None, chunk: int = DEFAULT_CHUNK, executor: Any = None
                    ) -> Reduced:
    """Like :func:`collect`, keeping whether Ctrl-C cut the run short: ``Reduced(outputs,
    len(outputs), interrupted)`` (no output at all is an empty array)."""
    red = map_reduce(mech, x, n, _keep, args=args, seed=seed, chunk=chunk, executor=executor,
                     combine=lambda a, b: a + b)
    parts = red.value or []
    if not parts:
        return Reduced(np.empty((0,)), red.n, red.interrupted)
    shapes = {p.shape[1:] for p in parts}
    if len(shapes) > 1:
        from ..core.errors import MechanismError

        a, b = sorted(shapes)[:2]
        raise MechanismError(
            f"mechanism {mech.name!r} returned outputs of shape {a or 'scalar'} in one call "
            f"and {b or 'scalar'} in another; return the same shape every call (pad "
            "variable-length outputs with privet.ABORTED or a flag value)."
        )
    outputs = np.concatenate(parts, axis=0)
    return Reduced(outputs, red.n, red.interrupted)


def collect(mech: Mechanism, x: Any, n: int, args: Mapping | None = None,
            seed: SeedLike = None, chunk: int = DEFAULT_CHUNK, executor: Any = None
            ) -> np.ndarray:
    """All ``n`` outputs as one array (for inspection and small runs). Ctrl-C raises
    KeyboardInterrupt rather than return fewer outputs than asked for
    (:func:`collect_reduced` keeps them)."""
    red = collect_reduced(mech, x, n, args, seed, chunk, executor)
    if red.interrupted:
        raise KeyboardInterrupt
    return red.value


def memory_limit() -> int:
    """The default memory budget of a run: half of this machine's physical memory."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return 4 * 2**30


def format_bytes(n: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB", "TB", "PB"):
        if n < 1024 or unit == "PB":
            return f"{n:,.0f} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n:,.1f} PB"  # pragma: no cover


# keeping outputs costs about 3x their size at the peak: the chunks, their concatenation,
# and the sorted copy that counts distinct outputs
KEEP_OVERHEAD = 3


def estimate_sample_memory(mech: Mechanism, x: Any, n: int, args: Mapping | None = None,
                           limit: int | None = None, flag: str = "max_memory") -> int:
    """Bytes needed to keep ``n`` outputs of ``mech`` on ``x`` (from 16 pilot outputs drawn
    in-process); :class:`~privet.core.errors.ParameterError` naming ``flag`` when that is
    above ``limit`` (default :func:`memory_limit`)."""
    from ..core.errors import ParameterError

    limit = memory_limit() if limit is None else int(limit)
    pilot = 16
    out = np.asarray(mech.run(Sampler(np.random.default_rng(0), pilot), x, args))
    need = int(n) * max(out.nbytes, 1) / pilot * KEEP_OVERHEAD
    if need > limit:
        raise ParameterError(
            f"keeping {int(n):,} outputs of {mech.name} needs about {format_bytes(need)} of "
            f"memory, above the limit of {format_bytes(limit)}; ask for fewer outputs or "
            f"raise the limit with {flag}."
        )
    return int(need)
