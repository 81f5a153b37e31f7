"""``large_payloads=True``: the S3 bucket of bodies and results too large for SQS and the claim table.

Bodies over SQS's 1 MiB (the producer) and job results over 64 KiB (claim mode) go to the bucket, the
message or the claim carrying a pointer in the AWS SQS Extended Client Library's format
(:mod:`constructs_fifo.runtime.payloads`). The bucket:

* is encrypted with the queue's ``encryption_key`` when there is one (SSE-KMS), else S3-managed (SSE-S3);
* refuses plain HTTP (``enforceSSL``) and blocks every public access;
* expires its objects after ``claim_ttl`` (whole days, rounded up): a body is read while its message
  lives and a result while its claim does, and no longer;
* follows ``table_removal_policy``, as the tables whose claims point into it.

Least privilege, on the bucket's objects only: the consumer gets ``s3:GetObject`` (bodies) and
``s3:PutObject`` (results); ``grant_enqueue`` adds ``s3:PutObject``; ``grant_client`` adds both (its
client sends large bodies and reads large results). The variable :data:`ENV_PAYLOAD_BUCKET` carries the
bucket's name to the consumer and to a client.
"""

from __future__ import annotations

import math
from typing import Final, Protocol, cast

from aws_cdk import Acknowledgment, CfnElement, Duration, RemovalPolicy, Stack, Token, Validations
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from constructs import Construct

from constructs_fifo.construct.settings import defaults
from constructs_fifo.runtime.payloads.pointer import ENV_PAYLOAD_BUCKET

__all__ = [
    "CONSUMER_PAYLOAD_ACTIONS",
    "ENV_PAYLOAD_BUCKET",
    "READ_PAYLOAD_ACTIONS",
    "SEND_PAYLOAD_ACTIONS",
    "build_large_payloads",
    "build_payload_bucket",
    "expiration_days",
    "grant_payloads",
    "grant_sending",
]

#: What the consumer does with the bucket's objects: read a body, write a large result.
CONSUMER_PAYLOAD_ACTIONS: Final = ("s3:GetObject", "s3:PutObject")
#: What a sender does: write a large body.
SEND_PAYLOAD_ACTIONS: Final = ("s3:PutObject",)
#: What an outcome reader does: read a large result.
READ_PAYLOAD_ACTIONS: Final = ("s3:GetObject",)

#: Why the bucket keeps no server access log (cdk-nag AwsSolutions-S1).
_ACCESS_LOGS: Final = Acknowledgment(
    id="AwsSolutions::AwsSolutions-S1",
    reason="The payload bucket holds transient job bodies and results written and read only by the "
    "queue's own roles, each object expiring with its claim; CloudTrail data events are the audit trail "
    "to enable where one is required, and an access-log bucket per queue would outlive its objects.",
)
#: Why the grants name the bucket's objects with a wildcard (cdk-nag AwsSolutions-IAM5, per bucket).
_OBJECT_KEYS_REASON: Final = (
    "Payload objects are keyed by a fresh uuid per body or result, so the grant names the payload "
    "bucket's objects (<bucket arn>/*) and only that bucket's: no key is known when the policy is written."
)


class _TakesEnvironment(Protocol):
    """A Lambda function or an ECS container definition: both take environment variables."""

    def add_environment(self, key: str, value: str) -> object: ...  # pragma: no cover - a protocol


def build_large_payloads(
    scope: Construct,
    *,
    large_payloads: bool,
    encryption_key: kms.IKey | None,
    claim_ttl: Duration,
    removal_policy: RemovalPolicy,
    consumer: tuple[iam.IGrantable | None, _TakesEnvironment | None],
) -> s3.Bucket | None:
    """With ``large_payloads``: the bucket, its name in the consumer's environment and the consumer's
    grants (:data:`CONSUMER_PAYLOAD_ACTIONS`); without it, ``None`` and nothing built.

    ``consumer`` is the grantee and what takes the variable: the function twice, or the workers' task
    role and container.
    """
    if not large_payloads:
        return None
    grantee, environment = consumer
    assert grantee is not None and environment is not None  # every queue has a consumer
    bucket = build_payload_bucket(
        scope, encryption_key=encryption_key, claim_ttl=claim_ttl, removal_policy=removal_policy
    )
    environment.add_environment(ENV_PAYLOAD_BUCKET, bucket.bucket_name)
    grant_payloads(grantee, bucket, CONSUMER_PAYLOAD_ACTIONS, encryption_key)
    return bucket


def grant_sending(
    grantee: iam.IGrantable, bucket: s3.IBucket | None, encryption_key: kms.IKey | None, grant: iam.Grant
) -> iam.Grant:
    """``grant`` and, with a payload bucket, :data:`SEND_PAYLOAD_ACTIONS` on its objects."""
    if bucket is None:
        return grant
    return grant.combine(grant_payloads(grantee, bucket, SEND_PAYLOAD_ACTIONS, encryption_key))


def expiration_days(claim_ttl: Duration) -> int:
    """``claim_ttl`` in whole days, rounded up (at least 1); the default's for a token.

    >>> expiration_days(Duration.hours(36)), expiration_days(Duration.seconds(5))
    (2, 1)
    """
    ttl = defaults.CLAIM_TTL if Token.is_unresolved(claim_ttl.to_string()) else claim_ttl
    return max(1, math.ceil(ttl.to_seconds() / 86_400))


def build_payload_bucket(
    scope: Construct, *, encryption_key: kms.IKey | None, claim_ttl: Duration, removal_policy: RemovalPolicy
) -> s3.Bucket:
    """The payload bucket (construct id ``PayloadBucket``); see the module docstring."""
    bucket = s3.Bucket(
        scope,
        "PayloadBucket",
        encryption=s3.BucketEncryption.KMS if encryption_key is not None else s3.BucketEncryption.S3_MANAGED,
        encryption_key=encryption_key,
        bucket_key_enabled=encryption_key is not None,
        enforce_ssl=True,
        block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
        lifecycle_rules=[
            s3.LifecycleRule(
                expiration=Duration.days(expiration_days(claim_ttl)),
                abort_incomplete_multipart_upload_after=Duration.days(1),
            )
        ],
        removal_policy=removal_policy,
    )
    Validations.of(bucket).acknowledge(_ACCESS_LOGS)
    return bucket


def grant_payloads(
    grantee: iam.IGrantable,
    bucket: s3.IBucket,
    actions: tuple[str, ...],
    encryption_key: kms.IKey | None,
) -> iam.Grant:
    """``actions`` on the bucket's objects (and, with a key, what S3 needs of it for them)."""
    grant = iam.Grant.add_to_principal_or_resource(
        grantee=grantee, actions=list(actions), resource_arns=[bucket.arn_for_objects("*")], resource=bucket
    )
    if encryption_key is not None:
        key_actions = (
            ["kms:Decrypt"] if actions == READ_PAYLOAD_ACTIONS else ["kms:GenerateDataKey", "kms:Decrypt"]
        )
        grant = grant.combine(encryption_key.grant(grantee, *key_actions))
    role = grantee.grant_principal
    if isinstance(role, Construct) and isinstance(bucket, s3.Bucket):
        stack = Stack.of(bucket)
        objects = (
            f"<{stack.resolve(stack.get_logical_id(cast(CfnElement, bucket.node.default_child)))}.Arn>/*"
        )
        Validations.of(role).acknowledge(
            Acknowledgment(
                id=f"AwsSolutions::AwsSolutions-IAM5[Resource::{objects}]", reason=_OBJECT_KEYS_REASON
            )
        )
    return grant
