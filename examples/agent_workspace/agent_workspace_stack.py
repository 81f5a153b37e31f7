"""The agent workspace example's stack: a workspace bucket and one pipeline queue on container workers.

- ``Workspaces`` (S3): every workspace's commits, HEAD, test verdicts and pull requests
  (``jobs/workspace_store.py``), where every worker task reaches them: a workspace's next job may run
  on another task than its last, and a task may die in the middle of a job;
- ``Pipeline`` (an ``OrderedAgentQueue`` in claim mode, the default, on an ECS Fargate service running
  ``constructs-fifo worker``): ``apply_patch``, ``run_tests`` and ``open_pr`` jobs, one message group
  per workspace, run by ``pipeline.handle`` (``jobs/pipeline.py``). Its visibility timeout and heartbeat
  interval are scaled down to seconds so that a ``run_tests`` of a few seconds outlives its visibility
  timeout and shows the heartbeats at work; a real pipeline keeps the defaults (5 minutes, 30 seconds).

The workers' task role may read the bucket and put objects in it, nothing more (no delete: the
workspace's history is kept; a lifecycle rule is the user's choice).

The image: by default built from ``Dockerfile`` (Docker is needed where it is built: ``cdk deploy`` or
``integ-runner`` on a real account); ``image`` passes another (the emulator takes any name: it runs no
task, the test runs the workers as local processes from ``jobs/``).

Imports only aws_cdk and constructs_fifo; makes no AWS call at synth.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from aws_cdk import CfnOutput, Duration, IgnoreMode, RemovalPolicy, Stack
from aws_cdk import aws_ecs as ecs
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_s3 as s3
from constructs import Construct

from constructs_fifo import ContainerConsumer, OrderedAgentQueue

__all__ = [
    "BUCKET_VARIABLE",
    "HANDLER",
    "HEARTBEAT_INTERVAL_SECONDS",
    "JOBS_DIR",
    "OUTPUT_BUCKET",
    "QUEUE_ID",
    "STACK_NAME",
    "VISIBILITY_TIMEOUT_SECONDS",
    "AgentWorkspaceStack",
    "image_from_dockerfile",
]

HERE: Final = Path(__file__).resolve().parent
#: The job code's directory (the image holds a copy; the local workers run it from here).
JOBS_DIR: Final = HERE / "jobs"
STACK_NAME: Final = "AgentWorkspace"
QUEUE_ID: Final = "Pipeline"
HANDLER: Final = "pipeline.handle"
#: The variable naming the workspaces' bucket, as ``jobs/pipeline.py`` reads it.
BUCKET_VARIABLE: Final = "WORKSPACE_BUCKET"
#: Scaled down for the example (see the module docstring): heartbeats under half of it.
VISIBILITY_TIMEOUT_SECONDS: Final = 5
HEARTBEAT_INTERVAL_SECONDS: Final = 2
SLOTS: Final = 4
MAX_TASKS: Final = 2
OUTPUT_BUCKET: Final = "WorkspaceBucketName"
#: The Docker build context is the repository (the image installs constructs-fifo from its source, as it
#: is not on PyPI yet); only what the Dockerfile copies goes into it.
_REPOSITORY: Final = HERE.parents[1]
_BUILD_CONTEXT: Final = (
    "*",
    "!pyproject.toml",
    "!README.md",
    "!LICENSE",
    "!constructs_fifo",
    "!examples/agent_workspace/jobs",
    "!examples/agent_workspace/Dockerfile",  # CDK keeps only a top-level Dockerfile by itself
    "**/__pycache__",
)


def image_from_dockerfile() -> ecs.ContainerImage:
    """The workers' image, built from ``Dockerfile`` by ``cdk deploy`` (Docker needed there, not at synth)."""
    return ecs.ContainerImage.from_asset(
        str(_REPOSITORY),
        file="examples/agent_workspace/Dockerfile",
        exclude=list(_BUILD_CONTEXT),
        ignore_mode=IgnoreMode.DOCKER,
    )


class AgentWorkspaceStack(Stack):
    """The workspace bucket and the pipeline queue; ``empty_bucket_on_delete`` for throwaway stacks."""

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        image: ecs.ContainerImage | None = None,
        empty_bucket_on_delete: bool = False,
    ) -> None:
        super().__init__(
            scope,
            id,
            description="constructs-fifo example: an agent workspace pipeline",
        )
        self.bucket = s3.Bucket(
            self,
            "Workspaces",
            encryption=s3.BucketEncryption.S3_MANAGED,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            enforce_ssl=True,
            removal_policy=RemovalPolicy.DESTROY if empty_bucket_on_delete else RemovalPolicy.RETAIN,
            auto_delete_objects=empty_bucket_on_delete,
        )
        self.pipeline = OrderedAgentQueue(
            self,
            QUEUE_ID,
            code=lambda_.Code.from_asset(str(JOBS_DIR)),  # checked for the handler; the image runs it
            handler=HANDLER,
            environment={BUCKET_VARIABLE: self.bucket.bucket_name},
            visibility_timeout=Duration.seconds(VISIBILITY_TIMEOUT_SECONDS),
            heartbeat_interval=Duration.seconds(HEARTBEAT_INTERVAL_SECONDS),
            slots=SLOTS,
            table_removal_policy=RemovalPolicy.DESTROY,  # an example: `cdk destroy` leaves no table
            consumer=ContainerConsumer(image=image or image_from_dockerfile(), max_tasks=MAX_TASKS),
        )
        workers = self.pipeline.workers
        assert workers is not None  # the container consumer
        self.bucket.grant_read(workers.task_role)
        self.bucket.grant_put(workers.task_role)
        CfnOutput(self, OUTPUT_BUCKET, value=self.bucket.bucket_name)
