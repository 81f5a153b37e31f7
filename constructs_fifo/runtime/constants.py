"""Names shared by the construct (which writes them) and the runtime (which reads them).

This is the one place these strings are defined: the construct imports them from here so that the
environment it writes and the environment the runtime reads can never drift apart. A setting's
variable and default are its row of :mod:`constructs_fifo.runtime.settings.spec`, named here as
``ENV_*`` and ``DEFAULT_*`` from the row; the public enums are
:mod:`constructs_fifo.runtime.settings.choices`', re-exported.
"""

from __future__ import annotations

import enum
from typing import Final

from constructs_fifo.runtime.aws_limits import LAMBDA_SQS_FIFO_MAX_BATCH_SIZE
from constructs_fifo.runtime.settings.choices import DeadJobPolicy, GapPolicy, JobMode, OutcomeLines
from constructs_fifo.runtime.settings.spec import SETTINGS

__all__ = [
    "ATTR_ATTEMPTS",
    "ATTR_DEAD_REASON",
    "ATTR_EARLIER_ATTEMPTS",
    "ATTR_ERROR",
    "ATTR_ERROR_TYPE",
    "ATTR_EXPIRATION",
    "ATTR_FENCE",
    "ATTR_GROUP",
    "ATTR_ID",
    "ATTR_LEASE_EXPIRES_AT",
    "ATTR_MESSAGE_ID",
    "ATTR_OWNER",
    "ATTR_PERMANENT",
    "ATTR_RESULT",
    "ATTR_RESULT_NOT_STORED",
    "ATTR_SHARED",
    "ATTR_STATUS",
    "ATTR_TYPE",
    "ATTR_UPDATED_AT",
    "CONTROL_ATTRIBUTE",
    "CONTROL_RESUME",
    "DEFAULT_BACKOFF_BASE_SECONDS",
    "DEFAULT_CLAIM_TTL_SECONDS",
    "DEFAULT_HEARTBEAT_INTERVAL_SECONDS",
    "DEFAULT_MAX_ATTEMPTS",
    "DEFAULT_METRICS_NAMESPACE",
    "DEFAULT_MODE",
    "DEFAULT_ON_DEAD_JOB",
    "DEFAULT_OUTCOME_LINES",
    "DEFAULT_SLOTS",
    "ENTRYPOINT",
    "ENV_BACKOFF_BASE_SECONDS",
    "ENV_CLAIM_TABLE",
    "ENV_CLAIM_TTL_SECONDS",
    "ENV_DEAD_LETTER_QUEUE_URL",
    "ENV_GAP_POLICY",
    "ENV_GAP_TIMEOUT_SECONDS",
    "ENV_GROUP_TABLE",
    "ENV_HEARTBEAT_INTERVAL_SECONDS",
    "ENV_MAX_ATTEMPTS",
    "ENV_MAX_JOB_DURATION_SECONDS",
    "ENV_METRICS_NAMESPACE",
    "ENV_MODE",
    "ENV_ON_DEAD_JOB",
    "ENV_OUTCOME_LINES",
    "ENV_QUEUE_URL",
    "ENV_REORDER_LIMIT",
    "ENV_SLOTS",
    "ENV_USER_HANDLER",
    "ENV_VISIBILITY_TIMEOUT_SECONDS",
    "GROUP_ATTR_GROUP",
    "GROUP_ATTR_SK",
    "KEPT_RECENT_MESSAGE_IDS",
    "MAX_ATTEMPTS_MAX",
    "MAX_ERROR_LENGTH",
    "MAX_RESULT_BYTES",
    "METRIC_CAPACITY_UNITS_CONSUMED",
    "METRIC_CLAIM_CONFLICTS",
    "METRIC_DIMENSION_QUEUE",
    "METRIC_DUPLICATES_SKIPPED",
    "METRIC_GROUPS_PARKED",
    "METRIC_HEARTBEAT_FAILURES",
    "METRIC_JOBS_DEAD_LETTERED",
    "METRIC_JOBS_FAILED",
    "METRIC_JOBS_KEPT",
    "METRIC_JOBS_SUCCEEDED",
    "METRIC_JOB_DURATION",
    "METRIC_JOB_DURATION_EXCEEDED",
    "METRIC_RUNNING_SLOTS",
    "SK_KEPT_PREFIX",
    "SK_PARK",
    "STATUS_DEAD",
    "STATUS_FAILED",
    "STATUS_IN_FLIGHT",
    "STATUS_SUCCEEDED",
    "WAKE_UP_REFRESH_RECEIVES",
    "DeadJobPolicy",
    "DeadReason",
    "GapPolicy",
    "JobMode",
    "OutcomeLines",
]

# --- the function's handler -------------------------------------------------------------------
#: The Lambda handler the construct configures: the runtime's entry point (it calls ``ENV_USER_HANDLER``'s).
ENTRYPOINT: Final = "constructs_fifo.runtime.entrypoint.handler"

# --- the settings' variables and defaults: their rows' (``runtime/settings/spec.py``) ---------------
# Named here too, for the modules that read one variable or one default (a row without one fails).
ENV_USER_HANDLER: Final = SETTINGS["handler"].variable()
ENV_CLAIM_TABLE: Final = SETTINGS["claim_table"].variable()
ENV_QUEUE_URL: Final = SETTINGS["queue_url"].variable()
ENV_VISIBILITY_TIMEOUT_SECONDS: Final = SETTINGS["visibility_timeout"].variable()
ENV_BACKOFF_BASE_SECONDS: Final = SETTINGS["backoff_base"].variable()
ENV_CLAIM_TTL_SECONDS: Final = SETTINGS["claim_ttl"].variable()
ENV_METRICS_NAMESPACE: Final = SETTINGS["metrics_namespace"].variable()
ENV_MAX_ATTEMPTS: Final = SETTINGS["max_attempts"].variable()
ENV_DEAD_LETTER_QUEUE_URL: Final = SETTINGS["dead_letter_queue_url"].variable()
ENV_ON_DEAD_JOB: Final = SETTINGS["on_dead_job"].variable()
ENV_GROUP_TABLE: Final = SETTINGS["group_table"].variable()
ENV_MODE: Final = SETTINGS["mode"].variable()
ENV_REORDER_LIMIT: Final = SETTINGS["reorder_limit"].variable()
ENV_GAP_TIMEOUT_SECONDS: Final = SETTINGS["gap_timeout"].variable()
ENV_GAP_POLICY: Final = SETTINGS["gap_policy"].variable()
ENV_OUTCOME_LINES: Final = SETTINGS["outcome_lines"].variable()
ENV_MAX_JOB_DURATION_SECONDS: Final = SETTINGS["max_job_duration"].variable()
ENV_SLOTS: Final = SETTINGS["slots"].variable()
ENV_HEARTBEAT_INTERVAL_SECONDS: Final = SETTINGS["heartbeat_interval"].variable()

DEFAULT_BACKOFF_BASE_SECONDS: Final = SETTINGS["backoff_base"].default_as(int)
DEFAULT_CLAIM_TTL_SECONDS: Final = SETTINGS["claim_ttl"].default_as(int)
DEFAULT_METRICS_NAMESPACE: Final = SETTINGS["metrics_namespace"].default_as(str)
DEFAULT_MAX_ATTEMPTS: Final = SETTINGS["max_attempts"].default_as(int)
#: The most attempts a job may have (the row's upper limit).
MAX_ATTEMPTS_MAX: Final = SETTINGS["max_attempts"].limit("high")
DEFAULT_ON_DEAD_JOB: Final = SETTINGS["on_dead_job"].default_as(DeadJobPolicy)
DEFAULT_MODE: Final = SETTINGS["mode"].default_as(JobMode)
DEFAULT_OUTCOME_LINES: Final = SETTINGS["outcome_lines"].default_as(OutcomeLines)
DEFAULT_GAP_POLICY: Final = SETTINGS["gap_policy"].default_as(GapPolicy)
DEFAULT_REORDER_LIMIT: Final = SETTINGS["reorder_limit"].default_as(int)
DEFAULT_GAP_TIMEOUT_SECONDS: Final = SETTINGS["gap_timeout"].default_as(int)
DEFAULT_FIRST_SEQ: Final = SETTINGS["first_seq"].default_as(int)
DEFAULT_REMEMBERED_JOB_IDS: Final = SETTINGS["remember_job_ids"].default_as(int)
DEFAULT_SLOTS: Final = SETTINGS["slots"].default_as(int)
DEFAULT_HEARTBEAT_INTERVAL_SECONDS: Final = SETTINGS["heartbeat_interval"].default_as(int)

#: A resume's wake-up message is replaced by a fresh one once it was received this often, so SQS's
#: maxReceiveCount (kept above it by the construct) never dead-letters it during a long replay.
WAKE_UP_REFRESH_RECEIVES: Final = 5
#: Stored and forwarded error texts are cut to this many characters.
MAX_ERROR_LENGTH: Final = 1024


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
    #: Not a death: a held group's park header records its hold (who, why, when) with it (docs/steering.md).
    HELD = "HELD"


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
#: The container worker: a heartbeat's renewal (visibility or claim) was refused or failed (1 each).
METRIC_HEARTBEAT_FAILURES: Final = "HeartbeatFailures"
#: The container worker: a run was stopped at ``max_job_duration`` (1 each).
METRIC_JOB_DURATION_EXCEEDED: Final = "JobDurationExceeded"
#: The container worker: its slots running a job, per task (one value per report).
METRIC_RUNNING_SLOTS: Final = "RunningSlots"
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
#: A run's claim: ``shared`` (its process runs other jobs: its crash is not counted), ``fence`` (its token).
ATTR_SHARED: Final = "shared"
ATTR_FENCE: Final = "fence"
#: On a SUCCEEDED claim: the job function's return value as compact JSON (a string), absent when it
#: returned ``None``, or a value that is not JSON or is larger than ``MAX_RESULT_BYTES``.
ATTR_RESULT: Final = "result"
#: Runs a job used before an operator reset its DEAD claim (``claims reset``, ``groups resume``): its
#: history, kept beside ``attempts``, which counts the runs since (and decides exhaustion).
ATTR_EARLIER_ATTEMPTS: Final = "earlier_attempts"
#: On a SUCCEEDED claim whose return value was not stored: why (not JSON, too large), so a waiter's
#: outcome says so rather than reading as a job that returned ``None``.
ATTR_RESULT_NOT_STORED: Final = "result_not_stored"
#: The most bytes (UTF-8 JSON) of a job's return value stored with its SUCCEEDED claim: 64 KiB, well
#: inside DynamoDB's 400 KB item, so the claim's other attributes always fit, and a waiter's read of
#: the SUCCEEDED item costs at most 16 read units (4 KB each, consistent).
MAX_RESULT_BYTES: Final = 64 * 1024

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
