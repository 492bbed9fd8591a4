"""Every case of the hostile-input catalogue (``catalogue.py``) ends as the README promises.

The cheap cases run in-process through ``privet.cli.main`` in the default run: exit code,
one sentence on stderr, no traceback, nothing written half-way, no code run from a data file.
The slow test runs the whole catalogue as a user would -- each case in its own process group
under RLIMIT_AS and RLIMIT_CPU, Ctrl-C cases interrupted with SIGINT on the group -- and also
checks peak memory (``ru_maxrss``) and that nothing is left running. Times are printed by
``benchmarks/hostile.py`` against the issue's targets (5 s per case, 2 s to stop after Ctrl-C);
here a case only has to finish at all (``WALL_LIMIT``, a hang guard).
"""

from __future__ import annotations

import pytest

from .catalogue import CASES, MEMORY_TARGET, WALL_LIMIT, run_inprocess, run_subprocess

CHEAP = [c for c in CASES if c.cheap]


@pytest.mark.parametrize("case", CHEAP, ids=[c.name for c in CHEAP])
def test_case_in_process(case, tmp_path):
    out = run_inprocess(case, tmp_path)
    assert not out.problems, f"{case.name}: {out.problems}; stderr: {out.stderr[-500:]}"


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case_in_a_subprocess_under_limits(case, tmp_path):
    out = run_subprocess(case, tmp_path)
    assert not out.problems, f"{case.name}: {out.problems}; stderr: {out.stderr[-500:]}"
    assert out.peak_mb is not None and out.peak_mb <= MEMORY_TARGET, out.peak_mb
    assert out.seconds < WALL_LIMIT
