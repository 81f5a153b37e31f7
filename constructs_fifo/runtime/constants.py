"""Names shared by the construct (which writes them) and the runtime (which reads them).

This is the one place these strings are defined: the construct imports them from here so that the
environment it writes and the environment the runtime reads can never drift apart.
"""

from __future__ import annotations

import enum
from typing import Final

from constructs_fifo.runtime.aws_limits import LAMBDA_SQS_FIFO_MAX_BATCH_SIZE

__all__ = [
    "ATTR_ATTEMPTS",
    "ATTR_DEAD_REASON",
    "ATTR_ERROR",
    "ATTR_ERROR_TYPE",
    "ATTR_EXPIRATION",
    "ATTR_GROUP",
    "ATTR_ID",
    "ATTR_LEASE_EXPIRES_AT",
    "ATTR_MESSAGE_ID",
    "ATTR_OWNER",
    "ATTR_PERMANENT",
    "ATTR_STATUS",
    "ATTR_TYPE",
    "ATTR_UPDATED_AT",
    "CONTROL_ATTRIBUTE",
    "CONTROL_RESUME",
    "DEFAULT_BACKOFF_BASE_SECONDS",
    "DEFAULT_CLAIM_TTL_SECONDS",
    "DEFAULT_MAX_ATTEMPTS",
    "DEFAULT_METRICS_NAMESPACE",
    "DEFAULT_MODE",
    "DEFAULT_ON_DEAD_JOB",
    "DEFAULT_OUTCOME_LINES",
    "ENTRYPOINT",
    "ENV_BACKOFF_BASE_SECONDS",
    "ENV_CLAIM_TABLE",
    "ENV_CLAIM_TTL_SECONDS",
    "ENV_DEAD_LETTER_QUEUE_URL",
    "ENV_GAP_POLICY",
    "ENV_GAP_TIMEOUT_SECONDS",
    "ENV_GROUP_TABLE",
    "ENV_MAX_ATTEMPTS",
    "ENV_METRICS_NAMESPACE",
    "ENV_MODE",
    "ENV_ON_DEAD_JOB",
    "ENV_OUTCOME_LINES",
    "ENV_QUEUE_URL",
    "ENV_REORDER_LIMIT",
    "ENV_USER_HANDLER",
    "ENV_VISIBILITY_TIMEOUT_SECONDS",
    "GROUP_ATTR_GROUP",
    "GROUP_ATTR_SK",
    "KEPT_RECENT_MESSAGE_IDS",
    "MAX_ATTEMPTS_MAX",
    "MAX_ERROR_LENGTH",
    "METRIC_CAPACITY_UNITS_CONSUMED",
    "METRIC_CLAIM_CONFLICTS",
    "METRIC_DIMENSION_QUEUE",
    "METRIC_DUPLICATES_SKIPPED",
    "METRIC_GROUPS_PARKED",
    "METRIC_JOBS_DEAD_LETTERED",
    "METRIC_JOBS_FAILED",
    "METRIC_JOBS_KEPT",
    "METRIC_JOBS_SUCCEEDED",
    "METRIC_JOB_DURATION",
    "SK_KEPT_PREFIX",
    "SK_PARK",
    "STATUS_DEAD",
    "STATUS_FAILED",
    "STATUS_IN_FLIGHT",
    "STATUS_SUCCEEDED",
    "WAKE_UP_REFRESH_RECEIVES",
    "DeadJobPolicy",
    "DeadReason",
    "JobMode",
    "OutcomeLines",
]

# --- the function's handler -------------------------------------------------------------------
#: The Lambda handler the construct configures: the runtime's entry point, which calls the user's job
#: function named in ``ENV_USER_HANDLER``.
ENTRYPOINT: Final = "constructs_fifo.runtime.entrypoint.handler"

# --- environment variables written by the construct -------------------------------------------
#: ``module.function`` of the user's job function, e.g. ``agent_worker.handle``.
ENV_USER_HANDLER: Final = "CONSTRUCTS_FIFO_HANDLER"
#: Name of the DynamoDB claim table.
ENV_CLAIM_TABLE: Final = "CONSTRUCTS_FIFO_CLAIM_TABLE"
#: URL of the FIFO queue (for ChangeMessageVisibility backoff).
ENV_QUEUE_URL: Final = "CONSTRUCTS_FIFO_QUEUE_URL"
#: The queue's visibility timeout in seconds: the cap of the retry backoff.
ENV_VISIBILITY_TIMEOUT_SECONDS: Final = "CONSTRUCTS_FIFO_VISIBILITY_TIMEOUT_SECONDS"
#: First retry delay in seconds; doubles with every attempt.
ENV_BACKOFF_BASE_SECONDS: Final = "CONSTRUCTS_FIFO_BACKOFF_BASE_SECONDS"
#: How long a claim item lives (TTL) in seconds.
ENV_CLAIM_TTL_SECONDS: Final = "CONSTRUCTS_FIFO_CLAIM_TTL_SECONDS"
#: CloudWatch namespace of the embedded-metric-format metrics.
ENV_METRICS_NAMESPACE: Final = "CONSTRUCTS_FIFO_METRICS_NAMESPACE"
#: Runs of one job (a crash inside the job included) before the runtime declares it dead.
ENV_MAX_ATTEMPTS: Final = "CONSTRUCTS_FIFO_MAX_ATTEMPTS"
#: URL of the FIFO dead-letter queue the runtime sends dead jobs to.
ENV_DEAD_LETTER_QUEUE_URL: Final = "CONSTRUCTS_FIFO_DEAD_LETTER_QUEUE_URL"
#: What happens to a group after one of its jobs died: a :class:`DeadJobPolicy` value.
ENV_ON_DEAD_JOB: Final = "CONSTRUCTS_FIFO_ON_DEAD_JOB"
#: Name of the group table (parked groups, kept jobs, state mode's states); set when there is one.
ENV_GROUP_TABLE: Final = "CONSTRUCTS_FIFO_GROUP_TABLE"
#: What a job is: a :class:`JobMode` value.
ENV_MODE: Final = "CONSTRUCTS_FIFO_MODE"
#: State mode: jobs a group's reorder buffer holds at most.
ENV_REORDER_LIMIT: Final = "CONSTRUCTS_FIFO_REORDER_LIMIT"
#: State mode: seconds a sequence gap may stay open before the gap policy applies.
ENV_GAP_TIMEOUT_SECONDS: Final = "CONSTRUCTS_FIFO_GAP_TIMEOUT_SECONDS"
#: State mode: WAIT or SKIP_GAP.
ENV_GAP_POLICY: Final = "CONSTRUCTS_FIFO_GAP_POLICY"
#: Which outcomes get a log line of their own: an :class:`OutcomeLines` value.
ENV_OUTCOME_LINES: Final = "CONSTRUCTS_FIFO_OUTCOME_LINES"

# --- defaults shared by both sides ----------------------------------------------------------------
DEFAULT_BACKOFF_BASE_SECONDS: Final = 2
DEFAULT_CLAIM_TTL_SECONDS: Final = 7 * 24 * 60 * 60
DEFAULT_METRICS_NAMESPACE: Final = "ConstructsFifo"
DEFAULT_MAX_ATTEMPTS: Final = 5
#: The most attempts a job may have, whatever the batch size. The receive-count safety net needs
#: ``maxReceiveCount >= (2 x batch_size - 1) x max_attempts + 1`` (state mode: ``max_attempts + 2``;
#: ``constructs_fifo.construct.settings.defaults.min_receive_count_for``), within SQS's limit of 1000:
#: 100 attempts fit up to 5 records a batch (901; 919 in state mode), while 10 records a batch allow
#: at most 52 (50 in state mode; 100 would need 1,901), and the construct refuses more.
MAX_ATTEMPTS_MAX: Final = 100
#: A resume's wake-up message is replaced by a fresh one once it was received this often, so SQS's
#: maxReceiveCount (kept above it by the construct) never dead-letters it during a long replay.
WAKE_UP_REFRESH_RECEIVES: Final = 5
#: Stored and forwarded error texts are cut to this many characters.
MAX_ERROR_LENGTH: Final = 1024


class DeadJobPolicy(enum.StrEnum):
    """What happens to a message group after one of its jobs died.

    ``PARK`` (the default): the group stops at its dead job. The dead job and every later job of the
    group, including those that arrive while it is parked, are kept in order in the group table,
    outside the queue; other groups go on. Resuming replays the kept jobs first, in order.

    ``CONTINUE``: the dead job goes to the dead-letter queue and the group goes on with its next job.
    This breaks the group's order (a later redrive lands after newer jobs); choose it only when a
    group's jobs do not depend on each other.
    """

    PARK = "PARK"
    CONTINUE = "CONTINUE"


DEFAULT_ON_DEAD_JOB: Final = DeadJobPolicy.PARK


class JobMode(enum.StrEnum):
    """What a job is.

    ``CLAIM`` (the default): a side effect outside our store (call GitHub, open a PR). Each job is
    claimed in the claim table before it runs; a duplicate of a SUCCEEDED job is skipped. A crash
    between the effect and the SUCCEEDED write runs the job again after its lease: the effect must be
    idempotent, or the job should be a state transition.

    ``STATE``: a transition ``apply(job, state) -> next_state`` of its group's state, kept in the
    group table. Each transition is committed exactly once, in order, together with the record of
    which jobs the state includes, in one conditional write per group per batch.
    """

    CLAIM = "CLAIM"
    STATE = "STATE"


DEFAULT_MODE: Final = JobMode.CLAIM


class OutcomeLines(enum.StrEnum):
    """Which job outcomes get a log line of their own; the metrics are the same at both levels.

    ``JOB`` (the default): one line per record, whatever happened to it. At 3 a.m. an operator
    searches the logs for a job id and wants the one line that says what happened to it, with its
    attempt, duration and message id, including for a batch that never finished (a timeout, a crash:
    its lines so far were written). That costs ~870 log bytes per job against ~120 at BATCH ($0.35 per
    million jobs).

    ``BATCH``: the records that went well (SUCCEEDED, DUPLICATE, BUFFERED) are summarized in the
    batch's own line: one embedded-metric document with their counts and their durations as a value
    array, and ``[jobId, group, status, duration_ms]`` per record, so a job id is still found. Every
    other outcome (failures, dead jobs, parking, kept and skipped records) keeps its own line. A
    batch that dies before its end (a timeout) writes no summary: its successes show again as
    duplicates when it is retried. Choose it for volume, once the queue runs quietly.
    """

    JOB = "JOB"
    BATCH = "BATCH"


DEFAULT_OUTCOME_LINES: Final = OutcomeLines.JOB


class DeadReason(enum.StrEnum):
    """Why a job is dead: the ``reason`` attribute of its dead-letter message and park header."""

    #: The job raised PermanentJobError.
    PERMANENT = "PERMANENT"
    #: The job failed (or crashed) on its last allowed attempt.
    ATTEMPTS_EXHAUSTED = "ATTEMPTS_EXHAUSTED"
    #: The body is not a job envelope (parsing is deterministic: dead at once).
    MALFORMED = "MALFORMED"
    #: Another copy of a job that is already dead (it follows the first one).
    COPY_OF_DEAD_JOB = "COPY_OF_DEAD_JOB"


# --- metrics ------------------------------------------------------------------------------------------
METRIC_JOBS_SUCCEEDED: Final = "JobsSucceeded"
METRIC_JOBS_FAILED: Final = "JobsFailed"
METRIC_DUPLICATES_SKIPPED: Final = "DuplicatesSkipped"
METRIC_CLAIM_CONFLICTS: Final = "ClaimConflicts"
METRIC_JOB_DURATION: Final = "JobDuration"
METRIC_JOBS_DEAD_LETTERED: Final = "JobsDeadLettered"
#: A group was parked at a dead job (1 per group parked).
METRIC_GROUPS_PARKED: Final = "GroupsParked"
#: Records moved into a parked group's store instead of running.
METRIC_JOBS_KEPT: Final = "JobsKept"
#: The DynamoDB capacity units (read and write together) a batch consumed, as DynamoDB reported them
#: (``ReturnConsumedCapacity``); one value per batch, on the batch's line.
METRIC_CAPACITY_UNITS_CONSUMED: Final = "CapacityUnitsConsumed"
#: The one dimension of every metric: the source queue's name.
METRIC_DIMENSION_QUEUE: Final = "QueueName"

# --- the claim table ------------------------------------------------------------------------------
ATTR_ID: Final = "id"
ATTR_STATUS: Final = "status"
ATTR_GROUP: Final = "group"
ATTR_TYPE: Final = "type"
ATTR_OWNER: Final = "owner"
ATTR_LEASE_EXPIRES_AT: Final = "lease_expires_at"
ATTR_ATTEMPTS: Final = "attempts"
ATTR_UPDATED_AT: Final = "updated_at"
ATTR_EXPIRATION: Final = "expiration"
ATTR_ERROR: Final = "error"
ATTR_ERROR_TYPE: Final = "error_type"
ATTR_PERMANENT: Final = "permanent"
ATTR_MESSAGE_ID: Final = "message_id"

STATUS_IN_FLIGHT: Final = "IN_FLIGHT"
STATUS_SUCCEEDED: Final = "SUCCEEDED"
STATUS_FAILED: Final = "FAILED"
#: The job is dead: not run again by any copy until an operator resets the claim.
STATUS_DEAD: Final = "DEAD"
#: Why the claim is DEAD (a :class:`DeadReason` value).
ATTR_DEAD_REASON: Final = "dead_reason"

# --- the group table: parked groups and their kept jobs (state mode's items below) -----------------
#: Partition key of every item of the group table: the MessageGroupId.
GROUP_ATTR_GROUP: Final = "group"
#: Sort key: ``park`` for the park header, ``kept#<20-digit sequence>`` for a kept record, ``state``
#: for state mode's state item (:data:`STATE_SK`), ``run`` for its run item (:data:`RUN_SK`).
GROUP_ATTR_SK: Final = "sk"
SK_PARK: Final = "park"
SK_KEPT_PREFIX: Final = "kept#"
#: A park header remembers the message ids of this many of its group's last kept records, so that a
#: record delivered again (its delete refused: the receipt handle expired) is not kept twice. Two
#: Lambda FIFO batches at their largest: while a kept record is in flight SQS serves nothing of its
#: group behind it, so what a group keeps between a record's keep and its redelivery is its own batch.
KEPT_RECENT_MESSAGE_IDS: Final = 2 * LAMBDA_SQS_FIFO_MAX_BATCH_SIZE

# --- messages the runtime writes -------------------------------------------------------------------
#: Message attribute that marks a control message (not a job) on the source queue.
CONTROL_ATTRIBUTE: Final = "constructs-fifo-control"
#: Its value on the wake-up message that makes the runtime replay a resumed group's kept jobs.
CONTROL_RESUME: Final = "resume"
#: The dead-letter message's attributes are named beside their codec:
#: :mod:`constructs_fifo.runtime.dead_jobs.letters`.

# === state mode (issue 7): the group table, its defaults and metrics =================================
# Added in its own section so the failure-isolation work above can change freely. The environment
# variables of state mode are left to the wiring: the construct must reserve each one it writes.
__all__ += [
    "DEFAULT_FIRST_SEQ",
    "DEFAULT_GAP_POLICY",
    "DEFAULT_GAP_TIMEOUT_SECONDS",
    "DEFAULT_REMEMBERED_JOB_IDS",
    "DEFAULT_REORDER_LIMIT",
    "GAP_POLICY_SKIP_GAP",
    "GAP_POLICY_WAIT",
    "JOB_KEY_BYTES",
    "MAX_DEAD_ENTRIES_BYTES",
    "MAX_ITEM_BYTES",
    "METRIC_JOBS_BUFFERED",
    "METRIC_SEQ_GAPS_SKIPPED",
    "METRIC_SEQ_GAP_OPEN_SECONDS",
    "METRIC_SEQ_JOBS_SKIPPED",
    "RUN_ATTR_OF",
    "RUN_ATTR_TOKEN",
    "RUN_SK",
    "STATE_ATTR_BOOK",
    "STATE_ATTR_IDS",
    "STATE_ATTR_RUN",
    "STATE_ATTR_STATE",
    "STATE_ATTR_UPDATED_AT",
    "STATE_ATTR_VERSION",
    "STATE_BOOK_FORMAT",
    "STATE_SK",
]


GAP_POLICY_WAIT: Final = "WAIT"
GAP_POLICY_SKIP_GAP: Final = "SKIP_GAP"

#: Waiting never loses a job; skipping does, so it is the user's explicit choice.
DEFAULT_GAP_POLICY: Final = GAP_POLICY_WAIT
DEFAULT_REORDER_LIMIT: Final = 100
DEFAULT_GAP_TIMEOUT_SECONDS: Final = 300
#: 0, so that no non-negative ``seq`` is ever taken for a duplicate before anything was applied.
DEFAULT_FIRST_SEQ: Final = 0
#: Job ids (of jobs without ``seq``) a group remembers: 800 bytes of keys (``JOB_KEY_BYTES`` each).
DEFAULT_REMEMBERED_JOB_IDS: Final = 100
#: A remembered job id is kept as the first 8 bytes of its SHA-256 (its key), whatever the id's length.
#: A new job is taken for a duplicate only if its key equals one of the <= 100 remembered: at most
#: 100 / 2**64 (5.4e-18) per job, 5.4e-6 over a trillion jobs.
JOB_KEY_BYTES: Final = 8

#: The item size state mode allows: attribute names and values together, in UTF-8. DynamoDB documents
#: 400 KB (observed near 409,600 bytes); 400,000 holds whatever "KB" means, and moto (405,000) agrees.
MAX_ITEM_BYTES: Final = 400_000
#: The bytes (encoded, UTF-8) a group's remembered dead entries may take in its bookkeeping: why each
#: remembered dead job died (reason, error type, error text cut to ``MAX_ERROR_LENGTH`` characters,
#: attempts, message id), so that a redelivery of the message it died in is dead-lettered as it died,
#: not as a copy. Past it the oldest entries are dropped; their job ids stay remembered (a copy is still
#: recognised), only their own redelivery is then sent as a copy. Part of the bookkeeping's reserve.
MAX_DEAD_ENTRIES_BYTES: Final = 16 * 1024

# State mode's item of each group in the group table (keys ``GROUP_ATTR_GROUP``, ``GROUP_ATTR_SK``).
STATE_SK: Final = "state"
#: The keys of the remembered job ids, oldest first, concatenated (Binary; absent when there are none).
STATE_ATTR_IDS: Final = "ids"
#: The user's state as a JSON string (absent until a transition was applied).
STATE_ATTR_STATE: Final = "state"
#: The runtime's bookkeeping as a compact JSON string.
STATE_ATTR_BOOK: Final = "book"
STATE_ATTR_VERSION: Final = "version"
STATE_ATTR_UPDATED_AT: Final = "updated_at"
#: A run marker as compact JSON: written before a redelivered group's transitions run, removed by the
#: commit that follows them; found at a read, it means that run did not commit (a crash, a timeout, a
#: stale worker). See :mod:`constructs_fifo.runtime.state.crash_watch`.
STATE_ATTR_RUN: Final = "run"
#: The group's run item (sort key ``run``): the marker a redelivered run writes before its
#: transitions, kept out of the state item so that writing it costs one write unit, not the state's
#: size. It holds ``STATE_ATTR_RUN`` (the marker), ``RUN_ATTR_OF`` (the state version it was written
#: over: a later state version passes it, and it is ignored) and ``RUN_ATTR_TOKEN`` (what the next
#: marker write is conditioned on). See :mod:`constructs_fifo.runtime.state.storage.runs`.
RUN_SK: Final = "run"
RUN_ATTR_OF: Final = "of"
RUN_ATTR_TOKEN: Final = "token"
#: The format number written in the bookkeeping (``"f"``), raised on any incompatible change. 2: every
#: dead job is a named object. 3: the remembered job ids left the bookkeeping (``ids``, plain ids) for
#: ``STATE_ATTR_IDS`` (keys). Formats 1 and 2 are still read (their ids turned into keys); a runtime
#: that reads only up to 2 refuses a format-3 item loudly instead of forgetting the ids it does not see.
STATE_BOOK_FORMAT: Final = 3

METRIC_JOBS_BUFFERED: Final = "JobsBuffered"
METRIC_SEQ_GAP_OPEN_SECONDS: Final = "SequenceGapOpenSeconds"
METRIC_SEQ_GAPS_SKIPPED: Final = "SequenceGapsSkipped"
METRIC_SEQ_JOBS_SKIPPED: Final = "SequenceJobsSkipped"
