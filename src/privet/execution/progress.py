"""A rich progress bar that engines can use without importing the report layer.

``with progress_bar(total, "detect", enabled=True) as advance: advance(k)``; when disabled
(the Python API's default) it costs nothing. Bars go to stderr so ``--json`` output stays
clean.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator


@contextlib.contextmanager
def progress_bar(total: float | None, description: str, enabled: bool = True
                 ) -> Iterator[Callable[[float], None]]:
    """Yield ``advance(k, description=None)``; shows a transient rich bar on stderr when
    ``enabled`` (``description`` replaces the bar's label, e.g. the item now running)."""
    if not enabled:
        yield lambda k=1, description=None: None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    console = Console(file=sys.stderr)
    with Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TimeElapsedColumn(), TimeRemainingColumn(), console=console, transient=True,
    ) as prog:
        task = prog.add_task(description, total=total)

        def advance(k: float = 1, description: str | None = None) -> None:
            if description is None:
                prog.advance(task, k)
            else:
                prog.update(task, advance=k, description=description)

        yield advance
