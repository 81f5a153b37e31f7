"""``constructs-fifo pipes run`` against moto in-process: the JSON (camelCase), the lines, the exit codes."""

from __future__ import annotations

import json

import pytest

from constructs_fifo.cli import main
from constructs_fifo.cli.pipes import EXIT_FAILED_RECORDS

from ..local.pipes.ingress import REGION, STACK, deploy, publish, received, template

pytestmark = pytest.mark.usefixtures("patched_moto")


def test_pipes_run_prints_camel_case_json_and_exits_0_when_every_record_was_sent(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # GIVEN the deployed ingress and two staged events
    deploy(template())
    publish({"accountId": "a1", "version": 1}, {"accountId": "a2", "version": 1})
    # WHEN the pipes run with --json
    code = main(["pipes", "run", "--stack", STACK, "--region", REGION, "--until-empty", "--json"])
    # THEN the document lists the pipe with camelCase keys, everything sent
    [stats] = json.loads(capsys.readouterr().out)["pipes"]
    assert code == 0
    assert stats["received"] == stats["sent"] == 2
    assert {"sourceArn", "targetArn", "templatePathsMissing", "leftInFlight"} <= set(stats)
    assert len(received("account-jobs.fifo")) == 2


def test_pipes_run_names_each_failure_and_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN an event without the group path
    deploy(template(max_receive_count=1))
    publish({"version": 1})
    # WHEN the pipes run (text output)
    code = main(["pipes", "run", "--stack", STACK, "--region", REGION])
    # THEN the line says it was left, with the reason, and the exit code says a record failed
    out = capsys.readouterr()
    assert code == EXIT_FAILED_RECORDS
    assert "sent 0, left 1" in out.out
    assert "MessageGroupId path $.body.detail.accountId resolves to nothing" in out.out
    assert "dead-letter queue" in out.err


def test_pipes_run_on_a_stack_without_pipes_exits_3_with_the_fix(capsys: pytest.CaptureFixture[str]) -> None:
    deploy({"Resources": {"Q": {"Type": "AWS::SQS::Queue", "Properties": {}}}})
    # WHEN run THEN one line with the fix, exit 3
    assert main(["pipes", "run", "--stack", STACK, "--region", REGION]) == 3
    assert "Fix:" in capsys.readouterr().err


def test_a_stopped_pipe_exits_3(capsys: pytest.CaptureFixture[str]) -> None:
    deploy(template(desired_state="STOPPED"))
    assert main(["pipes", "run", "--stack", STACK, "--region", REGION]) == 3
    assert "not run" in capsys.readouterr().out
