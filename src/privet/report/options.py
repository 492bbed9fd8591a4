"""The flags every command shares, each with one meaning, defined once for ``cli.py`` and
every engine's ``add_cli`` (so a subcommand parser built on its own has them too)."""

from __future__ import annotations

import argparse

from .. import cli_support as flags

JSON_HELP = "print the result as JSON instead of a table ('privet report' renders it again)"
SEED_HELP = ("seed of the run, 0 to 2^128 - 1: the same seed gives the same numbers on any "
             "executor (default: a fresh one, recorded in the result so the run can be "
             "replayed)")
PROGRESS_HELP = "no progress bars (they go to stderr; --json turns them off too)"


def add_common_options(p: argparse.ArgumentParser, seed: bool = True,
                       progress: bool = True) -> None:
    """``--json``, ``--seed``, ``--no-progress`` (once each; ``seed``/``progress`` False
    where they mean nothing, e.g. ``privet list`` draws nothing)."""
    have = {a.dest for a in p._actions}
    if "json" not in have:
        p.add_argument("--json", action="store_true", help=JSON_HELP)
    if seed and "seed" not in have:
        p.add_argument("--seed", type=flags.seed, default=None, help=SEED_HELP)
    if progress and "no_progress" not in have:
        p.add_argument("--no-progress", action="store_true", help=PROGRESS_HELP)


__all__ = ["add_common_options"]
