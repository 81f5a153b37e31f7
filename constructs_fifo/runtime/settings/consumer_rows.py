"""The consumer's rows of the settings spec: the Lambda consumer's provisioned pollers, which consumer runs
the jobs, and the container workers' own.

Rows of :data:`constructs_fifo.runtime.settings.spec.SETTINGS` like any other (the spec places them
after ``outputs``, in the construct's keyword order); written apart so the spec stays one readable
module. ``consumer`` is the construct's alone (``None``: the Lambda function; a ``ContainerConsumer``:
an ECS Fargate service running ``constructs-fifo worker``); the workers' rows are ``container_only``:
refused with the Lambda consumer, written into the container's environment only.

Standard library only, as the spec: the runtime (and the worker) ships without the CDK.
"""

from __future__ import annotations

from typing import Final

from constructs_fifo.runtime import aws_limits
from constructs_fifo.runtime.settings.row import SECONDS, Setting

__all__ = ["CONSUMER_ROWS", "SLOTS_MAX"]

#: The most slots one worker task runs: each is a thread holding one batch of one group at a time.
SLOTS_MAX: Final = 64

CONSUMER_ROWS: Final = (
    Setting(
        "provisioned_pollers",
        "the event source's provisioned mode: `ProvisionedPollers(minimum, maximum)` pollers always ready "
        "(each reads ~1 MB/s and runs up to 10 invocations at once), scaling three times faster than "
        "on-demand polling; billed per poller-hour even when the queue is empty (docs/capacity.md)",
        "ProvisionedPollers | None",
        default_doc="none: on-demand polling, capped by `max_concurrency`",
        prop="provisioned_pollers",
        unit="pollers",
        rule=f"`minimum` {aws_limits.LAMBDA_MIN_POLLERS}–{aws_limits.LAMBDA_MIN_POLLERS_MAX}, `minimum` ≤ "
        f"`maximum` ≤ {aws_limits.LAMBDA_MAX_POLLERS}; refused beside `max_concurrency` (Lambda takes one "
        "or the other), so `reserved_concurrency` is then the function's only ceiling",
        lambda_only=True,
    ),
    Setting(
        "consumer",
        "what runs the jobs: none, the Lambda function; `ContainerConsumer(image=...)`, an ECS Fargate "
        'service running `constructs-fifo worker` (see "Container workers" in docs/construct.md)',
        "ContainerConsumer | None",
        default_doc="the Lambda function",
        prop="consumer",
    ),
    Setting(
        "slots",
        "container consumer only: batches one worker task runs at once, each from one group",
        "int | None",
        default=4,
        default_doc="`4` (the container consumer)",
        prop="slots",
        env="CONSTRUCTS_FIFO_SLOTS",
        field="slots",
        low=1,
        high=SLOTS_MAX,
        unit="slots",
        why="each slot is a thread of the worker holding one batch, so",
        container_only=True,
    ),
    Setting(
        "heartbeat_interval",
        "container consumer only: how often a running job's worker extends its records' visibility and "
        "renews its claim",
        "Duration | None",
        default=30,
        default_doc="30 seconds (the container consumer)",
        prop="heartbeat_interval",
        env="CONSTRUCTS_FIFO_HEARTBEAT_INTERVAL_SECONDS",
        field="heartbeat_interval_seconds",
        low=1,
        high=aws_limits.SQS_MAX_VISIBILITY_TIMEOUT_SECONDS // 2,
        unit=SECONDS,
        why="a heartbeat must come well inside the visibility timeout (at most 12 hours), so",
        example="Duration.seconds(30)",
        rule="< `visibility_timeout` / 2: a late or retried renewal still lands while the records are hidden",
        container_only=True,
    ),
    Setting(
        "large_payloads",
        "bodies over SQS's 1 MiB and results over 64 KiB go to an S3 bucket the construct creates (the "
        "queue's key, TLS only, objects expiring after `claim_ttl`), the message or claim carrying a "
        "pointer in the SQS Extended Client Library's format (docs/limits.md)",
        "bool",
        default=False,
        default_doc="`False`",
        prop="large_payloads",
    ),
)
