"""The worker processes of the local event source mapping: one per concurrency slot.

Each slot's execution environment is a long-lived subprocess running ``worker.py`` (the cold start
happens once per slot), with the function's environment: its variables, what Lambda sets, the region,
the endpoint and the credentials (:func:`lambda_environment`), and nothing else of this process.
:meth:`WorkerPool.invoke` sends one event and waits for the answer up to the function timeout; a
worker that times out or dies is killed and replaced on the next invocation.

Each worker runs in a process group of its own, so the terminal's Ctrl-C (sent to the foreground
process group) reaches only the runner: were the workers interrupted with it, a slot could see its
worker die and start a new one for its next batch before the runner knew it was stopping. The
runner stops its workers itself (:meth:`WorkerPool.abort`, :meth:`WorkerPool.close`); a worker whose
runner died reads the end of its stdin and exits.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import sys
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Final

from constructs_fifo.local.errors import WorkerError
from constructs_fifo.local.event_source.deployment import DeployedFunction

__all__ = [
    "TIMEOUT_GRACE_SECONDS",
    "WORKER_SCRIPT",
    "Invocation",
    "Worker",
    "WorkerPool",
    "lambda_environment",
]

#: Extra time a worker gets past the function timeout before it is killed (pipe and JSON overhead).
TIMEOUT_GRACE_SECONDS: Final = 0.5
#: The script each worker runs (standard library only; never imported here).
WORKER_SCRIPT: Final = Path(__file__).with_name("worker.py")
#: How long a cold start may take at least, whatever the function timeout.
_MIN_INIT_SECONDS: Final = 10.0
#: How long a worker whose stdin was closed may take to exit before it is killed.
_EXIT_WAIT_SECONDS: Final = 2.0
#: Variables of this process a worker keeps (Lambda sets its own equivalents).
_PASSED_THROUGH: Final = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT", "TZ")


def lambda_environment(
    function: DeployedFunction,
    *,
    region: str,
    endpoint_url: str | None,
    credentials: Mapping[str, str],
) -> dict[str, str]:
    """The environment of a worker: the function's, plus what Lambda sets, region and endpoint."""
    env = {k: os.environ[k] for k in _PASSED_THROUGH if k in os.environ}
    env.update(credentials)
    env.update(
        {
            "AWS_REGION": region,
            "AWS_DEFAULT_REGION": region,
            "AWS_LAMBDA_FUNCTION_NAME": function.name,
            "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
            "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(function.memory_mb),
            "AWS_LAMBDA_FUNCTION_TIMEOUT": str(function.timeout_seconds),
            "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{function.name}",
            "AWS_LAMBDA_LOG_STREAM_NAME": "local",
            "AWS_EXECUTION_ENV": "constructs-fifo-local",
            "LAMBDA_TASK_ROOT": str(function.code_dir),
            "_HANDLER": function.handler,
            "PYTHONUNBUFFERED": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
            "CONSTRUCTS_FIFO_LOCAL_FUNCTION_ARN": function.arn,
        }
    )
    if endpoint_url is not None:
        env["AWS_ENDPOINT_URL"] = endpoint_url
    env.update(function.environment)
    return env


@dataclass(frozen=True)
class Invocation:
    """What one invocation of the handler gave.

    Attributes
    ----------
    result
        The handler's return value (``None`` when it failed).
    error
        ``None``, or what went wrong (``"Timeout: ..."``, the exception's type and message, or
        ``"WorkerError: ..."``).
    cold_start
        Whether this invocation started its worker.
    timed_out
        Whether it ran past the function timeout (the worker was killed).
    duration_seconds
        Time in the handler.
    aws_calls
        AWS API calls the handler made, by ``service.Operation`` and DynamoDB table (see ``worker.py``);
        empty when the worker timed out or died.
    outcomes
        The runtime's outcome lines the invocation wrote, by status (see ``worker.py``).
    error_type
        The type of the exception the handler raised (``ConfigurationError``), else ``None``.
    init_failed
        The worker could not import the function's handler (Lambda's ``Runtime.ImportModuleError``).
    """

    result: Any
    error: str | None
    cold_start: bool
    timed_out: bool
    duration_seconds: float
    aws_calls: Mapping[str, int] = field(default_factory=dict)
    outcomes: Mapping[str, int] = field(default_factory=dict)
    error_type: str | None = None
    init_failed: bool = False


class Worker:
    """One worker subprocess: one concurrency slot's execution environment (see ``worker.py``)."""

    def __init__(self, command: list[str], env: Mapping[str, str], log: Any) -> None:
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            env=dict(env),
            process_group=0,  # not the terminal's: Ctrl-C is the runner's to handle (module docstring)
        )
        self._buffer = b""
        #: Whether it answered its start with ``"ready": false`` (the handler's import failed).
        self.init_failed = False

    def read_line(self, timeout: float | None) -> dict[str, Any] | None:
        """The next protocol line, or ``None`` when ``timeout`` passed first."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self._buffer:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                raise WorkerError(
                    f"worker process {self.process.pid} exited (status {self.process.poll()}) without "
                    "answering; a worker must answer every request",
                    "see the function log",
                )
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        decoded: dict[str, Any] = json.loads(line)
        return decoded

    def send(self, request: dict[str, Any]) -> None:
        """Write one request line."""
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(request).encode() + b"\n")
        self.process.stdin.flush()

    def kill(self) -> None:
        """Kill the process and close its pipes."""
        with contextlib.suppress(OSError):
            self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def request_exit(self) -> None:
        """Close its stdin: the worker finishes its loop and exits (without waiting for it)."""
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()

    def close(self) -> None:
        """Close its stdin (the worker exits), wait briefly, kill if it does not."""
        self.request_exit()
        try:
            self.process.wait(timeout=_EXIT_WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            self.kill()
        if self.process.stdout is not None:
            self.process.stdout.close()


class WorkerPool:
    """One :class:`Worker` per concurrency slot, started on first use.

    Parameters
    ----------
    function
        The deployed function (code directory, handler, timeout).
    environment
        Every worker's environment (:func:`lambda_environment`).
    log
        Where the workers' stderr (the function log) goes.
    """

    def __init__(self, function: DeployedFunction, environment: Mapping[str, str], log: IO[bytes]) -> None:
        self.function = function
        self._environment = dict(environment)
        self._log = log
        self._workers: dict[int, Worker] = {}

    def invoke(self, slot: int, event: Mapping[str, Any]) -> Invocation:
        """Run ``event`` through the handler in ``slot``'s worker, up to the function timeout."""
        timeout = float(self.function.timeout_seconds)
        cold = slot not in self._workers
        error: str | None = None
        result: Any = None
        calls: dict[str, int] = {}
        outcomes: dict[str, int] = {}
        error_type: str | None = None
        init_failed = False
        timed_out = False
        begin = time.monotonic()
        try:
            if cold:
                self._workers[slot] = Worker(self._command(), self._environment, self._log)
                ready = self._workers[slot].read_line(
                    timeout=max(timeout, _MIN_INIT_SECONDS) + TIMEOUT_GRACE_SECONDS
                )
                if ready is None:
                    raise TimeoutError
                self._workers[slot].init_failed = not ready.get("ready")
            worker = self._workers[slot]
            init_failed = worker.init_failed
            begin = time.monotonic()
            worker.send({"event": event, "request_id": str(uuid.uuid4()), "timeout_ms": int(timeout * 1000)})
            answer = worker.read_line(timeout=timeout + TIMEOUT_GRACE_SECONDS)
            if answer is None:
                raise TimeoutError
            calls = {str(key): int(value) for key, value in (answer.get("aws_calls") or {}).items()}
            outcomes = {str(key): int(value) for key, value in (answer.get("outcomes") or {}).items()}
            if answer.get("ok"):
                result = answer.get("result")
            else:
                details = answer.get("error") or {}
                error_type = str(details.get("errorType", "Error"))
                error = f"{error_type}: {details.get('errorMessage', '')}"
        except TimeoutError:
            error = f"Timeout: the handler ran past the function timeout of {self.function.timeout_seconds} s"
            timed_out = True
            self._retire(slot)
        except (WorkerError, OSError, ValueError) as exc:
            error = f"WorkerError: {exc.message if isinstance(exc, WorkerError) else exc}"
            self._retire(slot)
        return Invocation(
            result,
            error,
            cold,
            timed_out,
            time.monotonic() - begin,
            calls,
            outcomes=outcomes,
            error_type=error_type,
            init_failed=init_failed,
        )

    def abort(self) -> None:
        """Kill every worker now, the ones running a batch included (thread-safe).

        Their invocations end with a ``WorkerError`` and leave their records, as a cut-off Lambda
        invocation does; a later :meth:`invoke` would start a new worker, so stop the callers first.
        """
        for worker in list(self._workers.values()):
            # Only the signal: the slot reading the worker's pipe sees it close, and retires the
            # worker (closing its pipes) on its own thread.
            with contextlib.suppress(OSError):
                worker.process.kill()

    def close(self) -> None:
        """Stop every worker: all are asked to exit first, so they shut down together, not in turn."""
        workers = list(self._workers.values())
        for worker in workers:
            worker.request_exit()
        for worker in workers:
            worker.close()
        self._workers.clear()

    def _command(self) -> list[str]:
        return [sys.executable, str(WORKER_SCRIPT), str(self.function.code_dir), self.function.handler]

    def _retire(self, slot: int) -> None:
        worker = self._workers.pop(slot, None)
        if worker is not None:
            worker.kill()
