"""A worker's environment is the function's, not this process's; closing the pool stops every worker."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from constructs_fifo.local.aws import FAKE_CREDENTIALS
from constructs_fifo.local.event_source.deployment import DeployedFunction
from constructs_fifo.local.event_source.pool import WorkerPool, lambda_environment


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
