#!/usr/bin/env python3
"""Integration test for a real account (see docs/deploying.md, "Integration tests on your account").

Deploys ``AgentWorkspaceStack`` (as ``AgentWorkspaceInteg``; the workers' image built from
``Dockerfile``, so Docker is needed where this runs; the bucket emptied on delete), then, through the
integ-tests assertion provider (a Lambda function making AWS calls), sends one workspace's pipeline to
the queue: ``apply_patch``, ``apply_patch``, a ``run_tests`` of 40 seconds (eight visibility timeouts of
the example's 5) and ``open_pr``. It waits, up to 20 minutes (the service scales from 0 tasks on
1-minute metrics), until:

- the ``open_pr`` job's claim is ``SUCCEEDED`` (ECS ran the image's worker, which read the queue, the
  claim table and the bucket with the task role's grants);
- the ``run_tests`` job's claim is ``SUCCEEDED`` on its **first** attempt: the heartbeats kept its
  records hidden and its claim held for eight visibility timeouts on real SQS and DynamoDB;
- the bucket holds the workspace's two commits (one per ``apply_patch`` job id) and one pull request.

Then integ-runner (or ``cdk destroy``) deletes both stacks.

Without an account, CI compares this app's synthesized templates with the committed snapshot
(tests/examples/test_examples_integ_snapshots.py), so a change to the template shows in review.
"""

from __future__ import annotations

from agent_workspace_stack import AgentWorkspaceStack
from aws_cdk import App, Duration
from aws_cdk.integ_tests_alpha import ExpectedResult, IApiCall, IntegTest

from constructs_fifo.client.producer import JobMessage, build_body, message_attributes
from constructs_fifo.runtime.constants import ATTR_ATTEMPTS, ATTR_ID, ATTR_STATUS, STATUS_SUCCEEDED

STACK_NAME = "AgentWorkspaceInteg"
WORKSPACE = "integ"
GROUP = f"ws#{WORKSPACE}"
TEST_RUN_SECONDS = 40
JOBS = (
    JobMessage("integ-patch-1", "apply_patch", {"files": {"README.md": "# calc\n"}}, GROUP),
    JobMessage(
        "integ-patch-2", "apply_patch", {"files": {"calc.py": "def add(a, b):\n    return a + b\n"}}, GROUP
    ),
    JobMessage("integ-tests", "run_tests", {"durationSeconds": TEST_RUN_SECONDS}, GROUP),
    JobMessage("integ-pr", "open_pr", {"title": "calc"}, GROUP),
)
#: Every assertion waits (its waiter fails the assertion stack's deployment when it never holds), so a
#: plain `cdk deploy` of this app fails on a failed assertion too, not only integ-runner.
WAIT = Duration.minutes(20)
POLL = Duration.seconds(30)
SETTLED = Duration.minutes(2)

app = App()
stack = AgentWorkspaceStack(app, STACK_NAME, empty_bucket_on_delete=True)
integ = IntegTest(app, "AgentWorkspaceIntegTest", test_cases=[stack], stack_update_workflow=False)
claim_table = stack.pipeline.claim_table
assert claim_table is not None  # claim mode
claim_table_name = claim_table.table_name

send = integ.assertions.aws_api_call(
    "SQS",
    "sendMessageBatch",
    {
        "QueueUrl": stack.pipeline.queue.queue_url,
        "Entries": [
            {
                "Id": str(index),
                "MessageBody": build_body(job),
                "MessageGroupId": job.group,
                "MessageDeduplicationId": job.job_id,
                "MessageAttributes": message_attributes(job),
            }
            for index, job in enumerate(JOBS)
        ],
    },
)
send.expect(ExpectedResult.object_like({"Successful": [{"Id": "0"}, {"Id": "1"}, {"Id": "2"}, {"Id": "3"}]}))
send.wait_for_assertions(total_timeout=SETTLED)  # a resend is one job: the dedup id is the job id
# The provider's role gets `sqs:SendMessageBatch` from the API's name, which is no IAM action:
# SendMessageBatch is authorized by sqs:SendMessage.
send.provider.add_to_role_policy(
    {"Effect": "Allow", "Action": ["sqs:SendMessage"], "Resource": [stack.pipeline.queue.queue_arn]}
)


def _claim(job: JobMessage) -> IApiCall:
    return integ.assertions.aws_api_call(
        "DynamoDB",
        "getItem",
        {"TableName": claim_table_name, "Key": {ATTR_ID: {"S": job.job_id}}, "ConsistentRead": True},
    )


pull_request = _claim(JOBS[3])
pull_request.expect(ExpectedResult.object_like({"Item": {ATTR_STATUS: {"S": STATUS_SUCCEEDED}}}))
pull_request.wait_for_assertions(total_timeout=WAIT, interval=POLL)
tests_run = _claim(JOBS[2])
tests_run.expect(
    ExpectedResult.object_like({"Item": {ATTR_STATUS: {"S": STATUS_SUCCEEDED}, ATTR_ATTEMPTS: {"N": "1"}}})
)
tests_run.wait_for_assertions(total_timeout=SETTLED)
steps = [pull_request, tests_run]
for prefix, count in (("commits", 2), ("pulls", 1)):
    listed = integ.assertions.aws_api_call(
        "S3", "listObjectsV2", {"Bucket": stack.bucket.bucket_name, "Prefix": f"{WORKSPACE}/{prefix}/"}
    )
    listed.expect(ExpectedResult.object_like({"KeyCount": count}))
    listed.wait_for_assertions(total_timeout=SETTLED)
    steps.append(listed)
# ListObjectsV2 is authorized by s3:ListBucket (the provider's own statement names s3:ListObjectsV2).
send.provider.add_to_role_policy(
    {"Effect": "Allow", "Action": ["s3:ListBucket"], "Resource": [stack.bucket.bucket_arn]}
)
chain: IApiCall = send
for step in steps:
    chain = chain.next(step)

app.synth()
