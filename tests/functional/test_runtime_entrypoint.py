"""Functional tests of the Lambda entry point: configuration errors and a real batch on moto."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import boto3
import pytest

from constructs_fifo.client.state_reader import GroupStateReader
from constructs_fifo.runtime import entrypoint
from constructs_fifo.runtime.constants import (
    ENV_BACKOFF_BASE_SECONDS,
    ENV_CLAIM_TABLE,
    ENV_DEAD_LETTER_QUEUE_URL,
    ENV_GROUP_TABLE,
    ENV_MODE,
    ENV_QUEUE_URL,
    ENV_USER_HANDLER,
    ENV_VISIBILITY_TIMEOUT_SECONDS,
    DeadJobPolicy,
)
from constructs_fifo.runtime.dead_jobs.parking import ParkStore
from constructs_fifo.runtime.exceptions import ConfigurationError
from constructs_fifo.runtime.observability import JobLogger
from constructs_fifo.runtime.settings.config import RuntimeConfig

from .runtime_harness import (
    GROUP_TABLE_NAME,
    REGION,
    TABLE_NAME,
    FakeContext,
    body,
    failed_ids,
    receive_records,
)

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient
    from mypy_boto3_sqs.client import SQSClient

WORKER = """
from constructs_fifo.runtime import PermanentJobError

SEEN = []
NOT_A_FUNCTION = 42

def handle(job, context):
    SEEN.append((job.id, job.group, job.attempt))
    if job.payload.get("simulate") == "poison":
        raise PermanentJobError("poison job")

def apply(job, state):
    state = dict(state or {"applied": []})
    state["applied"] = [*state["applied"], job.id]
    return state
"""


@pytest.fixture(autouse=True)
def fresh_entrypoint() -> Iterator[None]:
    entrypoint.reset()
    yield
    entrypoint.reset()
    sys.modules.pop("cf_test_worker", None)


@pytest.fixture
def worker_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "cf_test_worker.py").write_text(WORKER)
    monkeypatch.syspath_prepend(str(tmp_path))
    return "cf_test_worker"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "handle",
            "CONSTRUCTS_FIFO_HANDLER='handle' is not 'module.function': name the module and the job "
            "function in it, e.g. 'agent_worker.handle' (set OrderedAgentQueue's handler prop)",
        ),
        (
            "agent worker.handle",
            "CONSTRUCTS_FIFO_HANDLER='agent worker.handle' is not 'module.function': name the module and "
            "the job function in it, e.g. 'agent_worker.handle' (set OrderedAgentQueue's handler prop)",
        ),
        (
            "no_such_module_xyz.handle",
            "CONSTRUCTS_FIFO_HANDLER='no_such_module_xyz.handle': module 'no_such_module_xyz' cannot be "
            "imported (No module named 'no_such_module_xyz'); ship it at the top level of the function's "
            "code asset or fix the handler name",
        ),
        (
            "cf_test_worker.missing",
            "CONSTRUCTS_FIFO_HANDLER='cf_test_worker.missing': module 'cf_test_worker' has no attribute "
            "'missing'; define it as 'def handle(job, context)' or fix the handler name",
        ),
        (
            "cf_test_worker.NOT_A_FUNCTION",
            "CONSTRUCTS_FIFO_HANDLER='cf_test_worker.NOT_A_FUNCTION': cf_test_worker.NOT_A_FUNCTION is a "
            "int, not a function; it must be callable as handle(job, context)",
        ),
    ],
)
def test_bad_handler_setting_raises_a_configuration_error_naming_it(
    worker_module: str, spec: str, message: str
) -> None:
    # GIVEN / WHEN the handler setting is loaded
    with pytest.raises(ConfigurationError) as caught:
        entrypoint.load_user_handler(spec)
    # THEN the message names the variable, the value, the rule and the fix
    assert str(caught.value) == message


def test_missing_claim_table_is_a_configuration_error_on_first_invocation(
    monkeypatch: pytest.MonkeyPatch, worker_module: str
) -> None:
    # GIVEN an environment without the claim table
    monkeypatch.delenv(ENV_CLAIM_TABLE, raising=False)
    monkeypatch.setenv(ENV_QUEUE_URL, "https://sqs.us-east-1.amazonaws.com/123456789012/jobs.fifo")
    monkeypatch.setenv(ENV_USER_HANDLER, f"{worker_module}.handle")
    # WHEN the function is invoked
    with pytest.raises(ConfigurationError) as caught:
        entrypoint.handler({"Records": []}, FakeContext())
    # THEN the error says which variable and how to fix it
    assert str(caught.value) == (
        "CONSTRUCTS_FIFO_CLAIM_TABLE='': the claim table's name is required and is empty or unset; set "
        "CONSTRUCTS_FIFO_CLAIM_TABLE in the function's environment (OrderedAgentQueue does) or pass it "
        "to RuntimeConfig.from_env()"
    )


@pytest.mark.usefixtures("dynamodb")
def test_handler_processes_real_messages_and_parks_the_group_at_a_poison_job_by_default(  # noqa: PLR0917
    monkeypatch: pytest.MonkeyPatch,
    worker_module: str,
    sqs: SQSClient,
    queue_url: str,
    dlq_url: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # GIVEN the environment the construct writes (default policy: PARK), and three messages of one
    # group on the FIFO queue: a good job, a poison job, and a job after it
    monkeypatch.setenv(ENV_CLAIM_TABLE, TABLE_NAME)
    monkeypatch.setenv(ENV_QUEUE_URL, queue_url)
    monkeypatch.setenv(ENV_DEAD_LETTER_QUEUE_URL, dlq_url)
    monkeypatch.setenv(ENV_GROUP_TABLE, GROUP_TABLE_NAME)
    monkeypatch.setenv(ENV_USER_HANDLER, f"{worker_module}.handle")
    monkeypatch.setenv(ENV_VISIBILITY_TIMEOUT_SECONDS, "120")
    monkeypatch.setenv(ENV_BACKOFF_BASE_SECONDS, "2")
    for job_id, payload in (("j1", {}), ("j2", {"simulate": "poison"}), ("j3", {})):
        sqs.send_message(
            QueueUrl=queue_url,
            MessageBody=body(job_id, **payload),
            MessageGroupId="ws#1",
            MessageDeduplicationId=job_id,
        )
    records = receive_records(sqs, queue_url)
    assert [json.loads(r["body"])["jobId"] for r in records] == ["j1", "j2", "j3"]
    # WHEN Lambda invokes the entry point with them
    response = entrypoint.handler({"Records": records}, FakeContext())
    # THEN j1 ran and succeeded; j2 (poison) parked its group and j3 is kept behind it, not run
    worker = sys.modules[worker_module]
    assert [seen[0] for seen in worker.SEEN] == ["j1", "j2"]
    assert response == {"batchItemFailures": []}
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line.get("status") for line in lines] == ["SUCCEEDED", "PARKED", "KEPT", None]
    # AND the batch's own line closes it with the DynamoDB capacity units the batch consumed
    assert (lines[-1]["event"], lines[-1]["records"]) == ("batch", 3)
    assert lines[-1]["CapacityUnitsConsumed"] > 0
    # AND the parked group holds j2 then j3, in order, with the dead job's triage fields
    parking = ParkStore(GROUP_TABLE_NAME, boto3.client("dynamodb", region_name=REGION))
    header = parking.header("ws#1")
    assert header is not None
    assert (header.status, header.dead.job_id, header.dead.reason) == ("PARKED", "j2", "PERMANENT")
    assert [json.loads(kept.record["body"])["jobId"] for kept in parking.kept("ws#1")] == ["j2", "j3"]


@pytest.mark.usefixtures("dynamodb")
def test_state_mode_applies_each_transition_to_the_groups_state_through_the_entry_point(
    monkeypatch: pytest.MonkeyPatch, worker_module: str, sqs: SQSClient, queue_url: str, dlq_url: str
) -> None:
    # GIVEN the environment the construct writes in state mode (no claim table) and three jobs of a group,
    # the second sent twice with a new deduplication id
    for name, value in (
        (ENV_MODE, "STATE"),
        (ENV_QUEUE_URL, queue_url),
        (ENV_DEAD_LETTER_QUEUE_URL, dlq_url),
        (ENV_GROUP_TABLE, GROUP_TABLE_NAME),
        (ENV_USER_HANDLER, f"{worker_module}.apply"),
    ):
        monkeypatch.setenv(name, value)
    monkeypatch.delenv(ENV_CLAIM_TABLE, raising=False)
    for job_id, dedup in (("j1", "j1"), ("j2", "j2"), ("j2", "j2-again"), ("j3", "j3")):
        sqs.send_message(
            QueueUrl=queue_url, MessageBody=body(job_id), MessageGroupId="ws#1", MessageDeduplicationId=dedup
        )
    # WHEN Lambda invokes the entry point with them
    response = entrypoint.handler({"Records": receive_records(sqs, queue_url)}, FakeContext())
    # THEN nothing is reported and the group's state holds each job once, in order
    assert response == {"batchItemFailures": []}
    reader = GroupStateReader(GROUP_TABLE_NAME, boto3.client("dynamodb", region_name=REGION))
    assert reader.get("ws#1") == {"applied": ["j1", "j2", "j3"]}


def test_transient_failure_brings_the_message_back_after_the_backoff_not_the_visibility_timeout(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str
) -> None:
    # GIVEN a job function that fails transiently, a 1 s backoff base, a queue with a 120 s
    # visibility timeout and a real message
    def flaky(job: object, context: object) -> None:
        raise TimeoutError("model API timed out")

    config = RuntimeConfig(
        claim_table=TABLE_NAME,
        queue_url=queue_url,
        backoff_base_seconds=1,
        visibility_timeout_seconds=120,
        dead_letter_queue_url=queue_url,
        on_dead_job=DeadJobPolicy.CONTINUE,
    )
    processor = entrypoint.build_processor(
        config,
        dynamodb_client=dynamodb,
        sqs_client=sqs,
        job_handler=flaky,
        logger=JobLogger("T", stream=io.StringIO()),
    )
    sqs.send_message(
        QueueUrl=queue_url, MessageBody=body("j1"), MessageGroupId="g", MessageDeduplicationId="j1"
    )
    records = receive_records(sqs, queue_url)
    # WHEN it is processed
    response = processor.process({"Records": records}, FakeContext())
    # THEN it is reported and hidden for about 1 s only: invisible now, back with attempt 2 soon after
    assert failed_ids(response) == [records[0]["messageId"]]
    assert receive_records(sqs, queue_url) == []
    time.sleep(1.2)
    (again,) = receive_records(sqs, queue_url)
    assert again["messageId"] == records[0]["messageId"]
    assert again["attributes"]["ApproximateReceiveCount"] == "2"


def test_importing_the_entry_point_loads_no_cdk_and_defers_boto3_to_the_first_invocation() -> None:
    # GIVEN a fresh interpreter (what a Lambda container starts with)
    probe = (
        "import sys, constructs_fifo.runtime.entrypoint; "
        "print(sorted(m for m in ('aws_cdk', 'constructs', 'boto3', 'botocore') if m in sys.modules))"
    )
    # WHEN it imports the handler module the construct configures
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    # THEN neither the CDK nor boto3 was loaded: boto3 waits for the first invocation's clients
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("mode", "loaded", "not_loaded"), [("CLAIM", "claim", "state"), ("STATE", "state", "claim")]
)
def test_a_container_loads_only_the_modules_of_its_mode(mode: str, loaded: str, not_loaded: str) -> None:
    # GIVEN a fresh interpreter that builds the entry point's processor for one mode (clients injected)
    probe = (
        "import sys; from constructs_fifo.runtime import entrypoint; "
        "from constructs_fifo.runtime.settings.config import RuntimeConfig; "
        "from constructs_fifo.runtime.constants import JobMode; "
        "cfg = RuntimeConfig(claim_table='claims', queue_url='q', group_table='groups', "
        f"mode=JobMode.{mode}); "
        "entrypoint.build_processor(cfg, dynamodb_client=object(), sqs_client=object(), "
        "job_handler=lambda job, arg: arg); "
        "print(sorted({m.split('.')[2] for m in sys.modules if m.startswith('constructs_fifo.runtime.')}))"
    )
    # WHEN it builds it (what the first invocation of a container does)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    # THEN the configured mode's package is loaded and the other one's is not
    rooms = set(json.loads(done.stdout.replace("'", '"')))
    assert loaded in rooms
    assert not_loaded not in rooms
