"""The sample app: snapshot, cfn-lint over every template, cdk-nag through the real ``app.py``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import cfnlint.api
import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension

from constructs_fifo.construct.resources.outputs import OUTPUT_NAMES, WORKER_OUTPUT_NAMES
from constructs_fifo.demo.sample_app import (
    ACCOUNT_EVENT_BUS,
    ACCOUNT_EVENT_SOURCE,
    ACCOUNT_GROUP_PATH,
    ACCOUNT_HANDLER,
    ACCOUNT_JOB_ID_PATH,
    ACCOUNT_QUEUE,
    ACCOUNT_SEQ_PATH,
    BUILD_HANDLER,
    BUILD_HEARTBEAT_INTERVAL_SECONDS,
    BUILD_IMAGE,
    BUILD_QUEUE,
    BUILD_SLOTS,
    BUILD_VISIBILITY_TIMEOUT_SECONDS,
    ENV_NOTIFICATION_TABLE,
    NOTIFICATION_HANDLER,
    NOTIFICATION_KEY,
    NOTIFICATION_QUEUE,
    OUTPUTS,
    STACK_NAME,
    WORKSPACE_HANDLER,
    WORKSPACE_QUEUE,
)
from constructs_fifo.runtime.constants import (
    ENV_HEARTBEAT_INTERVAL_SECONDS,
    ENV_MODE,
    ENV_SLOTS,
    ENV_USER_HANDLER,
    ENV_VISIBILITY_TIMEOUT_SECONDS,
    DeadJobPolicy,
    JobMode,
)

from .stacks import REPO, Synthesized

_HASH = re.compile(r"[0-9a-f]{64}")


def _normalise(value: Any) -> Any:
    """Replace asset hashes (they change with every edit of the runtime or the job code)."""
    if isinstance(value, str):
        return _HASH.sub("<asset-hash>", value)
    if isinstance(value, list):
        return [_normalise(v) for v in value]
    if isinstance(value, dict):
        return {k: _normalise(v) for k, v in value.items()}
    return value


def test_sample_stack_matches_snapshot(synthesized: Synthesized, snapshot: SnapshotAssertion) -> None:
    # GIVEN the sample stack's template, asset hashes normalised
    template = _normalise(synthesized.templates["AgentJobs"].to_json())
    # THEN it matches the reviewed snapshot (update with `pytest --snapshot-update` after review)
    assert template == snapshot.use_extension(JSONSnapshotExtension)


def test_sample_stack_states_the_contracts_outputs(synthesized: Synthesized) -> None:
    # GIVEN the sample stack's template
    template = synthesized.templates["AgentJobs"].to_json()
    # THEN its outputs are exactly the contract's and each queue construct's own
    queues = (WORKSPACE_QUEUE, NOTIFICATION_QUEUE, ACCOUNT_QUEUE)
    own = {f"{queue}Outputs{name}" for queue in queues for name in OUTPUT_NAMES}
    state_mode = {f"{queue}OutputsClaimTableName" for queue in (WORKSPACE_QUEUE, ACCOUNT_QUEUE)}
    # (the container queue names its cluster and service in the place of a function)
    workers = {
        f"{BUILD_QUEUE}Outputs{name}"
        for name in (*OUTPUT_NAMES, *WORKER_OUTPUT_NAMES)
        if name != "FunctionName"
    }
    assert set(template["Outputs"]) == set(OUTPUTS) | (own - state_mode) | workers


def _function(synthesized: Synthesized, queue: str) -> dict[str, Any]:
    function: dict[str, Any]
    [function] = [
        r["Properties"]
        for r in synthesized.templates[queue].to_json()["Resources"].values()
        if r["Type"] == "AWS::Lambda::Function"
    ]
    return function


def _role_statements(synthesized: Synthesized, queue: str) -> list[dict[str, Any]]:
    return [
        statement
        for r in synthesized.templates[queue].to_json()["Resources"].values()
        if r["Type"] == "AWS::IAM::Policy"
        for statement in r["Properties"]["PolicyDocument"]["Statement"]
    ]


def test_the_workspace_queue_is_a_pure_transition_in_state_mode(synthesized: Synthesized) -> None:
    # GIVEN the sample's workspace queue
    jobs = synthesized.sample_workspaces
    variables = _function(synthesized, f"{STACK_NAME}/{WORKSPACE_QUEUE}")["Environment"]["Variables"]
    # THEN it runs the transition in state mode under the default PARK policy, with no claim table
    assert (variables[ENV_USER_HANDLER], variables[ENV_MODE]) == (WORKSPACE_HANDLER, JobMode.STATE.value)
    assert jobs.on_dead_job is DeadJobPolicy.PARK
    assert jobs.claim_table is None and jobs.state_table is not None
    # AND its function touches no table but its own state table (the worker makes no DynamoDB call)
    state_table = synthesized.sample.resolve(jobs.state_table.table_arn)
    dynamodb_resources = [
        s["Resource"]
        for s in _role_statements(synthesized, f"{STACK_NAME}/{WORKSPACE_QUEUE}")
        if any(str(action).startswith("dynamodb:") for action in _list(s["Action"]))
    ]
    assert dynamodb_resources == [state_table]


def test_the_notification_queue_records_in_its_own_table_in_claim_mode(synthesized: Synthesized) -> None:
    # GIVEN the sample's notification queue and table
    jobs = synthesized.sample_jobs
    table = synthesized.sample_notification_table
    template = synthesized.templates["AgentJobs"].to_json()
    variables = _function(synthesized, f"{STACK_NAME}/{NOTIFICATION_QUEUE}")["Environment"]["Variables"]
    # THEN it runs the notifier in claim mode under PARK, told its table, keyed as the contract says
    assert (variables[ENV_USER_HANDLER], variables[ENV_MODE]) == (NOTIFICATION_HANDLER, JobMode.CLAIM.value)
    assert jobs.on_dead_job is DeadJobPolicy.PARK
    assert variables[ENV_NOTIFICATION_TABLE] == synthesized.sample.resolve(table.table_name)
    [properties] = [
        r["Properties"]
        for logical_id, r in template["Resources"].items()
        if logical_id.startswith("NotificationTable")
    ]
    assert properties["KeySchema"] == [{"AttributeName": NOTIFICATION_KEY, "KeyType": "HASH"}]
    # AND it may only put and update notifications there
    on_table = [
        sorted(_list(s["Action"]))
        for s in _role_statements(synthesized, f"{STACK_NAME}/{NOTIFICATION_QUEUE}")
        if _list(s["Resource"]) == [synthesized.sample.resolve(table.table_arn)]
    ]
    assert on_table == [["dynamodb:PutItem", "dynamodb:UpdateItem"]]


def test_the_build_queue_runs_long_jobs_on_container_workers_in_claim_mode(synthesized: Synthesized) -> None:
    # GIVEN the sample's build queue
    template = synthesized.templates["AgentJobs"]
    [definition] = template.find_resources("AWS::ECS::TaskDefinition").values()
    [container] = definition["Properties"]["ContainerDefinitions"]
    variables = {pair["Name"]: pair["Value"] for pair in container["Environment"]}
    # THEN its workers run the image reference (no Docker at synth) and the build job in claim mode
    assert container["Image"] == BUILD_IMAGE
    assert (variables[ENV_USER_HANDLER], variables[ENV_MODE]) == (BUILD_HANDLER, JobMode.CLAIM.value)
    # AND a short visibility timeout that the heartbeats hold well inside, with the contract's slots
    assert variables[ENV_VISIBILITY_TIMEOUT_SECONDS] == str(BUILD_VISIBILITY_TIMEOUT_SECONDS)
    assert variables[ENV_HEARTBEAT_INTERVAL_SECONDS] == str(BUILD_HEARTBEAT_INTERVAL_SECONDS)
    assert 2 * BUILD_HEARTBEAT_INTERVAL_SECONDS < BUILD_VISIBILITY_TIMEOUT_SECONDS
    assert variables[ENV_SLOTS] == str(BUILD_SLOTS)
    # AND no function of the stack runs it
    handlers = [f["Properties"]["Handler"] for f in template.find_resources("AWS::Lambda::Function").values()]
    assert not any(BUILD_HANDLER in str(handler) for handler in handlers)


def test_the_accounts_queue_applies_account_events_from_its_bus_in_state_mode(
    synthesized: Synthesized,
) -> None:
    # GIVEN the sample's accounts queue and the stack's rule and pipe
    template = synthesized.templates[STACK_NAME].to_json()
    variables = _function(synthesized, f"{STACK_NAME}/{ACCOUNT_QUEUE}")["Environment"]["Variables"]
    # THEN it runs the accounts transition in state mode
    assert (variables[ENV_USER_HANDLER], variables[ENV_MODE]) == (ACCOUNT_HANDLER, JobMode.STATE.value)
    # AND the contract's bus is the rule's, matching the contract's event source
    resources = template["Resources"].values()
    [bus] = [r["Properties"] for r in resources if r["Type"] == "AWS::Events::EventBus"]
    [rule] = [r["Properties"] for r in resources if r["Type"] == "AWS::Events::Rule"]
    assert bus["Name"] == ACCOUNT_EVENT_BUS
    assert rule["EventPattern"] == {"source": [ACCOUNT_EVENT_SOURCE]}
    # AND the one pipe groups by the account, dedups by the event id and maps the version to seq
    [pipe] = [r["Properties"] for r in resources if r["Type"] == "AWS::Pipes::Pipe"]
    target = pipe["TargetParameters"]
    assert target["SqsQueueParameters"] == {
        "MessageGroupId": ACCOUNT_GROUP_PATH.replace("$.", "$.body.", 1),
        "MessageDeduplicationId": ACCOUNT_JOB_ID_PATH.replace("$.", "$.body.", 1),
    }
    assert '"seq": <' + ACCOUNT_SEQ_PATH.replace("$.", "$.body.", 1) + ">" in target["InputTemplate"]
    [queue_id] = [
        logical_id
        for logical_id, r in template["Resources"].items()
        if r["Type"] == "AWS::SQS::Queue" and logical_id.startswith(f"{ACCOUNT_QUEUE}Queue")
    ]
    assert pipe["Target"] == {"Fn::GetAtt": [queue_id, "Arn"]}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


@pytest.mark.parametrize("stack", ["AgentJobs", "Variant", "Risky"])
def test_cfn_lint_reports_no_errors(synthesized: Synthesized, stack: str) -> None:
    # GIVEN a synthesized template
    template = json.dumps(synthesized.templates[stack].to_json())
    # WHEN cfn-lint checks it
    matches = cfnlint.api.lint(template)
    # THEN there is no error (E rules); warnings are listed for the reader
    errors = [f"{m.rule.id} {m.message} at {m.path}" for m in matches if m.rule.id.startswith("E")]
    assert errors == []


def test_app_synthesizes_with_zero_unacknowledged_nag_findings(tmp_path: Path) -> None:
    # GIVEN the real app.py, with both cdk-nag packs, synthesized as `cdk synth` would
    env = {**os.environ, "CDK_OUTDIR": str(tmp_path), "JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION": "1"}
    # WHEN it runs
    result = subprocess.run(
        [sys.executable, str(REPO / "app.py")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    # THEN it succeeds, every plugin passes with no open finding, and each acknowledgement has a reason
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "AgentJobs.template.json").is_file()
    report = json.loads((tmp_path / "validation-report.json").read_text())
    plugins = {p["pluginName"]: p for p in report["pluginReports"]}
    # (a pack with neither findings nor acknowledgements is left out of the report)
    assert set(plugins) <= {"AwsSolutions", "Serverless"}
    assert "(AwsSolutions)" not in result.stdout + result.stderr
    assert "(Serverless)" not in result.stdout + result.stderr
    for plugin in plugins.values():
        assert plugin["conclusion"] == "success"
        assert plugin["violations"] == []
        for suppressed in plugin.get("suppressedViolations", []):
            assert len(suppressed["reason"]) > 40, suppressed
    acknowledged = sorted(s["ruleName"] for p in plugins.values() for s in p.get("suppressedViolations", []))
    # (the same four, once for each function queue's function and dead-letter queue, the events
    # ingress's staging dead-letter queue and the build queue's dead-letter queue, and the container
    # consumer's two, acknowledged by the construct)
    assert acknowledged == sorted(
        3
        * [
            "Serverless-LambdaDLQ",
            "Serverless-LambdaEventSourceMappingDestination",
            "Serverless-LambdaTracing",
            "Serverless-SQSRedrivePolicy",
        ]
        + 2 * ["Serverless-SQSRedrivePolicy"]
        + [
            "AwsSolutions-ECS2",
            "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ecs:<AWS::Region>:<AWS::AccountId>:task/"
            "<BuildsCluster204A9C64>/*]",
        ]
    )


def test_the_unreserved_context_drops_every_reservation_and_keeps_the_caps() -> None:
    # GIVEN the sample app synthesized with the context `deploy --allow-unreserved` passes
    from aws_cdk import App
    from aws_cdk.assertions import Template

    from constructs_fifo.deploy.preflight import UNRESERVED_CONTEXT

    from .stacks import load_sample_app

    sample = load_sample_app()
    app = App(context={UNRESERVED_CONTEXT: "true"})
    stack = sample.AgentJobsStack(app, STACK_NAME)
    # WHEN synthesized
    template = Template.from_stack(stack)
    # THEN no job function reserves concurrency, and every mapping keeps MaximumConcurrency 10
    functions = template.find_resources("AWS::Lambda::Function")
    jobs = [f for f in functions.values() if f["Properties"]["Handler"].startswith("constructs_fifo.")]
    assert len(jobs) == 3
    assert all("ReservedConcurrentExecutions" not in f["Properties"] for f in jobs)
    mappings = template.find_resources("AWS::Lambda::EventSourceMapping").values()
    assert [m["Properties"]["ScalingConfig"] for m in mappings] == 3 * [{"MaximumConcurrency": 10}]


def test_without_the_context_the_sample_reserves_ten_per_function(synthesized: Synthesized) -> None:
    # GIVEN the sample stack as `cdk synth` builds it (no context)
    functions = synthesized.templates[STACK_NAME].find_resources("AWS::Lambda::Function").values()
    # THEN every job function keeps its reservation of 10
    reserved = [f["Properties"].get("ReservedConcurrentExecutions") for f in functions]
    assert sorted(r for r in reserved if r is not None) == [10, 10, 10]
