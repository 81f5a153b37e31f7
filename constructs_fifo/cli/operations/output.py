"""How the operations commands print: a ``rich`` table on a terminal, plain lines otherwise, JSON.

Plain lines are ``key: value`` under a ``# title`` line, and tab-separated rows under a header line.
On a terminal nothing an operator types next (a job id, a group) is ever cut: values fold onto more
lines, and a table too wide for the terminal is printed as one key/value block per row instead.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from collections.abc import Sequence
from typing import Final

from constructs_fifo.cli import render
from constructs_fifo.cli.json_output import iso_time

__all__ = ["Output", "cell", "relative", "when"]

#: A width no table reaches: what a table measures when nothing bounds it.
_UNBOUNDED_COLUMNS: Final = 100_000


def cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, list | dict):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return str(value)


class Output:
    """Prints tables and key/value blocks: rich on a terminal, plain lines otherwise.

    Nothing an operator types next (a job id, a group) is ever cut: values fold onto more lines, and a
    table too wide for the terminal is printed as one key/value block per row instead.
    """

    def __init__(self) -> None:
        self.tty = sys.stdout.isatty()
        self.console = render.console()

    def pairs(self, title: str, values: Sequence[tuple[str, object]]) -> None:
        if self.tty:
            from rich.table import Table  # noqa: PLC0415 - rich is a base dependency; local to the renderer

            table = Table(title=title, show_header=False, min_width=min(len(title), self.console.width))
            table.add_column("", no_wrap=True)
            table.add_column("", overflow="fold")
            for key, value in values:
                table.add_row(key, cell(value))
            self.console.print(table)
            return
        print(f"# {title}")
        for key, value in values:
            print(f"{key}: {cell(value)}")

    def rows(self, title: str, columns: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
        if self.tty:
            from rich.measure import Measurement  # noqa: PLC0415
            from rich.table import Table  # noqa: PLC0415

            table = Table(title=title, min_width=min(len(title), self.console.width))
            for column in columns:
                table.add_column(column, no_wrap=True)
            for row in rows:
                table.add_row(*(cell(value) for value in row))
            unbounded = self.console.options.update_width(_UNBOUNDED_COLUMNS)
            needed = Measurement.get(self.console, unbounded, table).maximum
            if needed <= self.console.width or not rows:
                self.console.print(table)
                return
            self.console.print(
                f"{title}: one block per row (a table is too wide for {self.console.width} columns)"
            )
            for row in rows:
                self.pairs(f"{columns[0]} {cell(row[0])}", list(zip(columns[1:], row[1:], strict=True)))
            return
        print(f"# {title}")
        print("\t".join(columns))
        for row in rows:
            print("\t".join(cell(value) for value in row))

    def line(self, text: str) -> None:
        if self.tty:
            self.console.print(text, markup=False)
        else:
            print(text)


def when(epoch_ms: object, *, now_ms: float | None = None) -> str | None:
    """Epoch milliseconds (or an ISO 8601 time) as ISO 8601 UTC (as ``--json`` prints a time), for
    people; with ``now_ms``,
    how far off it is beside it: ``2026-12-01T20:04:00Z (in 4 min)``, ``... (12 s ago)``."""
    if isinstance(epoch_ms, str):  # an ISO 8601 time (a dead letter's deadAt): shown the same way
        try:
            moment = dt.datetime.fromisoformat(epoch_ms.replace("Z", "+00:00"))
        except ValueError:
            return epoch_ms
        epoch_ms = (moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)).timestamp() * 1000
    if not isinstance(epoch_ms, int | float) or isinstance(epoch_ms, bool):
        return None
    shown = iso_time(epoch_ms)
    if now_ms is None:
        return shown
    return f"{shown} ({relative(epoch_ms - now_ms)})"


def relative(delta_ms: float) -> str:
    """A time's distance from now as a person says it: ``in 4 min``, ``12 s ago``, ``now``."""
    seconds = abs(delta_ms) / 1000
    if seconds < 1:
        return "now"
    for unit, size, up_to in _UNITS:
        if seconds < up_to:
            amount = f"{seconds / size:.0f} {unit}"
            return f"in {amount}" if delta_ms > 0 else f"{amount} ago"
    raise AssertionError("the last unit has no bound")  # pragma: no cover


#: (unit, its seconds, shown up to this many seconds): 90 s, then minutes up to 90 min, then hours.
_UNITS: Final = (("s", 1, 90), ("min", 60, 90 * 60), ("h", 3600, 48 * 3600), ("d", 86400, float("inf")))
