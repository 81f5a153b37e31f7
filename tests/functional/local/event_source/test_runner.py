"""EventSourceRunner against the local emulator: a hand-made FIFO queue, DLQ, function and mapping.

The function's code is a zip in an S3 bucket (as ``cdk deploy`` leaves it), holding a tiny handler and
its own ``constructs_fifo`` package with a marker, so the tests see which copy the worker imported.
"""

from __future__ import annotations

import _thread
import hashlib
import io
import json
import threading
import time
import uuid
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from constructs_fifo.local.emulator.server import LocalEmulator
from constructs_fifo.local.event_source import function_log, waiting
from constructs_fifo.local.event_source.reports import InvocationReport
from constructs_fifo.local.event_source.runner import EventSourceRunner
from constructs_fifo.stacks.errors import AmbiguousQueueError, StackNotFoundError

REGION = "us-east-1"
BUCKET = "cdk-hnb659fds-assets-123456789012-us-east-1"

HANDLER = """
import json, os, time
import constructs_fifo  # the asset's copy: it has MARKER, the installed package does not


def handle(event, context):
    failures = []
    for r in event["Records"]:
        body = json.loads(r["body"])
        attempt = int(r["attributes"]["ApproximateReceiveCount"])
        action = body.get("action", "ok")
        body.setdefault("table", "no-such-table")
        line = {
            "id": body["id"], "attempt": attempt, "record": r, "pid": os.getpid(), "start": time.time(),
            "remaining_ms": context.get_remaining_time_in_millis(), "marker": constructs_fifo.MARKER,
            "env": os.environ.get("ONLY_THIS_FUNCTION"), "leak": os.environ.get("RUNNER_TEST_LEAK"),
            "memory": context.memory_limit_in_mb, "function_name": context.function_name,
            "request_id": context.aws_request_id, "region": os.environ.get("AWS_REGION"),
        }
        print("this print goes to the function log, not the protocol pipe")
        if action == "sleep_once" and attempt == 1:
            time.sleep(30)
        if action == "outlive_visibility_once" and attempt == 1:
            time.sleep(2.5)
        if action == "crash_once" and attempt == 1:
            os._exit(3)
        if action == "sleep":
            time.sleep(body["seconds"])
        if action == "call_aws":
            import boto3
            dynamodb = boto3.client("dynamodb")
            dynamodb.list_tables()
            try:
                dynamodb.get_item(TableName=body["table"], Key={"k": {"S": "x"}})
            except dynamodb.exceptions.ResourceNotFoundException:
                pass
        line["end"] = time.time()
        with open(os.environ["OUT_FILE"], "a") as out:
            out.write(json.dumps(line) + "\\n")
        if (action == "fail_once" and attempt == 1) or action == "always_fail":
            failures.append({"itemIdentifier": r["messageId"]})
        elif action == "raise_once" and attempt == 1:
            raise RuntimeError("boom")
        elif action == "config_error":
            class ConfigurationError(Exception):  # the runtime's, by name: no job can get past it
                pass
            raise ConfigurationError("CONSTRUCTS_FIFO_MODE='x' is not a mode")
        elif action == "bad_response":
            return {"batchItemFailures": [{"itemIdentifier": "not-a-record"}]}
    return {"batchItemFailures": failures}
"""


@pytest.fixture(scope="module")
def emulator() -> Iterator[LocalEmulator]:
    with LocalEmulator(port=0) as emu:
        s3 = emu.client("s3")
        s3.create_bucket(Bucket=BUCKET)
        iam = emu.client("iam")
        iam.create_role(RoleName="fn-role", AssumeRolePolicyDocument="{}")
        yield emu


@dataclass
class Deployed:
    name: str
    queue_url: str
    dlq_url: str
    out_file: Path


def _zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("tiny_handler.py", HANDLER)
        archive.writestr("constructs_fifo/__init__.py", 'MARKER = "deployed-copy"\n')
    return buffer.getvalue()


def deploy(
    emu: LocalEmulator,
    tmp_path: Path,
    jobs: list[tuple[str, str, str]],
    *,
    timeout: int = 2,
    visibility: int = 4,
    max_receive_count: int = 5,
    batch_size: int = 10,
    max_concurrency: int | None = None,
    reserved: int | None = None,
    enabled: bool = True,
    handler: str = "tiny_handler.handle",
) -> Deployed:
    """Create DLQ, queue, function and mapping; send ``(id, group, action)`` jobs first.

    The visibility timeout leaves room for a cold worker on a busy machine: a delete after it ends is
    refused, as on AWS, and the record runs again.
    """
    name = f"fn-{uuid.uuid4().hex[:8]}"
    sqs, lambda_, s3 = emu.client("sqs"), emu.client("lambda"), emu.client("s3")
    dlq_url = sqs.create_queue(QueueName=f"{name}-dlq.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    queue_url = sqs.create_queue(
        QueueName=f"{name}.fifo",
        Attributes={
            "FifoQueue": "true",
            "VisibilityTimeout": str(visibility),
            "RedrivePolicy": json.dumps(
                {"deadLetterTargetArn": dlq_arn, "maxReceiveCount": max_receive_count}
            ),
        },
    )["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    for job_id, group, action in jobs:
        sqs.send_message(
            QueueUrl=queue_url,
            MessageBody=json.dumps({"id": job_id, "action": action}),
            MessageGroupId=group,
            MessageDeduplicationId=job_id,
        )
    key = f"{hashlib.sha256(name.encode()).hexdigest()}.zip"
    s3.put_object(Bucket=BUCKET, Key=key, Body=_zip())
    out_file = tmp_path / f"{name}.jsonl"
    lambda_.create_function(
        FunctionName=name,
        Runtime="python3.13",
        Role="arn:aws:iam::123456789012:role/fn-role",
        Handler=handler,
        Code={"S3Bucket": BUCKET, "S3Key": key},
        Timeout=timeout,
        MemorySize=256,
        Environment={"Variables": {"OUT_FILE": str(out_file), "ONLY_THIS_FUNCTION": name}},
    )
    if reserved is not None:
        lambda_.put_function_concurrency(FunctionName=name, ReservedConcurrentExecutions=reserved)
    mapping: dict[str, Any] = {
        "EventSourceArn": queue_arn,
        "FunctionName": name,
        "BatchSize": batch_size,
        "FunctionResponseTypes": ["ReportBatchItemFailures"],
        "Enabled": enabled,
    }
    if max_concurrency is not None:
        mapping["ScalingConfig"] = {"MaximumConcurrency": max_concurrency}
    lambda_.create_event_source_mapping(**mapping)
    return Deployed(name, queue_url, dlq_url, out_file)


def runner_for(emu: LocalEmulator, deployed: Deployed, **kwargs: Any) -> EventSourceRunner:
    kwargs.setdefault("log_path", deployed.out_file.with_suffix(".log"))  # in the test's directory
    return EventSourceRunner.from_function(
        deployed.name,
        target=emu.target(REGION),
        lambda_client=emu.client("lambda"),
        sqs_client=emu.client("sqs"),
        s3_client=emu.client("s3"),
        **kwargs,
    )


def lines(deployed: Deployed) -> list[dict[str, Any]]:
    if not deployed.out_file.exists():
        return []
    return [json.loads(line) for line in deployed.out_file.read_text().splitlines()]


def depth(emu: LocalEmulator, url: str) -> int:
    attributes = emu.client("sqs").get_queue_attributes(
        QueueUrl=url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"]) + int(
        attributes["ApproximateNumberOfMessagesNotVisible"]
    )


def max_overlap(seen: list[dict[str, Any]]) -> int:
    """The most invocations running at one instant (a sweep over start and end times)."""
    events = sorted([(line["start"], 1) for line in seen] + [(line["end"], -1) for line in seen])
    running = most = 0
    for _, change in events:
        running += change
        most = max(most, running)
    return most


def test_runner_reads_the_deployed_settings(emulator: LocalEmulator, tmp_path: Path) -> None:
    # GIVEN a function with a mapping (batch 7, MaximumConcurrency 3), reserved concurrency 4, timeout 2
    deployed = deploy(emulator, tmp_path, [], batch_size=7, max_concurrency=3, reserved=4, visibility=12)

    # WHEN a runner is built from the endpoint
    with runner_for(emulator, deployed) as runner:
        # THEN it holds the mapping's, the function's and the queue's settings, and the code
        assert runner.mapping.batch_size == 7
        assert runner.mapping.maximum_concurrency == 3
        assert runner.mapping.report_batch_item_failures
        assert runner.function.handler == "tiny_handler.handle"
        assert runner.function.timeout_seconds == 2
        assert runner.function.memory_mb == 256
        assert runner.function.reserved_concurrency == 4
        assert runner.function.environment["ONLY_THIS_FUNCTION"] == deployed.name
        assert runner.queue.visibility_timeout_seconds == 12
        assert runner.queue.max_receive_count == 5
        assert runner.queue.dead_letter_queue_arn is not None
        assert runner.queue.dead_letter_queue_arn.endswith(f"{deployed.name}-dlq.fifo")
        assert runner.concurrency == 3
        assert (runner.function.code_dir / "tiny_handler.py").read_text() == HANDLER
        code_dir = runner.function.code_dir
    # AND closing removes the extracted code
    assert not code_dir.exists()


def test_drain_delivers_lambda_records_and_deletes_what_succeeded(
    emulator: LocalEmulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN six jobs over two groups, and a variable in this process that the function must not see
    monkeypatch.setenv("RUNNER_TEST_LEAK", "leaked")
    jobs = [(f"j{i}", f"ws#{i % 2}", "ok") for i in range(6)]
    deployed = deploy(emulator, tmp_path, jobs)

    # WHEN the queue is drained
    with runner_for(emulator, deployed) as runner:
        stats = runner.drain(until_empty=True, quiet_seconds=0.3)

    # THEN every job ran once, was deleted, and the queue is empty
    seen = lines(deployed)
    assert sorted(line["id"] for line in seen) == sorted(j[0] for j in jobs)
    assert (stats.records, stats.deleted, stats.failed_reported, stats.handler_errors) == (6, 6, 0, 0)
    assert depth(emulator, deployed.queue_url) == 0
    # AND each record looks like Lambda's
    record = seen[0]["record"]
    assert record["eventSource"] == "aws:sqs"
    assert record["eventSourceARN"].startswith("arn:aws:sqs:us-east-1:123456789012:")
    assert record["awsRegion"] == REGION
    assert record["md5OfBody"] == hashlib.md5(record["body"].encode()).hexdigest()
    assert record["attributes"]["ApproximateReceiveCount"] == "1"
    assert record["attributes"]["MessageGroupId"] in {"ws#0", "ws#1"}
    assert record["attributes"]["MessageDeduplicationId"] == seen[0]["id"]
    assert {"SentTimestamp", "SequenceNumber", "ApproximateFirstReceiveTimestamp"} <= set(
        record["attributes"]
    )
    # AND the handler ran the deployed copy, with the function's environment only, and a Lambda context
    assert {line["marker"] for line in seen} == {"deployed-copy"}
    assert {line["env"] for line in seen} == {deployed.name}
    assert {line["leak"] for line in seen} == {None}
    assert {line["region"] for line in seen} == {REGION}
    assert {line["memory"] for line in seen} == {256}
    assert {line["function_name"] for line in seen} == {deployed.name}
    assert all(0 < line["remaining_ms"] <= 2000 for line in seen)
    # AND the handler's prints went to the function log
    assert "goes to the function log" in runner.log_path.read_text()


def test_the_aws_calls_the_handler_makes_are_counted_by_operation_and_table(
    emulator: LocalEmulator, tmp_path: Path
) -> None:
    # GIVEN three jobs whose handler lists tables and reads an item of a table (each through a new client)
    deployed = deploy(emulator, tmp_path, [(f"c{i}", "ws#c", "call_aws") for i in range(3)], batch_size=2)
    # WHEN the queue is drained
    with runner_for(emulator, deployed) as runner:
        stats = runner.drain(until_empty=True, quiet_seconds=0.3)
    # THEN every call was counted once, under its operation, and the item read under its table
    assert stats.deleted == 3
    assert stats.aws_calls == {"dynamodb.ListTables": 3, "dynamodb.GetItem no-such-table": 3}
    assert stats.as_dict()["aws_calls"] == stats.aws_calls


def test_reported_failures_stay_and_the_rest_is_deleted(emulator: LocalEmulator, tmp_path: Path) -> None:
    # GIVEN one batch of three jobs of which the middle one is reported failed on its first attempt
    deployed = deploy(emulator, tmp_path, [("a", "g1", "ok"), ("b", "g2", "fail_once"), ("c", "g3", "ok")])
    reports: list[InvocationReport] = []

    # WHEN the queue is drained
    with runner_for(emulator, deployed) as runner:
        stats = runner.drain(until_empty=True, on_batch=reports.append, quiet_seconds=0.3)

    # THEN the first batch deleted a and c and left b, which came back (after the visibility timeout)
    first = reports[0]
    ids = dict(zip(first.message_ids, ("a", "b", "c"), strict=True))
    assert [ids[m] for m in first.deleted] == ["a", "c"]
    assert [ids[m] for m in first.failed] == ["b"]
    assert first.error is None
    assert [(line["id"], line["attempt"]) for line in lines(deployed)] == [
        ("a", 1),
        ("b", 1),
        ("c", 1),
        ("b", 2),
    ]
    assert (stats.deleted, stats.failed_reported, stats.handler_errors) == (3, 1, 0)
    # AND the drain waited for the in-flight message instead of stopping early
    assert depth(emulator, deployed.queue_url) == 0


def test_a_handler_exception_leaves_the_whole_batch(emulator: LocalEmulator, tmp_path: Path) -> None:
    # GIVEN a batch whose last job raises on its first attempt
    deployed = deploy(emulator, tmp_path, [("a", "g1", "ok"), ("b", "g2", "ok"), ("c", "g3", "raise_once")])
    reports: list[InvocationReport] = []

    # WHEN the queue is drained
    with runner_for(emulator, deployed) as runner:
        stats = runner.drain(until_empty=True, on_batch=reports.append, quiet_seconds=0.3)

    # THEN nothing of the first batch was deleted: every job came back for a second attempt
    assert reports[0].error == "RuntimeError: boom"
    assert reports[0].deleted == ()
    assert len(reports[0].failed) == 3
    attempts = sorted((line["id"], line["attempt"]) for line in lines(deployed))
    assert attempts == [("a", 1), ("a", 2), ("b", 1), ("b", 2), ("c", 1), ("c", 2)]
    assert (stats.handler_errors, stats.deleted) == (1, 3)


def test_an_invalid_response_fails_the_whole_batch(emulator: LocalEmulator, tmp_path: Path) -> None:
    # GIVEN a handler that reports an itemIdentifier that is not in the batch (every attempt)
    deployed = deploy(
        emulator, tmp_path, [("a", "g1", "ok"), ("b", "g2", "bad_response")], max_receive_count=1
    )
    reports: list[InvocationReport] = []

    # WHEN the queue is drained
    with runner_for(emulator, deployed) as runner:
        runner.drain(until_empty=True, on_batch=reports.append, quiet_seconds=0.3)

    # THEN like Lambda it deleted nothing of that batch
    assert reports[0].error is not None
    assert reports[0].error.startswith("InvalidResponse: itemIdentifier 'not-a-record'")
    assert reports[0].deleted == ()
    # AND with maxReceiveCount 1 both messages went to the DLQ
    assert depth(emulator, deployed.dlq_url) == 2


def test_a_worker_past_the_timeout_is_killed_and_replaced(emulator: LocalEmulator, tmp_path: Path) -> None:
    # GIVEN a 1 s function whose job sleeps 30 s on its first attempt
    deployed = deploy(emulator, tmp_path, [("slow", "g1", "sleep_once")], timeout=1, visibility=2)
    reports: list[InvocationReport] = []

    # WHEN the queue is drained
    with runner_for(emulator, deployed) as runner:
        stats = runner.drain(until_empty=True, on_batch=reports.append, quiet_seconds=0.3)

    # THEN the first invocation timed out and left the message; a fresh worker ran the retry
    assert reports[0].error is not None
    assert reports[0].error.startswith("Timeout: the handler ran past the function timeout of 1 s")
    assert reports[0].deleted == ()
    assert [(line["id"], line["attempt"]) for line in lines(deployed)] == [("slow", 2)]
    assert (stats.timeouts, stats.cold_starts, stats.deleted) == (1, 2, 1)
    assert reports[1].cold_start
    assert stats.elapsed_seconds < 10


def test_max_receive_count_moves_a_failing_message_to_the_dlq(
    emulator: LocalEmulator, tmp_path: Path
) -> None:
    # GIVEN a job reported failed on every attempt, maxReceiveCount 2, and a healthy job
    deployed = deploy(
        emulator,
        tmp_path,
        [("poison", "g1", "always_fail"), ("fine", "g2", "ok")],
        max_receive_count=2,
        visibility=3,
    )

    # WHEN the queue is drained
    with runner_for(emulator, deployed) as runner:
        stats = runner.drain(until_empty=True, quiet_seconds=0.3)

    # THEN the poison job ran twice and now waits in the DLQ; the healthy one was deleted
    assert [line["attempt"] for line in lines(deployed) if line["id"] == "poison"] == [1, 2]
    assert depth(emulator, deployed.queue_url) == 0
    dlq = emulator.client("sqs").receive_message(QueueUrl=deployed.dlq_url)["Messages"]
    assert [json.loads(m["Body"])["id"] for m in dlq] == ["poison"]
    assert (stats.deleted, stats.failed_reported) == (1, 2)


def test_concurrency_is_bounded_by_maximum_concurrency(emulator: LocalEmulator, tmp_path: Path) -> None:
    # GIVEN six groups of one 0.5 s job, MaximumConcurrency 2, batches of one
    jobs = [(f"j{i}", f"g{i}", "sleep") for i in range(6)]
    deployed = deploy(emulator, tmp_path, [], batch_size=1, max_concurrency=2, reserved=10)
    sqs = emulator.client("sqs")
    for job_id, group, _ in jobs:
        body = json.dumps({"id": job_id, "action": "sleep", "seconds": 0.5})
        sqs.send_message(
            QueueUrl=deployed.queue_url, MessageBody=body, MessageGroupId=group, MessageDeduplicationId=job_id
        )

    # WHEN the queue is drained
    with runner_for(emulator, deployed) as runner:
        stats = runner.drain(until_empty=True, quiet_seconds=0.3)

    # THEN exactly two invocations overlapped: never more than the limit, and the independent groups
    # did run side by side (3 s of work over two slots), in two worker processes; all jobs ran
    seen = lines(deployed)
    assert len(seen) == 6
    assert max_overlap(seen) == 2
    assert len({line["pid"] for line in seen}) == 2
    assert stats.cold_starts == 2
    assert stats.deleted == 6


def test_for_seconds_stops_a_drain_that_would_not_end(emulator: LocalEmulator, tmp_path: Path) -> None:
    # GIVEN a job that always fails and never reaches a DLQ within the drain
    deployed = deploy(emulator, tmp_path, [("p", "g1", "always_fail")], max_receive_count=100, visibility=1)

    # WHEN the queue is drained for at most 1.5 s
    with runner_for(emulator, deployed) as runner:
        stats = runner.drain(until_empty=True, for_seconds=1.5)

    # THEN it stopped on time with the message still queued
    assert 1.5 <= stats.elapsed_seconds < 4
    assert depth(emulator, deployed.queue_url) == 1


def deploy_stack(emu: LocalEmulator, tmp_path: Path, name: str, constructs: list[str]) -> dict[str, Deployed]:
    """A stack holding one queue, DLQ, function and mapping per construct, as ``cdk deploy`` leaves it.

    Every resource carries the ``aws:cdk:path`` metadata the CDK CLI writes; each queue gets one job.
    """
    resources: dict[str, Any] = {}
    key = f"{hashlib.sha256(name.encode()).hexdigest()}.zip"
    emu.client("s3").put_object(Bucket=BUCKET, Key=key, Body=_zip())
    deployed: dict[str, Deployed] = {}
    for construct in constructs:
        queue_name = f"{name}-{construct}"
        function_name = f"{name}-{construct}-fn"

        def path(child: str, construct: str = construct) -> dict[str, Any]:
            return {"aws:cdk:path": f"{name}/{construct}/{child}/Resource"}

        resources[f"{construct}Dlq"] = {
            "Type": "AWS::SQS::Queue",
            "Properties": {"QueueName": f"{queue_name}-dlq.fifo", "FifoQueue": True},
            "Metadata": path("DeadLetterQueue"),
        }
        resources[f"{construct}Queue"] = {
            "Type": "AWS::SQS::Queue",
            "Properties": {
                "QueueName": f"{queue_name}.fifo",
                "FifoQueue": True,
                "VisibilityTimeout": 2,
                "RedrivePolicy": {
                    "deadLetterTargetArn": {"Fn::GetAtt": [f"{construct}Dlq", "Arn"]},
                    "maxReceiveCount": 5,
                },
            },
            "Metadata": path("Queue"),
        }
        resources[f"{construct}Function"] = {
            "Type": "AWS::Lambda::Function",
            "Properties": {
                "FunctionName": function_name,
                "Runtime": "python3.13",
                "Role": "arn:aws:iam::123456789012:role/fn-role",
                "Handler": "tiny_handler.handle",
                "Code": {"S3Bucket": BUCKET, "S3Key": key},
                "Timeout": 2,
                "Environment": {
                    "Variables": {
                        "OUT_FILE": str(tmp_path / f"{function_name}.jsonl"),
                        "ONLY_THIS_FUNCTION": function_name,
                        "CONSTRUCTS_FIFO_CLAIM_TABLE": f"{construct}-claims",
                    }
                },
            },
            "Metadata": path("Function"),
        }
        resources[f"{construct}Mapping"] = {
            "Type": "AWS::Lambda::EventSourceMapping",
            "Properties": {
                "EventSourceArn": {"Fn::GetAtt": [f"{construct}Queue", "Arn"]},
                "FunctionName": {"Ref": f"{construct}Function"},
                "BatchSize": 10,
                "FunctionResponseTypes": ["ReportBatchItemFailures"],
            },
            "Metadata": {"aws:cdk:path": f"{name}/{construct}/Function/SqsEventSource/Resource"},
        }
        deployed[construct] = Deployed(function_name, "", "", tmp_path / f"{function_name}.jsonl")
    emu.client("cloudformation").create_stack(
        StackName=name, TemplateBody=json.dumps({"Resources": resources})
    )
    sqs = emu.client("sqs")
    for construct in constructs:
        url = sqs.get_queue_url(QueueName=f"{name}-{construct}.fifo")["QueueUrl"]
        dlq = sqs.get_queue_url(QueueName=f"{name}-{construct}-dlq.fifo")["QueueUrl"]
        sqs.send_message(
            QueueUrl=url,
            MessageBody=json.dumps({"id": construct}),
            MessageGroupId="g",
            MessageDeduplicationId="d",
        )
        deployed[construct] = Deployed(deployed[construct].name, url, dlq, deployed[construct].out_file)
    return deployed


def test_from_stack_runs_the_function_of_the_stacks_only_queue(
    emulator: LocalEmulator, tmp_path: Path
) -> None:
    # GIVEN a stack with one queue, its function and mapping, and a job on the queue
    stack = f"One-{uuid.uuid4().hex[:6]}"
    [only] = deploy_stack(emulator, tmp_path, stack, ["Jobs"]).values()

    # WHEN a runner is built from the stack and drains
    with EventSourceRunner.from_stack(stack, target=emulator.target(REGION)) as runner:
        stats = runner.drain(quiet_seconds=0.3)

    # THEN it ran that function's deployed code on that queue
    assert runner.function.name == only.name
    assert runner.queue.url == only.queue_url
    assert stats.deleted == 1
    assert [(line["id"], line["marker"]) for line in lines(only)] == [("Jobs", "deployed-copy")]
    assert depth(emulator, only.queue_url) == 0


def test_a_stack_with_two_queues_needs_queue_and_lists_both(emulator: LocalEmulator, tmp_path: Path) -> None:
    # GIVEN a stack with two OrderedAgentQueue-like constructs
    stack = f"Two-{uuid.uuid4().hex[:6]}"
    deployed = deploy_stack(emulator, tmp_path, stack, ["First", "Second"])

    # WHEN a runner is built without --queue THEN the error lists both construct paths and queues
    with pytest.raises(AmbiguousQueueError) as caught:
        EventSourceRunner.from_stack(stack, target=emulator.target(REGION))
    assert f"{stack}/First (queue {stack}-First.fifo)" in caught.value.message
    assert f"{stack}/Second (queue {stack}-Second.fifo)" in caught.value.message
    assert caught.value.fix == f"pass --queue with a construct path or queue name, e.g. --queue {stack}/First"

    # WHEN --queue names the second, by construct path THEN only its function runs on only its queue
    with EventSourceRunner.from_stack(stack, target=emulator.target(REGION), queue="Second") as runner:
        stats = runner.drain(quiet_seconds=0.3)
    assert runner.function.name == deployed["Second"].name
    assert runner.function.environment["CONSTRUCTS_FIFO_CLAIM_TABLE"] == "Second-claims"
    assert stats.deleted == 1
    assert [line["id"] for line in lines(deployed["Second"])] == ["Second"]
    assert lines(deployed["First"]) == []
    assert depth(emulator, deployed["First"].queue_url) == 1

    # AND by queue name it picks the first
    with EventSourceRunner.from_stack(
        stack, target=emulator.target(REGION), queue=f"{stack}-First.fifo"
    ) as runner:
        assert runner.queue.url == deployed["First"].queue_url


def test_from_stack_names_a_missing_stack(emulator: LocalEmulator) -> None:
    # GIVEN no such stack WHEN a runner is built THEN the error names it and the fix
    with pytest.raises(StackNotFoundError, match=r"stack 'Missing' was not found") as caught:
        EventSourceRunner.from_stack("Missing", target=emulator.target(REGION))
    assert caught.value.fix.startswith("run `constructs-fifo deploy`")


def test_a_disabled_mapping_is_skipped_and_its_messages_stay(emulator: LocalEmulator, tmp_path: Path) -> None:
    # GIVEN a function whose mapping is disabled, and a job on its queue
    deployed = deploy(emulator, tmp_path, [("a", "g1", "ok")], enabled=False)

    # WHEN the queue is drained
    with runner_for(emulator, deployed) as runner:
        stats = runner.drain(until_empty=True, quiet_seconds=0.3)

    # THEN nothing ran, the job is still queued, and the stats say why
    assert lines(deployed) == []
    assert depth(emulator, deployed.queue_url) == 1
    assert stats.skipped is not None
    assert f"of function {deployed.name} is Disabled" in stats.skipped
    # AND the fix is a command that runs as printed: the mapping's --uuid, the region and the endpoint
    uuid_ = emulator.client("lambda").list_event_source_mappings(FunctionName=deployed.name)[
        "EventSourceMappings"
    ][0]["UUID"]
    assert stats.skipped.endswith(
        f"enable it (`aws lambda update-event-source-mapping --uuid {uuid_} --enabled --region {REGION} "
        f"--endpoint-url {emulator.endpoint_url}`) to drain the queue"
    )


def test_a_crashed_worker_leaves_its_batch_and_is_replaced(emulator: LocalEmulator, tmp_path: Path) -> None:
    # GIVEN a job whose first attempt kills its worker process (a visibility timeout longer than the
    # function's, as Lambda requires: a retry in a cold worker must delete before it ends)
    deployed = deploy(emulator, tmp_path, [("crash", "g1", "crash_once")], visibility=3)
    reports: list[InvocationReport] = []

    # WHEN the queue is drained
    with runner_for(emulator, deployed) as runner:
        stats = runner.drain(until_empty=True, on_batch=reports.append, quiet_seconds=0.3)

    # THEN the crash was a handler error that left the message; a new worker ran the retry
    assert reports[0].error is not None
    assert reports[0].error.startswith("WorkerError: worker process")
    assert reports[0].deleted == ()
    assert [(line["id"], line["attempt"]) for line in lines(deployed)] == [("crash", 2)]
    assert (stats.handler_errors, stats.cold_starts, stats.deleted) == (1, 2, 1)


def _send_sleepers(emu: LocalEmulator, deployed: Deployed, groups: int, seconds: float) -> None:
    sqs = emu.client("sqs")
    for i in range(groups):
        sqs.send_message(
            QueueUrl=deployed.queue_url,
            MessageBody=json.dumps({"id": f"s{i}", "action": "sleep", "seconds": seconds}),
            MessageGroupId=f"g{i}",
            MessageDeduplicationId=f"s{i}",
        )


def _counts(emu: LocalEmulator, url: str) -> tuple[int, int]:
    attributes = emu.client("sqs").get_queue_attributes(
        QueueUrl=url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"]), int(
        attributes["ApproximateNumberOfMessagesNotVisible"]
    )


def _wait_for(condition: Callable[[], bool], seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_cancelled_drain_stops_at_once_and_gives_its_batches_back(
    emulator: LocalEmulator, tmp_path: Path
) -> None:
    # GIVEN two groups whose jobs run 30 s, batches of one, a 10-minute visibility timeout, and a drain
    # running both
    deployed = deploy(
        emulator, tmp_path, [], timeout=60, visibility=600, batch_size=1, max_concurrency=2, reserved=2
    )
    _send_sleepers(emulator, deployed, groups=2, seconds=30)
    cancel = threading.Event()
    said: list[str] = []
    outcome: dict[str, Any] = {}
    runner = runner_for(emulator, deployed)
    code_dir = runner.function.code_dir
    thread = threading.Thread(
        target=lambda: outcome.update(stats=runner.drain(until_empty=True, cancel=cancel, say=said.append))
    )
    thread.start()
    try:
        _wait_for(lambda: _counts(emulator, deployed.queue_url) == (0, 2))
        time.sleep(0.5)  # both workers are in their job
        # WHEN the drain is cancelled (what the demo does on Ctrl-C)
        began = time.monotonic()
        cancel.set()
        thread.join(timeout=15)
        stopped_in = time.monotonic() - began
    finally:
        runner.close()
    # THEN it stopped at once, without starting a worker after the two it had, and said so
    assert not thread.is_alive()
    assert stopped_in < 5
    stats = outcome["stats"]
    assert (stats.cold_starts, stats.batches, stats.deleted, stats.handler_errors) == (2, 2, 0, 2)
    assert said and said[-1].startswith("stopping the drain of")
    # AND the cut-off batches are visible again now, not after the 10-minute visibility timeout
    assert _counts(emulator, deployed.queue_url) == (2, 0)
    # AND closing the runner removed the function's extracted code
    assert not code_dir.exists()


@pytest.mark.usefixtures("ctrl_c_raises")
def test_ctrl_c_in_the_draining_thread_stops_it_the_same_way(emulator: LocalEmulator, tmp_path: Path) -> None:
    # GIVEN a job that runs 30 s, a 10-minute visibility timeout
    deployed = deploy(emulator, tmp_path, [], timeout=60, visibility=600)
    _send_sleepers(emulator, deployed, groups=1, seconds=30)

    def interrupt_when_running() -> None:
        _wait_for(lambda: _counts(emulator, deployed.queue_url) == (0, 1))
        time.sleep(0.5)
        _thread.interrupt_main()  # what the terminal's Ctrl-C does to this process

    # WHEN the drain, in this (main) thread, is interrupted
    threading.Thread(target=interrupt_when_running, daemon=True).start()
    began = time.monotonic()
    with runner_for(emulator, deployed) as runner, pytest.raises(KeyboardInterrupt):
        runner.drain(until_empty=True)
    # THEN it stopped at once and gave the batch back
    assert time.monotonic() - began < 15
    assert _counts(emulator, deployed.queue_url) == (1, 0)
    assert not runner.function.code_dir.exists()


def test_a_drain_says_what_it_waits_for_and_where_the_log_is(
    emulator: LocalEmulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a job reported failed once (back after a 5 s visibility timeout, counted from the receive,
    # so from before its worker's cold start), a wait report every 0.5 s,
    # and a function log limited to 100 bytes (each run prints 60)
    monkeypatch.setattr(waiting, "WAIT_REPORT_SECONDS", 0.5)
    monkeypatch.setattr(function_log, "LOG_LIMIT_BYTES", 100)
    deployed = deploy(emulator, tmp_path, [("f", "g1", "fail_once")], visibility=5)
    said: list[str] = []

    # WHEN the queue is drained
    with runner_for(emulator, deployed) as runner:
        stats = runner.drain(until_empty=True, quiet_seconds=0.3, say=said.append)
        log = runner.log_path

    # THEN while only the in-flight message was left, the drain said so
    assert stats.deleted == 1
    assert said, "the drain said nothing while it waited"
    assert "1 message(s) in flight, none visible" in said[0]
    assert "at most 5 s after it was received" in said[0]
    # AND the function log stayed bounded: emptied past its limit, saying so
    assert log.stat().st_size < 200
    assert "log emptied at 100 bytes" in log.read_text()


def test_a_delete_refused_for_an_expired_receipt_leaves_the_record_which_comes_back(
    emulator: LocalEmulator, tmp_path: Path
) -> None:
    # GIVEN a job whose first run (2.5 s) outlives its 2-second visibility timeout (the function may
    # run 5 s), and one invocation at a time
    deployed = deploy(
        emulator, tmp_path, [("late", "g1", "outlive_visibility_once")], timeout=5, visibility=2, reserved=1
    )
    reports: list[InvocationReport] = []

    # WHEN the queue is drained
    with runner_for(emulator, deployed) as runner:
        stats = runner.drain(until_empty=True, on_batch=reports.append, quiet_seconds=0.3)
        log = runner.log_path.read_text()

    # THEN SQS refused the first delete (the receipt handle expired), the drain went on, and the
    # record was received again and deleted, as Lambda's poller does
    assert sorted((line["id"], line["attempt"]) for line in lines(deployed)) == [("late", 1), ("late", 2)]
    assert stats.delete_failures == 1
    assert stats.deleted == 1
    assert depth(emulator, deployed.queue_url) == 0
    # AND the function log says so in one line
    refused = [json.loads(line) for line in log.splitlines() if '"delete_refused"' in line]
    assert [(r["group"], r["error"]) for r in refused] == [
        ("g1", "InvalidParameterValue: The receipt handle has expired.")
    ]


def _visible(emu: LocalEmulator, url: str) -> int:
    attributes = emu.client("sqs").get_queue_attributes(
        QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"]
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"])


def test_a_handler_that_cannot_be_imported_stops_the_drain_and_says_why(
    emulator: LocalEmulator, tmp_path: Path
) -> None:
    # GIVEN a deployed function whose handler's module is not in its code, three jobs, visibility 60 s
    jobs = [(f"j{i}", f"g{i}", "ok") for i in range(3)]
    deployed = deploy(emulator, tmp_path, jobs, handler="nosuch.handle", visibility=60)
    said: list[str] = []
    # WHEN the queue is drained until empty
    with runner_for(emulator, deployed) as runner:
        stats = runner.drain(until_empty=True, quiet_seconds=0.3, say=said.append)
        log_path = runner.log_path
    # THEN the drain stopped instead of waiting on messages that cannot succeed, and says why
    assert stats.stopped is not None
    assert stats.stopped.startswith(
        f"function {deployed.name} cannot run any job: ModuleNotFoundError: No module named 'nosuch'. "
    )
    assert said == [f"stopped: {stats.stopped} (the traceback: {log_path})"]
    assert stats.as_dict()["function_log"] == str(log_path)
    # AND the log holds the error with its traceback, and why the drain stopped
    log = log_path.read_text()
    assert "[ERROR] ModuleNotFoundError: No module named 'nosuch'\nTraceback" in log
    assert f"[constructs-fifo] drain stopped: {stats.stopped}" in log
    # AND the jobs are visible again at once (not after 60 s), for the drain after the fix
    assert _visible(emulator, deployed.queue_url) == 3


def test_the_runtime_s_configuration_error_stops_the_drain(emulator: LocalEmulator, tmp_path: Path) -> None:
    # GIVEN a handler raising the runtime's ConfigurationError (a wrong environment)
    deployed = deploy(emulator, tmp_path, [("j1", "g", "config_error")], visibility=60)
    # WHEN the queue is drained
    with runner_for(emulator, deployed) as runner:
        stats = runner.drain(until_empty=True, quiet_seconds=0.3)
    # THEN it stops at once, naming the error
    assert stats.stopped is not None
    assert "cannot run any job: ConfigurationError: CONSTRUCTS_FIFO_MODE='x' is not a mode." in stats.stopped
    assert _visible(emulator, deployed.queue_url) == 1


def test_a_job_s_error_is_said_once_and_the_drain_goes_on(emulator: LocalEmulator, tmp_path: Path) -> None:
    # GIVEN two groups whose first invocation raises the same error, then succeeds
    jobs = [("a", "g1", "raise_once"), ("b", "g2", "raise_once")]
    deployed = deploy(emulator, tmp_path, jobs, batch_size=1, visibility=2)
    said: list[str] = []
    # WHEN the queue is drained
    with runner_for(emulator, deployed) as runner:
        stats = runner.drain(until_empty=True, quiet_seconds=0.3, say=said.append)
        log_path = runner.log_path
    # THEN the error was said once, with where its traceback is, and the drain went on to the end
    failed = [line for line in said if "failed" in line]
    assert failed == [
        f"an invocation of {deployed.name} failed: RuntimeError: boom (the traceback: {log_path})"
    ]
    assert (stats.stopped, stats.handler_errors, stats.deleted) == (None, 2, 2)
    assert log_path.read_text().count("[ERROR] RuntimeError: boom") == 2
