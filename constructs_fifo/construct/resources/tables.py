"""The DynamoDB tables of an :class:`~constructs_fifo.construct.OrderedAgentQueue`.

Both tables are on demand, with point-in-time recovery, encrypted with the construct's key when there
is one (else the AWS managed key), and follow ``table_removal_policy`` (default RETAIN: they hold
claims, kept jobs and states, never cache).

- The **claim table** (claim mode): partition key ``id``; TTL ``expiration`` (claims are bookkeeping).
- The **group table** (PARK policy or state mode): partition key ``group``, sort key ``sk``: park
  headers, kept jobs and state mode's states. No TTL: none of it may expire.

Which of them a queue has follows from its mode and dead-job policy (:func:`build_tables`).
"""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_kms as kms
from constructs import Construct

from constructs_fifo.runtime import constants

__all__ = ["Tables", "build_claim_table", "build_group_table", "build_tables"]


@dataclass(frozen=True)
class Tables:
    """What :func:`build_tables` built."""

    #: Claim mode only.
    claim_table: dynamodb.Table | None
    #: PARK policy or state mode.
    group_table: dynamodb.Table | None


def build_tables(
    scope: Construct,
    *,
    mode: constants.JobMode,
    on_dead_job: constants.DeadJobPolicy,
    encryption_key: kms.IKey | None,
    removal_policy: RemovalPolicy,
) -> Tables:
    """The tables a queue of ``mode`` under ``on_dead_job`` needs: the claim table in claim mode (a job
    is claimed before it runs), the group table under PARK (parked groups and kept jobs) and in state
    mode (each group's state)."""
    claim_table = (
        build_claim_table(scope, encryption_key=encryption_key, removal_policy=removal_policy)
        if mode is constants.JobMode.CLAIM
        else None
    )
    group_table = (
        build_group_table(scope, encryption_key=encryption_key, removal_policy=removal_policy)
        if on_dead_job is constants.DeadJobPolicy.PARK or mode is constants.JobMode.STATE
        else None
    )
    return Tables(claim_table=claim_table, group_table=group_table)


def build_claim_table(
    scope: Construct, *, encryption_key: kms.IKey | None, removal_policy: RemovalPolicy
) -> dynamodb.Table:
    """The claim table (construct id ``ClaimTable``)."""
    return _table(
        scope,
        "ClaimTable",
        partition_key=constants.ATTR_ID,
        sort_key=None,
        ttl_attribute=constants.ATTR_EXPIRATION,
        encryption_key=encryption_key,
        removal_policy=removal_policy,
    )


def build_group_table(
    scope: Construct, *, encryption_key: kms.IKey | None, removal_policy: RemovalPolicy
) -> dynamodb.Table:
    """The group table (construct id ``GroupTable``)."""
    return _table(
        scope,
        "GroupTable",
        partition_key=constants.GROUP_ATTR_GROUP,
        sort_key=constants.GROUP_ATTR_SK,
        ttl_attribute=None,
        encryption_key=encryption_key,
        removal_policy=removal_policy,
    )


def _table(
    scope: Construct,
    id_: str,
    *,
    partition_key: str,
    sort_key: str | None,
    ttl_attribute: str | None,
    encryption_key: kms.IKey | None,
    removal_policy: RemovalPolicy,
) -> dynamodb.Table:
    return dynamodb.Table(
        scope,
        id_,
        partition_key=dynamodb.Attribute(name=partition_key, type=dynamodb.AttributeType.STRING),
        sort_key=dynamodb.Attribute(name=sort_key, type=dynamodb.AttributeType.STRING) if sort_key else None,
        time_to_live_attribute=ttl_attribute,
        billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
        point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
            point_in_time_recovery_enabled=True
        ),
        encryption=(
            dynamodb.TableEncryption.CUSTOMER_MANAGED
            if encryption_key
            else dynamodb.TableEncryption.AWS_MANAGED
        ),
        encryption_key=encryption_key,
        removal_policy=removal_policy,
    )
