"""Terminal tables that fit the width they are printed at, and never split a number or a word.

rich wraps a cell at spaces, but when a table is wider than the terminal it shrinks the
widest columns below their longest word and folds words mid-way ("violati/on",
"7.6e-15/1"). :class:`Fit` chooses the layout at render time instead, from the width rich
gives it:

1. a table whose every column is at least as wide as its longest word (the widest columns
   give way first, so short columns keep one line per row);
2. if that is too wide, the columns marked ``spill`` leave the table and follow it as one
   line per row (``statdp.svt: counterexample D1=[…], …``);
3. if it is still too wide, one block per row: the key on its own line, then
   ``header value`` pairs that wrap at spaces.

Only a single word longer than the whole terminal can still be folded.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

PAD = 1            # rich's default horizontal padding on each side of a cell
SEPARATOR = 1      # one vertical line between (and around) columns


@dataclass(frozen=True)
class Col:
    """A column: its header, alignment, whether it may leave a narrow table (``spill``),
    and ``floor``: the narrowest it may wrap to and still read well (a sentence wrapped
    at 7 cells is a word per line); below it, the next layout is chosen."""

    header: str
    justify: str = "left"
    spill: bool = False
    style: str | None = None
    floor: int = 0


def as_text(cell: Any) -> Text:
    """A cell as rich Text; strings are plain text (never markup: ``[1, 2]`` and user
    names print as they are). Style a cell by passing :class:`rich.text.Text`."""
    return cell if isinstance(cell, Text) else Text(str(cell))


def longest_word(text: str) -> int:
    return max((cell_len(w) for w in text.split()), default=0)


def longest_line(text: str) -> int:
    return max((cell_len(line) for line in text.splitlines()), default=0)


def allocate(mins: Sequence[int], maxs: Sequence[int], available: int) -> list[int] | None:
    """Column widths within ``available`` cells: each at least its ``min`` and at most its
    ``max``; the widest columns give way first (one cap for all). None when the minimums
    alone do not fit."""
    if sum(mins) > available:
        return None
    if sum(maxs) <= available:
        return list(maxs)
    lo, hi = 0, max(maxs)
    while lo < hi:  # the largest cap c with sum(clip(max, min, c)) <= available
        mid = (lo + hi + 1) // 2
        if sum(max(a, min(b, mid)) for a, b in zip(mins, maxs)) <= available:
            lo = mid
        else:
            hi = mid - 1
    return [max(a, min(b, lo)) for a, b in zip(mins, maxs)]


class Fit:
    """A table that picks its layout (table, table + spilled lines, blocks) at render time.

    ``rows`` hold plain strings or styled :class:`rich.text.Text`; column 0 is the
    row's key (its name). ``row_styles`` style whole rows (``"dim"``); ``notes`` are lines
    printed under the table.
    """

    def __init__(self, title: str | None, columns: Sequence[Col | str],
                 rows: Iterable[Sequence[Any]], *, show_header: bool = True,
                 row_styles: Sequence[str | None] | None = None,
                 notes: Sequence[str] = ()) -> None:
        self.title = title
        self.columns = [c if isinstance(c, Col) else Col(c) for c in columns]
        self.rows = [[as_text(c) for c in r] for r in rows]
        self.show_header = show_header
        self.row_styles = list(row_styles) if row_styles is not None else [None] * len(self.rows)
        self.notes = list(notes)

    # -- measurements ----------------------------------------------------------------------
    def _bounds(self, keep: Sequence[int]) -> tuple[list[int], list[int]]:
        mins, maxs = [], []
        for j in keep:
            texts = [r[j].plain for r in self.rows if j < len(r)]
            if self.show_header:
                texts.append(self.columns[j].header)
            most = max((longest_line(t) for t in texts), default=1)
            least = max(max((longest_word(t) for t in texts), default=1),
                        min(self.columns[j].floor, most))
            mins.append(least + 2 * PAD)
            maxs.append(most + 2 * PAD)
        return mins, maxs

    def _widths(self, keep: Sequence[int], width: int) -> list[int] | None:
        mins, maxs = self._bounds(keep)
        return allocate(mins, maxs, width - SEPARATOR * (len(keep) + 1))

    # -- layouts ---------------------------------------------------------------------------
    def _table(self, keep: Sequence[int], widths: Sequence[int]) -> Table:
        t = Table(show_header=self.show_header, title_justify="left")
        for j, w in zip(keep, widths):
            c = self.columns[j]
            t.add_column(c.header, justify=c.justify, width=w - 2 * PAD, style=c.style,
                         overflow="fold")
        for r, style in zip(self.rows, self.row_styles):
            t.add_row(*[r[j] if j < len(r) else Text("") for j in keep], style=style)
        return t

    def _spilled(self, spill: Sequence[int]) -> list[Text]:
        lines = []
        for r in self.rows:
            for j in spill:
                if j < len(r) and r[j].plain.strip() not in ("", "—"):
                    line = Text()
                    line.append(r[0].plain, style="bold")
                    line.append(f" · {self.columns[j].header} ")
                    line.append_text(r[j])
                    lines.append(line)
        return lines

    def _blocks(self) -> list[Any]:
        out: list[Any] = []
        for r, style in zip(self.rows, self.row_styles):
            out.append(Text(r[0].plain, style="bold" + (f" {style}" if style else "")))
            pairs = Text(style=style or "")
            for j in range(1, len(self.columns)):
                if j >= len(r) or r[j].plain.strip() in ("", "—"):
                    continue
                if pairs.plain:
                    pairs.append(" · ")
                if self.show_header:
                    pairs.append(f"{self.columns[j].header} ", style="dim")
                pairs.append_text(r[j])
            if pairs.plain:
                out.append(Padding(pairs, (0, 0, 0, 2)))
        return out

    def layout(self, width: int) -> list[Any]:
        """The renderables for a terminal ``width`` cells wide."""
        parts: list[Any] = [Text(self.title, style="bold")] if self.title else []
        every = list(range(len(self.columns)))
        if not self.rows:
            return parts + [Text("(none)")] + [Text(n) for n in self.notes]
        widths = self._widths(every, width)
        if widths is not None:
            parts.append(self._table(every, widths))
        else:
            spill = [j for j in every if self.columns[j].spill]
            keep = [j for j in every if j not in spill]
            widths = self._widths(keep, width) if spill else None
            if widths is not None:
                parts.append(self._table(keep, widths))
                parts.extend(self._spilled(spill))
            else:
                parts.extend(self._blocks())
        return parts + [Text(n) for n in self.notes]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Group(*self.layout(options.max_width))


def kv(title: str | None, rows: Iterable[Sequence[Any]], notes: Sequence[str] = ()) -> Fit:
    """A two-column field/value table (no header), e.g. a counterexample."""
    return Fit(title, [Col("field", style="bold"), Col("value")], rows, show_header=False,
               notes=notes)


__all__ = ["Col", "Fit", "allocate", "as_text", "kv"]
