"""The catalogue of hostile and careless inputs, and the two ways to run a case.

Each :class:`Case` is a ``privet`` command line plus the files it needs; what it must end
with: an exit code (2 for bad input, 130 for Ctrl-C), one sentence on stderr, no traceback,
no file written half-way, no code run from a data file. ``run_subprocess`` runs a case as
a user would, in its own process group under resource limits (address space and CPU time),
and measures its wall time, peak memory and -- for Ctrl-C cases -- how long it takes to
stop; ``run_inprocess`` calls :func:`privet.cli.main` directly, for the cheap cases of the
default test run. ``benchmarks/hostile.py`` prints the whole catalogue as a table.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import resource
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

TIME_TARGET = 5.0             # seconds to exit, every case (the issue's target)
STOP_TARGET = 2.0             # seconds from Ctrl-C to exit
MEMORY_TARGET = 1024          # MB of peak resident memory
MAX_MESSAGE = 1_000           # characters of the sentence (privet.cli_support.clip)
ADDRESS_LIMIT = 6 * 2**30     # RLIMIT_AS of a case: a runaway allocation fails, not the host
CPU_LIMIT = 120               # RLIMIT_CPU seconds: a hang that spins is killed
WALL_LIMIT = 180.0            # seconds before a case that hangs is killed

LAUNCHER = "import sys; from privet.cli import main; sys.exit(main(sys.argv[1:]))"
MARKER = "PWNED"              # a file the hostile code below would create


def _evil_file(marker_dir: str = "{tmp}") -> str:
    return (f"open({marker_dir!r} + '/{MARKER}', 'w').write('code ran')\n"
            "import privet\n"
            "@privet.mechanism(epsilon=1.0)\n"
            "def f(noise, x, *, epsilon):\n"
            "    return x\n")


SLOW_BOX = """
import time
import numpy as np
import privet

def slow(x, rng=None):
    time.sleep(0.002)
    return float(np.sum(x)) + rng.laplace()

slow_box = privet.from_blackbox(slow, epsilon=1.0)
"""

EXITING = """
import sys
sys.exit(7)
"""

EXIT_AT_RUN = """
import sys
import privet

@privet.mechanism(epsilon=1.0)
def quits(noise, x, *, epsilon):
    sys.exit(7)
"""

CACHED = """
import numpy as np

_cache = {}
_rng = np.random.default_rng(7)

def cached(a, n_samples):
    key = tuple(np.asarray(a).tolist())
    if key not in _cache or len(_cache[key]) < n_samples:
        _cache[key] = key[0] + _rng.laplace(0, 1, max(n_samples, 2**16))
    return _cache[key][:n_samples].copy()
"""

SEEDED_INSIDE = """
import numpy as np
import privet

@privet.mechanism(epsilon=1.0)
def seeded(noise, x, *, epsilon):
    u = noise.uniform(0, 1, shape=x.shape)
    rng = np.random.default_rng(42)
    return (x + (rng.random(u.shape) < 0.25)) % 2
"""

CUSTOM = """
import numpy as np
import privet

def l1(a, b):
    return len(a) == len(b) and np.abs(a - b).sum() <= 1

@privet.mechanism(epsilon=1.0, neighbors=privet.neighbors.custom(l1, pairs=[([0, 0], [5, 5])]))
def far(noise, x, *, epsilon):
    return x + noise.laplace(1.0, x.shape)

@privet.mechanism(epsilon=1.0, neighbors=privet.neighbors.custom(lambda a, b: 1 / 0,
                                                                 pairs=[([0, 0], [1, 0])]))
def raising(noise, x, *, epsilon):
    return x + noise.laplace(1.0, x.shape)
"""

GREEDY = """
import numpy as np
import privet

@privet.mechanism(epsilon=1.0)
def greedy(noise, x, *, epsilon):
    return np.zeros((noise.size, 10**12))
"""

BOMB = ("a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1]\n"
        + "".join(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 9))
        + "example: ex2\nname: *a8\n")

DETECT_JSON = ('{"__type__": "DetectResult", "mechanism": "m", "claimed_epsilon": 1.0, '
               '"test_epsilon": 1.0, "verdict": "no violation found", "p_value": "abc"}')


@dataclass(frozen=True)
class Case:
    """One hostile input. ``argv`` and file contents may use ``{tmp}`` (the case's own
    directory, also its working directory). ``interrupt`` sends Ctrl-C (SIGINT to the process
    group, as a terminal does) once the run is under way: ``"cpu"`` after one CPU second
    past start-up, ``"waiting"`` 2 s after start-up (the command waits on something),
    ``"children"`` once worker processes exist, ``"workers"`` once they
    have used a CPU second more than privet's start-up (they run chunks, so the local Dask
    cluster has started: it ignores Ctrl-C while it starts, see ``privet.execution``)."""

    name: str
    argv: tuple
    expect: int = 2
    files: dict = field(default_factory=dict)
    message: str = ""                   # a regular expression the stderr sentence matches
    interrupt: str | None = None
    absent: tuple = (MARKER,)           # files (in {tmp}) that must not exist afterwards
    cheap: bool = True                  # run in-process in the default test run
    setup: str | None = None            # "http" (a port that is not Dask), "scheduler"
    stdout: str | None = None           # where stdout goes (e.g. /dev/full); default a file
    group: str = ""


def _cases() -> list[Case]:
    c: list[Case] = []
    add = c.append
    # -- security: a data file never runs code; bounded arithmetic and documents -------------
    add(Case("spec mechanism: FILE.py:NAME", ("pufferfish", "evil.yaml"),
             files={"evil.yaml": "mechanism: {tmp}/evil.py:f\ninputs: [[0], [1]]\n",
                    "evil.py": _evil_file()}, message="--allow-code", group="security"))
    add(Case("spec mechanism: MODULE:NAME", ("pufferfish", "evil.yaml"),
             files={"evil.yaml": "mechanism: evilmod:f\n", "evilmod.py": _evil_file()},
             message="--allow-code", group="security"))
    add(Case("spec !!python/object tag", ("pufferfish", "tag.yaml"),
             files={"tag.yaml": "!!python/object/apply:os.system ['touch {tmp}/PWNED']\n"},
             message="not valid YAML", group="security"))
    add(Case("prior 3**999999999", ("pufferfish", "pow.yaml", "--epsilon", "ln(2)"),
             files={"pow.yaml": "model: {builtin: truncated_geometric}\n"
                                "parameters: {p: [0, 1]}\n"
                                "prior: {'0': '3**999999999', '1': p}\n"
                                "secrets: {a: ['0'], b: ['1']}\n"},
             message="powers", group="security"))
    add(Case("--epsilon '99999999999 ln(2)'", ("pufferfish", "ex2", "--epsilon",
                                               "99999999999 ln(2)"),
             message="above 700", group="security"))
    add(Case("report __fraction__ 1e100000000", ("report", "f.json"),
             files={"f.json": '{"__fraction__": "1e100000000"}'}, message="fraction",
             group="security"))
    add(Case("YAML alias bomb under name:", ("pufferfish", "bomb.yaml"),
             files={"bomb.yaml": BOMB}, message="aliases", group="security"))
    add(Case("--html in a missing directory", ("exact", "wmc.randomized_response",
                                               "--length", "2", "--html", "nodir/r.html"),
             message="does not exist", absent=(MARKER, "nodir"), group="security"))
    add(Case("--html /dev/full", ("exact", "wmc.randomized_response", "--length", "2",
                                  "--html", "/dev/full"),
             message="not a regular file", group="security"))
    add(Case("--html naming a directory", ("exact", "wmc.randomized_response", "--length",
                                           "2", "--html", "."),
             message="is a directory", group="security"))
    add(Case("--html in /proc (no file can be made)", ("exact", "wmc.randomized_response",
                                                        "--length", "2", "--html",
                                                        "/proc/r.html"),
             message="no file can be made", group="security"))
    add(Case("output to a full disk (--json > /dev/full)", ("list", "--json"),
             stdout="/dev/full", message="No space left", group="security"))
    add(Case("output to a full disk (table > /dev/full)",
             ("exact", "wmc.randomized_response", "--length", "2"), stdout="/dev/full",
             message="No space left", group="security"))
    add(Case("--plot in a missing directory", ("detect", "statdp.noisy_max_v1a", "--plot",
                                               "nodir/c.png"),
             message="does not exist", absent=(MARKER, "nodir"), group="security"))
    # -- tracebacks that must be one sentence --------------------------------------------------
    for cmd in (("sample", "statdp.noisy_max_v1a", "-x", "1,1"),
                ("detect", "statdp.noisy_max_v1a"), ("search", "dpfinder.at1"),
                ("synth", "kolahal.svt"), ("suite",)):
        add(Case(f"{cmd[0]} --seed -1", (*cmd, "--seed", "-1"), message="seed",
                 group="flags"))
    for flag, value, cmd in (
            ("-n", "99999999999999999999999", ("sample", "statdp.noisy_max_v1a", "-x", "1")),
            ("-n", "1e30", ("sample", "statdp.noisy_max_v1a", "-x", "1")),
            ("-n", "1e12", ("sample", "statdp.noisy_max_v1a", "-x", "1")),
            ("-n", "0", ("sample", "statdp.noisy_max_v1a", "-x", "1")),
            ("-n", "1.5", ("sample", "statdp.noisy_max_v1a", "-x", "1")),
            ("--n-select", "1e30", ("detect", "statdp.noisy_max_v1a")),
            ("--n-confirm", "1e30", ("search", "dpfinder.at1")),
            ("--test-epsilons", "0.1:1:100000000000", ("detect", "statdp.noisy_max_v1a")),
            ("--test-epsilons", "2:1:3", ("detect", "statdp.noisy_max_v1a")),
            ("--alpha", "2", ("detect", "statdp.noisy_max_v1a")),
            ("--confidence", "nan", ("search", "dpfinder.at1")),
            ("--top", "0", ("synth", "kolahal.svt")),
            ("--top", "-1", ("synth", "kolahal.svt")),
            ("--top-k", "-1", ("exact", "wmc.randomized_response")),
            ("--length", "1000000", ("exact", "wmc.randomized_response")),
            ("--length", "-2", ("exact", "wmc.randomized_response")),
            ("--inputs", "1,a;2", ("exact", "wmc.randomized_response")),
            ("--max-memory", "lots", ("exact", "wmc.randomized_response")),
            ("--timeout", "0", ("pufferfish", "ex2")),
            ("--timeout", "-1", ("pufferfish", "ex2")),
            ("--timeout", "nan", ("pufferfish", "ex2")),
            ("--length", "-1", ("pufferfish", "faier.truncated_geometric")),
            ("--k-max", "100000", ("pufferfish", "ex2")),
            ("--epsilon", "ln(1/0)", ("pufferfish", "ex2")),
            ("--epsilon", "1.2.3 ln 2", ("pufferfish", "ex2")),
            ("--epsilon", "__import__('os')", ("detect", "statdp.noisy_max_v1a")),
            ("--executor", "dask://[::1", ("sample", "statdp.noisy_max_v1a", "-x", "1")),
            ("--executor", "dask://127.0.0.1:0", ("sample", "statdp.noisy_max_v1a", "-x", "1")),
            ("--arg", "k=" + "9" * 5000, ("sample", "statdp.noisy_max_v1a", "-x", "1")),
            ("--arg", "k=" + "[" * 100_000, ("sample", "statdp.noisy_max_v1a", "-x", "1")),
            ("--input", "nan", ("sample", "statdp.noisy_max_v1a")),
            ("--input", "1e400", ("sample", "statdp.noisy_max_v1a")),
            ("--input", ",".join(["1"] * 30_000), ("sample", "statdp.noisy_max_v1a")),
            ("--arg", "bogus=1", ("sample", "statdp.noisy_max_v1a", "-x", "1")),
            ("--executor", "bogus", ("detect", "statdp.noisy_max_v1a")),
            ("--epsilon", "1e-320", ("detect", "statdp.noisy_max_v1a")),
            ("--inputs", "[" * 5000, ("exact", "wmc.randomized_response")),
            ("--html", "", ("exact", "wmc.randomized_response", "--length", "2")),
            ("--paper", "nope", ("list",)),
            ("-n", "1e30", ("floats", "porosity", "floats.laplace", "--d1", "0", "--d2", "1")),
            ("--budget", "nan", ("floats", "porosity", "floats.laplace", "--d1", "0", "--d2",
                                 "1")),
            ("--seed", "-1", ("floats", "porosity", "floats.laplace", "--d1", "0", "--d2",
                              "1")),
            ("--bogus", "1", ("list",))):
        add(Case(f"{cmd[0]} {flag} {value[:40]}", (*cmd, flag, value), group="flags"))
    add(Case("a 100 KB target name", ("detect", "x" * 100_000 + ":f"), group="flags"))
    add(Case("a 100 KB unknown argument", ("list", "y" * 100_000), group="flags"))
    # -- saved results given to privet report --------------------------------------------------
    for name, content in (
            ("binary file", b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe" * 100),
            ("100,000 nested brackets", "[" * 100_000 + "]" * 100_000),
            ('p_value: "abc"', DETECT_JSON),
            ('__fraction__ "1/0"', '{"__fraction__": "1/0"}'),
            ('__float__ "abc"', '{"__float__": "abc"}'),
            ("unknown __type__", '{"__type__": "Nope"}'),
            ("empty file", ""),
            ("not a result", '{"not": "a result"}'),
            ("integer with 5000 digits", "[" + "9" * 5000 + "]")):
        add(Case(f"report: {name}", ("report", "r.json"), files={"r.json": content},
                 group="report"))
    add(Case("report: 65 MB file", ("report", "big.json"), files={"big.json": _sparse(65)},
             message="larger", group="report"))
    add(Case("report: a directory", ("report", "."), message="directory", group="report"))
    add(Case("report: missing file", ("report", "missing.json"), message="does not exist",
             group="report"))
    # -- pufferfish specs ----------------------------------------------------------------------
    for name, content in (
            ("binary spec", b"\xff\xfe\x00garbage" * 300),
            ("n: abc", "model: {builtin: truncated_geometric, n: abc}\nprior: {'0': 1}\n"
                       "secrets: {a: ['0']}\n"),
            ("n: 100000000", "model: {builtin: truncated_geometric, n: 100000000}\n"
                             "prior: {'0': 1}\nsecrets: {a: ['0']}\n"),
            ("noisy max of 64 queries", "model: {builtin: noisy_max, n: 64}\n"
                                        "prior: {'0': 1}\nsecrets: {a: ['0']}\n"),
            ("unknown key beside builtin", "model: {builtin: truncated_geometric, bogus: 1}\n"
                                           "prior: {'0': 1}\nsecrets: {a: ['0']}\n"),
            ("k: abc", "example: ex2\nk: abc\n"),
            ("k: 100000", "example: ex2\nk: 100000\n"),
            ("dp: 5", "model: {builtin: truncated_geometric}\ndp: 5\n"),
            ("prior 1/0", "model: {builtin: truncated_geometric}\nprior: {'0': 1/0}\n"
                          "secrets: {a: ['0']}\n"),
            ("not a mapping", "- 1\n- 2\n"),
            ("a bare !!int tag", "!!int "),
            ("!!float tag on an empty value", "k: !!float\n"),
            ("1,000 nested lists", "[" * 1000 + "]" * 1000 + "\n"),
            ("2 MB spec", "name: " + "x" * (2 * 2**20) + "\n")):
        add(Case(f"pufferfish: {name}", ("pufferfish", "spec.yaml", "--epsilon", "ln(2)"),
                 files={"spec.yaml": content}, group="pufferfish"))
    add(Case("pufferfish: a directory", ("pufferfish", "adir"),
             files={"adir/keep.txt": "x"}, message="directory", group="pufferfish"))
    # -- resources -----------------------------------------------------------------------------
    add(Case("exact RR length 14", ("exact", "wmc.randomized_response", "--length", "14"),
             message="cap|memory", group="resources"))
    add(Case("exact RR length 14, enumeration (memory)",
             ("exact", "wmc.randomized_response", "--length", "14", "--backend", "enumerate"),
             message="--max-memory", group="resources"))
    add(Case("exact RR length 30, --input-cap 2^32", ("exact", "wmc.randomized_response",
                                                      "--length", "30", "--input-cap",
                                                      "4294967296"),
             message="memory", group="resources"))
    add(Case("exact --set rr --length 100000", ("exact", "wmc.randomized_response",
                                                "--length", "100000", "--set", "rr"),
             message="memory", group="resources"))
    add(Case("sample -n 5e9 (memory)", ("sample", "statdp.noisy_max_v1a", "-x", "1,1",
                                        "-n", "5e9"),
             message="--max-memory", group="resources"))
    add(Case("mechanism allocating 8 TB", ("sample", "greedy.py:greedy", "-x", "1", "-n",
                                           "10"),
             files={"greedy.py": GREEDY}, message="memory", group="resources"))
    add(Case("--executor on a port that is not Dask",
             ("sample", "statdp.noisy_max_v1a", "-x", "1", "-n", "10", "--executor",
              "dask://127.0.0.1:{port}"),
             message="Dask scheduler", setup="http", cheap=False, group="resources"))
    # -- user code that exits --------------------------------------------------------------------
    add(Case("user file calls sys.exit(7)", ("sample", "exits.py:f", "-x", "1"),
             files={"exits.py": EXITING}, message=r"sys\.exit\(7\)", group="user code"))
    add(Case("mechanism calls sys.exit(7)", ("sample", "quits.py:quits", "-x", "1"),
             files={"quits.py": EXIT_AT_RUN}, message=r"sys\.exit\(7\)", group="user code"))
    add(Case("target is a directory", ("detect", "adir/:f"), files={"adir/keep.txt": "x"},
             group="user code"))
    add(Case("black box caching its answers", ("search", "cached.py:cached", "--calling",
                                               "vectorized", "--seconds", "5", "--claimed",
                                               "1", "--domain", "int:0:10", "--length", "1"),
             files={"cached.py": CACHED}, message="same varying outputs for two different "
             "seeds", group="user code"))
    add(Case("generator seeded inside the mechanism", ("detect", "seeded.py:seeded"),
             files={"seeded.py": SEEDED_INSIDE}, message="randomness is not fresh",
             group="user code"))
    add(Case("custom pair outside its predicate", ("detect", "custom.py:far"),
             files={"custom.py": CUSTOM}, message="not neighbors under its own predicate",
             group="user code"))
    # -- Ctrl-C: exit 130, a visible marker, stop within 2 s -----------------------------------
    big = "100000000"
    for name, argv, how in (
            ("sample", ("sample", "statdp.noisy_max_v1a", "-x", "1,1,1", "-n", big), "cpu"),
            ("sample, black box before its first chunk",
             ("sample", "slow.py:slow_box", "-x", "1", "-n", "200000"), "children"),
            ("detect", ("detect", "statdp.noisy_max_v1a", "--n-final", "1e9",
                        "--html", "r.html"), "cpu"),
            ("detect, p-value curve", ("detect", "statdp.noisy_max_v1a", "--n-select", "2e4",
                                       "--n-final", "1e5", "--test-epsilons", "0.5:1.5:200",
                                       "--html", "r.html"), "cpu"),
            ("search", ("search", "dpfinder.at3", "--iterations", "1000", "--html", "r.html"),
             "cpu"),
            ("exact", ("exact", "wmc.randomized_response", "--length", "12", "--html",
                       "r.html"), "cpu"),
            ("synth", ("synth", "kolahal.svt", "--html", "r.html"), "cpu"),
            ("pufferfish", ("pufferfish", "long.yaml", "--html", "r.html"), "cpu"),
            ("suite", ("suite", "--html", "r.html"), "cpu"),
            ("sample --executor processes",
             ("sample", "slow.py:slow_box", "-x", "1", "-n", "200000", "--executor",
              "processes"), "children"),
            ("detect --executor dask (local cluster)",
             ("detect", "statdp.noisy_max_v1a", "--n-final", "1e9", "--executor", "dask"),
             "workers")):
        add(Case(f"Ctrl-C: {name}", argv, expect=130, interrupt=how, cheap=False,
                 files={"slow.py": SLOW_BOX, "long.yaml": "example: ex2\nk: 200\n"},
                 message="interrupted", group="Ctrl-C"))
    add(Case("Ctrl-C: waiting on a port that is not Dask",
             ("sample", "statdp.noisy_max_v1a", "-x", "1", "-n", "10", "--executor",
              "dask://127.0.0.1:{port}"),
             expect=130, interrupt="waiting", setup="http", cheap=False,
             message="interrupted", group="Ctrl-C"))
    return c


def _sparse(mb: int) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        with open(path, "wb") as fh:
            fh.write(b"[")
            fh.truncate(mb * 2**20)
    return make


CASES = _cases()


# -- running a case ------------------------------------------------------------------------------

@dataclass
class Outcome:
    code: int | None
    stdout: str
    stderr: str
    seconds: float
    peak_mb: float | None = None
    cpu_seconds: float | None = None     # user + system CPU of the privet process
    stop_seconds: float | None = None    # Ctrl-C cases: from the signal to the exit
    problems: list = field(default_factory=list)

    @property
    def message(self) -> str:
        lines = [ln for ln in self.stderr.splitlines() if ln.startswith("privet:")]
        return lines[-1] if lines else (self.stderr.strip().splitlines() or [""])[-1]


def prepare(case: Case, tmp: Path, port: int | None = None) -> tuple[str, ...]:
    """Write the case's files into ``tmp``; its argv with ``{tmp}`` and ``{port}`` filled."""
    for name, content in case.files.items():
        path = tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if callable(content):
            content(path)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content.replace("{tmp}", str(tmp)))
    return tuple(a.replace("{tmp}", str(tmp)).replace("{port}", str(port or 0))
                 for a in case.argv)


def check(case: Case, out: Outcome, tmp: Path) -> list[str]:
    """What is wrong with ``out`` (empty: the case passed)."""
    problems = []
    if out.code != case.expect:
        problems.append(f"exit code {out.code}, expected {case.expect}")
    if "Traceback" in out.stderr or "Traceback" in out.stdout:
        problems.append("a traceback was printed")
    lines = out.stderr.strip().splitlines()
    if case.expect == 2 and (len(lines) != 1 or not lines[0].startswith("privet: error: ")
                             or not lines[0].endswith(".")):
        problems.append(f"not one sentence on stderr: {out.stderr.strip()[:300]!r}")
    if case.expect == 2 and len(out.stderr) > 2 * MAX_MESSAGE:
        problems.append(f"the sentence is {len(out.stderr):,} characters long")
    if case.message and not re.search(case.message, out.stderr + out.stdout, re.IGNORECASE):
        problems.append(f"the message does not mention {case.message!r}: {out.message!r}")
    if case.expect == 130:
        if not re.search("interrupted", out.stdout + out.stderr, re.IGNORECASE):
            problems.append("no 'interrupted' marker in the output")
        report = tmp / "r.html"
        if report.exists() and "INTERRUPTED" not in report.read_text(encoding="utf-8"):
            problems.append("the saved report is not marked interrupted")
    for name in case.absent:
        if (tmp / name).exists():
            problems.append(f"{name} exists afterwards" + (" (code ran from a data file)"
                                                         if name == MARKER else ""))
    leftovers = [p.name for p in tmp.iterdir() if ".part" in p.name]
    if leftovers:
        problems.append(f"half-written files left: {leftovers}")
    return problems


def run_inprocess(case: Case, tmp: Path) -> Outcome:
    """Run ``privet.cli.main`` on the case in this process (cheap cases only)."""
    from privet.cli import main

    argv = prepare(case, tmp)
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    t0 = time.perf_counter()
    with contextlib.ExitStack() as stack:
        # a real file for /dev/full: its buffer fails when flushed, as a user's would
        sink = stack.enter_context(open(case.stdout, "w")) if case.stdout else out
        os.chdir(tmp)
        stack.callback(os.chdir, cwd)
        stack.enter_context(contextlib.redirect_stdout(sink))
        with contextlib.redirect_stderr(err):
            try:
                code = main(list(argv))
            except BaseException as exc:  # noqa: BLE001 - the test reports it as a traceback
                import traceback

                code = None
                err.write("Traceback (escaped main): " + "".join(
                    traceback.format_exception(exc)))
    outcome = Outcome(code, out.getvalue(), err.getvalue(), time.perf_counter() - t0)
    outcome.problems = check(case, outcome, tmp)
    return outcome


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_LIMIT, ADDRESS_LIMIT))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_LIMIT, CPU_LIMIT))


def _cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for t in os.listdir(f"/proc/{pid}/task")
                for c in Path(f"/proc/{pid}/task/{t}/children").read_text().split()]
    except OSError:
        return []


def _ready(pid: int, how: str, threshold: float) -> bool:
    if how == "waiting":
        return _cpu_seconds(pid) >= threshold - 1.0
    if how == "children":
        return bool(_children(pid))
    if how == "workers":
        # a worker has run chunks (other children, such as multiprocessing's resource
        # tracker, stay idle)
        return any(_cpu_seconds(k) >= threshold for k in _children(pid))
    return _cpu_seconds(pid) >= threshold


_STARTUP_CPU: list[float] = []


def startup_cpu() -> float:
    """CPU seconds ``privet --version`` takes (imports): Ctrl-C cases wait past it, so the
    signal lands in the command, not in Python's start-up."""
    if not _STARTUP_CPU:
        p = subprocess.Popen([sys.executable, "-c", LAUNCHER, "--version"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, _, usage = os.wait4(p.pid, 0)
        p.returncode = 0
        _STARTUP_CPU.append(usage.ru_utime + usage.ru_stime)
    return _STARTUP_CPU[0]


@contextlib.contextmanager
def _service(kind: str | None):
    """A port for ``{port}``: a plain HTTP server (accepts TCP, does not speak Dask)."""
    if kind != "http":
        yield None
        return
    from http.server import HTTPServer, SimpleHTTPRequestHandler

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def run_subprocess(case: Case, tmp: Path) -> Outcome:
    """Run the case as ``privet ...`` in its own process group under RLIMIT_AS and
    RLIMIT_CPU; Ctrl-C cases get SIGINT on the whole group, as from a terminal."""
    with _service(case.setup) as port:
        argv = prepare(case, tmp, port)
        threshold = startup_cpu() + 1.0 if case.interrupt else 0.0
        out_path, err_path = tmp / ".stdout", tmp / ".stderr"
        with open(case.stdout or out_path, "wb") as out_fh, open(err_path, "wb") as err_fh:
            t0 = time.perf_counter()
            p = subprocess.Popen([sys.executable, "-c", LAUNCHER, *argv], cwd=tmp,
                                 stdout=out_fh, stderr=err_fh, stdin=subprocess.DEVNULL,
                                 start_new_session=True, preexec_fn=_limits,
                                 env={**os.environ, "COLUMNS": "120"})
            fired: list[float] = []
            done = threading.Event()

            def watch() -> None:
                while not done.wait(0.05):
                    elapsed = time.perf_counter() - t0
                    if case.interrupt and not fired:
                        if _ready(p.pid, case.interrupt, threshold) or \
                                elapsed > WALL_LIMIT / 3:
                            if case.interrupt in ("children", "waiting"):
                                time.sleep(2.0)  # the workers run a chunk / it is waiting
                            fired.append(time.perf_counter())
                            with contextlib.suppress(ProcessLookupError):
                                os.killpg(p.pid, signal.SIGINT)
                    if elapsed > WALL_LIMIT:
                        with contextlib.suppress(ProcessLookupError):
                            os.killpg(p.pid, signal.SIGKILL)
                        return

            watcher = threading.Thread(target=watch, daemon=True)
            watcher.start()
            _, status, usage = os.wait4(p.pid, 0)
            end = time.perf_counter()
            done.set()
            watcher.join()
            p.returncode = os.waitstatus_to_exitcode(status)
        leftover = _group_alive(p.pid, grace=2.0)  # nothing may be left running
        if leftover:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
        out_path.touch()
        outcome = Outcome(p.returncode, out_path.read_text(errors="replace"),
                          err_path.read_text(errors="replace"), end - t0,
                          peak_mb=usage.ru_maxrss / 1024,
                          cpu_seconds=usage.ru_utime + usage.ru_stime,
                          stop_seconds=end - fired[0] if fired else None)
        out_path.unlink()
        err_path.unlink()
    outcome.problems = check(case, outcome, tmp)
    if leftover:
        outcome.problems.append("processes of the run were still alive 2 s after it exited")
    return outcome


def _group_alive(pgid: int, grace: float) -> bool:
    """True when a process of the group ``pgid`` is still running ``grace`` s from now."""
    deadline = time.perf_counter() + grace
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        if time.perf_counter() > deadline:
            return True
        time.sleep(0.05)
