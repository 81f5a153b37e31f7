"""Who may do what with an :class:`~constructs_fifo.construct.OrderedAgentQueue`: least privilege.

Every grant names its actions here, once. No statement has ``Resource: "*"``, except those AWS
offers no narrower resource for: with ``vpc``, EC2's two Describe actions of the network-interface
actions Lambda needs (:data:`VPC_ACTIONS`, as AWS's ``AWSLambdaVPCAccessExecutionRole``; the others are
scoped: creating an interface to the function's subnets and security groups, changing one to the
account's interfaces in the region); with ``tracing=ACTIVE``, X-Ray's
``PutTraceSegments``/``PutTelemetryRecords`` (added by CDK). Each is acknowledged for cdk-nag's
AwsSolutions-IAM5 on the role with that reason (:data:`WILDCARD_ACKNOWLEDGEMENTS`).

- :func:`grant_function_access`: what the job function's role needs (its log group, its tables, sending
  dead jobs and wake-up messages, the key), besides consuming the queue, which binding the SQS event
  source grants.
- :func:`grant_worker_access`: the container workers' task role: the same, minus the log group (the
  task's log driver writes with the execution role), plus consuming the queue (:data:`CONSUME_ACTIONS`:
  a heartbeat is ``ChangeMessageVisibility``) and the task's own scale-in protection
  (:data:`TASK_PROTECTION_ACTIONS`, on the cluster's tasks: acknowledged for AwsSolutions-IAM5).
- :func:`grant_enqueue`: a producer sends jobs.
- :func:`grant_read_state`: a reader of state mode's group states.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from aws_cdk import Acknowledgment, Annotations, ArnFormat, Stack, Validations
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sqs as sqs
from constructs import Construct

__all__ = [
    "CLAIM_TABLE_ACTIONS",
    "CLAIM_TABLE_KEY_ACTIONS",
    "CONSUME_ACTIONS",
    "ENQUEUE_ACTIONS",
    "ENQUEUE_KEY_ACTIONS",
    "GROUP_STEER_ACTIONS",
    "GROUP_TABLE_ACTIONS",
    "LOG_ACTIONS",
    "LOG_KEY_ACTIONS",
    "READ_STATE_ACTIONS",
    "READ_STATE_KEY_ACTIONS",
    "SEND_ACTIONS",
    "SHARED_STORAGE_ACTIONS",
    "STEER_ACTIONS",
    "TASK_PROTECTION_ACTIONS",
    "TASK_PROTECTION_REASON",
    "VPC_ACTIONS",
    "VPC_CREATE_ACTIONS",
    "VPC_DESCRIBE_ACTIONS",
    "VPC_INTERFACE_ACTIONS",
    "WARNING_LOG_KEY_POLICY",
    "WILDCARD_ACKNOWLEDGEMENTS",
    "FunctionNetwork",
    "acknowledge_wildcards",
    "allow_log_encryption",
    "allow_log_encryption_or_warn",
    "grant_enqueue",
    "grant_function_access",
    "grant_read_state",
    "grant_steer",
    "grant_worker_access",
]

#: The warning id of an imported key whose policy the stack cannot add to, for
#: ``Validations.of(scope).acknowledge(id=...)``.
WARNING_LOG_KEY_POLICY = "constructs-fifo:encryptionKeyPolicyNotManaged"
#: What the function does on its own log group.
LOG_ACTIONS = ("logs:CreateLogStream", "logs:PutLogEvents")
#: The only DynamoDB actions the function gets, on the claim table only.
CLAIM_TABLE_ACTIONS = (
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:ConditionCheckItem",
)
#: The DynamoDB actions the function gets on the group table (PARK policy): one BatchGetItem of park
#: headers per batch, a Query of kept records, and TransactWriteItems (Put/Update/Delete/Condition).
GROUP_TABLE_ACTIONS = (
    "dynamodb:BatchGetItem",
    "dynamodb:GetItem",
    "dynamodb:Query",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:ConditionCheckItem",
)
#: What :func:`grant_read_state` grants on the state table ...
READ_STATE_ACTIONS = ("dynamodb:GetItem",)
#: ... and on the encryption key, when there is one.
READ_STATE_KEY_ACTIONS = ("kms:Decrypt",)
#: What the function sends: dead jobs to the dead-letter queue and (PARK) a resumed group's wake-up
#: message to the source queue.
SEND_ACTIONS = ("sqs:SendMessage",)
#: What the function needs on a customer managed key to read and write the claim table.
CLAIM_TABLE_KEY_ACTIONS = ("kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey", "kms:DescribeKey")
#: What a function in a VPC does to its network interfaces: the actions of AWS's managed policy
#: ``AWSLambdaVPCAccessExecutionRole`` (its log actions are in :data:`LOG_ACTIONS`), in three statements.
#: Lambda checks the role before it creates the interfaces. EC2's Describe actions take no resource
#: (``Resource: "*"``, read only) ...
VPC_DESCRIBE_ACTIONS = ("ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets")
#: ... creating an interface names the interface, its subnet and its security groups: the function's own
#: subnets and groups ...
VPC_CREATE_ACTIONS = ("ec2:CreateNetworkInterface",)
#: ... and the rest act on an existing interface: the account's interfaces in the stack's region.
VPC_INTERFACE_ACTIONS = (
    "ec2:DeleteNetworkInterface",
    "ec2:AssignPrivateIpAddresses",
    "ec2:UnassignPrivateIpAddresses",
)
VPC_ACTIONS = (*VPC_CREATE_ACTIONS, *VPC_DESCRIBE_ACTIONS, *VPC_INTERFACE_ACTIONS)
#: What a worker task does on its shared storage (``SharedStorage``), through its access point only: no
#: ``ClientRootAccess``.
SHARED_STORAGE_ACTIONS = ("elasticfilesystem:ClientMount", "elasticfilesystem:ClientWrite")
#: What CloudWatch Logs needs on the key of an encrypted log group (AWS: encrypt-log-data-kms).
LOG_KEY_ACTIONS = ("kms:Encrypt*", "kms:Decrypt*", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:Describe*")
#: cdk-nag's AwsSolutions-IAM5 on the role, per reason a wildcard resource is there.
WILDCARD_ACKNOWLEDGEMENTS = {
    "vpc": Acknowledgment(
        id="AwsSolutions::AwsSolutions-IAM5[Resource::*]",
        reason="vpc: a function in a VPC creates, describes and deletes its network interfaces; "
        "ec2:DescribeNetworkInterfaces and ec2:DescribeSubnets support no resource-level permissions (the "
        "other actions of AWS's AWSLambdaVPCAccessExecutionRole are scoped); inline, no managed policy.",
    ),
    "vpc interfaces": Acknowledgment(
        id="AwsSolutions::AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ec2:<AWS::Region>:"
        "<AWS::AccountId>:network-interface/*]",
        reason="vpc: Lambda creates the function's network interfaces and deletes or re-addresses them "
        "later; their ids are known only then, so the statement names the account's interfaces in the "
        "region (creating one is also bound to the function's subnets and security groups).",
    ),
    "tracing": Acknowledgment(
        id="AwsSolutions::AwsSolutions-IAM5[Resource::*]",
        reason="tracing=ACTIVE: xray:PutTraceSegments and xray:PutTelemetryRecords support no "
        "resource-level permissions (CDK adds them on Resource '*').",
    ),
}
#: What a consumer does on the queue: what binding the SQS event source grants the function (CDK's
#: ``grant_consume_messages``), granted to the container's task role directly; ChangeMessageVisibility is
#: also the heartbeat's and the backoff's.
CONSUME_ACTIONS = (
    "sqs:ReceiveMessage",
    "sqs:ChangeMessageVisibility",
    "sqs:GetQueueUrl",
    "sqs:DeleteMessage",
    "sqs:GetQueueAttributes",
)
#: What the ECS agent's task-protection endpoint calls with the task's role while a slot runs a job.
TASK_PROTECTION_ACTIONS = ("ecs:GetTaskProtection", "ecs:UpdateTaskProtection")
#: Why the task role's protection statement names the cluster's tasks (AwsSolutions-IAM5).
TASK_PROTECTION_REASON = (
    "task scale-in protection: a worker protects its own task while a slot runs a job; a task's id is "
    "known only when it starts, so the statement names the tasks of this service's cluster."
)
#: What :func:`grant_enqueue` grants on the queue ...
ENQUEUE_ACTIONS = ("sqs:SendMessage",)
#: ... and on the encryption key, when there is one.
ENQUEUE_KEY_ACTIONS = ("kms:GenerateDataKey", "kms:Decrypt")
#: What :func:`grant_steer` grants on the claim table (``JobSteering.cancel`` in claim mode: a consistent
#: read, then a conditional put or update of one item, never a delete; ``cancel_group(running=True)``'s
#: scan for the group's running job).
#: On a key it grants :data:`CLAIM_TABLE_KEY_ACTIONS`: it writes the tables as the function does.
STEER_ACTIONS = ("dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:Scan")
#: ... and on the group table (state mode's cancel; hold and release: the park header read with
#: BatchGetItem and written in a transaction of puts and updates; a group cancel's Query of kept jobs,
#: and a live group's cancel whose marker could not be sent deleting its header again).
GROUP_STEER_ACTIONS = (
    "dynamodb:BatchGetItem",
    "dynamodb:GetItem",
    "dynamodb:Query",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
)


@dataclass(frozen=True)
class FunctionNetwork:
    """Where a function in a VPC creates its network interfaces: its subnets' and security groups' ids."""

    subnet_ids: Sequence[str]
    security_group_ids: Sequence[str]


def _grant_network_interfaces(role: iam.Role, network: FunctionNetwork) -> None:
    stack = Stack.of(role)

    def ec2_arns(kind: str, names: Sequence[str]) -> list[str]:
        return [
            stack.format_arn(
                service="ec2", resource=kind, resource_name=name, arn_format=ArnFormat.SLASH_RESOURCE_NAME
            )
            for name in names
        ]

    interfaces = ec2_arns("network-interface", ["*"])
    role.add_to_policy(iam.PolicyStatement(actions=list(VPC_DESCRIBE_ACTIONS), resources=["*"]))
    role.add_to_policy(
        iam.PolicyStatement(
            actions=list(VPC_CREATE_ACTIONS),
            resources=[
                *interfaces,
                *ec2_arns("subnet", network.subnet_ids),
                *ec2_arns("security-group", network.security_group_ids),
            ],
        )
    )
    role.add_to_policy(iam.PolicyStatement(actions=list(VPC_INTERFACE_ACTIONS), resources=interfaces))


def grant_function_access(
    role: iam.Role,
    *,
    log_group: logs.ILogGroup | None,
    queue: sqs.IQueue,
    dead_letter_queue: sqs.IQueue,
    claim_table: dynamodb.ITable | None,
    group_table: dynamodb.ITable | None,
    parks: bool,
    encryption_key: kms.IKey | None,
    network: FunctionNetwork | None = None,
) -> None:
    """Add the function's statements to ``role``: logs, tables, sends and the key.

    Parameters
    ----------
    role
        The function's role.
    log_group
        Its own log group (the only one it writes); ``None``: the role writes no logs (a task's log
        driver writes with the execution role).
    queue, dead_letter_queue
        Dead jobs are sent to the dead-letter queue; under PARK a resumed group's wake-up message is
        sent to the queue.
    claim_table, group_table
        The tables the function reads and writes (either may be absent).
    parks
        Whether the dead-job policy is PARK.
    encryption_key
        The key of the queues and tables, if any.
    network
        The function's subnets and security groups when it runs in a VPC (:data:`VPC_ACTIONS`).
    """
    if log_group is not None:
        role.add_to_policy(
            iam.PolicyStatement(actions=list(LOG_ACTIONS), resources=[log_group.log_group_arn])
        )
    if network is not None:
        _grant_network_interfaces(role, network)
    if claim_table is not None:
        role.add_to_policy(
            iam.PolicyStatement(actions=list(CLAIM_TABLE_ACTIONS), resources=[claim_table.table_arn])
        )
    send_to = [dead_letter_queue.queue_arn]
    if group_table is not None:
        role.add_to_policy(
            iam.PolicyStatement(actions=list(GROUP_TABLE_ACTIONS), resources=[group_table.table_arn])
        )
    if parks:
        send_to.append(queue.queue_arn)
    role.add_to_policy(iam.PolicyStatement(actions=list(SEND_ACTIONS), resources=send_to))
    if encryption_key is not None:
        encryption_key.grant(role, *CLAIM_TABLE_KEY_ACTIONS)  # also covers sending to the queues


def allow_log_encryption(key: kms.IKey, log_group_scope: Stack) -> bool:
    """Let CloudWatch Logs of the stack's region use ``key`` for the account's log groups there.

    The condition names log groups by ARN pattern (``log-group:*`` of this account and region), not
    the function's log group itself: that ARN depends on the group, which depends on the key.

    Returns
    -------
    bool
        Whether the statement was added: False for an imported key, whose policy the stack does not own.
    """
    statement = iam.PolicyStatement(
        actions=list(LOG_KEY_ACTIONS),
        principals=[iam.ServicePrincipal(f"logs.{log_group_scope.region}.amazonaws.com")],
        resources=["*"],
        conditions={
            "ArnLike": {
                "kms:EncryptionContext:aws:logs:arn": log_group_scope.format_arn(
                    service="logs",
                    resource="log-group",
                    resource_name="*",
                    arn_format=ArnFormat.COLON_RESOURCE_NAME,
                )
            }
        },
    )
    return key.add_to_resource_policy(statement).statement_added


def allow_log_encryption_or_warn(scope: Construct, key: kms.IKey) -> None:
    """:func:`allow_log_encryption` in ``scope``'s stack; for an imported key, whose policy the stack
    does not own, warn (:data:`WARNING_LOG_KEY_POLICY`) with the
    statement to add by hand."""
    if not allow_log_encryption(key, Stack.of(scope)):
        Annotations.of(scope).add_warning_v2(
            WARNING_LOG_KEY_POLICY,
            "encryption_key is imported, so this stack cannot add to its key policy the statement "
            "CloudWatch Logs needs to encrypt the function's log group (log group creation fails "
            "without it); allow the service principal logs.<region>.amazonaws.com "
            f"{', '.join(LOG_KEY_ACTIONS)} on the key, with the condition "
            "ArnLike kms:EncryptionContext:aws:logs:arn = arn:aws:logs:<region>:<account>:log-group:*.",
        )


def acknowledge_wildcards(role: iam.Role, *, in_vpc: bool, traced: bool) -> None:
    """Acknowledge AwsSolutions-IAM5 on ``role`` for the wildcard statements it must hold."""
    reasons = [
        WILDCARD_ACKNOWLEDGEMENTS[name] for name, given in (("vpc", in_vpc), ("tracing", traced)) if given
    ]
    if reasons:
        joined = " ".join(r.reason for r in reasons)
        Validations.of(role).acknowledge(Acknowledgment(id=reasons[0].id, reason=joined))
    if in_vpc:
        Validations.of(role).acknowledge(WILDCARD_ACKNOWLEDGEMENTS["vpc interfaces"])


def grant_enqueue(
    grantee: iam.IGrantable, *, queue: sqs.IQueue, encryption_key: kms.IKey | None
) -> iam.Grant:
    """``sqs:SendMessage`` on ``queue`` (and, with a key, what SQS needs to encrypt for the sender)."""
    grant = iam.Grant.add_to_principal_or_resource(
        grantee=grantee,
        actions=list(ENQUEUE_ACTIONS),
        resource_arns=[queue.queue_arn],
        resource=queue,
    )
    if encryption_key is not None:
        grant = grant.combine(encryption_key.grant(grantee, *ENQUEUE_KEY_ACTIONS))
    return grant


def grant_read_state(
    grantee: iam.IGrantable, *, table: dynamodb.Table, encryption_key: kms.IKey | None
) -> iam.Grant:
    """``dynamodb:GetItem`` on the state ``table`` (and ``kms:Decrypt`` on the key, if any)."""
    grant = iam.Grant.add_to_principal_or_resource(
        grantee=grantee, actions=list(READ_STATE_ACTIONS), resource_arns=[table.table_arn], resource=table
    )
    if encryption_key is not None:
        grant = grant.combine(encryption_key.grant(grantee, *READ_STATE_KEY_ACTIONS))
    return grant


def grant_steer(
    grantee: iam.IGrantable,
    *,
    queue: sqs.IQueue,
    claim_table: dynamodb.Table | None,
    group_table: dynamodb.Table | None,
    encryption_key: kms.IKey | None,
) -> iam.Grant:
    """:data:`STEER_ACTIONS` on the claim table, :data:`GROUP_STEER_ACTIONS` on the group table (each when
    the queue has it), ``sqs:SendMessage`` on the queue (a release's wake-up message), and what writing
    the tables and sending need on the key, if any."""
    grant = iam.Grant.add_to_principal_or_resource(
        grantee=grantee, actions=list(ENQUEUE_ACTIONS), resource_arns=[queue.queue_arn], resource=queue
    )
    for table, actions in ((claim_table, STEER_ACTIONS), (group_table, GROUP_STEER_ACTIONS)):
        if table is not None:
            grant = grant.combine(
                iam.Grant.add_to_principal_or_resource(
                    grantee=grantee, actions=list(actions), resource_arns=[table.table_arn], resource=table
                )
            )
    if encryption_key is not None:
        grant = grant.combine(encryption_key.grant(grantee, *CLAIM_TABLE_KEY_ACTIONS))
    return grant


def grant_worker_access(
    role: iam.Role,
    *,
    queue: sqs.IQueue,
    dead_letter_queue: sqs.IQueue,
    claim_table: dynamodb.ITable | None,
    group_table: dynamodb.ITable | None,
    parks: bool,
    encryption_key: kms.IKey | None,
    cluster_name: str,
    cluster_in_findings: str | None,
) -> None:
    """Add the container workers' statements to their task ``role``: the function's (its tables, sends,
    the key; no log group), consuming the queue, and the task's own scale-in protection.

    Parameters
    ----------
    role
        The task role.
    queue, dead_letter_queue, claim_table, group_table, parks, encryption_key
        As :func:`grant_function_access`.
    cluster_name
        The cluster the service runs in: the protection actions name its tasks.
    cluster_in_findings
        The cluster's name as cdk-nag writes it in the finding (``<LogicalId>`` for a cluster of this
        stack), to acknowledge exactly that wildcard; ``None``: left to the user (a token from elsewhere).
    """
    grant_function_access(
        role,
        log_group=None,
        queue=queue,
        dead_letter_queue=dead_letter_queue,
        claim_table=claim_table,
        group_table=group_table,
        parks=parks,
        encryption_key=encryption_key,
    )
    role.add_to_policy(iam.PolicyStatement(actions=list(CONSUME_ACTIONS), resources=[queue.queue_arn]))
    tasks = Stack.of(role).format_arn(
        service="ecs",
        resource="task",
        resource_name=f"{cluster_name}/*",
        arn_format=ArnFormat.SLASH_RESOURCE_NAME,
    )
    role.add_to_policy(iam.PolicyStatement(actions=list(TASK_PROTECTION_ACTIONS), resources=[tasks]))
    if cluster_in_findings is not None:
        tasks_in_findings = (
            f"arn:<AWS::Partition>:ecs:<AWS::Region>:<AWS::AccountId>:task/{cluster_in_findings}/*"
        )
        Validations.of(role).acknowledge(
            Acknowledgment(
                id=f"AwsSolutions::AwsSolutions-IAM5[Resource::{tasks_in_findings}]",
                reason=TASK_PROTECTION_REASON,
            )
        )
