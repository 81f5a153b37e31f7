"""What ``constructs-fifo worker`` prints at a terminal: one short line per job, heartbeat and event.

The worker's log is JSON lines on stdout, as the function's is: a container's log driver ships them to
CloudWatch Logs, where the EMF metrics are extracted and each line is searched by its fields. A person
running the worker on a laptop reads them instead, and a 900-character EMF line per job hides the job.
So, when stdout is a terminal (``--log-format text``, the default there), :class:`WorkerView` stands
where stdout stood for the worker's loggers and turns each line into what the person needs:

- a job's outcome line: the time, its status, job id, group, type, attempt, duration, and for a job
  that did not succeed its ``action`` and ``error``;
- a heartbeat round: the job running, the records kept in flight and for how long, the lease;
- the worker's events (started, stopping, stopped, a failed call): the event and its fields;
- lines that carry only metrics (``RunningSlots``, the batch's ``CapacityUnitsConsumed``): nothing, as
  the Lambda console shows no metric;
- anything else (the job's own ``print``, a line that is not JSON): as it came.

Rendering only: the worker writes the same lines either way; ``--log-format json`` shows them as they are.
"""

from __future__ import annotations

import io
import json
import threading
import time
from collections.abc import Callable
from typing import Any, TextIO

__all__ = ["LOG_FORMATS", "WorkerView", "render_line"]

#: ``--log-format``'s choices: JSON lines as a container writes them, or lines for a person.
LOG_FORMATS = ("json", "text")

#: The fields of a line that only feed metrics (EMF's block and the values it names).
_METRIC_ONLY = frozenset({"_aws", "QueueName", "RunningSlots", "CapacityUnitsConsumed", "event", "records"})
#: Fields another line's ``key=value`` list leaves out (the EMF block, the dimension, the level and event
#: it already shows).
_NOT_SAID = frozenset({"_aws", "QueueName", "level", "event"})
#: Outcome fields shown in their own words, not again as ``key=value``.
_OUTCOME_SHOWN = frozenset(
    {"jobId", "group", "type", "status", "attempt", "duration_ms", "action", "error", "messageId"}
)


def render_line(fields: dict[str, Any]) -> str | None:
    """One log line's fields as a person reads them; ``None`` for a line of metrics only.

    Examples
    --------
    >>> render_line({"jobId": "j-1", "group": "team#1", "type": "greet", "status": "SUCCEEDED",
    ...              "attempt": 1, "duration_ms": 0.511})
    'SUCCEEDED  j-1  group team#1  greet  attempt 1  0.5 ms'
    >>> render_line({"event": "heartbeat", "jobId": "j-2", "records": 3, "visibilityTimeout": 720,
    ...              "leaseRenewed": True})
    'heartbeat  j-2 running: 3 records kept in flight 720 s more, lease renewed'
    >>> render_line({"QueueName": "q.fifo", "RunningSlots": 1, "_aws": {}}) is None
    True
    """
    if "status" in fields and "jobId" in fields:
        return _outcome(fields)
    event = fields.get("event")
    if event == "heartbeat":
        return _heartbeat(fields)
    if event == "worker_started":
        queue = str(fields.get("queueUrl", "")).rstrip("/").rsplit("/", 1)[-1]
        return (
            f"worker started: {fields.get('slots')} slots on {queue}, up to {fields.get('batchSize')} "
            "records a batch; SIGTERM or Ctrl-C stops it"
        )
    if event == "worker_stopping":
        return f"stopping: no new receives; running jobs have {fields.get('graceSeconds')} s to finish"
    if event == "worker_stopped":
        return f"stopped: {fields.get('interrupted', 0)} running jobs interrupted"
    if set(fields) <= _METRIC_ONLY:
        return None
    level = fields.get("level", "INFO")
    rest = {k: v for k, v in fields.items() if k not in _NOT_SAID and v is not None}
    words = [str(level) if level != "INFO" else "", str(event or "log"), *_pairs(rest)]
    return "  ".join(word for word in words if word)


def _outcome(fields: dict[str, Any]) -> str:
    words = [str(fields["status"]), str(fields["jobId"]), f"group {fields.get('group')}"]
    if fields.get("type"):
        words.append(str(fields["type"]))
    if fields.get("attempt") is not None:
        words.append(f"attempt {fields['attempt']}")
    if fields.get("duration_ms") is not None:
        words.append(_duration(float(fields["duration_ms"])))
    if fields.get("action"):
        words.append(str(fields["action"]))
    if fields.get("error"):
        words.append(f"error: {fields['error']}")
    extra = {
        k: v
        for k, v in fields.items()
        if k not in _OUTCOME_SHOWN and k not in _METRIC_ONLY and not k[:1].isupper() and v is not None
    }
    if extra.get("receiveCount") == 1:  # the usual case; a redelivery shows its count
        del extra["receiveCount"]
    return "  ".join([*words, *_pairs(extra)])


def _heartbeat(fields: dict[str, Any]) -> str:
    records = fields.get("records")
    noun = "record" if records == 1 else "records"
    job = f"{fields['jobId']} running: " if fields.get("jobId") else ""  # None: between two jobs
    line = f"heartbeat  {job}{records} {noun} kept in flight"
    if fields.get("visibilityTimeout") is not None:
        line += f" {fields['visibilityTimeout']} s more"
    lease = fields.get("leaseRenewed")
    if lease is not None:
        line += ", lease renewed" if lease else ", lease not renewed"
    return line


def _duration(duration_ms: float) -> str:
    return f"{duration_ms:.1f} ms" if duration_ms < 1000 else f"{duration_ms / 1000:.1f} s"


def _pairs(fields: dict[str, Any]) -> list[str]:
    return [f"{key}={value}" for key, value in fields.items()]


class WorkerView(io.TextIOBase):
    """A text stream for the worker's loggers that writes :func:`render_line`'s lines to ``out``.

    Each line gets the local time in front (``14:03:07``). Safe from every slot's thread: one line is
    written whole before the next.

    Parameters
    ----------
    out : TextIO
        The terminal (stdout).
    clock : Callable[[], float]
        Seconds since the epoch (injectable for tests).
    """

    def __init__(self, out: TextIO, *, clock: Callable[[], float] = time.time) -> None:
        super().__init__()
        self._out = out
        self._clock = clock
        self._lock = threading.Lock()

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        with self._lock:
            for line in text.splitlines():
                shown = self._render(line)
                if shown is not None:
                    self._out.write(f"{time.strftime('%H:%M:%S', time.localtime(self._clock()))}  {shown}\n")
            self._out.flush()
        return len(text)

    @staticmethod
    def _render(line: str) -> str | None:
        if not line.startswith("{"):
            return line
        try:
            fields = json.loads(line)
        except ValueError:
            return line
        return render_line(fields) if isinstance(fields, dict) else line
