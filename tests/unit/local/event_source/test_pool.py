"""A worker's environment is the function's, not this process's; closing the pool stops every worker."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from constructs_fifo.local.event_source.deployment import DeployedFunction
from constructs_fifo.local.event_source.pool import WorkerPool, lambda_environment
from constructs_fifo.stacks.aws import FAKE_CREDENTIALS


def test_worker_environment_is_the_functions_not_this_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a variable of this process and a function environment
    monkeypatch.setenv("SOMETHING_PRIVATE", "1")
    function = DeployedFunction("fn", "arn:fn", "h.handle", 3, 512, {"TABLE": "claims"}, None, tmp_path)

    # WHEN the worker environment is built
    env = lambda_environment(
        function, region="eu-west-1", endpoint_url="http://localhost:1", credentials=FAKE_CREDENTIALS
    )

    # THEN it has the function's variables, Lambda's, the endpoint and the credentials; not ours
    assert env["TABLE"] == "claims"
    assert env["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"] == "512"
    assert env["AWS_ENDPOINT_URL"] == "http://localhost:1"
    assert env["AWS_REGION"] == "eu-west-1"
    assert env["AWS_ACCESS_KEY_ID"] == "testing"
    assert "SOMETHING_PRIVATE" not in env


def test_close_stops_every_worker(tmp_path: Path) -> None:
    # GIVEN a pool whose three slots each ran one invocation of a handler returning its process id
    (tmp_path / "h.py").write_text("import os\n\ndef handle(event, context):\n    return os.getpid()\n")
    function = DeployedFunction("fn", "arn:fn", "h.handle", 10, 128, {}, None, tmp_path)
    env = lambda_environment(function, region="eu-west-1", endpoint_url=None, credentials=FAKE_CREDENTIALS)
    with (tmp_path / "log").open("ab") as log:
        pool = WorkerPool(function, env, log)
        try:
            pids = [pool.invoke(slot, {"Records": []}).result for slot in range(3)]
        finally:
            # WHEN the pool is closed
            pool.close()
    # THEN three distinct workers ran, and none of them is left
    assert len(set(pids)) == 3
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_workers_do_not_share_the_terminals_process_group_and_abort_kills_them(tmp_path: Path) -> None:
    # GIVEN a pool whose two slots each ran one invocation (handler: its process id and group)
    (tmp_path / "h.py").write_text(
        "import os\n\ndef handle(event, context):\n    return [os.getpid(), os.getpgid(0)]\n"
    )
    function = DeployedFunction("fn", "arn:fn", "h.handle", 10, 128, {}, None, tmp_path)
    env = lambda_environment(function, region="eu-west-1", endpoint_url=None, credentials=FAKE_CREDENTIALS)
    with (tmp_path / "log").open("ab") as log:
        pool = WorkerPool(function, env, log)
        try:
            answers = [pool.invoke(slot, {"Records": []}).result for slot in range(2)]
            # THEN each worker leads a process group of its own: the terminal's Ctrl-C, sent to our
            # group, never reaches it (the runner decides when workers stop)
            for pid, group in answers:
                assert group == pid != os.getpgrp()
            # WHEN the pool aborts
            pool.abort()
            # THEN the next invocation of a slot finds its worker killed (and starts a new one)
            again = pool.invoke(0, {"Records": []})
            assert again.error is not None and again.error.startswith("WorkerError")
            assert pool.invoke(0, {"Records": []}).cold_start
        finally:
            pool.close()


def _pool(tmp_path: Path, handler: str) -> WorkerPool:
    function = DeployedFunction("fn", "arn:fn", handler, 10, 128, {}, None, tmp_path)
    env = lambda_environment(function, region="eu-west-1", endpoint_url=None, credentials=FAKE_CREDENTIALS)
    return WorkerPool(function, env, (tmp_path / "log").open("ab"))


OUTCOME_HANDLER = """
from constructs_fifo.runtime.constants import OutcomeLines
from constructs_fifo.runtime.observability import JobLogger, OutcomeStatus


def handle(event, context):
    print("a job's own print")
    for level, statuses in (
        (OutcomeLines.JOB, ["SUCCEEDED", "PARKED", "KEPT", "FAILED"]),
        (OutcomeLines.BATCH, ["SUCCEEDED", "SUCCEEDED", "DUPLICATE", "DEAD_LETTERED"]),
    ):
        log = JobLogger("Test", outcome_lines=level)
        for n, status in enumerate(statuses):
            log.outcome(OutcomeStatus(status), queue_name="q", job_id=f"j{n}", group="g", job_type="t",
                        attempt=1, message_id=f"m{n}", duration_ms=1.0)
        log.batch(queue_name="q", records=len(statuses))
"""


def test_the_runtime_s_outcome_lines_are_counted_by_status_at_both_levels(tmp_path: Path) -> None:
    # GIVEN a handler writing the runtime's outcome lines: a line per job, then a batch's summary
    (tmp_path / "h.py").write_text(OUTCOME_HANDLER)
    pool = _pool(tmp_path, "h.handle")
    try:
        # WHEN it is invoked twice
        first, second = pool.invoke(0, {"Records": []}), pool.invoke(0, {"Records": []})
    finally:
        pool.close()
    # THEN each invocation counts its own outcomes, folded successes included
    expected = {"SUCCEEDED": 3, "PARKED": 1, "KEPT": 1, "FAILED": 1, "DUPLICATE": 1, "DEAD_LETTERED": 1}
    assert first.outcomes == second.outcomes == expected
    # AND every line still reaches the function log
    log = (tmp_path / "log").read_text()
    assert log.count("a job's own print") == 2
    assert log.count('"status":"PARKED"') == 2


def test_a_handler_error_is_written_to_the_log_with_its_traceback(tmp_path: Path) -> None:
    # GIVEN a handler raising
    (tmp_path / "h.py").write_text("def handle(event, context):\n    raise RuntimeError('boom')\n")
    pool = _pool(tmp_path, "h.handle")
    try:
        # WHEN it is invoked
        invocation = pool.invoke(0, {"Records": []})
    finally:
        pool.close()
    # THEN the error is the invocation's, by type, and the log holds it as Lambda writes it
    assert (invocation.error, invocation.error_type, invocation.init_failed) == (
        "RuntimeError: boom",
        "RuntimeError",
        False,
    )
    log = (tmp_path / "log").read_text()
    assert log.startswith("[ERROR] RuntimeError: boom\nTraceback (most recent call last):\n")
    assert "raise RuntimeError('boom')" in log


def test_a_handler_that_cannot_be_imported_fails_its_init_and_says_why_in_the_log(tmp_path: Path) -> None:
    # GIVEN a function whose handler's module is not in its code
    pool = _pool(tmp_path, "nosuch.handle")
    try:
        # WHEN it is invoked, cold then warm
        cold, warm = pool.invoke(0, {"Records": []}), pool.invoke(0, {"Records": []})
    finally:
        pool.close()
    # THEN both invocations carry the import error and say the init failed
    for invocation in (cold, warm):
        assert invocation.error == "ModuleNotFoundError: No module named 'nosuch'"
        assert invocation.init_failed
    # AND the log holds it once, with its traceback (Lambda logs an init error when the init runs)
    log = (tmp_path / "log").read_text()
    assert log.count("[ERROR] ModuleNotFoundError: No module named 'nosuch'\nTraceback") == 1


def test_the_runtime_s_own_import_error_is_a_configuration_error(tmp_path: Path) -> None:
    # GIVEN the construct's entry point whose job function's module is not in the code directory
    function = DeployedFunction(
        "fn",
        "arn:fn",
        "constructs_fifo.runtime.entrypoint.handler",
        10,
        128,
        {
            "CONSTRUCTS_FIFO_HANDLER": "nosuch.handle",
            "CONSTRUCTS_FIFO_QUEUE_URL": "http://localhost:1/123456789012/q.fifo",
            "CONSTRUCTS_FIFO_DEAD_LETTER_QUEUE_URL": "http://localhost:1/123456789012/dlq.fifo",
            "CONSTRUCTS_FIFO_CLAIM_TABLE": "claims",
            "CONSTRUCTS_FIFO_GROUP_TABLE": "groups",
        },
        None,
        tmp_path,
    )
    env = lambda_environment(function, region="eu-west-1", endpoint_url=None, credentials=FAKE_CREDENTIALS)
    with (tmp_path / "log").open("ab") as log:
        pool = WorkerPool(function, env, log)
        try:
            # WHEN it is invoked
            invocation = pool.invoke(0, {"Records": []})
        finally:
            pool.close()
    # THEN the runtime raised its ConfigurationError (what a drain stops on), and the log holds it
    assert invocation.error_type == "ConfigurationError"
    assert (
        "[ERROR] ConfigurationError: CONSTRUCTS_FIFO_HANDLER='nosuch.handle': module 'nosuch' cannot be "
        in ((tmp_path / "log").read_text())
    )
