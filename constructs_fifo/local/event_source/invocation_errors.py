"""What a drain says of failed invocations, and when one shows that no job can run.

A failed invocation leaves its whole batch on the queue; the worker wrote its traceback to the
function log. :class:`ErrorReport` says each distinct error once (its first line, and where the
traceback is), so a drain that fails the same way a thousand times says it once. An error of
:data:`NO_JOB_CAN_RUN_ERRORS`, or a handler that cannot be imported, fails every batch whatever its
jobs: the runner stops (:mod:`~constructs_fifo.local.event_source.runner`), and the reason is
:attr:`~constructs_fifo.local.event_source.reports.DrainStats.stopped`, written to the log too.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Final

from constructs_fifo.local.event_source.function_log import FunctionLog
from constructs_fifo.local.event_source.reports import DrainStats

__all__ = ["NO_JOB_CAN_RUN_ERRORS", "ErrorReport"]

#: Handler errors that no job can get past: the runtime raises only these (job failures are reported
#: per record), when the function's environment or its job function's import is wrong.
NO_JOB_CAN_RUN_ERRORS: Final = frozenset({"ConfigurationError"})


class ErrorReport:
    """Says each distinct invocation error once, and why a drain stopped (see the module docstring)."""

    def __init__(self, say: Callable[[str], None] | None, log: FunctionLog, stats: DrainStats) -> None:
        self._say = say
        self._log = log
        self._stats = stats
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def report(self, function_name: str, error: str, *, stop: bool) -> None:
        """Say ``error`` if it is new; with ``stop``, record why the drain stops (the first reason)."""
        first_line = error.strip().splitlines()[0] if error.strip() else error
        with self._lock:
            if stop and self._stats.stopped is None:
                self._stats.stopped = (
                    f"function {function_name} cannot run any job: {first_line}. No batch can get past "
                    "this, so the drain stopped and the messages are visible again; fix the handler "
                    "or its environment and deploy again"
                )
                self._log.write_line(f"[constructs-fifo] drain stopped: {self._stats.stopped}")
                line = f"stopped: {self._stats.stopped} (the traceback: {self._log.path})"
            elif first_line not in self._seen and not stop:
                line = (
                    f"an invocation of {function_name} failed: {first_line} (the traceback: {self._log.path})"
                )
            else:
                return
            self._seen.add(first_line)
        if self._say is not None:
            self._say(line)
