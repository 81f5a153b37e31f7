"""One Lambda execution environment for the local event source runner, run as a subprocess.

Started as a script by ``pool.py`` (``python worker.py CODE_DIR HANDLER``), never imported: its
``sys.path`` starts with the function's extracted code, so the handler (and the copy of
``constructs_fifo`` the asset carries) is imported from there, not from the installed package. Its
environment is the function's environment, set by the pool.

Protocol, one JSON object per line. The worker imports the handler once (the cold start) and writes
``{"ready": true, "init_ms": N}`` or ``{"ready": false, "error": {...}}`` on the protocol pipe. Then,
for every line ``{"event": ..., "request_id": ..., "timeout_ms": N}`` on stdin, it answers
``{"ok": true, "result": ..., "duration_ms": N, "aws_calls": {...}}`` or
``{"ok": false, "error": {...}, "duration_ms": N, "aws_calls": {...}}``.

``aws_calls`` counts the AWS API calls the invocation made through boto3's default session (which is
what ``boto3.client(...)`` and ``boto3.resource(...)`` use): ``{"dynamodb.PutItem claims": 2, ...}``,
one key per service, operation and DynamoDB table (the tables a call names, comma-separated; no table
for other services). The hook is registered on that session before the handler is imported, so it
sees every client the handler creates; a call is counted once, however often botocore retries it.
Without boto3 installed nothing is counted (an empty object).

``outcomes`` counts the runtime's outcome lines the invocation wrote through ``sys.stdout``, by
``status`` (``{"SUCCEEDED": 9, "PARKED": 1}``): an outcome line's own ``status``, and each row of a
batch or summary line's ``jobs`` (the BATCH level folds successes into them). Lines that are not
the runtime's JSON are written and not counted.

The protocol pipe is the original stdout, moved to another descriptor; the handler's own prints go to
stderr (the function's log), as in Lambda. An error the handler raises, or its import's, is written to
the log as Lambda writes it (``[ERROR] Type: message`` and the traceback), so the log says why a batch
failed.

This module uses the standard library only (and boto3, only to count calls, when it is importable)
and imports nothing from ``constructs_fifo``.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
import traceback
from typing import IO, Any

__all__ = ["CallCounter", "OutcomeCounter", "WorkerContext", "load_handler", "main"]


class WorkerContext:
    """The parts of Lambda's context object handlers use.

    Parameters
    ----------
    request_id:
        ``aws_request_id``.
    timeout_ms:
        The function's timeout: ``get_remaining_time_in_millis`` counts down from it.
    """

    def __init__(self, request_id: str, timeout_ms: int) -> None:
        env = os.environ
        self.function_name = env.get("AWS_LAMBDA_FUNCTION_NAME", "local")
        self.function_version = env.get("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST")
        self.invoked_function_arn = env.get("CONSTRUCTS_FIFO_LOCAL_FUNCTION_ARN", "")
        self.memory_limit_in_mb = int(env.get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "128"))
        self.aws_request_id = request_id
        self.log_group_name = env.get("AWS_LAMBDA_LOG_GROUP_NAME", f"/aws/lambda/{self.function_name}")
        self.log_stream_name = env.get("AWS_LAMBDA_LOG_STREAM_NAME", "local")
        self.identity = None
        self.client_context = None
        self._deadline = time.monotonic() + timeout_ms / 1000.0

    def get_remaining_time_in_millis(self) -> int:
        """Milliseconds left before the runner kills this invocation."""
        return max(0, int((self._deadline - time.monotonic()) * 1000))


class CallCounter:
    """Counts the AWS API calls made through boto3's default session, by operation and table."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}

    @classmethod
    def install(cls) -> CallCounter:
        """A counter hooked to boto3's default session (created here); counts nothing without boto3."""
        counter = cls()
        try:
            import boto3  # noqa: PLC0415 - optional: only to count calls
        except ImportError:
            return counter
        boto3.setup_default_session()
        session = boto3.DEFAULT_SESSION
        assert session is not None
        session.events.register("before-parameter-build", counter.count)
        return counter

    def count(self, *, params: Any = None, event_name: str = "", **unused: Any) -> None:
        """The hook: ``event_name`` is ``before-parameter-build.<service>.<Operation>``."""
        operation = event_name.partition(".")[2]
        key = operation
        tables = _tables_of(params) if isinstance(params, dict) else []
        if tables:
            key = f"{operation} {','.join(tables)}"
        self.calls[key] = self.calls.get(key, 0) + 1

    def take(self) -> dict[str, int]:
        """The counts since the last ``take``, and start again from zero."""
        taken, self.calls = self.calls, {}
        return taken


class OutcomeCounter:
    """``sys.stdout`` of the worker: writes to the log and counts the runtime's outcome lines by status."""

    def __init__(self, log: IO[str]) -> None:
        self._log = log
        self._pending = ""
        self.counts: dict[str, int] = {}

    def write(self, text: str) -> int:
        """Write ``text`` to the log; count each complete line that is an outcome, batch or summary line."""
        self._log.write(text)
        self._pending += text
        *lines, self._pending = self._pending.split("\n")
        for line in lines:
            self._count(line)
        return len(text)

    def flush(self) -> None:
        """Flush the log."""
        self._log.flush()

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding ... as the log's
        return getattr(self._log, name)

    def _count(self, line: str) -> None:
        if not line.startswith("{"):
            return
        try:
            fields = json.loads(line)
        except ValueError:
            return
        if not isinstance(fields, dict):
            return
        statuses = [fields.get("status")] if "_aws" in fields else []
        jobs = fields.get("jobs")
        if isinstance(jobs, list):
            statuses += [row[2] for row in jobs if isinstance(row, list) and len(row) > 2]
        for status in statuses:
            if isinstance(status, str):
                self.counts[status] = self.counts.get(status, 0) + 1

    def take(self) -> dict[str, int]:
        """The counts since the last ``take``, and start again from zero."""
        taken, self.counts = self.counts, {}
        return taken


def _log_error(error: dict[str, Any]) -> None:
    """Write an error to the function log as Lambda's Python runtime does."""
    trace = "".join(error.get("stackTrace") or [])
    sys.stderr.write(f"[ERROR] {error['errorType']}: {error['errorMessage']}\n{trace}")
    sys.stderr.flush()


def _tables_of(params: dict[str, Any]) -> list[str]:
    """The DynamoDB tables a call's parameters name, sorted (none for other services)."""
    names: set[str] = set()
    if isinstance(params.get("TableName"), str):
        names.add(params["TableName"])
    if isinstance(params.get("RequestItems"), dict):  # BatchGetItem, BatchWriteItem
        names.update(str(name) for name in params["RequestItems"])
    for item in params.get("TransactItems") or []:  # TransactWriteItems, TransactGetItems
        if isinstance(item, dict):
            names.update(
                str(action["TableName"])
                for action in item.values()
                if isinstance(action, dict) and "TableName" in action
            )
    return sorted(names)


def load_handler(spec: str) -> Any:
    """Import ``module.function`` (``dir/module.function`` too) and return the function."""
    module_name, _, function_name = spec.replace("/", ".").rpartition(".")
    if not module_name or not function_name:
        raise ValueError(f"handler {spec!r} must be 'module.function'")
    module = importlib.import_module(module_name)
    return getattr(module, function_name)


def _error(exc: BaseException) -> dict[str, Any]:
    return {
        "errorType": type(exc).__name__,
        "errorMessage": str(exc),
        "stackTrace": traceback.format_exception(exc),
    }


def _write(stream: IO[str], message: dict[str, Any]) -> None:
    stream.write(json.dumps(message, default=str) + "\n")
    stream.flush()


def main(argv: list[str]) -> int:
    """Run the worker loop; ``argv`` is ``[CODE_DIR, HANDLER]``."""
    code_dir, handler_spec = argv
    # The script's own directory is sys.path[0]: replace it with the function's code.
    if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
        sys.path.pop(0)
    sys.path.insert(0, code_dir)
    os.chdir(code_dir)

    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # the handler's prints go to the log (stderr)
    outcomes = OutcomeCounter(sys.stderr)
    sys.stdout = outcomes  # a writer of text, as the runtime uses it

    started = time.monotonic()
    counter = CallCounter.install()
    handler: Any = None
    init_error: dict[str, Any] | None = None
    try:
        handler = load_handler(handler_spec)
    except Exception as exc:  # reported to the runner as Lambda reports an init error
        init_error = _error(exc)
        _log_error(init_error)
    init_ms = int((time.monotonic() - started) * 1000)
    if init_error is None:
        _write(protocol, {"ready": True, "init_ms": init_ms})
    else:
        _write(protocol, {"ready": False, "error": init_error, "init_ms": init_ms})

    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        begin = time.monotonic()
        if handler is None:
            _write(protocol, {"ok": False, "error": init_error, "duration_ms": 0})
            continue
        context = WorkerContext(str(request["request_id"]), int(request["timeout_ms"]))
        counter.take()  # calls between invocations (none in Lambda) are not this invocation's
        outcomes.take()
        answer: dict[str, Any]
        try:
            result = handler(request["event"], context)
        except Exception as exc:  # a handler error is data for the runner, and a line of the log
            answer = {"ok": False, "error": _error(exc)}
            _log_error(answer["error"])
        else:
            answer = {"ok": True, "result": result}
        answer |= {"duration_ms": _ms(begin), "aws_calls": counter.take(), "outcomes": outcomes.take()}
        try:
            _write(protocol, answer)
        except (TypeError, ValueError) as exc:  # a result that is not JSON
            _write(protocol, {**answer, "ok": False, "result": None, "error": _error(exc)})
        sys.stderr.flush()
    return 0


def _ms(begin: float) -> int:
    return int((time.monotonic() - begin) * 1000)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
