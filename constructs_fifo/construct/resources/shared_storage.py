"""Shared storage of the container workers: one EFS file system mounted on every task at one path, so a
group's workspace outlives the task that ran its last job (a group's next job may run on another task).

What it builds (construct ids under the queue construct), unless given: the file system
(``SharedFileSystem``: encrypted at rest, with ``encryption_key`` when there is one, in the cluster's
VPC, a file system policy refusing requests without TLS and allowing nothing by itself, kept when the
stack is deleted as CDK's default) and its access point
(``SharedAccessPoint``: the tasks see only its directory, as one POSIX user, whatever user the image
runs). Every task mounts it with TLS in transit and IAM authorization through the access point; the task
role may mount and write through that access point and nothing else (no root access), and the file
system's security group lets the service's tasks reach NFS and nothing else in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_ecs as ecs
from aws_cdk import aws_efs as efs
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from constructs import Construct

from constructs_fifo.construct.resources.permissions import SHARED_STORAGE_ACTIONS

__all__ = ["SHARED_ROOT", "VOLUME", "SharedStorage", "mount_shared_storage"]

#: The task definition's volume name.
VOLUME: Final = "SharedStorage"
#: The directory of the file system an access point of the construct's own exposes to the tasks.
SHARED_ROOT: Final = "/constructs-fifo"
#: Owner-only directory created for that access point (its owner is the access point's POSIX user).
_ROOT_PERMISSIONS: Final = "750"


@dataclass(frozen=True)
class SharedStorage:
    """An encrypted EFS file system mounted on every worker task (``ContainerConsumer(shared_storage=...)``).

    Give nothing for a file system of its own; or ``file_system`` (an access point of the construct's own
    is made on it); or ``access_point`` (its file system is the one mounted). Not both.

    Attributes
    ----------
    path : str
        Where each task sees it: an absolute path, not ``/``.
    file_system : efs.IFileSystem or None
        An existing file system (in the tasks' VPC, with a mount target in each of their subnets).
    access_point : efs.IAccessPoint or None
        An existing access point: the tasks see its directory as its POSIX user.
    uid, gid : int
        The POSIX user and group the construct's own access point writes as (and owns its directory).
    """

    path: str = "/mnt/shared"
    file_system: efs.IFileSystem | None = None
    access_point: efs.IAccessPoint | None = None
    uid: int = 1000
    gid: int = 1000


def _file_system(
    scope: Construct, storage: SharedStorage, vpc: ec2.IVpc, key: kms.IKey | None
) -> efs.IFileSystem:
    if storage.access_point is not None:
        return storage.access_point.file_system
    if storage.file_system is not None:
        return storage.file_system
    # A file system policy replaces EFS's default "any client that reaches a mount target": with one, a
    # client needs an allow. This one allows nothing (the task role's own statement does, through the
    # access point) and refuses every request without TLS. CDK's statement for allow_anonymous_access=False
    # would instead give root access to any principal of the account, so that flag stays True here.
    no_plain_text = iam.PolicyStatement(
        effect=iam.Effect.DENY,
        principals=[iam.AnyPrincipal()],
        actions=["*"],
        conditions={"Bool": {"aws:SecureTransport": "false"}},
    )
    return efs.FileSystem(
        scope,
        "SharedFileSystem",
        vpc=vpc,
        encrypted=True,
        kms_key=key,
        allow_anonymous_access=True,
        file_system_policy=iam.PolicyDocument(statements=[no_plain_text]),
        vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS),
    )


def mount_shared_storage(
    scope: Construct,
    storage: SharedStorage,
    *,
    vpc: ec2.IVpc,
    task_definition: ecs.FargateTaskDefinition,
    container: ecs.ContainerDefinition,
    task_role: iam.IRole,
    service: ecs.FargateService,
    encryption_key: kms.IKey | None,
) -> efs.IFileSystem:
    """Mount ``storage`` on every task of ``service`` at ``storage.path``; returns the file system."""
    file_system = _file_system(scope, storage, vpc, encryption_key)
    access_point = storage.access_point or efs.AccessPoint(
        scope,
        "SharedAccessPoint",
        file_system=file_system,
        path=SHARED_ROOT,
        posix_user=efs.PosixUser(uid=str(storage.uid), gid=str(storage.gid)),
        create_acl=efs.Acl(
            owner_uid=str(storage.uid), owner_gid=str(storage.gid), permissions=_ROOT_PERMISSIONS
        ),
    )
    task_definition.add_volume(
        name=VOLUME,
        efs_volume_configuration=ecs.EfsVolumeConfiguration(
            file_system_id=file_system.file_system_id,
            transit_encryption="ENABLED",
            authorization_config=ecs.AuthorizationConfig(
                access_point_id=access_point.access_point_id, iam="ENABLED"
            ),
        ),
    )
    container.add_mount_points(
        ecs.MountPoint(container_path=storage.path, source_volume=VOLUME, read_only=False)
    )
    task_role.add_to_principal_policy(
        iam.PolicyStatement(
            actions=list(SHARED_STORAGE_ACTIONS),
            resources=[file_system.file_system_arn],
            conditions={"StringEquals": {"elasticfilesystem:AccessPointArn": access_point.access_point_arn}},
        )
    )
    file_system.connections.allow_default_port_from(service, "constructs-fifo workers mount shared storage")
    return file_system
