"""The worker's child processes, stopped before it exits, so no orphan of a stopped job runs beside its
retry.

A job may start processes (a test run, a build). When the worker stops and the job outlives the grace
period, the worker's threads end with the process, but its children would not: they would keep running
(in the same checkout, say) beside the job's next run on another worker. So after the cleanup moment
the worker sends every descendant of its own process SIGTERM, waits a moment, then SIGKILLs what is
left. Descendants are read from ``/proc/<pid>/task/<tid>/children`` (Linux, what a container runs); where
that is not available nothing is stopped. A child that left the worker's tree (a daemon that
double-forked) is not found: a job that starts one must stop it itself on ``context.cancelled``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path
from typing import Final

__all__ = ["CHILD_STOP_SECONDS", "descendants", "stop_children"]

#: How long children get between SIGTERM and SIGKILL.
CHILD_STOP_SECONDS: Final = 2.0
_POLL_SECONDS: Final = 0.05


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (children first), read from ``/proc``; ``[]`` where there is none."""
    found: list[int] = []
    pending = [pid]
    while pending:
        parent = pending.pop()
        for children in Path(f"/proc/{parent}/task").glob("*/children"):
            try:
                pids = [int(p) for p in children.read_text().split()]
            except OSError:  # the task ended meanwhile
                continue
            for child in pids:
                if child not in found and _alive(child):
                    found.append(child)
                    pending.append(child)
    return found


def stop_children(*, wait_seconds: float = CHILD_STOP_SECONDS, pid: int | None = None) -> int:
    """SIGTERM every descendant of ``pid`` (default this process), SIGKILL those alive after
    ``wait_seconds``; return how many were stopped."""
    pids = descendants(os.getpid() if pid is None else pid)
    for child in pids:
        _signal(child, signal.SIGTERM)
    deadline = time.monotonic() + wait_seconds
    while time.monotonic() < deadline and any(_alive(child) for child in pids):
        time.sleep(_POLL_SECONDS)
    for child in pids:
        if _alive(child):
            _signal(child, signal.SIGKILL)
    return len(pids)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped by its parent, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] not in {"Z", "X"}


def _signal(pid: int, signum: signal.Signals) -> None:
    with contextlib.suppress(OSError):  # it ended meanwhile
        os.kill(pid, signum)
