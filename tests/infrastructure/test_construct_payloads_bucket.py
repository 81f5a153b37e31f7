"""``large_payloads=True`` (construct/payloads/bucket.py): the payload bucket, its variable, its grants."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aws_cdk import App, Duration, Stack
from aws_cdk import aws_ecs as ecs
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk.assertions import Match, Template

from constructs_fifo import ContainerConsumer, OrderedAgentQueue
from constructs_fifo.runtime.payloads.pointer import ENV_PAYLOAD_BUCKET

REPO = Path(__file__).resolve().parents[2]


def _queue(stack: Stack, **props: Any) -> OrderedAgentQueue:
    return OrderedAgentQueue(
        stack, "Jobs", code=lambda_.Code.from_asset(str(REPO / "lambda")), handler="notifier.handle", **props
    )


def _actions_on_objects(template: Template, role_prefix: str) -> list[str]:
    """The actions ``role_prefix``'s policies allow on the payload bucket's objects."""
    found: list[str] = []
    for policy in template.find_resources("AWS::IAM::Policy").values():
        if not any(role["Ref"].startswith(role_prefix) for role in policy["Properties"]["Roles"]):
            continue
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            resources = (
                statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
            )
            if any("PayloadBucket" in str(resource) and "/*" in str(resource) for resource in resources):
                action = statement["Action"]
                found += [action] if isinstance(action, str) else action
    return sorted(found)


def test_without_the_option_there_is_no_bucket_and_no_variable() -> None:
    # GIVEN a queue with the default props
    stack = Stack(App(), "Small")
    queue = _queue(stack)
    template = Template.from_stack(stack)
    # THEN no bucket, no payload variable, no payload grant
    template.resource_count_is("AWS::S3::Bucket", 0)
    assert queue.payload_bucket is None
    [function] = template.find_resources("AWS::Lambda::Function").values()
    assert ENV_PAYLOAD_BUCKET not in function["Properties"]["Environment"]["Variables"]


def test_the_bucket_is_private_tls_only_expiring_with_the_claims_and_named_to_the_consumer() -> None:
    # GIVEN a queue with large payloads and a claim TTL of 36 hours
    stack = Stack(App(), "Large")
    queue = _queue(stack, large_payloads=True, claim_ttl=Duration.hours(36))
    template = Template.from_stack(stack)
    # THEN one bucket: S3-managed encryption, public access blocked, objects expiring after 2 days
    template.has_resource(
        "AWS::S3::Bucket",
        {
            "Properties": {
                "BucketEncryption": {
                    "ServerSideEncryptionConfiguration": [
                        Match.object_like({"ServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}})
                    ]
                },
                "PublicAccessBlockConfiguration": {
                    "BlockPublicAcls": True,
                    "BlockPublicPolicy": True,
                    "IgnorePublicAcls": True,
                    "RestrictPublicBuckets": True,
                },
                "LifecycleConfiguration": {
                    "Rules": [Match.object_like({"ExpirationInDays": 2, "Status": "Enabled"})]
                },
            },
            "DeletionPolicy": "Retain",  # as the tables (table_removal_policy)
        },
    )
    # AND its policy refuses plain HTTP
    template.has_resource_properties(
        "AWS::S3::BucketPolicy",
        {
            "PolicyDocument": {
                "Statement": Match.array_with(
                    [
                        Match.object_like(
                            {"Effect": "Deny", "Condition": {"Bool": {"aws:SecureTransport": "false"}}}
                        )
                    ]
                )
            }
        },
    )
    # AND the function finds it in its environment and may read bodies and write results, nothing else
    assert queue.payload_bucket is not None
    [function] = template.find_resources("AWS::Lambda::Function").values()
    assert ENV_PAYLOAD_BUCKET in function["Properties"]["Environment"]["Variables"]
    assert _actions_on_objects(template, "JobsFunctionRole") == ["s3:GetObject", "s3:PutObject"]


def test_with_a_key_the_bucket_is_kms_encrypted_with_it() -> None:
    # GIVEN a queue with large payloads and a customer managed key
    stack = Stack(App(), "Keyed")
    key = kms.Key(stack, "Key", enable_key_rotation=True)
    _queue(stack, large_payloads=True, encryption_key=key)
    template = Template.from_stack(stack)
    # THEN the bucket is SSE-KMS with that key (and a bucket key, fewer KMS calls)
    template.has_resource_properties(
        "AWS::S3::Bucket",
        {
            "BucketEncryption": {
                "ServerSideEncryptionConfiguration": [
                    {
                        "BucketKeyEnabled": True,
                        "ServerSideEncryptionByDefault": {
                            "SSEAlgorithm": "aws:kms",
                            "KMSMasterKeyID": {"Fn::GetAtt": [Match.string_like_regexp("Key"), "Arn"]},
                        },
                    }
                ]
            }
        },
    )


def test_a_sender_may_put_bodies_and_a_client_also_reads_results() -> None:
    # GIVEN a queue with large payloads, a producer role and a client function
    stack = Stack(App(), "Senders")
    queue = _queue(stack, large_payloads=True)
    producer = iam.Role(stack, "Producer", assumed_by=iam.AccountRootPrincipal())
    client = lambda_.Function(
        stack,
        "Server",
        runtime=lambda_.Runtime.PYTHON_3_12,
        handler="index.handler",
        code=lambda_.Code.from_inline("def handler(event, context):\n    return None\n"),
    )
    # WHEN the producer may enqueue and the function is a client
    queue.grant_enqueue(producer)
    queue.grant_client(client)
    template = Template.from_stack(stack)
    # THEN the producer may only put objects; the client puts bodies and gets results
    assert _actions_on_objects(template, "Producer") == ["s3:PutObject"]
    assert _actions_on_objects(template, "ServerServiceRole") == ["s3:GetObject", "s3:PutObject"]
    # AND the client finds the bucket in its environment
    [server] = [
        f for key, f in template.find_resources("AWS::Lambda::Function").items() if key.startswith("Server")
    ]
    assert ENV_PAYLOAD_BUCKET in server["Properties"]["Environment"]["Variables"]


def test_container_workers_find_the_bucket_and_may_read_bodies_and_write_results() -> None:
    # GIVEN a queue run by container workers, with large payloads
    stack = Stack(App(), "Workers")
    OrderedAgentQueue(
        stack,
        "Builds",
        handler="builds.run_tests",
        consumer=ContainerConsumer(image=ecs.ContainerImage.from_registry("public.ecr.aws/example/worker:1")),
        large_payloads=True,
    )
    template = Template.from_stack(stack)
    # THEN the worker container's environment names the bucket
    [task] = template.find_resources("AWS::ECS::TaskDefinition").values()
    [container] = task["Properties"]["ContainerDefinitions"]
    assert ENV_PAYLOAD_BUCKET in {variable["Name"] for variable in container["Environment"]}
    # AND the task role may read bodies and write results on the bucket's objects
    assert _actions_on_objects(template, "BuildsTaskRole") == ["s3:GetObject", "s3:PutObject"]
