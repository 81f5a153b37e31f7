"""runner.py: events via a deployed rule, staging queue and pipe reach the FIFO queue, as Pipes sends them.

In-process moto with the emulator's fidelity patches (CloudFormation creates the pipe; the rule's SQS
target gets AWS's event); the stack is deployed by CloudFormation as ``cdk deploy`` would.
"""

from __future__ import annotations

import json

import boto3
import pytest

from constructs_fifo.local.pipes.errors import PipeNotFoundError
from constructs_fifo.local.pipes.runner import PipeRunner
from constructs_fifo.stacks.aws import AwsTarget

from .ingress import REGION, STACK, deploy, publish, received, template

pytestmark = pytest.mark.usefixtures("patched_moto")


def _runner() -> PipeRunner:
    [runner] = PipeRunner.from_stack(STACK, target=AwsTarget(None, REGION))
    return runner


def test_events_reach_the_fifo_queue_with_the_pipes_group_dedup_id_and_envelope() -> None:
    # GIVEN the deployed rule, staging queue and pipe, and three events of two accounts
    deploy(template())
    publish(
        {"accountId": "a1", "version": 1, "type": "account.suspended"},
        {"accountId": "a2", "version": 1, "type": "usage.reported"},
        {"accountId": "a1", "version": 2, "type": "account.reactivated"},
    )
    # WHEN the pipe runs until the staging queue is empty
    stats = _runner().run(until_empty=True)
    # THEN every event was sent and deleted from the staging queue
    assert (stats.received, stats.sent, stats.failed) == (3, 3, 0)
    assert stats.as_dict()["leftInFlight"] == 0
    # AND each message is in its account's group, deduplicated by the event id, with the envelope
    messages = received("account-jobs.fifo")
    bodies = [json.loads(m["Body"]) for m in messages]
    assert [(m["Attributes"]["MessageGroupId"], b["seq"]) for m, b in zip(messages, bodies, strict=True)] == [
        ("a1", 1),
        ("a1", 2),
        ("a2", 1),
    ]
    assert all(
        m["Attributes"]["MessageDeduplicationId"] == b["jobId"] for m, b in zip(messages, bodies, strict=True)
    )
    assert bodies[0]["payload"] == {"accountId": "a1", "version": 1, "type": "account.suspended"}
    assert {b["jobType"] for b in bodies} == {"account.event"}
    assert received("account-jobs.fifo") == []


def test_an_event_without_the_group_path_stays_in_staging_then_goes_to_its_dlq() -> None:
    # GIVEN a staging queue that dead-letters after 2 receives, and an event with no accountId
    deploy(template(max_receive_count=2))
    publish({"accountId": "a1", "version": 1}, {"version": 1})
    # WHEN the pipe runs until the staging queue is empty (visibility timeout 0: failures come back)
    stats = _runner().run(until_empty=True)
    # THEN the good event was sent once; the bad one failed on each receive, with its reason
    assert stats.sent == 1
    assert stats.failures == {
        "MessageGroupId path $.body.detail.accountId resolves to nothing in the event": 2
    }
    # AND SQS's redrive moved it to the staging DLQ, untouched
    [dead] = [json.loads(m["Body"]) for m in received(_staging_dlq())]
    assert dead["detail"] == {"version": 1}
    assert len(received("account-jobs.fifo")) == 1


def _staging_dlq() -> str:
    sqs = boto3.client("sqs", region_name=REGION)
    [url] = [u for u in sqs.list_queues()["QueueUrls"] if "StagingDlq" in u]
    return url.rsplit("/", 1)[1]


def test_a_stopped_pipe_moves_nothing() -> None:
    # GIVEN a pipe deployed STOPPED and one staged event
    deploy(template(desired_state="STOPPED"))
    publish({"accountId": "a1", "version": 1})
    # WHEN it runs THEN it says why it skipped, and the event waits in staging
    stats = _runner().run(until_empty=True)
    assert stats.skipped is not None and "STOPPED" in stats.skipped
    assert stats.received == 0
    assert received("account-jobs.fifo") == []


def test_a_stack_without_a_pipe_is_refused_with_the_fix() -> None:
    # GIVEN a stack of one queue WHEN its pipes are looked for THEN the error names the stack and the fix
    deploy({"Resources": {"Q": {"Type": "AWS::SQS::Queue", "Properties": {}}}})
    with pytest.raises(PipeNotFoundError, match=STACK) as raised:
        _runner()
    assert "--pipe" in raised.value.fix
