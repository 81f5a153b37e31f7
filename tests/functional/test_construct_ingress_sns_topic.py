"""What ``SnsFifoIngress`` wires, run on moto in-process: an SNS FIFO topic, a raw subscription of a
FIFO queue with a filter policy, and the publish call docs/events.md gives. The job that arrives is the
producer's job: its group and deduplication id passed through, its body the envelope, its triage
attributes intact (moto 5.2.5 behaves as SNS's fifo-message-grouping page says)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from constructs_fifo.client.producer import JobMessage, message_attributes, validate_job
from constructs_fifo.runtime.job import parse_record

REGION = "eu-west-1"


@pytest.fixture
def wired() -> Iterator[tuple[Any, Any, str, str]]:
    """A FIFO topic and a FIFO queue subscribed raw, only ``run_tests`` jobs let through."""
    with mock_aws():
        sns = boto3.client("sns", region_name=REGION)
        sqs = boto3.client("sqs", region_name=REGION)
        topic_arn = sns.create_topic(Name="jobs.fifo", Attributes={"FifoTopic": "true"})["TopicArn"]
        queue_url = sqs.create_queue(QueueName="jobs.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
        queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"][
            "QueueArn"
        ]
        sns.subscribe(
            TopicArn=topic_arn,
            Protocol="sqs",
            Endpoint=queue_arn,
            Attributes={"RawMessageDelivery": "true", "FilterPolicy": json.dumps({"jobType": ["run_tests"]})},
        )
        yield sns, sqs, topic_arn, queue_url


def test_a_published_job_arrives_as_the_producers_job_in_its_group(wired: tuple[Any, Any, str, str]) -> None:
    sns, sqs, topic_arn, queue_url = wired
    # GIVEN jobs of two groups published as docs/events.md says, one of a type the filter drops
    jobs = [
        JobMessage("j-0", "run_tests", {"ref": "a"}, group="ws#1", seq=0),
        JobMessage("j-1", "open_pr", {"ref": "a"}, group="ws#1", seq=1),
        JobMessage("j-2", "run_tests", {"ref": "b"}, group="ws#2", seq=0),
        JobMessage("j-3", "run_tests", {"ref": "a"}, group="ws#1", seq=2),
    ]
    for job in jobs:
        sns.publish(
            TopicArn=topic_arn,
            Message=validate_job(job),
            MessageGroupId=job.group,
            MessageDeduplicationId=job.job_id,
            MessageAttributes=message_attributes(job),
        )
    # WHEN the queue is read
    received = sqs.receive_message(
        QueueUrl=queue_url, MaxNumberOfMessages=10, AttributeNames=["All"], MessageAttributeNames=["All"]
    )["Messages"]
    # THEN the filtered jobs arrive, each in its group with its id, body and triage attributes
    arrived = [
        (
            message["Attributes"]["MessageGroupId"],
            message["Attributes"]["MessageDeduplicationId"],
            {name: value["StringValue"] for name, value in message["MessageAttributes"].items()},
        )
        for message in received
    ]
    assert sorted(arrived) == sorted(
        (job.group, job.job_id, {"jobId": job.job_id, "jobType": job.job_type, "group": job.group})
        for job in jobs
        if job.job_type == "run_tests"
    )
    # AND the runtime reads each body as the job that was published, in publish order per group
    parsed = [
        parse_record({"messageId": m["MessageId"], "body": m["Body"], "attributes": m["Attributes"]})
        for m in received
    ]
    assert [(j.group, j.id, j.body["seq"]) for j in parsed if j.group == "ws#1"] == [
        ("ws#1", "j-0", 0),
        ("ws#1", "j-3", 2),
    ]
