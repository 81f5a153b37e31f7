"""The sample app's contract, stated once: what ``app.py``, its job code and the demo agree on.

The sample stack ``AgentJobs`` holds four ``OrderedAgentQueue`` constructs:

- ``Workspaces`` (state mode): each workspace (message group ``ws#<workspaceId>``) is a state in the
  queue's state table, changed by ``apply_patch``, ``run_tests`` and ``open_pr`` jobs through the pure
  transition ``agent_worker.apply_job``; the state's ``activity`` lists the jobs applied, in order;
- ``Notifications`` (claim mode): ``notify`` jobs, whose effect is outside the runtime's store: the
  notifier records each in a table of its own, idempotent by job id, and counts in ``replays`` a run
  that found it already recorded; it returns :func:`notification_result`, the result a caller
  waiting on the job reads (``JobOutcomes``); a job whose payload names a ``tenant`` is paced per
  tenant across its groups (:data:`NOTIFICATION_PACE_KEY`), a job without one is not;
- ``Builds`` (claim mode, container workers): a workspace's long ``run_tests`` job, run by
  ``builds.run_tests`` in ``constructs-fifo worker`` processes (ECS tasks when deployed; local
  processes in the demo), longer than the queue's short visibility timeout, kept by heartbeats; its
  effect is its result, stored once with the job's SUCCEEDED claim (:func:`build_result`);
- ``Accounts`` (state mode): seed 004's account agent, fed by an EventBridge bus (``AgentAccounts``)
  through an ``EventBusIngress`` (rule, staging queue, pipe): one message group per account (the
  event's ``detail.accountId``), ``seq`` the account's ``detail.version``; the transition
  ``accounts.apply_event`` keeps the account's status and what was billed and held.

``app.py`` builds the stack from these names, the workload sends jobs that follow them, and the
verifier reads the results by them. The job code (``lambda/``) ships in the functions' asset, which
holds only the runtime, so it cannot import this module: it keeps its own copies, and a test checks
them against this one.

Imports only the standard library, so ``app.py`` can import it at synth.

Examples
--------
>>> group_of("ws-s7-03")
'ws#ws-s7-03'
>>> transient_failure(2)
{'simulate': {'fail_attempts': 2}}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "ACCOUNT_EVENT_BUS",
    "ACCOUNT_EVENT_SOURCE",
    "ACCOUNT_GROUP_PATH",
    "ACCOUNT_HANDLER",
    "ACCOUNT_INGRESS",
    "ACCOUNT_JOB_ID_PATH",
    "ACCOUNT_JOB_TYPE_PATH",
    "ACCOUNT_QUEUE",
    "ACCOUNT_SEQ_PATH",
    "ACTIVITY_ATTRIBUTE",
    "BUILD_DURATION_KEY",
    "BUILD_HANDLER",
    "BUILD_HEARTBEAT_INTERVAL_SECONDS",
    "BUILD_IMAGE",
    "BUILD_MAX_TASKS",
    "BUILD_PASSED",
    "BUILD_QUEUE",
    "BUILD_SLOTS",
    "BUILD_STARTED",
    "BUILD_TYPE",
    "BUILD_VISIBILITY_TIMEOUT_SECONDS",
    "ENV_NOTIFICATION_TABLE",
    "GROUP_PREFIX",
    "JOB_CODE_DIR",
    "JOB_TYPES",
    "NOTIFICATION_DELIVERED",
    "NOTIFICATION_HANDLER",
    "NOTIFICATION_KEY",
    "NOTIFICATION_PACE_BURST",
    "NOTIFICATION_PACE_JOBS",
    "NOTIFICATION_PACE_KEY",
    "NOTIFICATION_PACE_PER_SECONDS",
    "NOTIFICATION_QUEUE",
    "NOTIFICATION_TYPE",
    "OUTPUTS",
    "OUTPUT_NOTIFICATION_CLAIM_TABLE_NAME",
    "OUTPUT_NOTIFICATION_DEAD_LETTER_QUEUE_ARN",
    "OUTPUT_NOTIFICATION_DEAD_LETTER_QUEUE_URL",
    "OUTPUT_NOTIFICATION_GROUP_TABLE_NAME",
    "OUTPUT_NOTIFICATION_QUEUE_ARN",
    "OUTPUT_NOTIFICATION_QUEUE_URL",
    "OUTPUT_NOTIFICATION_TABLE_NAME",
    "OUTPUT_WORKSPACE_DEAD_LETTER_QUEUE_ARN",
    "OUTPUT_WORKSPACE_DEAD_LETTER_QUEUE_URL",
    "OUTPUT_WORKSPACE_QUEUE_ARN",
    "OUTPUT_WORKSPACE_QUEUE_URL",
    "OUTPUT_WORKSPACE_STATE_TABLE_NAME",
    "REPLAYS_ATTRIBUTE",
    "SIMULATE",
    "STACK_NAME",
    "WORKSPACE_HANDLER",
    "WORKSPACE_QUEUE",
    "SampleQueue",
    "SampleResources",
    "build_payload",
    "build_result",
    "group_of",
    "notification_result",
    "poison",
    "transient_failure",
    "workspace_of",
]

#: The sample app's stack.
STACK_NAME: Final = "AgentJobs"

#: Construct id of the state-mode queue whose jobs change workspaces.
WORKSPACE_QUEUE: Final = "Workspaces"
#: Construct id of the claim-mode queue whose jobs record notifications.
NOTIFICATION_QUEUE: Final = "Notifications"
#: The notification queue's pace (``pace=Pace(...)``): at most ``NOTIFICATION_PACE_JOBS`` notifications per
#: ``NOTIFICATION_PACE_PER_SECONDS`` (``NOTIFICATION_PACE_BURST`` at once) for each value of the payload's
#: ``tenant``, across the tenant's groups, as a chat API's per-tenant rate limit asks. The demo's jobs name
#: no tenant, so they are never paced; a job that names one is (the steering end-to-end test's).
NOTIFICATION_PACE_KEY: Final = "body:payload.tenant"
NOTIFICATION_PACE_JOBS: Final = 2
NOTIFICATION_PACE_PER_SECONDS: Final = 1
NOTIFICATION_PACE_BURST: Final = 2
#: The workspace queue's job function: the transition ``apply_job(job, state) -> next_state``.
WORKSPACE_HANDLER: Final = "agent_worker.apply_job"
#: The notification queue's job function: ``handle(job, context)``.
NOTIFICATION_HANDLER: Final = "notifier.handle"

#: Construct id of the state-mode queue whose jobs are account events (``--scenario events``).
ACCOUNT_QUEUE: Final = "Accounts"
#: The accounts queue's job function: the transition ``apply_event(job, state) -> next_state``.
ACCOUNT_HANDLER: Final = "accounts.apply_event"
#: The job code's directory, beside ``app.py``: every function's asset, and what the demo loads.
JOB_CODE_DIR: Final = "lambda"
#: The EventBridge bus (its name) the account events are published on.
ACCOUNT_EVENT_BUS: Final = "AgentAccounts"
#: The account events' ``source``: the ingress rule's event pattern matches it.
ACCOUNT_EVENT_SOURCE: Final = "demo.accounts"
#: Construct id of the ``EventBusIngress`` from the bus into the accounts queue (its pipe is the stack's one).
ACCOUNT_INGRESS: Final = "AccountEvents"
#: Paths of the event the ingress's pipe reads: one group per account, its version as ``seq``, the
#: event's own id (stable per account and version) as the job id and deduplication id.
ACCOUNT_GROUP_PATH: Final = "$.detail.accountId"
ACCOUNT_SEQ_PATH: Final = "$.detail.version"
ACCOUNT_JOB_ID_PATH: Final = "$.detail.eventId"
ACCOUNT_JOB_TYPE_PATH: Final = "$.detail-type"

#: Construct id of the claim-mode queue whose long ``run_tests`` jobs container workers run.
BUILD_QUEUE: Final = "Builds"
#: The build queue's job function: ``run_tests(job, context)``, which polls ``context.cancelled``.
BUILD_HANDLER: Final = "builds.run_tests"
#: The build queue's job type.
BUILD_TYPE: Final = "run_tests"
#: The workers' image: only a name in the template (synth and the emulator need no Docker; the demo runs
#: the workers from ``lambda/``). A real deploy gives an image with the job code and constructs-fifo.
BUILD_IMAGE: Final = "public.ecr.aws/docker/library/python:3.12-slim"
#: The build queue's visibility timeout: short, so that a job of a few times it shows the heartbeats at
#: work within a demo's seconds (a real build queue keeps the 5-minute default).
BUILD_VISIBILITY_TIMEOUT_SECONDS: Final = 5
#: How often a running build's worker renews its records and claim: under half the visibility timeout.
BUILD_HEARTBEAT_INTERVAL_SECONDS: Final = 2
#: Batches one worker runs at once, and the most tasks the service scales out to.
BUILD_SLOTS: Final = 4
BUILD_MAX_TASKS: Final = 3
#: The payload key of how long a build's test run takes, in seconds (``builds.DURATION_KEY``).
BUILD_DURATION_KEY: Final = "durationSeconds"
#: The key of the build's result naming the job whose tests passed (``builds.PASSED``).
BUILD_PASSED: Final = "passed"
#: The key of the build's result: when the run that finished started, epoch ms (``builds.STARTED_KEY``).
BUILD_STARTED: Final = "startedAtMs"

#: Stack outputs of the sample app (``constructs-fifo deploy`` prints them).
OUTPUT_WORKSPACE_QUEUE_URL: Final = "WorkspaceQueueUrl"
OUTPUT_WORKSPACE_QUEUE_ARN: Final = "WorkspaceQueueArn"
OUTPUT_WORKSPACE_DEAD_LETTER_QUEUE_ARN: Final = "WorkspaceDeadLetterQueueArn"
OUTPUT_WORKSPACE_DEAD_LETTER_QUEUE_URL: Final = "WorkspaceDeadLetterQueueUrl"
OUTPUT_WORKSPACE_STATE_TABLE_NAME: Final = "WorkspaceStateTableName"
OUTPUT_NOTIFICATION_QUEUE_URL: Final = "NotificationQueueUrl"
OUTPUT_NOTIFICATION_QUEUE_ARN: Final = "NotificationQueueArn"
OUTPUT_NOTIFICATION_DEAD_LETTER_QUEUE_ARN: Final = "NotificationDeadLetterQueueArn"
OUTPUT_NOTIFICATION_DEAD_LETTER_QUEUE_URL: Final = "NotificationDeadLetterQueueUrl"
OUTPUT_NOTIFICATION_CLAIM_TABLE_NAME: Final = "NotificationClaimTableName"
OUTPUT_NOTIFICATION_GROUP_TABLE_NAME: Final = "NotificationGroupTableName"
OUTPUT_NOTIFICATION_TABLE_NAME: Final = "NotificationTableName"
OUTPUTS: Final = (
    OUTPUT_WORKSPACE_QUEUE_URL,
    OUTPUT_WORKSPACE_QUEUE_ARN,
    OUTPUT_WORKSPACE_DEAD_LETTER_QUEUE_ARN,
    OUTPUT_NOTIFICATION_QUEUE_ARN,
    OUTPUT_NOTIFICATION_DEAD_LETTER_QUEUE_ARN,
    OUTPUT_WORKSPACE_DEAD_LETTER_QUEUE_URL,
    OUTPUT_WORKSPACE_STATE_TABLE_NAME,
    OUTPUT_NOTIFICATION_QUEUE_URL,
    OUTPUT_NOTIFICATION_DEAD_LETTER_QUEUE_URL,
    OUTPUT_NOTIFICATION_CLAIM_TABLE_NAME,
    OUTPUT_NOTIFICATION_GROUP_TABLE_NAME,
    OUTPUT_NOTIFICATION_TABLE_NAME,
)

#: The workspace state's timeline: ``[{"jobId", "type"}, ...]`` in the order the jobs were applied.
ACTIVITY_ATTRIBUTE: Final = "activity"
#: The job types of the workspace queue, in the order one workspace's cycle runs them.
JOB_TYPES: Final = ("apply_patch", "run_tests", "open_pr")
#: Every job about a workspace (on either queue) is sent with MessageGroupId ``ws#<workspaceId>``.
GROUP_PREFIX: Final = "ws#"

#: The job type of the notification queue.
NOTIFICATION_TYPE: Final = "notify"
#: The function environment variable naming the notification table.
ENV_NOTIFICATION_TABLE: Final = "NOTIFICATION_TABLE_NAME"
#: Partition key of the notification table: the notification's job id.
NOTIFICATION_KEY: Final = "notificationId"
#: A notification item's count of runs that found it already recorded.
REPLAYS_ATTRIBUTE: Final = "replays"
#: The key of the notifier's result (stored with the job's SUCCEEDED claim): the job id delivered.
NOTIFICATION_DELIVERED: Final = "delivered"

#: The payload key with which a job asks its function to fail (demos and tests only).
SIMULATE: Final = "simulate"


@dataclass(frozen=True)
class SampleQueue:
    """One deployed queue of the sample app: where to send, where dead jobs go, where parked groups are.

    Attributes
    ----------
    label
        The construct path (``AgentJobs/Workspaces``), else the queue name.
    queue_url, dead_letter_queue_url
        The FIFO queue and its dead-letter queue.
    group_table
        The queue's group table: parked groups (PARK policy) and, in state mode, the groups' states.
    """

    label: str
    queue_url: str
    dead_letter_queue_url: str
    group_table: str


@dataclass(frozen=True)
class SampleResources:
    """What the deployed sample app offers the demo: its two queues and the notification table."""

    workspaces: SampleQueue
    notifications: SampleQueue
    notification_table: str


def group_of(workspace_id: str) -> str:
    """The MessageGroupId of a workspace (``ws#<workspaceId>``)."""
    return f"{GROUP_PREFIX}{workspace_id}"


def workspace_of(group: str) -> str:
    """The workspace id of a MessageGroupId (the inverse of :func:`group_of`)."""
    return group.removeprefix(GROUP_PREFIX)


def notification_result(job_id: str) -> dict[str, str]:
    """What the notifier returns for job ``job_id``: the ``result`` of its outcome once it succeeded."""
    return {NOTIFICATION_DELIVERED: job_id}


def build_payload(duration_seconds: float) -> dict[str, Any]:
    """A ``run_tests`` job's payload: a test run of ``duration_seconds``."""
    return {BUILD_DURATION_KEY: duration_seconds}


def build_result(
    job_id: str, workspace_id: str, duration_seconds: float, attempt: int, started_at_ms: int
) -> dict[str, Any]:
    """What ``builds.run_tests`` returns for a job (stored with its SUCCEEDED claim): ``attempt`` and
    ``started_at_ms`` are the run's that finished."""
    return {
        BUILD_PASSED: job_id,
        "workspaceId": workspace_id,
        BUILD_DURATION_KEY: duration_seconds,
        "attempt": attempt,
        BUILD_STARTED: started_at_ms,
    }


def poison() -> dict[str, Any]:
    """Payload entries that make the job function fail the job permanently."""
    return {SIMULATE: "poison"}


def transient_failure(attempts: int) -> dict[str, Any]:
    """Payload entries that make the job function fail attempts 1 to ``attempts`` and then succeed."""
    return {SIMULATE: {"fail_attempts": attempts}}
