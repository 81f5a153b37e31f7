"""What ``constructs-fifo drain`` shows on stderr while it drains: its lines, a progress line, a summary.

- Lines (where the function log is, what the drain waits for, an invocation's error, why it
  stopped) are ``constructs-fifo: ...``, one each.
- On a terminal only (stderr is a TTY), one progress line, rewritten in place about twice a second
  and after every batch: the records and the jobs' outcomes so far and the time; cut to the
  terminal's width so it never wraps, and cleared before any other line is written. Piped or
  redirected, stderr gets no progress line at all: only the lines and the summary.
- The summary, when the drain ends, is stopped, or is interrupted (Ctrl-C): the jobs by outcome
  (succeeded, duplicate, retried, dead with the groups it parked, kept, and buffered in state mode), the
  records and batches, the time, and the function log's path.

The JSON statistics go to stdout (:mod:`~constructs_fifo.cli.app`), so the output can be piped.
"""

from __future__ import annotations

import shutil
import threading
import time
from typing import Final, TextIO

from constructs_fifo.local.event_source.reports import (
    GROUPS_PARKED,
    OCCASIONAL_OUTCOMES,
    OUTCOME_NAMES,
    DrainStats,
)
from constructs_fifo.local.event_source.waiting import queue_name

__all__ = ["PREFIX", "REDRAW_SECONDS", "DrainView", "outcome_counts"]

#: Every line the drain writes on stderr starts so.
PREFIX: Final = "constructs-fifo: "
#: How often the progress line is redrawn between batches (its clock keeps moving in a long batch).
REDRAW_SECONDS: Final = 0.5
#: ANSI: erase from the cursor to the end of the line.
_ERASE: Final = "\x1b[K"


def outcome_counts(stats: DrainStats) -> str:
    """``12 succeeded, 1 duplicate, 0 retried, 2 dead (1 group parked), 3 kept`` (``buffered``, ``paced``
    and ``cancelled`` when there are; the groups a dead job parked beside the dead, when there are)."""
    shown = [name for name in OUTCOME_NAMES if name not in OCCASIONAL_OUTCOMES or stats.outcomes.get(name)]
    parked = stats.outcomes.get(GROUPS_PARKED, 0)
    beside = {"dead": f" ({parked} group{'' if parked == 1 else 's'} parked)" if parked else ""}
    return ", ".join(f"{stats.outcomes.get(name, 0)} {name}{beside.get(name, '')}" for name in shown)


class DrainView:
    """The stderr of one queue's drain (see the module docstring).

    Parameters
    ----------
    stream
        Where to write (stderr); the progress line only when it is a terminal.
    queue_url
        The queue drained, named in the progress line and the summary.
    """

    def __init__(self, stream: TextIO, queue_url: str) -> None:
        self._stream = stream
        self._queue = queue_name(queue_url)
        self._tty = stream.isatty()
        self._lock = threading.Lock()
        self._stats: DrainStats | None = None
        self._shown = False
        self._started = time.monotonic()
        self._done = threading.Event()
        self._ticker: threading.Thread | None = None

    def start(self, stats: DrainStats) -> None:
        """Follow ``stats`` (the drain adds to it); on a terminal, draw the progress line."""
        self._stats = stats
        self._started = time.monotonic()
        if self._tty:
            self._ticker = threading.Thread(target=self._tick, name="drain-progress", daemon=True)
            self._ticker.start()

    def say(self, line: str) -> None:
        """Write one line (the progress line, if any, is cleared first and drawn again after)."""
        with self._lock:
            self._clear()
            self._stream.write(f"{PREFIX}{line}\n")
            self._draw()
            self._stream.flush()

    def redraw(self) -> None:
        """Draw the progress line again (after a batch); nothing when stderr is not a terminal."""
        if self._tty:
            with self._lock:
                self._clear()
                self._draw()
                self._stream.flush()

    def finish(self, stats: DrainStats, *, log_path: object, interrupted: bool = False) -> None:
        """Stop the progress line and write the summary (unless nothing was drained: a disabled mapping)."""
        self._done.set()
        if self._ticker is not None:
            self._ticker.join(timeout=2)
        with self._lock:
            self._clear()
            self._stats = None
            self._stream.flush()
        if stats.skipped:
            return
        if interrupted:
            verb = "interrupted the drain of"
        elif stats.stopped:
            verb = "stopped the drain of"
        else:
            verb = "drained"
        elapsed = time.monotonic() - self._started if interrupted else stats.elapsed_seconds
        self.say(
            f"{verb} {self._queue}: jobs {outcome_counts(stats)}; {_counted(stats.records, 'record')} in "
            f"{_counted(stats.batches, 'batch')}, {_counted(stats.handler_errors, 'failed invocation')}, "
            f"{elapsed:.1f} s; "
            f"the function's log: {log_path}"
        )

    def _tick(self) -> None:
        while not self._done.wait(REDRAW_SECONDS):
            self.redraw()

    def _progress(self, stats: DrainStats) -> str:
        now = stats.snapshot()
        line = (
            f"{PREFIX}draining {self._queue}: {now.records} records, {outcome_counts(now)}"
            f" · {time.monotonic() - self._started:.0f} s"
        )
        width = shutil.get_terminal_size().columns
        return line if len(line) < width else line[: max(width - 2, 1)] + "…"

    def _draw(self) -> None:
        if self._tty and self._stats is not None:
            self._stream.write("\r" + self._progress(self._stats) + _ERASE)
            self._shown = True

    def _clear(self) -> None:
        if self._shown:
            self._stream.write("\r" + _ERASE)
            self._shown = False


def _counted(count: int, noun: str) -> str:
    """``1 batch``, ``2 batches``: a count with its noun in the number it takes."""
    if count == 1:
        return f"1 {noun}"
    return f"{count} {noun}es" if noun.endswith(("s", "sh", "ch", "x")) else f"{count} {noun}s"
