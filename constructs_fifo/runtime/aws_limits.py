"""AWS's limits the package meets, each named once by what it limits (as moto's ``sqs/constants.py``).

Only AWS's own numbers live here, each with the page that states it; the package's choices below them
(an error text's length, the item size state mode allows) stay with the code that chooses them. The
runtime, the construct, the client and the local tools all import these names, so a limit AWS raises
(SQS's message size went from 256 KiB to 1 MiB in 2025) is changed in one line.

The runtime ships alone in the function's asset: this module imports only the standard library.

Examples
--------
>>> SQS_MAX_BATCH_ENTRIES, LAMBDA_SQS_FIFO_MAX_BATCH_SIZE, DYNAMODB_MAX_BATCH_GET_KEYS
(10, 10, 100)
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "DYNAMODB_MAX_BATCH_GET_KEYS",
    "EMF_MAX_VALUES_PER_METRIC",
    "FARGATE_MAX_STOP_TIMEOUT_SECONDS",
    "LAMBDA_MAX_LAYERS",
    "LAMBDA_MAX_MAXIMUM_CONCURRENCY",
    "LAMBDA_MAX_MEMORY_MB",
    "LAMBDA_MAX_POLLERS",
    "LAMBDA_MAX_SECURITY_GROUPS",
    "LAMBDA_MAX_TIMEOUT_SECONDS",
    "LAMBDA_MIN_MAXIMUM_CONCURRENCY",
    "LAMBDA_MIN_MEMORY_MB",
    "LAMBDA_MIN_POLLERS",
    "LAMBDA_MIN_POLLERS_MAX",
    "LAMBDA_SQS_FIFO_MAX_BATCH_SIZE",
    "SQS_DEDUPLICATION_INTERVAL_SECONDS",
    "SQS_FIFO_MAX_IN_FLIGHT_MESSAGES",
    "SQS_ID_PUNCTUATION",
    "SQS_MAX_BATCH_ENTRIES",
    "SQS_MAX_ID_LENGTH",
    "SQS_MAX_LIST_MOVE_TASKS_RESULTS",
    "SQS_MAX_MESSAGE_BYTES",
    "SQS_MAX_MOVE_TASK_MESSAGES_PER_SECOND",
    "SQS_MAX_QUEUE_NAME_LENGTH",
    "SQS_MAX_RECEIVE_COUNT",
    "SQS_MAX_RECEIVE_MESSAGES",
    "SQS_MAX_RETENTION_SECONDS",
    "SQS_MAX_VISIBILITY_TIMEOUT_SECONDS",
]

# --- SQS (quotas-messages, quotas-queues and the API pages named) ------------------------------------
#: Entries in one SendMessageBatch, DeleteMessageBatch or ChangeMessageVisibilityBatch.
SQS_MAX_BATCH_ENTRIES: Final = 10
#: Messages one ReceiveMessage returns (``MaxNumberOfMessages`` is 1 to 10).
SQS_MAX_RECEIVE_MESSAGES: Final = 10
#: A FIFO queue holds at most 120,000 messages in flight (received, not deleted) (quotas-messages).
SQS_FIFO_MAX_IN_FLIGHT_MESSAGES: Final = 120_000
#: The largest message, and the largest SendMessageBatch request: 1 MiB.
SQS_MAX_MESSAGE_BYTES: Final = 1024 * 1024
#: Length of a MessageGroupId and a MessageDeduplicationId.
SQS_MAX_ID_LENGTH: Final = 128
#: The punctuation a MessageGroupId and a MessageDeduplicationId may hold besides letters and digits.
SQS_ID_PUNCTUATION: Final = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
#: A visibility timeout (and a ChangeMessageVisibility) is at most 12 hours.
SQS_MAX_VISIBILITY_TIMEOUT_SECONDS: Final = 43_200
#: A redrive policy's ``maxReceiveCount`` is 1 to 1000.
SQS_MAX_RECEIVE_COUNT: Final = 1000
#: A queue keeps a message at most 14 days (``MessageRetentionPeriod``).
SQS_MAX_RETENTION_SECONDS: Final = 14 * 24 * 60 * 60
#: A FIFO queue drops a message whose deduplication id it accepted within the last 5 minutes
#: (FIFO-key-terms, "the 5-minute deduplication interval").
SQS_DEDUPLICATION_INTERVAL_SECONDS: Final = 300
#: ListMessageMoveTasks' ``MaxResults``: 1 to 10 (API_ListMessageMoveTasks).
SQS_MAX_LIST_MOVE_TASKS_RESULTS: Final = 10
#: StartMessageMoveTask's ``MaxNumberOfMessagesPerSecond``: at most 500 (API_StartMessageMoveTask).
SQS_MAX_MOVE_TASK_MESSAGES_PER_SECOND: Final = 500
#: A queue name is at most 80 characters, a FIFO queue's ``.fifo`` included.
SQS_MAX_QUEUE_NAME_LENGTH: Final = 80

# --- Lambda (gettingstarted-limits, services-sqs-parameters, API_ScalingConfig) ----------------------
#: Records per batch of an SQS FIFO event source (``BatchSize`` is 1 to 10).
LAMBDA_SQS_FIFO_MAX_BATCH_SIZE: Final = 10
#: A function runs at most 15 minutes.
LAMBDA_MAX_TIMEOUT_SECONDS: Final = 900
#: A function's memory, in MB: 128 to 10,240.
LAMBDA_MIN_MEMORY_MB: Final = 128
LAMBDA_MAX_MEMORY_MB: Final = 10_240
#: Layers of one function.
LAMBDA_MAX_LAYERS: Final = 5
#: Security groups of one function's VPC configuration.
LAMBDA_MAX_SECURITY_GROUPS: Final = 5
#: An event source mapping's ``ScalingConfig.MaximumConcurrency``: 2 to 1000.
LAMBDA_MIN_MAXIMUM_CONCURRENCY: Final = 2
LAMBDA_MAX_MAXIMUM_CONCURRENCY: Final = 1000
#: An SQS event source mapping's provisioned mode (``ProvisionedPollerConfig``, GA 2025-11): at least 2
#: pollers, a floor of at most 200 and a ceiling of at most 2,000 (services-sqs-parameters; CDK's
#: ``SqsEventSource`` states the same ranges). Not combinable with ``MaximumConcurrency``.
LAMBDA_MIN_POLLERS: Final = 2
LAMBDA_MIN_POLLERS_MAX: Final = 200
LAMBDA_MAX_POLLERS: Final = 2000

# --- DynamoDB (ServiceQuotas, API_BatchGetItem) -----------------------------------------------------
#: Keys one BatchGetItem reads.
DYNAMODB_MAX_BATCH_GET_KEYS: Final = 100

# --- CloudWatch (CloudWatch_Embedded_Metric_Format_Specification) ----------------------------------
#: Values one embedded-metric-format document may give one metric.
EMF_MAX_VALUES_PER_METRIC: Final = 100

# --- ECS on Fargate (task definition parameters) ------------------------------------------------------
#: ECS sends SIGTERM, then SIGKILL after the container's ``stopTimeout``: at most 120 s on Fargate.
FARGATE_MAX_STOP_TIMEOUT_SECONDS: Final = 120
