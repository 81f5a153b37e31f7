"""What ``constructs-fifo worker`` prints at a terminal (constructs_fifo.cli.worker_view)."""

from __future__ import annotations

import io
import json
import threading
import time

import pytest

from constructs_fifo.cli import build_parser
from constructs_fifo.cli.worker_view import WorkerView, render_line
from constructs_fifo.runtime.observability import JobLogger, OutcomeStatus

#: 2026-12-02 14:03:07 local time.
_AT = time.mktime((2026, 12, 2, 14, 3, 7, 0, 0, -1))


def _view() -> tuple[WorkerView, io.StringIO]:
    out = io.StringIO()
    return WorkerView(out, clock=lambda: _AT), out


def _outcome(log: JobLogger, status: OutcomeStatus, **fields: object) -> None:
    log.outcome(
        status,
        queue_name="jobs.fifo",
        job_id="apply-1",
        group="ws#1",
        job_type="apply_patch",
        attempt=2,
        message_id="m-1",
        duration_ms=fields.pop("duration_ms", 1520.0),  # type: ignore[arg-type]
        **fields,  # type: ignore[arg-type]
    )


def test_a_succeeded_job_is_one_line_with_the_time_status_job_group_type_attempt_and_duration() -> None:
    # GIVEN the worker's logger writing to the view
    view, out = _view()
    log = JobLogger("Jobs", stream=view)
    # WHEN a job's outcome line is written
    _outcome(log, OutcomeStatus.SUCCEEDED)
    # THEN the terminal shows one short line, no EMF block
    assert out.getvalue() == "14:03:07  SUCCEEDED  apply-1  group ws#1  apply_patch  attempt 2  1.5 s\n"


def test_a_failed_job_shows_what_happens_next_and_its_error() -> None:
    # GIVEN / WHEN a retried job's line
    view, out = _view()
    log = JobLogger("Jobs", stream=view)
    _outcome(
        log,
        OutcomeStatus.FAILED,
        duration_ms=12.25,
        error="TimeoutError: git push",
        action="attempt 2 of 5; retried after its backoff",
        visibilityTimeout=40,
    )
    # THEN its action, error and backoff are on the line
    line = out.getvalue()
    assert line.startswith("14:03:07  FAILED  apply-1  group ws#1  apply_patch  attempt 2  12.2 ms  ")
    assert "attempt 2 of 5; retried after its backoff" in line
    assert "error: TimeoutError: git push" in line
    assert "visibilityTimeout=40" in line
    assert line.count("\n") == 1


def test_lines_of_metrics_only_are_not_shown_and_other_lines_pass_through() -> None:
    # GIVEN the view
    view, out = _view()
    log = JobLogger("Jobs", stream=view)
    # WHEN the worker writes a metric line, the job prints, and a line is not JSON
    log.metrics(queue_name="jobs.fifo", values={"RunningSlots": (1, "Count")})
    view.write("hello Ada: job greet-0\n")
    view.write("{not json\n")
    # THEN only the job's own lines show, as they came
    assert out.getvalue() == "14:03:07  hello Ada: job greet-0\n14:03:07  {not json\n"


@pytest.mark.parametrize(
    ("fields", "shown"),
    [
        (
            {
                "event": "heartbeat",
                "jobId": "tests-1",
                "records": 1,
                "visibilityTimeout": 720,
                "leaseRenewed": False,
            },
            "heartbeat  tests-1 running: 1 record kept in flight 720 s more, lease not renewed",
        ),
        (
            {"event": "heartbeat", "jobId": None, "records": 3, "visibilityTimeout": 720},
            "heartbeat  3 records kept in flight 720 s more",
        ),
        (
            {
                "event": "worker_started",
                "slots": 4,
                "queueUrl": "http://localhost:4566/1/jobs.fifo",
                "batchSize": 10,
            },
            "worker started: 4 slots on jobs.fifo, up to 10 records a batch; SIGTERM or Ctrl-C stops it",
        ),
        (
            {"event": "worker_stopping", "graceSeconds": 110},
            "stopping: no new receives; running jobs have 110 s to finish",
        ),
        ({"event": "worker_stopped", "interrupted": 1}, "stopped: 1 running jobs interrupted"),
        (
            {"level": "WARNING", "event": "delete_failed", "error": "Throttling", "records": 3},
            "WARNING  delete_failed  error=Throttling  records=3",
        ),
        (
            {
                "_aws": {},
                "QueueName": "jobs.fifo",
                "HeartbeatFailures": 1,
                "level": "WARNING",
                "event": "heartbeat_stale",
                "jobId": "tests-1",
                "action": "the job was told (context.cancelled)",
            },
            "WARNING  heartbeat_stale  HeartbeatFailures=1  jobId=tests-1  "
            "action=the job was told (context.cancelled)",
        ),
    ],
    ids=[
        "heartbeat",
        "heartbeat-between-jobs",
        "started",
        "stopping",
        "stopped",
        "warning",
        "warning-metric",
    ],
)
def test_the_workers_events_read_as_sentences(fields: dict[str, object], shown: str) -> None:
    # GIVEN / WHEN / THEN
    assert render_line(dict(fields)) == shown


def test_lines_from_several_slots_threads_come_out_whole() -> None:
    # GIVEN one view shared by the loggers of four slots
    view, out = _view()
    loggers = [JobLogger("Jobs", stream=view) for _ in range(4)]

    def write(log: JobLogger) -> None:
        for _ in range(50):
            _outcome(log, OutcomeStatus.SUCCEEDED)

    # WHEN they write at once
    threads = [threading.Thread(target=write, args=(log,)) for log in loggers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # THEN every line is whole
    lines = out.getvalue().splitlines()
    assert len(lines) == 200
    assert set(lines) == {"14:03:07  SUCCEEDED  apply-1  group ws#1  apply_patch  attempt 2  1.5 s"}


def test_log_format_takes_json_or_text_and_refuses_anything_else(capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN / WHEN the flag is given
    assert build_parser().parse_args(["worker", "--log-format", "json"]).log_format == "json"
    assert build_parser().parse_args(["worker"]).log_format is None  # chosen by the terminal
    # THEN another value is refused, naming the choices
    with pytest.raises(SystemExit):
        build_parser().parse_args(["worker", "--log-format", "yaml"])
    assert "choose from 'json', 'text'" in capsys.readouterr().err


def test_json_lines_are_unchanged_by_the_view_choice() -> None:
    # GIVEN the same outcome written to stdout-like JSON and to the view
    raw = io.StringIO()
    _outcome(JobLogger("Jobs", stream=raw), OutcomeStatus.SUCCEEDED)
    # THEN the JSON form still carries its EMF block and fields (what --log-format json prints)
    fields = json.loads(raw.getvalue())
    assert fields["_aws"]["CloudWatchMetrics"][0]["Namespace"] == "Jobs"
    assert (fields["jobId"], fields["status"]) == ("apply-1", "SUCCEEDED")
