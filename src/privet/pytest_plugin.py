"""privet's pytest plugin, loaded by pytest through the ``pytest11`` entry point.

* fixture ``privet_check``: a :class:`privet.testing.Checker` (``assert_dp``,
  ``assert_not_dp``) seeded for the whole run;
* option ``--privet-seed N``: the seed of every check (default 0: the same verdicts on every
  run; change it to draw new samples, or set it to a failure's seed to replay it);
* a summary after the run: each check, its verdict and the seed that replays it.
"""

from __future__ import annotations

from typing import Any

import pytest

from .core.text import fmt_p
from .testing import Checker

_RESULTS = pytest.StashKey[list]()


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("privet", "privet: differential privacy checks")
    from .cli_support import seed  # bounded: 0 to 2^128 - 1, one sentence otherwise

    group.addoption("--privet-seed", type=seed, default=0, metavar="N",
                    help="seed of every privet_check assertion (default 0)")


def pytest_configure(config: Any) -> None:
    config.stash[_RESULTS] = []


def pytest_report_header(config: Any) -> str:
    return f"privet: checks seeded with {config.getoption('privet_seed')} (--privet-seed)"


@pytest.fixture
def privet_check(request: Any) -> Checker:
    """privet's assertions, seeded with ``--privet-seed``; their results are summarized."""
    checker = Checker(seed=request.config.getoption("privet_seed"))
    yield checker
    request.config.stash[_RESULTS].extend(
        (request.node.nodeid, name, res) for name, res in checker.results)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: Any) -> None:
    done = config.stash.get(_RESULTS, [])
    if not done:
        return
    terminalreporter.section("privet checks")
    for nodeid, name, res in done:
        if hasattr(res, "p_value"):
            what = f"{res.verdict.split(' (')[0]} ({fmt_p(res.p_value)}, seed {res.seed})"
        else:
            what = str(res)
        terminalreporter.write_line(f"{nodeid}: {name}: {what}")
