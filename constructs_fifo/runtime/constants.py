"""Names shared by the construct (which writes them) and the runtime (which reads them).

This is the one place these strings are defined: the construct imports them from here so that the
environment it writes and the environment the runtime reads can never drift apart.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "ATTR_ATTEMPTS",
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
    "DEFAULT_BACKOFF_BASE_SECONDS",
    "DEFAULT_CLAIM_TTL_SECONDS",
    "DEFAULT_METRICS_NAMESPACE",
    "ENTRYPOINT",
    "ENV_BACKOFF_BASE_SECONDS",
    "ENV_CLAIM_TABLE",
    "ENV_CLAIM_TTL_SECONDS",
    "ENV_METRICS_NAMESPACE",
    "ENV_QUEUE_URL",
    "ENV_USER_HANDLER",
    "ENV_VISIBILITY_TIMEOUT_SECONDS",
    "METRIC_CLAIM_CONFLICTS",
    "METRIC_DIMENSION_QUEUE",
    "METRIC_DUPLICATES_SKIPPED",
    "METRIC_JOBS_FAILED",
    "METRIC_JOBS_SUCCEEDED",
    "METRIC_JOB_DURATION",
    "STATUS_FAILED",
    "STATUS_IN_FLIGHT",
    "STATUS_SUCCEEDED",
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

# --- defaults shared by both sides ----------------------------------------------------------------
DEFAULT_BACKOFF_BASE_SECONDS: Final = 2
DEFAULT_CLAIM_TTL_SECONDS: Final = 7 * 24 * 60 * 60
DEFAULT_METRICS_NAMESPACE: Final = "ConstructsFifo"

# --- metrics ------------------------------------------------------------------------------------------
METRIC_JOBS_SUCCEEDED: Final = "JobsSucceeded"
METRIC_JOBS_FAILED: Final = "JobsFailed"
METRIC_DUPLICATES_SKIPPED: Final = "DuplicatesSkipped"
METRIC_CLAIM_CONFLICTS: Final = "ClaimConflicts"
METRIC_JOB_DURATION: Final = "JobDuration"
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
    "MAX_ITEM_BYTES",
    "METRIC_JOBS_BUFFERED",
    "METRIC_SEQ_GAPS_SKIPPED",
    "METRIC_SEQ_GAP_OPEN_SECONDS",
    "METRIC_SEQ_JOBS_SKIPPED",
    "STATE_ATTR_BOOK",
    "STATE_ATTR_GROUP",
    "STATE_ATTR_SK",
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
#: About 4 KB of uuid job ids: every write rewrites the whole item (1 WCU per KB).
DEFAULT_REMEMBERED_JOB_IDS: Final = 100

#: The item size state mode allows: attribute names and values together, in UTF-8. DynamoDB documents
#: 400 KB (observed near 409,600 bytes); 400,000 holds whatever "KB" means, and moto (405,000) agrees.
MAX_ITEM_BYTES: Final = 400_000

# The group table's item layout: one item per group at sort key ``state``.
STATE_ATTR_GROUP: Final = "group"
STATE_ATTR_SK: Final = "sk"
STATE_SK: Final = "state"
#: The user's state as a JSON string (absent until a transition was applied).
STATE_ATTR_STATE: Final = "state"
#: The runtime's bookkeeping as a compact JSON string.
STATE_ATTR_BOOK: Final = "book"
STATE_ATTR_VERSION: Final = "version"
STATE_ATTR_UPDATED_AT: Final = "updated_at"
#: The format number written in the bookkeeping (``"f"``), raised on any incompatible change.
STATE_BOOK_FORMAT: Final = 1

METRIC_JOBS_BUFFERED: Final = "JobsBuffered"
METRIC_SEQ_GAP_OPEN_SECONDS: Final = "SequenceGapOpenSeconds"
METRIC_SEQ_GAPS_SKIPPED: Final = "SequenceGapsSkipped"
METRIC_SEQ_JOBS_SKIPPED: Final = "SequenceJobsSkipped"
