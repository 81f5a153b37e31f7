"""The construct's own CfnOutputs (construct/resources/outputs.py): readable ids, descriptions, no exports,
the tables the mode builds, and ``outputs=False``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App, CfnOutput, Stack
from aws_cdk import aws_lambda as lambda_
from aws_cdk.assertions import Template

from constructs_fifo import OrderedAgentQueue
from constructs_fifo.client import QueueLookupError
from constructs_fifo.client.queue.addresses import from_outputs
from constructs_fifo.construct.resources.outputs import OUTPUT_NAMES

from .stacks import Synthesized

REPO = Path(__file__).resolve().parents[2]


def _own_outputs(template: Template, prefix: str) -> dict[str, Any]:
    outputs: dict[str, Any] = template.to_json().get("Outputs", {})
    return {key: value for key, value in outputs.items() if key.startswith(prefix)}


def test_a_claim_queue_outputs_its_queues_tables_and_function(synthesized: Synthesized) -> None:
    # GIVEN the sample's claim-mode queue (PARK: claim and group tables) at AgentJobs/Notifications
    outputs = _own_outputs(synthesized.templates["AgentJobs"], "NotificationsOutputs")
    # THEN every output is there, under a readable logical id: its path in the stack
    assert list(outputs) == [f"NotificationsOutputs{name}" for name in OUTPUT_NAMES]
    # AND each says what it is, naming the construct, and none is exported (exports pin a stack)
    assert outputs["NotificationsOutputsQueueUrl"] == {
        "Description": "OrderedAgentQueue AgentJobs/Notifications: the job queue's URL: producers send jobs "
        "to it.",
        "Value": {"Ref": "NotificationsQueue91395D8F"},
    }
    assert all(
        output["Description"].startswith("OrderedAgentQueue AgentJobs/Notifications: the ")
        for output in outputs.values()
    )
    assert not [key for key, output in outputs.items() if "Export" in output]
    assert outputs["NotificationsOutputsQueueArn"]["Value"] == {
        "Fn::GetAtt": ["NotificationsQueue91395D8F", "Arn"]
    }
    assert outputs["NotificationsOutputsFunctionName"]["Value"] == {"Ref": "NotificationsFunction75C140BC"}


def test_each_mode_outputs_only_the_tables_it_builds(synthesized: Synthesized) -> None:
    # GIVEN a state-mode queue (no claim table) and a claim-mode queue under CONTINUE (no group table)
    state = _own_outputs(synthesized.templates["State"], "JobsOutputs")
    variant = _own_outputs(synthesized.templates["Variant"], "JobsOutputs")
    # THEN each names the tables it has, and only those
    assert ("JobsOutputsGroupTableName" in state, "JobsOutputsClaimTableName" in state) == (True, False)
    assert ("JobsOutputsGroupTableName" in variant, "JobsOutputsClaimTableName" in variant) == (False, True)


def test_outputs_false_adds_none() -> None:
    # GIVEN a queue built with outputs=False
    stack = Stack(App(), "Quiet")
    OrderedAgentQueue(
        stack,
        "Jobs",
        code=lambda_.Code.from_asset(str(REPO / "lambda")),
        handler="notifier.handle",
        outputs=False,
    )
    # THEN the stack has no outputs
    assert Template.from_stack(stack).to_json().get("Outputs", {}) == {}


def test_an_app_s_own_output_of_the_readable_name_does_not_collide() -> None:
    # GIVEN an app writing its own output JobsQueueUrl beside a queue Jobs (tests/e2e/two_queues does)
    stack = Stack(App(), "Own")
    jobs = OrderedAgentQueue(
        stack, "Jobs", code=lambda_.Code.from_asset(str(REPO / "lambda")), handler="notifier.handle"
    )
    CfnOutput(stack, "JobsQueueUrl", value=jobs.queue.queue_url)
    # WHEN it is synthesized THEN both outputs are there
    outputs = Template.from_stack(stack).to_json()["Outputs"]
    assert {"JobsQueueUrl", "JobsOutputsQueueUrl"} <= set(outputs)


def _described(template: Template) -> list[dict[str, str]]:
    """The template's outputs as DescribeStacks returns them, each value its unresolved JSON."""
    outputs: dict[str, Any] = template.to_json().get("Outputs", {})
    return [
        {
            "OutputKey": key,
            "OutputValue": json.dumps(output["Value"]),
            "Description": output.get("Description", ""),
        }
        for key, output in outputs.items()
    ]


def test_a_client_finds_each_queue_of_the_stack_by_name_in_its_outputs(synthesized: Synthesized) -> None:
    # GIVEN the sample stack's outputs as DescribeStacks reads them (four queues, and the app's own)
    outputs = _described(synthesized.templates["AgentJobs"])
    # WHEN a client looks a queue up by its construct path inside the stack, or its full path
    found = from_outputs("AgentJobs", outputs, "Notifications")
    # THEN it is that queue's address: its queue, its dead-letter queue and its tables
    assert json.loads(found.queue_url) == {"Ref": "NotificationsQueue91395D8F"}
    assert found == from_outputs("AgentJobs", outputs, "AgentJobs/Notifications")
    assert found.claim_table is not None and found.group_table is not None
    assert found.dead_letter_queue_url is not None and "DeadLetter" in found.dead_letter_queue_url
    # AND a stack of several queues needs a name: the error lists them
    with pytest.raises(QueueLookupError, match="holds 4 queues") as raised:
        from_outputs("AgentJobs", outputs)
    assert "AgentJobs/Notifications" in str(raised.value)
    with pytest.raises(QueueLookupError, match="matches none"):
        from_outputs("AgentJobs", outputs, "Nope")


def test_a_client_finds_a_state_mode_queue_without_a_claim_table(synthesized: Synthesized) -> None:
    # GIVEN a stack whose one queue is in state mode
    found = from_outputs("State", _described(synthesized.templates["State"]))
    # THEN no name is needed, and it has a group table and no claim table
    assert (found.claim_table, found.group_table is not None) == (None, True)
