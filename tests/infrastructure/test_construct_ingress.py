"""The ingress constructs' templates: what each builds, the least privilege it grants, what it refuses.

Stacks (synthesized once per module):

- ``Plain``: a state-mode queue without a key, fed by all three ways in: ``Events`` (an
  :class:`EventBusIngress` on the default bus, group ``$.detail.accountId``, seq ``$.detail.version``,
  type from ``$.detail-type``), ``Topic`` (an :class:`SnsFifoIngress` with a filter policy) and ``Custom``
  (a :class:`CustomBusIngress` on a Custom Event Bus);
- ``Keyed``: the same with the queue's customer managed key (the SNS topic encrypted with that key
  too), on a custom classic bus;
- ``Imported``: a queue with an imported key, fed by a pipe and a topic (the key policy is not the
  stack's: warnings).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App, Stack
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as events_targets
from aws_cdk import aws_eventsv2 as eventsv2
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from aws_cdk.assertions import Annotations, Match, Template

from constructs_fifo import CustomBusIngress, EventBusIngress, JobMode, OrderedAgentQueue, SnsFifoIngress
from constructs_fifo.construct import WARNING_INGRESS_KEY_POLICY, InvalidIngressPropsError, InvalidPropsError

REPO = Path(__file__).resolve().parents[2]
PATTERN = events.EventPattern(source=["accounts"])


@dataclass
class Built:
    plain: Template
    keyed: Template
    imported: Annotations
    plain_events: EventBusIngress
    keyed_events: EventBusIngress
    plain_topic: SnsFifoIngress
    plain_custom: CustomBusIngress


def _arn(queue: sqs.IQueue) -> Any:
    """How the queue's ARN appears in its stack's template."""
    return Stack.of(queue).resolve(queue.queue_arn)


def _queue(stack: Stack, key: kms.IKey | None) -> OrderedAgentQueue:
    return OrderedAgentQueue(
        stack,
        "Jobs",
        code=lambda_.Code.from_asset(str(REPO / "lambda")),
        handler="agent_worker.apply_job",
        mode=JobMode.STATE,
        encryption_key=key,
    )


def _feed(
    stack: Stack, queue: OrderedAgentQueue, bus: events.IEventBus, topic: sns.ITopic
) -> tuple[EventBusIngress, SnsFifoIngress]:
    ingress = EventBusIngress(
        stack,
        "Events",
        queue=queue,
        event_bus=bus,
        event_pattern=PATTERN,
        group_path="$.detail.accountId",
        seq_path="$.detail.version",
        job_id_path="$.detail.eventId",
        job_type_path="$.detail-type",
    )
    subscribed = SnsFifoIngress(
        stack,
        "Topic",
        queue=queue,
        topic=topic,
        filter_policy={"jobType": sns.SubscriptionFilter.string_filter(allowlist=["usage"])},
    )
    return ingress, subscribed


@pytest.fixture(scope="module")
def built() -> Built:
    app = App()
    plain = Stack(app, "Plain")
    plain_jobs = _queue(plain, None)
    plain_events, plain_topic = _feed(
        plain,
        plain_jobs,
        events.EventBus.from_event_bus_name(plain, "Default", "default"),
        sns.Topic(plain, "Fifo", fifo=True, enforce_ssl=True),
    )
    plain_custom = CustomBusIngress(
        plain,
        "Custom",
        queue=plain_jobs,
        event_bus=eventsv2.CfnEventBus(plain, "Bus", name="accounts"),
        group_expression="$events.Data.detail.accountId",
        job_type="account_event",
        seq_expression="$events.Data.detail.version",
        event_pattern={"source": ["accounts"]},
    )

    keyed = Stack(app, "Keyed")
    key = kms.Key(keyed, "Key", enable_key_rotation=True)
    keyed_events, _ = _feed(
        keyed,
        _queue(keyed, key),
        events.EventBus(keyed, "Bus", event_bus_name="accounts"),
        sns.Topic(keyed, "Fifo", fifo=True, enforce_ssl=True, master_key=key),
    )

    imported = Stack(app, "Imported")
    imported_key = kms.Key.from_key_arn(
        imported, "Key", "arn:aws:kms:eu-west-1:111111111111:key/0123abcd-0000-0000-0000-000000000000"
    )
    _feed(
        imported,
        _queue(imported, imported_key),
        events.EventBus.from_event_bus_name(imported, "Default", "default"),
        sns.Topic.from_topic_arn(imported, "Fifo", "arn:aws:sns:eu-west-1:111111111111:accounts.fifo"),
    )
    return Built(
        plain=Template.from_stack(plain),
        keyed=Template.from_stack(keyed),
        imported=Annotations.from_stack(imported),
        plain_events=plain_events,
        keyed_events=keyed_events,
        plain_topic=plain_topic,
        plain_custom=plain_custom,
    )


def _only(template: Template, type_: str, props: dict[str, Any] | None = None) -> dict[str, Any]:
    found = template.find_resources(type_, {"Properties": props} if props else None)
    assert len(found) == 1, found
    (resource,) = found.values()
    return dict(resource)


def _ref(template: Template, type_: str, props: dict[str, Any]) -> dict[str, Any]:
    (logical_id,) = template.find_resources(type_, {"Properties": props})
    return {"Fn::GetAtt": [logical_id, "Arn"]}


def _job_queue_arn(template: Template) -> dict[str, Any]:
    return _ref(template, "AWS::SQS::Queue", {"FifoQueue": True, "RedrivePolicy": Match.any_value()})


def _staging_arn(template: Template) -> dict[str, Any]:
    return _ref(
        template, "AWS::SQS::Queue", {"FifoQueue": Match.absent(), "RedrivePolicy": Match.any_value()}
    )


# --- EventBusIngress ---------------------------------------------------------------------------------


def test_the_pipe_reads_group_dedup_id_and_envelope_from_each_staged_event(built: Built) -> None:
    # GIVEN the plain stack's pipe
    pipe = _only(built.plain, "AWS::Pipes::Pipe")["Properties"]
    # THEN it takes the staging queue's records in batches of 10 and sends them to the FIFO job queue
    assert pipe["Source"] == _staging_arn(built.plain)
    assert pipe["SourceParameters"] == {"SqsQueueParameters": {"BatchSize": 10}}
    assert pipe["Target"] == _job_queue_arn(built.plain)
    assert pipe["Name"] == built.plain_events.pipe_name
    # AND the group and the deduplication id are whole paths of the staged event, the envelope a template
    assert pipe["TargetParameters"] == {
        "InputTemplate": '{"jobId": "<$.body.detail.eventId>", "type": "<$.body.detail-type>", '
        '"payload": <$.body.detail>, "seq": <$.body.detail.version>}',
        "SqsQueueParameters": {
            "MessageGroupId": "$.body.detail.accountId",
            "MessageDeduplicationId": "$.body.detail.eventId",
        },
    }


def test_the_rule_delivers_matching_events_to_the_staging_queue_and_failures_to_its_dlq(built: Built) -> None:
    rule = _only(built.plain, "AWS::Events::Rule")["Properties"]
    dlq = _ref(
        built.plain, "AWS::SQS::Queue", {"MessageRetentionPeriod": 1209600, "FifoQueue": Match.absent()}
    )
    assert rule["EventBusName"] == "default"
    assert rule["EventPattern"] == {"source": ["accounts"]}
    assert rule["Targets"] == [
        {"Arn": _staging_arn(built.plain), "DeadLetterConfig": {"Arn": dlq}, "Id": "Target0"}
    ]


def test_the_staging_queues_are_encrypted_like_the_job_queue_with_a_dlq_and_an_alarm(built: Built) -> None:
    # GIVEN the staging queue and its DLQ, without and with the job queue's key
    for template, encryption in (
        (built.plain, {"SqsManagedSseEnabled": True}),
        (built.keyed, {"KmsMasterKeyId": _ref(built.keyed, "AWS::KMS::Key", {})}),
    ):
        staging = template.find_resources(
            "AWS::SQS::Queue", {"Properties": {"FifoQueue": Match.absent(), **encryption}}
        )
        # THEN both are encrypted as the job queue is, the staging queue redriving after 5 receives
        assert len(staging) == 2
        redrives = [q["Properties"].get("RedrivePolicy", {}).get("maxReceiveCount") for q in staging.values()]
        assert sorted(redrives, key=str) == [5, None]
    # AND an alarm fires on the first event in the staging DLQ
    alarm = built.plain.find_resources(
        "AWS::CloudWatch::Alarm",
        {"Properties": {"AlarmDescription": Match.string_like_regexp("^Events of Plain/Events")}},
    )
    (properties,) = (a["Properties"] for a in alarm.values())
    assert (properties["Threshold"], properties["ComparisonOperator"]) == (1, "GreaterThanOrEqualToThreshold")


def _rule_arn(stack_part: str) -> dict[str, Any]:
    return {
        "Fn::Join": [
            "",
            [
                "arn:",
                {"Ref": "AWS::Partition"},
                ":events:",
                {"Ref": "AWS::Region"},
                ":",
                {"Ref": "AWS::AccountId"},
                stack_part,
            ],
        ]
    }


def test_only_this_rule_may_send_to_the_staging_queues_and_use_the_key(built: Built) -> None:
    # GIVEN the keyed stack, whose rule is on a custom bus: its ARN is rule/<bus>/<name>
    rule = _only(built.keyed, "AWS::Events::Rule")["Properties"]
    statements = [
        s
        for policy in built.keyed.find_resources("AWS::SQS::QueuePolicy").values()
        for s in policy["Properties"]["PolicyDocument"]["Statement"]
        if s.get("Principal") == {"Service": "events.amazonaws.com"}
    ]
    # THEN each staging queue lets events.amazonaws.com send for that one rule, named by its fixed name
    assert len(statements) == 2
    for statement in statements:
        assert statement["Action"] == "sqs:SendMessage"
        arn = statement["Condition"]["ArnEquals"]["aws:SourceArn"]
        assert arn["Fn::Join"][1][-1] == f"/{rule['Name']}"
        assert arn["Fn::Join"][1][-3] == ":rule/"
    # AND the key lets the service encrypt for that rule alone
    key_statements = _only(built.keyed, "AWS::KMS::Key")["Properties"]["KeyPolicy"]["Statement"]
    (events_key,) = [s for s in key_statements if s["Principal"] == {"Service": "events.amazonaws.com"}]
    assert events_key["Action"] == ["kms:GenerateDataKey", "kms:Decrypt"]
    assert events_key["Condition"]["ArnEquals"]["aws:SourceArn"]["Fn::Join"][1][-1] == f"/{rule['Name']}"


def test_the_pipe_role_is_this_pipes_alone_and_holds_only_what_it_needs(built: Built) -> None:
    # GIVEN the keyed stack's pipe role
    role = _only(built.keyed, "AWS::IAM::Role", {"Description": Match.string_like_regexp("^The pipe of")})
    (trust,) = role["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    # THEN only pipes.amazonaws.com, for this account and this pipe, may assume it
    assert trust["Principal"] == {"Service": "pipes.amazonaws.com"}
    conditions = trust["Condition"]["StringEquals"]
    assert conditions["aws:SourceAccount"] == {"Ref": "AWS::AccountId"}
    assert conditions["aws:SourceArn"]["Fn::Join"][1][-1] == f":pipe/{built.keyed_events.pipe_name}"
    # AND its policy: read the staging queue, send to the job queue, the key's actions; nothing else
    policy = _only(
        built.keyed, "AWS::IAM::Policy", {"PolicyName": Match.string_like_regexp("^EventsPipeRole")}
    )["Properties"]["PolicyDocument"]["Statement"]
    key_arn = _ref(built.keyed, "AWS::KMS::Key", {})
    assert {(json.dumps(s["Action"]), json.dumps(s["Resource"])) for s in policy} == {
        (
            json.dumps(["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"]),
            json.dumps(_staging_arn(built.keyed)),
        ),
        (json.dumps("sqs:SendMessage"), json.dumps(_job_queue_arn(built.keyed))),
        (json.dumps("kms:Decrypt"), json.dumps(key_arn)),
        (json.dumps(["kms:GenerateDataKey", "kms:Decrypt"]), json.dumps(key_arn)),
    }
    # AND the pipe waits for that policy (Pipes checks the role when it creates the pipe)
    (policy_id,) = built.keyed.find_resources(
        "AWS::IAM::Policy", {"Properties": {"PolicyName": Match.string_like_regexp("^EventsPipeRole")}}
    )
    assert _only(built.keyed, "AWS::Pipes::Pipe")["DependsOn"] == [policy_id]


def test_a_literal_type_without_a_seq_and_the_whole_event_as_payload() -> None:
    stack = Stack(App(), "S")
    EventBusIngress(
        stack,
        "Events",
        queue=_queue(stack, None),
        event_bus=events.EventBus.from_event_bus_name(stack, "Default", "default"),
        event_pattern=PATTERN,
        group_path="$.detail.workspaceId",
        job_type="workspace_event",
        dedup_path="$.detail.eventKey",
        payload_path="$",
        batch_size=1,
    )
    pipe = _only(Template.from_stack(stack), "AWS::Pipes::Pipe")["Properties"]
    assert pipe["TargetParameters"]["InputTemplate"] == (
        '{"jobId": "<$.body.id>", "type": "workspace_event", "payload": <$.body>}'
    )
    assert (
        pipe["TargetParameters"]["SqsQueueParameters"]["MessageDeduplicationId"] == "$.body.detail.eventKey"
    )
    assert pipe["SourceParameters"] == {"SqsQueueParameters": {"BatchSize": 1}}


def test_every_invalid_prop_is_refused_at_once_naming_the_fix() -> None:
    stack = Stack(App(), "S")
    queue = _queue(stack, None)
    # WHEN the helper is given a bad group path, a bad seq path, two job types and a batch too large
    with pytest.raises(InvalidIngressPropsError) as raised:
        EventBusIngress(
            stack,
            "Events",
            queue=queue,
            event_bus=events.EventBus.from_event_bus_name(stack, "Default", "default"),
            event_pattern=PATTERN,
            group_path="detail.accountId",
            seq_path="$.detail.ver sion",
            job_type="usage",
            job_type_path="$.detail-type",
            batch_size=11,
        )
    # THEN one error lists them all, each naming the prop and its fix; it is the queue's error kind
    problems = raised.value.problems
    assert [p.split("=")[0] for p in problems] == [
        "group_path",
        "job_id_path",
        "seq_path",
        "job_type",
        "batch_size",
    ]
    assert all("Fix:" in p for p in problems)
    assert isinstance(raised.value, InvalidPropsError)
    assert str(raised.value).startswith("EventBusIngress: 5 invalid prop(s):")
    assert "job_id_path=None is not allowed with seq_path" in str(raised.value)


# --- the static group ------------------------------------------------------------------------------


def test_a_plain_rule_target_on_the_fifo_queue_is_refused_with_the_helper_as_the_fix() -> None:
    # GIVEN a rule whose SQS target is the job queue with one static group
    app = App()
    stack = Stack(app, "S")
    queue = _queue(stack, None)
    events.Rule(
        stack,
        "Plain",
        event_pattern=PATTERN,
        targets=[events_targets.SqsQueue(queue.queue, message_group_id="all-accounts")],
    )
    # WHEN the app is synthesized THEN the queue refuses it, saying why and what to use
    with pytest.raises(RuntimeError) as raised:
        app.synth()
    message = str(raised.value)
    assert (
        "S/Plain/Resource targets the FIFO queue of S/Jobs with the static MessageGroupId 'all-accounts'"
        in message
    )
    assert "every entity runs in one lane" in message
    assert "Fix: EventBusIngress(" in message


def test_a_rule_on_another_queue_and_the_helpers_own_rule_pass() -> None:
    # GIVEN a rule targeting a standard queue of the stack, and the helper's own rule on the job queue
    app = App()
    stack = Stack(app, "S")
    queue = _queue(stack, None)
    elsewhere = sqs.Queue(stack, "Elsewhere", enforce_ssl=True)
    events.Rule(stack, "ToElsewhere", event_pattern=PATTERN, targets=[events_targets.SqsQueue(elsewhere)])
    EventBusIngress(
        stack,
        "Events",
        queue=queue,
        event_bus=events.EventBus.from_event_bus_name(stack, "Default", "default"),
        event_pattern=PATTERN,
        group_path="$.detail.accountId",
        job_type="usage",
    )
    # WHEN synthesized THEN nothing is refused
    assembly = app.synth()
    assert assembly.get_stack_by_name("S").template["Resources"]


# --- SnsFifoIngress --------------------------------------------------------------------------------


def test_the_topic_subscribes_the_fifo_queue_raw_with_its_filter(built: Built) -> None:
    subscription = _only(built.plain, "AWS::SNS::Subscription")["Properties"]
    undelivered = _arn(built.plain_topic.undelivered_queue)
    assert subscription == {
        "Endpoint": _job_queue_arn(built.plain),
        "FilterPolicy": {"jobType": ["usage"]},
        "Protocol": "sqs",
        "RawMessageDelivery": True,
        "RedrivePolicy": {"deadLetterTargetArn": undelivered},
        "TopicArn": {"Ref": next(iter(built.plain.find_resources("AWS::SNS::Topic")))},
    }


def test_only_the_topic_may_send_to_the_queue_and_use_its_key(built: Built) -> None:
    # GIVEN the keyed stack, whose topic is encrypted with the queue's own key
    (topic,) = built.keyed.find_resources("AWS::SNS::Topic").values()
    topic_name = topic["Properties"]["TopicName"]
    key_statements = _only(built.keyed, "AWS::KMS::Key")["Properties"]["KeyPolicy"]["Statement"]
    (sns_key,) = [s for s in key_statements if s["Principal"] == {"Service": "sns.amazonaws.com"}]
    sns_queue = [
        s
        for policy in built.keyed.find_resources("AWS::SQS::QueuePolicy").values()
        for s in policy["Properties"]["PolicyDocument"]["Statement"]
        if s.get("Principal") == {"Service": "sns.amazonaws.com"}
        and s["Resource"] == _job_queue_arn(built.keyed)
    ]
    # THEN the queue policy and the key policy name the topic by an ARN built from its name (no cycle)
    assert len(sns_queue) == 1
    assert sns_queue[0]["Action"] == "sqs:SendMessage"
    assert sns_queue[0]["Resource"] == _job_queue_arn(built.keyed)
    for statement in (sns_queue[0], sns_key):
        assert statement["Condition"]["ArnEquals"]["aws:SourceArn"]["Fn::Join"][1][-1] == f":{topic_name}"
    assert sns_key["Action"] == ["kms:GenerateDataKey", "kms:Decrypt"]


def test_a_standard_topic_is_refused() -> None:
    stack = Stack(App(), "S")
    with pytest.raises(InvalidIngressPropsError) as raised:
        SnsFifoIngress(stack, "Topic", queue=_queue(stack, None), topic=sns.Topic(stack, "Standard"))
    assert raised.value.problems == [
        "topic='S/Standard' is not allowed: it is a standard topic, which cannot deliver to a FIFO queue "
        "and carries no message group. Fix: an SNS FIFO topic, sns.Topic(..., fifo=True), or an ARN "
        "ending in '.fifo'."
    ]


def test_an_imported_key_gets_a_warning_naming_the_statement_to_add(built: Built) -> None:
    warnings = built.imported.find_warning("*", Match.string_like_regexp(WARNING_INGRESS_KEY_POLICY))
    paths = sorted(w.id for w in warnings)
    assert paths == ["/Imported/Events", "/Imported/Topic"]
    assert "allow the service principal sns.amazonaws.com kms:GenerateDataKey, kms:Decrypt" in str(
        [w.entry.data for w in warnings]
    )


# --- CustomBusIngress ------------------------------------------------------------------------------


def test_the_subscriber_is_fifo_with_jsonata_group_dedup_attributes_and_envelope(built: Built) -> None:
    subscriber = _only(built.plain, "AWS::EventsV2::Subscriber")
    properties = subscriber["Properties"]
    assert properties["Type"] == "FIFO"
    assert properties["EventBusArn"] == {"Fn::GetAtt": ["Bus", "EventBusArn"]}
    assert properties["FilterConfiguration"] == {
        "Filters": [{"Pattern": '{"source": ["accounts"]}', "Scope": "DATA"}]
    }
    event_id = "{% $events.SystemMetadata.`aws:EventId` %}"
    assert properties["InvokeConfiguration"]["TargetArn"] == _job_queue_arn(built.plain)
    assert properties["InvokeConfiguration"]["SqsParameters"] == {
        "MessageGroupId": "{% $events.Data.detail.accountId %}",
        "MessageDeduplicationId": event_id,
        "MessageAttributes": {
            "jobId": {"DataType": "String", "StringValue": event_id},
            "jobType": {"DataType": "String", "StringValue": "account_event"},
            "group": {"DataType": "String", "StringValue": "{% $events.Data.detail.accountId %}"},
        },
    }
    assert properties["Transformer"] == {
        "Type": "JSONATA",
        "JsonataConfiguration": {
            "Expression": '{% {"jobId": $events.SystemMetadata.`aws:EventId`, "type": "account_event", '
            '"payload": $events.Data, "seq": $events.Data.detail.version} %}'
        },
    }
    failure = _arn(built.plain_custom.failure_queue)
    assert properties["OnFailureConfiguration"] == {"Arn": failure}
    (policy_id,) = built.plain.find_resources(
        "AWS::IAM::Policy", {"Properties": {"PolicyName": Match.string_like_regexp("^CustomRole")}}
    )
    assert subscriber["DependsOn"] == [policy_id]


def test_the_subscriber_role_is_the_accounts_event_bridge_sending_to_two_queues(built: Built) -> None:
    role = _only(
        built.plain, "AWS::IAM::Role", {"Description": Match.string_like_regexp("^The subscriber of")}
    )
    (trust,) = role["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Principal"] == {"Service": "events.amazonaws.com"}
    assert trust["Condition"] == {"StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}}
    policy = _only(built.plain, "AWS::IAM::Policy", {"PolicyName": Match.string_like_regexp("^CustomRole")})
    statements = policy["Properties"]["PolicyDocument"]["Statement"]
    assert {s["Action"] for s in statements} == {"sqs:SendMessage"}
    assert len(statements) == 2


def test_an_expression_with_delimiters_is_refused() -> None:
    stack = Stack(App(), "S")
    with pytest.raises(InvalidIngressPropsError) as raised:
        CustomBusIngress(
            stack,
            "Custom",
            queue=_queue(stack, None),
            event_bus="arn:aws:events:eu-west-1:111111111111:event-busv2/accounts/abc",
            group_expression="{% $events.Data.accountId %}",
            job_type_expression="",
        )
    assert [p.split("=")[0] for p in raised.value.problems] == ["group_expression", "job_type_expression"]
