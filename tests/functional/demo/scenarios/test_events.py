"""The events scenario end to end: seed 004's shuffled account events through a bus, a rule, a staging
queue and a pipe into a state-mode FIFO queue converge by ``seq``, and diverge without it.

The stack is CDK L1/L2 resources (``events.EventBus``, ``events.Rule`` with an ``SqsQueue`` target,
encrypted ``sqs.Queue``\\ s, ``pipes.CfnPipe``), synthesized and deployed by CloudFormation on
in-process moto with the emulator's fidelity patches; the local pipe runner is the pipe, and the
state-mode processor (what the ``OrderedAgentQueue`` function runs) is the consumer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
import pytest

from constructs_fifo.demo.sample_app import JOB_CODE_DIR
from constructs_fifo.demo.scenarios.events import (
    EVENT_SOURCE,
    AccountEvent,
    compare,
    event_stream,
    load_account_agent,
)
from constructs_fifo.local.pipes.runner import PipeRunner
from constructs_fifo.ops.staging import staging_queues
from constructs_fifo.ops.target import OpsQueue
from constructs_fifo.runtime.constants import DeadJobPolicy
from constructs_fifo.runtime.job import Job
from constructs_fifo.stacks.aws import AwsTarget
from constructs_fifo.stacks.deployed import DeployedQueue

from ...runtime_harness import DLQ_NAME, QUEUE_NAME, REGION, create_group_table
from ...state_harness import State, StateHarness

BUS = "demo-accounts"
STACK = "AccountEvents"
ACCOUNTS = 6
SEED = 4  # seed 004
#: Seed 004's agent: the sample's job code (lambda/accounts.py).
AGENT = load_account_agent(Path(__file__).resolve().parents[4] / JOB_CODE_DIR)


def _template(*, with_seq: bool, job_id: str = "$.body.detail.eventId") -> dict[str, Any]:
    """The scenario's stack, synthesized from CDK L1/L2 resources; ``job_id``: the job id's path."""
    from aws_cdk import App, BootstraplessSynthesizer, Stack
    from aws_cdk import aws_events as events
    from aws_cdk import aws_events_targets as targets
    from aws_cdk import aws_iam as iam
    from aws_cdk import aws_pipes as pipes
    from aws_cdk import aws_sqs as sqs

    app = App()
    stack = Stack(app, STACK, synthesizer=BootstraplessSynthesizer())  # no bootstrap version check
    bus = events.EventBus(stack, "Bus", event_bus_name=BUS)
    staging_dlq = sqs.Queue(stack, "StagingDlq", encryption=sqs.QueueEncryption.SQS_MANAGED)
    staging = sqs.Queue(
        stack,
        "Staging",
        encryption=sqs.QueueEncryption.SQS_MANAGED,
        dead_letter_queue=sqs.DeadLetterQueue(max_receive_count=5, queue=staging_dlq),
    )
    events.Rule(
        stack,
        "Rule",
        event_bus=bus,
        event_pattern=events.EventPattern(source=[EVENT_SOURCE]),
        targets=[targets.SqsQueue(staging)],
    )
    dlq = sqs.Queue(stack, "JobsDlq", queue_name=DLQ_NAME, fifo=True)
    jobs = sqs.Queue(
        stack,
        "Jobs",
        queue_name=QUEUE_NAME,
        fifo=True,
        dead_letter_queue=sqs.DeadLetterQueue(max_receive_count=10, queue=dlq),
    )
    role = iam.Role(stack, "PipeRole", assumed_by=iam.ServicePrincipal("pipes.amazonaws.com"))
    staging.grant_consume_messages(role)
    jobs.grant_send_messages(role)
    seq = ', "seq": <$.body.detail.version>' if with_seq else ""
    pipes.CfnPipe(
        stack,
        "Pipe",
        role_arn=role.role_arn,
        source=staging.queue_arn,
        source_parameters=pipes.CfnPipe.PipeSourceParametersProperty(
            sqs_queue_parameters=pipes.CfnPipe.PipeSourceSqsQueueParametersProperty(batch_size=10)
        ),
        target=jobs.queue_arn,
        target_parameters=pipes.CfnPipe.PipeTargetParametersProperty(
            input_template=f'{{"jobId": "<{job_id}>", "type": "<$.body.detail-type>", '
            f'"payload": <$.body.detail>{seq}}}',
            sqs_queue_parameters=pipes.CfnPipe.PipeTargetSqsQueueParametersProperty(
                message_group_id="$.body.detail.accountId",
                message_deduplication_id=job_id,
            ),
        ),
    )
    template: dict[str, Any] = app.synth().get_stack_by_name(STACK).template
    return template


@pytest.fixture(scope="module")
def templates() -> dict[bool, dict[str, Any]]:
    return {with_seq: _template(with_seq=with_seq) for with_seq in (True, False)}


class AccountAgent(StateHarness):
    """The state-mode consumer whose transition is seed 004's account agent."""

    def transition(self, job: Job, state: State) -> dict[str, Any]:
        self.runs.append(job.id)
        payload = job.payload if isinstance(job.payload, dict) else {}
        return AGENT(job.type, payload, state)


def _publish(stream: list[AccountEvent]) -> None:
    client = boto3.client("events", region_name=REGION)
    for start in range(0, len(stream), 10):
        entries = [
            {
                "Source": EVENT_SOURCE,
                "DetailType": event.event_type,
                "Detail": json.dumps(event.detail()),
                "EventBusName": BUS,
            }
            for event in stream[start : start + 10]
        ]
        assert client.put_events(Entries=entries)["FailedEntryCount"] == 0


def _run(
    template: dict[str, Any], stream: list[AccountEvent], *, policy: DeadJobPolicy = DeadJobPolicy.CONTINUE
) -> dict[str, Any]:
    """Deploy, publish in the stream's order, run the pipe, then the state-mode consumer; the states."""
    boto3.client("cloudformation", region_name=REGION).create_stack(
        StackName=STACK, TemplateBody=json.dumps(template), Capabilities=["CAPABILITY_IAM"]
    )
    dynamodb = boto3.client("dynamodb", region_name=REGION)
    sqs = boto3.client("sqs", region_name=REGION)
    create_group_table(dynamodb)
    _publish(stream)
    [pipe] = PipeRunner.from_stack(STACK, target=AwsTarget(None, REGION))
    moved = pipe.run(until_empty=True)
    assert (moved.sent, moved.failed) == (len(stream), 0)
    agent = AccountAgent(
        dynamodb=dynamodb,
        sqs=sqs,
        queue_url=sqs.get_queue_url(QueueName=QUEUE_NAME)["QueueUrl"],
        dlq_url=sqs.get_queue_url(QueueName=DLQ_NAME)["QueueUrl"],
        policy=policy,
    )
    agent.drain(rounds=50)
    accounts = sorted({event.account_id for event in stream})
    parked = [header.group for header in agent.operator().list_groups()]
    return {account: agent.group_state(account).state for account in accounts} | {"parked": parked}


@pytest.mark.usefixtures("patched_moto")
def test_shuffled_account_events_converge_by_seq(templates: dict[bool, dict[str, Any]]) -> None:
    # GIVEN seed 004's stories of six accounts, published shuffled (some account out of order)
    stream = event_stream(ACCOUNTS, SEED)
    # WHEN they go through the bus, the rule, the staging queue and the pipe whose template maps seq
    states = _run(templates[True], stream)
    # THEN every account ends as if its events had arrived in the order they happened
    assert states.pop("parked") == []
    comparison = compare(stream, states, AGENT)
    assert comparison.converged, comparison.verdict()


@pytest.mark.usefixtures("patched_moto")
def test_without_seq_the_same_stream_diverges_and_bills_wrong(templates: dict[bool, dict[str, Any]]) -> None:
    # GIVEN the same shuffled stream, and a pipe whose template carries no seq
    stream = event_stream(ACCOUNTS, SEED)
    # WHEN it goes through the same pipeline
    states = _run(templates[False], stream)
    states.pop("parked")
    # THEN each account's events were applied in arrival order, and some accounts were billed wrong
    comparison = compare(stream, states, AGENT)
    assert not comparison.converged
    assert comparison.wrongly_billed, comparison.verdict()


#: Entities and events of the resend run (the issue's independent run: 30 entities x 8 events).
RESEND_ACCOUNTS = 30


def _with_resends(stream: list[AccountEvent]) -> list[AccountEvent]:
    """The stream, with each account's last event published first and again right after (a PutEvents
    retry: EventBridge gives the copy a new event id), so the copy arrives while the original waits in
    the reorder buffer for the account's earlier versions; and every fourth event published twice."""
    last = {event.account_id: event for event in sorted(stream, key=lambda e: e.version)}
    ahead = [copy for event in last.values() for copy in (event, event)]
    rest = [e for e in stream if last[e.account_id] is not e]
    return ahead + [copy for index, e in enumerate(rest) for copy in ((e, e) if index % 4 == 0 else (e,))]


@pytest.mark.usefixtures("patched_moto")
def test_resent_events_under_new_event_ids_converge_and_park_no_account() -> None:
    # GIVEN a pipe whose job id is the event's own id ($.id: new on every PutEvents), seq mapped, PARK,
    # and 30 accounts' shuffled stories with resends, some arriving while the original is buffered
    stream = event_stream(RESEND_ACCOUNTS, SEED)
    published = _with_resends(stream)
    assert len(published) > len(stream) + RESEND_ACCOUNTS
    # WHEN they go through the bus, the rule, the staging queue and the pipe
    states = _run(_template(with_seq=True, job_id="$.body.id"), published, policy=DeadJobPolicy.PARK)
    # THEN no account is parked (a resend is the same seq with the same content: a duplicate), and every
    # account ends as if its events had arrived once, in the order they happened
    assert states.pop("parked") == []
    comparison = compare(stream, states, AGENT)
    assert comparison.converged, comparison.verdict()


@pytest.mark.usefixtures("patched_moto")
def test_status_shows_the_staging_queue_feeding_the_queue_and_its_dead_letter_queue(
    templates: dict[bool, dict[str, Any]],
) -> None:
    # GIVEN the scenario's stack (bus, rule, staging queue and its DLQ, pipe into the FIFO queue), drained
    _run(templates[True], event_stream(2, SEED))
    sqs = boto3.client("sqs", region_name=REGION)
    url = sqs.get_queue_url(QueueName=QUEUE_NAME)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    ops = OpsQueue(
        DeployedQueue(STACK, f"{STACK}/Jobs", QUEUE_NAME, url, arn, None),
        sqs,
        boto3.client("dynamodb", region_name=REGION),
        cloudformation=boto3.client("cloudformation", region_name=REGION),
        pipes=boto3.client("pipes", region_name=REGION),
    )
    # WHEN the staging queues feeding the queue are looked up, as status does
    [staged] = staging_queues(ops)
    # THEN the pipe's source is there with its dead-letter queue, both empty
    assert staged.queue_name.startswith(f"{STACK}-Staging") and staged.depth == 0
    assert staged.dead_letter_queue_name is not None and "StagingDlq" in staged.dead_letter_queue_name
    assert staged.dead_letter_depth == 0
