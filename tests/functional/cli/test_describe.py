"""``constructs-fifo describe`` against the emulator, and the stack every command takes without ``--stack``.

The stack is deployed to a running emulator (moto's server with the fidelity patches) through
CloudFormation, with an output holding the queue's URL: CloudFormation there reports it as
``https://sqs.us-east-1.amazonaws.com/...``, which no client reaches on the emulator.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from constructs_fifo.cli import EXIT_USAGE, main
from constructs_fifo.client import JobProducer
from constructs_fifo.local.emulator.server import LocalEmulator
from constructs_fifo.runtime.constants import ENV_MODE

from ..ops_world import STACK, stack_template
from ..runtime_harness import DLQ_NAME, GROUP_TABLE_NAME, QUEUE_NAME, REGION


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    """A running emulator holding STACK (claim mode, mode in the function's environment, one output)."""
    with LocalEmulator(port=0) as emu:
        template: dict[str, Any] = stack_template(claim_mode=True)
        template["Resources"]["Function"]["Properties"]["Environment"]["Variables"][ENV_MODE] = "claim"
        template["Outputs"] = {"QueueUrl": {"Value": {"Ref": "Queue"}}}
        cloudformation = boto3.client(
            "cloudformation",
            endpoint_url=emu.endpoint_url,
            region_name=REGION,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )
        cloudformation.create_stack(StackName=STACK, TemplateBody=json.dumps(template))
        yield emu.endpoint_url


@pytest.fixture(autouse=True)
def credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", os.devnull)


def _app(directory: Path, stacks: dict[str, bool]) -> Path:
    """A synthesized app: cdk.json and a cdk.out whose stacks hold an OrderedAgentQueue or not."""
    (directory / "cdk.json").write_text('{"app": "python app.py"}')
    assembly = directory / "cdk.out"
    assembly.mkdir()
    artifacts = {}
    for name, queued in stacks.items():
        variables = {ENV_MODE: "claim"} if queued else {}
        function = {"Type": "AWS::Lambda::Function", "Properties": {"Environment": {"Variables": variables}}}
        (assembly / f"{name}.template.json").write_text(json.dumps({"Resources": {"Fn": function}}))
        artifacts[name] = {
            "type": "aws:cloudformation:stack",
            "properties": {"templateFile": f"{name}.template.json"},
        }
    (assembly / "manifest.json").write_text(json.dumps({"version": "48.0.0", "artifacts": artifacts}))
    return directory


def test_describe_json_shows_the_urls_the_endpoint_serves(
    endpoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # WHEN describe runs against the emulator
    code = main(["describe", "--stack", STACK, "--endpoint-url", endpoint, "--region", REGION, "--json"])
    document = json.loads(capsys.readouterr().out)
    # THEN the queue, its DLQ, function, mapping, tables and mode, every URL the emulator's own
    [queue] = document["queues"]
    assert code == 0
    assert queue["queueUrl"] == f"{endpoint}/123456789012/{QUEUE_NAME}"
    assert queue["deadLetterQueueUrl"] == f"{endpoint}/123456789012/{DLQ_NAME}"
    assert queue["mode"] == "claim"
    assert queue["groupTableName"] == GROUP_TABLE_NAME
    assert queue["eventSourceMapping"]["state"] == "Enabled"
    assert queue["eventSourceMapping"]["batchSize"] == 10
    # AND the output CloudFormation reports as an amazonaws.com URL is the URL the emulator serves
    assert document["outputs"] == {"QueueUrl": queue["queueUrl"]}


def test_the_described_url_is_one_job_producer_sends_to(
    endpoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the URL describe prints
    main(["describe", "--stack", STACK, "--endpoint-url", endpoint, "--region", REGION, "--json"])
    url = json.loads(capsys.readouterr().out)["outputs"]["QueueUrl"]
    # WHEN a producer sends a job there THEN the emulator accepts it
    sqs = boto3.client("sqs", endpoint_url=endpoint, region_name=REGION)
    assert JobProducer(url, sqs_client=sqs).send("j-1", "t", {}, group="g").message_id


def test_describe_text_has_one_whole_line_per_resource(
    endpoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # WHEN describe prints its text form (not a terminal)
    code = main(["describe", "--stack", STACK, "--endpoint-url", endpoint, "--region", REGION])
    lines = capsys.readouterr().out.splitlines()
    # THEN a heading, then label and value per line, URLs and ARNs whole
    assert code == 0
    assert lines[0] == f"{STACK}/Jobs (stack {STACK})"
    assert f"  queue URL        {endpoint}/123456789012/{QUEUE_NAME}" in lines
    assert f"  DLQ ARN          arn:aws:sqs:{REGION}:123456789012:{DLQ_NAME}" in lines


def test_without_stack_a_command_takes_the_apps_one_stack_holding_a_queue(
    endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN an app directory whose stacks are Network and OpsStack, only OpsStack holding a queue
    monkeypatch.chdir(_app(tmp_path, {"Network": False, STACK: True}))
    # WHEN describe runs there with no --stack
    code = main(["describe", "--endpoint-url", endpoint, "--region", REGION, "--json"])
    # THEN it described OpsStack
    assert code == 0
    assert json.loads(capsys.readouterr().out)["stack"] == STACK


def test_without_stack_several_stacks_holding_a_queue_are_named_and_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN an app with two stacks holding a queue
    monkeypatch.chdir(_app(tmp_path, {"Blue": True, "Green": True}))
    # WHEN status runs there with no --stack (nothing is listening: it must not get that far)
    code = main(["status", "--endpoint-url", "http://localhost:1"])
    # THEN exit 2 and one line naming both stacks and the fix
    err = capsys.readouterr().err.strip().splitlines()
    assert code == EXIT_USAGE
    assert err[-1].startswith("constructs-fifo: several stacks hold an OrderedAgentQueue: Blue, Green (")
    assert err[-1].endswith("Fix: pass --stack NAME, e.g. --stack Blue.")


def test_without_stack_outside_an_app_directory_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a directory that is no CDK app's
    monkeypatch.chdir(tmp_path)
    # WHEN drain runs there with no --stack THEN exit 2, never the sample's stack
    code = main(["drain", "--endpoint-url", "http://localhost:1"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == EXIT_USAGE
    assert err == [
        f"constructs-fifo: no --stack given and {tmp_path.resolve()} is not a CDK app's directory (no "
        "cdk.json); the command needs the stack to work on. Fix: pass --stack NAME, or run the command in "
        "the app's directory (the one with cdk.json)."
    ]
