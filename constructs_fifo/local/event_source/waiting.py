"""What a drain says while it has only in-flight messages to wait for.

A drain that runs until the queue is empty keeps going while messages are in flight: they come back
when their visibility timeout ends (a job's retry backoff, a batch cut off, another consumer's batch).
Without a word that wait looks like a hang, so :class:`WaitReport` says, every
:data:`WAIT_REPORT_SECONDS` of it, how many messages it waits for and why they come back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from constructs_fifo.stacks.counters import QueueCounts

__all__ = ["WAIT_REPORT_SECONDS", "WaitReport", "queue_name"]

#: How often a drain waiting only on in-flight messages says so (the first time after this long too).
WAIT_REPORT_SECONDS: Final = 10.0


def queue_name(queue_url: str) -> str:
    """The queue's name: the last part of its URL."""
    return queue_url.rstrip("/").rsplit("/", 1)[-1]


class WaitReport:
    """Says, now and then, that a drain is waiting only on in-flight (or delayed) messages.

    Parameters
    ----------
    say
        Receives the line (``None``: say nothing).
    queue_url
        The queue drained.
    visibility_seconds
        Its visibility timeout: the longest a message received stays in flight.
    """

    def __init__(self, say: Callable[[str], None] | None, queue_url: str, visibility_seconds: int) -> None:
        self._say = say
        self._queue = queue_name(queue_url)
        self._visibility_seconds = visibility_seconds
        self._since: float | None = None
        self._said: float | None = None

    def update(self, counts: QueueCounts | None, now: float) -> None:
        """``counts`` of the queue when no batch runs (``None`` while one does), at ``now``."""
        if counts is None or counts.visible or not (counts.in_flight or counts.delayed):
            self._since = self._said = None
            return
        if self._since is None:
            self._since = now
        last = self._said if self._said is not None else self._since
        if self._say is None or now - last < WAIT_REPORT_SECONDS:
            return
        self._said = now
        delayed = f" and {counts.delayed} delayed" if counts.delayed else ""
        self._say(
            f"waiting {now - self._since:.0f} s on {self._queue}: {counts.in_flight} message(s) in flight"
            f"{delayed}, none visible. They come back when their visibility timeout ends: a job's retry "
            f"backoff, a batch cut off, or another consumer's batch (at most {self._visibility_seconds} s "
            "after it was received)"
        )
