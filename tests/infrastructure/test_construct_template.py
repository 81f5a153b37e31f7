"""Template assertions for every default and every prop of OrderedAgentQueue."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_cdk import App, CfnElement, Stack
from aws_cdk import aws_lambda as lambda_
from aws_cdk.assertions import Match, Template

from constructs_fifo import OrderedAgentQueue, ProvisionedPollers
from constructs_fifo.construct import (
    WARNING_LOG_KEY_POLICY,
    WARNING_RESERVED_CONCURRENCY_ONE,
    WARNING_VISIBILITY_TIMEOUT,
    InvalidPropsError,
)
from constructs_fifo.construct.resources.permissions import (
    LOG_KEY_ACTIONS,
    VPC_ACTIONS,
    VPC_CREATE_ACTIONS,
    VPC_DESCRIBE_ACTIONS,
    VPC_INTERFACE_ACTIONS,
)
from constructs_fifo.demo.sample_app import (
    NOTIFICATION_PACE_BURST,
    NOTIFICATION_PACE_JOBS,
    NOTIFICATION_PACE_KEY,
    NOTIFICATION_PACE_PER_SECONDS,
)
from constructs_fifo.runtime import constants
from constructs_fifo.runtime.settings.spec import SETTINGS

from .stacks import REPO, Synthesized

#: The sample stack's claim-mode queue: every prop but the job code's at the construct's default.
SAMPLE_CLAIM_QUEUE = "AgentJobs/Notifications"


def _resources(template: Template, type_: str) -> dict[str, dict[str, Any]]:
    return {logical_id: dict(resource) for logical_id, resource in template.find_resources(type_).items()}


def _one(template: Template, type_: str, **match: Any) -> tuple[str, dict[str, Any]]:
    found = template.find_resources(type_, {"Properties": Match.object_like(match)} if match else None)
    assert len(found) == 1, f"expected one {type_} matching {match}, found {list(found)}"
    ((logical_id, resource),) = found.items()
    return logical_id, dict(resource)


def _queue(template: Template, dlq: bool) -> tuple[str, dict[str, Any]]:
    queues = _resources(template, "AWS::SQS::Queue")
    for logical_id, resource in queues.items():
        if ("RedrivePolicy" in resource["Properties"]) != dlq:
            return logical_id, resource
    raise AssertionError("queue not found")


def _tables(template: Template) -> dict[str, str]:
    """Logical ids of the construct's tables by role: ``claim`` (TTL), ``group`` (sort key ``sk``)."""
    roles: dict[str, str] = {}
    for logical_id, table in _resources(template, "AWS::DynamoDB::Table").items():
        properties = table["Properties"]
        if "TimeToLiveSpecification" in properties:
            roles["claim"] = logical_id
        elif [k["AttributeName"] for k in properties["KeySchema"]] == ["group", "sk"]:
            roles["group"] = logical_id
    return roles


def _function(template: Template) -> dict[str, Any]:
    properties: dict[str, Any] = _one(template, "AWS::Lambda::Function")[1]["Properties"]
    return properties


def _policy_statements(template: Template, role_prefix: str) -> list[dict[str, Any]]:
    statements: list[dict[str, Any]] = []
    for resource in _resources(template, "AWS::IAM::Policy").values():
        roles = json.dumps(resource["Properties"]["Roles"])
        if role_prefix in roles:
            statements += resource["Properties"]["PolicyDocument"]["Statement"]
    return statements


def _actions(statement: dict[str, Any]) -> list[str]:
    actions = statement["Action"]
    return [actions] if isinstance(actions, str) else list(actions)


# --- queues ------------------------------------------------------------------------------------------


def test_queue_defaults_are_fifo_high_throughput_encrypted_with_redrive(synthesized: Synthesized) -> None:
    # GIVEN the sample stack's claim-mode queue (construct defaults)
    template = synthesized.templates[SAMPLE_CLAIM_QUEUE]
    # WHEN reading the source queue
    _, queue = _queue(template, dlq=False)
    dlq_id, _ = _queue(template, dlq=True)
    # THEN it is a FIFO queue in high-throughput mode with explicit dedup ids, SSE, and SQS's redrive
    # only as the safety net: the sample paces this queue (``pace``), so SQS's most, 1000, where an
    # unpaced queue takes twice the least value (docs/architecture.md, rule 9; 268 below)
    assert queue["Properties"] == {
        "QueueName": synthesized.sample_jobs.queue_name,
        "FifoQueue": True,
        "DeduplicationScope": "messageGroup",
        "FifoThroughputLimit": "perMessageGroupId",
        "ContentBasedDeduplication": False,
        "SqsManagedSseEnabled": True,
        "VisibilityTimeout": 720,
        "RedrivePolicy": {"deadLetterTargetArn": {"Fn::GetAtt": [dlq_id, "Arn"]}, "maxReceiveCount": 1000},
    }


def test_queue_names_are_fifo_and_within_80_characters(synthesized: Synthesized) -> None:
    # GIVEN both stacks' constructs
    for jobs in (synthesized.sample_jobs, synthesized.variant_jobs):
        # THEN both names end in .fifo, fit SQS's limit and differ
        assert jobs.queue_name.endswith(".fifo")
        assert jobs.dead_letter_queue_name.endswith("-dlq.fifo")
        assert len(jobs.dead_letter_queue_name) <= 80
    assert synthesized.sample_jobs.queue_name != synthesized.variant_jobs.queue_name


def test_long_construct_paths_are_truncated_to_distinct_names_within_80_characters() -> None:
    # GIVEN two constructs whose paths are far longer than 80 characters and differ only at the end
    stack = Stack(App(), "S" * 100)
    code = lambda_.Code.from_asset(str(REPO / "lambda"))
    built = [
        OrderedAgentQueue(stack, f"Jobs{'x' * 120}{suffix}", code=code, handler="notifier.handle")
        for suffix in "AB"
    ]
    # THEN every name was shortened to fit SQS's 80 characters, .fifo included, and stays unique
    names = [name for jobs in built for name in (jobs.queue_name, jobs.dead_letter_queue_name)]
    assert all(70 < len(name) <= 80 for name in names), names
    assert all(name.endswith(".fifo") for name in names)
    assert len(set(names)) == 4


def test_dead_letter_queue_keeps_14_days_and_allows_only_the_source_queue(synthesized: Synthesized) -> None:
    # GIVEN the sample stack's claim-mode queue
    template = synthesized.templates[SAMPLE_CLAIM_QUEUE]
    # WHEN reading the dead-letter queue
    _, dlq = _queue(template, dlq=True)
    # THEN it is FIFO, 14 days, SSE, and its redrive allow policy names the source queue by name
    assert dlq["Properties"] == {
        "QueueName": synthesized.sample_jobs.dead_letter_queue_name,
        "FifoQueue": True,
        "MessageRetentionPeriod": 14 * 24 * 3600,
        "SqsManagedSseEnabled": True,
        "RedriveAllowPolicy": {
            "redrivePermission": "byQueue",
            "sourceQueueArns": [
                {
                    "Fn::Join": [
                        "",
                        [
                            "arn:",
                            {"Ref": "AWS::Partition"},
                            ":sqs:",
                            {"Ref": "AWS::Region"},
                            ":",
                            {"Ref": "AWS::AccountId"},
                            f":{synthesized.sample_jobs.queue_name}",
                        ],
                    ]
                }
            ],
        },
    }


@pytest.mark.parametrize("stack", ["AgentJobs", "Variant"])
def test_both_queues_deny_non_tls_access(synthesized: Synthesized, stack: str) -> None:
    # GIVEN a stack
    template = synthesized.templates[stack]
    queue_ids = set(_resources(template, "AWS::SQS::Queue"))
    # WHEN reading the queue policies
    policies = _resources(template, "AWS::SQS::QueuePolicy").values()
    # THEN each queue has a policy denying every action without TLS
    covered = set()
    for policy in policies:
        statement = policy["Properties"]["PolicyDocument"]["Statement"][0]
        assert statement["Effect"] == "Deny"
        assert statement["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
        covered.add(policy["Properties"]["Queues"][0]["Ref"])
    assert covered == queue_ids


def test_variant_queues_use_the_kms_key_and_content_based_deduplication(synthesized: Synthesized) -> None:
    # GIVEN the variant stack (encryption_key, content_based_deduplication, visibility, receive count)
    template = synthesized.templates["Variant"]
    key_id, _ = _one(template, "AWS::KMS::Key")
    # WHEN reading both queues
    _, queue = _queue(template, dlq=False)
    _, dlq = _queue(template, dlq=True)
    # THEN both use the key, and the props show up
    key_arn = {"Fn::GetAtt": [key_id, "Arn"]}
    assert queue["Properties"]["KmsMasterKeyId"] == key_arn
    assert dlq["Properties"]["KmsMasterKeyId"] == key_arn
    assert "SqsManagedSseEnabled" not in queue["Properties"]
    assert queue["Properties"]["ContentBasedDeduplication"] is True
    assert queue["Properties"]["VisibilityTimeout"] == 300
    assert queue["Properties"]["RedrivePolicy"]["maxReceiveCount"] == 40


# --- claim table ------------------------------------------------------------------------------------


def test_claim_table_defaults(synthesized: Synthesized) -> None:
    # GIVEN the sample stack's claim-mode queue
    template = synthesized.templates[SAMPLE_CLAIM_QUEUE]
    # WHEN reading the claim table (the one with TTL)
    found = template.find_resources(
        "AWS::DynamoDB::Table", {"Properties": {"TimeToLiveSpecification": Match.any_value()}}
    )
    ((_, table),) = found.items()
    # THEN pk id (S), TTL expiration, on demand, PITR, AWS managed encryption
    assert table["Properties"] == {
        "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
        "BillingMode": "PAY_PER_REQUEST",
        "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
        "SSESpecification": {"SSEEnabled": True},
        "TimeToLiveSpecification": {"AttributeName": "expiration", "Enabled": True},
    }


def test_claim_and_group_tables_are_retained_by_default(synthesized: Synthesized) -> None:
    # GIVEN the risky stack, which keeps the default table_removal_policy (and the PARK policy)
    template = synthesized.templates["Risky"]
    tables = _resources(template, "AWS::DynamoDB::Table")
    # WHEN reading both tables
    assert sorted(_tables(template)) == ["claim", "group"]
    # THEN both are retained on delete and replace (kept jobs are data)
    for table in tables.values():
        assert table["DeletionPolicy"] == "Retain"
        assert table["UpdateReplacePolicy"] == "Retain"


def test_group_table_holds_parked_groups_in_order_and_never_expires(synthesized: Synthesized) -> None:
    # GIVEN the sample stack's claim-mode queue (default policy: PARK)
    template = synthesized.templates[SAMPLE_CLAIM_QUEUE]
    table = _resources(template, "AWS::DynamoDB::Table")[_tables(template)["group"]]["Properties"]
    # THEN it is keyed by group and sort key, on demand, with PITR, and without TTL
    assert table["KeySchema"] == [
        {"AttributeName": "group", "KeyType": "HASH"},
        {"AttributeName": "sk", "KeyType": "RANGE"},
    ]
    assert table["BillingMode"] == "PAY_PER_REQUEST"
    assert table["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    assert "TimeToLiveSpecification" not in table
    assert synthesized.sample_jobs.group_table is not None


def test_the_continue_policy_builds_no_group_table_and_no_parked_alarm(synthesized: Synthesized) -> None:
    # GIVEN the variant stack (on_dead_job=CONTINUE)
    template = synthesized.templates["Variant"]
    # THEN only the claim table exists, the function is not told of a group table, four alarms
    assert sorted(_tables(template)) == ["claim"]
    assert synthesized.variant_jobs.group_table is None
    variables = _function(template)["Environment"]["Variables"]
    assert variables[constants.ENV_ON_DEAD_JOB] == "CONTINUE"
    assert variables[constants.ENV_MAX_ATTEMPTS] == "4"
    assert constants.ENV_GROUP_TABLE not in variables
    assert "GroupsParked" not in _alarms_by_metric(template)


def test_claim_table_variant_uses_the_key_and_removal_policy(synthesized: Synthesized) -> None:
    # GIVEN the variant stack
    template = synthesized.templates["Variant"]
    key_id, _ = _one(template, "AWS::KMS::Key")
    # WHEN reading the table
    _, table = _one(template, "AWS::DynamoDB::Table")
    # THEN the customer managed key encrypts it and it is deleted with the stack
    assert table["Properties"]["SSESpecification"] == {
        "KMSMasterKeyId": {"Fn::GetAtt": [key_id, "Arn"]},
        "SSEEnabled": True,
        "SSEType": "KMS",
    }
    assert table["DeletionPolicy"] == "Delete"


# --- function -------------------------------------------------------------------------------------


def test_function_defaults(synthesized: Synthesized) -> None:
    # GIVEN the sample stack's claim-mode queue
    function = _function(synthesized.templates[SAMPLE_CLAIM_QUEUE])
    # THEN the runtime entry point, latest Python, 2 minutes, 256 MB, reserved concurrency 10
    assert function["Handler"] == constants.ENTRYPOINT == "constructs_fifo.runtime.entrypoint.handler"
    assert function["Runtime"] == "python3.14"
    assert function["Timeout"] == 120
    assert function["MemorySize"] == 256
    assert function["ReservedConcurrentExecutions"] == 10
    assert "TracingConfig" not in function
    # AND x86_64 (CloudFormation's default: no Architectures), no VPC, no layers, no environment key
    assert function.get("Architectures", ["x86_64"]) == ["x86_64"]
    for absent in ("VpcConfig", "Layers", "KmsKeyArn"):
        assert absent not in function


def test_function_environment_carries_the_runtime_settings(synthesized: Synthesized) -> None:
    # GIVEN the sample stack's claim-mode queue
    template = synthesized.templates[SAMPLE_CLAIM_QUEUE]
    function = _function(template)
    queue_id, _ = _queue(template, dlq=False)
    dlq_id, _ = _queue(template, dlq=True)
    tables = _tables(template)
    sample = synthesized.sample
    notification_table = synthesized.sample_notification_table.node.default_child
    assert isinstance(notification_table, CfnElement)
    notification_table_id = sample.resolve(sample.get_logical_id(notification_table))
    # THEN the env names the user handler, tables, queues, policy and numbers, plus the app's own variable
    assert function["Environment"]["Variables"] == {
        constants.ENV_USER_HANDLER: "notifier.handle",
        constants.ENV_CLAIM_TABLE: {"Ref": tables["claim"]},
        constants.ENV_GROUP_TABLE: {"Ref": tables["group"]},
        constants.ENV_QUEUE_URL: {"Ref": queue_id},
        constants.ENV_DEAD_LETTER_QUEUE_URL: {"Ref": dlq_id},
        constants.ENV_MAX_ATTEMPTS: "5",
        constants.ENV_ON_DEAD_JOB: "PARK",
        constants.ENV_MODE: "CLAIM",
        constants.ENV_VISIBILITY_TIMEOUT_SECONDS: "720",
        constants.ENV_BACKOFF_BASE_SECONDS: "2",
        constants.ENV_CLAIM_TTL_SECONDS: str(7 * 24 * 3600),
        constants.ENV_METRICS_NAMESPACE: "ConstructsFifo",
        constants.ENV_OUTCOME_LINES: "JOB",
        SETTINGS["pace"].env: json.dumps(
            {
                "jobs": NOTIFICATION_PACE_JOBS,
                "periodSeconds": NOTIFICATION_PACE_PER_SECONDS,
                "burst": NOTIFICATION_PACE_BURST,
                "key": NOTIFICATION_PACE_KEY,
            },
            separators=(",", ":"),
        ),
        "NOTIFICATION_TABLE_NAME": {"Ref": notification_table_id},
    }


def test_the_function_environment_is_the_settings_specs_variables(synthesized: Synthesized) -> None:
    # GIVEN a claim-mode queue under PARK and a state-mode queue
    written = set()
    for name in (SAMPLE_CLAIM_QUEUE, "State"):
        written |= set(_function(synthesized.templates[name])["Environment"]["Variables"])
    # THEN between them they write every variable of the spec's rows, and nothing else of their own,
    # but an optional setting's with no default (written only when given: ``max_job_duration``) and
    # the container workers' own (written for the container consumer only)
    unset = {row.env for row in SETTINGS.values() if row.prop and row.default is None and "None" in row.type}
    unset |= {row.env for row in SETTINGS.values() if row.container_only}
    unset -= {SETTINGS["pace"].env}  # the sample paces its claim-mode queue
    function_rows = {row.env for row in SETTINGS.values() if row.env and not row.container_env}
    assert written - {"NOTIFICATION_TABLE_NAME"} == function_rows - unset


def test_function_variant_props(synthesized: Synthesized) -> None:
    # GIVEN the variant stack
    function = _function(synthesized.templates["Variant"])
    variables = function["Environment"]["Variables"]
    # THEN every function prop shows up
    assert function["Timeout"] == 30
    assert function["MemorySize"] == 512
    assert function["ReservedConcurrentExecutions"] == 20
    assert variables[constants.ENV_USER_HANDLER] == "notifier.handle"
    assert variables[constants.ENV_VISIBILITY_TIMEOUT_SECONDS] == "300"
    assert variables[constants.ENV_BACKOFF_BASE_SECONDS] == "5"
    assert variables[constants.ENV_CLAIM_TTL_SECONDS] == "86400"
    assert variables[constants.ENV_METRICS_NAMESPACE] == "Agents"
    assert variables[constants.ENV_OUTCOME_LINES] == "BATCH"
    assert variables["EXTRA"] == "1"


def test_function_logs_to_its_own_log_group_with_retention(synthesized: Synthesized) -> None:
    # GIVEN the sample stack's claim-mode queue
    template = synthesized.templates[SAMPLE_CLAIM_QUEUE]
    log_group_id, log_group = _one(template, "AWS::Logs::LogGroup")
    # THEN the function logs there and the group keeps one month
    assert _function(template)["LoggingConfig"] == {"LogGroup": {"Ref": log_group_id}}
    assert log_group["Properties"]["RetentionInDays"] == 30


def test_function_role_has_no_managed_policy(synthesized: Synthesized) -> None:
    # GIVEN every stack
    for template in synthesized.templates.values():
        roles = _resources(template, "AWS::IAM::Role")
        # THEN no role carries a managed policy (AWSLambdaBasicExecutionRole has a broad logs scope)
        for role in roles.values():
            assert "ManagedPolicyArns" not in role["Properties"]


def test_function_role_is_least_privilege(synthesized: Synthesized) -> None:
    # GIVEN the risky stack (only the construct: no app grants)
    template = synthesized.templates["Risky"]
    queue_id, _ = _queue(template, dlq=False)
    dlq_id, _ = _queue(template, dlq=True)
    tables = _tables(template)
    log_group_id, _ = _one(template, "AWS::Logs::LogGroup")
    # WHEN reading the function role's statements
    statements = _policy_statements(template, "FunctionRole")
    # THEN logs on its group, item operations on its tables, consume on its queue, send to its DLQ (dead
    # jobs) and to its queue (a resumed group's wake-up message); nothing else
    by_resource = {json.dumps(s["Resource"], sort_keys=True): sorted(_actions(s)) for s in statements}
    assert by_resource == {
        json.dumps({"Fn::GetAtt": [log_group_id, "Arn"]}): ["logs:CreateLogStream", "logs:PutLogEvents"],
        json.dumps({"Fn::GetAtt": [tables["claim"], "Arn"]}): [
            "dynamodb:ConditionCheckItem",
            "dynamodb:DeleteItem",
            "dynamodb:GetItem",
            "dynamodb:PutItem",
            "dynamodb:UpdateItem",
        ],
        json.dumps({"Fn::GetAtt": [tables["group"], "Arn"]}): [
            "dynamodb:BatchGetItem",
            "dynamodb:ConditionCheckItem",
            "dynamodb:DeleteItem",
            "dynamodb:GetItem",
            "dynamodb:PutItem",
            "dynamodb:Query",
            "dynamodb:UpdateItem",
        ],
        json.dumps([{"Fn::GetAtt": [dlq_id, "Arn"]}, {"Fn::GetAtt": [queue_id, "Arn"]}], sort_keys=True): [
            "sqs:SendMessage"
        ],
        json.dumps({"Fn::GetAtt": [queue_id, "Arn"]}): [
            "sqs:ChangeMessageVisibility",
            "sqs:DeleteMessage",
            "sqs:GetQueueAttributes",
            "sqs:GetQueueUrl",
            "sqs:ReceiveMessage",
        ],
    }


def test_function_role_may_use_the_key_when_there_is_one(synthesized: Synthesized) -> None:
    # GIVEN the variant stack
    template = synthesized.templates["Variant"]
    key_id, _ = _one(template, "AWS::KMS::Key")
    # WHEN collecting the function role's actions on the key
    key_actions = {
        action
        for s in _policy_statements(template, "FunctionRole")
        if s["Resource"] == {"Fn::GetAtt": [key_id, "Arn"]}
        for action in _actions(s)
    }
    # THEN it can read and write the encrypted table and decrypt the queue's messages
    assert key_actions == {"kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey", "kms:DescribeKey"}


@pytest.mark.parametrize("stack", ["AgentJobs", "Variant", "Risky"])
def test_no_iam_statement_allows_a_wildcard_resource(synthesized: Synthesized, stack: str) -> None:
    # GIVEN a stack
    template = synthesized.templates[stack]
    # WHEN collecting the Allow statements of every identity policy
    statements = [
        s
        for p in _resources(template, "AWS::IAM::Policy").values()
        for s in p["Properties"]["PolicyDocument"]["Statement"]
        if s["Effect"] == "Allow"
    ]
    # THEN none names the resource "*" and none uses a wildcard action
    assert statements
    for statement in statements:
        resources = (
            statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
        )
        assert "*" not in resources, statement
        assert all("*" not in action for action in _actions(statement)), statement


# --- event source mapping ---------------------------------------------------------------------------


def test_event_source_defaults(synthesized: Synthesized) -> None:
    # GIVEN the sample stack's claim-mode queue
    template = synthesized.templates[SAMPLE_CLAIM_QUEUE]
    queue_id, _ = _queue(template, dlq=False)
    # WHEN reading the mapping
    _, mapping = _one(template, "AWS::Lambda::EventSourceMapping")
    # THEN batch 10, ReportBatchItemFailures, no batching window, and MaximumConcurrency capped at the
    # reserved concurrency (10) so the mapping never invokes more functions than may run
    properties = mapping["Properties"]
    assert properties["BatchSize"] == 10
    assert properties["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert properties["EventSourceArn"] == {"Fn::GetAtt": [queue_id, "Arn"]}
    assert "MaximumBatchingWindowInSeconds" not in properties
    assert properties["ScalingConfig"] == {"MaximumConcurrency": 10}


def test_without_reservation_the_mapping_is_the_only_limit() -> None:
    # GIVEN one queue with reserved_concurrency=None and the default max_concurrency, and one with
    # reserved_concurrency=None and max_concurrency=50 (more than any reservation default)
    stack = Stack(App(), "Unreserved")
    code = lambda_.Code.from_asset(str(REPO / "lambda"))
    OrderedAgentQueue(stack, "Default", code=code, handler="notifier.handle", reserved_concurrency=None)
    OrderedAgentQueue(
        stack, "Fifty", code=code, handler="notifier.handle", reserved_concurrency=None, max_concurrency=50
    )
    # WHEN synthesized
    template = Template.from_stack(stack)
    # THEN no function reserves concurrency, and each mapping is capped: 10 by default (the same ceiling
    # as the default reservation), else the given max_concurrency, which no reservation bounds now
    functions = _resources(template, "AWS::Lambda::Function")
    job_functions = [f for f in functions.values() if f["Properties"].get("Handler") == constants.ENTRYPOINT]
    assert len(job_functions) == 2
    assert all("ReservedConcurrentExecutions" not in f["Properties"] for f in job_functions)
    caps = sorted(
        m["Properties"]["ScalingConfig"]["MaximumConcurrency"]
        for m in _resources(template, "AWS::Lambda::EventSourceMapping").values()
    )
    assert caps == [10, 50]


def test_without_reservation_max_concurrency_keeps_its_range() -> None:
    # GIVEN reserved_concurrency=None and max_concurrency outside 2..1000
    stack = Stack(App(), "UnreservedOutOfRange")
    code = lambda_.Code.from_asset(str(REPO / "lambda"))
    # WHEN the construct is built THEN the mapping's range is still enforced (it is the only limit)
    with pytest.raises(InvalidPropsError, match=r"max_concurrency=1 is out of range"):
        OrderedAgentQueue(
            stack, "Jobs", code=code, handler="notifier.handle", reserved_concurrency=None, max_concurrency=1
        )


def test_event_source_variant(synthesized: Synthesized) -> None:
    # GIVEN the variant stack (batch_size=3, max_concurrency=5)
    _, mapping = _one(synthesized.templates["Variant"], "AWS::Lambda::EventSourceMapping")
    # THEN both show up, failures still reported
    assert mapping["Properties"]["BatchSize"] == 3
    assert mapping["Properties"]["ScalingConfig"] == {"MaximumConcurrency": 5}
    assert mapping["Properties"]["FunctionResponseTypes"] == ["ReportBatchItemFailures"]


# --- alarms ---------------------------------------------------------------------------------------------


def _alarms_by_metric(template: Template) -> dict[str, dict[str, Any]]:
    return {
        a["Properties"]["MetricName"]: a["Properties"]
        for a in _resources(template, "AWS::CloudWatch::Alarm").values()
    }


def test_alarms_defaults(synthesized: Synthesized) -> None:
    # GIVEN the sample stack's claim-mode queue
    alarms = _alarms_by_metric(synthesized.templates[SAMPLE_CLAIM_QUEUE])
    # THEN five alarms (parked groups under the default PARK policy) with their thresholds, missing
    # data not breaching, no actions
    assert sorted(alarms) == [
        "ApproximateAgeOfOldestMessage",
        "ApproximateNumberOfMessagesVisible",
        "Errors",
        "GroupsParked",
        "Throttles",
    ]
    expected = {
        "ApproximateAgeOfOldestMessage": ("GreaterThanThreshold", 300),
        "ApproximateNumberOfMessagesVisible": ("GreaterThanOrEqualToThreshold", 1),
        "Errors": ("GreaterThanThreshold", 0),
        "GroupsParked": ("GreaterThanOrEqualToThreshold", 1),
        "Throttles": ("GreaterThanThreshold", 0),
    }
    for name, (operator, threshold) in expected.items():
        assert (alarms[name]["ComparisonOperator"], alarms[name]["Threshold"]) == (operator, threshold)
        assert alarms[name]["TreatMissingData"] == "notBreaching"
        assert "AlarmActions" not in alarms[name]


def test_alarms_watch_the_right_resources(synthesized: Synthesized) -> None:
    # GIVEN the sample stack's claim-mode queue
    template = synthesized.templates[SAMPLE_CLAIM_QUEUE]
    alarms = _alarms_by_metric(template)
    queue_id, _ = _queue(template, dlq=False)
    dlq_id, _ = _queue(template, dlq=True)
    function_id, _ = _one(template, "AWS::Lambda::Function")
    # THEN the age alarm watches the queue, the depth alarm the DLQ, the others the function
    assert alarms["ApproximateAgeOfOldestMessage"]["Dimensions"][0]["Value"] == {
        "Fn::GetAtt": [queue_id, "QueueName"]
    }
    assert alarms["ApproximateNumberOfMessagesVisible"]["Dimensions"][0]["Value"] == {
        "Fn::GetAtt": [dlq_id, "QueueName"]
    }
    assert alarms["Errors"]["Dimensions"][0]["Value"] == {"Ref": function_id}
    assert alarms["Throttles"]["Dimensions"][0]["Value"] == {"Ref": function_id}
    # AND the parked-groups alarm sums the runtime's metric for this queue, per minute
    parked = alarms["GroupsParked"]
    assert (parked["Namespace"], parked["Statistic"], parked["Period"]) == ("ConstructsFifo", "Sum", 60)
    assert parked["Dimensions"] == [{"Name": "QueueName", "Value": synthesized.sample_jobs.queue_name}]


def test_alarms_variant_threshold_and_topic_actions(synthesized: Synthesized) -> None:
    # GIVEN the variant stack (age_alarm_threshold 10 minutes, alarm_topic)
    template = synthesized.templates["Variant"]
    topic_id, _ = _one(template, "AWS::SNS::Topic")
    alarms = _alarms_by_metric(template)
    # THEN the threshold follows the prop and every alarm notifies the topic on ALARM and OK
    assert alarms["ApproximateAgeOfOldestMessage"]["Threshold"] == 600
    for alarm in alarms.values():
        assert alarm["AlarmActions"] == [{"Ref": topic_id}]
        assert alarm["OKActions"] == [{"Ref": topic_id}]


def test_alarms_attribute_lists_them_with_stable_ids(synthesized: Synthesized) -> None:
    # GIVEN the construct
    jobs = synthesized.sample_jobs
    # THEN alarms holds the five in order, under stable construct ids
    assert [a.node.id for a in jobs.alarms] == [
        "QueueAgeAlarm",
        "DeadLetterQueueAlarm",
        "FunctionErrorsAlarm",
        "FunctionThrottlesAlarm",
        "ParkedGroupsAlarm",
    ]


# --- grant_enqueue --------------------------------------------------------------------------------


def test_grant_enqueue_gives_send_message_only(synthesized: Synthesized) -> None:
    # GIVEN the sample stack, where a Producer role got grant_enqueue on the claim-mode queue
    template = synthesized.templates["AgentJobs"]
    queue_id, _ = _queue(synthesized.templates[SAMPLE_CLAIM_QUEUE], dlq=False)
    # WHEN reading the producer's statements
    statements = _policy_statements(template, "Producer")
    # THEN exactly one: sqs:SendMessage on the queue
    assert statements == [
        {"Action": "sqs:SendMessage", "Effect": "Allow", "Resource": {"Fn::GetAtt": [queue_id, "Arn"]}}
    ]


def test_grant_enqueue_with_key_adds_only_the_key_actions(synthesized: Synthesized) -> None:
    # GIVEN the variant stack (with a KMS key)
    template = synthesized.templates["Variant"]
    queue_id, _ = _queue(template, dlq=False)
    key_id, _ = _one(template, "AWS::KMS::Key")
    # WHEN reading the producer's statements
    statements = _policy_statements(template, "Producer")
    # THEN SendMessage on the queue and GenerateDataKey + Decrypt on the key
    by_resource = {json.dumps(s["Resource"]): sorted(_actions(s)) for s in statements}
    assert by_resource == {
        json.dumps({"Fn::GetAtt": [queue_id, "Arn"]}): ["sqs:SendMessage"],
        json.dumps({"Fn::GetAtt": [key_id, "Arn"]}): ["kms:Decrypt", "kms:GenerateDataKey"],
    }


# --- metrics -------------------------------------------------------------------------------------------


def test_metric_methods_use_the_runtime_namespace_and_queue_dimension(synthesized: Synthesized) -> None:
    # GIVEN the variant construct (metrics_namespace "Agents")
    jobs = synthesized.variant_jobs
    # WHEN asking for the runtime's metrics
    metrics = {
        jobs.metric_jobs_succeeded(): constants.METRIC_JOBS_SUCCEEDED,
        jobs.metric_jobs_failed(): constants.METRIC_JOBS_FAILED,
        jobs.metric_duplicates_skipped(): constants.METRIC_DUPLICATES_SKIPPED,
        jobs.metric_claim_conflicts(): constants.METRIC_CLAIM_CONFLICTS,
        jobs.metric_job_duration(): constants.METRIC_JOB_DURATION,
        jobs.metric_jobs_dead_lettered(): constants.METRIC_JOBS_DEAD_LETTERED,
        jobs.metric_groups_parked(): constants.METRIC_GROUPS_PARKED,
        jobs.metric_jobs_kept(): constants.METRIC_JOBS_KEPT,
        jobs.metric_capacity_units_consumed(): constants.METRIC_CAPACITY_UNITS_CONSUMED,
    }
    # THEN each is in the namespace, dimensioned by the queue's literal name
    for metric, name in metrics.items():
        assert metric.metric_name == name
        assert metric.namespace == "Agents"
        assert metric.dimensions == {constants.METRIC_DIMENSION_QUEUE: jobs.queue_name}
    assert jobs.metric_job_duration().statistic == "Average"
    assert jobs.metric_jobs_failed().statistic == "Sum"


# --- warnings -------------------------------------------------------------------------------------------


def test_risky_props_add_warnings(synthesized: Synthesized) -> None:
    # GIVEN the risky stack (visibility 2 min for a 1 min timeout, reserved 1)
    annotations = synthesized.annotations["Risky"]
    # WHEN reading its warnings
    warnings = [w.entry.data for w in annotations.find_warning("*", Match.any_value())]
    text = "\n".join(str(w) for w in warnings)
    # THEN each warning is there, with its id
    assert f"[ack: {WARNING_VISIBILITY_TIMEOUT}]" in text
    assert "visibility_timeout=120s is less than 6 x timeout (6 x 60s = 360s)" in text
    assert f"[ack: {WARNING_RESERVED_CONCURRENCY_ONE}]" in text
    assert "reserved_concurrency=1: the event source mapping cannot be capped below" in text


def test_reserved_concurrency_one_leaves_the_mapping_uncapped(synthesized: Synthesized) -> None:
    # GIVEN the risky stack (reserved_concurrency=1, below MaximumConcurrency's minimum of 2)
    _, mapping = _one(synthesized.templates["Risky"], "AWS::Lambda::EventSourceMapping")
    # THEN no ScalingConfig is written (the API would reject 1)
    assert "ScalingConfig" not in mapping["Properties"]


def test_defaults_add_no_warnings(synthesized: Synthesized) -> None:
    # GIVEN the sample stack
    annotations = synthesized.annotations["AgentJobs"]
    # THEN no construct-fifo warning is raised
    text = "\n".join(str(w.entry.data) for w in annotations.find_warning("*", Match.any_value()))
    assert "constructs-fifo:" not in text


# --- state mode ---------------------------------------------------------------------------------------


def test_state_mode_keeps_states_in_the_group_table_and_builds_no_claim_table(
    synthesized: Synthesized,
) -> None:
    # GIVEN the state stack (mode STATE, CONTINUE, reorder_limit 50, gap 10 minutes, SKIP_GAP)
    template = synthesized.templates["State"]
    jobs = synthesized.state_jobs
    # THEN only the group table exists; it is the state table; no claim table
    assert sorted(_tables(template)) == ["group"]
    assert jobs.claim_table is None
    assert jobs.state_table is jobs.group_table is not None
    # AND the function is told the mode and the state settings, and nothing of a claim table
    variables = _function(template)["Environment"]["Variables"]
    assert variables[constants.ENV_MODE] == "STATE"
    assert variables[constants.ENV_GROUP_TABLE] == {"Ref": _tables(template)["group"]}
    assert (
        variables[constants.ENV_REORDER_LIMIT],
        variables[constants.ENV_GAP_TIMEOUT_SECONDS],
        variables[constants.ENV_GAP_POLICY],
    ) == ("50", "600", "SKIP_GAP")
    assert constants.ENV_CLAIM_TABLE not in variables


def test_state_mode_redrives_after_twice_its_own_least_receive_count(synthesized: Synthesized) -> None:
    # GIVEN the state stack (batch 10, 5 attempts: the defaults)
    _, queue = _queue(synthesized.templates["State"], dlq=False)
    # THEN SQS's rule is twice state mode's least value, (2 x 10 - 1) x (5 + 2) + 1 = 134 (claim mode's
    # is 96): a crash is counted only from its third run (runtime/state/crash_watch.py)
    assert queue["Properties"]["RedrivePolicy"]["maxReceiveCount"] == 268


def test_state_mode_alarms_on_a_sequence_gap_open_past_its_timeout(synthesized: Synthesized) -> None:
    # GIVEN the state stack (gap_timeout 10 minutes)
    alarms = _alarms_by_metric(synthesized.templates["State"])
    # THEN the gap alarm watches the runtime's gap metric at the timeout
    gap = alarms["SequenceGapOpenSeconds"]
    assert (gap["Statistic"], gap["Threshold"], gap["ComparisonOperator"]) == (
        "Maximum",
        600,
        "GreaterThanOrEqualToThreshold",
    )
    assert [a.node.id for a in synthesized.state_jobs.alarms][-1] == "SequenceGapAlarm"


def test_grant_read_state_gives_get_item_on_the_state_table_only(synthesized: Synthesized) -> None:
    # GIVEN the state stack, where a Reader role got grant_read_state
    template = synthesized.templates["State"]
    statements = _policy_statements(template, "Reader")
    # THEN one statement: GetItem on the group table
    assert [(_actions(s), s["Resource"]) for s in statements] == [
        (["dynamodb:GetItem"], {"Fn::GetAtt": [_tables(template)["group"], "Arn"]})
    ]


def test_grant_read_state_in_claim_mode_is_an_error_naming_the_fix(synthesized: Synthesized) -> None:
    # GIVEN a claim-mode queue / WHEN asked to grant reading states / THEN the error says why and what to do
    with pytest.raises(InvalidPropsError, match=r"grant_read_state\(\) needs mode=JobMode.STATE"):
        synthesized.sample_jobs.grant_read_state(synthesized.sample.node.find_child("Producer"))  # type: ignore[arg-type]


# --- encryption of logs and environment ---------------------------------------------------------------


def test_the_key_encrypts_the_log_group_and_the_environment(synthesized: Synthesized) -> None:
    # GIVEN the variant stack (its own KMS key)
    template = synthesized.templates["Variant"]
    key_id, key = _one(template, "AWS::KMS::Key")
    _, log_group = _one(template, "AWS::Logs::LogGroup")
    # THEN the log group and the function's environment use the key
    assert log_group["Properties"]["KmsKeyId"] == {"Fn::GetAtt": [key_id, "Arn"]}
    assert _function(template)["KmsKeyArn"] == {"Fn::GetAtt": [key_id, "Arn"]}
    # AND the key policy lets CloudWatch Logs of the region use it for this account's log groups only
    [logs_statement] = [
        s
        for s in key["Properties"]["KeyPolicy"]["Statement"]
        if "Service" in s.get("Principal", {}) and "logs." in json.dumps(s["Principal"]["Service"])
    ]
    assert sorted(_actions(logs_statement)) == sorted(LOG_KEY_ACTIONS)
    condition = json.dumps(logs_statement["Condition"]["ArnLike"]["kms:EncryptionContext:aws:logs:arn"])
    assert '":logs:"' in condition and '{"Ref": "AWS::AccountId"}' in condition
    assert condition.endswith('":log-group:*"]]}')


def test_without_a_key_logs_and_environment_keep_the_services_default_encryption(
    synthesized: Synthesized,
) -> None:
    # GIVEN the sample stack's claim-mode queue (no key)
    template = synthesized.templates[SAMPLE_CLAIM_QUEUE]
    _, log_group = _one(template, "AWS::Logs::LogGroup")
    # THEN neither names a key
    assert "KmsKeyId" not in log_group["Properties"]
    assert "KmsKeyArn" not in _function(template)


def test_an_imported_key_warns_that_its_policy_needs_the_logs_statement(synthesized: Synthesized) -> None:
    # GIVEN the placed stack (an imported key) WHEN reading its warnings
    text = "\n".join(
        str(w.entry.data) for w in synthesized.annotations["Placed"].find_warning("*", Match.any_value())
    )
    # THEN the warning names the statement to add, with its id
    assert f"[ack: {WARNING_LOG_KEY_POLICY}]" in text
    assert "allow the service principal logs.<region>.amazonaws.com" in text


# --- placement and platform: vpc, architecture, tracing, layers ---------------------------------------


def _ec2_arn(resource: Any) -> str:
    """An ``Fn::Join`` of an EC2 ARN as a readable string (``arn:<partition>:ec2:<region>:...``)."""
    parts = resource["Fn::Join"][1]
    return "".join(
        p if isinstance(p, str) else "<" + next(iter(p.values())).split("::")[-1] + ">" for p in parts
    )


def test_placed_function_creates_interfaces_only_in_its_subnets_and_security_groups(
    synthesized: Synthesized,
) -> None:
    # GIVEN the placed stack (two private subnets, two given security groups)
    statements = _policy_statements(synthesized.templates["Placed"], "FunctionRole")
    # WHEN reading the network-interface statements that name resources
    create = [s for s in statements if _actions(s) == list(VPC_CREATE_ACTIONS)]
    change = [s for s in statements if _actions(s) == list(VPC_INTERFACE_ACTIONS)]
    # THEN creating one names the account's interfaces in the region, the function's subnets and its groups
    [create_statement] = create
    assert sorted(_ec2_arn(r) for r in create_statement["Resource"]) == sorted(
        [
            "arn:<Partition>:ec2:<Region>:<AccountId>:network-interface/*",
            *(f"arn:<Partition>:ec2:<Region>:<AccountId>:subnet/subnet-0123456789abcdef{i}" for i in (0, 1)),
            *(
                f"arn:<Partition>:ec2:<Region>:<AccountId>:security-group/sg-0123456789abcdef{i}"
                for i in (0, 1)
            ),
        ]
    )
    # AND deleting or re-addressing one names the account's interfaces in the region, nothing else
    [change_statement] = change
    assert (
        _ec2_arn(change_statement["Resource"])
        == "arn:<Partition>:ec2:<Region>:<AccountId>:network-interface/*"
    )


def test_provisioned_pollers_replace_maximum_concurrency_on_the_event_source() -> None:
    # GIVEN a queue with provisioned pollers (and the default reserved concurrency)
    stack = Stack(App(), "Pollers")
    OrderedAgentQueue(
        stack,
        "Jobs",
        code=lambda_.Code.from_asset(str(REPO / "lambda")),
        handler="notifier.handle",
        provisioned_pollers=ProvisionedPollers(minimum=3, maximum=40),
    )
    # WHEN synthesized
    [mapping] = _resources(Template.from_stack(stack), "AWS::Lambda::EventSourceMapping").values()
    properties = mapping["Properties"]
    # THEN the mapping is in provisioned mode, with no MaximumConcurrency (Lambda refuses both)
    assert properties["ProvisionedPollerConfig"] == {"MinimumPollers": 3, "MaximumPollers": 40}
    assert "ScalingConfig" not in properties
    assert properties["FunctionResponseTypes"] == ["ReportBatchItemFailures"]


def test_placed_function_runs_in_the_vpc_on_arm64_with_tracing_and_layers(synthesized: Synthesized) -> None:
    # GIVEN the placed stack
    template = synthesized.templates["Placed"]
    function = _function(template)
    # THEN the function is in the chosen subnets with the given groups, arm64, traced, with both layers
    assert function["VpcConfig"] == {
        "SubnetIds": ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"],
        "SecurityGroupIds": ["sg-0123456789abcdef0", "sg-0123456789abcdef1"],
    }
    assert function["Architectures"] == ["arm64"]
    assert function["TracingConfig"] == {"Mode": "Active"}
    assert function["Layers"] == [f"arn:aws:lambda:eu-west-1:111111111111:layer:tools{i}:3" for i in (0, 1)]
    # AND no security group of its own was created (the given ones are used)
    assert not _resources(template, "AWS::EC2::SecurityGroup")


def test_placed_function_role_gets_the_vpc_actions_inline_before_the_function_exists(
    synthesized: Synthesized,
) -> None:
    # GIVEN the placed stack
    template = synthesized.templates["Placed"]
    statements = _policy_statements(template, "FunctionRole")
    # WHEN collecting the statements on Resource "*"
    wildcard = sorted(a for s in statements if s["Resource"] == "*" for a in _actions(s))
    # THEN they are only EC2's two Describe actions and X-Ray's (no resource-level permissions), inline
    # (no managed policy); the other network-interface actions of AWSLambdaVPCAccessExecutionRole are scoped
    assert wildcard == sorted([*VPC_DESCRIBE_ACTIONS, "xray:PutTelemetryRecords", "xray:PutTraceSegments"])
    assert set(VPC_ACTIONS) == {*VPC_CREATE_ACTIONS, *VPC_DESCRIBE_ACTIONS, *VPC_INTERFACE_ACTIONS}
    for role in _resources(template, "AWS::IAM::Role").values():
        assert "ManagedPolicyArns" not in role["Properties"]
    # AND the function waits for its role's policy (Lambda checks the ENI permissions at creation)
    [function_id] = _resources(template, "AWS::Lambda::Function")
    [(policy_id, _)] = [
        (k, r)
        for k, r in _resources(template, "AWS::IAM::Policy").items()
        if k.startswith("JobsFunctionRole")
    ]
    assert policy_id in template.to_json()["Resources"][function_id]["DependsOn"]
